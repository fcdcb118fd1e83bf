"""What `score`'s 8x-ADK goal in CPU leaves for everything but its floor (issue 29 item 4).

    python bench/bench_score_floor.py [--n 2000] [--rounds 5] [--e2e bench/out/bench_e2e.json] -- \
        EXPECTED --actual ACTUAL --config_file_path CFG

In one process, with the cyclic GC off as in `score`'s workers, over the first N cases of both
files (best of R rounds per step, CPU µs a case):

- `worker`: `shard_worker.score_chunk`, the whole of a worker's case today;
- `validate`: both items validated by pydantic from their bytes (`EvalCase`'s validator): the
  schema's floor, as long as the criteria read pydantic models;
- `free`: freeing those models;
- `criteria`: each configured criterion's `score` on the case (the criteria built once), no
  result models, no reasons read;
- `write floor`: the case's result written as `placed_model_json` writes it (indent 2), but by
  orjson from plain dicts made beforehand: what writing costs with no per-model step at all.

The floor is the sum of the last four. Then the whole `agenteval score` of the files runs once
(`--parallelism 2`, the output to a temporary file), its CPU split into the parent's and the
workers' (`getrusage` in the process: self and children). With `--e2e` (a `bench_e2e.py` summary
of the same corpus), ADK's CPU per case is read from it: the 8x budget is that / 8, and what a
case may spend beyond the floor (glue, reasons, summaries, models built, the workers' hand-over,
the parent's reading and writing) is the budget less the floor.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from profile_score_chunk import started_worker


def best_of(rounds: int, step: Callable[[], Any]) -> float:
    """The least CPU seconds of `rounds` calls of `step`."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        step()
        best = min(best, time.process_time() - started)
    return best


# Run as `python -c` in a child: the CLI in process, then its own and its workers' CPU as JSON.
# (Written at exit, to a file: the command ends its process itself, its standard error closed.)
_WHOLE = """
import atexit, json, resource, sys
out = sys.argv[1]
def told():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        json.dump([s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime], f)
atexit.register(told)
sys.argv = ["agenteval", "score", *sys.argv[2:]]
from agenteval.cli.main import main
main()
"""


def whole_run(argv: list[str]) -> tuple[float, float]:
    """(the parent's, its workers') CPU seconds of `agenteval score argv --parallelism 2`."""
    with tempfile.TemporaryDirectory() as tmp:
        told = Path(tmp) / "cpu.json"
        subprocess.run([sys.executable, "-c", _WHOLE, str(told), *argv, "--parallelism", "2",
                        "--output", str(Path(tmp) / "out.json")], capture_output=True, check=False)
        parent, workers = json.loads(told.read_text())
    return float(parent), float(workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--e2e", default="bench/out/bench_e2e.json")
    parser.add_argument("score_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = [a for a in args.score_args if a != "--"]
    setup, expected, actual = started_worker(argv, args.n)
    import orjson

    from agenteval.criteria.base import EvalContext
    from agenteval.datasets.split import item_spans
    from agenteval.runner import shard_worker
    from agenteval.runner.recorded import paired_case
    from agenteval.runner.scoring import score_case
    from agenteval.schema import EvalCase

    wanted = shard_worker._read(setup.expected_path, expected) or []
    got = shard_worker._read(setup.actual_path, actual) or []
    n = len(wanted)
    validate = EvalCase.__pydantic_validator__.validate_json
    runs = [paired_case(validate(a), validate(b), i, setup.eval_set_id, setup.actual_path)
            for i, (a, b) in enumerate(zip(wanted, got, strict=True))]
    contexts = [EvalContext(r.actual, r.case.conversation, r.case.conversation_scenario, r.session_state,
                            r.case.rubrics or (), None, r.extras, r.trace) for r in runs]
    criteria = [m.build() for m in setup.metrics]
    results = [shard_worker._done(score_case(r, setup.metrics, setup.policy)) for r in runs]
    dicts = [r.model_dump(mode="json") for r in results]

    def validated() -> None:
        for a, b in zip(wanted, got, strict=True):
            validate(a)
            validate(b)

    def freed() -> float:
        items = [(validate(a), validate(b)) for a, b in zip(wanted, got, strict=True)]
        started = time.process_time()
        del items
        return time.process_time() - started

    def scored() -> None:
        for ctx in contexts:
            for c in criteria:
                c.score(ctx)

    def written() -> None:
        for d in dicts:
            orjson.dumps(d, option=orjson.OPT_INDENT_2)

    us = {
        "worker": best_of(args.rounds, lambda: shard_worker.score_chunk(0, expected, actual)),
        "validate": best_of(args.rounds, validated),
        "free": min(freed() for _ in range(args.rounds)),
        "criteria": best_of(args.rounds, scored),
        "write floor": best_of(args.rounds, written),
    }
    us = {k: v / n * 1e6 for k, v in us.items()}
    for k, v in us.items():
        print(f"{k:12} {v:7.1f} µs a case")
    floor = us["validate"] + us["free"] + us["criteria"] + us["write floor"]
    print(f"{'floor':12} {floor:7.1f} µs a case (validate + free + criteria + write floor); "
          f"the worker's case beyond it today: {us['worker'] - floor:.1f} µs")
    for held in (runs, contexts, results, dicts):  # (freed before the whole run)
        held.clear()
    gc.enable()
    cases = len(item_spans(setup.expected_path, "eval_cases") or [])
    parent, workers = whole_run(argv)
    today = (parent + workers) / cases * 1e6
    print(f"whole run, {cases} cases, 2 workers: {today:.1f} µs a case (parent {parent / cases * 1e6:.1f}, "
          f"workers {workers / cases * 1e6:.1f}: beyond `worker` {workers / cases * 1e6 - us['worker']:.1f})")
    e2e = Path(args.e2e)
    if not e2e.is_file():
        return
    summary = json.loads(e2e.read_text())
    adk = {r["name"]: r for r in summary["rows"]}["adk"]["cpu_median_s"] / summary["cases"] * 1e6
    budget = adk / 8
    print(f"ADK ({e2e}): {adk:.0f} µs a case; 8x is {budget:.0f} µs a case, "
          f"today {adk / today:.2f}x")
    print(f"beyond the floor: today {today - floor:.0f} µs a case, within 8x {budget - floor:.0f} µs: "
          f"{(1 - (budget - floor) / (today - floor)) * 100:.0f}% of it must go")


if __name__ == "__main__":
    main()
