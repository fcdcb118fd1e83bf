"""`agenteval score` in worker processes (`runner.sharded`) from the command line: the document
one process writes; one process wherever an output needs every case (reports, the history)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.runner import sharded, streamed
from tests.helpers import call, eval_set, inv

_VOLATILE = ("eval_set_result_id", "eval_set_result_name", "creation_timestamp", "run")


@pytest.fixture
def sets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[int]]:
    """A small indented pair of sets, counted as large on two CPUs; the worker counts of
    the runs scored in workers."""
    expected = eval_set("s", {f"c{i}": [inv(f"q{i}", f"answer {i}", [call("t", x=i)])] for i in range(12)})
    actual = eval_set("s", {f"c{i}": [inv(f"q{i}", f"answer {i % 5}", [call("t", x=i % 3)])]
                            for i in range(12)})
    paths = tmp_path / "e.evalset.json", tmp_path / "a.evalset.json"
    for path, es in zip(paths, (expected, actual), strict=True):
        path.write_text(es.model_dump_json(indent=2))
    monkeypatch.setattr(sharded, "SHARD_MIN_BYTES", 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    used: list[int] = []
    run = sharded.rescore_sharded

    async def counted(*args: Any, **kwargs: Any) -> Any:
        done = await run(*args, **kwargs)  # raises ShardsRefused where it must not shard
        used.append(args[-1])
        return done

    monkeypatch.setattr(streamed, "rescore_sharded", counted)
    return paths[0], paths[1], used


def _score(sets: tuple[Path, Path, list[int]], out: Path, *extra: str) -> dict[str, Any]:
    r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(sets[1]), "-o", str(out), *extra])
    assert r.exit_code == 1, r.output
    return {k: v for k, v in json.loads(out.read_text()).items() if k not in _VOLATILE}


def test_workers_write_the_document_of_one_process(tmp_path: Path,
                                                   sets: tuple[Path, Path, list[int]]) -> None:
    two = _score(sets, tmp_path / "two.json")
    assert sets[2] == [2]
    one = _score(sets, tmp_path / "one.json", "--parallelism", "1")
    assert sets[2] == [2] and one == two


def test_a_report_that_needs_every_case_keeps_one_process(tmp_path: Path,
                                                          sets: tuple[Path, Path, list[int]]) -> None:
    _score(sets, tmp_path / "out.json", "--junit_xml", str(tmp_path / "junit.xml"))
    assert sets[2] == [] and (tmp_path / "junit.xml").is_file()


def test_the_console_says_how_many_processes_scored(tmp_path: Path,
                                                    sets: tuple[Path, Path, list[int]]) -> None:
    args = ["score", str(sets[0]), "--actual", str(sets[1]), "-o", str(tmp_path / "out.json")]
    assert "Scored in 2 worker processes" in CliRunner().invoke(cli, args).output
    assert "worker processes" not in CliRunner().invoke(cli, [*args, "--parallelism", "1"]).output
