"""A verdict whose rationale follows its label, on an engine that continues a reply begun in the
prompt, is asked in two calls (`prefill.label_first`, `prefill.rationale_after`): the label, then
the reply begun up to its rationale, with the token cap the one reply left it. The answer (reply
text, label probabilities, votes, cache entry) is the one reply's. Scripted engines play
llama.cpp here (`test_prefill.Continuing`); the real one is in `test_prefill_real.py`."""

import asyncio
from typing import Any

import pytest

from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.prefill import (
    HEAD_TOKENS,
    RATIONALE_HEAD_TOKENS,
    label_first,
    rationale_after,
)
from agenteval.criteria.judge.engine.verdict import (
    explained_verdict_schema,
    reply_tokens,
    verdict_schema,
)
from agenteval.models import Message, ModelRequest
from agenteval.schema.criterion import Rationales
from agenteval.store import JudgeCacheDB
from tests.criteria.judge.engine.test_fast_verdicts import POSITIVE, VALID
from tests.criteria.judge.engine.test_prefill import Continuing

FAILING = {"valid": 0.3, "invalid": 0.7}
PASSING = {"valid": 0.65, "invalid": 0.35}


def _ask(model: Any, cache: Any = None, rationales: Rationales = "negative") -> Any:
    judge = JudgeService(lambda n: model, cache)
    return asyncio.run(judge.ask("m", "sys", "Q", VALID, 5, positive=POSITIVE,
                                 rationales=rationales))


def _same(a: Any, b: Any) -> None:
    assert a.replies == b.replies  # the same text, head included
    assert a.distribution == b.distribution
    assert [(s.verdict.label, s.verdict.rationale) for s in a.samples] == \
        [(s.verdict.label, s.verdict.rationale) for s in b.samples]  # the same votes


def test_a_failing_verdict_is_its_label_then_its_rationale_begun_after_it() -> None:
    engine = Continuing(FAILING)
    split, whole = _ask(engine), _ask(engine.whole)
    _same(split, whole)
    assert split.replies[0] == '{"verdict": "invalid", "rationale": "the totals differ"}'
    assert split.model_calls == 2
    first, second = engine.requests
    assert first.messages[-1] == Message("assistant", '{"verdict": "')
    assert first.grammar == 'root ::= (("valid" | "invalid") "\\"}")\n'  # the label alone
    assert first.logprobs == 20 and first.max_tokens == 1  # the label's first token decides it
    assert second.messages[:-1] == first.messages[:-1]
    assert second.messages[-1] == Message("assistant", '{"verdict": "invalid", "rationale": "')
    assert second.grammar is not None and second.grammar.endswith('{0,120} "\\"}"\n')
    # The one reply's cap, less what it spent before its rationale: its rationale is as long.
    assert second.logprobs == 0
    assert second.max_tokens == reply_tokens() - HEAD_TOKENS - 1 - RATIONALE_HEAD_TOKENS


def test_a_passing_verdict_is_one_call() -> None:
    engine = Continuing(PASSING)
    split, whole = _ask(engine), _ask(engine.whole)
    _same(split, whole)
    assert split.replies == ['{"verdict": "valid"}'] and split.model_calls == 1
    assert len(engine.requests) == 1


def test_every_verdict_is_split_when_every_one_is_explained() -> None:
    for p in (FAILING, PASSING):
        engine = Continuing(p)
        split, whole = _ask(engine, rationales="always"), _ask(engine.whole, rationales="always")
        _same(split, whole)
        assert len(engine.requests) == 2 and '"rationale": "' in split.replies[0]
    engine = Continuing(FAILING)
    _ask(engine, rationales="never")
    assert len(engine.requests) == 1  # the label alone, nothing to split


def test_a_label_of_several_tokens_leaves_its_rationale_the_same_cap() -> None:
    engine = Continuing(FAILING, pieces=3)  # "invalid" as "in", "va", "li", "d"
    split, whole = _ask(engine), _ask(engine.whole)
    assert split.replies == whole.replies
    # Its first token, then the label call whole to count the label's tokens, then the rationale.
    assert [r.max_tokens for r in engine.requests] == [
        1, reply_tokens() - HEAD_TOKENS, reply_tokens() - HEAD_TOKENS - 4 - RATIONALE_HEAD_TOKENS]


def test_the_split_answer_is_cached_as_the_reply_written_whole(tmp_path: Any) -> None:
    cache = JudgeCacheDB(tmp_path / "cache.db")
    engine = Continuing(FAILING)
    split = _ask(engine, cache)
    whole_model = Continuing(FAILING).whole
    again = _ask(whole_model, cache)  # the same key: served without a call
    assert whole_model.requests == [] and again.cached
    _same(again, split)


def test_an_engine_that_refuses_the_second_call_is_asked_whole_from_then_on() -> None:
    engine = Continuing(FAILING, refuse="rationale")
    judge = JudgeService(lambda n: engine)
    for prompt in ("Q1", "Q2"):
        answer = asyncio.run(judge.ask("m", "sys", prompt, VALID, 5, positive=POSITIVE))
        assert answer.error is None and answer.readings.count("invalid") >= 3
        assert answer.replies[0].endswith('"rationale": "the totals differ"}')
    assert [r.grammar is not None for r in engine.requests] == [True, True, False, False]
    assert not judge.prefills("m")


def test_only_a_verdict_first_schema_with_a_rationale_is_split() -> None:
    def request(schema: dict[str, Any]) -> ModelRequest:
        return ModelRequest(messages=(Message("user", "Q"),), json_schema=schema, max_tokens=24)

    assert label_first(request(verdict_schema(VALID))) is not None
    assert label_first(request(explained_verdict_schema(VALID, POSITIVE))) is not None
    assert label_first(request(verdict_schema(VALID, rationale=False))) is None
    assert label_first(request(verdict_schema(VALID, ("sentence_says",)))) is None  # notes first
    second, head = rationale_after(request(verdict_schema(VALID)), "invalid", 2)
    assert head == '{"verdict": "invalid", "rationale": "'
    assert second.max_tokens == 24 - HEAD_TOKENS - 2 - RATIONALE_HEAD_TOKENS


@pytest.mark.parametrize("p", [FAILING, PASSING])
def test_a_remote_judge_writes_its_reply_whole(p: dict[str, float]) -> None:
    model = Continuing(p).whole  # says nothing of continuing a reply
    _ask(model)
    (sent,) = model.requests
    assert sent.grammar is None and sent.messages[-1].role == "user"
