"""`agenteval eval`: load the agent and eval sets, run them through the runner, report, save.

This is the edge where the environment is read (model API keys) and output is printed.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import click
from rich.console import Console

from agenteval.agents import agent_home, check_agent_path, load_root_agent
from agenteval.cli import teardown
from agenteval.cli.commands import MAX_TABLE_CASES, Outputs, ReportStreams, finish, warn_weak_judges
from agenteval.cli.progress import ProgressBar
from agenteval.cli.report_stream import print_decisions
from agenteval.datasets.targets import is_stream
from agenteval.errors import AgentEvalError, configure_logging
from agenteval.models.replay import replaying
from agenteval.runner import EvalJob, Services, config_beside, prepare, run, select, weak_judges
from agenteval.runner.driver import Sink, Sinks, Written
from agenteval.runner.durable import AlreadyFinished, check_unchanged, claim_resume, journaled_files
from agenteval.runner.executors.pick import check_executor
from agenteval.runner.request import RunRequest, request_config, to_job
from agenteval.runner.streamed import Kept, StreamedRun
from agenteval.runner.sync import run_sync
from agenteval.schema import EvalSetResult, Run
from agenteval.store import output_paths
from agenteval.store.history import history_path


@dataclass(eq=False, repr=False)  # a command's arguments, read once: fewer methods compiled
class EvalArgs:
    """`agenteval eval`: the run asked for, and what only the command line has."""

    request: RunRequest
    detailed: bool = False
    log_level: str = "WARNING"
    eval_storage_uri: str | None = None
    replay: str | None = None  # a recorded run to replay (see cli.replay)
    replay_then: str = "stop"


def eval_command(args: EvalArgs) -> int:
    configure_logging(args.log_level)
    console = Console()
    request = args.request
    if args.eval_storage_uri:
        raise AgentEvalError("--eval_storage_uri: only local storage is supported; results go to "
                             "--output and to .agenteval/eval_history beside the agent")
    if request.agent_path is None:
        raise AgentEvalError("AGENT_PATH is required")
    check_agent_path(request.agent_path)
    agent_dir = agent_home(request.agent_path)  # its eval sets and store: a .py file's folder
    # Everything that can be refused without the eval sets is checked first: a bad config on a
    # 10,000-case set fails at once. Like adk eval, test_config.json beside the eval set is used
    # when exactly one set is given.
    config, source = request_config(request, config_beside(request.eval_sets, agent_dir))
    job = to_job(request, config, source, command="eval", argv=sys.argv[1:],
               app_name=agent_dir.resolve().name)
    if request.resume and not request.history:
        raise AgentEvalError("--resume / --retry_errors: the run journal lives in the run history; "
                             "drop --no_history")
    outputs = _outputs(request, agent_dir)
    services = Services.for_job(job, dict(os.environ), store_root=agent_dir,
                                no_cache=request.no_cache, journal=request.history)
    try:
        return _eval(args, job, services, console, outputs)
    except AlreadyFinished as e:  # nothing runs, nothing is recorded again: the run's own verdict
        click.echo(str(e))  # one line, however wide the terminal
        return 0 if e.passed else 1
    except KeyboardInterrupt:  # Ctrl-C: exit 130, as a shell reports it, never 1 ("a case failed")
        run_id = services.journal.begun if services.journal is not None else None
        click.echo("\ninterrupted" + (f": run {run_id} keeps its finished case runs; finish it with "
                                      f"--resume {run_id}" if run_id else ""), err=True)
        return 130
    finally:
        if services.journal is not None:
            services.journal.close()
        # The console script then ends without the interpreter's teardown, once the exit hooks
        # (an agent's own, a tracer's flush) have run and open files are flushed.
        teardown.end()


def _outputs(request: RunRequest, agent_dir: Path) -> Outputs:
    o = request.outputs
    return Outputs(output=o.output, junit_xml=o.junit_xml, html=o.html, markdown=o.markdown,
                   history_root=str(agent_dir) if request.history else None, otlp_endpoint=o.otlp_endpoint)


def _eval(args: EvalArgs, job: EvalJob, services: Services, console: Console, outputs: Outputs) -> int:
    if job.resume is not None and services.journal is not None:
        # Before anything else: a run another process owns is refused, and one already finished
        # reported, without loading the agent; a finished run of other sets, cases, config or
        # repeats is refused (its verdict is not this command's).
        try:
            job.resume = claim_resume(services.journal, job.resume, job.retry_errors)
        except AlreadyFinished as finished:
            job.selections = select(args.request.eval_sets, agent_home(args.request.agent_path or ""),
                                    stream=True)
            check_unchanged(services.journal, finished.run_id, job)
            raise
    if args.replay and job.config.mock_tools is not None:  # the recording answers tool calls
        job.config = job.config.model_copy(update={"mock_tools": None})
    plan = prepare(job, services)  # metrics resolved and judges checked once, for the whole run
    check_executor(job, plan.isolation)  # (a refusal before anything is printed)
    metrics = plan.metrics
    agent_path = args.request.agent_path or ""
    # Streamed: a set's cases are checked here (not again when a resumed run journaled the
    # file's very bytes), then read from its file as they run.
    trusted = journaled_files(services.journal, job.resume) \
        if job.resume is not None and services.journal is not None else None
    job.selections = select(args.request.eval_sets, agent_home(agent_path), stream=True, trusted=trusted)
    if job.resume is not None and services.journal is not None:
        check_unchanged(services.journal, job.resume, job)  # a refusal comes first and alone
    # The files the run reads, which no output may replace.
    inputs: dict[str, str | Path | None] = {"the eval config": job.config_source,
                                            "the agent": agent_path or None}
    if agent_path and Path(agent_path).is_dir():  # the files a folder's agent is imported from
        inputs.update({"the agent": Path(agent_path) / "agent.py",
                       "the agent's package": Path(agent_path) / "__init__.py"})
    several = len(job.selections) > 1
    inputs.update({f"the eval set {s.eval_set.eval_set_id}" if several else "the eval set": s.path
                   for s in job.selections})
    outputs.check([s.eval_set.eval_set_id for s in job.selections], inputs)  # before the agent is imported
    job.agent = load_root_agent(agent_path)
    recording = None
    if args.replay:
        from agenteval.cli.replay import load_recording, prepare_replay

        recording = load_recording(args.replay, agent_home(agent_path),
                                   "live" if args.replay_then == "live" else "stop")
        prepare_replay(job, services.models.get)
    console.print(f"Using criteria from {job.config_source or 'defaults'}: "
                  f"{', '.join(m.name for m in metrics if not m.spec.informational)}",
                  markup=False, highlight=False, soft_wrap=True)  # (a path: never cut, nor markup)
    warn_weak_judges(console, weak_judges(metrics))
    streamed = Streamed(outputs) if Streamed.fits(job, args.detailed, outputs) else None
    teardown.settle()  # what the run was built from lives to the end: out of the GC's passes
    with ProgressBar() as progress, replaying(recording):
        if streamed is None:
            result: Run | StreamedRun = run_sync(run(job, services, progress, plan))
        else:
            done = run_sync(run(job, services, progress, plan, streamed.documents, [streamed.reports]))
            result = streamed.result(done)
    if recording is not None:
        from agenteval.cli.replay import report_divergences

        report_divergences(console, recording)
    print_decisions(console, result.results if isinstance(result, Run) else [result.document])
    return finish(console, result, args.detailed, outputs, streamed.reports if streamed else None,
                  journal=services.journal)


class Streamed:
    """`eval` in flat memory: the one eval set's document streamed to its targets (`--output`
    and the history's copy) as its cases are decided, with what the console shows (`Kept`) and
    the report streams; the HTML report and the per-invocation details need the whole run, so
    they (and runs of several eval sets) keep it in memory instead."""

    @staticmethod
    def fits(job: EvalJob, detailed: bool, outputs: Outputs) -> bool:
        """Whether the run can stream: one eval set, no details or HTML report, and a document
        that goes to a file (one written to standard output comes after the report)."""
        return (len(job.selections) == 1 and not detailed and not outputs.html
                and not (outputs.output and is_stream(outputs.output)))

    def __init__(self, outputs: Outputs) -> None:
        self.outputs = outputs
        self.kept = Kept(MAX_TABLE_CASES)
        # With the history, the run is journaled (`Services.for_job`), its rows in its verdicts.
        self.reports = ReportStreams(outputs, journaled=outputs.history_root is not None)
        self.paths: list[Path] = []

    def documents(self, shell: EvalSetResult) -> Sink:
        o = self.outputs
        self.paths = [*(output_paths([shell.eval_set_id], o.output)[:1] if o.output else []),
                      *([history_path(o.history_root, shell.eval_set_result_id)] if o.history_root else [])]
        return Sinks([Written(self.paths, shell) if self.paths else None, self.kept])

    def result(self, done: Run) -> StreamedRun:
        k = self.kept
        return StreamedRun(done.spec, k.document or done.results[0], self.paths, k.first, k.summaries,
                           k.not_passed)
