"""What the history commands' tests share: the CLI's main group with every command loaded, a
runner at 300 columns, and the parity set scored (`tests/cli/conftest.py` makes fixtures of it)."""

from pathlib import Path

import click
from click.testing import CliRunner, Result

from agenteval.cli.history import COMMANDS
from agenteval.cli.main import cli
from tests.conftest import PARITY

# The main group's commands (those defined elsewhere are added as they are asked for).
_CTX = click.Context(cli)
APP = click.Group("agenteval", commands={n: c for n in cli.list_commands(_CTX)
                                         if (c := cli.get_command(_CTX, n)) is not None})
assert all(APP.commands[c.name or ""] is c for c in COMMANDS)
EXPECTED = PARITY / "expected.evalset.json"
CONFIG = PARITY / "config_IN_ORDER.json"


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(APP, [str(a) for a in args], env={"COLUMNS": "300"})


def score(out: Path, actual: Path = PARITY / "actual.evalset.json") -> Path:
    r = run("score", EXPECTED, "--actual", actual, "--config_file_path", CONFIG, "--output", out,
            "--no_cache")
    assert r.exit_code in (0, 1), r.output
    return out
