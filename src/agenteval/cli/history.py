"""`agenteval runs` and `report`: the run history and reports over stored results
(`agenteval compare` is `cli.compare`).

A RUN is a path to a result JSON file, or a run in the store's database
(`<root>/.agenteval/history.sqlite`): its id, a unique id prefix, `latest` or `previous`.
Exit codes: 0, or 2 on bad input (`runs delete` 1 when its question is answered no).
"""

from __future__ import annotations

import json
import shlex
import sys
from datetime import datetime
from typing import TYPE_CHECKING

import click

from agenteval.cli import options as opt

if TYPE_CHECKING:
    from rich.console import RenderableType

    from agenteval.schema import EvalSetResult
    from agenteval.store import RunRow, RunStore
    from agenteval.store.db import UnknownRun
    from agenteval.verdicts.outcome import CaseOutcome

FORMATS = ("console", "html", "junit", "markdown")  # agenteval.reporting.FORMATS, without importing it
_FAILING_SHOWN = 20

root_option = click.option("--root", type=click.Path(exists=True, file_okay=False), default=None,
                           help="Store root holding .agenteval/ (default: the current directory).")


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _num(value: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if value is None else fmt.format(value)


_RUNS_COLUMNS = ("run id", "document", "created", "eval set", "agent", "agent model", "judge model",
                 "runs", "passed", "failed", "not evaluated", "seconds", "tokens")
_NUMERIC = ("runs", "passed", "failed", "not evaluated", "seconds", "tokens")
# What gives way when the run list is wider than the terminal, in this order: columns with no
# value in any row; then long ids fold; then these columns go, least used first ("created"
# loses its seconds first, and goes last of all). Run id, eval set and pass/fail counts always stay.
_RUNS_SHED = ("tokens", "runs", "seconds", "judge model", "agent model", "created", "agent", "document")


def _runs_table(rows: list[RunRow], several: set[str] | None = None) -> RenderableType:
    """The run list, newest first, built for the width it is printed at: every column where
    they fit; narrower, empty columns hidden, then long ids folded, then the columns in
    `_RUNS_SHED` hidden in turn. The caption names what is hidden (`agenteval runs show RUN`
    shows every field). "not evaluated" is there when a listed run has such a case (as in the
    run summary): "failed" never counts them. A run is named by the id `eval` printed (`Recorded
    run ID`; a document recorded without one, by its own); "document" names each eval set's
    document when a listed run holds several (`compare` compares one document with another):
    the runs in `several` do, whether or not all their documents are listed (default: those
    listed more than once)."""
    from collections import Counter

    from rich.text import Text

    from agenteval.reporting.tables import ByWidth, Col, fit_table

    cells: dict[str, list[Text]] = {
        "run id": [Text(r.run_group or r.run_id) for r in rows],
        "document": [Text(r.run_id) for r in rows],
        "created": [Text(_when(r.created)) for r in rows],
        "eval set": [Text(r.eval_set_id) for r in rows],
        "agent": [Text(r.agent or "-") for r in rows],
        "agent model": [Text(r.agent_model or "-") for r in rows],
        "judge model": [Text(r.judge_model or "-") for r in rows],
        "runs": [Text(str(r.num_runs)) for r in rows],
        "passed": [Text(str(r.cases_passed), style="green") for r in rows],
        "failed": [Text(str(r.cases_failed), style="red" if r.cases_failed else "") for r in rows],
        "not evaluated": [Text(str(r.cases_not_evaluated), style="yellow" if r.cases_not_evaluated else "")
                          for r in rows],
        "seconds": [Text(_num(r.duration_seconds)) for r in rows],
        "tokens": [Text(_num(r.total_tokens, "{:.0f}")) for r in rows],
    }
    to_minutes = [Text(t.plain[:16]) for t in cells["created"]]  # minutes tell runs apart well enough
    if several is None:
        several = {g for g, n in Counter(r.run_group for r in rows if r.run_group).items() if n > 1}
    wanted = {"not evaluated": any(r.cases_not_evaluated for r in rows), "document": bool(several)}
    columns = [c for c in _RUNS_COLUMNS if wanted.get(c, True)]
    # Only the columns shown can be shed ("document" is not shown for runs of one eval set each).
    shed = [c for c in _RUNS_SHED if c in columns]
    empty = [c for c in shed if c != "created" and all(t.plain == "-" for t in cells[c])]
    # (column to hide or shorten, whether ids may fold); None: as it stands.
    # Last, "created" goes too: in a narrow terminal the run id is worth more whole.
    steps = [(None, False), *((c, False) for c in empty), (None, True),
             *((c, True) for c in shed if c not in empty), ("created, whole", True)]

    def build(width: int) -> RenderableType:
        shown, short = list(columns), False
        for n, (step, fold) in enumerate(steps):
            if step == "created":
                short = True
            elif step == "created, whole":
                shown.remove("created")
                short = False
            elif step is not None:
                shown.remove(step)
            hidden = [c for c in columns if c not in shown]
            floors = {"run id": max(20, width * 3 // 10), "document": 20, "eval set": 12, "agent": 12,
                      "agent model": 12, "judge model": 12} if fold else {}
            cols = [Col(c, "right" if c in _NUMERIC else "left", floors.get(c)) for c in shown]
            # Once a column has gone, the full time may fit again: minutes only when it does not.
            for minutes in (False, True) if short else (False,):
                data = {**cells, "created": to_minutes} if minutes else cells
                table = fit_table(cols, [[data[c][i] for c in shown] for i in range(len(rows))], width,
                                  force=n == len(steps) - 1 and minutes == short,
                                  title="Runs (newest first)", title_justify="left",
                                  caption=f"Hidden at this width: {', '.join(hidden)} (`agenteval runs "
                                          "show RUN` shows every field)" if hidden else None,
                                  caption_justify="left")
                if table is not None:
                    return table
        raise AssertionError("the last step forces a table")

    return ByWidth(build)


def _several(store: RunStore, rows: list[RunRow], *, cut: bool) -> set[str]:
    """The listed runs that hold several documents (eval sets). Where `--limit` cut the list,
    a run listed once may have more documents past the cut (its id alone would then name no
    one document, and the "document" column went missing): the store says, for those."""
    from collections import Counter

    listed = Counter(r.run_group for r in rows if r.run_group)
    return {g for g, n in listed.items() if n > 1 or (cut and len(store.documents(g)) > 1)}


def _list(root: str, limit: int | None) -> int:
    from rich.console import Console
    from rich.table import Table

    from agenteval.store import RunStore
    from agenteval.store.journal import Journal
    from agenteval.store.record import recorded

    store = RunStore(root)
    rows = store.list_runs(limit)
    journal = Journal(root)
    # A run recorded, then killed before the journal forgot it, is listed once: as recorded.
    unfinished = [r for r in journal.runs() if recorded(store, journal, r.run_id) is None]
    console = Console()
    if not rows and not unfinished:
        console.print(f"No runs recorded in {store.path}{opt.stores_hint(store.path)}", highlight=False)
    elif rows:
        console.print(_runs_table(rows, _several(store, rows, cut=limit is not None and len(rows) == limit)))
    if unfinished:
        # Runs the journal holds that never finished: a crash, a kill, or still going.
        table = Table(title="Unfinished runs (agenteval eval ... --resume RUN finishes one)",
                      title_justify="left")
        for col in ("run id", "started", "status", "done", "errors"):
            table.add_column(col, overflow="fold", justify="right" if col in ("done", "errors") else "left")
        for r in unfinished:
            table.add_row(r.run_id, _when(r.started), r.status, f"{r.done}/{r.total}", str(r.errors))
        console.print(table)
    return 0


def _flatten(value: object, prefix: str = "") -> list[tuple[str, object]]:
    """`{"models": {"agent": "local"}}` → `[("models.agent", "local")]`; a list of objects is
    numbered (`eval_sets[0].file`), other lists stay whole."""
    if isinstance(value, dict) and value:
        return [kv for k, v in value.items() for kv in _flatten(v, f"{prefix}.{k}" if prefix else k)]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [kv for i, v in enumerate(value) for kv in _flatten(v, f"{prefix}[{i}]")]
    return [(prefix, value)]


def _show_value(key: str, value: object) -> str:
    if key.split(".")[-1] in ("created", "recorded", "started", "ended") and isinstance(value, float):
        return _when(value)
    if key.endswith("_seconds") and isinstance(value, float):
        return f"{value:.3f}"
    if key.endswith("argv") and isinstance(value, list):
        return shlex.join(str(v) for v in value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False) if value else "-"
    return "-" if value is None else str(value)


def _fields_table(title: str, fields: list[tuple[str, str]]) -> RenderableType:
    """Field / value rows, built for the width they are printed at. Field names stay whole up
    to half the width; past that they wrap at their dots to 2/5 of it (`run.config.criteria.` /
    `tool_trajectory_avg_score.` / `threshold`), so no name breaks mid-word and the values keep
    the most room. Values wrap at spaces and after a path's `/` (else its `_`, `.`, ...); only
    what has no such place (a hash) folds."""
    from rich.cells import cell_len
    from rich.text import Text

    from agenteval.reporting.tables import ByWidth, Col, break_long, fit_table, pack

    def wrapped(name: str, width: int) -> str:
        parts = name.split(".")
        return pack([*(f"{p}." for p in parts[:-1]), parts[-1]], width)

    def build(width: int) -> RenderableType:
        room = width - 7  # two boxed columns, padded
        whole = max((len(k) for k, _ in fields), default=0) <= room // 2
        cap = max([room * 2 // 5, *(len(p) + 1 for k, _ in fields for p in k.split("."))])
        names = [k if whole else wrapped(k, cap) for k, _ in fields]
        # The values' column: what the names leave (as `fit_table` gives it).
        room_for_values = room - max((cell_len(line) for n in names for line in n.split("\n")), default=0)
        rows = [(Text(n, style="bold"), Text(break_long(v, max(room_for_values, 1))))
                for n, (_, v) in zip(names, fields, strict=True)]
        return fit_table([Col("field"), Col("value", floor=1)], rows, width, force=True, title=Text(title),
                         title_justify="left", show_header=False)

    return ByWidth(build)


def _failing_table(rows: list[tuple[str, str, str]]) -> RenderableType:
    """Cases not passed: eval id, status, and why (one criterion problem a line; words wrap,
    a long eval id folds)."""
    from agenteval.reporting.tables import ID_FLOOR, ByWidth, Col, fit_table

    cols = (Col("eval id", floor=ID_FLOOR), Col("status"), Col("why", floor=20))
    return ByWidth(lambda width: fit_table(
        cols, rows, width,
        force=True, title="Cases not passed", title_justify="left"))


def _show_unfinished(root: str, ref: str, unknown: UnknownRun) -> int:
    """`runs show` for a run the journal holds but the history does not (it never finished);
    `unknown` (the history's error) when there is no journal."""
    from rich.console import Console

    from agenteval.errors import DataError
    from agenteval.store.journal import Journal, UnjournaledRun

    journal = Journal(root)
    if not journal.path.is_file():
        raise unknown
    try:
        found = journal.get(ref)  # (an ambiguous prefix there: the journal's DataError says so)
    except UnjournaledRun:
        raise DataError(root, "", f"no run {ref!r} in the run history or the journal of unfinished "
                        "runs (`agenteval runs` lists them)") from None
    spec = journal.spec(found.run_id)
    console = Console()
    console.print(f"Run {found.run_id}: {found.status}, {found.done} of {found.total} case runs finished "
                  f"({found.errors} with errors), started {_when(found.started)}, last update "
                  f"{_when(found.updated)}", markup=False, highlight=False)
    sets = " ".join(e.file or e.eval_set_id for e in spec.eval_sets)
    console.print(f"Finish it with: agenteval eval {spec.agent.path if spec.agent else 'AGENT'} {sets} "
                  f"--resume {found.run_id}", markup=False, highlight=False)
    return 0


def _show(root: str, ref: str) -> int:
    from agenteval.store import RunStore
    from agenteval.store.db import UnknownRun

    store = RunStore(root)
    # The id `eval` printed for a run of several eval sets: each of its documents in turn.
    documents = store.run_documents(ref)
    try:
        rows = documents or [store.resolve(ref)]
    except UnknownRun as unknown:  # (not an ambiguous prefix, which lists its runs, nor a damaged database)
        return _show_unfinished(root, ref, unknown)
    for row in rows:
        _show_document(store, row, others=not documents)
    return 0


def _show_document(store: RunStore, row: RunRow, *, others: bool) -> None:
    """`runs show` of one document: its stored details, its summary, its cases not passed;
    with `others`, the run's other eval sets named."""
    from rich.console import Console

    from agenteval.reporting.console import summary_table
    from agenteval.verdicts.outcome import outcomes

    console = Console()
    details = store.details(row.run_id)
    header = details.pop("spec", None)
    details.pop("run_group", None)
    if header is not None:  # the run header, as the result document holds it
        details.pop("config", None)
        details = {"document": details.pop("run_id"), "result_path": details.pop("result_path"),
                   "recorded": details.pop("recorded"), **{f"run.{k}": v for k, v in header.items()}}
    table = _fields_table(f"Run {row.run_id}", [(k, _show_value(k, v)) for k, v in _flatten(details)])
    console.print(table)
    if row.run_group and others:
        rest = [r for r in store.documents(row.run_group) if r.run_id != row.run_id]
        if rest:
            console.print(f"Other eval sets of run {row.run_group}: "
                          + ", ".join(f"{r.eval_set_id} ({r.run_id})" for r in rest),
                          markup=False, highlight=False)
    if not row.result_path.is_file():
        console.print(f"result document missing: {row.result_path}", style="yellow",
                      markup=False, highlight=False)
    # From the database (no need to load the document): the counts by verdict (as the web's),
    # only the cases that did not pass read (a 50,000-case run's summaries took 12 s, for a few lines).
    counts = store.counts(row.run_id)
    console.print(summary_table([(row.eval_set_id, counts.passed, counts.failed, counts.not_evaluated)]))
    failing = outcomes(store.summary(row.run_id, not_passed_only=True))
    if failing:
        whys = _whys(store, row, failing[:_FAILING_SHOWN])
        cases = _failing_table([(c.eval_id, c.status.name, "\n".join(why))
                                for c, why in zip(failing, whys, strict=False)])
        console.print(cases)
        if len(failing) > _FAILING_SHOWN:
            console.print(f"... and {len(failing) - _FAILING_SHOWN} more; see `agenteval report "
                          f"{row.run_id} --format html -o report.html`", markup=False, highlight=False)


def _whys(store: RunStore, row: RunRow, shown: list[CaseOutcome]) -> list[list[str]]:
    """Why each shown case did not pass, as `report --format markdown` says it: its criteria's
    stored reasons, the agent's error, negative judge verdicts and each judged criterion's
    certificate, read from the document, only these cases' bytes (`store.case_index`). Where
    the document cannot be read so (missing, not laid out for an index), its summary's words
    (`summary_why`)."""
    from agenteval.errors import DataError
    from agenteval.reporting.outcome import shown_why
    from agenteval.store.case_index import Unindexed, case_index

    try:
        index = case_index(row.result_path, store.path, row.run_id)
        read = [index.case(c.eval_id) for c in shown]
    except (Unindexed, DataError):
        read = [None] * len(shown)
    return [shown_why(c, full) for c, full in zip(shown, read, strict=True)]


@click.group(invoke_without_command=True)
@root_option
@click.option("--limit", type=click.IntRange(min=1), help="Show at most N runs.")
@click.pass_context
def runs(ctx: click.Context, root: str | None, limit: int | None) -> None:
    """List recorded runs, newest first (`runs list`), show one (`runs show RUN`) or delete one
    (`runs delete RUN`)."""
    ctx.ensure_object(dict)
    ctx.obj["root"] = root
    if ctx.invoked_subcommand is None:
        sys.exit(opt.guard(_list, root or ".", limit))


@runs.command(name="list")
@root_option
@click.option("--limit", type=click.IntRange(min=1), help="Show at most N runs.")
@click.pass_context
def list_(ctx: click.Context, root: str | None, limit: int | None) -> None:
    """List recorded runs, newest first."""
    sys.exit(opt.guard(_list, root or ctx.obj.get("root") or ".", limit))


@runs.command()
@click.argument("run")
@root_option
@click.pass_context
def show(ctx: click.Context, run: str, root: str | None) -> None:
    """Show RUN (id, unique prefix, latest or previous): stored details, summary, failing cases."""
    sys.exit(opt.guard(_show, root or ctx.obj.get("root") or ".", run))


def _delete(root: str, ref: str, yes: bool) -> int:
    from agenteval.store.deletion import delete_run, find

    target = find(root, ref)
    docs = target.documents
    what = (", ".join(f"{d.eval_set_id} ({d.run_id}, {d.cases_total} case{'' if d.cases_total == 1 else 's'})"
                      for d in docs) or "unfinished: in the journal only")
    if not yes:
        try:
            sure = click.confirm(f"Delete run {target.run_id}: {what}, and its reviews?")
        except click.Abort:  # no answer: end of input (no terminal, as in CI) or Ctrl-C
            click.echo("\nerror: runs delete: no answer to its question (no terminal?); nothing "
                       "deleted. Pass --yes to delete without asking.", err=True)
            return 2
        if not sure:
            click.echo("Nothing deleted.", err=True)
            return 1
    done = delete_run(root, target.exact)
    click.echo(f"Deleted run {done.run_id}: {len(done.documents)} document(s), {done.reviews} review(s)"
               + (", its unfinished case runs" if done.journaled else ""))
    for path in done.kept:
        click.echo(f"Left {path}: recorded from where it was written, outside the history", err=True)
    return 0


@runs.command()
@click.argument("run")
@root_option
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def delete(ctx: click.Context, run: str, root: str | None, yes: bool) -> None:
    """Delete RUN (id, unique prefix, latest, previous, or the run id `eval` printed: all its eval
    sets) from the run history: its rows, reviews and history documents, and its unfinished case
    runs. A run a live process is writing is refused."""
    sys.exit(opt.guard(_delete, root or ctx.obj.get("root") or ".", run, yes))


def _report(ref: str, root: str, fmt: str, output: str | None) -> int:
    from agenteval.cli.report_stream import streamed_console, streamed_html, streamed_report
    from agenteval.datasets.targets import check_targets
    from agenteval.store import RunStore, load_result, load_run
    from agenteval.store.lookup import is_path

    # Before any work; never over the document(s) read.
    check_targets({"--output": output}, opt.run_inputs("RUN", ref, root) if output else None)
    # Read a case at a time where the format allows (memory flat in the run's size); read whole
    # when the document cannot be read so.
    if not is_path(ref) and (documents := RunStore(root).run_documents(ref)):
        # The id `eval` printed for a run of several eval sets: one report of them all, as
        # `eval`'s own.
        return _written(fmt, [load_result(d.result_path) for d in documents], output)
    if fmt in ("markdown", "junit") and streamed_report(ref, root, fmt, output):
        return 0
    if fmt == "console" and not output and streamed_console(ref, root):
        return 0
    if fmt == "html" and streamed_html(ref, root, output):
        return 0
    return _written(fmt, [load_run(ref, root)], output)


def _written(fmt: str, results: list[EvalSetResult], output: str | None) -> int:
    """The report of `results` in `fmt`, to `output` or standard output."""
    from agenteval.cli.report_stream import print_decisions
    from agenteval.datasets.files import write_text_atomic
    from agenteval.reporting import console_report, render_report

    if fmt == "console" and not output:
        from rich.console import Console

        console = Console()
        print_decisions(console, results)
        for renderable in console_report(results):
            console.print(renderable)
        return 0
    text = render_report(fmt, results)
    if output:
        write_text_atomic(output, text)
    else:
        click.echo(text, nl=False)
    return 0


@click.command()
@click.argument("run")
@root_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="console", show_default=True,
              help="Report format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="Write the report to this file (default: standard output).")
def report(run: str, root: str | None, fmt: str, output: str | None) -> None:
    """Render a report of RUN (a result JSON file, or a run id / prefix / latest / previous)."""
    sys.exit(opt.guard(_report, run, root or ".", fmt, output))


def _flaky(root: str, eval_set: str | None, limit: int | None, min_runs: int, k: int) -> int:
    from rich.console import Console

    from agenteval.reporting.tables import ID_FLOOR, ByWidth, Col, fit_table
    from agenteval.store import RunStore
    from agenteval.verdicts.flaky import flaky_cases

    store = RunStore(root)
    every = store.list_runs()
    rows = [r for r in every if eval_set is None or r.eval_set_id == eval_set][:limit]
    if eval_set is not None and not rows and every:
        from agenteval.errors import DataError

        stored = ", ".join(sorted({r.eval_set_id for r in every}))
        raise DataError(store.path, "--eval_set", f"no stored run of eval set {eval_set!r} "
                        f"(stored: {stored})")
    history = [(r.eval_set_id, store.case_runs(r.run_id)) for r in reversed(rows)]  # oldest first
    cases = flaky_cases(history, min_runs)
    console = Console()
    if not cases:
        console.print(f"No flaky case in {len(rows)} stored run(s) (a case is flaky when its verdicts "
                      f"both pass and fail over at least {min_runs} case runs).")
        return 0
    cols = (Col("eval set", floor=12), Col("eval id", floor=ID_FLOOR), Col("passed", "right"),
            Col("pass rate", "right"), Col("flip rate", "right"), Col(f"pass@{k}", "right"),
            Col(f"pass^{k}", "right"))
    cells = [[c.eval_set_id, c.eval_id, f"{c.passed}/{c.runs}", f"{c.pass_rate:.0%}", f"{c.flip_rate:.0%}",
              f"{c.pass_k(k)[0]:.2f}", f"{c.pass_k(k)[1]:.2f}"] for c in cases]
    console.print(ByWidth(lambda width: fit_table(
        cols, cells, width, force=True, title=f"Flaky cases over {len(rows)} stored run(s), most "
        "uncertain first", title_justify="left")))
    return 0


@runs.command()
@root_option
@click.option("--eval_set", "--eval-set", help="Only runs of this eval set id.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the N newest runs.")
@click.option("--min_runs", "--min-runs", type=click.IntRange(min=2), default=2, show_default=True,
              help="Case runs a case needs to be listed.")
@click.option("--k", type=click.IntRange(min=1), default=3, show_default=True,
              help="k of pass@k and pass^k.")
@click.pass_context
def flaky(ctx: click.Context, root: str | None, eval_set: str | None, limit: int | None, min_runs: int,
          k: int) -> None:
    """List the cases whose verdicts flip across the run history: pass and flip rates, pass@k, pass^k."""
    sys.exit(opt.guard(_flaky, root or ctx.obj.get("root") or ".", eval_set, limit, min_runs, k))


COMMANDS = (runs, report)

__all__ = ["COMMANDS", "report", "root_option", "runs"]
