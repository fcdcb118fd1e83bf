import xml.etree.ElementTree as ET
from pathlib import Path

from agenteval.reporting.junit import junit_xml
from agenteval.schema import EvalSetResult, MetricError
from tests.result_builders import case, judge, result


def _parse(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    return ET.fromstring(text.encode("utf-8"))


def test_suite_per_set_and_case_per_eval_id() -> None:
    a = result([case("ok", {"m": 1.0}, duration=1.25), case("bad", {"m": 0.2}, duration=0.5)])
    b = result([case("x", {"m": 0.9})], result_id="t_1", set_id="t")
    root = _parse(junit_xml([a, b]))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "0")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["s", "t"]
    assert suites[0].get("time") == "1.750" and suites[1].get("time") is None
    cases = suites[0].findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [("s", "ok"), ("s", "bad")]
    assert cases[0].find("failure") is None and cases[0].get("time") == "1.250"
    failure = cases[1].find("failure")
    assert failure is not None
    assert "m: score 0.2 < threshold 0.5" in (failure.get("message") or "")
    assert "m: score 0.2 < threshold 0.5" in (failure.text or "")


def test_failure_lists_errors_inference_and_negative_judge_rationales() -> None:
    records = [judge("rubric_q", 0.0, "misses the date", item="r1", verdict="no"),
               judge("rubric_q", 1.0, "states the total", item="r2", verdict="yes")]
    doc = result([
        case("judged", {"rubric_q": 0.5, "other": None}, judge_records=records,
             metric_errors=[MetricError(metric_name="other", message="custom metric raised KeyError")]),
        case("crashed", {}, error="agent exploded"),
    ])
    root = _parse(junit_xml([doc]))
    text = {c.get("name"): (c.find("failure").text or "") for c in root.iter("testcase")}  # type: ignore[union-attr]
    # A criterion that was not evaluated is one line, with its reason (not two).
    assert "other: not evaluated: custom metric raised KeyError" in text["judged"].splitlines()
    assert text["judged"].count("other:") == 1
    assert "judge [rubric_q, invocation 0, r1]: no — misses the date" in text["judged"]
    assert "states the total" not in text["judged"]  # positive verdicts are not failure reasons
    assert "inference failed: agent exploded" in text["crashed"]


def test_repeated_runs_are_one_testcase_that_says_so() -> None:
    doc = result([case("c", {"m": s}, run_index=i) for i, s in enumerate([1.0, 0.0, 0.0])])
    root = _parse(junit_xml([doc]))
    (tc,) = root.iter("testcase")
    failure = tc.find("failure")
    assert failure is not None and "over 3 runs" in (failure.get("message") or "")
    assert "passed 1/3 runs (gating: mean)" in (failure.text or "")
    out = tc.find("system-out")
    assert out is not None and "3 runs (gating: mean)" in (out.text or "") and "pass@k" in (out.text or "")


def test_a_not_evaluated_case_is_an_error_never_a_skip() -> None:
    # A skipped test is no failure to CI (pytest skips one and exits 0), while the run exits 1
    # for a case without a verdict: written as pytest writes a test that could not run, an error.
    doc = result([case("n", {"m": None}), case("p", {"m": 1.0})], ignore_not_evaluated=True)
    root = _parse(junit_xml([doc]))
    tc = root.find("testsuite/testcase")
    assert tc is not None and tc.find("skipped") is None and tc.find("failure") is None
    assert tc.find("error") is not None and tc.find("error").get("type") == "NotEvaluated"  # type: ignore[union-attr]
    assert (root.get("errors"), root.get("failures")) == ("1", "0")
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("errors"), suite.get("failures"), suite.get("skipped")) == ("1", "0", "0")


def test_a_not_evaluated_case_says_why() -> None:
    # It said only "no gating criterion produced a verdict": the criterion's error, which the
    # Markdown, HTML and console reports give, was left out.
    doc = result([case("n", {"m": None}, metric_errors=[MetricError(metric_name="m", message="boom")])],
                 ignore_not_evaluated=True)
    error = _parse(junit_xml([doc])).find("testsuite/testcase/error")
    assert error is not None
    assert error.get("message") == ("not evaluated: no gating criterion produced a verdict: "
                                    "m: not evaluated: boom")
    assert error.text == "m: not evaluated: boom"


def test_control_characters_and_markup_stay_valid_xml() -> None:
    error = MetricError(metric_name="m", message="bad \x00\x1b byte \ud800 <x/>")
    doc = result([case("c<&>\x01", {"m": None}, metric_errors=[error])])
    root = _parse(junit_xml([doc]))
    tc = root.find("testsuite/testcase")
    assert tc is not None and tc.get("name") == "c<&>\\u0001"
    assert "bad \\u0000\\u001b byte \\ud800 <x/>" in (tc.find("failure").text or "")  # type: ignore[union-attr]


def test_document_without_summary_is_summarised() -> None:
    doc = result([case("a", {"m": 0.1}), case("b", {"m": 0.9})])
    adk_doc = EvalSetResult.model_validate(doc.model_dump(exclude={"summary"}))
    assert not adk_doc.summary
    root = _parse(junit_xml([adk_doc]))
    assert (root.get("tests"), root.get("failures")) == ("2", "1")


def test_a_report_streamed_case_by_case_has_the_bytes_of_one_rendered_whole(tmp_path: Path) -> None:
    from agenteval.reporting.junit import JUnitStream
    from agenteval.verdicts.outcome import outcomes

    records = [judge("rubric_q", 0.0, "misses <the> date", item="r1", verdict="no")]
    doc = result([case("ok", {"m": 1.0}, duration=1.25),
                  *[case("rep", {"m": s}, run_index=i) for i, s in enumerate([1.0, 0.0])],
                  case("judged", {"rubric_q": 0.0}, judge_records=records),
                  case("crashed", {}, error="agent\x07exploded")])
    stream = JUnitStream(tmp_path / "j.xml")
    for outcome in outcomes(doc):
        stream.add(outcome)
    assert not (tmp_path / "j.xml").exists()
    stream.commit(doc)
    assert (tmp_path / "j.xml").read_text(encoding="utf-8") == junit_xml([doc])
    aborted = JUnitStream(tmp_path / "k.xml")
    aborted.add(outcomes(doc)[0])
    aborted.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.xml"]


def test_a_case_runs_warnings_go_to_its_system_out_passed_or_not() -> None:
    # A conversation the simulator's turn limit ended passed with nothing said in the CI's test tab.
    ok = case("sc", {"m": 1.0})
    ok.warnings = ["the conversation reached the user simulator's turn limit"]
    root = ET.fromstring(junit_xml([result([ok, case("other", {"m": 1.0})])]).split("\n", 1)[1])
    outs = {tc.get("name"): tc.findtext("system-out") for tc in root.iter("testcase")}
    assert outs == {"sc": "warning: the conversation reached the user simulator's turn limit", "other": None}


def test_every_shape_of_report_validates_as_ci_servers_read_junit() -> None:
    """The root carried `skipped` and a judged case's `testcase` a `properties` element, both
    outside the layout Jenkins' xUnit schema (and pytest's xunit2) allows: a validating CI step
    refused the whole report. Certificates now go to the case's `system-out`."""
    from agenteval.reporting.junit import JUnitStream
    from agenteval.schema import JudgeCertificateNote
    from agenteval.verdicts.outcome import outcomes
    from tests.reporting.junit_rules import violations

    judged = case("judged", {"safety_v1": 1.0}, duration=0.5)
    judged.judge_certificates = [JudgeCertificateNote(metric_name="safety_v1", status="uncalibrated",
                                                      text="uncalibrated: no certificate")]
    warned = case("warned", {"m": 1.0})
    warned.warnings = ["the simulator's turn limit ended the conversation"]
    runs = [case("rep", {"m": s}, run_index=i) for i, s in enumerate((1.0, 0.0, 1.0))]
    docs = [result([judged, warned, case("bad", {"m": 0.1}), case("err", {}, error="boom \x00\ud800"),
                    *runs]),
            result([case("n", {"m": None})], result_id="n_1", set_id="n", ignore_not_evaluated=True),
            result([], result_id="e_1", set_id="e")]
    assert violations(junit_xml(docs)) == []
    stream = JUnitStream()
    for c in outcomes(docs[0]):
        stream.add(c)
    assert violations(b"".join(stream.blocks(docs[0])).decode("utf-8")) == []
    tc = next(t for t in _parse(junit_xml(docs)).iter("testcase") if t.get("name") == "judged")
    out = tc.find("system-out")
    assert out is not None
    assert "judge certificate, safety_v1: judge uncalibrated: no certificate" in (out.text or "")
