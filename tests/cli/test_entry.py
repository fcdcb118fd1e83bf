"""The console script's entry point: Ctrl-C while the command line is still being imported exits
130 without Python's traceback, as it does once a command runs."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agenteval

ROOT = Path(__file__).resolve().parents[2]

# A SIGINT sent the moment `module` is first looked for, i.e. inside the entry point's import.
HOOK = '''
import os, signal, sys
class _Stop:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, _Stop())
'''


def _script() -> str:
    """The console script as pip writes it, from pyproject.toml's entry point (less its `import re`:
    pip's, run before any code of agenteval's, and so out of its reach)."""
    # (read without tomllib: Python 3.10 has none)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'^agenteval = "([\w.]+):(\w+)"$', text.split("[project.scripts]")[1], re.M)
    assert found, "pyproject.toml names no agenteval script"
    module, func = found.groups()
    return (f"import sys\nfrom {module} import {func}\n"
            f"sys.argv[0] = 'agenteval'\nsys.exit({func}())\n")


def _start(code: str, *argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(agenteval.__file__).resolve().parents[1])}
    return subprocess.Popen([sys.executable, "-c", code, *argv], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            # (a SIGINT ignored by whoever started pytest would be inherited)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.parametrize("module", ["click", "agenteval.cli.options", "agenteval.cli.main"])
def test_ctrl_c_while_the_command_line_is_imported_exits_130_quietly(module: str) -> None:
    proc = _start(HOOK.format(module=module) + _script(), "--help")
    err = proc.communicate(timeout=120)[1]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert proc.returncode == 130 and "interrupted" in err


def test_ctrl_c_in_the_first_half_second_shows_no_traceback() -> None:
    for delay in (0.02, 0.05, 0.1, 0.2, 0.35, 0.5):
        proc = _start(_script(), "eval", "--help")
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=120)[1]
        # A traceback through no file of agenteval's: the signal came in the interpreter's start
        # (`site` and its .pth files: "Fatal Python error") or the script's own, before the entry
        # point's module was found (a loaded machine makes that wide); no code of agenteval's
        # had run to catch it.
        pkg = f"{os.sep}agenteval{os.sep}"
        if "Traceback" in err and pkg not in err:
            continue
        assert "Traceback" not in err, f"SIGINT after {delay} s:\n{err}"
        # 0: done before the signal; -SIGINT: the signal came before Python's handler was set.
        assert proc.returncode in (0, 130, -signal.SIGINT), (delay, proc.returncode, err)


def test_python_dash_m_agenteval_exits_with_the_commands_code() -> None:
    run = subprocess.run([sys.executable, "-m", "agenteval", "migrate", "/nonexistent.json"],
                         capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
