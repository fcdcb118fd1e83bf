"""Would msgspec read or write `score`'s items faster than what `score` uses? (issue 29 item 4
asks for "a faster JSON library where it pays, e.g. orjson / msgspec, measured")

In one process, over the first N items of the bench corpus's actual file (split as `score`'s
parent splits it), best of R rotating rounds, microseconds an item:

* read: `EvalCase`'s pydantic validator from the bytes (what a `score` worker does), pydantic-core's
  and orjson's and msgspec's parsers alone (Python values, no models), and msgspec decoding into
  `msgspec.Struct` classes shaped like the corpus's items (an upper bound: see below);
* the same Structs turned into agenteval's models (each model made as `schema.base.maker` makes one,
  without validation; the calls memo kept as the validator keeps it): what a worker would pay to
  read with msgspec and score with the models every criterion takes;
* write: orjson (what `score`'s writer calls) and msgspec encoding the same Python values, and
  msgspec encoding the Structs.

The Structs are NOT a possible replacement, only a bound: msgspec cannot express the wire format's
rules (keys accepted in both snake_case and camelCase, unknown keys kept on the open models, the
legacy/current `intermediate_data` union of two untagged objects, the after-validators), so they
take only the snake_case keys and the events form this corpus uses, and drop unknown keys.

    python bench/bench_msgspec.py [--n 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path
from typing import Any

import msgspec
import orjson
from pydantic_core import from_json

from agenteval import schema
from agenteval.datasets.split import item_spans
from agenteval.schema import EvalCase, SessionInput
from agenteval.schema.invocation import (
    IntermediateData,
    InvocationEvent,
    InvocationEvents,
    UsageMetadata,
    _event_calls,
    _remember,
)

CORPUS = Path(__file__).parent / "out" / "actual.evalset.json"


class FunctionCall(msgspec.Struct, omit_defaults=True):
    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None


class FunctionResponse(msgspec.Struct, omit_defaults=True):
    id: str | None = None
    name: str | None = None
    response: dict[str, Any] | None = None


class Part(msgspec.Struct, omit_defaults=True):
    text: str | None = None
    thought: bool | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None


class Content(msgspec.Struct, omit_defaults=True):
    role: str | None = None
    parts: list[Part] | None = None


class Usage(msgspec.Struct, omit_defaults=True):
    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    total_token_count: int | None = None


class Event(msgspec.Struct, omit_defaults=True):
    author: str
    content: Content | None = None
    usage_metadata: Usage | None = None
    model_version: str | None = None


class Data(msgspec.Struct):
    """Both `intermediate_data` forms in one (msgspec takes no untagged union of two objects)."""

    invocation_events: list[Event] | None = None
    tool_uses: list[FunctionCall] | None = None
    tool_responses: list[FunctionResponse] | None = None
    intermediate_responses: list[tuple[str, list[Part]]] | None = None


class Session(msgspec.Struct):
    app_name: str
    user_id: str
    session_id: str | None = None
    state: dict[str, Any] = {}


class Invocation(msgspec.Struct):
    user_content: Content
    invocation_id: str = ""
    final_response: Content | None = None
    intermediate_data: Data | None = None
    creation_timestamp: float = 0.0
    duration: float | None = None
    model_duration: float | None = None
    tool_duration: float | None = None


class Case(msgspec.Struct, forbid_unknown_fields=True):
    eval_id: str
    conversation: list[Invocation] | None = None
    session_input: Session | None = None
    creation_timestamp: float = 0.0
    final_session_state: dict[str, Any] | None = None


_set = object.__setattr__


def _maker(cls: Any) -> Any:
    """A model of `cls` holding a dict of all its fields, made without validation."""
    new, names = cls.__new__, set(cls.model_fields)
    extras = cls.model_config.get("extra") == "allow"

    def make(values: dict[str, Any]) -> Any:
        o = new(cls)
        _set(o, "__dict__", values)
        _set(o, "__pydantic_fields_set__", names)
        _set(o, "__pydantic_extra__", {} if extras else None)
        _set(o, "__pydantic_private__", None)
        return o

    return make


_MODELS = {Case: EvalCase, Invocation: schema.Invocation, Content: schema.Content, Part: schema.Part,
           FunctionCall: schema.FunctionCall, FunctionResponse: schema.FunctionResponse,
           Event: InvocationEvent, Usage: UsageMetadata, Session: SessionInput}
# Per Struct: its model's maker and, per field of the model, whether the Struct has it and else
# its default (a factory's is called).
_PLAN = {s: (_maker(m), [(name, name in s.__struct_fields__, f.default_factory, f.default)
                         for name, f in m.model_fields.items()]) for s, m in _MODELS.items()}
_EVENTS, _LEGACY = _maker(InvocationEvents), _maker(IntermediateData)


def as_models(x: Any) -> Any:
    """The Struct tree `x` as agenteval's models (values passed through)."""
    t = type(x)
    if t in _PLAN:
        make, fields = _PLAN[t]
        return make({name: as_models(getattr(x, name)) if has else (factory() if factory else default)
                     for name, has, factory, default in fields})
    if t is Data:
        if x.invocation_events is not None:
            events = [as_models(e) for e in x.invocation_events]
            o = _EVENTS({"invocation_events": events})
            _remember(o, events, *_event_calls(events))
            return o
        uses = [as_models(c) for c in x.tool_uses or ()]
        o = _LEGACY({"tool_uses": uses, "tool_responses": [as_models(r) for r in x.tool_responses or ()],
                     "intermediate_responses": [(a, [as_models(p) for p in ps])
                                                for a, ps in x.intermediate_responses or ()]})
        _remember(o, uses, uses)
        return o
    if t is list:
        return [as_models(v) for v in x]
    return x


def items(n: int) -> list[bytes]:
    spans = item_spans(CORPUS, "eval_cases")
    if spans is None:
        raise SystemExit(f"{CORPUS}: not splittable (make it with bench/bench_e2e.py)")
    data = CORPUS.read_bytes()
    return [data[a:b] for a, b in spans[:n]]


def per_item(fn: Any, raws: list[Any], rounds: int) -> float:
    """Best of `rounds` passes over `raws`, µs an item (the GC off, as a worker runs)."""
    best = []
    for _ in range(rounds):
        start = time.perf_counter()
        for r in raws:
            fn(r)
        best.append((time.perf_counter() - start) / len(raws) * 1e6)
    return min(best)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    raws = items(args.n)
    validate = EvalCase.__pydantic_validator__.validate_json
    structs = msgspec.json.Decoder(Case)
    values = [orjson.loads(r) for r in raws]
    decoded = [structs.decode(r) for r in raws]
    enc = msgspec.json.Encoder()
    # The Structs read the same cases (a check that the bound is a bound of the same work).
    for r, d in zip(raws, decoded, strict=True):
        if as_models(d).model_dump() != validate(r).model_dump():
            raise SystemExit(f"the Structs read {d.eval_id} otherwise than EvalCase")
    gc.disable()
    reads = {"pydantic EvalCase (score's read)": (validate, raws),
             "pydantic-core from_json (values)": (from_json, raws),
             "orjson.loads (values)": (orjson.loads, raws),
             "msgspec.json.decode (values)": (msgspec.json.decode, raws),
             "msgspec Structs (bound, see doc)": (structs.decode, raws),
             "msgspec Structs, then our models": (lambda r: as_models(structs.decode(r)), raws),
             "orjson.dumps (values)": (orjson.dumps, values),
             "msgspec encode (values)": (enc.encode, values),
             "msgspec encode (Structs)": (enc.encode, decoded)}
    times: dict[str, list[float]] = {k: [] for k in reads}
    for _ in range(3):  # rotating, so that drift spreads over every row
        for name, (fn, xs) in reads.items():
            times[name].append(per_item(fn, xs, args.rounds))
    base = statistics.median(times["pydantic EvalCase (score's read)"])
    print(f"{len(raws)} items, mean {sum(map(len, raws)) / len(raws):.0f} bytes; µs an item, "
          f"median of 3 bests of {args.rounds}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"  {name:36} {m:8.1f}   {m / base:5.2f} of score's read")


if __name__ == "__main__":
    main()
