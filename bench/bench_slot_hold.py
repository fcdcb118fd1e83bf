"""A judge's follow-up call and its kept slot (`models.local_slots`, `HOLD_SECONDS`): a
simulation of the embedded engine's scheduling, A (no hold: `SlotTable.hold = 0`) against B
(the hold), in alternating pairs.

The engine is a fake llama.cpp server run through the real `LocalModel` (its worker threads,
limiter and `SlotTable`): a verdict's first call takes `--label` s, a failing verdict's
rationale call `--rationale` s in the slot still holding its question, `--tail` s more in any
other slot (its question's differing tail evaluated again: ~0.4 s on a quiet 2-core machine).
`--questions` verdicts (a `--failing` share of them failing) are asked at once, each its own
task that ends after its verdict (the sentences of responses checked at once, as
`bench_judge_speed.py --responses` does): the case where a passing verdict's hold runs its whole
length while other calls wait. Reports per run: wall, follow-ups that found their slot, and the
delay from a first call's end to its follow-up's start (what `HOLD_SECONDS` must cover).

    python bench/bench_slot_hold.py --pairs 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from agenteval.models import local as local_module
from agenteval.models.base import Message, ModelRequest
from agenteval.models.local import LocalModel
from agenteval.models.local_slots import HOLD_SECONDS, SlotTable


class FakeEngine:
    """Chat completions that sleep as the embedded engine's would take, by what the slot holds."""

    def __init__(self, slots: int, args: argparse.Namespace) -> None:
        self.args, self.lock = args, threading.Lock()
        self.holds: list[str] = [""] * slots  # the question each slot last ran
        self.ended: dict[str, float] = {}  # each question's first call's end
        self.delays: list[float] = []
        self.kept = self.moved = 0

    def handle_chat_completions(self, body: dict[str, Any]) -> dict[str, Any]:
        slot, question = body["id_slot"], body["messages"][-2]["content"]
        follow = "rationale" in body["messages"][-1]["content"]
        with self.lock:
            if follow:
                self.delays.append(time.monotonic() - self.ended[question])
                same = self.holds[slot] == question
                self.kept += same
                self.moved += not same
            self.holds[slot] = question
        a = self.args
        time.sleep(a.label if not follow else a.rationale if same else a.rationale + a.tail)
        with self.lock:
            self.ended[question] = time.monotonic()
        return {"choices": [{"message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}],
                "usage": {}, "timings": {"prompt_n": 5}}


def _question(text: str, begun: str) -> ModelRequest:
    return ModelRequest(messages=(Message("system", "criterion instructions and examples"),
                                  Message("user", text), Message("assistant", begun)))


def run(hold: float, args: argparse.Namespace, cache: Path) -> dict[str, float]:
    model = LocalModel(cache_dir=cache, slots=args.slots)
    engine = FakeEngine(args.slots, args)
    table = SlotTable(args.slots, None, None, "m")
    table.hold = hold
    local_module._ENGINES[model._key] = local_module._Engine(engine, "k", 0.0, table)
    every = round(1 / args.failing) if args.failing > 0 else 0

    async def verdict(i: int) -> None:
        text = f"question {i}: " + "context " * 40
        await model.generate(_question(text, '{"verdict": "'))
        if every and i % every == 0:
            await model.generate(_question(text, '{"verdict": "invalid", "rationale": "'))

    async def main() -> None:
        await asyncio.gather(*(verdict(i) for i in range(args.questions)))

    start, cpu = time.perf_counter(), time.process_time()
    try:
        asyncio.run(main())
    finally:
        local_module._ENGINES.pop(model._key, None)
    delays = sorted(engine.delays) or [0.0]
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu,
            "kept": engine.kept, "moved": engine.moved,
            "delay_ms_median": 1000 * statistics.median(delays),
            "delay_ms_max": 1000 * delays[-1]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--slots", type=int, default=4)
    p.add_argument("--questions", type=int, default=36)
    p.add_argument("--failing", type=float, default=1 / 3)
    p.add_argument("--label", type=float, default=0.3)
    p.add_argument("--rationale", type=float, default=0.2)
    p.add_argument("--tail", type=float, default=0.4)
    p.add_argument("--hold", type=float, default=HOLD_SECONDS)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        for pair in range(args.pairs):
            for name, hold in (("A no hold", 0.0), (f"B hold {args.hold}", args.hold)):
                r = run(hold, args, Path(cache))
                print(f"pair {pair} {name:12} wall {r['wall']:.2f} s  cpu {r['cpu']:.2f} s  "
                      f"follow-ups in their slot {r['kept']:.0f}, moved {r['moved']:.0f}  "
                      f"delay to follow-up median {r['delay_ms_median']:.1f} ms, "
                      f"max {r['delay_ms_max']:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
