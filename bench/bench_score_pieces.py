"""CPU of the pieces of a case in `score`'s workers, in process (issue 29 item 4, session 20).

    python bench/bench_score_pieces.py [--n 2000] [--actual bench/out/actual.evalset.json]

Reads the first N cases of an indented eval set (the bench corpus) and times, with the cyclic GC
off as in `score`'s workers, best of 5, CPU µs: reading a case (pydantic's `validate_json` of
`EvalCase`, against pydantic-core's `from_json` of the same bytes into plain values, and
`read_item`'s `_unusual` check per item against once over the chunk's bytes); writing an
invocation at its depth in the document (pydantic-core's `to_json` + re-indent, against
`to_python(mode="json")` + orjson, if installed, whose bytes it checks); and one metric
result whose `criterion` holds an enum member, its value, or nothing.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from enum import Enum
from typing import Any

import pydantic_core

from agenteval.datasets.split import item_spans
from agenteval.datasets.stream import _unusual
from agenteval.schema import EvalCase, EvalMetricResult, EvalMetricResultDetails, EvalStatus, Invocation


def _best(n: int, fn: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best / n * 1e6


class _Match(str, Enum):
    EXACT = "EXACT"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--actual", default="bench/out/actual.evalset.json")
    args = parser.parse_args()
    gc.disable()
    spans = (item_spans(args.actual, "eval_cases") or [])[:args.n]
    with open(args.actual, "rb") as f:
        data = f.read(spans[-1][1])
    items = [data[a:b] for a, b in spans]
    chunk = data[spans[0][0]:spans[-1][1]]
    n = len(items)
    print(f"{n} cases, {len(chunk) / n:.0f} bytes a case; CPU µs a case (reading) or a piece (writing)")
    rows: list[tuple[str, int, Callable[[], Any]]] = [
        ("validate_json (EvalCase)", n, lambda: [EvalCase.model_validate_json(r) for r in items]),
        ("from_json (plain values)", n, lambda: [pydantic_core.from_json(r) for r in items]),
        ("_unusual, per item", n, lambda: [_unusual(r) for r in items]),
        ("_unusual, once over the chunk", n, lambda: _unusual(chunk)),
    ]
    for label, count, fn in rows:
        print(f"{label:32} {_best(count, fn):7.1f}")
    invocations = [i for r in items for i in EvalCase.model_validate_json(r).conversation or []]
    ser, pad = Invocation.__pydantic_serializer__, b"\n" + b" " * 12
    k = len(invocations)
    print(f"{k} invocations")
    def with_pydantic() -> list[bytes]:
        return [ser.to_json(i, indent=2).replace(b"\n", pad) for i in invocations]

    print(f"{'to_json(indent=2) + re-indent':32} {_best(k, with_pydantic):7.1f}")
    dicts = _best(k, lambda: [ser.to_python(i, mode="json") for i in invocations])
    print(f"{'to_python(mode=json)':32} {dicts:7.1f}")
    try:
        import orjson
    except ImportError:
        print("(orjson not installed)")
    else:
        def with_orjson() -> list[bytes]:
            return [orjson.dumps(ser.to_python(i, mode="json"), option=orjson.OPT_INDENT_2)
                    .replace(b"\n", pad) for i in invocations]

        same = with_orjson() == with_pydantic()
        print(f"{'to_python + orjson + re-indent':32} {_best(k, with_orjson):7.1f}  (same bytes: {same})")
    details = EvalMetricResultDetails()
    criterion = {"threshold": 1.0, "match_type": _Match.EXACT, "ignore_tools": [], "per_agent": False}
    result_ser = EvalMetricResult.__pydantic_serializer__
    for label, value in (("an enum member", criterion), ("its value", {**criterion, "match_type": "EXACT"}),
                         ("no criterion", None)):
        results = [EvalMetricResult.model_construct(
            metric_name="m", threshold=1.0, criterion=value, custom_function_path=None, score=0.5,
            eval_status=EvalStatus.FAILED, details=details)] * 20_000

        def written(results: list[EvalMetricResult] = results) -> list[bytes]:
            return [result_ser.to_json(r, indent=2) for r in results]

        print(f"{'metric result, criterion: ' + label:32} {_best(len(results), written):7.1f}")


if __name__ == "__main__":
    main()
