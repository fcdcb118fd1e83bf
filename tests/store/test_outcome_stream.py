"""A result document's outcomes read one case at a time are the loaded document's outcomes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.reporting import render_report
from agenteval.schema import EvalSetResult, MetricError
from agenteval.store import load_result, save_result
from agenteval.store.outcome_stream import OutOfOrder, outcome_stream
from agenteval.verdicts.outcome import outcomes
from tests.result_builders import case, result


def _document() -> EvalSetResult:
    unreachable = [MetricError(metric_name="j", message="the judge is unreachable")]
    return result([case("b", {"m": s}, run_index=i) for i, s in enumerate([0.9, 0.1, 0.7])]
                  + [case("a", {"m": 0.2, "j": None}, metric_errors=unreachable),
                     case("c", {"m": 0.9}), case("d", {}, error="the agent crashed")], gating="all_runs")


def _same(path: Path) -> None:
    want = outcomes(load_result(path))
    head, got = outcome_stream(path)
    assert list(got) == want
    assert head.eval_case_results == [] and head.summary == []
    assert (head.eval_set_result_id, head.gating) == ("s_1", "all_runs")


def test_the_outcomes_of_a_written_document(tmp_path: Path) -> None:
    _same(save_result(tmp_path, _document()))


def test_a_document_without_summaries_is_summarised_as_when_loaded(tmp_path: Path) -> None:
    path = tmp_path / "adk.json"
    data = _document().model_dump(mode="json")
    del data["summary"]
    path.write_text(json.dumps(data))
    _same(path)


@pytest.mark.parametrize("change", ["results reordered", "runs apart"])
def test_case_results_out_of_the_summaries_order_are_told(tmp_path: Path, change: str) -> None:
    data = _document().model_dump(mode="json")
    runs = data["eval_case_results"]
    data["eval_case_results"] = runs[3:] + runs[:3] if change == "results reordered" else \
        [runs[0], runs[3], *runs[1:3], *runs[4:]]
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    with pytest.raises(OutOfOrder):
        list(outcome_stream(path)[1])


@pytest.mark.parametrize("fmt", ["junit", "markdown"])
@pytest.mark.parametrize("layout", ["written", "results reordered"])
def test_report_streams_the_same_bytes_or_reads_whole(tmp_path: Path, fmt: str, layout: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`report --format junit/markdown` reads one case at a time and writes what the loaded
    document's report is; a document it cannot read so is read whole, with the same report."""
    import agenteval.store

    loaded: list[str] = []
    load_run = agenteval.store.load_run
    monkeypatch.setattr(agenteval.store, "load_run", lambda *a: loaded.append("whole") or load_run(*a))
    doc = _document()
    path = save_result(tmp_path, doc)
    if layout == "results reordered":
        data = json.loads(path.read_text())
        data["eval_case_results"] = data["eval_case_results"][3:] + data["eval_case_results"][:3]
        path.write_text(json.dumps(data))
    out = tmp_path / f"report.{fmt}"
    r = CliRunner().invoke(cli, ["report", str(path), "--format", fmt, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text() == render_report(fmt, [load_result(path)])
    assert loaded == ([] if layout == "written" else ["whole"])
    r = CliRunner().invoke(cli, ["report", str(path), "--format", fmt])  # to standard output
    assert r.output == render_report(fmt, [load_result(path)])
    assert loaded == ([] if layout == "written" else ["whole"] * 2)
