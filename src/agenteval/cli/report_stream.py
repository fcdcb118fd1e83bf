"""`agenteval report RUN` read one case at a time (`store.outcome_stream`) for the formats that
allow it: memory stays flat however large the run (a 50,000-case document is 700 MB of JSON and
3.8 GB loaded whole). Each function returns False, with nothing written, when the document cannot
be read so; `cli.history` then reads it whole, which says what is wrong, if anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from rich.console import Console

    from agenteval.schema import EvalSetResult
    from agenteval.verdicts.outcome import CaseOutcome


def _path(ref: str, root: str) -> Path:
    """The result document RUN names (a file, or a stored run's)."""
    from pathlib import Path

    from agenteval.store import RunStore
    from agenteval.store.lookup import is_path

    return Path(ref) if is_path(ref) else RunStore(root).resolve(ref).result_path


def _outcomes(ref: str, root: str) -> tuple[EvalSetResult, Iterator[CaseOutcome]] | None:
    """RUN's document head and its case outcomes one at a time (`store.outcome_stream`); None
    when it cannot be read so (no case results, a missing file, ...): read whole then, which says
    what is wrong, if anything."""
    from agenteval.errors import DataError
    from agenteval.store.outcome_stream import outcome_stream

    try:
        return outcome_stream(_path(ref, root))
    except DataError:
        return None


def print_decisions(console: Console, documents: Sequence[EvalSetResult]) -> None:
    """For documents of runs made with --until_decided (`eval` and `report` print it): per eval
    set, how many cases were decided each way, the case runs spent, and which cases stayed
    undecided (with their passes, and the --max_runs that could decide them)."""
    from agenteval.verdicts.sequential import Decision, Decisions, runs_that_could_decide

    for document in documents:
        stored = document.metadata.get("until_decided")
        if stored is None:
            continue
        d = Decisions.model_validate(stored)
        counts = d.counts()
        console.print(f"{document.eval_set_id}: until decided (each decision wrong with chance ≤ "
                      f"{d.alpha:g}, bar: pass rate {d.rate:g}, at most {d.max_runs} runs a case): "
                      f"{counts[Decision.PASSED]} passed, {counts[Decision.FAILED]} failed, "
                      f"{counts[Decision.UNDECIDED]} undecided; {sum(c.runs for c in d.cases)} case runs",
                      markup=False, highlight=False)
        for c in d.cases:
            if c.decision == Decision.UNDECIDED:
                could = runs_that_could_decide(c.passed_runs, c.runs, d.alpha, d.rate)
                console.print(f"  undecided: {c.eval_id} passed {c.passed_runs}/{c.runs} (no outcome of "
                              f"{d.max_runs} runs could decide it; "
                              + (f"--max_runs {could} could)" if could else "nor of 1,000)"),
                              markup=False, highlight=False)


def streamed_report(ref: str, root: str, fmt: str, output: str | None) -> bool:
    """Writes the JUnit or Markdown report of RUN (to `output`, else standard output) read one
    case at a time (`store.outcome_stream`): memory flat however large the run.
    False, with nothing written, when the document cannot be read so (its case results not in
    its summaries' order, say): then it is read whole."""
    from agenteval.datasets.files import write_text_atomic
    from agenteval.reporting.junit import JUnitStream
    from agenteval.reporting.markdown import MarkdownStream
    from agenteval.store.outcome_stream import OutOfOrder

    read = _outcomes(ref, root)
    if read is None:
        return False
    document, cases = read
    stream = JUnitStream(output) if fmt == "junit" else MarkdownStream()
    try:
        for case in cases:
            stream.add(case)
    except BaseException as e:
        if isinstance(stream, JUnitStream):
            stream.abort()
        if isinstance(e, OutOfOrder):
            return False
        raise
    if isinstance(stream, JUnitStream) and output:
        stream.commit(document)
    elif isinstance(stream, JUnitStream):
        for block in stream.blocks(document):  # (UTF-8, as the document declares)
            click.echo(block, nl=False)
    elif output:
        write_text_atomic(output, stream.text(document))
    else:
        click.echo(stream.text(document), nl=False)
    return True


def streamed_console(ref: str, root: str) -> bool:
    """Prints the console report of RUN read one case at a time, as `eval` prints a run's: the
    table of its case runs (past `TABLE_CASES`, of those that did not pass), the repeated-run
    table and the summary. False, with nothing printed, when the document cannot be read so
    (see `streamed_report`)."""
    from rich.console import Console

    from agenteval.reporting.console import TABLE_CASES, streamed_report
    from agenteval.schema import CaseSummary, EvalCaseResult, EvalStatus
    from agenteval.store.outcome_stream import OutOfOrder

    read = _outcomes(ref, root)
    if read is None:
        return False
    document, cases = read
    first: list[EvalCaseResult] = []
    not_passed: list[EvalCaseResult] = []
    summaries: list[CaseSummary] = []
    case_runs = count = passed = not_evaluated = 0
    try:
        for case in cases:
            count += 1
            passed += case.status == EvalStatus.PASSED
            not_evaluated += case.status == EvalStatus.NOT_EVALUATED
            if len(summaries) < TABLE_CASES:
                summaries.append(case.summary)
            for run in case.runs:
                case_runs += 1
                if len(first) < TABLE_CASES:
                    first.append(run)
                if run.final_eval_status != EvalStatus.PASSED and len(not_passed) < TABLE_CASES:
                    not_passed.append(run)
    except OutOfOrder:
        return False
    console = Console()
    print_decisions(console, [document])
    for renderable in streamed_report(document.eval_set_id, case_runs, count, passed, first, not_passed,
                                      summaries, TABLE_CASES, not_evaluated, gating=document.gating,
                                      shows_all="all are in the result document; --format html "
                                      "or junit lists every one"):
        console.print(renderable)
    return True


def streamed_html(ref: str, root: str, output: str | None) -> bool:
    """Writes the HTML report of RUN (to `output`, else standard output) in two passes over its
    cases (`reporting.html.html_stream`): the same bytes as read whole."""
    from agenteval.datasets.targets import TargetWriter
    from agenteval.errors import DataError
    from agenteval.reporting.html import html_stream
    from agenteval.store.outcome_stream import OutOfOrder, outcome_stream

    path = _path(ref, root)  # resolved once: both passes read the same document
    try:
        document, first = outcome_stream(path)
    except DataError:
        return False
    reads = iter([first])
    chunks = html_stream(document, lambda: next(reads, None) or outcome_stream(path)[1])
    try:
        head = next(chunks)  # (the first pass read every case: an OutOfOrder shows by now)
    except OutOfOrder:
        return False
    if not output:
        click.echo(head, nl=False)
        for chunk in chunks:
            click.echo(chunk, nl=False)
        return True
    target = TargetWriter(output)
    try:
        target.write(head.encode("utf-8"))
        for chunk in chunks:
            target.write(chunk.encode("utf-8"))
        target.commit()
    except BaseException:
        target.abort()
        raise
    return True


__all__ = ["streamed_console", "streamed_html", "streamed_report"]
