"""A one-pass reply begun in the prompt (`engine.prefill`) on an engine that continues a
trailing assistant message: the request carries the reply's fixed head and a grammar for the
rest, and the answer (reply text, label, probabilities, votes, rationale, cache entry) is the
one the reply written whole gives. Scripted judges play the engine; the real one is in
`test_prefill_real.py`."""

import asyncio
import math
from typing import Any

import pytest

from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.prefill import HEAD_TOKENS, RATIONALE_HEAD, prefilled
from agenteval.criteria.judge.engine.verdict import (
    VERDICT_TOKENS,
    explained_verdict_schema,
    note_schema,
    verdict_schema,
)
from agenteval.models import Generation, Message, ModelError, ModelRequest, ScriptedModel, TokenLogprob
from agenteval.store import JudgeCacheDB
from tests.criteria.judge.engine.test_fast_verdicts import POSITIVE, VALID, _label_reply

CHECK = ("same", "different", "not_stated")


def _request(schema: dict[str, Any], max_tokens: int = 24) -> ModelRequest:
    return ModelRequest(messages=(Message("user", "Q"),), json_schema=schema, max_tokens=max_tokens)


def test_the_head_goes_into_the_prompt_and_the_grammar_allows_the_rest() -> None:
    explained, head = prefilled(_request(explained_verdict_schema(VALID, frozenset({"invalid"}))))  # type: ignore[misc]
    assert head == '{"verdict": "' and explained.messages[-1] == Message("assistant", head)
    assert explained.json_schema is None and explained.max_tokens == 24 - HEAD_TOKENS
    assert explained.grammar is not None
    assert explained.grammar.startswith(
        'root ::= (("valid") "\\"}") | (("invalid") "\\", \\"rationale\\": \\""')
    assert "{0,120}" in explained.grammar  # the rationale's length, as the schema's
    noted, head = prefilled(_request(verdict_schema(CHECK, ("sentence_says", "context_says")), 200))  # type: ignore[misc]
    assert head == '{"sentence_says": "' and noted.max_tokens == 200  # nothing before a note to take off
    assert noted.grammar is not None and '"\\", \\"context_says\\": \\""' in noted.grammar
    assert noted.grammar.rstrip().endswith('("same" | "different" | "not_stated") "\\"}")')
    alone, _ = prefilled(_request(verdict_schema(VALID, rationale=False), VERDICT_TOKENS))  # type: ignore[misc]
    assert alone.max_tokens == VERDICT_TOKENS - HEAD_TOKENS
    assert prefilled(_request(note_schema("required"))) is None  # not a verdict
    assert prefilled(ModelRequest(messages=(Message("user", "Q"),))) is None


class Continuing:
    """An engine that continues a trailing assistant message as llama.cpp does: the reply text
    holds it, the log-probabilities are the generated tokens'; a rationale follows the label
    where the grammar allows one, and a reply begun up to its rationale gets the rationale
    alone. The label is written in `pieces` tokens; generation stops at `max_tokens` tokens.
    Records its requests; `refuse` refuses a grammar (all of them, or only on a reply begun up
    to its rationale: `refuse="rationale"`)."""

    prefills_replies = True

    def __init__(self, p: dict[str, float], refuse: bool | str = False, pieces: int = 1) -> None:
        self.p, self.refuse, self.pieces = p, refuse, pieces
        self.whole = ScriptedModel(_label_reply(p))  # the reply written whole, for comparison
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return "m"

    async def generate(self, request: ModelRequest) -> Any:
        self.requests.append(request)
        if request.grammar is None:
            return await self.whole.generate(request)
        head = request.messages[-1].content
        if self.refuse is True or (self.refuse == "rationale" and head.endswith(RATIONALE_HEAD)):
            raise ModelError("grammar not supported")
        if head.endswith(RATIONALE_HEAD):  # the rationale alone
            text, tokens = head + 'the totals differ"}', None
        else:
            label = max(self.p, key=lambda k: self.p[k])
            explains = f'("{label}") "\\", \\"rationale' in request.grammar
            tail = '", "rationale": "the totals differ"}' if explains else '"}'
            top = tuple((k, math.log(v)) for k, v in self.p.items())
            cut = max(1, len(label) // self.pieces)
            pieces = [label[i:i + cut] for i in range(0, len(label), cut)]
            tokens = (TokenLogprob(pieces[0], math.log(self.p[label]), top),
                      *(TokenLogprob(x, 0.0) for x in pieces[1:]), TokenLogprob(tail, 0.0))
            tokens = tokens[:request.max_tokens]  # generation stops at the token cap
            text = head + "".join(t.token for t in tokens)
        return await ScriptedModel([Generation(text, logprobs=tokens)]).generate(request)


class Wrapper:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return "m"

    async def generate(self, request: ModelRequest) -> Any:
        return await self.inner.generate(request)


def _ask(model: Any, cache: Any = None) -> Any:
    judge = JudgeService(lambda n: model, cache)
    return asyncio.run(judge.ask("m", "sys", "Q", VALID, 5, positive=POSITIVE))


def test_a_prefilled_answer_is_the_answer_written_whole() -> None:
    for p in ({"valid": 0.3, "invalid": 0.7}, {"valid": 0.65, "invalid": 0.35}):
        engine = Continuing(p)
        begun, whole = _ask(Wrapper(engine)), _ask(engine.whole)  # found through a wrapper
        sent = engine.requests[0]  # (a rationale in a second call: `test_rationale_split`)
        assert sent.grammar is not None and sent.json_schema is None
        assert sent.messages[-1] == Message("assistant", '{"verdict": "')
        assert sent.max_tokens == 1  # its label's first token (`test_rationale_split`)
        assert begun.distribution == whole.distribution == pytest.approx(p)
        assert begun.replies == whole.replies  # the same text, head included
        assert [(s.verdict.label, s.verdict.rationale) for s in begun.samples] == \
            [(s.verdict.label, s.verdict.rationale) for s in whole.samples]  # the same votes


def test_a_reply_cached_whole_serves_a_prefilled_question(tmp_path: Any) -> None:
    cache = JudgeCacheDB(tmp_path / "cache.db")
    p = {"valid": 0.3, "invalid": 0.7}
    whole = _ask(Continuing(p).whole, cache)
    engine = Continuing(p)
    again = _ask(engine, cache)
    assert engine.requests == [] and again.cached and again.distribution == whole.distribution


def test_an_engine_that_refuses_the_grammar_is_asked_whole_from_then_on() -> None:
    engine = Continuing({"valid": 0.3, "invalid": 0.7}, refuse=True)
    judge = JudgeService(lambda n: engine)
    for prompt in ("Q1", "Q2"):
        answer = asyncio.run(judge.ask("m", "sys", prompt, VALID, 5, positive=POSITIVE))
        assert answer.error is None and answer.readings.count("invalid") >= 3
    assert [r.grammar is not None for r in engine.requests] == [True, False, False]
    assert not judge.prefills("m")


def test_models_that_do_not_say_so_get_the_whole_request() -> None:
    model = ScriptedModel(_label_reply({"valid": 0.3, "invalid": 0.7}))
    _ask(model)
    (sent,) = model.requests
    assert sent.grammar is None and sent.messages[-1].role == "user"


def test_the_embedded_model_of_a_run_is_found_behind_its_limits() -> None:
    # As `agenteval score` resolves judges: through the run's pool (a limiter wrapping the model).
    from agenteval.models import ModelUnavailable
    from agenteval.models.pool import ModelPool

    pool = ModelPool({})
    try:
        pool.get("local")
    except ModelUnavailable as exc:
        pytest.skip(f"embedded model not installed: {exc}")
    assert JudgeService(pool.get).prefills("local")
    assert not JudgeService(lambda n: ScriptedModel(["{}"])).prefills("m")
