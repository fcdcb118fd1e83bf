"""`agenteval compare` of stored runs and result files: exit codes, what it reads, margins."""

from pathlib import Path

import pytest

from agenteval.store import RunStore, load_result
from tests.cli.history_support import run as _run


def test_compare_exit_codes(history: Path) -> None:
    md = history / "cmp.md"
    r = _run("compare", "previous", "latest", "--root", history, "--markdown", md)
    assert r.exit_code == 1, r.output
    assert r.output.startswith("REGRESSION (significant at alpha 0.05): overall")
    assert md.read_text(encoding="utf-8").startswith("## ❌ agenteval compare: REGRESSION")
    r = _run("compare", "latest", "previous", "--root", history)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("NO REGRESSION; significant improvement")
    assert _run("compare", "previous", "latest", "--root", history, "--fail_on", "none").exit_code == 0
    # the per-case gate: any case that went from PASSED to not passing
    r = _run("compare", "previous", "latest", "--root", history, "--fail_on", "case_regression")
    assert r.exit_code == 1 and "newly failed" in r.output and "regression(s)" in r.output
    r = _run("compare", history / "recorded.json", history / "recorded.json")
    assert r.exit_code == 2 and "with itself" in r.output, r.output
    # a stored run (runs from the database) against its own document: nothing changed
    r = _run("compare", history / "recorded.json", "latest", "--root", history)
    assert r.exit_code == 0 and "60 UNCHANGED" in r.output, r.output
    assert _run("compare", "latest", "nope", "--root", history).exit_code == 2
    assert _run("compare", "latest", "previous", "--root", history, "--margin", "-1").exit_code == 2
    assert _run("compare", "latest", "previous", "--root", history, "--alpha", "1").exit_code == 2


def test_compare_of_stored_runs_reads_case_summaries_a_case_at_a_time(
        history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.reporting.compare import compare, comparison_markdown
    from agenteval.store import history as documents
    from agenteval.store import lookup

    real, asked = lookup.load_runs, []
    whole = compare(RunStore(history).summary("previous"), RunStore(history).summary("latest"))

    def counted(ref: str, root: str | Path, *, summaries: bool = True) -> object:
        asked.append(summaries)
        return real(ref, root, summaries=summaries)

    monkeypatch.setattr(lookup, "load_runs", counted)
    monkeypatch.setattr(RunStore, "summary", lambda *a, **k: pytest.fail("a run's summaries were read whole"))
    monkeypatch.setattr(documents, "load_result", lambda *a, **k: pytest.fail("a run's document was read"))
    said = {}
    for gate in ("regression", "none", "case_regression"):
        md = history / f"{gate}.md"
        r = _run("compare", "previous", "latest", "--root", history, "--fail_on", gate, "--markdown", md)
        said[gate] = (r.exit_code, r.output, md.read_text(encoding="utf-8"))
    assert asked == [False] * 6
    # the per-case gate as the whole comparison gives it
    assert whole.has_regressions and said["case_regression"][0] == 1
    assert said["case_regression"][2].endswith("\n" + comparison_markdown(whole))
    assert "Comparison (per case, by margin)" in said["case_regression"][1]
    monkeypatch.undo()
    monkeypatch.chdir(history)
    monkeypatch.setattr(lookup, "load_runs", lambda ref, root, summaries=True: real(ref, root))
    for gate in ("regression", "none"):  # as when every run's summaries were read
        md = history / f"{gate}.md"
        r = _run("compare", "previous", "latest", "--root", history, "--fail_on", gate, "--markdown", md)
        assert said[gate] == (r.exit_code, r.output, md.read_text(encoding="utf-8")), gate
    assert said["regression"][0] == 1 and said["none"][0] == 0


def test_compare_of_result_files_reads_them_a_case_at_a_time(history: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.errors import DataError
    from agenteval.store import lookup

    read: list[Path] = []
    real = lookup.outcome_stream

    def counted(path: Path) -> object:
        read.append(path)
        return real(path)

    def said(*gate: str) -> tuple[int, str, str]:
        md = tmp_path / "c.md"
        r = _run("compare", history / "perfect.json", history / "recorded.json", "--markdown", md, *gate)
        return r.exit_code, r.output, md.read_text(encoding="utf-8")

    def unreadable(path: Path) -> None:
        raise DataError(path, "", "read whole")

    for gate in ([], ["--fail_on", "case_regression"]):
        monkeypatch.setattr(lookup, "outcome_stream", counted)
        streamed = said(*gate)
        monkeypatch.setattr(lookup, "outcome_stream", unreadable)
        assert streamed == said(*gate) and streamed[0] == 1, gate  # as when each file was loaded whole
    assert [p.name for p in read] == ["perfect.json", "recorded.json"] * 2


def test_compare_of_runs_with_no_case_in_common_is_bad_input(history: Path, tmp_path: Path) -> None:
    other = load_result(history / "recorded.json")
    for case in other.eval_case_results:
        case.eval_id = "other_" + case.eval_id
    (tmp_path / "other.json").write_text(other.model_dump_json())
    r = _run("compare", history / "perfect.json", tmp_path / "other.json")
    assert r.exit_code == 2 and r.output.startswith("error: ") and "no case in common" in r.output, r.output


def test_compare_margin_tolerates_small_drops(history: Path, tmp_path: Path) -> None:
    base = load_result(history / "recorded.json")
    worse = base.model_copy(deep=True)
    worse.eval_set_result_id = "worse"
    for s in worse.summary:  # lower every failing criterion's mean a little, staying failed
        for m in s.metrics:
            if m.mean is not None and m.eval_status.name == "FAILED":
                m.mean -= 0.01
    (tmp_path / "worse.json").write_text(worse.model_dump_json())
    gate = ("--fail_on", "case_regression")
    assert _run("compare", history / "recorded.json", tmp_path / "worse.json", *gate).exit_code == 1
    assert _run("compare", history / "recorded.json", tmp_path / "worse.json", *gate,
                "--margin", "0.05").exit_code == 0
    # no verdict changed: no significant regression
    assert _run("compare", history / "recorded.json", tmp_path / "worse.json").exit_code == 0
