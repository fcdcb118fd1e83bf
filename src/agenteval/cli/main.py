"""The `agenteval` command line: a thin front end over the runner and the result document.

Start-up stays fast: commands import the package's heavy parts only when they run.
Exit codes: 0 every case passed, 1 a case failed, 2 bad input.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from agenteval.cli import options as opt


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agenteval")
def cli() -> None:
    """Evaluate AI agents: final responses and tool trajectories against eval sets."""


@cli.command()
@click.argument("expected_evalset", type=click.Path(dir_okay=False))
@click.option("--actual", "actual_evalset", required=True, type=click.Path(dir_okay=False),
              help="Eval set holding what the agent did, with the same eval ids.")
@opt.config_file_path
@opt.output
@opt.print_detailed_results
def score(expected_evalset: str, actual_evalset: str, config_file_path: str | None,
          output: str | None, print_detailed_results: bool) -> None:
    """Score a recorded run (ACTUAL) against EXPECTED_EVALSET without running any agent."""
    from agenteval.cli.commands import score_command

    sys.exit(opt.guard(score_command, expected_evalset, actual_evalset, config_file_path,
                       output, print_detailed_results))


@cli.command()
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--initial_session_file", "--initial-session-file", type=click.Path(dir_okay=False),
              help="Session file whose app, user and state become the case's session_input.")
def migrate(old: str, new: str, initial_session_file: str | None) -> None:
    """Convert a legacy *.test.json (or old eval-set list) file OLD into an eval set NEW."""
    from agenteval.cli.commands import migrate_command

    sys.exit(opt.guard(migrate_command, old, new, initial_session_file))


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point."""
    return cli.main(args=argv, prog_name="agenteval")
