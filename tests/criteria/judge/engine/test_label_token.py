"""A label call (the reply begun up to its label, a grammar for the label and `"}` alone) is
asked for its first token alone (`prefill.label_call`, `prefill.first_label`,
`prefill.label_token`): that token decides the label and carries its probabilities; the rest of
the reply is forced. Scripted engines play llama.cpp (`test_prefill.Continuing`); the real one
is in `test_prefill_real.py`."""

import asyncio

from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.logprobs import label_distribution
from agenteval.criteria.judge.engine.prefill import (
    field_after,
    first_label,
    label_call,
    label_first,
    note_first,
    prefilled,
    rationale_after,
)
from agenteval.criteria.judge.engine.verdict import (
    explained_verdict_schema,
    reply_tokens,
    verdict_schema,
)
from agenteval.models import Message, ModelRequest, TokenLogprob
from tests.criteria.judge.engine.test_fast_verdicts import POSITIVE, VALID
from tests.criteria.judge.engine.test_prefill import CHECK, Continuing


def _request(schema: dict[str, object], max_tokens: int = 24) -> ModelRequest:
    return ModelRequest(messages=(Message("user", "Q"),), json_schema=schema, max_tokens=max_tokens,
                        logprobs=20)


def test_only_calls_whose_grammar_is_the_label_and_its_closing_are_label_calls() -> None:
    alone = prefilled(_request(verdict_schema(VALID, rationale=False)))
    split = label_first(_request(explained_verdict_schema(VALID, frozenset({"invalid"}))))
    assert alone is not None and split is not None
    assert label_call(alone[0]) == label_call(split[0]) == VALID
    noted = _request(verdict_schema(CHECK, ("sentence_says", "context_says")), 200)
    last, _ = field_after(noted, '{"sentence_says": "a", "context_says": "b', 1, 6)
    assert label_call(last) == CHECK  # a cross-check's last call
    # Not: a note's call, a rationale's, a reply that may go on after its label, a reply not
    # begun in the prompt.
    first_note = note_first(noted)
    assert first_note is not None and label_call(first_note[0]) == ()
    assert label_call(field_after(noted, '{"sentence_says": "a', 0, 3)[0]) == ()
    assert label_call(rationale_after(_request(verdict_schema(VALID)), "invalid", 1)[0]) == ()
    both = prefilled(_request(explained_verdict_schema(VALID, frozenset({"invalid"}))))
    assert both is not None and label_call(both[0]) == ()
    assert label_call(_request(verdict_schema(VALID, rationale=False))) == ()
    unbegun = ModelRequest(messages=(Message("user", "Q"),), grammar=alone[0].grammar)
    assert label_call(unbegun) == ()


def test_the_first_token_names_the_label_when_no_other_label_begins_with_it() -> None:
    labels = ("supported", "unsupported", "contradictory", "not_applicable")
    assert first_label("supported", labels) == ("supported", True)
    assert first_label('unsupported"}', labels) == ("unsupported", True)
    assert first_label("contr", labels) == ("contradictory", False)
    assert first_label("not", ("not_met", "not_applicable")) is None  # shared: read further
    assert first_label("", labels) is None and first_label("maybe", labels) is None


def test_a_passing_verdict_generates_its_first_token_alone() -> None:
    engine = Continuing({"valid": 0.65, "invalid": 0.35}, pieces=3)  # "valid" as "v", "a", ...
    judge = JudgeService(lambda n: engine)
    answer = asyncio.run(judge.ask("m", "sys", "Q", VALID, 5, positive=POSITIVE))
    (sent,) = engine.requests
    assert sent.max_tokens == 1 and answer.model_calls == 1
    assert answer.replies == ['{"verdict": "valid"}']  # the rest of the label and `"}` as forced
    assert answer.readings.count("valid") >= 3


def test_labels_sharing_a_first_token_are_asked_whole() -> None:
    labels = ("not_met", "not_applicable")
    p = {"not_met": 0.3, "not_applicable": 0.7}
    engine = Continuing(p, pieces=3)  # "not_applicable" as "not_", "appl", ...
    judge = JudgeService(lambda n: engine)
    answer = asyncio.run(judge.ask("m", "sys", "Q", labels, 5,
                                   positive=frozenset({"not_applicable"})))
    assert [r.max_tokens for r in engine.requests] == [1, reply_tokens() - 5]
    assert answer.replies == ['{"verdict": "not_applicable"}']
    reply = asyncio.run(Continuing(p, pieces=3).generate(engine.requests[1])).generations[0]
    assert reply.logprobs is not None
    expected = label_distribution((TokenLogprob('{"verdict": "', 0.0), *reply.logprobs), labels)
    assert answer.distribution == expected  # read along the whole call's tokens
