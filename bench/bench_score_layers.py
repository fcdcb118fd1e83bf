"""What a `score` worker's case would save if its pydantic models were plain values: the bound of
each layer, in instructions (issue 29 item 4, session 37).

    valgrind --tool=callgrind --dump-before=os_getppid --callgrind-out-file=OUT \\
        /root/.pyenv/versions/3.11.7/bin/python bench/bench_score_layers.py N -- \\
        EXPECTED --actual ACTUAL --config_file_path CFG

The run's setup is made as `bench_score_phases.py` makes it (this process started as a worker),
and the first N cases scored once. Then, between calls of `os.getppid()` (callgrind writes the part
since the last: OUT.1, OUT.2, ...), the same work done on models and on plain values, in the parts
named in `PARTS`: both items of each case validated as `EvalCase` (models) and by a validator made
from `EvalCase`'s own core schema with every model a typed dict of the same fields, aliases,
defaults and extras rule (`bench_case_models.plain`: plain dicts in the models' field order; the
models' after-validators left out, so this side is a lower bound), and parsed by
`pydantic_core.from_json` (no validation at all); the items' conversations written as a worker
writes them (orjson with `store.fast_json`'s hook for each model) and as the plain values
(orjson, no hook); each freed; the case results and summaries written as the worker writes them,
and as the same trees of plain dicts (every model's `__dict__`, its extras after). Every plain
form is first checked to write the models' bytes. A part's total over N (or over 2N for the
items) is its instructions a case (or an item). Instruction counts do not depend on the load.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_case_models import _config, held, plain
from profile_score_chunk import started_worker

PARTS = {1: "setup, the cases scored once", 2: "items validated as models",
         3: "items validated as typed dicts", 4: "conversations written: models, through the hook",
         5: "conversations written: plain values", 6: "models freed", 7: "typed dicts freed",
         8: "items parsed by from_json", 9: "parsed values freed",
         10: "results written (the worker's `_write`)", 11: "results written as plain dicts",
         12: "results written: invocations as models, the rest plain",
         13: "summaries written (the worker's `_write`)", 14: "summaries written as plain dicts"}


def main() -> None:
    n = int(sys.argv[1])
    _, expected, actual = started_worker([a for a in sys.argv[2:] if a != "--"], n)
    import orjson
    from pydantic import BaseModel
    from pydantic_core import SchemaValidator, from_json

    from agenteval.runner import shard_worker as w
    from agenteval.schema import Invocation
    from agenteval.store import fast_json

    s = w._setup
    assert s is not None
    wanted, got = w._read(s.expected_path, expected), w._read(s.actual_path, actual)
    assert wanted is not None and got is not None
    items = [x for pair in zip(wanted, got, strict=True) for x in pair]
    pairs = [(w.read_item(w.EvalCase, a), w.read_item(w.EvalCase, b))
             for a, b in zip(wanted, got, strict=True)]
    runs = [w.paired_case(c, r, i, s.eval_set_id, s.actual_path) for i, (c, r) in enumerate(pairs)]  # type: ignore[arg-type]
    results = [w._done(w.score_case(r, s.metrics, s.policy)) for r in runs]
    sums = [w.summarise_case(r.eval_id, [r], s.gating, s.policy == "ignore") for r in results]
    del pairs, runs
    core = w.EvalCase.__pydantic_core_schema__
    models = w.EvalCase.__pydantic_validator__
    dicts = SchemaValidator(plain(core, {}), _config(held(core, {}, {})))
    fast_json._ready()
    hook, head, tail = fast_json._default, fast_json._HEAD, fast_json._TAIL

    def tree(o: Any, keep: type | None = None) -> Any:
        """`o` with every model a plain dict (but models of type `keep`), as the hook gives them."""
        if isinstance(o, BaseModel) and type(o) is not keep:
            return {k: tree(v, keep) for k, v in hook(o).items()}
        if isinstance(o, (list, tuple)):
            return type(o)(tree(v, keep) for v in o)
        if isinstance(o, dict):
            return {k: tree(v, keep) for k, v in o.items()}
        return o

    def written(value: Any, default: Any = None) -> bytes:
        return orjson.dumps([[value]], default=default, option=orjson.OPT_INDENT_2)[head:-tail]

    def conversation(case: Any, default: Any = None) -> bytes:
        return written(case["conversation"] if isinstance(case, dict) else case.conversation, default)

    results_plain = [tree(r) for r in results]
    results_held = [tree(r, Invocation) for r in results]
    sums_plain = [tree(x) for x in sums]
    for x in items:
        if conversation(models.validate_json(x), hook) != conversation(dicts.validate_json(x)):
            raise SystemExit("the typed dicts write other bytes")
    for r, p, h in zip(results, results_plain, results_held, strict=True):
        if not w._write(r) == written(p) == written(h, hook):
            raise SystemExit("a plain result writes other bytes")
    if [w._write(x) for x in sums] != [written(p) for p in sums_plain]:
        raise SystemExit("a plain summary writes other bytes")

    mark = os.getppid
    mark()
    a = [models.validate_json(x) for x in items]
    mark()
    b = [dicts.validate_json(x) for x in items]
    mark()
    out = [conversation(c, hook) for c in a]
    mark()
    out = [conversation(c) for c in b]
    mark()
    del a
    mark()
    del b
    mark()
    c = [from_json(x) for x in items]
    mark()
    del c
    mark()
    out = [w._write(r) for r in results]
    mark()
    out = [written(p) for p in results_plain]
    mark()
    out = [written(h, hook) for h in results_held]
    mark()
    out = [w._write(x) for x in sums]
    mark()
    out = [written(p) for p in sums_plain]
    mark()
    print(f"{n} cases, {len(items)} items; last part {len(out)}", file=sys.stderr)


if __name__ == "__main__":
    main()
