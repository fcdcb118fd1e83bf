"""Command bodies: load inputs, call the runner, print reports, write results."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console

from agenteval.cli import teardown
from agenteval.cli.reports import write_reports
from agenteval.criteria import default_registry
from agenteval.datasets import (
    load_eval_set,
    migrate,
    parse_eval_set,
    read_json,
    validate_eval_set_json,
)
from agenteval.datasets.files import gc_paused, write_model
from agenteval.reporting import case_table, invocation_details, repeat_table, summary
from agenteval.runner import all_passed, score_recorded
from agenteval.runner.job import (
    check_judges,
    make_judge,
    resolve_config,
    weak_judges,
    with_judge_model,
)
from agenteval.runner.sync import run_sync
from agenteval.schema import EvalSet, EvalSetResult, EvalStatus
from agenteval.store import load_result, record_run

MAX_TABLE_CASES = 50


def report(console: Console, results: list[EvalSetResult], detailed: bool) -> int:
    """Prints the reports; returns the exit code (1 if any case did not pass)."""
    cases = [c for r in results for c in r.eval_case_results]
    if detailed:
        for case in cases:
            console.print(invocation_details(case))
    shown = cases
    if len(cases) > MAX_TABLE_CASES and not detailed:
        # A 10,000-row table helps nobody and costs more than scoring: show what did not pass.
        shown = [c for c in cases if c.final_eval_status != EvalStatus.PASSED][:MAX_TABLE_CASES]
        console.print(f"{len(cases)} case runs; showing {len(shown)} that did not pass "
                      "(all are in the result document; --print_detailed_results shows all)")
    console.print(case_table(shown))
    if any(s.runs > 1 for r in results for s in r.summary):
        console.print(repeat_table(results))
    console.print(summary(results))
    return 0 if all_passed(results) else 1


def load_actual(path: str) -> EvalSet | EvalSetResult:
    """An eval set of actual conversations, or a result document written by `agenteval eval`."""
    try:
        text = Path(path).read_bytes()
    except OSError:
        text = b""  # read_json below reports the file as missing or unreadable
    head = text[:4096]
    if b"eval_set_result_id" not in head and b"evalSetResultId" not in head:
        # Fast path for an eval set (a result document, which starts with its id, skips it).
        # Whatever it rejects takes the general path below, which tells result documents
        # apart and locates errors.
        try:
            return validate_eval_set_json(text)
        except ValidationError:
            pass
    data = read_json(path)
    if isinstance(data, dict) and "eval_set_result_id" in data:
        return load_result(path)
    return parse_eval_set(path, data)


def score_command(expected_path: str, actual_path: str, config_file_path: str | None,
                  output: str | None, detailed: bool, judge_model: str | None = None,
                  no_cache: bool = False, junit_xml: str | None = None, html: str | None = None,
                  markdown: str | None = None, history: bool = False) -> int:
    # A large run is millions of long-lived objects that the cyclic GC would rescan again and
    # again while results are built (measured: over half the time of a 10,000-case score). The
    # command creates no garbage cycles worth collecting and ends with the process.
    with gc_paused():
        return _score(expected_path, actual_path, config_file_path, output, detailed, judge_model,
                      no_cache, junit_xml, html, markdown, history)


def _score(expected_path: str, actual_path: str, config_file_path: str | None,
           output: str | None, detailed: bool, judge_model: str | None, no_cache: bool,
           junit_xml: str | None, html: str | None, markdown: str | None, history: bool) -> int:
    started = time.monotonic()
    console = Console()
    config, source = resolve_config(config_file_path, expected_path)
    metrics = with_judge_model(default_registry().resolve(config, source), judge_model)
    expected = load_eval_set(expected_path)
    actual = load_actual(actual_path)
    judge = make_judge(dict(os.environ), ".", no_cache)
    check_judges(metrics, judge)
    console.print(f"Using criteria from {source or 'defaults'}: "
                  f"{', '.join(m.name for m in metrics if not m.spec.informational)}")
    warn_weak_judges(console, weak_judges(metrics))
    result = run_sync(score_recorded(expected, actual, metrics, actual_source=actual_path,
                                        policy=config.not_evaluated, judge=judge))
    if output:
        write_model(output, result, exclude_none=False)
    code = report(console, [result], detailed)
    if output:
        console.print(f"Results written to {Path(output)}")
    for path in write_reports([result], junit_xml, html, markdown):
        console.print(f"Report written to {path}")
    if history:
        (run_id,) = record_run(".", [result], None, {
            "command": "score", "judge_model": judge_model, "actual_file": actual_path,
            "duration_seconds": time.monotonic() - started, "config_file": source,
            "config": config.model_dump(mode="json")}, eval_set_files=[expected_path])
        console.print(f"Recorded run {run_id} in .agenteval/history.sqlite")
    # Freeing these one object at a time is the last 0.6 s of a 10,000-case run; the console
    # script ends the process without doing it.
    teardown.keep(expected, actual, result)
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
