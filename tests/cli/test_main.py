"""The command group: commands defined in modules of their own are imported when asked for."""

from __future__ import annotations

import json
import subprocess
import sys

import click
from click.testing import CliRunner

from agenteval.cli.main import cli

ELSEWHERE = ["collect", "compare", "eval_set", "judge", "report", "runs", "trace", "web"]


def test_a_command_starts_without_the_other_commands_modules() -> None:
    # `eval` imported every command's module (history, web, collect, ...) before its own work:
    # 1.5% of its start-up to the first model call (bench/README.md, session 38).
    code = ("import sys, json; import agenteval.cli.main; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('agenteval.cli.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == ["agenteval.cli.main", "agenteval.cli.options", "agenteval.cli.pipe",
                                       "agenteval.cli.teardown"]


def test_every_command_is_listed_and_found_by_its_name() -> None:
    r = CliRunner().invoke(cli, ["--help"])
    assert r.exit_code == 0
    listed = [line.split()[0] for line in r.output.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == sorted([*ELSEWHERE, "eval", "migrate", "score"])
    for name in ELSEWHERE:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None and command.name == name
        assert CliRunner().invoke(cli, [name, "--help"]).exit_code == 0
    assert "No such command 'nope'" in CliRunner().invoke(cli, ["nope"]).output
