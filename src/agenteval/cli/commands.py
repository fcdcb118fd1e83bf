"""Command bodies of `score` and `migrate`, and the tail every run command shares: print the
report, write the result documents and report files, record the run in the history.

This is the edge where the environment is read (model API keys) and output is printed; the
work itself is the runner's (`agenteval.runner.streamed`, `agenteval.runner.rescore`).
"""

from __future__ import annotations

import codecs
import functools
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape

from agenteval.cli import teardown
from agenteval.cli.progress import ProgressBar
from agenteval.datasets import load_eval_set, migrate
from agenteval.datasets.files import check_rereadable, gc_paused, write_text_atomic
from agenteval.datasets.targets import check_targets
from agenteval.errors import AgentEvalError, DataError
from agenteval.reporting import console_report, render_report
from agenteval.reporting.console import TABLE_CASES, streamed_cases, streamed_report
from agenteval.runner.driver import Sink
from agenteval.runner.job import ScoreJob, weak_judges
from agenteval.runner.plan import RunPlan, prepare
from agenteval.runner.result_stream import is_result_document
from agenteval.runner.selection import Selection, resolve_config
from agenteval.runner.services import Services
from agenteval.runner.streamed import RunsApart, StreamedRun, eval_set_shell, open_eval_set, rescore_files
from agenteval.runner.sync import run_sync
from agenteval.schema import Concurrency, EvalCaseResult, EvalSetResult, Run, RunSpec
from agenteval.store.case_rows import RowSpool
from agenteval.store.history import history_path
from agenteval.store.kept import KeptCase
from agenteval.store.output import output_paths, write_outputs
from agenteval.tracing.otel import TraceBatches, traces_url
from agenteval.tracing.otel import export as export_traces
from agenteval.tracing.otlp_json import looks_like_otlp
from agenteval.verdicts import all_passed
from agenteval.verdicts.outcome import CaseOutcome

if TYPE_CHECKING:
    from agenteval.reporting.junit import JUnitStream
    from agenteval.reporting.markdown import MarkdownStream
    from agenteval.store.journal import Journal

MAX_TABLE_CASES = TABLE_CASES


@dataclass(eq=False, repr=False)  # a command's arguments, read once: fewer methods compiled
class Outputs:
    """Where a run's results go besides the console."""

    output: str | None = None
    junit_xml: str | None = None
    html: str | None = None
    markdown: str | None = None
    history_root: str | None = None  # record the run in this store (None: not at all)
    otlp_endpoint: str | None = None  # export the traces to this OTLP/HTTP collector

    def check(self, eval_set_ids: Sequence[str], inputs: Mapping[str, str | Path | None]) -> None:
        """Before the run: every target can be written, names none of the run's `inputs` (what
        it is → path) and the run history can be used; a DataError naming the file and the
        option otherwise (nothing has run, nothing is written)."""
        targets: dict[str, str | Path | None] = {}
        if self.output:
            for i, path in enumerate(output_paths(eval_set_ids, self.output)):
                targets["--output" if i == 0 else f"--output ({eval_set_ids[i]})"] = path
        targets.update({"--junit_xml": self.junit_xml, "--html": self.html, "--markdown": self.markdown})
        if self.history_root is not None:
            # The run database is imported where a run asks for it (`score` without --history
            # starts without it: `store.db` and what it brings).
            from agenteval.store.db import RunStore, history_db_path

            targets["run history"] = history_db_path(self.history_root)
        check_targets(targets, inputs)
        if self.history_root is not None:
            RunStore(self.history_root).check()


@dataclass(eq=False, repr=False)  # a command's arguments, read once: fewer methods compiled
class ScoreArgs:
    expected: str
    actual: str
    config_file_path: str | None = None
    detailed: bool = False
    judge_model: str | None = None
    no_cache: bool = False
    parallelism: int = 4
    model_parallelism: dict[str, int] = field(default_factory=dict)
    judge_timeout: float | None = None
    judge_attempts: int | None = None
    escalate_judge_model: str | None = None
    judge_rationales: str | None = None
    outputs: Outputs = field(default_factory=Outputs)


def report(console: Console, results: Sequence[EvalSetResult], detailed: bool) -> int:
    """Prints the reports; returns the exit code (1 if any case did not pass)."""
    for renderable in console_report(results, detailed, MAX_TABLE_CASES):
        console.print(renderable)
    return 0 if all_passed(results) else 1


class ReportStreams(Sink):
    """The JUnit XML and Markdown summary of a streamed run, gathered case by case as it is
    scored (`reporting.junit.JUnitStream`, `reporting.markdown.MarkdownStream`), written by
    `finish` once it is done, nothing written when it fails; and its traces, sent to the OTLP
    collector in batches as its case runs finish (`tracing.otel.TraceBatches`)."""

    def __init__(self, outputs: Outputs, journaled: bool = False) -> None:
        # Each report's module is imported where it is asked for (the XML one brings
        # xml.etree): a run that writes neither starts without them.
        self.junit: JUnitStream | None = None
        self.markdown: MarkdownStream | None = None
        if outputs.junit_xml:
            from agenteval.reporting.junit import JUnitStream

            self.junit = JUnitStream(outputs.junit_xml)
        if outputs.markdown:
            from agenteval.reporting.markdown import MarkdownStream

            self.markdown = MarkdownStream()
        self.otlp_endpoint = outputs.otlp_endpoint
        self.traces: TraceBatches | None = None
        # The history's rows, made as cases are decided: recording reads no document back. A
        # `journaled` run's are in the run journal already (its verdicts: `store.kept`).
        self.rows = RowSpool() if outputs.history_root is not None and not journaled else None

    @property
    def hears_cases(self) -> bool:
        """Whether a report, the history or traces need every case (`runner.sharded` shards a
        run only where no output does)."""
        return any(s is not None for s in (self.junit, self.markdown, self.rows)) or bool(self.otlp_endpoint)

    def on_start(self, header: RunSpec, total: int) -> None:
        if self.otlp_endpoint:
            self.traces = TraceBatches(self.otlp_endpoint, header.run_id)

    def on_case_run(self, result: EvalCaseResult, seconds: float) -> None:
        if self.traces is not None:
            self.traces.add(result)

    def on_case(self, outcome: CaseOutcome) -> None:
        for stream in (self.junit, self.markdown, self.rows):
            if stream is not None:
                stream.add(outcome)

    def on_kept_case(self, case: KeptCase, runs: bool) -> None:
        # The history takes the journal's rows of the case; only the reports rebuild it.
        if self.junit is not None or self.markdown is not None:
            outcome = case.outcome()
            for stream in (self.junit, self.markdown):
                if stream is not None:
                    stream.add(outcome)
        if self.rows is not None:
            self.rows.add_rows(case.case_rows)

    def on_kept_block(self, cases: Sequence[KeptCase], runs: bool) -> None:
        # (A journaled run without reports hears nothing of its kept cases: not a call each.)
        if self.junit is not None or self.markdown is not None or self.rows is not None:
            super().on_kept_block(cases, runs)

    def on_abort(self) -> None:
        if self.rows is not None:
            self.rows.close()
        if self.junit is not None:
            self.junit.abort()


class TableAhead:
    """The report's table of the cases that did not pass, rendered to text while a sharded run
    still scores (`rescore_files`' `table_ready`: it is final once `MAX_TABLE_CASES` of them
    are known, usually in the first chunk): rendering it was 0.07-0.08 s of CPU after the last
    case was scored. `finish` prints the text as it was rendered where the run's counts and
    cases are the ones it was rendered from and the console is as wide as it was then (a
    terminal resized meanwhile gets the table rendered again, at its width)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.text: str | None = None
        self._made_from: tuple[int, int, list[EvalCaseResult]] | None = None

    def __call__(self, case_runs: int, not_passed: list[EvalCaseResult]) -> None:
        width = self.console.width
        with self.console.capture() as capture:  # the bytes `print` writes: same width, colours
            for renderable in streamed_cases(case_runs, [], not_passed, MAX_TABLE_CASES):
                self.console.print(renderable)
        self.text, self._made_from = capture.get(), (width, case_runs, not_passed)

    def of(self, case_runs: int, not_passed: Sequence[EvalCaseResult]) -> str | None:
        """The text rendered ahead, if it is what the report shows now."""
        if self._made_from is None:
            return None
        width, runs, cases = self._made_from
        same = len(cases) == len(not_passed) and all(a is b for a, b in zip(cases, not_passed, strict=True))
        return self.text if same and runs == case_runs and width == self.console.width else None


def finish(console: Console, run: Run | StreamedRun, detailed: bool, outputs: Outputs,
           streams: ReportStreams | None = None, ahead: TableAhead | None = None,
           journal: Journal | None = None) -> int:
    """The tail of every run command: reports the run (loaded whole, or streamed with the
    report files gathered in `streams`), writes what `outputs` asks for, records it; returns
    the exit code. `journal`: the run journal owning the run, which recording ends (see
    `store.record.record`).

    A target that fails although it was checked (a full disk, say) is reported and the other
    targets are still written: one failed write never loses the others. Exit 2 then. `ahead`:
    the case table, if it was rendered while the run scored."""
    if isinstance(run, StreamedRun):
        t = run.spec.totals
        text = ahead.of(t.case_runs, run.not_passed) if ahead is not None else None
        if text is not None:
            console.file.write(text)
        for renderable in streamed_report(run.eval_set_id, t.case_runs, t.cases, t.passed, run.first,
                                          run.not_passed, run.summaries, MAX_TABLE_CASES,
                                          not_evaluated=t.not_evaluated, cases_table=text is None,
                                          gating=run.spec.gating):
            console.print(renderable)
        code = 0 if t.passed == t.cases else 1
    else:
        code = report(console, run.results, detailed)
    steps: list[Step] = []
    if outputs.output:
        steps.append(functools.partial(_documents, run, outputs.output))
    for fmt, path in (("junit", outputs.junit_xml), ("html", outputs.html), ("markdown", outputs.markdown)):
        if path:
            steps.append(functools.partial(_report_file, run, fmt, path, streams))
    if outputs.history_root is not None:
        steps.append(functools.partial(_record, run, outputs.history_root, streams, journal))
    if outputs.otlp_endpoint:
        endpoint = outputs.otlp_endpoint
        if isinstance(run, Run):
            results, run_id = run.results, run.run_id
            steps.append(functools.partial(_export, lambda: export_traces(results, endpoint, run_id=run_id),
                                           endpoint))
        elif streams is not None and streams.traces is not None:
            steps.append(functools.partial(_export, streams.traces.close, endpoint))
    return complete(console, steps, code)


class Warned(AgentEvalError):
    """A step's failure that leaves the run's exit code as it is (`complete`)."""


def _export(send: Callable[[], int], endpoint: str) -> str:
    """The traces' export step: `send` them. A collector that refuses them or is not there is
    a warning (`Warned`): the run's results are kept and its outcome stands; the traces are
    not part of it."""
    try:
        return f"Exported {send()} spans to {traces_url(endpoint)}"
    except AgentEvalError as e:
        raise Warned(f"traces not exported: {e}") from e


Step = Callable[[], str]
"""One output of a finished run: writes it, returns the line that says where it went."""


def complete(console: Console, steps: Sequence[Step], code: int) -> int:
    """The one finishing tail of every run command: each step in turn, its line printed; a step
    that fails (a full disk, say) is reported and the others still run, since one failed write
    must never lose the others. Returns `code`, or 2 when a step failed (but for a `Warned`
    failure: a warning line)."""
    console.file.flush()  # a target may be /dev/stdout: the report comes first
    failed: list[str] = []
    warned: list[str] = []
    for step in steps:
        try:
            # Unwrapped: a path cut at the console's width (80 columns in a CI log) cannot be copied.
            # Plain: a path's brackets are not markup, nor are its digits highlighted.
            console.print(step(), soft_wrap=True, markup=False, highlight=False)
        except Warned as e:
            warned.append(str(e))
        except AgentEvalError as e:
            failed.append(str(e))
    for message in warned:
        click.echo(f"warning: {message}", err=True)
    for message in failed:
        click.echo(f"error: {message}", err=True)
    return 2 if failed else code


def _documents(run: Run | StreamedRun, output: str) -> str:
    if isinstance(run, StreamedRun):
        return f"Results written to {output}"  # streamed while scoring
    return f"Results written to {', '.join(map(str, write_outputs(run.results, output)))}"


def _report_file(run: Run | StreamedRun, fmt: str, path: str, streams: ReportStreams | None) -> str:
    if not isinstance(run, StreamedRun):
        write_text_atomic(path, render_report(fmt, run.results))
    elif fmt == "junit" and streams is not None and streams.junit is not None:
        streams.junit.commit(run.document)
    elif fmt == "markdown" and streams is not None and streams.markdown is not None:
        write_text_atomic(path, streams.markdown.text(run.document))
    else:  # `streams` refuses what the run has not gathered
        raise AgentEvalError(f"{path}: a streamed run has no {fmt} report")
    return f"Report written to {path}"


def _record(run: Run | StreamedRun, root: str, streams: ReportStreams | None = None,
            journal: Journal | None = None) -> str:
    from agenteval.store.db import history_db_path
    from agenteval.store.record import record, record_streamed

    if isinstance(run, StreamedRun):
        record_streamed(root, run.paths[-1], run.document, streams.rows if streams is not None else None,
                        journal)
        paths = run.paths[-1:]
    else:
        paths = record(root, run, journal=journal)
    return "\n".join([*(f"History: {p}" for p in paths),
                      f"Recorded run {run.run_id} in {history_db_path(root)}"])


def score_command(args: ScoreArgs) -> int:
    # A large run is millions of long-lived objects that the cyclic GC would rescan again and
    # again while results are built (measured: over half the time of a 10,000-case score). The
    # command creates no garbage cycles worth collecting and ends with the process.
    try:
        with gc_paused():
            return _score(args)
    except KeyboardInterrupt:  # Ctrl-C: exit 130, as a shell reports it, never 1 ("a case failed")
        click.echo("\ninterrupted", err=True)
        return 130


def score_inputs(args: ScoreArgs, job: ScoreJob) -> dict[str, str | Path | None]:
    """The files `score` reads, which no output may name."""
    return {"the eval set": args.expected, "--actual": args.actual, "the eval config": job.config_source}


def _score(args: ScoreArgs) -> int:
    check_rereadable(args.expected)
    check_rereadable(args.actual, "--actual")
    console = Console()
    # Everything that can be refused without the eval sets is checked first: a bad config on a
    # 10,000-case set fails at once.
    config, source = resolve_config(args.config_file_path, args.expected)
    concurrency = Concurrency(cases=args.parallelism, model_calls=args.model_parallelism)
    job = ScoreJob(config=config, config_source=source, judge_model=args.judge_model,
                   concurrency=concurrency, judge_timeout=args.judge_timeout,
                   judge_attempts=args.judge_attempts, escalate_judge_model=args.escalate_judge_model,
                   judge_rationales=args.judge_rationales,
                   command="score", argv=sys.argv[1:],
                   actual_source=args.actual)
    services = Services.for_job(job, dict(os.environ), store_root=".", no_cache=args.no_cache)
    plan = prepare(job, services)  # metrics resolved and judges checked once, for the whole run
    said = False
    if streams(args):
        # Its id names the output targets, checked first. Its head alone: the nesting is checked
        # where the cases are read (by a sharded run's workers, as they score them); a head
        # refused is read again as the stream reads it, which says what is wrong in its order.
        try:
            shell = eval_set_shell(args.expected)
        except DataError:
            shell, _ = open_eval_set(args.expected)
        args.outputs.check([shell.eval_set_id], score_inputs(args, job))
        _say_criteria(console, job)
        said = True
        try:
            return _score_streamed(console, args, job, services, plan)
        except RunsApart:  # a hand-made document: read whole (nothing is written yet)
            pass
    # Imported here: the run's whole-document path brings the evaluation loop, its executors
    # and the agents with it, which the streamed path (nearly every run) never uses.
    from agenteval.runner.recorded import load_actual
    from agenteval.runner.run import rescore
    from agenteval.tracing.ingest import TraceConversations

    expected = load_eval_set(args.expected)
    args.outputs.check([expected.eval_set_id], score_inputs(args, job))
    actual = load_actual(args.actual)
    job.expected, job.actual = Selection(Path(args.expected), expected), actual
    if isinstance(actual, TraceConversations):  # left out of the run, named here
        for key, why in actual.unmatched(expected).items():
            console.print(f"Note: {args.actual}: conversation {key!r} not scored: {why}.", style="yellow",
                          highlight=False, markup=False)
    if not said:
        _say_criteria(console, job)
    with ProgressBar("scoring") as progress:
        run = run_sync(rescore(job, services, progress, plan))
    code = finish(console, run, args.detailed, args.outputs)
    # Freeing these one object at a time is the last 0.6 s of a 10,000-case run; the console
    # script ends the process without doing it.
    teardown.keep(expected, actual, run)
    return code


def streams(args: ScoreArgs) -> bool:
    """Whether `score` can run in bounded memory (`runner.streamed`): the expected file is a
    current-format eval set, the actual one too or a result document, and nothing but the
    result document, the history, JUnit XML, the Markdown summary, the trace export and the
    console report (not the per-invocation details) is asked for. The HTML report still reads
    the whole run."""
    if args.detailed or args.outputs.html:
        return False
    return _eval_set_head(args.expected) and (_eval_set_head(args.actual) or is_result_document(args.actual))


def _eval_set_head(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False  # the loader says what is wrong with it
    head = head.removeprefix(codecs.BOM_UTF8).lstrip()
    return head[:1] == b"{" and not looks_like_otlp(head, path) and b"eval_set_result_id" not in head \
        and b"evalSetResultId" not in head


def _say_criteria(console: Console, job: ScoreJob) -> None:
    metrics = job.metrics()
    console.print(f"Using criteria from {job.config_source or 'defaults'}: "
                  f"{', '.join(m.name for m in metrics if not m.spec.informational)}",
                  markup=False, highlight=False, soft_wrap=True)  # (a path: never cut, nor markup)
    warn_weak_judges(console, weak_judges(metrics))


def _score_streamed(console: Console, args: ScoreArgs, job: ScoreJob, services: Services,
                    plan: RunPlan) -> int:
    output, root = args.outputs.output, args.outputs.history_root

    def targets(document: EvalSetResult) -> list[Path]:
        return [*([Path(output)] if output else []),
                *([history_path(root, document.eval_set_result_id)] if root is not None else [])]

    streams = ReportStreams(args.outputs)
    ahead = TableAhead(console)
    try:
        with ProgressBar("scoring") as progress:
            run = run_sync(rescore_files(job, args.expected, args.actual, services, targets, progress,
                                         keep=MAX_TABLE_CASES, outputs=[streams], plan=plan,
                                         table_ready=ahead))
    except BaseException:  # refused before it began, say
        streams.on_abort()
        raise
    if run.processes > 1:
        console.print(f"Scored in {run.processes} worker processes")
    code = finish(console, run, args.detailed, args.outputs, streams, ahead)
    # The console script then ends at once: the interpreter's teardown (its modules, what the
    # run left) was the last 0.15-0.2 s of CPU of a 10,000-case run, after its report.
    teardown.keep(run)
    return code


def migrate_command(old: str, new: str, initial_session_file: str | None,
                    force: bool = False) -> int:
    from agenteval.datasets.legacy import asks_nothing

    eval_set = migrate(old, new, initial_session_file, force=force)
    console = Console()
    console.print(f"Wrote {len(eval_set.eval_cases)} eval case(s) to {new}", markup=False, highlight=False)
    empty = asks_nothing(eval_set)
    if empty:  # kept, as ADK keeps them; most likely a query lost in an export
        console.print(f"[yellow]Note: {len(empty)} turn(s) with an empty query, kept as ADK keeps "
                      f"them (the agent is sent an empty message): {escape('; '.join(empty[:5]))}"
                      + (" …" if len(empty) > 5 else "") + "[/]")
    return 0


def warn_weak_judges(console: Console, names: Sequence[str]) -> None:
    """Says which criteria run on the embedded judge where its verdicts are weak."""
    for name in names:
        console.print(f"[yellow]Note: {name} is judged by the embedded model, whose verdicts on "
                      "rubric questions were right only 53-74% of the time in agenteval's benchmark "
                      "(bench/README.md); use --judge_model with a larger model for verdicts "
                      "you rely on.[/]")
