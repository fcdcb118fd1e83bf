"""What a `score` worker's case would cost on a compiled per-case path (issue 29 item 4, session
38): each layer done as the worker does it today and as msgspec would do it, in instructions.

    valgrind --tool=callgrind --dump-before=os_getppid --callgrind-out-file=OUT \\
        /root/.pyenv/versions/3.11.7/bin/python bench/bench_score_compiled.py N -- \\
        EXPECTED --actual ACTUAL --config_file_path CFG

(needs `pip install msgspec`; made a worker as `bench_score_phases.py` makes one.) Between calls
of `os.getppid()` (callgrind writes the part since the last: OUT.1, OUT.2, ...) the parts named in
`PARTS`: the worker's own `score_chunk` over the first N cases (the whole case today, warm); both
items of each case validated as `EvalCase` and decoded by msgspec into `Struct`s of the same
fields, in the same order, under the snake_case keys, with unknown keys refused (the fast path's
rule: a camelCase key, an extra, the legacy `tool_uses` form would fall back to the models, so the
Structs accept a subset of what the models accept, and their values are checked equal to the
models' first); each freed; the default criteria over the models (`scoring._scored`) and the same
six written again over the Structs (their scores and per-invocation scores checked equal first);
each case's result and summary written as the worker writes them and, as the same trees of plain
values, by `msgspec.json.Encoder.encode_into` a reused buffer then `msgspec.json.format` to the
document's indentation (the bytes compared). A part's total over N (or 2N for the items) is its
instructions a case (or an item). The Structs leave out the models' after-validators (the extras
check, the calls' memo), so their side is a lower bound.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_score_chunk import started_worker

PARTS = {1: "setup", 2: "score_chunk (the worker's case today)", 3: "items validated as models",
         4: "items decoded into Structs", 5: "models freed", 6: "Structs freed",
         7: "items decoded into Structs again, for the criteria", 8: "criteria over models",
         9: "criteria over Structs", 10: "results and summaries written (the worker's `_write`)",
         11: "results and summaries written by msgspec (encode_into + format)",
         12: "results and summaries encoded by msgspec, not indented",
         13: "results and summaries as plain values written by orjson",
         14: "the same, the invocations the decoded Structs (orjson's hook: `msgspec.to_builtins`)",
         15: "the results' and summaries' dicts and lists made again (a floor for assembling them)"}

Any_ = Any
_S = {"forbid_unknown_fields": True, "omit_defaults": False}


class FunctionCall(msgspec.Struct, **_S):
    id: str | None = None
    name: str | None = None
    args: dict[str, Any_] | None = None


class FunctionResponse(msgspec.Struct, **_S):
    id: str | None = None
    name: str | None = None
    response: dict[str, Any_] | None = None


class Blob(msgspec.Struct, **_S):
    mime_type: str | None = None
    data: str | None = None


class Part(msgspec.Struct, **_S):
    text: str | None = None
    thought: bool | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Blob | None = None


class Content(msgspec.Struct, **_S):
    role: str | None = None
    parts: list[Part] | None = None


class UsageMetadata(msgspec.Struct, **_S):
    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    total_token_count: int | None = None
    cached_content_token_count: int | None = None
    tool_use_prompt_token_count: int | None = None
    thoughts_token_count: int | None = None


class InvocationEvent(msgspec.Struct, **_S):
    author: str
    content: Content | None = None
    grounding_metadata: dict[str, Any_] | None = None
    usage_metadata: UsageMetadata | None = None
    model_version: str | None = None


class Intermediate(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    # The models' untagged union of two forms, as one Struct (msgspec takes one Struct an untagged
    # union): a real fast path would check that exactly one form's keys were given. (Each form's
    # keys are required by its model, so leaving out the None ones writes the model's bytes.)
    tool_uses: list[FunctionCall] | None = None
    tool_responses: list[FunctionResponse] | None = None
    intermediate_responses: list[tuple[str, list[Part]]] | None = None
    invocation_events: list[InvocationEvent] | None = None


class RubricContent(msgspec.Struct, **_S):
    text_property: str | None = None


class Rubric(msgspec.Struct, **_S):
    rubric_id: str
    rubric_content: RubricContent
    description: str | None = None
    type: str | None = None


class AgentDetails(msgspec.Struct, **_S):
    name: str
    instructions: str = ""
    tool_declarations: list[Any_] = []


class AppDetails(msgspec.Struct, **_S):
    agent_details: dict[str, AgentDetails]


class Invocation(msgspec.Struct, **_S):
    invocation_id: str = ""
    user_content: Content | None = None
    final_response: Content | None = None
    intermediate_data: Intermediate | None = None
    creation_timestamp: float = 0.0
    duration: float | None = None
    model_duration: float | None = None
    tool_duration: float | None = None
    rubrics: list[Rubric] | None = None
    app_details: AppDetails | None = None


class SessionInput(msgspec.Struct, **_S):
    app_name: str
    user_id: str
    session_id: str | None = None
    state: dict[str, Any_] = {}


class Case(msgspec.Struct, **_S):
    eval_id: str
    conversation: list[Invocation] | None = None
    conversation_scenario: dict[str, Any_] | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    rubrics: list[Rubric] | None = None
    final_session_state: dict[str, Any_] | None = None


def _dropped(case: dict[str, Any]) -> dict[str, Any]:
    """A Struct's case as builtins, its intermediate data's other form's keys left out."""
    for inv in case["conversation"] or ():
        if (d := inv["intermediate_data"]) is not None:
            inv["intermediate_data"] = {k: v for k, v in d.items() if v is not None}
            if d.get("intermediate_responses") is not None:
                inv["intermediate_data"]["intermediate_responses"] = [
                    tuple(x) for x in d["intermediate_responses"]]
    return case


def calls(inv: Invocation) -> list[FunctionCall]:
    d = inv.intermediate_data
    if d is None:
        return []
    if d.invocation_events is None:
        return d.tool_uses or []
    return [c for e in d.invocation_events if (ct := e.content) and (ps := ct.parts)
            for p in ps if (c := p.function_call)]


def criteria(score: Any, mean: Any, rouge1: Any) -> dict[str, Any]:
    """The six default criteria over the Structs (`score`: `criteria.base`'s two result types)."""
    result, per_inv = score

    def keys(inv: Invocation) -> tuple[Any, ...]:
        return tuple([(c.name, c.args) for c in calls(inv)])

    def text(c: Content | None) -> str:
        if not c or not c.parts:
            return ""
        return "\n".join(p.text for p in c.parts if p.text)

    def traj(act: list[Invocation], exp: list[Invocation]) -> Any:
        per = []
        matched = 0
        for a, e in zip(act, exp, strict=False):
            if keys(a) == keys(e):
                matched += 1
                per.append(per_inv(1.0))
            else:
                per.append(per_inv(0.0, None, None, None))
        return result(matched / len(per) if per else None, per)

    def rouge(act: list[Invocation], exp: list[Invocation]) -> Any:
        per = []
        for a, e in zip(act, exp, strict=False):
            p, r, f = rouge1(text(a.final_response), text(e.final_response))
            per.append(per_inv(f, None, None, partial(str, (f, p, r))))
        sc = [x.score for x in per]
        return result(sum(sc) / len(sc) if sc else None, per)

    def tcc(act: list[Invocation], exp: list[Invocation]) -> Any:
        per = [float(len(calls(inv))) for inv in act]
        return result(mean(per), [per_inv(v) for v in per])

    def icc(act: list[Invocation], exp: list[Invocation]) -> Any:
        per = [None if (d := inv.intermediate_data) is None or d.invocation_events is None else
               float(len([e for e in d.invocation_events if e.usage_metadata or e.model_version]))
               for inv in act]
        return result(mean(per), [per_inv(v) for v in per])

    def tok(act: list[Invocation], exp: list[Invocation]) -> Any:
        per = []
        rep = []
        for inv in act:
            d = inv.intermediate_data
            us = ([] if d is None or d.invocation_events is None
                  else [u for e in d.invocation_events if (u := e.usage_metadata)])
            if not us:
                per.append(per_inv(None))
                continue
            rows = [(u.prompt_token_count, u.cached_content_token_count, u.tool_use_prompt_token_count,
                     u.candidates_token_count, u.thoughts_token_count) for u in us]
            cols = [float(sum(pr)) if (pr := [v for v in col if v is not None]) else None
                    for col in zip(*rows, strict=True)]
            prompt, cached, tool, cand, reas = cols
            i = None if prompt is None and tool is None else (prompt or 0.0) + (tool or 0.0)
            o = None if cand is None and reas is None else (cand or 0.0) + (reas or 0.0)
            t = None if i is None and o is None else (i or 0.0) + (o or 0.0)
            dd = {"total_tokens": t, "input_tokens": i, "prompt_tokens": prompt, "cached_tokens": cached,
                  "tool_use_tokens": tool, "output_tokens": o, "candidates_tokens": cand,
                  "reasoning_tokens": reas}
            rep.append(dd)
            per.append(per_inv(t, {"rubric_scores": None, "token_usage_details": dd,
                                   "duration_details": None}))
        nn = len(per) or 1
        sums = {}
        for k in ("total_tokens", "input_tokens", "prompt_tokens", "cached_tokens", "tool_use_tokens",
                  "output_tokens", "candidates_tokens", "reasoning_tokens"):
            vs = [r[k] for r in rep if r[k] is not None]
            sums[k] = sum(vs) / nn if vs else None
        return result(sums["total_tokens"], per,
                      {"rubric_scores": None, "token_usage_details": sums, "duration_details": None})

    def dur(act: list[Invocation], exp: list[Invocation]) -> Any:
        per = []
        timed = wm = wt = 0
        tot = ms = ts = fs = 0.0
        for inv in act:
            sec = inv.duration
            if sec is None:
                per.append(per_inv(None))
                continue
            m, t = inv.model_duration, inv.tool_duration
            fw = max(sec - (m or 0.0) - (t or 0.0), 0.0)
            per.append(per_inv(sec, {"rubric_scores": None, "token_usage_details": None, "duration_details": {
                "total_seconds": sec, "model_seconds": m, "tool_seconds": t, "framework_seconds": fw}}))
            timed += 1
            tot += sec
            fs += fw
            if m is not None:
                wm += 1
                ms += m
            if t is not None:
                wt += 1
                ts += t
        o = tot / timed if timed else None
        return result(o, per, {"rubric_scores": None, "token_usage_details": None, "duration_details": {
            "total_seconds": o, "model_seconds": ms / wm if wm else None,
            "tool_seconds": ts / wt if wt else None, "framework_seconds": fs / timed if timed else None}})

    return {"tool_trajectory_avg_score": traj, "response_match_score": rouge, "tool_call_count_v1": tcc,
            "inference_call_count_v1": icc, "token_usage_v1": tok, "invocation_duration_v1": dur}


def main() -> None:
    n = int(sys.argv[1])
    _, expected, actual = started_worker([a for a in sys.argv[2:] if a != "--"], n)
    from pydantic import BaseModel

    from agenteval.criteria.base import CriterionResult, EvalContext, InvocationScore, mean
    from agenteval.criteria.rouge import rouge1_scores
    from agenteval.runner import scoring
    from agenteval.runner import shard_worker as w
    from agenteval.store import fast_json

    s = w._setup
    assert s is not None
    wanted, got = w._read(s.expected_path, expected), w._read(s.actual_path, actual)
    assert wanted is not None and got is not None
    items = [x for pair in zip(wanted, got, strict=True) for x in pair]
    validator = w.EvalCase.__pydantic_validator__
    decoder = msgspec.json.Decoder(Case)
    # The Structs hold what the models hold (the models' dump by field name, the defaults kept).
    for x in items:
        m, st = validator.validate_json(x), decoder.decode(x)
        if m.model_dump() != _dropped(msgspec.to_builtins(st)):
            raise SystemExit(f"a Struct holds other values than its model: {m.eval_id}")
    fns = criteria((CriterionResult, InvocationScore), mean, rouge1_scores)
    order = [fns[m.name] for m in s.metrics]
    models = [(validator.validate_json(a), validator.validate_json(b))
              for a, b in zip(wanted, got, strict=True)]
    structs = [(decoder.decode(a), decoder.decode(b)) for a, b in zip(wanted, got, strict=True)]
    ctxs = [EvalContext(r.conversation, c.conversation, None, None, (), None, {}, None) for c, r in models]
    for ctx, (c, r) in zip(ctxs, structs, strict=True):
        for x, y in zip([scoring._scored(m, ctx) for m in s.metrics],
                        [f(r.conversation, c.conversation) for f in order], strict=True):
            if x.score != y.score or [p.score for p in x.per_invocation] != [
                    p.score for p in y.per_invocation]:
                raise SystemExit(f"the criteria over Structs score otherwise: {c.eval_id}")
    scored = w.score_chunk(0, expected, actual)
    assert isinstance(scored, list)
    runs = [w.paired_case(c, r, i, s.eval_set_id, s.actual_path) for i, (c, r) in enumerate(models)]
    results = [w._done(w.score_case(r, s.metrics, s.policy)) for r in runs]
    sums = [w.summarise_case(r.eval_id, [r], s.gating, s.policy == "ignore") for r in results]
    fast_json._ready()
    hook, head, tail = fast_json._default, fast_json._HEAD, fast_json._TAIL

    def tree(o: Any) -> Any:
        if isinstance(o, BaseModel):
            return {k: tree(v) for k, v in hook(o).items()}
        if isinstance(o, (list, tuple)):
            return [tree(v) for v in o]
        if isinstance(o, dict):
            return {k: tree(v) for k, v in o.items()}
        return o

    trees = [tree(v) for pair in zip(results, sums, strict=True) for v in pair]
    today = [w._write(v) for pair in zip(results, sums, strict=True) for v in pair]
    encoder, buf = msgspec.json.Encoder(), bytearray()

    def written(value: Any) -> bytes:
        buf[:2] = b"[["
        encoder.encode_into(value, buf, 2)
        buf.extend(b"]]")
        return msgspec.json.format(buf, indent=2)[head:-tail]

    differ = sum(a != written(t) for a, t in zip(today, trees, strict=True))
    print(f"msgspec writes {differ} of {len(today)} results and summaries otherwise", file=sys.stderr)
    # The results with their invocations as the Structs decoded from the same items, written by
    # orjson (the hook gives a Struct's builtins, in C; the rest plain values).
    same: dict[int, Invocation] = {}
    for (mc, mr), (sc, sr) in zip(models, structs, strict=True):
        for m_inv, s_inv in zip([*(mc.conversation or ()), *(mr.conversation or ())],
                                [*(sc.conversation or ()), *(sr.conversation or ())], strict=True):
            same[id(m_inv)] = s_inv

    def held(o: Any) -> Any:
        if id(o) in same:
            return same[id(o)]
        if isinstance(o, BaseModel):
            return {k: held(v) for k, v in hook(o).items()}
        if isinstance(o, (list, tuple)):
            return [held(v) for v in o]
        if isinstance(o, dict):
            return {k: held(v) for k, v in o.items()}
        return o

    def rebuilt(o: dict[str, Any]) -> dict[str, Any]:
        """`o`'s dicts and lists made again (the Structs and other values shared)."""
        return {k: rebuilt(v) if type(v) is dict else
                [rebuilt(x) if type(x) is dict else x for x in v] if type(v) is list else v
                for k, v in o.items()}

    helds = [held(v) for pair in zip(results, sums, strict=True) for v in pair]
    found = sum(isinstance(x, Invocation) for t in helds[::2]
                for e in t["eval_metric_result_per_invocation"]
                for x in (e["actual_invocation"], e["expected_invocation"]))
    to_builtins = msgspec.to_builtins

    def orjson_written(value: Any, default: Any = None) -> bytes:
        return orjson.dumps([[value]], default=default, option=orjson.OPT_INDENT_2)[head:-tail]

    differ = sum(a != orjson_written(t, to_builtins) for a, t in zip(today, helds, strict=True))
    print(f"{found} invocations held as Structs; orjson writes {differ} of them otherwise", file=sys.stderr)
    del models, structs, runs, scored
    keep: list[Any] = []  # each part's output, freed after the last part
    mark = os.getppid
    mark()
    keep.append(w.score_chunk(0, expected, actual))
    mark()
    a = [validator.validate_json(x) for x in items]
    mark()
    b = [decoder.decode(x) for x in items]
    mark()
    del a
    mark()
    del b
    mark()
    st = [decoder.decode(x) for x in items]
    pairs = list(zip(st[::2], st[1::2], strict=True))
    mark()
    keep.append([[scoring._scored(m, ctx) for m in s.metrics] for ctx in ctxs])
    mark()
    keep.append([[f(r.conversation, c.conversation) for f in order] for c, r in pairs])
    mark()
    keep.append([w._write(v) for pair in zip(results, sums, strict=True) for v in pair])
    mark()
    keep.append([written(t) for t in trees])
    mark()
    keep.append([encoder.encode(t) for t in trees])
    mark()
    keep.append([orjson_written(t) for t in trees])
    mark()
    keep.append([orjson_written(t, to_builtins) for t in helds])
    mark()
    keep.append([rebuilt(t) for t in helds])
    mark()
    out = keep[-1]
    print(f"{n} cases, {len(items)} items; last part {len(out)}", file=sys.stderr)


if __name__ == "__main__":
    main()
