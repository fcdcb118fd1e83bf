"""The bad-input corpus (`tests/bad_inputs/*.json`, format in its README): every input gets the
promised exit code and a message naming the file and the key, and nothing is left written."""

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli

CORPUS = Path(__file__).parent / "bad_inputs"
CASES = sorted(CORPUS.glob("*.json"))


def _write(root: Path, files: dict[str, Any]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content), encoding="utf-8")


def test_the_corpus_is_there() -> None:
    assert len(CASES) >= 1


@pytest.mark.parametrize("case_file", CASES, ids=[p.stem for p in CASES])
def test_bad_input(case_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = json.loads(case_file.read_text(encoding="utf-8"))
    _write(tmp_path, case.get("files", {}))
    before = {rel: (tmp_path / rel).read_bytes() for rel in case.get("unchanged", [])}
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, case["command"], env={"COLUMNS": "200"}, catch_exceptions=False)
    output = result.output
    assert result.exit_code == case["exit"], f"{case['about']}\n{output}"
    assert case["message"] in output, f"{case['about']}\n{output}"
    assert "Traceback" not in output
    for rel in case.get("not_written", []):
        assert not os.path.lexists(tmp_path / rel), f"{rel} was written"
    for rel, data in before.items():
        assert (tmp_path / rel).read_bytes() == data, f"{rel} was changed"
