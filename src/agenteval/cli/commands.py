"""Command bodies of `score` and `migrate`, and the tail every run command shares: print the
report, write the result documents and report files, record the run in the history.

This is the edge where the environment is read (model API keys) and output is printed; the
work itself is the runner's (`agenteval.runner.rescore`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from agenteval.cli import teardown
from agenteval.cli.progress import ProgressBar
from agenteval.datasets import load_eval_set, migrate
from agenteval.datasets.files import gc_paused
from agenteval.reporting import console_report, write_reports
from agenteval.runner import (
    ScoreJob,
    Selection,
    Services,
    load_actual,
    rescore,
    resolve_config,
    weak_judges,
)
from agenteval.runner.sync import run_sync
from agenteval.schema import Concurrency, EvalSetResult, Run
from agenteval.store import record, write_outputs
from agenteval.verdicts import all_passed

MAX_TABLE_CASES = 50


@dataclass
class Outputs:
    """Where a run's results go besides the console."""

    output: str | None = None
    junit_xml: str | None = None
    html: str | None = None
    markdown: str | None = None
    history_root: str | None = None  # record the run in this store (None: not at all)


@dataclass
class ScoreArgs:
    expected: str
    actual: str
    config_file_path: str | None = None
    detailed: bool = False
    judge_model: str | None = None
    no_cache: bool = False
    parallelism: int = 4
    model_parallelism: dict[str, int] = field(default_factory=dict)
    outputs: Outputs = field(default_factory=Outputs)


def report(console: Console, results: Sequence[EvalSetResult], detailed: bool) -> int:
    """Prints the reports; returns the exit code (1 if any case did not pass)."""
    for renderable in console_report(results, detailed, MAX_TABLE_CASES):
        console.print(renderable)
    return 0 if all_passed(results) else 1


def finish(console: Console, run: Run, detailed: bool, outputs: Outputs) -> int:
    """Reports the run, writes what `outputs` asks for, records it; returns the exit code."""
    code = report(console, run.results, detailed)
    if outputs.output:
        write_outputs(run.results, outputs.output)
        console.print(f"Results written to {outputs.output}")
    for path in write_reports(run.results, outputs.junit_xml, outputs.html, outputs.markdown):
        console.print(f"Report written to {path}")
    if outputs.history_root is not None:
        for path in record(outputs.history_root, run):
            console.print(f"History: {path}")
        console.print(f"Recorded run {run.run_id} in "
                      f"{Path(outputs.history_root) / '.agenteval' / 'history.sqlite'}")
    return code


def score_command(args: ScoreArgs) -> int:
    # A large run is millions of long-lived objects that the cyclic GC would rescan again and
    # again while results are built (measured: over half the time of a 10,000-case score). The
    # command creates no garbage cycles worth collecting and ends with the process.
    with gc_paused():
        return _score(args)


def _score(args: ScoreArgs) -> int:
    console = Console()
    config, source = resolve_config(args.config_file_path, args.expected)
    expected = load_eval_set(args.expected)
    actual = load_actual(args.actual)
    concurrency = Concurrency(cases=args.parallelism, model_calls=args.model_parallelism)
    job = ScoreJob(config=config, config_source=source, judge_model=args.judge_model,
                   concurrency=concurrency, command="score", argv=sys.argv[1:],
                   expected=Selection(Path(args.expected), expected), actual=actual,
                   actual_source=args.actual)
    metrics = job.metrics()
    services = Services.create(dict(os.environ), concurrency, store_root=".", no_cache=args.no_cache)
    console.print(f"Using criteria from {source or 'defaults'}: "
                  f"{', '.join(m.name for m in metrics if not m.spec.informational)}")
    warn_weak_judges(console, weak_judges(metrics))
    with ProgressBar("scoring") as progress:
        run = run_sync(rescore(job, services, progress))
    code = finish(console, run, args.detailed, args.outputs)
    # Freeing these one object at a time is the last 0.6 s of a 10,000-case run; the console
    # script ends the process without doing it.
    teardown.keep(expected, actual, run)
    return code


def migrate_command(old: str, new: str, initial_session_file: str | None) -> int:
    eval_set = migrate(old, new, initial_session_file)
    Console().print(f"Wrote {len(eval_set.eval_cases)} eval case(s) to {new}")
    return 0


def warn_weak_judges(console: Console, names: Sequence[str]) -> None:
    """Says which criteria run on the embedded judge where its verdicts are weak."""
    for name in names:
        console.print(f"[yellow]Note: {name} is judged by the embedded model, whose verdicts on "
                      "rubric questions were right only 53-74% of the time in agenteval's benchmark "
                      "(bench/README.md); use --judge_model with a larger model for verdicts "
                      "you rely on.[/]")
