"""`agenteval judge calibrate --from_reviews`: people's reviews of judged verdicts (stored with the
runs by `agenteval web`) as the judge's labels."""

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.calibration import calibrate, labelled_from_reviews, labels_from_reviews
from agenteval.cli.main import cli
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.prompting import prompts
from agenteval.models import ModelRequest, ScriptedModel
from agenteval.schema import (
    EvalCaseResult,
    EvalMetricResultPerInvocation,
    EvalStatus,
    JudgeRecord,
    Rubric,
    RubricContent,
)
from agenteval.store import record_run
from agenteval.store.reviews import Review, ReviewStore
from tests.fake_server import FakeServer, Step
from tests.result_builders import case, invocation, metric, result

S, F = "safety_v1", "final_response_match_v2"


R, T, H = ("rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1",
           "hallucinations_v1")
M, MT = "rubric_based_multi_turn_trajectory_quality_v1", "multi_turn_task_success_v1"


def _store(root: Path) -> None:
    doc = result([case("safe_said", {S: 1.0}), case("unsafe_said", {S: 0.0}), case("matched", {F: 1.0}),
                  case("steps", {"tool_trajectory_avg_score": 1.0})], "r1")
    record_run(root, [doc])
    reviews = ReviewStore(root)
    reviews.save(Review("r1", "safe_said", 0, S, "disagree", "it leaks a password"))  # judge wrong
    reviews.save(Review("r1", "unsafe_said", 0, S, "agree"))
    reviews.save(Review("r1", "matched", 0, F, "agree"))
    reviews.save(Review("r1", "steps", 0, "tool_trajectory_avg_score", "agree"))  # not judged
    reviews.save(Review("r1", "steps", 0, "", "agree"))  # a case review naming no judged criterion
    # a review of a run no longer stored (kept by a version that deleted runs without their reviews)
    with sqlite3.connect(reviews.path) as db:
        db.execute("INSERT INTO reviews VALUES ('gone', 'x', 0, ?, 'agree', '', NULL, 0)", (S,))


def _turns(eval_id: str, verdicts: dict[str, list[float]], records: list[JudgeRecord]) -> EvalCaseResult:
    """A case run of len(verdicts[...]) turns, each criterion's per-turn scores given."""
    n = max(len(v) for v in verdicts.values())
    per = [EvalMetricResultPerInvocation(
        actual_invocation=invocation(f"q{i}", f"a{i}"), expected_invocation=invocation(f"q{i}", f"e{i}"),
        eval_metric_results=[metric(m, v[i], 0.5) for m, v in verdicts.items()]) for i in range(n)]
    overall = [metric(m, sum(v) / len(v), 0.5) for m, v in verdicts.items()]
    for m in overall:
        if m.metric_name in (R, T):
            m.criterion = {"rubrics": [{"rubric_id": "r1", "rubric_content": {"text_property": "is polite"}}]}
    return EvalCaseResult(eval_set_id="s", eval_id=eval_id, session_id="x",
                          final_eval_status=EvalStatus.PASSED, overall_eval_metric_results=overall,
                          eval_metric_result_per_invocation=per, judge_records=records)


def _rubric(metric_name: str, turn: int, item: str, score: float | None) -> JudgeRecord:
    return JudgeRecord(metric_name=metric_name, invocation_index=turn, item=item, judge_model="j",
                       prompt="p", score=score)


def test_reviews_of_one_question_verdicts_become_labels(tmp_path: Path) -> None:
    _store(tmp_path)
    found = labels_from_reviews(tmp_path)
    got = {(c.id, c.metric, c.label) for c in found.cases}
    assert got == {("r1/safe_said/0", S, "unsafe"), ("r1/unsafe_said/0", S, "unsafe"),
                   ("r1/matched/0", F, "valid")}
    matched = next(c for c in labelled_from_reviews(tmp_path) if c.metric == F)
    assert matched.case.conversation[0].final_response is not None  # the expected turn is the reference
    reasons = {(s.review.eval_id, s.review.target): s.reason for s in found.skipped}
    assert "not a judged criterion" in reasons[("steps", "tool_trajectory_avg_score")]
    assert "names no judged criterion" in reasons[("steps", "")]
    assert reasons[("x", S)] == "the run is no longer stored"


def _judged_history(tmp_path: Path) -> None:
    """A run of three judged case runs (two turns; rubrics of the criterion; the case's rubric
    in the eval set file) and reviews of them."""
    (tmp_path / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{
        "eval_id": "tools", "conversation": [{"user_content": {"parts": [{"text": "q"}]}}],
        "rubrics": [{"rubric_id": "t1", "rubric_content": {"text_property": "looks up first"}}]}]}))
    runs = [
        _turns("two", {S: [1.0, 0.0], H: [1.0, 0.6], F: [1.0, 1.0]}, []),
        _turns("rub", {R: [1.0]}, [_rubric(R, 0, "r1", 1.0), _rubric(R, 0, "r2", 0.0)]),
        _turns("tools", {T: [1.0]}, [_rubric(T, 0, "t1", 0.0)]),
        _turns("convo", {M: [0.0, 0.0]}, [_rubric(M, 1, "m1", 0.0)]),
        _turns("chat", {MT: [0.0, 0.0]}, []),
    ]
    # a multi-turn criterion gives its one verdict on the last turn, none on the earlier ones
    runs[4].eval_metric_result_per_invocation[0].eval_metric_results = [metric(MT, None, 0.5)]
    # the multi-turn rubric is the first expected turn's; the criterion reports on the last turn
    first = runs[3].eval_metric_result_per_invocation[0].expected_invocation
    assert first is not None
    first.rubrics = [Rubric(rubric_id="m1", type="TRAJECTORY_QUALITY",
                            rubric_content=RubricContent(text_property="asks before booking"))]
    record_run(tmp_path, [result(runs, "m1")])
    reviews = ReviewStore(tmp_path)
    reviews.save(Review("m1", "two", 0, S, "agree"))  # both turns, the judge's way
    reviews.save(Review("m1", "two", 0, f"{S}@1", "disagree"))  # turn 2 was safe after all: overrides
    reviews.save(Review("m1", "two", 0, F, "disagree"))  # two turns, none named: skipped
    reviews.save(Review("m1", "two", 0, "", "agree", f"{H} is right here"))  # a case review naming H
    reviews.save(Review("m1", "rub", 0, R, "agree"))  # each rubric; r2's text is nowhere
    reviews.save(Review("m1", "tools", 0, f"{T}@0/t1", "disagree"))  # the case's rubric (from the file)
    reviews.save(Review("m1", "convo", 0, f"{M}@1/m1", "disagree"))  # over both turns: met after all
    reviews.save(Review("m1", "chat", 0, MT, "disagree", "it did book"))  # its one verdict: wrong


def test_every_judged_criterion_labels_per_turn_and_per_rubric(tmp_path: Path) -> None:
    """Multi-turn runs label each turn as the judge asked it; rubric criteria each rubric of a
    turn (its text from the criterion, the eval set file, or else skipped); a disagreement naming
    no turn of several is skipped; a case review labels the criteria its comment names; a more
    specific review overrides a broader one."""
    _judged_history(tmp_path)
    found = labels_from_reviews(tmp_path)
    got = {(c.id, c.label) for c in found.cases}
    assert got == {("m1/two/0#0", "safe"), ("m1/two/0#1", "safe"), ("m1/two/0#0", "supported"),
                   ("m1/rub/0/r1", "yes"), ("m1/tools/0/t1", "yes"), ("m1/convo/0#1/m1", "yes"),
                   ("m1/chat/0#1", "yes")}
    by_id = {(c.id, c.metric): c for c in found.cases}
    assert by_id[("m1/tools/0/t1", T)].rubric == "looks up first"
    assert by_id[("m1/rub/0/r1", R)].rubric == "is polite"
    assert by_id[("m1/two/0#1", S)].case.conversation[0].user_content.parts[0].text == "q1"
    convo = by_id[("m1/convo/0#1/m1", M)]  # the whole conversation, its rubric from turn 1
    assert [i.user_content.parts[0].text for i in convo.actual] == ["q0", "q1"]
    assert convo.rubric == "asks before booking"
    chat = by_id[("m1/chat/0#1", MT)]  # the conversation's one question, not one per turn
    assert len(chat.actual) == 2 and chat.rubric is None
    assert not any(s.review.eval_id == "chat" for s in found.skipped)
    reasons = [s.reason for s in found.skipped]
    assert any("without naming the wrong one" in r for r in reasons)  # F on two turns
    assert any("score 0.6" in r for r in reasons)  # H turn 2 passed below 1
    assert any("rubric r2" in r for r in reasons)


def test_calibrate_from_reviews_judges_the_reviewed_turns(server: FakeServer, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "agent"
    _store(root)
    usage = {"prompt_tokens": 5, "completion_tokens": 2}
    server.steps = [Step(200, {"model": "j", "usage": usage, "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": json.dumps(
            {"verdict": v, "rationale": "r"})}}]}) for v in ("safe", "safe", "valid")] * 3
    details = tmp_path / "details.jsonl"
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(root), "--from_reviews", "--judge_model",
                                 f"openai-compat:j@{server.base_url}", "--num_samples", "1",
                                 "--parallelism", "1", "--details", str(details)], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    assert "3 review(s) gave no label" in r.output and "the run is no longer stored" in r.output
    rows = {json.loads(line)["id"]: json.loads(line) for line in details.read_text().splitlines()}
    assert set(rows) == {"r1/safe_said/0", "r1/unsafe_said/0", "r1/matched/0"}
    assert rows["r1/safe_said/0"]["label"] == "unsafe"


def test_no_reviews_and_certify_are_refused(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(tmp_path), "--from_reviews"])
    assert r.exit_code == 2 and "no reviews to use as labels" in r.output
    _store(tmp_path)
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(tmp_path), "--from_reviews", "--certify", "c"])
    assert r.exit_code == 2 and "--certify" in r.output and not (tmp_path / "c").exists()


def test_the_labels_are_judged_again_by_their_criteria(tmp_path: Path) -> None:
    """Every label made from a review is a question its criterion can ask (a verdict, not an
    error): safety per turn, hallucinations, both rubric criteria with the rubric's text."""
    def script(req: ModelRequest) -> str:
        prompt = req.messages[-1].content
        if "did the agent accomplish every goal" in prompt:
            return json.dumps({"verdict": "yes", "rationale": "it did"})
        if req.messages[0].content == prompts.RUBRIC_SYSTEM:
            return json.dumps({"required": "a property"})
        if "Required:" in prompt:
            return json.dumps({"reply_gives": "x", "verdict": "meets"})
        if "Agent reply" in prompt:
            return json.dumps({"reply_does": "answers", "harm_it_helps": "none", "verdict": "safe"})
        if "sentence_says" in prompt:
            return json.dumps({"sentence_says": "x", "context_says": "x", "verdict": "same"})
        return json.dumps({"verdict": "supported", "rationale": "in context"})

    _judged_history(tmp_path)
    cases = labelled_from_reviews(tmp_path)
    model = ScriptedModel(script)
    results = asyncio.run(calibrate(cases, JudgeService(lambda name: model), num_samples=1))
    assert sorted(c.metric for c in results) == sorted({S, H, R, T, M, MT})
    outcomes = {o.case.id + " " + c.metric: o.correct for c in results for o in c.outcomes}
    assert None not in outcomes.values(), outcomes
    assert outcomes[f"m1/two/0#1 {S}"] is True  # labelled safe by the disagreement, judged safe
    assert outcomes[f"m1/chat/0#1 {MT}"] is True  # labelled yes by the disagreement, judged yes
    asked = " ".join(req.messages[-1].content for req in model.requests)
    assert "is polite" in asked and "looks up first" in asked  # each rubric's own text was asked
    assert any("asks before booking" in r.messages[-1].content and "q0" in r.messages[-1].content
               and "q1" in r.messages[-1].content for r in model.requests)  # over the whole conversation
