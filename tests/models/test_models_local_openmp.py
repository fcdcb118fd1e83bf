"""The embedded engine's OpenMP threads wait with a bounded spin (`local._import_xllamacpp`).

Each check runs in a fresh interpreter: libgomp reads its settings once, when it is loaded, so
only the process's first import of xllamacpp can set them. What libgomp took is read back from
its own `omp_display_env` (verbose), not from the environment.
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import os
import subprocess
import sys

import pytest

from agenteval.models import local

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None or ctypes.util.find_library("gomp") is None,
    reason="needs xllamacpp and libgomp")

_PROBE = """
import ctypes, ctypes.util, os, sys
from agenteval.models import local
local._import_xllamacpp()
sys.stderr.flush()
ctypes.CDLL(ctypes.util.find_library("gomp")).omp_display_env(1)
print("left in environment:", os.environ.get("GOMP_SPINCOUNT"), os.environ.get("OMP_WAIT_POLICY"))
"""


def _probe(**env: str) -> tuple[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in local._OPENMP_SETTINGS}
    done = subprocess.run([sys.executable, "-c", _PROBE], env={**base, **env}, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout, done.stderr


def test_the_spin_is_bounded_and_the_environment_left_as_it_was() -> None:
    out, shown = _probe()
    assert "GOMP_SPINCOUNT = '1000'" in shown  # libgomp's default is 300000
    assert "left in environment: None None" in out


def test_a_users_own_wait_policy_wins() -> None:
    out, shown = _probe(OMP_WAIT_POLICY="PASSIVE")
    assert "GOMP_SPINCOUNT = '0'" in shown
    assert "left in environment: None PASSIVE" in out


def test_a_users_own_spin_count_wins() -> None:
    _, shown = _probe(GOMP_SPINCOUNT="5")
    assert "GOMP_SPINCOUNT = '5'" in shown
