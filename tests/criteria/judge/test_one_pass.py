"""One-pass verdicts: the label's probabilities from one reply's log-probabilities (over a real
HTTP server), samples drawn from them, and the fallback to written samples."""

import asyncio
import math
from pathlib import Path
from typing import Any

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.models import OpenAICompatModel
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase, EvalCaseResult, EvalStatus
from agenteval.store import JudgeCacheDB
from tests.fake_server import FakeServer, Step, reply
from tests.helpers import inv


def _logprob_reply(p_valid: float) -> dict[str, Any]:
    """`{"verdict": "valid", ...}` with the label token's raw alternatives: "valid" at p_valid,
    "in" (the start of "invalid") at 1 - p_valid - 0.05, and "No" (which no label starts with)."""
    return _with_logprobs([('{"verdict": "', 0.0, []),
                           ("valid", math.log(p_valid),
                            [("valid", p_valid), ("in", 1 - p_valid - 0.05), ("No", 0.05)]),
                           ('", "rationale": "same city"}', 0.0, [])])


Token = tuple[str, float, list[tuple[str, float]]]


def _with_logprobs(tokens: list[Token]) -> dict[str, Any]:
    """A chat completion of `tokens` (text, log-probability, top alternatives with their
    probabilities) carrying their log-probabilities as an OpenAI-compatible server sends them."""
    body = reply("".join(t for t, _, _ in tokens))
    body["choices"][0]["logprobs"] = {"content": [
        {"token": t, "logprob": lp, "top_logprobs": [{"token": a, "logprob": math.log(p)} for a, p in top]}
        for t, lp, top in tokens]}
    return body


def _score(server: FakeServer, options: dict[str, Any], cache: JudgeCacheDB | None = None,
           judge: JudgeService | None = None) -> EvalCaseResult:
    if judge is None:
        llm = OpenAICompatModel(model="m", base_url=server.base_url, backoff_base=0.01)
        judge = JudgeService(lambda name: llm, cache)
    metric = default_registry().configure("final_response_match_v2", {
        "threshold": 0.5, "judge_model_options": {"num_samples": 5, **options}})
    run = CaseRun(EvalCase(eval_id="c", conversation=[inv("capital?", "Paris")]),
                  [inv("capital?", "Paris.")], "s")
    return asyncio.run(score_case(run, [metric], judge=judge))


def test_one_reply_gives_the_probabilities_and_the_samples_are_drawn(server: FakeServer) -> None:
    server.steps = [Step(200, _logprob_reply(0.76))]
    result = _score(server, {})
    (record,) = result.judge_records
    assert len(server.received) == 1  # one request, whatever num_samples is
    body = server.received[0]
    assert body["logprobs"] is True and body["top_logprobs"] > 0 and body["temperature"] == 0.0
    assert record.confidence_source == "logprobs" and record.label_probs is not None
    assert record.confidence == record.label_probs["valid"] == round(0.76 / 0.95, 4)
    assert len(record.verdicts) == 5 and record.verdict == "valid" and record.score == 1.0
    assert record.replies == [_logprob_reply(0.76)["choices"][0]["message"]["content"]]
    assert record.rationale == "same city"
    again = _score(server, {}).judge_records[0]
    assert again.verdicts == record.verdicts  # drawn with a seed taken from the question


def test_a_low_probability_is_uncertain(server: FakeServer) -> None:
    server.steps = [Step(200, _logprob_reply(0.6))]
    result = _score(server, {"min_confidence": 0.9, "num_samples": 1})  # one sample: still a confidence
    (record,) = result.judge_records
    assert record.uncertain and record.score is None
    assert result.overall_eval_metric_results[0].eval_status == EvalStatus.NOT_EVALUATED
    (error,) = result.metric_errors
    assert "judge uncertain: valid with p=0.63, below min_confidence 0.9" in error.message


def test_one_pass_verdicts_are_cached_with_their_probabilities(server: FakeServer, tmp_path: Path) -> None:
    server.steps = [Step(200, _logprob_reply(0.9))]
    cache = JudgeCacheDB(tmp_path / "cache.sqlite")
    first = _score(server, {}, cache).judge_records[0]
    second = _score(server, {}, cache).judge_records[0]
    assert len(server.received) == 1 and second.cached and not first.cached
    assert (second.verdicts, second.confidence, second.label_probs) == \
        (first.verdicts, first.confidence, first.label_probs)
    cache.close()


def test_without_log_probabilities_the_samples_are_written(server: FakeServer) -> None:
    plain = '{"verdict": "valid", "rationale": "same"}'
    server.steps = [Step(200, reply(plain)), Step(200, reply(plain, plain))]
    llm = OpenAICompatModel(model="m", base_url=server.base_url)
    judge = JudgeService(lambda name: llm)
    record = _score(server, {}, judge=judge).judge_records[0]
    assert record.confidence_source == "samples" and record.label_probs is None
    # The first reply (asked with log-probabilities) is the first sample; early stop then asks
    # for the two more a majority of 5 needs.
    assert [b.get("n", 1) for b in server.received] == [1, 2] and record.verdicts == ["valid"] * 3
    _score(server, {}, judge=judge)  # the judge remembers: no more asking for log-probabilities
    assert not any("logprobs" in b for b in server.received[2:])


def test_shipped_thresholds_apply_to_probabilities_unless_configured(server: FakeServer) -> None:
    from agenteval.criteria.judge.response import FinalResponseMatchV2
    shipped = FinalResponseMatchV2.default_min_confidence
    assert shipped is not None and 0.5 < shipped < 1
    low = shipped * 0.95 - 0.1  # p(valid) = low / 0.95 once "No" is dropped: below the threshold
    server.steps = [Step(200, _logprob_reply(low))]
    record = _score(server, {"num_samples": 1}).judge_records[0]
    assert record.uncertain and record.score is None and record.confidence is not None
    assert f"below min_confidence {shipped:g}" in (record.error or "")
    off = _score(server, {"num_samples": 1, "min_confidence": 0}).judge_records[0]
    assert not off.uncertain and off.score == 1.0  # a configured threshold wins, 0 turns it off


def test_written_samples_are_cached_too(server: FakeServer, tmp_path: Path) -> None:
    server.steps = [Step(200, reply('{"verdict": "valid", "rationale": "same"}'))]
    cache = JudgeCacheDB(tmp_path / "cache.sqlite")
    first = _score(server, {"num_samples": 1}, cache).judge_records[0]
    second = _score(server, {"num_samples": 1}, cache).judge_records[0]  # a new judge service
    assert len(server.received) == 1 and second.cached and not first.cached
    assert first.confidence_source is None and second.verdict == "valid"
    cache.close()


def _invalid_reply(p_invalid: float) -> dict[str, Any]:
    """`{"verdict": "invalid", "rationale": ...}` with the label token's alternatives."""
    return _with_logprobs([('{"verdict": "', 0.0, []),
                           ("in", math.log(p_invalid), [("in", p_invalid), ("valid", 1 - p_invalid)]),
                           ('valid", "rationale": "another city"}', 0.0, [])])


def test_a_server_refusing_schema_alternatives_is_asked_with_the_plain_schema(server: FakeServer) -> None:
    """A server that refuses a reply schema with `anyOf` (as OpenAI's strict structured outputs
    do) gets the plain label-and-rationale schema: the verdict, its probabilities and its
    rationale as before, and from then on no schema with alternatives to that model."""
    def respond(body: dict[str, Any]) -> Step:
        if "anyOf" in body["response_format"]["json_schema"]["schema"]:
            return Step(400, {"error": {"message": "Invalid schema: 'anyOf' is not permitted at the root"}})
        return Step(200, _invalid_reply(0.8))

    server.respond = respond
    llm = OpenAICompatModel(model="m", base_url=server.base_url, backoff_base=0.01)
    judge = JudgeService(lambda name: llm)
    first = _score(server, {}, judge=judge)
    (record,) = first.judge_records
    assert record.error is None and record.verdict == "invalid"
    assert record.confidence is not None and abs(record.confidence - 0.8) < 1e-6
    assert record.rationale == "another city"
    schemas = [b["response_format"]["json_schema"]["schema"] for b in server.received]
    # (the HTTP client first asks again without log-probabilities, to see whether they were refused)
    assert all("anyOf" in s for s in schemas[:-1]) and "anyOf" not in schemas[-1]
    assert "rationale" in schemas[-1]["properties"] and schemas[-1]["required"] == ["verdict", "rationale"]
    asked = len(server.received)
    _score(server, {}, judge=judge)  # the next question goes straight to the plain schema
    assert len(server.received) == asked + 1
    assert "anyOf" not in server.received[-1]["response_format"]["json_schema"]["schema"]
