"""Where serialising a case result for `score`'s document goes (issue 29 item 4, session 16).

Reads the first N case results of a result document (default: the one-process e2e output in
`bench/out`), validates them as `EvalCaseResult`, and times in process (best of 3, CPU µs a
case) the writer's call (`placed_model_json`) beside alternatives: pydantic-core's serializer
on the whole case with and without indent, `to_python(mode="json")` + orjson (if installed),
the case without its per-invocation results, and the invocations alone. Checks whether each
alternative that claims the document's bytes gives them.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from typing import Any

import ijson

from agenteval.schema.result import EvalCaseResult
from agenteval.store.placing import placed_model_json


def _best(results: list[EvalCaseResult], fn: Callable[[EvalCaseResult], Any]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for r in results:
            fn(r)
        best = min(best, time.process_time() - start)
    return best / len(results) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--doc", default="bench/out/e2e_agenteval_1p.json")
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    results: list[EvalCaseResult] = []
    with open(args.doc, "rb") as f:
        for item in ijson.items(f, "eval_case_results.item", use_float=True):
            results.append(EvalCaseResult.model_validate(item))
            if len(results) == args.n:
                break
    ser = EvalCaseResult.__pydantic_serializer__

    def invocations_only(r: EvalCaseResult) -> None:
        for p in r.eval_metric_result_per_invocation or []:
            p.actual_invocation.__pydantic_serializer__.to_json(p.actual_invocation, indent=2)
            if p.expected_invocation is not None:
                p.expected_invocation.__pydantic_serializer__.to_json(p.expected_invocation, indent=2)

    rows: list[tuple[str, Callable[[EvalCaseResult], Any]]] = [
        ("placed_model_json (the writer)", placed_model_json),
        ("to_json, indent 2", lambda r: ser.to_json(r, indent=2, exclude_none=False)),
        ("to_json, no indent", lambda r: ser.to_json(r, exclude_none=False)),
        ("to_python(mode=json)", lambda r: ser.to_python(r, mode="json")),
        ("case without per-invocation results", lambda r: ser.to_json(
            r, indent=2, exclude={"eval_metric_result_per_invocation"})),
        ("the invocations alone (actual + expected)", invocations_only),
    ]
    try:
        import orjson

        def via_orjson(r: EvalCaseResult) -> bytes:
            out: bytes = orjson.dumps(ser.to_python(r, mode="json"), option=orjson.OPT_INDENT_2)
            return out

        rows.append(("to_python(mode=json) + orjson indent 2", via_orjson))
        same = sum(via_orjson(r) == ser.to_json(r, indent=2, exclude_none=False) for r in results)
        print(f"orjson bytes equal to pydantic's for {same} of {len(results)} cases")
    except ImportError:
        print("orjson not installed")
    size = sum(len(placed_model_json(r)) for r in results) / len(results)
    print(f"{len(results)} cases, {size:,.0f} bytes a case as placed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn in rows:
            print(f"{name}: {_best(results, fn):.1f} µs a case")


if __name__ == "__main__":
    main()
