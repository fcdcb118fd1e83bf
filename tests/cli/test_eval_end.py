"""`agenteval eval` ends without the interpreter's teardown (`cli.teardown.end`: by `os._exit`),
but only after everything the interpreter's exit would run first: the agent's own `atexit`
handlers, the buffers of files it left open, the standard output to a pipe or file; its exit
code kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli import teardown
from agenteval.cli.main import cli
from tests.helpers import eval_set, inv

# An agent that leaves a file open with unflushed lines, and registers exit handlers: one that
# fails (the others still run, as at exit) and one that writes where the test can see it.
AGENT = '''
import atexit, os

LOG = open(os.environ["AGENT_LOG"], "w")  # never closed or flushed by the agent


def _say(what):
    print(what, flush=True)


def _fail():
    raise RuntimeError("an exit handler that fails")


atexit.register(_say, "agent atexit handler ran")
atexit.register(_fail)


def root_agent(text):
    LOG.write("ran " + text + "\\n")
    return "answer to " + text
'''

# The console script's entry point, telling on standard output when the process ends by
# `os._exit` (after the command's output and the exit handlers', once both are flushed).
MAIN = '''
import os, sys
from agenteval.cli.main import main

_exit = os._exit


def told_exit(code):
    os.write(1, b"ended by os._exit\\n")
    _exit(code)


os._exit = told_exit
main(sys.argv[1:])
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    agent = tmp_path / "ender"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("s", {f"c{i}": [inv(f"q{i}", f"answer to q{i}" if i else "wrong")] for i in range(30)})
    (agent / "s.evalset.json").write_text(s.model_dump_json(exclude_none=True))
    (agent / "test_config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.9}}))
    return agent


@pytest.mark.parametrize("extra", [[], ["--print_detailed_results", "--no_history"]])
def test_eval_ends_after_the_exit_hooks_and_flushes_without_the_teardown(project: Path, tmp_path: Path,
                                                                         extra: list[str]) -> None:
    log, out, doc = tmp_path / "agent.log", tmp_path / "stdout.txt", tmp_path / "r.json"
    env = {**os.environ, "AGENT_LOG": str(log)}
    with open(out, "w") as stdout:  # (a file, not a terminal: block-buffered)
        proc = subprocess.run([sys.executable, "-c", MAIN, "eval", str(project), "s", "-o", str(doc), *extra],
                              stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    text = out.read_text()
    assert proc.returncode == 1, proc.stderr  # case c0 fails: the exit code is kept
    assert "Eval Run Summary" in text and "c0" in text  # the report, whole, then the handler's line
    assert text.endswith("agent atexit handler ran\nended by os._exit\n")  # no teardown after it
    assert "an exit handler that fails" in proc.stderr  # told as at exit; the others still ran
    assert sorted(log.read_text().split("\n")[:-1]) == sorted(f"ran q{i}" for i in range(30))
    assert len(json.loads(doc.read_text())["eval_case_results"]) == 30


def test_in_process_evals_end_normally(project: Path) -> None:
    (project / "agent.py").write_text("def root_agent(text):\n    return 'answer to ' + text\n")
    r = CliRunner().invoke(cli, ["eval", str(project), "s", "--no_history"])
    assert r.exit_code == 1, r.output
    assert not teardown._ended  # (CliRunner's caller goes on: nothing ends its process)
