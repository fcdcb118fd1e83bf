"""Every report shows each judged score's calibration certificate (or that it has none)."""

import xml.etree.ElementTree as ET

from rich.console import Console

from agenteval.reporting import case_table, invocation_details
from agenteval.reporting.html import html_report
from agenteval.reporting.junit import junit_xml
from agenteval.reporting.markdown import markdown_summary
from agenteval.schema import JudgeCertificateNote
from tests.result_builders import case, result

CERTIFIED = JudgeCertificateNote(
    metric_name="safety_v1", status="certified", kappa=0.62, agreement=0.88, coverage=0.8, labels=32,
    text="certified: κ 0.62, agreement 88% at coverage 80%, 32 labels (safety_blind.json)")
UNCALIBRATED = JudgeCertificateNote(
    metric_name="final_response_match_v2", status="uncalibrated",
    text="uncalibrated: no certificate for judge openai:gpt-4o, this prompt and rubric")


def _doc():  # type: ignore[no-untyped-def]
    failing = case("c1", {"safety_v1": 1.0, "final_response_match_v2": 0.0})
    passing = case("c2", {"safety_v1": 1.0, "final_response_match_v2": 1.0})
    for c in (failing, passing):
        c.judge_certificates = [CERTIFIED, UNCALIBRATED]
    return result([failing, passing])


def _text(renderable) -> str:  # type: ignore[no-untyped-def]
    console = Console(width=200, record=True)
    console.print(renderable)
    return console.export_text()


def test_console_tags_each_judged_criterion_and_details_give_the_certificate() -> None:
    doc = _doc()
    table = _text(case_table(doc.eval_case_results))
    assert "safety_v1 [certified κ 0.62]" in table
    assert "final_response_match_v2 [uncalibrated]" in table
    details = _text(invocation_details(doc.eval_case_results[0]))
    assert "safety_v1: judge certified: κ 0.62, agreement 88% at coverage 80%" in details
    assert "final_response_match_v2: judge uncalibrated: no certificate for judge openai:gpt-4o" in details


def test_markdown_lists_the_judges_certificates_and_tags_failing_rows() -> None:
    md = markdown_summary([_doc()])
    assert "- judge certificate, safety_v1: judge certified: κ 0.62" in md
    assert "| final_response_match_v2 \\[uncalibrated\\] |" in md  # brackets escaped


def test_junit_gives_each_certificate_in_the_testcases_output() -> None:
    # In `system-out`, not a testcase `properties` element, which CI servers' JUnit schema refuses.
    root = ET.fromstring(junit_xml([_doc()]))
    out = next(tc for tc in root.iter("testcase") if tc.get("name") == "c2").find("system-out")
    lines = (out.text or "").splitlines() if out is not None else []
    assert ("judge certificate, safety_v1: judge certified: κ 0.62, agreement 88% at coverage 80%, "
            "32 labels (safety_blind.json)") in lines
    assert any(x.startswith("judge certificate, final_response_match_v2: judge uncalibrated") for x in lines)
    assert not list(root.iter("property")) or all(p.get("name") in ("eval_set_result_id", "gating")
                                                  for p in root.iter("property"))
    failure = next(tc for tc in root.iter("testcase") if tc.get("name") == "c1").find("failure")
    assert failure is not None and "final_response_match_v2: judge uncalibrated" in (failure.text or "")


def test_html_tags_each_judged_criterion() -> None:
    page = html_report([_doc()])
    assert "[certified κ 0.62]" in page and "[uncalibrated]" in page


def test_an_advisory_judge_is_shown_in_the_case_table_though_it_does_not_gate() -> None:
    advisory = UNCALIBRATED.model_copy(update={"advisory": True})
    c = case("c3", {"final_response_match_v2": 0.0})
    c.overall_eval_metric_results[0].eval_status = c.overall_eval_metric_results[0].eval_status.INFORMATIONAL
    c.judge_certificates = [advisory]
    table = _text(case_table([c]))
    assert "final_response_match_v2 [uncalibrated, advisory]" in table


def test_an_advisory_rows_reason_leaves_the_certificate_to_its_tag() -> None:
    """At 80 columns the certificate's text took four lines of every advisory row; the tag
    beside the name says it, and the details give it whole."""
    from agenteval.reporting.certificates import untagged

    advisory = UNCALIBRATED.model_copy(update={"advisory": True})
    why = "score 0 < threshold 0.5: the judge said invalid"
    reason = f"advisory, not gating ({advisory.text}): {why}"
    assert untagged(reason, advisory) == f"advisory, not gating: {why}"
    assert untagged(reason, UNCALIBRATED) == reason  # not advisory: nothing to leave out
    assert untagged("score 0 < threshold 0.5", advisory) == "score 0 < threshold 0.5"
    assert untagged(None, advisory) is None


def test_a_summary_over_cases_shows_the_weakest_certificate_note() -> None:
    """A rubric certificate applies only to the cases judged on its rubrics: where cases got
    different notes, the run's summary must not claim the certified one for all of them."""
    first = case("c1", {"safety_v1": 1.0})
    second = case("c2", {"safety_v1": 1.0})
    weaker = CERTIFIED.model_copy(update={"status": "uncalibrated", "text": "uncalibrated: other rubrics"})
    first.judge_certificates, second.judge_certificates = [CERTIFIED], [weaker]
    summary = markdown_summary([result([first, second])])
    assert "judge certificate, safety_v1: judge uncalibrated: other rubrics" in summary, summary
    assert "judge certified" not in summary


def test_the_streamed_markdown_summary_shows_the_weakest_note_too() -> None:
    # `eval` and `score` write the Markdown summary case by case: it kept the first case's note
    # (certified) where the in-memory summary, the same run, said uncalibrated.
    from agenteval.reporting.markdown import MarkdownStream
    from agenteval.verdicts.outcome import outcomes

    first = case("c1", {"safety_v1": 1.0})
    second = case("c2", {"safety_v1": 1.0})
    weaker = CERTIFIED.model_copy(update={"status": "uncalibrated", "text": "uncalibrated: other rubrics"})
    first.judge_certificates, second.judge_certificates = [CERTIFIED], [weaker]
    doc = result([first, second])
    stream = MarkdownStream()
    for outcome in outcomes(doc):
        stream.add(outcome)
    assert stream.text(doc) == markdown_summary([doc])
