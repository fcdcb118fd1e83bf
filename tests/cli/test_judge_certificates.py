"""`agenteval score` with judge certificates: each judged score shows the certificate that
applies (or "uncalibrated"), and `judge_certificates.require` makes an uncalibrated judge
advisory. The judge is a real HTTP server on 127.0.0.1 (`tests/fake_server.py`)."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.criteria import default_registry
from agenteval.criteria.judge.certificates import Certificate, judge_identity, prompt_fingerprint
from agenteval.schema import Rubric, RubricContent
from tests.fake_server import FakeServer, Step, reply
from tests.helpers import eval_set, inv


def _invalid() -> Step:
    return Step(200, {"model": "m", "usage": {"prompt_tokens": 5, "completion_tokens": 2}, "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": json.dumps({"verdict": "invalid", "rationale": "r"})}}]})


def _score(tmp_path: Path, server: FakeServer,
           certificates: dict[str, Any] | None) -> tuple[int, dict[str, Any], str]:
    expected = tmp_path / "e.evalset.json"
    cases = eval_set("s", {"c": [inv("capital of France?", "Paris")]})
    expected.write_text(cases.model_dump_json(exclude_none=True))
    model = f"openai-compat:m@{server.base_url}"
    criterion = {"threshold": 0.5, "judge_model_options": {"judge_model": model, "num_samples": 1}}
    config = tmp_path / "cfg.json"
    # response_match_score passes: with the judge advisory, it alone decides the case
    config.write_text(json.dumps({"criteria": {"final_response_match_v2": criterion,
                                               "response_match_score": 0.5},
                                  **({"judge_certificates": certificates} if certificates else {})}))
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(expected), "--config_file_path",
                                 str(config), "-o", str(out), "--no_cache", "--print_detailed_results"],
                           env={"COLUMNS": "200"})
    assert out.is_file(), r.output
    return r.exit_code, json.loads(out.read_text()), " ".join(r.output.split())


def test_an_uncalibrated_judge_is_shown_and_gates_unless_certificates_are_required(
        server: FakeServer, tmp_path: Path) -> None:
    server.steps = [_invalid()] * 4
    code, doc, out = _score(tmp_path, server, None)
    assert code == 1 and "final_response_match_v2 [uncalibrated]" in out
    (case,) = doc["eval_case_results"]
    assert case["judge_certificates"][0]["status"] == "uncalibrated"
    code, doc, out = _score(tmp_path, server, {"require": True})
    assert code == 0, out  # advisory: the judge's "invalid" does not fail the case
    assert "[uncalibrated, advisory]" in out
    (case,) = doc["eval_case_results"]
    assert case["overall_eval_metric_results"][0]["eval_status"] == 4  # informational
    assert any(r["reason"].startswith("advisory, not gating (uncalibrated") for r in case["reasons"])


def test_a_certificate_beside_the_config_applies_and_gates(server: FakeServer, tmp_path: Path) -> None:
    model = f"openai-compat:m@{server.base_url}"
    criterion = default_registry().configure("final_response_match_v2", {
        "threshold": 0.5, "judge_model_options": {"judge_model": model, "num_samples": 1}}).criterion
    cert = Certificate(
        metric="final_response_match_v2", judge_model=model, judge_identity=judge_identity(model),
        prompt_version="x", prompt_sha256=prompt_fingerprint("final_response_match_v2",
                                                             criterion.model_dump(mode="json")),
        labels=40, positives=20, negatives=20, agreement=0.9, kappa=0.8, coverage=0.85, accuracy=0.85,
        min_confidence=0.55, source="mine.json", source_sha256="0" * 64, created="now", num_samples=1)
    folder = tmp_path / ".agenteval" / "certificates"
    folder.mkdir(parents=True)
    (folder / "frm.json").write_text(json.dumps(cert.to_json()))
    server.steps = [_invalid()] * 2
    code, doc, out = _score(tmp_path, server, {"require": True, "min_kappa": 0.5})
    assert code == 1 and "final_response_match_v2 [certified κ 0.80]" in out
    assert "judge certified: κ 0.80, agreement 90% at coverage 85% (min_confidence 0.55), 40 labels" in out
    (case,) = doc["eval_case_results"]
    assert case["judge_certificates"][0]["certificate"] == "frm.json"
    # a floor above it: below floor, advisory
    code, _, out = _score(tmp_path, server, {"require": True, "min_kappa": 0.9})
    assert code == 0 and "[below floor κ 0.80, advisory]" in out


def test_a_bad_certificate_file_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # found in the working directory's .agenteval/certificates
    folder = tmp_path / ".agenteval" / "certificates"
    folder.mkdir(parents=True)
    (folder / "bad.json").write_text(json.dumps({"format": "agenteval-judge-certificate/1"}))
    expected = tmp_path / "e.evalset.json"
    expected.write_text(eval_set("s", {"c": [inv("q", "a")]}).model_dump_json(exclude_none=True))
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(expected)])
    assert r.exit_code == 2 and "bad.json: metric: field required" in r.output


def test_a_rubric_certificate_applies_only_to_cases_judged_on_its_rubrics(server: FakeServer,
                                                                         tmp_path: Path) -> None:
    """A certificate measured on one rubric does not certify a case whose eval set gives it
    another rubric: the config names none, the cases name theirs."""
    name = "rubric_based_final_response_quality_v1"
    model = f"openai-compat:m@{server.base_url}"
    options = {"judge_model": model, "num_samples": 1}
    config_entry = {"threshold": 0.5, "judge_model_options": options}
    criterion = default_registry().configure(name, config_entry).criterion
    cert = Certificate(
        metric=name, judge_model=model, judge_identity=judge_identity(model), prompt_version="x",
        prompt_sha256=prompt_fingerprint(name, criterion.model_dump(mode="json")), labels=40, positives=20,
        negatives=20, agreement=0.9, kappa=0.8, coverage=1.0, accuracy=0.9, min_confidence=None,
        source="mine.json", source_sha256="0" * 64, created="now", rubrics=("The response is polite.",),
        num_samples=1)
    folder = tmp_path / ".agenteval" / "certificates"
    folder.mkdir(parents=True)
    (folder / "polite.json").write_text(json.dumps(cert.to_json()))

    def answer(body: dict[str, Any]) -> Step:  # the first label of whatever is asked
        props = body["response_format"]["json_schema"]["schema"]["properties"]
        return Step(body=reply(json.dumps({k: (v.get("enum") or ["x"])[0] for k, v in props.items()})))

    server.respond = answer
    cases = eval_set("s", {"polite": [inv("hi", "Hello!")], "price": [inv("price?", "It is 5 USD.")]})
    for c, text in zip(cases.eval_cases, ("The response is polite.", "The response states the price."),
                       strict=True):
        c.rubrics = [Rubric(rubric_id="r", type="FINAL_RESPONSE_QUALITY",
                            rubric_content=RubricContent(text_property=text))]
    expected = tmp_path / "e.evalset.json"
    expected.write_text(cases.model_dump_json(exclude_none=True))
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"criteria": {name: config_entry},
                                  "judge_certificates": {"require": True}}))
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(expected), "--config_file_path",
                                 str(config), "-o", str(out), "--no_cache"], env={"COLUMNS": "200"})
    assert out.is_file(), r.output
    by = {c["eval_id"]: c for c in json.loads(out.read_text())["eval_case_results"]}
    polite, price = (by[k]["judge_certificates"][0] for k in ("polite", "price"))
    assert polite["status"] == "certified" and not polite["advisory"]
    assert polite["certificate"] == "polite.json"
    assert price["status"] == "uncalibrated" and price["advisory"], price
    assert "polite.json was measured on other rubrics than this case's" in price["text"]
    assert by["price"]["overall_eval_metric_results"][0]["eval_status"] == 4  # informational: not gating


def test_a_case_whose_only_criterion_is_advisory_is_not_evaluated_and_every_report_says_why(
        server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No gating verdict: not evaluated (never passed or failed on an uncalibrated judge's
    word), and each report names the advisory criterion; a negative verdict of it did not
    read as the reason the case failed (Markdown gave only that, JUnit and `runs show` "no
    gating criterion produced a verdict" alone)."""
    monkeypatch.chdir(tmp_path)
    expected = tmp_path / "e.evalset.json"
    expected.write_text(eval_set("s", {"c": [inv("capital of France?", "Paris")]})
                        .model_dump_json(exclude_none=True))
    model = f"openai-compat:m@{server.base_url}"
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"criteria": {"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": model, "num_samples": 1}}},
        "judge_certificates": {"require": True}}))
    server.steps = [_invalid()] * 2
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(expected), "--config_file_path",
                                 str(config), "--no_cache", "--history", "--markdown", "r.md",
                                 "--junit_xml", "r.xml", "--html", "r.html"], env={"COLUMNS": "300"})
    assert r.exit_code == 1, r.output  # not_evaluated: fail, the default
    why = ("not evaluated: no gating criterion produced a verdict: final_response_match_v2 is advisory, "
           "not gating (no certificate that judge_certificates.require accepts)")
    assert f"<pre>{why}\njudge [final_response_match_v2, invocation 0]: invalid" in \
        (tmp_path / "r.md").read_text()
    # JUnit's message goes on with the judge's answer, as Markdown's next line does.
    assert f'<error message="{why}: judge [final_response_match_v2, invocation 0]: invalid' in \
        (tmp_path / "r.xml").read_text()
    assert why in (tmp_path / "r.html").read_text()
    shown = CliRunner().invoke(cli, ["runs", "show", "latest"], env={"COLUMNS": "1000"})
    assert shown.exit_code == 0 and why in shown.output, shown.output
