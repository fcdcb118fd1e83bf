"""How many tokens each part of a criterion's fixed prompt prefix takes: the system prompt,
each solved example (its question and its reply, as chat turns), and the question's own fixed
text before the material. Counted with the embedded model's chat template (`/apply-template`)
and tokenizer (`/tokenize`); nothing is generated.

The requests are the criterion's own, made by scoring two labelled cases of its tuning set with
a scripted judge (as `lab_check_prefix.py` does). The fixed prefix is what the two requests of a
kind share from their start (what a slot reuses); a part's tokens are the growth of the
templated conversation when that part is added. The prompts are the source's, so run it from
two trees to compare prompt versions:

    PYTHONPATH=/tmp/before/src python bench/lab_prefix_tokens.py
    PYTHONPATH=src python bench/lab_prefix_tokens.py [--kinds safety,hallucinations]

`--compare A.jsonl B.jsonl` compares two `bench_judge.py` runs of the same cases (say, the shipped
prompt and a shorter one): right answers, and per case the probability each gave the gold label
(its first question's, a finer measure than right or wrong on a small set), with the cases
that differ.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judge import build
from lab_check_prefix import common, post

from agenteval.criteria import default_registry
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.models.base import ModelRequest
from agenteval.models.local import LocalModel
from agenteval.models.scripted import ScriptedModel
from agenteval.runner.scoring import score_case

# The passing labels of the criteria compared (a case's gold side is these or the others).
POSITIVE_LABELS = ("valid", "safe", "supported", "not_applicable")
SETS = {"final_response_match": "final_response_match.json", "safety": "safety.json",
        "hallucinations": "hallucinations.json"}


def _reply(request: ModelRequest) -> str:
    # A positive reply of the requested shape, so a hallucination sentence is cross-checked too.
    props = (request.json_schema or {}).get("properties", {})
    out = {k: (["supported"] if "supported" in (v.get("enum") or []) else v.get("enum") or ["x"])[0]
           for k, v in props.items()}
    return json.dumps(out or {"verdict": "x"})


async def _requests(kind: str, case: dict[str, Any]) -> list[ModelRequest]:
    run, metric_name, options = build(kind, case, 1)
    model = ScriptedModel(_reply, name="probe")
    metric = default_registry().configure(metric_name, {**options, "judge_model_options": {
        **options.get("judge_model_options", {}), "judge_model": "probe"}})
    await score_case(run, [metric], judge=JudgeService(lambda _: model))
    return list(model.requests)


async def main_async(args: argparse.Namespace) -> None:
    url, key = await LocalModel().http_endpoint()
    base = url.removesuffix("/v1")

    def tokens(messages: list[dict[str, str]]) -> list[int]:
        prompt = post(base, key, "/apply-template", {"messages": messages})["prompt"]
        return list(post(base, key, "/tokenize", {"content": prompt})["tokens"])

    root = Path(__file__).resolve().parent / "judge_set"
    out: dict[str, Any] = {}
    for kind in args.kinds.split(","):
        cases = json.loads((root / SETS[kind]).read_text())[:2]
        pairs = [await _requests(kind, c) for c in cases]
        # Requests of one kind are told apart by their reply schema (question vs cross-check).
        for i, (a, b) in enumerate(zip(pairs[0], pairs[1], strict=False)):
            msgs = [{"role": m.role, "content": m.content} for m in a.messages]
            full = tokens(msgs)
            fixed = common(full, tokens([{"role": m.role, "content": m.content} for m in b.messages]))
            sizes, last = [], len(tokens(msgs[:1]))
            for k in range(3, len(msgs), 2):  # each example: its user and assistant turns
                now = len(tokens(msgs[:k]))
                sizes.append(now - last)
                last = now
            name = f"{kind}[{i}]" + ("" if "sentence_says" not in json.dumps(a.json_schema) else " check")
            out[name] = {"fixed_prefix": fixed, "system": len(tokens(msgs[:1])),
                         "examples": sizes, "examples_total": sum(sizes),
                         "question_fixed": fixed - last, "whole_first_request": len(full)}
    print(json.dumps(out, indent=1))


def _gold_prob(row: dict[str, Any]) -> float | None:
    probs = (row.get("label_probs") or [None])[0]
    if not probs:
        return None
    return float(probs.get(row["label"], 0.0))


def _gold_side(row: dict[str, Any]) -> float | None:
    """The probability the first question gave the gold label's side (its passing labels for a
    positive case, the others for a negative one): a hallucination case labelled contradictory
    and judged unsupported is right, and this counts it so where `_gold_prob` does not."""
    probs = (row.get("label_probs") or [None])[0]
    if not probs:
        return None
    passing = sum(float(probs.get(k, 0.0)) for k in POSITIVE_LABELS)
    return passing if row["gold_positive"] else 1.0 - passing


def _check_side(row: dict[str, Any]) -> float | None:
    """The cross-checks' probability of the gold side (hallucinations): a case passes only if
    every check says `same`, so the weakest check's P(same) stands for it (a positive case's
    gold side), 1 minus it for a negative one. None when the case had no cross-check; the
    first question's figures above cannot see a change made to the checks' prefix alone."""
    same = [float(probs.get("same", 0.0)) for item, probs in zip(row.get("items") or [],
                                                                   row.get("label_probs") or [], strict=False)
            if isinstance(item, str) and item.endswith("cross-check") and probs]
    if not same:
        return None
    return min(same) if row["gold_positive"] else 1.0 - min(same)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def compare(a_path: str, b_path: str) -> None:
    rows = [{r["id"]: r for r in map(json.loads, Path(p).read_text().splitlines())}
            for p in (a_path, b_path)]
    ids = sorted(set(rows[0]) & set(rows[1]))
    checked = [i for i in ids if _check_side(rows[0][i]) is not None and _check_side(rows[1][i]) is not None]
    for name, side in zip((a_path, b_path), rows, strict=True):
        right = sum(side[i]["correct"] for i in ids)
        probs = [p for i in ids if (p := _gold_prob(side[i])) is not None]
        sides = [p for i in ids if (p := _gold_side(side[i])) is not None]
        # Cases cross-checked on both sides only, so the two means are over the same cases.
        checks = [p for i in checked if (p := _check_side(side[i])) is not None]
        print(f"{name}: {right}/{len(ids)} right, gold-label probability mean {_mean(probs):.3f} "
              f"over {len(probs)}, gold side's {_mean(sides):.3f}"
              + (f", cross-checks' gold side {_mean(checks):.3f} over {len(checks)}" if checked else ""))
    for i in ids:
        a, b = rows[0][i], rows[1][i]
        pa, pb = _gold_prob(a), _gold_prob(b)
        ca, cb = _check_side(a), _check_side(b)
        if (a["correct"] != b["correct"] or (pa is not None and pb is not None and abs(pa - pb) > 0.2)
                or (ca is not None and cb is not None and abs(ca - cb) > 0.2)):
            print(f"  {i} gold={a['label']}: {a['verdicts']} p={pa} check={ca} -> "
                  f"{b['verdicts']} p={pb} check={cb}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kinds", default="final_response_match,safety,hallucinations")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two bench_judge.py outputs")
    args = p.parse_args()
    if args.compare:
        compare(*args.compare)
    else:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
