"""Reports read the reasons stored in the result document; they never recompute them. A document
without reasons (an older agenteval's, or ADK's) still renders, described by its scores."""

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from agenteval.criteria import resolve_metrics
from agenteval.datasets.files import write_model
from agenteval.reporting.console import case_table, invocation_details
from agenteval.reporting.html import html_report
from agenteval.reporting.junit import junit_xml
from agenteval.reporting.markdown import markdown_summary
from agenteval.reporting.outcome import problems
from agenteval.runner import score_recorded
from agenteval.schema import EvalConfig, EvalSetResult, MetricReason
from agenteval.verdicts import outcomes
from tests.helpers import call, eval_set, inv
from tests.result_builders import case, result

WHY = "the agent asked the oracle instead of the weather tool"
WHY_0 = "invocation zero went to the oracle"


def _render(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def _explained() -> EvalSetResult:
    """A failing case whose stored reasons say something no report could compute."""
    run = case("c", {"tool_trajectory_avg_score": 0.0}, calls=[call("oracle")],
               expected_calls=[call("get_weather", city="Paris")])
    run.reasons = [MetricReason(metric_name="tool_trajectory_avg_score", reason=WHY),
                   MetricReason(metric_name="tool_trajectory_avg_score", invocation_index=0,
                                reason=WHY_0)]
    return result([run])


def test_the_reason_is_stored_in_the_written_document_and_read_back(tmp_path: Path) -> None:
    expected = eval_set("s", {"c": [inv("weather?", "sunny", [call("get_weather", city="Paris")])]})
    actual = eval_set("s", {"c": [inv("weather?", "sunny", [call("get_weather", city="paris")])]})
    metrics = resolve_metrics(EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}),
                              include_informational=False)
    doc = asyncio.run(score_recorded(expected, actual, metrics))
    path = tmp_path / "result.json"
    write_model(path, doc, exclude_none=False)
    again = EvalSetResult.model_validate_json(path.read_bytes())
    (run,) = again.eval_case_results
    want = ('EXACT: call 1: expected get_weather(city="Paris"), got get_weather(city="paris"): '
            "argument city differs")
    assert run.reason("tool_trajectory_avg_score", 0) == want
    assert run.reason("tool_trajectory_avg_score") == f"mean 0 < threshold 1: {want}"
    (summary,) = again.summary[0].metrics
    assert summary.reason == f"mean 0 < threshold 1: {want}"
    # ADK's reader ignores the extension: its metric results stay exactly in its layout.
    adk = pytest.importorskip("google.adk.evaluation.eval_result")
    read = adk.EvalSetResult.model_validate_json(path.read_text())
    assert read.eval_case_results[0].overall_eval_metric_results[0].score == 0.0


def test_every_report_shows_the_stored_reason_instead_of_recomputing_it() -> None:
    doc = _explained()
    recomputed = "threshold 0.5"  # how a document without reasons is described (escaped or not)
    (outcome,) = outcomes(doc)
    lines = problems(outcome)
    assert f"tool_trajectory_avg_score: {WHY}" in lines and not any(recomputed in x for x in lines)
    junit = junit_xml([doc])
    assert WHY in junit and recomputed not in junit
    md = markdown_summary([doc])
    assert WHY in md and recomputed not in md
    page = html_report([doc])
    assert WHY in page and WHY_0 in page and recomputed not in page
    (run,) = doc.eval_case_results
    assert WHY in _render(case_table([run]))
    assert WHY_0 in _render(invocation_details(run))


def test_a_document_without_reasons_still_renders_from_its_scores() -> None:
    doc = result([case("c", {"m": 0.2})])  # as written before reasons were recorded
    assert doc.eval_case_results[0].reasons == [] and doc.summary[0].metrics[0].reason is None
    assert "m: score 0.2 &lt; threshold 0.5" in junit_xml([doc])
    assert "score 0.2 &lt; threshold 0.5" in html_report([doc])
    assert "score 0.2 &lt; threshold 0.5" in markdown_summary([doc])


def test_over_repeated_runs_the_reason_gives_the_rule_and_the_failing_run() -> None:
    runs = [case("c", {"m": s}, run_index=i) for i, s in enumerate([1.0, 0.0])]
    for run, why in zip(runs, ["all good", "run one went wrong"], strict=True):
        run.reasons = [MetricReason(metric_name="m", reason=why)]
    (summary,) = result(runs).summary[0].metrics
    assert summary.reason == ("mean 0.5 (95% CI [-5.853, 6.853]) ≥ threshold 0.5; passed 1/2 runs "
                              "(gating: mean); run 1: run one went wrong")
    (summary,) = result(runs, gating="all_runs").summary[0].metrics
    assert summary.reason == ("passed 1/2 runs (gating: all_runs, threshold 0.5); "
                              "run 1: run one went wrong")


def test_the_history_gives_a_not_evaluated_criterions_reason(tmp_path: Path) -> None:
    from agenteval.reporting.outcome import summary_problems
    from agenteval.schema import MetricError
    from agenteval.store import RunStore, save_result

    doc = result([case("n", {"m": None, "t": 0.2}, metric_errors=[
        MetricError(metric_name="m", message="the criterion produced no score")])])
    # The history database's summary holds no runs, so no metric errors: it keeps the reason.
    store = RunStore(tmp_path)
    store.record(doc, save_result(tmp_path, doc))
    (outcome,) = outcomes(store.summary("latest"))
    assert summary_problems(outcome) == [
        "m: not evaluated: the criterion produced no score", "t: score 0.2 < threshold 0.5"]
    assert summary_problems(outcome) == problems(outcomes(doc)[0])


def test_every_report_says_why_a_case_was_not_evaluated_in_one_wording() -> None:
    # no gating criterion with a verdict: Markdown said "failed" with an empty reason, the HTML
    # nothing, `runs show` "inference failed or no gating criterion"
    from agenteval.reporting.outcome import NO_GATING_VERDICT, NOT_GATED, summary_why

    doc = result([case("ungated", {}), case("ok", {"m": 1.0})])
    (outcome, _) = outcomes(doc)
    assert problems(outcome) == summary_why(outcome) == [NOT_GATED]
    md = markdown_summary([doc])
    assert "| s / **ungated** | - | - | - | not evaluated |" in md and f"<pre>{NOT_GATED}</pre>" in md
    assert f'<error message="not evaluated: {NO_GATING_VERDICT}" type="NotEvaluated" />' in junit_xml([doc])
    assert NOT_GATED in html_report([doc])
