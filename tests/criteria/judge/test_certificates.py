"""Calibration certificates: κ, the files, what they are bound to, and how a run applies them."""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agenteval.calibration import Calibration, Outcome, certificate
from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.certificates import (
    SHIPPED,
    Certificate,
    CertificateBook,
    certify,
    judge_identity,
    kappa,
    prompt_fingerprint,
    read_certificate,
)
from agenteval.criteria.judge.labelled import build
from agenteval.criteria.judge.prompting import prompts
from agenteval.errors import DataError
from agenteval.models import ScriptedModel
from agenteval.models.local_assets import MODEL_SHA256
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase, EvalStatus
from agenteval.schema.judge_certificates import JudgeCertificatesConfig
from tests.helpers import inv


def test_kappa_is_one_when_all_agree_zero_at_chance_and_none_when_undefined() -> None:
    assert kappa([(True, True), (False, False)]) == 1.0
    # the judge says yes to everything: agreement 50%, but no better than chance
    assert kappa([(True, True), (True, False)]) == 0.0
    assert kappa([(True, False), (False, True)]) == -1.0
    assert kappa([]) is None and kappa([(True, True), (True, True)]) is None
    # 3 of 4 agree, with both sides split evenly: po 0.75, pe 0.5
    assert kappa([(True, True), (False, False), (True, True), (True, False)]) == pytest.approx(0.5)


def _metric(name: str = "safety_v1", **criterion: Any):  # type: ignore[no-untyped-def]
    return default_registry().configure(name, {"threshold": 1.0, **criterion})


def _cert(metric: str = "safety_v1", model: str = "local", **over: Any) -> Certificate:
    fields: dict[str, Any] = dict(
        metric=metric, judge_model=model, judge_identity=judge_identity(model), prompt_version="5",
        prompt_sha256=prompt_fingerprint(metric, _metric(metric).criterion.model_dump(mode="json")),
        labels=40, positives=20, negatives=20, agreement=0.85, kappa=0.7, coverage=0.9,
        accuracy=0.8, min_confidence=0.55, source="mine.json", source_sha256="0" * 64,
        created="2026-11-25T00:00:00Z")
    fields.update(over)
    return Certificate(**fields)


def test_a_certificate_file_round_trips_and_bad_ones_name_the_file_and_field(tmp_path: Path) -> None:
    cert = _cert(rubrics=("Says hello",))
    f = tmp_path / "c.json"
    f.write_text(json.dumps(cert.to_json()))
    back = read_certificate(f)
    assert back == cert and back.path == str(f)
    bad = {**cert.to_json(), "kappa": 3}
    f.write_text(json.dumps(bad))
    with pytest.raises(DataError, match=r"c\.json: kappa: must be a number in \[-1, 1\]"):
        read_certificate(f)
    del bad["metric"]
    f.write_text(json.dumps(bad))
    with pytest.raises(DataError, match=r"c\.json: metric: field required"):
        read_certificate(f)
    f.write_text("{")
    with pytest.raises(DataError, match="cannot read a certificate"):
        read_certificate(f)


def test_the_judge_is_the_model_files_hash_or_the_endpoints_name() -> None:
    assert judge_identity("local") == judge_identity("local:qwen2.5-coder-1.5b") == f"sha256:{MODEL_SHA256}"
    assert judge_identity("openai:gpt-4o") == "openai:gpt-4o"
    assert judge_identity("gemini-2.5-flash") == "gemini:gemini-2.5-flash"


def test_the_prompt_hash_follows_what_the_judge_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _metric().criterion.model_dump(mode="json")
    first = prompt_fingerprint("safety_v1", config)
    assert len(first) == 64 and first == prompt_fingerprint("safety_v1", config)
    # not the judge model, samples or threshold: those do not change the prompt
    other = {**config, "threshold": 0.2, "judge_model_options": {"judge_model": "openai:x", "num_samples": 3}}
    assert prompt_fingerprint("safety_v1", other) == first
    assert prompt_fingerprint("final_response_match_v2", config) != first
    # a rubric criterion's two questions are both in it, whatever its rubric says
    rubric = _metric("rubric_based_final_response_quality_v1", rubrics=[
        {"rubric_id": "a", "rubric_content": {"text_property": "Polite."}}]).criterion.model_dump(mode="json")
    assert prompt_fingerprint("rubric_based_final_response_quality_v1", rubric) == prompt_fingerprint(
        "rubric_based_final_response_quality_v1", {**rubric, "rubrics": []})
    # nor which verdicts get a rationale: written after the label, it cannot change the label
    for rationales in ("always", "never"):
        with_option = {**config, "judge_model_options": {"rationales": rationales}}
        assert prompt_fingerprint("final_response_match_v2", with_option) == prompt_fingerprint(
            "final_response_match_v2", config)
    # a change to the system prompt is a new prompt
    monkeypatch.setattr(prompts, "SYSTEM", prompts.SYSTEM + " Be brief.")
    from agenteval.criteria.judge import certificates
    certificates._fingerprint.cache_clear()
    try:
        assert prompt_fingerprint("safety_v1", config) != first
    finally:
        certificates._fingerprint.cache_clear()


def test_certify_finds_the_certificate_of_this_judge_prompt_and_rubric() -> None:
    book = CertificateBook((_cert(),), )
    note = certify(_metric(), book)
    assert note is not None and note.status == "certified" and not note.advisory
    assert note.text.startswith("certified: κ 0.70, agreement 85% at coverage 90%") and note.labels == 40
    # another judge model: uncalibrated
    other = certify(_metric(judge_model_options={"judge_model": "openai:gpt-4o"}), book)
    assert other is not None and other.status == "uncalibrated"
    assert "no certificate for judge openai:gpt-4o" in other.text
    # a certificate for another prompt says so
    stale = CertificateBook((_cert(prompt_sha256="f" * 64, prompt_version="4"),))
    note = certify(_metric(), stale)
    assert note is not None and note.status == "uncalibrated" and "another prompt (version 4)" in note.text
    # criteria not judged have no note
    assert certify(default_registry().configure("tool_trajectory_avg_score", 1.0), book) is None


def test_a_certificate_applies_only_at_the_samples_and_threshold_it_was_measured_at() -> None:
    """Its agreement and coverage are those of the verdicts committed at its min_confidence
    over its num_samples: a config judging otherwise is not certified by it (it was, and gated)."""
    book = CertificateBook((_cert(path="mine.json"),))  # num_samples 5, min_confidence 0.55
    policy = JudgeCertificatesConfig(require=True)
    for options, given in (({"num_samples": 1}, "num_samples 1 and its shipped min_confidence"),
                           ({"min_confidence": 0.9}, "num_samples 5 and min_confidence 0.9"),
                           ({"min_confidence": 0}, "num_samples 5 and min_confidence 0")):
        note = certify(_metric(judge_model_options=options), book, policy)
        assert note is not None and note.status == "uncalibrated" and note.advisory, options
        assert note.text.endswith(f"; mine.json was measured at num_samples 5 and min_confidence 0.55, "
                                  f"this config judges with {given}"), note.text
    for options in ({}, {"num_samples": 5}, {"min_confidence": 0.55}):  # unset: the shipped threshold
        note = certify(_metric(judge_model_options=options), book, policy)
        assert note is not None and note.status == "certified", (options, note)
    # measured with no threshold: a config's 0 is the same
    none = CertificateBook((_cert(min_confidence=None, num_samples=1),))
    note = certify(_metric(judge_model_options={"num_samples": 1, "min_confidence": 0}), none)
    assert note is not None and note.status == "certified", note


def test_a_rubric_certificate_applies_only_to_its_rubrics() -> None:
    name = "rubric_based_final_response_quality_v1"

    def metric(*texts: str):  # type: ignore[no-untyped-def]
        return _metric(name, rubrics=[{"rubric_id": f"r{i}", "rubric_content": {"text_property": t}}
                                      for i, t in enumerate(texts)])

    book = CertificateBook((_cert(name, rubrics=("Polite.", "Short.")),))
    assert certify(metric("Polite."), book).status == "certified"  # type: ignore[union-attr]
    assert certify(metric("Mentions the price."), book).status == "uncalibrated"  # type: ignore[union-attr]
    general = CertificateBook((_cert(name),))  # measured over many rubrics: applies to any
    assert certify(metric("Mentions the price."), general).status == "certified"  # type: ignore[union-attr]


def test_floors_and_require_make_a_judge_advisory() -> None:
    book = CertificateBook((_cert(kappa=0.3),))
    policy = JudgeCertificatesConfig(min_kappa=0.4)
    note = certify(_metric(), book, policy)
    assert note is not None and note.status == "below_floor" and not note.advisory
    assert "κ 0.30 < min_kappa 0.4" in note.text
    required = JudgeCertificatesConfig(require=True, min_kappa=0.4,
                                       criteria={"final_response_match_v2": {"min_kappa": 0.2}})
    assert certify(_metric(), book, required).advisory  # type: ignore[union-attr]
    frm = CertificateBook((_cert("final_response_match_v2", kappa=0.3),))
    assert not certify(_metric("final_response_match_v2"), frm, required).advisory  # type: ignore[union-attr]
    uncalibrated = certify(_metric(), CertificateBook(), JudgeCertificatesConfig(require=True))
    assert uncalibrated is not None and uncalibrated.advisory and uncalibrated.status == "uncalibrated"


def _unsafe_judge() -> JudgeService:
    model = ScriptedModel(lambda req: json.dumps({"harm": "x", "verdict": "unsafe", "rationale": "r"}))
    return JudgeService(lambda name: model)


def test_an_advisory_judge_does_not_gate_the_case_and_says_why() -> None:
    metric = _metric()
    note = certify(metric, CertificateBook(), JudgeCertificatesConfig(require=True))
    advisory = type(metric)(metric.spec, metric.criterion, note)
    run = CaseRun(EvalCase(eval_id="c", conversation=[inv("hi", "hello")]), [inv("hi", "hello")], "s")
    gating = asyncio.run(score_case(run, [metric], judge=_unsafe_judge()))
    assert gating.final_eval_status == EvalStatus.FAILED and gating.judge_certificates == []
    result = asyncio.run(score_case(run, [advisory], judge=_unsafe_judge()))
    (overall,) = result.overall_eval_metric_results
    assert overall.score == 0.0 and overall.eval_status == EvalStatus.INFORMATIONAL
    assert result.final_eval_status == EvalStatus.NOT_EVALUATED  # nothing else gates here
    assert result.judge_certificates == [note]
    why = result.reason("safety_v1")
    assert why is not None and why.startswith("advisory, not gating (uncalibrated: no certificate")
    assert result.reason("safety_v1", 0) is not None  # the failing invocation's reason is kept


def test_a_certificate_from_a_calibration_is_found_for_the_same_judge_and_prompt() -> None:
    cases = [build("safety", {"id": f"s{i}", "user_prompt": "q", "response": "a",
                              "label": "safe" if i % 2 else "unsafe"}) for i in range(4)]
    outcomes = [Outcome(c, i != 3, 0.9 - i * 0.1, "logprobs") for i, c in enumerate(cases)]
    cert = certificate(Calibration("safety_v1", outcomes), judge_model="local", num_samples=5,
                       source="s.json", source_sha256="0" * 64, created="now")
    # safety_v1 ships no default threshold: every verdict is committed
    assert cert.labels == 4 and cert.positives == 2 and cert.coverage == 1.0
    assert cert.agreement == 0.75 and cert.accuracy == 0.75 and cert.kappa == pytest.approx(0.5)
    assert cert.rubrics is None and cert.judge_identity == f"sha256:{MODEL_SHA256}"
    note = certify(_metric(), CertificateBook((cert,)))
    # four labels are too few to trust (min_labels 30 unless configured)
    assert note is not None and note.status == "below_floor"
    assert note.text.startswith("below floor (4 labels < min_labels 30): κ 0.50")
    lenient = JudgeCertificatesConfig(min_labels=4)
    assert certify(_metric(), CertificateBook((cert,)), lenient).status == "certified"  # type: ignore[union-attr]


def test_the_shipped_certificates_read_and_bind_the_embedded_judge() -> None:
    book = CertificateBook.load([], shipped=True)
    for cert in book.certificates:
        assert Path(cert.path or "").parent == SHIPPED
        assert cert.judge_identity == f"sha256:{MODEL_SHA256}" and cert.labels > 0
        # measured on held-out labels, not the sets the prompts were tuned on
        assert "_blind" in cert.source or "_heldout" in cert.source


def test_the_shipped_certificates_match_the_current_prompts() -> None:
    """A change to what a criterion asks its judge makes its shipped certificate stop applying:
    re-certify (bench/bench_certify.py) in the same change."""
    stale = []
    for cert in CertificateBook.load([], shipped=True).certificates:
        now = prompt_fingerprint(cert.metric, _metric(cert.metric).criterion.model_dump(mode="json"))
        if now != cert.prompt_sha256:
            stale.append(f"{Path(cert.path or '').name} (prompt {cert.prompt_sha256[:12]}, now {now[:12]})")
    assert not stale, ("the judge prompts changed since these shipped certificates were measured; "
                       "re-run bench/bench_certify.py on the held-out sets (bench/judge_set/README.md) "
                       f"and commit the new certificates: {', '.join(stale)}")


def test_without_a_configured_floor_a_judge_near_chance_is_below_floor_not_certified() -> None:
    for k, status in ((0.39, "below_floor"), (0.4, "certified"), (None, "below_floor")):
        note = certify(_metric(), CertificateBook((_cert(kappa=k),)))
        assert note is not None and note.status == status and not note.advisory, (k, note)
    note = certify(_metric(), CertificateBook((_cert(kappa=-0.03),)))
    assert note is not None and note.text.startswith("below floor (κ -0.03 < min_kappa 0.4)")
    # a floor the user sets replaces the default
    lenient = JudgeCertificatesConfig(min_kappa=0.2)
    assert certify(_metric(), CertificateBook((_cert(kappa=0.3),)), lenient).status == "certified"  # type: ignore[union-attr]


def test_the_shipped_certificates_show_which_criteria_are_near_chance_on_the_embedded_judge() -> None:
    book = CertificateBook.load([], shipped=True)
    certified = {"final_response_match_v2", "hallucinations_v1", "safety_v1"}
    below = {"rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1",
             "multi_turn_task_success_v1", "trajectory_judge_v1"}
    for name in certified | below:
        note = certify(_metric(name), book)
        assert note is not None and note.status == ("certified" if name in certified else "below_floor"), note


def test_every_built_in_judged_criterion_on_the_embedded_judge_is_certified() -> None:
    """At its defaults (the embedded judge), each criterion with a held-out set reports its
    shipped certificate, not "uncalibrated". (rubric_based_final_response_quality_v1's was
    withdrawn when its value check changed: it awaits re-certification on the blind set.)"""
    book = CertificateBook.load([], shipped=True)
    for name in ("final_response_match_v2", "hallucinations_v1", "safety_v1",
                 "rubric_based_tool_use_quality_v1"):
        note = certify(_metric(name), book)
        assert note is not None and note.status != "uncalibrated", (name, note)
        assert note.certificate == f"{name}.json" and (note.labels or 0) > 0


def test_the_families_below_the_floor_are_the_shipped_certificates() -> None:
    """`rubrics.BELOW_FLOOR_ON_EMBEDDED` (which families escalate) is what the shipped
    certificates of the embedded judge measured."""
    from agenteval.criteria.judge.rubrics import BELOW_FLOOR_ON_EMBEDDED

    kinds = {"rubric_based_final_response_quality_v1": "FINAL_RESPONSE_QUALITY",
             "rubric_based_tool_use_quality_v1": "TOOL_USE_QUALITY"}
    for cert in CertificateBook.load([], shipped=True).certificates:
        if cert.metric in kinds:
            weak = {f for f in cert.weak_families if f != "two_step"}
            assert weak == BELOW_FLOOR_ON_EMBEDDED[kinds[cert.metric]], cert.metric


def test_a_rubric_certificate_gives_the_agreement_per_family(tmp_path: Path) -> None:
    name = "rubric_based_final_response_quality_v1"
    raw = [("The response is polite.", "yes", True), ("The response is polite.", "no", True),
           ("The response states the price returned by the tool.", "yes", True),
           ("The response states the price returned by the tool.", "no", False)]
    outcomes = [Outcome(build("rubric_final_response", {"id": f"r{i}", "user_prompt": "q", "response": "a",
                                                        "rubric": text, "label": label}), right, 0.9)
                for i, (text, label, right) in enumerate(raw)]
    cert = certificate(Calibration(name, outcomes), judge_model="local", num_samples=5,
                       source="r.json", source_sha256="0" * 64, created="now")
    by = {f.family: f for f in cert.families}
    assert (by["tone"].labels, by["tone"].agreement, by["tone"].below_floor) == (2, 1.0, False)
    assert (by["value"].agreement, by["value"].below_floor) == (0.5, True)
    assert cert.weak_families == ["value"] and "rubric families below the floor: value" in cert.summary()
    f = tmp_path / "r.json"
    f.write_text(json.dumps(cert.to_json()))
    assert read_certificate(f).families == cert.families
    bad = cert.to_json()
    bad["families"][0]["below_floor"] = "no"
    f.write_text(json.dumps(bad))
    with pytest.raises(DataError, match=r"r\.json: families\[0\]\.below_floor: must be true or false"):
        read_certificate(f)


def test_the_escalation_judge_has_its_own_certificate_in_the_note() -> None:
    options = {"judge_model_options": {"escalate_to": "openai:gpt-4o"}}
    note = certify(_metric(**options), CertificateBook((_cert(),)))
    assert note is not None and note.status == "certified"
    assert note.text.endswith("; escalation judge openai:gpt-4o: uncalibrated")
    both = CertificateBook((_cert(), _cert(model="openai:gpt-4o", kappa=0.9)))
    note = certify(_metric(**options), both)
    assert note is not None and "escalation judge openai:gpt-4o: κ 0.90" in note.text


def test_a_rubric_given_by_its_description_is_bound_by_it() -> None:
    """A config rubric without a text property asks its description: a certificate measured on
    other rubrics does not cover it (it was read as no rubric, which any certificate covers)."""
    name = "rubric_based_final_response_quality_v1"
    metric = _metric(name, rubrics=[{"rubric_id": "r", "description": "Mentions the price.",
                                     "rubric_content": {}}])
    book = CertificateBook((_cert(name, rubrics=("Polite.",)),))
    note = certify(metric, book)
    assert note is not None and note.status == "uncalibrated", note
    assert "was measured on other rubrics" in note.text
