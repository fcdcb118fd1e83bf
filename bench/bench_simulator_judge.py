"""Accuracy of `per_turn_user_simulator_quality_v1`'s questions on the embedded judge, on the
hand-labelled set bench/judge_set/user_simulator.json (turn cases: did this message follow the
plan; stop cases: was ending there right).

    python bench/bench_simulator_judge.py [--num-samples 1] [--model local]

Each case is asked exactly as the criterion asks it (`turn_prompt` / `stop_prompt`, the judge's
system prompt, valid/invalid), through `JudgeService`. Prints accuracy overall, per kind of
question, and seconds per verdict.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from agenteval.criteria.judge import JudgeService  # noqa: E402
from agenteval.criteria.judge.prompting import prompts  # noqa: E402
from agenteval.criteria.judge.simulator_quality import stop_prompt, turn_prompt  # noqa: E402
from agenteval.models import resolve_model  # noqa: E402
from agenteval.schema import ConversationScenario  # noqa: E402


def question(case: dict[str, object]) -> str:
    history = case["history"]
    assert isinstance(history, list)
    scenario = ConversationScenario(starting_prompt=str(history[0][0]), conversation_plan=str(case["plan"]),
                                    user_persona=case.get("persona"))  # type: ignore[arg-type]
    text = prompts.conversation_text([(u, "none", a) for u, a in history])
    if case.get("stop"):
        return stop_prompt(scenario, text)
    return turn_prompt(scenario, text, str(case["message"]))


async def main_async(args: argparse.Namespace) -> None:
    cases = json.loads((HERE / "judge_set" / "user_simulator.json").read_text())
    model = resolve_model(args.model, os.environ)
    judge = JudgeService(lambda name: model)
    rows = []
    for case in cases:
        started = time.perf_counter()
        answer = await judge.ask(args.model, prompts.SYSTEM, question(case), ("valid", "invalid"),
                                 args.num_samples, early_stop=False)
        labels = [s.verdict.label for s in answer.samples if s.verdict]
        verdict = max(set(labels), key=labels.count) if labels else None
        rows.append({"id": case["id"], "kind": "stop" if case.get("stop") else "turn",
                     "label": case["label"], "verdict": verdict, "correct": verdict == case["label"],
                     "seconds": time.perf_counter() - started})
        print(f"{case['id']}: {verdict} (label {case['label']})", flush=True)
    for kind in ("turn", "stop", None):
        sel = [r for r in rows if kind is None or r["kind"] == kind]
        right = sum(r["correct"] for r in sel)
        print(f"{kind or 'all'}: {right}/{len(sel)} = {right / len(sel):.0%}")
    print(f"median {statistics.median(r['seconds'] for r in rows):.1f} s per verdict")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num-samples", type=int, default=1)
    ap.add_argument("--model", default="local")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
