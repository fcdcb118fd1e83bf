"""Command bodies: load inputs, call the runner, print reports, write results."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console

from agenteval.criteria import default_registry
from agenteval.datasets import default_config_for, load_eval_config, load_eval_set, migrate
from agenteval.datasets.files import write_model
from agenteval.reporting import case_table, invocation_details, summary
from agenteval.runner import score_recorded
from agenteval.schema import EvalConfig, EvalSetResult, EvalStatus


def resolve_config(config_file_path: str | None, eval_set_path: str) -> tuple[EvalConfig, str | None]:
    """The config to use: the flag's file, else test_config.json beside the set, else defaults."""
    if config_file_path:
        return load_eval_config(config_file_path), config_file_path
    config, found = default_config_for(eval_set_path)
    return config, str(found) if found else None


def report(console: Console, results: list[EvalSetResult], detailed: bool) -> int:
    """Prints the reports; returns the exit code (1 if any case did not pass)."""
    cases = [c for r in results for c in r.eval_case_results]
    if detailed:
        for case in cases:
            console.print(invocation_details(case))
    console.print(case_table(cases))
    console.print(summary(results))
    ok = bool(cases) and all(c.final_eval_status == EvalStatus.PASSED for c in cases)
    return 0 if ok else 1


def score_command(expected_path: str, actual_path: str, config_file_path: str | None,
                  output: str | None, detailed: bool) -> int:
    console = Console()
    config, source = resolve_config(config_file_path, expected_path)
    metrics = default_registry().resolve(config, source)
    expected = load_eval_set(expected_path)
    actual = load_eval_set(actual_path)
    console.print(f"Using criteria from {source or 'defaults'}: "
                  f"{', '.join(m.name for m in metrics if not m.spec.informational)}")
    result = asyncio.run(score_recorded(expected, actual, metrics, actual_source=actual_path,
                                        policy=config.not_evaluated))
    if output:
        write_model(output, result, exclude_none=False)
    code = report(console, [result], detailed)
    if output:
        console.print(f"Results written to {Path(output)}")
    return code


def migrate_command(old: str, new: str, initial_session_file: str | None) -> int:
    eval_set = migrate(old, new, initial_session_file)
    Console().print(f"Wrote {len(eval_set.eval_cases)} eval case(s) to {new}")
    return 0
