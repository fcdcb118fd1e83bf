"""Asking judges: sampling, caching and retries behind one call.

`JudgeService.ask` returns `num_samples` parsed verdicts for a prompt; `ask_note` one
preparatory note (free text under a one-field schema) that a later question builds on.

One pass where the backend gives log-probabilities (the embedded engine, OpenAI-compatible
servers that support `logprobs`): the judge writes one greedy reply, and its label's
probabilities at the verdict token (`logprobs.label_distribution`) are the answer's
`distribution`; the `num_samples` samples are drawn from it (at the sampling temperature, with
a seed taken from the question, so re-scoring draws the same ones) instead of being generated
one by one. The verdict's confidence is then its probability. A backend that returns no
log-probabilities (or refuses them) is remembered, and its samples are generated as below.

How the samples are drawn (`logprobs.draw`): the label probabilities at the verdict token,
sharpened to the sampling temperature (0.7) as a sampler would, give `num_samples` labels by
systematic sampling with an offset seeded by the question: each label comes up floor or ceil of
`num_samples` x its probability times. `num_samples` thus keeps its meaning, votes drawn from
the judge model's own distribution over the labels, at the cost of one prompt evaluation and a
few generated tokens instead of `num_samples` written replies; the same question always draws
the same votes.

Rationales only where they are shown (`rationales`), in the one call: reports show a verdict's
rationale for negative verdicts (`criteria.judge.explain`), so by default (`"negative"`) the
one-pass reply's schema (`verdict.explained_verdict_schema`) ends the object right after a
positive label (`{"verdict": "valid"}`: generation ends a token after it) and continues with the
capped rationale after any other label. What comes after the label cannot change it: the tokens
up to the label, and so the label's probabilities, are those of the label-only reply (measured
on the embedded judge, `test_speed_real`). A failing verdict thus costs its rationale's few
tokens, not a second prompt. `"always"` asks a rationale after every label, `"never"` after none
(the label-only schema); so does `"negative"` for a question whose positive labels are not
known (`positive` None: every label's rationale) or are all its labels (none). `"never"` also
ends the samples written by a judge without log-probabilities at their label. A criterion's
`judge_model_options.rationales` (or `--judge_rationales`) sets it per question (`ask`'s
`rationales`). Questions whose notes come before the label are unchanged (the notes are the
judge's reasoning and its record's rationale).

On an engine that continues a trailing assistant message (`prefills_replies`: the embedded
one), a one-pass reply's fixed JSON head is sent in the prompt with a grammar for the rest
(`engine.prefill`): the same tokens up to the label, not generated one by one (a passing
verdict generates 3 tokens instead of 8); the reply, its cache key and its votes are as before.
There a verdict with a rationale after its label is two calls (`_written`): the label, then the
reply begun up to its rationale (`prefill.label_first`, `prefill.rationale_after`), in the slot
that holds the rest of the prompt: `", "rationale": "` is evaluated with the prompt instead of
decoded token by token, and the reply text and label probabilities are the one reply's (so it is
cached under the same key and draws the same votes). A notes-first reply (the hallucination
cross-check) is one call per field there (`_noted`, `prefill.note_first`): each note stopped at
its closing quote, the field names between them evaluated with the prompt; the same text, its
label's probabilities within a few hundredths (see `engine.prefill`). A call that writes a label
and its closing `"}` alone (`prefill.label_call`: a label-only verdict, the label of a split one,
a cross-check's last call) is asked for one token (`_label`): the label's first token decides it
and carries its probabilities, the rest is forced, so the reply is the same text without the
2-4 decode steps of its forced tokens (a passing verdict generates 1 token instead of 3). A
remote judge writes its reply whole.

Each generated sample is cached on disk under (model, prompt, sampling settings, sample index),
a one-pass reply with its label probabilities under its own key (its schema included, so a reply
cached in another shape, e.g. the label alone of a verdict now explained, is not served for it),
so re-scoring unchanged results makes no model calls. A reply that does not parse is retried
once with a fresh sample; one that still does not parse is kept as None and the raw text is
returned for the audit record. A call that fails (the server's error, a timeout, a refused
connection, after the backend's retries) does not raise: the answer carries `error`, saying what
happened, so the question becomes a judge error with its cause and its audit record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from itertools import count
from typing import Protocol

from agenteval.criteria.judge.engine.logprobs import draw, label_distribution
from agenteval.criteria.judge.engine.prefill import (
    field_after,
    first_label,
    label_call,
    label_first,
    label_token,
    note_first,
    prefilled,
    rationale_after,
)
from agenteval.criteria.judge.engine.verdict import (
    RATIONALE_TOKENS,
    VERDICT_TOKENS,
    Verdict,
    explained_verdict_schema,
    note_schema,
    parse_note,
    parse_verdict,
    reply_tokens,
    verdict_schema,
)
from agenteval.errors import describe
from agenteval.models.base import (
    LLM,
    Message,
    ModelError,
    ModelRequest,
    ModelUnavailable,
    TokenLogprob,
    TransientModelError,
)
from agenteval.schema.criterion import Rationales
from agenteval.schema.progress import JudgeCallDone


class JudgeCache(Protocol):
    """Key-value storage of judge replies (see `agenteval.store.JudgeCacheDB`)."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, value: str) -> None: ...


@dataclass
class Sample:
    """One judge sample: raw reply and its reading (None if it could not be read). A `drawn`
    sample was drawn from the answer's label distribution, not written: its `raw` is the one
    written reply for the first drawn sample and empty for the others."""

    raw: str
    verdict: Verdict | None
    cached: bool = False
    drawn: bool = False


@dataclass
class JudgeAnswer:
    """All samples of one judge question, with the prompt and its token cost."""

    prompt: str
    samples: list[Sample]
    prompt_tokens: int = 0
    model_calls: int = 0
    error: str | None = None  # why the judge could not be asked (the samples are then partial)
    distribution: dict[str, float] | None = None  # label probabilities at the verdict token

    @property
    def replies(self) -> list[str]:
        """The raw replies for the audit record: every written one (a drawn sample's is the
        one reply it was drawn from, kept once)."""
        return [s.raw for s in self.samples if s.raw or not s.drawn]

    @property
    def readings(self) -> list[str | None]:
        """Each sample's label, None where it could not be read."""
        return [s.verdict.label if s.verdict else None for s in self.samples]

    @property
    def cached(self) -> bool:
        """Whether every sample came from the cache (no model call)."""
        return all(s.cached for s in self.samples)


@dataclass(eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class JudgeService:
    """Asks judge models, with caching and a retry for bad replies.

    `resolve` gives the model for a name (a run passes its `ModelPool.get`, so judges share the
    run's per-endpoint limits); `listener`, if set, is told of every answered question.
    `calls` and `prompt_tokens` count the model calls made (cache hits cost none)."""

    resolve: Callable[[str], LLM]
    cache: JudgeCache | None = None
    max_tokens: int = 200
    listener: Callable[[JudgeCallDone], None] | None = None
    early_stop: bool = True  # stop sampling once a majority agrees (see `_fill`)
    logprobs: int = 20  # alternatives per token asked for in one-pass verdicts; 0: never one pass
    # Tokens a verdict-first reply may spend on its rationale after the label (a hard cap, see
    # `verdict.reply_tokens`): the label is decided first, so the cap never changes a verdict.
    rationale_tokens: int = RATIONALE_TOKENS
    # Which one-pass verdicts get a written rationale (see the module docstring).
    # A question's own setting (`ask`'s `rationales`, from its criterion's judge options)
    # overrides it.
    rationales: Rationales = "negative"
    calls: int = field(default=0, init=False)
    prompt_tokens: int = field(default=0, init=False)
    # Models that answered without log-probabilities: their samples are generated.
    _no_logprobs: set[str] = field(default_factory=set, init=False)
    # Models whose server refused a reply schema with alternatives (`anyOf`): asked with the
    # plain label-and-rationale schema from then on (see `_one_pass`).
    _no_alternatives: set[str] = field(default_factory=set, init=False)
    # Models that refused a reply begun in the prompt (see `prefills`): asked whole from then on.
    _no_prefill: set[str] = field(default_factory=set, init=False)

    def _layers(self, model: str) -> Iterator[object]:
        """`model` resolved, then each model it wraps (`inner`); nothing when it cannot be
        resolved (a question to it then fails with its own error)."""
        try:
            llm: object | None = self.resolve(model)
        except Exception:
            return
        while llm is not None:
            yield llm
            llm = getattr(llm, "inner", None)

    def batch_size(self, model: str) -> int:
        """How many questions to `model` are worth having in flight at once: an embedded engine's
        slots (it decodes them together in one batch, so on a CPU a batch of generated tokens
        costs little more than one: reading the weights, not arithmetic, bounds it), else 1.
        Read through wrappers (`inner`); 1 when the model cannot be resolved."""
        for llm in self._layers(model):
            slots = getattr(llm, "slots", None)
            if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1:
                return slots
        return 1

    def prefills(self, model: str) -> bool:
        """Whether a one-pass reply to `model` is begun in the prompt (`engine.prefill`): the
        model (read through wrappers, `inner`) says it continues a trailing assistant message
        under a grammar (`prefills_replies`, the embedded engine), and has not refused one."""
        return model not in self._no_prefill and any(
            getattr(llm, "prefills_replies", False) is True for llm in self._layers(model))

    def _key(self, model: str, request: ModelRequest, index: int | str) -> str:
        payload = json.dumps({
            "model": model, "messages": [(m.role, m.content) for m in request.messages],
            "schema": request.json_schema, "temperature": request.temperature,
            "max_tokens": request.max_tokens, "index": index,
        }, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    async def _replies(self, model: str, llm: LLM, request: ModelRequest, indices: range,
                       answer: JudgeAnswer, have: dict[int, tuple[str, bool]]) -> dict[int, tuple[str, bool]]:
        """Raw replies of the samples `indices` as (text, from cache), the missing ones drawn
        in one request (backends draw them from a single prefill); `have` are replies already
        written for some of them."""
        replies = {i: have[i] for i in indices if i in have}
        for i in indices:
            if i in replies:
                continue
            hit = self.cache.get(self._key(model, request, i)) if self.cache else None
            if hit is not None:
                replies[i] = (hit, True)
        missing = [i for i in indices if i not in replies]
        if missing:
            response = await llm.generate(replace(request, n=len(missing), seed=missing[0]))
            answer.model_calls += 1
            answer.prompt_tokens += response.usage.prompt_tokens
            for i, gen in zip(missing, response.generations, strict=False):
                replies[i] = (gen.text, False)
        return replies

    async def _read(self, model: str, answer: JudgeAnswer, fill: Callable[[], Awaitable[None]]) -> None:
        """Runs `fill` (which fills `answer.samples`), counting its calls and telling the
        listener. A failed call sets `answer.error` instead of raising."""
        try:
            await fill()
        except Exception as e:  # the judge's failure belongs to this question's record
            answer.error = f"judge {model}: {e}" if isinstance(e, ModelError) else \
                f"judge {model}: {describe(e)}"
        self.calls += answer.model_calls
        self.prompt_tokens += answer.prompt_tokens
        if self.listener is not None:
            self.listener(JudgeCallDone(model=model, model_calls=answer.model_calls,
                                        prompt_tokens=answer.prompt_tokens,
                                        samples=len(answer.samples),
                                        cached=answer.model_calls == 0 and answer.error is None))

    async def _fill(self, model: str, llm: LLM, request: ModelRequest, num_samples: int,
                    answer: JudgeAnswer, read: Callable[[str], Verdict | None],
                    early_stop: bool, have: dict[int, tuple[str, bool]] | None = None) -> None:
        # Early stop: a majority of the samples first; when they all read the same label the
        # vote is decided whatever the rest would say, so the rest are not drawn (a sure
        # 5-sample verdict costs 3 samples). Otherwise the rest are drawn and all are voted on.
        # Not when the caller wants the verdict's confidence measured on every sample.
        first = num_samples if num_samples < 3 or not early_stop else num_samples // 2 + 1
        await self._fill_range(model, llm, request, range(first), answer, read, have or {})
        labels = {s.verdict.label if s.verdict else None for s in answer.samples}
        if first < num_samples and (len(labels) != 1 or None in labels):
            await self._fill_range(model, llm, request, range(first, num_samples), answer, read, {})

    async def _fill_range(self, model: str, llm: LLM, request: ModelRequest, indices: range,
                          answer: JudgeAnswer, read: Callable[[str], Verdict | None],
                          have: dict[int, tuple[str, bool]]) -> None:
        replies = await self._replies(model, llm, request, indices, answer, have)
        for i in indices:
            raw, cached = replies.get(i, ("", False))
            verdict = read(raw)
            if verdict is None:  # one retry with a different seed
                retry = await llm.generate(replace(request, n=1, seed=1000 + i, temperature=0.7))
                answer.model_calls += 1
                answer.prompt_tokens += retry.usage.prompt_tokens
                raw, cached = retry.text, False
                verdict = read(raw)
            if verdict is not None and not cached and self.cache is not None:
                self.cache.put(self._key(model, request, i), raw)
            answer.samples.append(Sample(raw, verdict, cached))

    @staticmethod
    def _messages(system: str, prompt: str,
                  examples: tuple[tuple[str, str], ...]) -> tuple[Message, ...]:
        shots = tuple(m for user, reply in examples
                      for m in (Message("user", user), Message("assistant", reply)))
        return (Message("system", system), *shots, Message("user", prompt))

    async def ask(self, model: str, system: str, prompt: str, labels: tuple[str, ...],
                  num_samples: int, notes: tuple[str, ...] = (),
                  examples: tuple[tuple[str, str], ...] = (), early_stop: bool = True,
                  positive: frozenset[str] | None = None,
                  rationales: Rationales | None = None) -> JudgeAnswer:
        """`num_samples` verdicts on `prompt`; greedy when one sample, sampled otherwise.
        `notes` are the fields the judge writes before its label (see `verdict_schema`);
        `examples` are solved (prompt, reply) pairs sent as earlier turns of the chat. One pass
        where the backend gives log-probabilities (see the module docstring); otherwise, with
        `early_stop` (and the service's), sampling stops once a majority agrees. `positive`
        are the passing labels (a one-pass verdict on another label gets its rationale in the
        same reply under `rationales="negative"`; unknown: every verdict gets one).
        `rationales` overrides the service's setting for this question."""
        llm = self.resolve(model)
        wanted = self.rationales if rationales is None else rationales
        alone = wanted == "never" and not notes  # written samples end at the label too
        request = ModelRequest(
            messages=self._messages(system, prompt, examples),
            json_schema=verdict_schema(labels, notes, rationale=not alone),
            temperature=0.0 if num_samples == 1 else 0.7,
            # Notes come before the label and are capped by the schema; a rationale comes after
            # it, so generation stops at the label plus `rationale_tokens`.
            max_tokens=self.max_tokens if notes else
            min(self.max_tokens, VERDICT_TOKENS if alone else reply_tokens(self.rationale_tokens)),
        )
        answer = JudgeAnswer(prompt=prompt, samples=[])

        def read(raw: str) -> Verdict | None:
            return parse_verdict(raw, labels, notes)

        async def fill() -> None:
            have: dict[int, tuple[str, bool]] | None = {}
            if self.logprobs > 0 and model not in self._no_logprobs:
                have = await self._one_pass(model, llm, request, num_samples, answer, read, labels,
                                            bool(notes), positive, wanted)
                if have is None:
                    return
            await self._fill(model, llm, request, num_samples, answer, read,
                             early_stop and self.early_stop, have)

        await self._read(model, answer, fill)
        return answer

    async def _one_pass(self, model: str, llm: LLM, request: ModelRequest, num_samples: int,
                        answer: JudgeAnswer, read: Callable[[str], Verdict | None],
                        labels: tuple[str, ...], noted: bool, positive: frozenset[str] | None,
                        rationales: Rationales) -> dict[int, tuple[str, bool]] | None:
        """One greedy reply with its label distribution, the samples drawn from it (see the
        module docstring); None when done. Otherwise the samples are to be written (the backend
        gave no log-probabilities, the reply cannot be read, or they were written and cached
        before) and nothing is kept: the reply is returned as the first sample's, if any."""
        # After a label whose rationale is not wanted the schema ends the reply (not a stop
        # string: stopping at the label with one made llama.cpp report wrong probabilities,
        # 0.9999 for a label it gives 0.64 without); after the others the rationale follows.
        one = replace(request, temperature=0.0, n=1, seed=None, logprobs=self.logprobs)
        explained: frozenset[str] = frozenset()
        if not noted:
            explained = self._explained(labels, positive, rationales)
            if explained and model in self._no_alternatives:
                explained = frozenset(labels)  # the plain schema: a rationale after every label
            one = replace(one, json_schema=explained_verdict_schema(labels, explained),
                          max_tokens=request.max_tokens if explained else
                          min(request.max_tokens, VERDICT_TOKENS))
        key = self._key(model, one, f"one-pass:{self.logprobs}")
        hit = self.cache.get(key) if self.cache else None
        stored = json.loads(hit) if hit is not None else None
        if isinstance(stored, dict) and isinstance(stored.get("labels"), dict):
            raw, distribution, cached = str(stored.get("raw", "")), stored["labels"], True
        elif self.cache is not None and self.cache.get(self._key(model, request, 0)) is not None:
            return {}  # answered by written samples before (a judge without log-probabilities)
        else:
            # The reply's fixed head in the prompt (the same tokens, not generated one by one);
            # cached and seeded as the request written whole, whose reply text it returns.
            begun = prefilled(one) if self.prefills(model) else None
            try:
                raw, tokens = await self._written(llm, one, begun, explained, answer)
            except ModelError as e:
                if begun and not isinstance(e, TransientModelError | ModelUnavailable):
                    self._no_prefill.add(model)
                    return await self._one_pass(model, llm, request, num_samples, answer, read,
                                                labels, noted, positive, rationales)
                # A server may refuse a schema with alternatives (OpenAI's strict structured
                # outputs refuse an `anyOf` at the root): that model is asked with the plain
                # schema from then on, which allows the same text up to the label (so the same
                # label and probabilities) and writes a rationale after every label.
                if isinstance(e, TransientModelError | ModelUnavailable) or \
                        "anyOf" not in (one.json_schema or {}) or model in self._no_alternatives:
                    raise
                self._no_alternatives.add(model)
                return await self._one_pass(model, llm, request, num_samples, answer, read, labels,
                                            noted, positive, rationales)
            cached = False
            if tokens is None:
                self._no_logprobs.add(model)
            distribution = label_distribution(tokens, labels) if tokens else None
        verdict = read(raw)
        if verdict is None or distribution is None:
            return {0: (raw, False)}  # the reply is the first sample
        if not cached and self.cache is not None:
            self.cache.put(key, json.dumps({"raw": raw, "labels": distribution}))
        answer.distribution = distribution
        if num_samples == 1:
            answer.samples.append(Sample(raw, verdict, cached))
            return None
        # A rationale written after the label argues for that label; notes written before it
        # are observations that hold whichever label is drawn.
        other = "" if noted else f"(drawn from the verdict's probabilities; the reply says {verdict.label})"
        drawn = draw(distribution, num_samples, request.temperature,
                     self._seed(model, one, noted, labels, rationales))
        for i, label in enumerate(drawn):
            rationale = verdict.rationale if noted or label == verdict.label else other
            answer.samples.append(Sample(raw if i == 0 else "", Verdict(label, rationale), cached,
                                         drawn=True))
        return None

    @staticmethod
    async def _written(llm: LLM, one: ModelRequest, begun: tuple[ModelRequest, str] | None,
                       explained: frozenset[str], answer: JudgeAnswer
                       ) -> tuple[str, tuple[TokenLogprob, ...] | None]:
        """The one-pass reply to `one` and its generated tokens' log-probabilities (None when
        the backend gave none). Begun in the prompt where `begun` is given; then a verdict whose
        rationale follows its label (after the labels in `explained`) is asked in two calls,
        the label and then its rationale (`prefill.label_first`, `prefill.rationale_after`):
        the same text and label probabilities, the forced tokens between them not decoded one
        by one; the label call generates the label's first token alone (`_label`). The tokens
        are those up to the label."""
        noted = note_first(one) if begun and not explained else None
        if noted:
            split = await JudgeService._noted(llm, one, noted, answer)
            if split is not None:
                return split
        first = label_first(one) if begun and explained else None
        request, head = first or begun or (one, "")
        # A label call: its first token alone decides the label (`JudgeService._label`).
        short = await JudgeService._label(llm, request, head, answer) if head else None
        whole = short is not None and short[2]
        if short is None or (first and not whole and short[0][len(head):-2] in explained):
            # The reply written whole; or, for a label of several tokens that gets a rationale,
            # the label call again, to count its tokens (the rationale's cap counts them).
            response = await llm.generate(request)
            answer.model_calls += 1
            answer.prompt_tokens += response.usage.prompt_tokens
            generation = response.generations[0] if response.generations else None
            raw = generation.text if generation else ""
            new = generation.logprobs if generation else None
            if head:  # llama.cpp returns the continued message whole; the tokens are new ones
                raw = raw if raw.startswith(head) else head + raw
            tokens = None if new is None else ((TokenLogprob(head, 0.0),) if head else ()) + tuple(new)
        else:
            new = None
        if short is not None:  # its probabilities, taken from the prompt as evaluated first
            raw, tokens = short[0], short[1]
        label = raw[len(head):].split('"', 1)[0] if first else ""
        if label not in explained:
            return raw, tokens
        # The tokens the label took (`"}` and the end of turn follow it in the first call).
        written = 1 if new is None else next(
            (i + 1 for i in range(len(new)) if len("".join(t.token for t in new[:i + 1])) >= len(label)),
            len(new))
        second, head = rationale_after(one, label, written)
        response = await llm.generate(second)
        answer.model_calls += 1
        answer.prompt_tokens += response.usage.prompt_tokens
        text = response.generations[0].text if response.generations else ""
        return (text if text.startswith(head) else head + text), tokens

    @staticmethod
    async def _noted(llm: LLM, one: ModelRequest, first: tuple[ModelRequest, str],
                     answer: JudgeAnswer) -> tuple[str, tuple[TokenLogprob, ...] | None] | None:
        """A notes-first reply to `one` in one call per field (`prefill.note_first`,
        `prefill.field_after`): the same reply text, the field names between the notes not
        decoded one by one; its tokens are the label call's. None when a note ended at an
        escaped quote or at the token cap (the reply is then to be written whole)."""
        request, head = first
        used = 0
        for index in count():
            short = await JudgeService._label(llm, request, head, answer)
            if short is not None:  # the label's call, its first token alone
                return short[0], short[1]
            response = await llm.generate(request)
            answer.model_calls += 1
            answer.prompt_tokens += response.usage.prompt_tokens
            generation = response.generations[0] if response.generations else None
            text = generation.text if generation else ""
            text = text if text.startswith(head) else head + text
            if not request.stop:  # the label's call: the reply is whole
                new = generation.logprobs if generation else None
                return text, None if new is None else (TokenLogprob(head, 0.0), *new)
            value = text[len(head):]
            escaped = (len(value) - len(value.rstrip("\\"))) % 2 == 1
            if generation is None or generation.finish_reason == "length" or escaped or '"' in value:
                return None
            used += response.usage.completion_tokens
            request, head = field_after(one, text, index, used)
        return None  # (not reached: a schema has finitely many fields)

    @staticmethod
    async def _label(llm: LLM, request: ModelRequest, head: str, answer: JudgeAnswer
                     ) -> tuple[str, tuple[TokenLogprob, ...], bool] | None:
        """A label call (`prefill.label_call`) asked for its first token alone
        (`prefill.label_token`): the reply (`head`, the label, `"}`: all the grammar allows after
        that token), its tokens (the head, then the label's first token, whose alternatives give
        the label's probabilities), and whether that token wrote the whole label. None for any
        other request, and when the token leaves the label open (labels sharing a first token)
        or came without log-probabilities: the call is then asked whole (one call more)."""
        labels = label_call(request)
        if not labels or request.logprobs <= 0 or request.max_tokens <= 1:
            return None
        response = await llm.generate(label_token(request))
        answer.model_calls += 1
        answer.prompt_tokens += response.usage.prompt_tokens
        generation = response.generations[0] if response.generations else None
        new = generation.logprobs if generation else None
        text = generation.text if generation else ""
        text = text[len(head):] if text.startswith(head) else text
        read = first_label(text, labels) if new else None
        if read is None or new is None:
            return None
        label, whole = read
        return head + label + '"}', (TokenLogprob(head, 0.0), new[0]), whole

    def _seed(self, model: str, one: ModelRequest, noted: bool, labels: tuple[str, ...],
              rationales: Rationales) -> int:
        """The seed of a one-pass verdict's votes: from the question and what decides its label,
        so what may follow the label (a rationale or none) does not change the votes drawn. The
        label-only request's, as when the rationale was a second call (the shipped certificates
        were measured with those votes), except under `rationales="always"`, as before."""
        if not noted and rationales != "always":
            one = replace(one, json_schema=verdict_schema(labels, rationale=False),
                          max_tokens=min(one.max_tokens, VERDICT_TOKENS))
        return int(self._key(model, one, f"one-pass:{self.logprobs}")[:15], 16)

    @staticmethod
    def _explained(labels: tuple[str, ...], positive: frozenset[str] | None,
                   rationales: Rationales) -> frozenset[str]:
        """The labels after which a one-pass reply writes its rationale (see `rationales`)."""
        if rationales == "never":
            return frozenset()
        if rationales == "always" or positive is None:
            return frozenset(labels)
        return frozenset(labels) - positive

    async def ask_note(self, model: str, system: str, prompt: str, field: str,
                       examples: tuple[tuple[str, str], ...] = ()) -> JudgeAnswer:
        """One greedy answer to `prompt` written as `{field: text}`: a judge's preparatory note
        (e.g. a rubric made concrete), not a verdict. Its one sample's `verdict` holds the text
        as `rationale` (label `field`), or is None when the reply could not be read."""
        llm = self.resolve(model)
        request = ModelRequest(
            messages=self._messages(system, prompt, examples),
            json_schema=note_schema(field), temperature=0.0, max_tokens=self.max_tokens,
        )
        answer = JudgeAnswer(prompt=prompt, samples=[])
        await self._read(model, answer, lambda: self._fill(
            model, llm, request, 1, answer, lambda raw: parse_note(raw, field), False))
        return answer
