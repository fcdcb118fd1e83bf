"""The hallucination cross-check's notes-first reply, on an engine that continues a reply begun in
the prompt, is asked in one call per field (`prefill.note_first`, `prefill.field_after`): each
note stopped at its closing quote, then the reply begun up to the next field. The answer (reply
text, label probabilities, votes, cache entry) is the one reply's. A scripted engine plays
llama.cpp here; `bench/lab_check_split.py` measures the real one."""

import asyncio
import json
import math
from typing import Any

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.prefill import field_after, note_first, prefilled
from agenteval.criteria.judge.engine.verdict import verdict_schema
from agenteval.criteria.judge.prompting import prompts
from agenteval.models import Generation, Message, ModelRequest, ScriptedModel, TokenLogprob
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase
from agenteval.store import JudgeCacheDB
from tests.helpers import inv

CHECK = prompts.CHECK_LABELS
NOTES = ("sentence_says", "context_says")
P = {"same": 0.2, "different": 0.7, "not_stated": 0.1}
_VALUE = '"verdict": "'


def _reply(sentence_says: str = "rolled a 6", label: str = "different") -> str:
    return json.dumps({"sentence_says": sentence_says, "context_says": "result 4", "verdict": label},
                      ensure_ascii=False)


class Continuing:
    """Plays llama.cpp: writes `reply` (continuing a trailing assistant message, which must
    begin it), stops at the first `"` under a stop string, and gives the label token's
    probabilities `P` when asked for log-probabilities (stopping at `max_tokens` tokens then).
    `whole` writes it without a head."""

    prefills_replies = True

    def __init__(self, reply: str | None = None, p: dict[str, float] = P) -> None:
        self.reply, self.p = reply or _reply(), p
        self.requests: list[ModelRequest] = []
        self.whole = ScriptedModel(self._write)

    @property
    def name(self) -> str:
        return "m"

    def _write(self, request: ModelRequest, head: str = "") -> Generation:
        assert self.reply.startswith(head), (head, self.reply)
        rest = self.reply[len(head):]
        if request.stop:
            return Generation(head + rest[:rest.index('"')], finish_reason="stop")
        if not request.logprobs:
            return Generation(head + rest)
        at = self.reply.index(_VALUE) + len(_VALUE) - len(head)
        label = max(self.p, key=lambda k: self.p[k])
        top = tuple((k, math.log(v)) for k, v in self.p.items())
        tokens = ((TokenLogprob(rest[:at], 0.0),) if at > 0 else ()) + (
            TokenLogprob(label, math.log(self.p[label]), top), TokenLogprob(rest[at + len(label):], 0.0))
        tokens = tokens[:request.max_tokens]  # generation stops at the token cap
        return Generation(head + "".join(t.token for t in tokens), logprobs=tokens)

    async def generate(self, request: ModelRequest) -> Any:
        self.requests.append(request)
        assert request.grammar is not None and request.messages[-1].role == "assistant"
        head = request.messages[-1].content
        return await ScriptedModel([self._write(request, head)]).generate(request)


def _ask(model: Any, cache: Any = None) -> Any:
    judge = JudgeService(lambda n: model, cache)
    return asyncio.run(judge.ask("m", "sys", "Q", CHECK, 5, notes=NOTES))


def _same(a: Any, b: Any) -> None:
    assert a.replies == b.replies and a.replies[0] == _reply()
    assert a.distribution == b.distribution
    assert [(s.verdict.label, s.verdict.rationale) for s in a.samples] == \
        [(s.verdict.label, s.verdict.rationale) for s in b.samples]  # the same votes


def test_a_cross_check_is_one_call_per_field_with_the_answer_of_the_reply_written_whole() -> None:
    engine = Continuing()
    split, whole = _ask(engine), _ask(engine.whole)
    _same(split, whole)
    assert split.model_calls == 3
    first, second, third = engine.requests
    assert [r.messages[-1].content for r in engine.requests] == [
        '{"sentence_says": "', '{"sentence_says": "rolled a 6", "context_says": "',
        '{"sentence_says": "rolled a 6", "context_says": "result 4", "verdict": "']
    assert [r.messages[:-1] for r in engine.requests] == [whole_messages(engine)] * 3
    assert first.stop == second.stop == ('"',) and third.stop == ()
    assert first.logprobs == second.logprobs == 0 and third.logprobs == 20  # the label's alone
    # Each call's grammar is the reply grammar's rest from its field on.
    assert first.grammar == prefilled(whole_request())[0].grammar  # type: ignore[index]
    assert second.grammar is not None and second.grammar.endswith(
        '{0,200} "\\", \\"verdict\\": \\"" ("same" | "different" | "not_stated") "\\"}"\n')
    assert third.grammar == 'root ::= ("same" | "different" | "not_stated") "\\"}"\n'
    assert third.max_tokens == 1  # the label's first token decides it; the rest is forced


def whole_messages(engine: Continuing) -> tuple[Message, ...]:
    return engine.whole.requests[0].messages


def whole_request(max_tokens: int = 200) -> ModelRequest:
    return ModelRequest(messages=(Message("user", "Q"),), json_schema=verdict_schema(CHECK, NOTES),
                        max_tokens=max_tokens, logprobs=20)


def test_a_note_stopped_at_an_escaped_quote_is_asked_whole() -> None:
    reply = _reply('the "6"')  # written as the "6": the stop string meets the escaped quote
    engine = Continuing(reply)
    answer, whole = _ask(engine), _ask(Continuing(reply).whole)
    assert answer.replies == whole.replies and answer.distribution == whole.distribution
    assert [r.stop for r in engine.requests] == [('"',), ()]  # the first note, then whole
    assert engine.requests[1].messages[-1].content == '{"sentence_says": "'


def test_the_split_answer_is_cached_as_the_reply_written_whole(tmp_path: Any) -> None:
    cache = JudgeCacheDB(tmp_path / "cache.db")
    split = _ask(Continuing(), cache)
    whole_model = Continuing().whole
    again = _ask(whole_model, cache)  # the same key: served without a call
    assert whole_model.requests == [] and again.cached
    _same(again, split)


def test_only_a_notes_first_schema_is_split_and_each_call_keeps_the_reply_cap() -> None:
    assert note_first(whole_request()) is not None
    assert note_first(replace_schema(verdict_schema(CHECK))) is None  # label first
    assert note_first(replace_schema(verdict_schema(CHECK, rationale=False))) is None
    second, head = field_after(whole_request(), '{"sentence_says": "rolled a 6', 0, 5)
    assert head == '{"sentence_says": "rolled a 6", "context_says": "'
    assert second.max_tokens == 200 - 5 - len('", "context_says": "') // 3
    third, _ = field_after(whole_request(), head + "result 4", 1, 9)
    assert third.stop == () and third.logprobs == 20


def replace_schema(schema: dict[str, Any]) -> ModelRequest:
    return ModelRequest(messages=(Message("user", "Q"),), json_schema=schema, max_tokens=24)


def _hallucinations(model: Any) -> Any:
    actual = [inv("Roll a d6.", "You rolled a 6.")]
    metric = default_registry().configure("hallucinations_v1", {"threshold": 0.5})
    run = CaseRun(EvalCase(eval_id="c", conversation=actual), actual, "s")
    judge = JudgeService(lambda n: model)
    return asyncio.run(score_case(run, [metric], judge=judge))


class Judge(Continuing):
    """The sentence question says supported (its reply written whole); the cross-check is
    `Continuing`'s."""

    async def generate(self, request: ModelRequest) -> Any:
        if request.messages[-1].content.startswith('{"verdict'):
            self.requests.append(request)
            top = (("supported", math.log(0.9)), ("unsupported", math.log(0.1)))
            text = '{"verdict": "supported"}'
            tokens = (TokenLogprob("supported", math.log(0.9), top), TokenLogprob('"}', 0.0))
            return await ScriptedModel([Generation(text, logprobs=tokens)]).generate(request)
        return await super().generate(request)


def test_hallucinations_scores_the_split_cross_check_as_the_reply_written_whole() -> None:
    result = _hallucinations(Judge())
    check = result.judge_records[1]
    assert check.item == "sentence 1, cross-check" and check.verdict == "different"
    assert check.rationale == "sentence_says: rolled a 6; context_says: result 4"
    assert check.label_probs == {k: round(v, 4) for k, v in P.items()}
    assert result.overall_eval_metric_results[0].score == 0.0
