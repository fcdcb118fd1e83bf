"""Command bodies: load inputs, call the runner, print reports, write results."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from rich.console import Console

from agenteval.criteria import ConfiguredMetric, default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.datasets import default_config_for, load_eval_config, load_eval_set, migrate
from agenteval.datasets.files import write_model
from agenteval.models import resolve_model
from agenteval.models.base import LLM
from agenteval.reporting import case_table, invocation_details, repeat_table, summary
from agenteval.runner import all_passed, score_recorded
from agenteval.schema import EvalConfig, EvalSetResult, LlmAsAJudgeCriterion
from agenteval.store import JudgeCacheDB, judge_cache_path


def with_judge_model(metrics: list[ConfiguredMetric], judge_model: str | None) -> list[ConfiguredMetric]:
    """Points every LLM-judged criterion at `judge_model`."""
    if not judge_model:
        return metrics
    out = []
    for m in metrics:
        c = m.criterion
        if isinstance(c, LlmAsAJudgeCriterion):
            options = c.judge_model_options.model_copy(update={"judge_model": judge_model})
            c = c.model_copy(update={"judge_model_options": options})
        out.append(ConfiguredMetric(m.spec, c))
    return out


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
    if any(s.runs > 1 for r in results for s in r.summary):
        console.print(repeat_table(results))
    console.print(summary(results))
    return 0 if all_passed(results) else 1


def judge_service(store_root: str | Path, no_cache: bool) -> JudgeService:
    """The judge service for a run: models resolved from this process's environment, verdicts
    cached under the store root unless `no_cache`."""
    env = dict(os.environ)

    def resolve(name: str) -> LLM:
        return resolve_model(name, env)

    return JudgeService(resolve, None if no_cache else JudgeCacheDB(judge_cache_path(store_root)))


def check_judges(metrics: list[ConfiguredMetric], judge: JudgeService) -> None:
    """Resolves every judge model up front, so a bad name or a missing key fails before any work."""
    for m in metrics:
        if isinstance(m.criterion, LlmAsAJudgeCriterion):
            judge.resolve(m.criterion.judge_model_options.judge_model)


def score_command(expected_path: str, actual_path: str, config_file_path: str | None,
                  output: str | None, detailed: bool, judge_model: str | None = None,
                  no_cache: bool = False) -> int:
    console = Console()
    config, source = resolve_config(config_file_path, expected_path)
    metrics = with_judge_model(default_registry().resolve(config, source), judge_model)
    expected = load_eval_set(expected_path)
    actual = load_eval_set(actual_path)
    judge = judge_service(".", no_cache)
    check_judges(metrics, judge)
    console.print(f"Using criteria from {source or 'defaults'}: "
                  f"{', '.join(m.name for m in metrics if not m.spec.informational)}")
    result = asyncio.run(score_recorded(expected, actual, metrics, actual_source=actual_path,
                                        policy=config.not_evaluated, judge=judge))
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
