"""Labelled conversations (multi-turn, trajectory and simulated-user kinds): what they convert to,
their certification on a scripted judge, and the shipped certificates of those criteria."""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agenteval.calibration import calibrate, certificate
from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.certificates import CertificateBook, certify, prompt_fingerprint
from agenteval.criteria.judge.labelled import load_labelled
from agenteval.errors import DataError
from agenteval.models import ModelRequest, ScriptedModel
from agenteval.models.local_assets import MODEL_SHA256
from agenteval.schema.judge_certificates import DEFAULT_MIN_LABELS, JudgeCertificatesConfig

BENCH_SET = Path(__file__).resolve().parents[3] / "bench" / "judge_set"
CONVERSATION_METRICS = ("multi_turn_task_success_v1", "multi_turn_trajectory_quality_v1",
                        "multi_turn_tool_use_quality_v1", "rubric_based_multi_turn_trajectory_quality_v1",
                        "trajectory_judge_v1", "per_turn_user_simulator_quality_v1")
HELD_OUT = {"multi_turn_heldout.json": ("multi_turn_task_success_v1", "multi_turn_trajectory_quality_v1",
                                        "multi_turn_tool_use_quality_v1"),
            "rubric_multi_turn_heldout.json": ("rubric_based_multi_turn_trajectory_quality_v1",),
            "trajectory_heldout.json": ("trajectory_judge_v1",),
            "simulated_user_heldout.json": ("per_turn_user_simulator_quality_v1",)}

TURNS = [{"user": "Is order 12 shipped?", "tool_calls": [{"name": "get_order", "args": {"id": "12"},
                                                          "response": {"status": "shipped"}}],
          "response": "Yes, order 12 has shipped."},
         {"user": "Email me the tracking link.", "response": "Done."}]


def _write(tmp_path: Path, cases: list[dict[str, Any]]) -> Path:
    f = tmp_path / "mine.json"
    f.write_text(json.dumps(cases))
    return f


def _judge(marker: str = "BROKEN") -> tuple[JudgeService, ScriptedModel]:
    """A judge answering the negative label when `marker` is in the question, else the positive."""
    def reply(request: ModelRequest) -> str:
        props = (request.json_schema or {}).get("properties", {})
        asked = request.messages[-1].content
        out: dict[str, Any] = {}
        for key, spec in props.items():
            labels = spec.get("enum")
            out[key] = (labels[1] if marker in asked else labels[0]) if labels else "x"
        return json.dumps(out)

    model = ScriptedModel(reply)
    return JudgeService(lambda _: model), model


def test_a_multi_turn_conversation_stands_for_one_case_per_labelled_question(tmp_path: Path) -> None:
    f = _write(tmp_path, [{"id": "c1", "criterion": "multi_turn", "instructions": "Be brief.", "turns": TURNS,
                           "labels": {"task_success": "yes", "tool_use_quality": "no"}}])
    cases = load_labelled(f)
    assert [(c.id, c.metric, c.label) for c in cases] == [
        ("c1/task_success", "multi_turn_task_success_v1", "yes"),
        ("c1/tool_use_quality", "multi_turn_tool_use_quality_v1", "no")]
    actual = cases[0].actual
    assert len(actual) == 2 and actual[1].final_response is not None
    assert [c.name for c in actual[0].intermediate_data.tool_uses] == ["get_order"]  # type: ignore[union-attr]
    assert actual[0].app_details is not None and actual[1].app_details is None  # instructions once


def test_the_other_conversation_kinds_convert(tmp_path: Path) -> None:
    f = _write(tmp_path, [
        {"id": "r", "criterion": "rubric_multi_turn_trajectory", "turns": TURNS,
         "rubric": "The agent looks up the order first.", "label": "yes"},
        {"id": "t", "criterion": "trajectory", "user_prompt": "Is order 12 shipped?",
         "tool_calls": TURNS[0]["tool_calls"], "response": "Yes.", "label": "accomplished"},
        {"id": "s", "criterion": "simulated_user", "plan": "Ask if order 12 shipped, then stop.",
         "persona": "EXPERT", "turns": TURNS, "label": "valid"}])
    rubric, trajectory, simulated = load_labelled(f)
    assert rubric.metric == "rubric_based_multi_turn_trajectory_quality_v1" and rubric.rubric is not None
    assert trajectory.metric == "trajectory_judge_v1" and trajectory.positive
    scenario = simulated.case.conversation_scenario
    assert simulated.metric == "per_turn_user_simulator_quality_v1" and simulated.case.conversation is None
    assert scenario is not None and scenario.starting_prompt == "Is order 12 shipped?"
    assert scenario.user_persona == "EXPERT" and len(simulated.actual) == 2


@pytest.mark.parametrize(("case", "where"), [
    ({"id": "x", "criterion": "multi_turn", "turns": TURNS}, "[0].labels: field required"),
    ({"id": "x", "criterion": "multi_turn", "turns": TURNS, "labels": {"success": "yes"}},
     "[0].labels.success: a question of task_success"),
    ({"id": "x", "criterion": "multi_turn", "turns": TURNS, "labels": {"task_success": "maybe"}},
     "[0].labels.task_success: a question of"),
    ({"id": "x", "criterion": "multi_turn_task_success", "turns": [], "label": "yes"},
     "[0].turns: a conversation is a non-empty list"),
    ({"id": "x", "criterion": "simulated_user", "plan": "p", "turns": [{"user": "hi"}], "label": "valid"},
     "[0].turns[0].response: field required"),
    ({"id": "x", "criterion": "trajectory", "user_prompt": "q", "response": "a", "label": "accomplished"},
     "[0].tool_calls: field required"),
])
def test_a_bad_conversation_case_names_the_file_and_field(tmp_path: Path, case: dict[str, Any],
                                                          where: str) -> None:
    f = _write(tmp_path, [case])
    with pytest.raises(DataError, match=f"{f.name}: {where}".replace("[", r"\[").replace("]", r"\]")):
        load_labelled(f)


def test_a_labelled_multi_turn_set_certifies_with_a_scripted_judge(tmp_path: Path) -> None:
    """The judge says no exactly where a conversation has BROKEN in it: agreement is the share of
    labels that agree with that, and the certificate applies to the configured criterion."""
    broken = [{**TURNS[0]}, {**TURNS[1], "response": "BROKEN link, sorry."}]
    raw = [{"id": f"c{i}", "criterion": "multi_turn", "turns": broken if i % 2 else TURNS,
            "labels": {"task_success": "no" if i % 2 else "yes", "trajectory_quality": "yes"}}
           for i in range(4)]
    cases = load_labelled(_write(tmp_path, raw))
    judge, model = _judge()
    cals = asyncio.run(calibrate(cases, judge, num_samples=1))
    by = {c.metric: c for c in cals}
    assert set(by) == {"multi_turn_task_success_v1", "multi_turn_trajectory_quality_v1"}
    assert by["multi_turn_task_success_v1"].accuracy == 1.0
    assert by["multi_turn_trajectory_quality_v1"].accuracy == 0.5  # labelled yes, judged no when BROKEN
    # one question per case, over the whole conversation
    assert len(model.requests) == 8 and all("USER 2" in r.messages[-1].content for r in model.requests)
    cert = certificate(by["multi_turn_task_success_v1"], judge_model="local", num_samples=1,
                       source="mine.json", source_sha256="0" * 64, created="now")
    assert (cert.labels, cert.positives, cert.agreement, cert.kappa) == (4, 2, 1.0, 1.0)
    metric = default_registry().configure("multi_turn_task_success_v1", {  # judged as it was measured
        "threshold": 1.0, "judge_model_options": {"num_samples": 1}})
    note = certify(metric, CertificateBook((cert,)), JudgeCertificatesConfig(min_labels=4))
    assert note is not None and note.status == "certified"


def test_a_simulated_user_case_is_judged_whole_turns_and_stop(tmp_path: Path) -> None:
    """Its label covers every later turn and where it stopped: a BROKEN second turn fails it."""
    raw = [{"id": f"s{i}", "criterion": "simulated_user", "plan": "Ask about order 12, then stop.",
            "turns": [TURNS[0], {**TURNS[1], "user": "BROKEN" if i else "Email me the link."}],
            "label": "invalid" if i else "valid"} for i in range(2)]
    judge, model = _judge()
    (cal,) = asyncio.run(calibrate(load_labelled(_write(tmp_path, raw)), judge, num_samples=1))
    assert cal.metric == "per_turn_user_simulator_quality_v1" and cal.accuracy == 1.0
    assert len(model.requests) == 4  # turn 2 and the stop question, per case


def test_the_prompt_fingerprint_covers_the_simulated_users_turn_question(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe plays a two-turn scenario, so a change to the turn question changes the hash."""
    from agenteval.criteria.judge import certificates, simulator_quality

    name = "per_turn_user_simulator_quality_v1"
    config = default_registry().configure(name, 1.0).criterion.model_dump(mode="json")
    before = prompt_fingerprint(name, config)
    monkeypatch.setattr(simulator_quality, "_TURN_RULES", simulator_quality._TURN_RULES + " Be kind.")
    certificates._fingerprint.cache_clear()
    try:
        assert prompt_fingerprint(name, config) != before
    finally:
        certificates._fingerprint.cache_clear()


def test_the_held_out_conversation_sets_are_balanced_and_large_enough() -> None:
    for file, metrics in HELD_OUT.items():
        cases = load_labelled(BENCH_SET / file)
        for metric in metrics:
            mine = [c for c in cases if c.metric == metric]
            positives = sum(c.positive for c in mine)
            assert len(mine) >= 30 and abs(2 * positives - len(mine)) <= 5, (file, metric)


def test_the_shipped_certificates_of_the_conversation_criteria_apply() -> None:
    """Each of them ships a certificate measured on its held-out set, bound to the embedded judge
    and the prompts of now, found for the criterion at its defaults (certified or below floor,
    never "uncalibrated")."""
    book = CertificateBook.load([], shipped=True)
    for name in CONVERSATION_METRICS:
        config: dict[str, Any] = {"threshold": 1.0}
        if name.startswith("rubric_based"):
            config["rubrics"] = [{"rubric_id": "r", "rubric_content": {"text_property": "Any rubric."}}]
        metric = default_registry().configure(name, config)
        note = certify(metric, book)
        assert note is not None and note.status != "uncalibrated", (name, note)
        cert = next(c for c in book.certificates if c.metric == name)
        assert cert.judge_identity == f"sha256:{MODEL_SHA256}" and cert.labels >= 30
        assert any(file in cert.source for file, metrics in HELD_OUT.items() if name in metrics)


def _escalation(options: dict[str, Any]) -> tuple[float | None, int]:
    """multi_turn_task_success_v1's score on a conversation, the embedded judge ("local", here
    scripted) saying yes and a stronger one no; and how many questions the stronger one got."""
    from agenteval.runner import CaseRun, score_case
    from agenteval.schema import EvalCase

    weak_model = ScriptedModel(lambda r: json.dumps({"verdict": "yes", "rationale": "r"}))
    strong = ScriptedModel(lambda r: json.dumps({"verdict": "no", "rationale": "r"}))
    judge = JudgeService(lambda name: weak_model if name == "local" else strong)
    (case,) = load_labelled_from([{"id": "c", "criterion": "multi_turn_task_success", "turns": TURNS,
                                   "label": "no"}])
    metric = default_registry().configure("multi_turn_task_success_v1", {
        "threshold": 1.0, "judge_model_options": {"num_samples": 3, **options}})  # 3: a confidence
    run = CaseRun(case=EvalCase(eval_id="c", conversation=case.actual), actual=case.actual, eval_set_id="s")
    result = asyncio.run(score_case(run, [metric], judge=judge))
    return result.overall_eval_metric_results[0].score, len(strong.requests)


def load_labelled_from(raw: list[dict[str, Any]]) -> list[Any]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return load_labelled(_write(Path(d), raw))


def test_a_criterion_below_the_floor_on_the_embedded_judge_escalates_every_verdict() -> None:
    """Its certificate says the embedded judge is not to be trusted on it: with a stronger judge
    set, that judge decides; without one, or with the user's own min_confidence, the embedded
    verdict stands."""
    from agenteval.criteria.judge.weak import BELOW_FLOOR_ON_EMBEDDED

    assert "multi_turn_task_success_v1" in BELOW_FLOOR_ON_EMBEDDED
    score, asked = _escalation({"escalate_to": "openai:strong"})
    assert score == 0.0 and asked > 0
    assert _escalation({}) == (1.0, 0)
    assert _escalation({"escalate_to": "openai:strong", "min_confidence": 0.0}) == (1.0, 0)


def test_the_criteria_that_escalate_are_the_ones_their_certificates_put_below_the_floor() -> None:
    from agenteval.criteria.judge.weak import BELOW_FLOOR_ON_EMBEDDED, CRITERION_FLOOR

    book = CertificateBook.load([], shipped=True)
    # above the floor: a certificate of the embedded judge with enough labels and agreement
    above = {c.metric for c in book.certificates if c.metric in CONVERSATION_METRICS
             and c.judge_model == "local" and c.agreement is not None
             and c.agreement >= CRITERION_FLOOR and c.labels >= DEFAULT_MIN_LABELS}
    below = set(CONVERSATION_METRICS) - above
    assert below == BELOW_FLOOR_ON_EMBEDDED
