"""The CPU of a `score` worker's case objects, in process (issue 29 item 4, session 24).

    python bench/bench_case_models.py [--n 1000] [--rounds 7] [--forms | --union] [--files E A]

Default: `EvalCase` validated from the bytes of the first N items of both files (as a worker
reads them, the byte checks left out), best of R rounds, CPU µs a case; with PYTHONPATH set to a
tree, that tree's models (A/B across trees, run alternately).

`--union`: `EvalCase`'s validator against the same schema inlined (a control) and inlined with
its unions tried left to right (`Invocation.intermediate_data`'s: the legacy form first, which
chooses the member smart mode chooses), in rotating order, R rounds: medians and the median
ratio round by round.

`--forms`: what holding a case's sub-objects as plain validated values (typed dicts made by
pydantic-core from the models' own schemas, every rule kept) instead of models would save: the
items read, their invocations written by orjson (the worker's hook for models, none for plain
values) and freed, for the models, for the sub-objects no deterministic criterion reads held
plain (`Invocation.user_content`, `Part.function_response`, `IntermediateData.tool_responses`),
and for every model plain (an upper bound: the criteria could not read it). Variants in
rotating order, R rounds, medians and the median ratio to the models' round by round. Every
variant's invocations are first checked to write the models' bytes.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson
from pydantic_core import SchemaValidator

_HELD = {"Invocation": ("user_content",), "Part": ("function_response",),
         "IntermediateData": ("tool_responses",)}


def _deref(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while schema.get("type") == "definition-ref":
        schema = defs[schema["schema_ref"]]
    return schema


def _each(value: Any, go: Callable[[dict[str, Any]], Any], key: str) -> Any:
    """`value` (a schema's entry) with the schemas in it passed through `go`."""
    if key == "fields" and isinstance(value, dict):
        return {name: go(f) for name, f in value.items()}
    if isinstance(value, dict) and "type" in value:
        return go(value)
    if isinstance(value, list) and value and all(isinstance(x, dict) and "type" in x for x in value):
        return [go(x) for x in value]
    if key == "choices" and isinstance(value, list):
        return [(go(x[0]), x[1]) if isinstance(x, tuple) else go(x) for x in value]
    return value


def plain(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every model a typed dict of the same fields, aliases, defaults and extras
    rule; the models' own validators (after) dropped."""
    schema = _deref(schema, defs)
    kind = schema.get("type")
    if kind == "definitions":
        return plain(schema["schema"], {**defs, **{s["ref"]: s for s in schema["definitions"]}})
    if kind == "function-after":
        return plain(schema["schema"], defs)
    if kind == "model":
        inner = schema["schema"]
        fields = {}
        for name, f in inner["fields"].items():
            value = plain(f["schema"], defs)
            fields[name] = {"type": "typed-dict-field", "schema": value,
                            "required": value.get("type") != "default",
                            **{k: f[k] for k in ("validation_alias", "serialization_alias") if k in f}}
        config = schema.get("config") or {}
        extra = inner.get("extra_behavior") or config.get("extra_fields_behavior")
        return {"type": "typed-dict", "fields": fields, "config": config,
                **({"extra_behavior": extra} if extra else {})}
    return {k: _each(v, lambda s: plain(s, defs), k) for k, v in schema.items()
            if k not in ("ref", "metadata", "serialization")}


def held(schema: dict[str, Any], defs: dict[str, Any], fields: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """`schema` inlined, with the named fields of the named models plain (`plain`)."""
    schema = _deref(schema, defs)
    if schema.get("type") == "definitions":
        return held(schema["schema"], {**defs, **{s["ref"]: s for s in schema["definitions"]}}, fields)
    out = {k: _each(v, lambda s: held(s, defs, fields), k) for k, v in schema.items() if k != "ref"}
    if schema.get("type") == "model":
        for name in fields.get(schema["cls"].__name__, ()):
            f = out["schema"]["fields"][name] = dict(out["schema"]["fields"][name])
            f["schema"] = plain(schema["schema"]["fields"][name]["schema"], defs)
    return out


def left_to_right(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """`schema` inlined, with every union tried left to right."""
    schema = _deref(schema, defs)
    if schema.get("type") == "definitions":
        return left_to_right(schema["schema"], {**defs, **{s["ref"]: s for s in schema["definitions"]}})
    out = {k: _each(v, lambda s: left_to_right(s, defs), k) for k, v in schema.items() if k != "ref"}
    if out.get("type") == "union":
        out["mode"] = "left_to_right"
    return out


def _config(schema: dict[str, Any]) -> Any:
    while "config" not in schema:
        schema = schema["schema"]
    return schema["config"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--forms", action="store_true")
    parser.add_argument("--union", action="store_true")
    parser.add_argument("--files", nargs=2, default=("bench/out/expected.evalset.json",
                                                     "bench/out/actual.evalset.json"))
    args = parser.parse_args()
    from agenteval.datasets.split import item_spans
    from agenteval.runner.shard_worker import _read
    from agenteval.schema import EvalCase

    items = [x for pair in zip(*[_read(p, (item_spans(p, "eval_cases") or [])[:args.n]) or []
                                 for p in args.files], strict=True) for x in pair]
    n = len(items) // 2
    clock = time.process_time
    gc.disable()  # as in the workers
    core = EvalCase.__pydantic_core_schema__
    if args.union:
        inlined, config = held(core, {}, {}), _config(held(core, {}, {}))
        _compare(items, {"as declared": EvalCase.__pydantic_validator__,
                         "inlined": SchemaValidator(inlined, config),
                         "left to right": SchemaValidator(left_to_right(core, {}), config)}, args.rounds)
        return
    if not args.forms:
        validate, best = EvalCase.__pydantic_validator__.validate_json, float("inf")
        for _ in range(args.rounds):
            started = clock()
            cases = [validate(x) for x in items]
            best = min(best, clock() - started)
            del cases
        print(f"{n} cases: EvalCase validated from both items' bytes, best of {args.rounds}: "
              f"{best / n * 1e6:.1f} µs CPU a case")
        return
    from agenteval.store import fast_json

    config = _config(held(core, {}, {}))
    variants = {"models": EvalCase.__pydantic_validator__,
                "held": SchemaValidator(held(core, {}, _HELD), config),
                "all plain": SchemaValidator(plain(core, {}), config)}
    fast_json._ready()
    hook = fast_json._default

    def written(case: Any) -> bytes:
        conversation = case["conversation"] if isinstance(case, dict) else case.conversation
        return orjson.dumps([[conversation]], default=hook, option=orjson.OPT_INDENT_2)

    for x in items:
        first = written(variants["models"].validate_json(x))
        if any(written(v.validate_json(x)) != first for v in variants.values()):
            raise SystemExit("a variant writes other bytes")
    spent: dict[tuple[str, str], list[float]] = {}
    names = list(variants)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            t0 = clock()
            cases = [variants[name].validate_json(x) for x in items]
            t1 = clock()
            out = [written(c) for c in cases]
            t2 = clock()
            del cases, out
            t3 = clock()
            for stage, dt in (("read", t1 - t0), ("write", t2 - t1), ("free", t3 - t2), ("sum", t3 - t0)):
                spent.setdefault((name, stage), []).append(dt / n * 1e6)
    print(f"{n} cases, {args.rounds} rounds, median CPU µs a case (ratio to the models' round by round):")
    for name in names:
        print(f"  {name:10}", "  ".join(
            f"{stage} {statistics.median(spent[name, stage]):6.1f} "
            f"({_ratio(spent[name, stage], spent['models', stage]):.3f})"
            for stage in ("read", "write", "free", "sum")))


def _ratio(a: list[float], b: list[float]) -> float:
    """The median of a/b round by round."""
    return statistics.median([x / y for x, y in zip(a, b, strict=True)])


def _compare(items: list[bytes], variants: dict[str, Any], rounds: int) -> None:
    n, clock, names = len(items) // 2, time.process_time, list(variants)
    for x in items:  # the same cases
        if len({variants[name].validate_json(x).model_dump_json() for name in names}) != 1:
            raise SystemExit("the variants read a case otherwise")
    spent: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            started = clock()
            cases = [variants[name].validate_json(x) for x in items]
            spent[name].append((clock() - started) / n * 1e6)
            del cases
    for name in names:
        ratio = _ratio(spent[name], spent[names[0]])
        print(f"  {name:12} median {statistics.median(spent[name]):6.1f} µs CPU a case, "
              f"best {min(spent[name]):6.1f}, ratio to {names[0]!r} {ratio:.3f}")


if __name__ == "__main__":
    main()
