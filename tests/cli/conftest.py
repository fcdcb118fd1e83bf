"""Fixtures of the history commands' tests: the parity set scored once a module, and a store
holding both runs."""

import shutil
from pathlib import Path

import pytest

from agenteval.store import load_result, record_run
from tests.cli.history_support import EXPECTED, score


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The parity set scored twice with `agenteval score`: `perfect.json` (actual = expected,
    all pass) and `recorded.json` (the parity actual run, some failing)."""
    out = tmp_path_factory.mktemp("scored")
    score(out / "perfect.json", EXPECTED)
    score(out / "recorded.json")
    return out


@pytest.fixture
def history(tmp_path: Path, scored: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store at tmp_path with both scored runs recorded, `perfect` first, `recorded` latest."""
    monkeypatch.chdir(tmp_path)
    for name in ("perfect.json", "recorded.json"):
        shutil.copy(scored / name, tmp_path / name)
    perfect, recorded = load_result(tmp_path / "perfect.json"), load_result(tmp_path / "recorded.json")
    perfect.creation_timestamp, recorded.creation_timestamp = 1000.0, 2000.0
    record_run(tmp_path, [perfect], meta={"agent": "a1", "command": "score"}, eval_set_files=[EXPECTED])
    record_run(tmp_path, [recorded], meta={"agent": "a1", "command": "score"})
    return tmp_path
