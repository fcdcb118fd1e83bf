"""Shared CLI options (ADK's snake_case spellings and kebab-case aliases) and error handling."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

config_file_path = click.option(
    "--config_file_path", "--config-file-path", "config_file_path",
    type=click.Path(dir_okay=False),
    help="Eval config (criteria). Default: test_config.json beside the eval set, else "
    "tool_trajectory_avg_score 1.0 and response_match_score 0.8.",
)
output = click.option(
    "--output", "-o", type=click.Path(dir_okay=False),
    help="Write the result document (ADK EvalSetResult layout) to this file.",
)
print_detailed_results = click.option(
    "--print_detailed_results", "--print-detailed-results", is_flag=True,
    help="Print per-invocation details: prompts, responses, tool calls and scores.",
)

no_cache = click.option(
    "--no_cache", "--no-cache", is_flag=True,
    help="Ask the judge again instead of reusing cached verdicts (.agenteval/judge_cache.sqlite).",
)
judge_model = click.option(
    "--judge_model", "--judge-model",
    help="Judge model for every LLM-judged criterion (e.g. local, openai:gpt-4o-mini, "
    "openai-compat:M@http://127.0.0.1:8080/v1).",
)


def guard(fn: Callable[..., int], *args: Any) -> int:
    """Runs a command; bad input prints one line naming file and key and returns 2."""
    from agenteval.errors import AgentEvalError

    try:
        return fn(*args)
    except AgentEvalError as e:
        click.echo(f"error: {e}", err=True)
        return 2
