"""`agenteval trace RUN [CASE_ID]`: the trace tree of a stored run's cases, in the terminal."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from agenteval.cli import options as opt

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from agenteval.schema import EvalCaseResult
    from agenteval.store.case_index import CaseIndex, Spot

    # RUN's eval set id, its chosen case runs (iterable more than once), how many, its eval ids.
    Chosen = tuple[str, Iterable[EvalCaseResult], int, list[str]]


class _Read:
    """Case runs of an index read again, one at a time, at each iteration."""

    def __init__(self, index: CaseIndex, spots: list[Spot]) -> None:
        self.index, self.spots = index, spots

    def __iter__(self) -> Iterator[EvalCaseResult]:
        return self.index.runs(self.spots)


def _runs(ref: str, root: str, case_id: str | None, run_index: int | None) -> Chosen | None:
    """RUN's runs of case `case_id` (or of every case, in the document's order; of run index
    `run_index` only, if given), read by the document's case index (`store.case_index`: a large
    run's document is not loaded, every case's runs are read one at a time); None when the
    document has no index."""
    from pathlib import Path

    from agenteval.store import RunStore, is_path
    from agenteval.store.case_index import Unindexed, case_index

    try:
        if is_path(ref):
            if not Path(ref).is_file():  # (`load_run` says what it is)
                return None
            index = case_index(ref)
        else:
            store = RunStore(root)
            row = store.resolve(ref)
            index = case_index(row.result_path, store.path, row.run_id)
        eval_ids = list(dict.fromkeys(s.eval_id for s in index.results))
        if case_id is None:
            spots = [s for s in index.results if run_index is None or s.run_index == run_index]
            return index.head.eval_set_id, _Read(index, spots), len(spots), eval_ids
        case = index.case(case_id)
    except Unindexed:
        return None
    runs = [r for r in ([] if case is None else case.runs) if run_index is None or r.run_index == run_index]
    return index.head.eval_set_id, runs, len(runs), eval_ids


def _trace(ref: str, case_id: str | None, root: str, run_index: int | None, invocation: int | None) -> int:
    from rich.console import Console

    from agenteval.errors import DataError
    from agenteval.reporting.agent_tree import agent_tree, case_agents, multi_agent
    from agenteval.reporting.trace import trace_tree
    from agenteval.store import load_run

    if _is_otlp(ref):
        return _otlp(ref, case_id, run_index, invocation)
    found = _runs(ref, root, case_id, run_index)
    if found is None:
        result = load_run(ref, root)
        chosen = [c for c in result.eval_case_results
                  if (case_id is None or c.eval_id == case_id)
                  and (run_index is None or c.run_index == run_index)]
        found = (result.eval_set_id, chosen, len(chosen),
                 list(dict.fromkeys(c.eval_id for c in result.eval_case_results)))
    eval_set_id, cases, count, eval_ids = found
    if not count:
        raise DataError(ref, "eval_case_results", _unknown(eval_ids, case_id, run_index))
    if invocation is not None:
        _in_range(invocation, max(len(c.eval_metric_result_per_invocation) for c in cases))
    console = Console()
    for case in cases:
        title = f"{eval_set_id} / {case.eval_id}  run {case.run_index}"
        if case.trace is None:
            console.print(f"{title}: no trace recorded (traces are recorded by `agenteval eval`; "
                          "this result was scored from a file, or run with --no_traces)")
            continue
        agents = case_agents(case)
        if multi_agent(agents):  # the agent tree first: who did what, then every step
            shown = [a for a in agents if invocation is None or a.index == invocation]
            console.print(agent_tree(shown, f"{title}  agents"))
        console.print(trace_tree(case.trace, title, invocation))
    return 0


def _in_range(invocation: int, turns: int) -> None:
    """Refuses an invocation a case of `turns` turns does not have: an empty tree under a
    header would look like a trace of nothing."""
    from agenteval.errors import DataError

    if invocation >= turns:
        raise DataError(None, "--invocation", f"{invocation} is out of range: the case has "
                        f"{turns} invocation{'' if turns == 1 else 's'} (0 to {turns - 1})"
                        if turns else f"{invocation} is out of range: the case has no invocation")


def _is_otlp(ref: str) -> bool:
    from pathlib import Path

    from agenteval.store import is_path
    from agenteval.tracing.otlp_json import looks_like_otlp

    if not is_path(ref) or not Path(ref).is_file():
        return False
    with open(ref, "rb") as f:
        return looks_like_otlp(f.read(65536), ref)


def _otlp(path: str, key: str | None, run_index: int | None, invocation: int | None) -> int:
    """An OTLP trace export's conversations (or the one whose key is `key`: its session id, or
    `trace N`), each turn's spans as `score --actual` reads them; nothing is matched or scored."""
    from rich.console import Console

    from agenteval.errors import DataError
    from agenteval.reporting.trace import trace_tree
    from agenteval.tracing.ingest import TraceConversations, read_traces

    if run_index not in (None, 0):
        raise DataError(None, "--run_index", f"{run_index}: a trace export holds one run of each "
                        "conversation (run 0)")
    conversations = read_traces(path).conversations
    if key is not None and key not in conversations:
        raise DataError(path, "", _unknown(list(conversations), key, None, "conversation", "file"))
    keys = list(conversations) if key is None else [key]
    if invocation is not None:
        _in_range(invocation, max(len(conversations[k]) for k in keys))
    read = TraceConversations(path, conversations)
    console = Console()
    for k in keys:
        console.print(trace_tree(read.trace(k), f"{path} / {k}", invocation))
    return 0


_LISTED = 10  # case ids an unknown-case error lists


def _unknown(ids: list[str], case_id: str | None, run_index: int | None, noun: str = "case",
             where: str = "run") -> str:
    """Why no case (or conversation) was picked: the closest ids to a mistyped one, and the first
    few of the run's (a 50,000-case run's every id would make the one-line error megabytes)."""
    import difflib  # (not at start-up: every command imports this module)

    what = (noun if case_id is None else f"{noun} {case_id!r}") \
        + ("" if run_index is None else f" run {run_index}")
    close = difflib.get_close_matches(case_id, ids, n=3) if case_id is not None and case_id not in ids else []
    known = ", ".join(ids[:_LISTED]) + (f", ... ({len(ids)} {noun}s)" if len(ids) > _LISTED else "")
    return (f"no {what} in this {where}" + (f"; did you mean {', '.join(map(repr, close))}?" if close else "")
            + f" ({noun}s: {known or 'none'})")


@click.command()
@click.argument("run")
@click.argument("case_id", required=False)
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None,
              help="Store root holding .agenteval/ (default: the current directory).")
@click.option("--run_index", "--run-index", type=click.IntRange(min=0), help="Only this repeat of the case.")
@click.option("--invocation", type=click.IntRange(min=0), help="Only this invocation (user turn).")
def trace(run: str, case_id: str | None, root: str | None, run_index: int | None,
          invocation: int | None) -> None:
    """Show the trace of RUN's cases (or of CASE_ID): each invocation's agent steps, model calls
    with tokens, tool calls with arguments and results, simulated user turns and judge calls,
    with their durations. Where several agents ran, their tree comes first: how each was reached,
    its own calls, tokens and time, and its verdict when its calls were matched on their own.
    RUN is a run id, a unique prefix, latest, previous or a result file; or an OTLP/JSON trace
    export (CASE_ID: a conversation's session id), shown as `score --actual` reads it."""
    sys.exit(opt.guard(_trace, run, case_id, root or ".", run_index, invocation))
