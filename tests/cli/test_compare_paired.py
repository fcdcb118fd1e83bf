"""`agenteval compare` on repeated runs (the gate's exit codes, 80 columns, Markdown, JUnit) and
`agenteval runs flaky`, on hand-made result documents recorded in a store."""

import random
import xml.etree.ElementTree as ET
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from rich.cells import cell_len

from agenteval.cli.compare import compare
from agenteval.cli.history import COMMANDS
from agenteval.cli.main import cli
from agenteval.schema import EvalSetResult
from agenteval.store import RunStore, record_run
from agenteval.verdicts.paired import runs_of
from tests.reporting.junit_rules import violations
from tests.result_builders import case, result

APP = click.Group("agenteval", commands={**cli.commands, **{c.name or "": c for c in (*COMMANDS, compare)}})
LONG = "tool_trajectory_avg_score"
SHORT = "response_match_score"


def _run(*args: str | Path, columns: int = 300) -> Result:
    return CliRunner().invoke(APP, [str(a) for a in args], env={"COLUMNS": str(columns)})


def _doc(result_id: str, chances: list[float], seed: int, runs: int = 5,
         created: float = 1.0) -> EvalSetResult:
    """Cases c00.. with two criteria, each run passing with the case's chance (seeded)."""
    rng = random.Random(seed)
    cases = []
    for i, p in enumerate(chances):
        for j in range(runs):
            ok = rng.random() < p
            scores = {LONG: 1.0 if ok else 0.0, SHORT: 0.9 if ok else 0.3}
            cases.append(case(f"c{i:02d}", scores, run_index=j))
    return result(cases, result_id=result_id, created=created)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Baseline A, an A/A rerun, and a candidate B that fails the first 12 of 30 cases."""
    good = [0.95] * 30
    worse = [0.05] * 12 + [0.95] * 18
    docs = [_doc("base", good, 1, created=1.0), _doc("same", good, 2, created=2.0),
            _doc("worse", worse, 3, created=3.0)]
    record_run(tmp_path, docs)
    return tmp_path


def test_the_database_gives_the_same_runs_as_the_document(store: Path) -> None:
    doc = _doc("base", [0.95] * 30, 1)
    assert RunStore(store).case_runs("base") == runs_of(doc)


def test_gate_exit_codes(store: Path) -> None:
    r = _run("compare", "base", "worse", "--root", store)
    assert r.exit_code == 1, r.output
    assert r.output.startswith(f"REGRESSION (significant at alpha 0.05): overall, {SHORT}, {LONG}")
    assert _run("compare", "base", "worse", "--root", store, "--fail_on", "none").exit_code == 0
    r = _run("compare", "base", "same", "--root", store)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("NO SIGNIFICANT CHANGE")
    # The per-case gate fails on any case that lost a passing verdict, noise included.
    assert _run("compare", "base", "same", "--root", store, "--fail_on", "case_regression").exit_code == 1
    assert _run("compare", "base", "worse", "--root", store, "--junit", store).exit_code == 2  # a folder
    r = _run("compare", "latest", "worse", "--root", store)  # the same run under two names
    assert r.exit_code == 2 and "compares run 'worse' with itself" in r.output, r.output
    # --margin tolerates score drops in the per-case gate only: with another it was ignored
    for fail_on in ([], ["--fail_on", "regression"], ["--fail_on", "none"]):
        r = _run("compare", "base", "same", "--root", store, "--margin", "0.1", *fail_on)
        assert r.exit_code == 2 and "--margin applies only with --fail_on case_regression" in r.output
    assert _run("compare", "base", "same", "--root", store, "--margin", "0.1", "--fail_on",
                "case_regression").exit_code == 1


def test_console_fits_80_columns_and_names_never_break(store: Path) -> None:
    r = _run("compare", "base", "worse", "--root", store, "--fail_on", "case_regression", columns=80)
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert max(cell_len(line.rstrip()) for line in lines) <= 80
    assert lines[0].startswith("REGRESSION")
    # Criterion names never break: any line with the start of one holds it whole.
    for name in (LONG, SHORT):
        assert all(name in line for line in lines if name[:6] in line), name
    assert "REGRESSED" in r.output and "cases:" in r.output and "pass@5" in r.output
    # the per-case table (--fail_on case_regression) is there, at 80 columns too
    table = r.output[r.output.index("Comparison (per case, by margin)"):]
    assert "case: newly failed" in table and sum(LONG in line for line in table.splitlines()) >= 12


def test_markdown_and_junit(store: Path, tmp_path: Path) -> None:
    md, junit = tmp_path / "cmp.md", tmp_path / "cmp.xml"
    r = _run("compare", "base", "worse", "--root", store, "--markdown", md, "--junit", junit)
    assert r.exit_code == 1
    text = md.read_text(encoding="utf-8")
    assert text.startswith("## ❌ agenteval compare: REGRESSION")
    assert f"| {LONG} | pass |" in text and "| REGRESSED |" in text
    assert "| pass@5 A → B | pass^5 A → B |" in text and "| 1.00 → 0.00 | 1.00 → 0.00 |" in text
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    failed = [t.get("name") for t in suite.iter("testcase") if t.find("failure") is not None]
    assert failed == ["overall", SHORT, LONG]
    assert int(suite.get("failures", "0")) == 3 and int(suite.get("tests", "0")) == 3 + 30
    # The suite lacked `errors`, which the schema CI servers validate against requires.
    assert violations(junit.read_text(encoding="utf-8")) == []
    r = _run("compare", "base", "same", "--root", store, "--junit", junit, "--markdown", md)
    assert r.exit_code == 0
    assert ET.parse(junit).getroot().find("testsuite").get("failures") == "0"  # type: ignore[union-attr]
    assert md.read_text(encoding="utf-8").startswith("## ✅ agenteval compare")


def test_runs_flaky_lists_cases_that_flip(tmp_path: Path) -> None:
    runs = [result([case("steady", {SHORT: 0.9}), case("flip", {SHORT: 0.9 if k % 2 else 0.1}),
                    case("once", {SHORT: 0.1 if k == 3 else 0.9})], result_id=f"r{k}", created=float(k + 1))
            for k in range(4)]
    record_run(tmp_path, runs)
    r = _run("runs", "flaky", "--root", tmp_path)
    assert r.exit_code == 0, r.output
    assert "steady" not in r.output
    flip = next(line for line in r.output.splitlines() if "│ flip " in line)
    assert "2/4" in flip and "50%" in flip and "100%" in flip  # passes, pass rate, flip rate
    once = next(line for line in r.output.splitlines() if "once" in line)
    assert "3/4" in once and "33%" in once
    assert r.output.index("flip") < r.output.index("once")  # the most uncertain first
    assert "no flaky" in _run("runs", "flaky", "--root", tmp_path, "--limit", "1").output.lower()
    r = _run("runs", "flaky", "--root", tmp_path, "--eval_set", "nope")  # a typo is not "no flaky case"
    assert r.exit_code == 2 and "--eval_set: no stored run of eval set 'nope' (stored: " in r.output, r.output


def test_criteria_that_differ_between_the_runs_are_noted(store: Path, tmp_path: Path) -> None:
    """B's threshold lowered: the same scores passed more, "a significant improvement", without
    a word that the bar moved (and a lowered bar hides a regression as well)."""
    from agenteval.schema.run import RunSpec

    paths = []
    for name, threshold in (("a", 0.8), ("b", 0.0)):
        doc = _doc(name, [0.5] * 10, 1)
        doc.run = RunSpec(run_id=name, command="eval", config={"criteria": {SHORT: threshold, LONG: 1.0}})
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(doc.model_dump_json())
    r = _run("compare", *paths)
    said = " ".join(r.output.split())
    assert "note: the runs' criteria differ, so their passes are judged against different bars: " \
           f"{SHORT}: threshold 0.8 → 0" in said, r.output
    assert "criteria differ" not in _run("compare", "base", "worse", "--root", store).output
