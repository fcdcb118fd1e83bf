"""`agenteval score` in worker processes (`runner.sharded`) from the command line: the document
one process writes; one process wherever an output needs every case (reports, the history)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from agenteval.cli import commands
from agenteval.cli.main import cli
from agenteval.reporting.console import streamed_cases
from agenteval.runner import sharded
from agenteval.schema import EvalCaseResult, EvalStatus
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

    monkeypatch.setattr(sharded, "rescore_sharded", counted)  # (streamed imports it when it shards)
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


def test_the_table_of_failed_cases_is_rendered_while_workers_score(
        tmp_path: Path, sets: tuple[Path, Path, list[int]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `MAX_TABLE_CASES` failures, the report's table is rendered as soon as it is final,
    before the run ends, and printed at the end as one process prints it."""
    monkeypatch.setattr(commands, "MAX_TABLE_CASES", 3)
    told: list[tuple[int, bool]] = []
    made = commands.TableAhead.__call__

    def telling(self: commands.TableAhead, case_runs: int, not_passed: list[Any]) -> None:
        told.append((case_runs, bool(sets[2])))  # (whether a sharded run had ended)
        made(self, case_runs, not_passed)
    monkeypatch.setattr(commands.TableAhead, "__call__", telling)
    args = ["score", str(sets[0]), "--actual", str(sets[1]), "-o", str(tmp_path / "out.json")]
    two = CliRunner().invoke(cli, args, terminal_width=100)
    assert sets[2] == [2] and told == [(12, False)]
    one = CliRunner().invoke(cli, [*args, "--parallelism", "1"], terminal_width=100)
    assert told == [(12, False)]  # (one process: no table ahead)
    assert "12 case runs; showing 3 that did not pass" in two.output
    assert two.output.replace("Scored in 2 worker processes\n", "") == one.output


def _failed(n: int) -> list[EvalCaseResult]:
    return [EvalCaseResult(eval_set_file="s", eval_set_id="s", eval_id=f"case {i}",
                           final_eval_status=EvalStatus.FAILED, eval_metric_result_per_invocation=[],
                           overall_eval_metric_results=[], session_id="x")
            for i in range(n)]


def test_a_table_ahead_is_the_table_printed_at_the_width_it_was_made() -> None:
    console = Console(file=io.StringIO(), width=90, force_terminal=True, color_system="truecolor")
    ahead, cases = commands.TableAhead(console), _failed(3)
    ahead(60, cases)
    with console.capture() as printed:
        for renderable in streamed_cases(60, [], cases, 3):
            console.print(renderable)
    assert ahead.of(60, cases) == printed.get() and "\x1b[" in printed.get()
    assert ahead.of(61, cases) is None and ahead.of(60, _failed(3)) is None  # other counts or cases
    console.width = 120  # a terminal resized since: rendered again at the end
    assert ahead.of(60, cases) is None
