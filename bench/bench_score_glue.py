"""`score`'s per-case CPU in process: reading a case's two items, scoring it, its result's bytes.

    python bench/bench_score_glue.py [--n 3000] [--repeat 3] [--config bench/out/config_default.json]

For an A/B, run it once per tree with `PYTHONPATH=<tree>/src`, alternating which goes first
(the figures are process CPU, so read them pair by pair with the 1-minute load beside them).

On the first `--n` cases of the 10,000-case corpus (`bench/out`, `gen_corpus.py`), with the
metrics `agenteval score` resolves from `--config` (the four informational efficiency metrics
included), one process, the cyclic garbage collector paused as `agenteval score` pauses it:

* `validate`: both items of each case validated from their bytes (`read_item`: pydantic's JSON
  parser, the intermediate data's calls collected by its validator), µs a case;
* `score_case`: `runner.scoring.score_case` of every case (its criteria, the case result), best
  of `--repeat` passes, µs a case;
* `criteria`: every metric's `build().score(EvalContext(...))` alone for every case (what the
  criteria cost, built as the tree builds them), best of `--repeat`, µs a case; `glue` is
  `score_case` less `criteria`: making the context, statuses, metric results, reasons and the
  case result;
* `digest`: a SHA-256 over every case result's JSON (ids and times are not in a case result),
  so two trees' outputs compare: equal digests, identical scores, reasons and details.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import os
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(BENCH_DIR.parent / "src"))

from agenteval.criteria.base import EvalContext  # noqa: E402
from agenteval.datasets.config import load_eval_config  # noqa: E402
from agenteval.datasets.stream import read_item  # noqa: E402
from agenteval.runner.job import ScoreJob  # noqa: E402
from agenteval.runner.recorded import paired_case  # noqa: E402
from agenteval.runner.scoring import score_case  # noqa: E402
from agenteval.schema import EvalCase  # noqa: E402


def _raw_items(path: Path, n: int) -> list[bytes]:
    """The first `n` items of the file's `eval_cases`, as bytes (json parses, and dumps the
    values back: the bytes differ from the file's, the same for both trees)."""
    cases = json.loads(path.read_bytes())["eval_cases"][:n]
    return [json.dumps(c).encode() for c in cases]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "out")
    parser.add_argument("--config", type=Path, default=BENCH_DIR / "out" / "config_default.json")
    args = parser.parse_args()
    expected_raw = _raw_items(args.out / "expected.evalset.json", args.n)
    actual_raw = _raw_items(args.out / "actual.evalset.json", args.n)
    metrics = ScoreJob(config=load_eval_config(args.config)).metrics()

    gc.collect()
    gc.disable()
    started = time.process_time()
    pairs = [(read_item(EvalCase, e), read_item(EvalCase, a)) for e, a in zip(expected_raw, actual_raw,
                                                                            strict=True)]
    validate = time.process_time() - started
    runs = [paired_case(e, a, i, "bench", None) for i, (e, a) in enumerate(pairs)  # type: ignore[arg-type]
            if e is not None and a is not None]

    async def one_pass() -> list[object]:
        return [await score_case(run, metrics) for run in runs]

    def criteria_pass() -> None:
        for run in runs:
            ctx = EvalContext(actual=run.actual, expected=run.case.conversation,
                              session_state=run.session_state, case_rubrics=run.case.rubrics or ())
            for metric in metrics:
                metric.build().score(ctx)

    criteria = float("inf")
    for _ in range(args.repeat):
        started = time.process_time()
        criteria_pass()
        criteria = min(criteria, time.process_time() - started)
    best = float("inf")
    digest = ""
    for _ in range(args.repeat):
        started = time.process_time()
        results = asyncio.run(one_pass())
        best = min(best, time.process_time() - started)
        sha = hashlib.sha256()
        for r in results:
            sha.update(r.model_dump_json().encode())  # type: ignore[attr-defined]
        digest = sha.hexdigest()
        del results
    print(json.dumps({
        "n": len(runs), "validate_us": round(validate / len(runs) * 1e6, 1),
        "score_case_us": round(best / len(runs) * 1e6, 1),
        "criteria_us": round(criteria / len(runs) * 1e6, 1),
        "glue_us": round((best - criteria) / len(runs) * 1e6, 1), "digest": digest[:16],
        "load1": os.getloadavg()[0],
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
