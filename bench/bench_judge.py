"""Judge accuracy on the hand-labelled set in bench/judge_set/, through the real criteria code.

Every labelled case becomes an EvalCase + CaseRun (as the unit tests build them) and is scored
with `agenteval.runner.score_case` and a `JudgeService` over the embedded local model, exactly
as `agenteval score` would score it. Cases run one at a time (unless --jobs), so the seconds per
verdict are single-request latencies; other processes on the machine make them noisy.

A case's predicted label is positive when the criterion's overall score is 1.0 (one question per
case, except hallucination cases whose sentence our segmenter splits: then every sentence must
come out positive, as in the real criterion). Hallucination labels map supported -> positive,
unsupported / contradictory -> negative.

    python bench/bench_judge.py [--only CRITERION] [--limit N] [--num-samples K] [--jobs J]
    python bench/bench_judge.py --blind [--only CRITERION]   # the sets written blind (rubrics)
    python bench/bench_judge.py --table-from bench/out/judge_results.jsonl   # table only
    python bench/bench_judge.py --sampled ...   # every sample generated (before issue 16's one pass)

Per-case results go to bench/out/judge_results.jsonl (or --out); a summary table to stdout
and to bench/out/judge_summary.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.hallucinations import sentences
from agenteval.criteria.judge.labelled import POSITIVE, criterion_config
from agenteval.criteria.judge.labelled import build as build_labelled
from agenteval.models import LLM, LocalModel, ModelRequest, ModelResponse, Usage, resolve_model
from agenteval.runner import CaseRun, score_case
from agenteval.schema import (
    EvalCaseResult,
)

HERE = Path(__file__).resolve().parent
SET_DIR = HERE / "judge_set"
OUT_DIR = HERE / "out"

CRITERIA = ("final_response_match", "rubric_final_response", "rubric_tool_use", "hallucinations",
            "safety")


# ---------------------------------------------------------------------------------------------
# Cases -> invocations


def build(kind: str, case: dict[str, Any], num_samples: int
          ) -> tuple[CaseRun, str, dict[str, Any]]:
    """(case run, metric name, criterion config) for one labelled case (the package's reading
    of labelled sets, as `agenteval judge calibrate` uses it)."""
    labelled = build_labelled(kind, case)
    run = CaseRun(labelled.case, labelled.actual, "s")
    return run, labelled.metric, criterion_config(labelled, num_samples)


def load_cases(only: str | None = None, limit: int | None = None,
               ids: set[str] | None = None, blind: bool = False
               ) -> list[tuple[str, bool, dict[str, Any]]]:
    """(criterion, is_injection, case) for every case, injection cases under their criterion.
    `blind`: the sets written blind instead (`{criterion}_blind.json`, where one exists; their
    injection cases are marked `"injection": true` in place)."""
    out: list[tuple[str, bool, dict[str, Any]]] = []
    for kind in CRITERIA:
        if only and only not in (kind, "injection"):
            continue
        path = SET_DIR / f"{kind}_blind.json" if blind else SET_DIR / f"{kind}.json"
        if path.exists() and only != "injection":
            out += [(kind, bool(c.get("injection")), c) for c in json.loads(path.read_text())]
    for c in [] if blind else json.loads((SET_DIR / "injection.json").read_text()):
        if only in (None, "injection", c["criterion"]):
            out.append((c["criterion"], True, c))
    if ids:
        out = [x for x in out if x[2]["id"] in ids]
    if limit:
        # Keep each group's share: the first `limit` cases of every (criterion, injection) group.
        groups: dict[tuple[str, bool], int] = {}
        kept = []
        for kind, inj, c in out:
            n = groups.get((kind, inj), 0)
            if n < limit:
                kept.append((kind, inj, c))
            groups[(kind, inj)] = n + 1
        out = kept
    return out


# ---------------------------------------------------------------------------------------------
# A model wrapper that counts calls and tokens (prompt, cached, completion)


@dataclass
class Counting:
    """Wraps an LLM; accumulates usage and call count (reset per case by the caller)."""

    inner: LLM
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    prompt_tokens_per_call: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    async def generate(self, request: ModelRequest) -> ModelResponse:
        response = await self.inner.generate(request)
        self.calls += 1
        self.usage += response.usage
        self.prompt_tokens_per_call.append(response.usage.prompt_tokens)
        return response

    def reset(self) -> None:
        self.calls, self.usage, self.prompt_tokens_per_call = 0, Usage(), []


# ---------------------------------------------------------------------------------------------
# Running


def predicted(result: EvalCaseResult) -> bool | None:
    """Positive iff the criterion scored 1.0; None on a judge error."""
    overall = result.overall_eval_metric_results[0]
    if overall.score is None:
        return None
    return bool(overall.score >= 1.0)


async def run_case(kind: str, injection: bool, case: dict[str, Any], judge: JudgeService,
                   model: Counting, num_samples: int) -> dict[str, Any]:
    run, metric_name, options = build(kind, case, num_samples)
    metric = default_registry().configure(metric_name, options)
    model.reset()
    start, cpu = time.perf_counter(), time.process_time()
    result = await score_case(run, [metric], judge=judge)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu  # llama.cpp's threads included; with --jobs > 1, shared
    gold = case["label"] in POSITIVE
    pred = predicted(result)
    # A verdict is one judged item (a sentence, a rubric, a response), with the calls it took:
    # a rubric's requirement step and a sentence's cross-check are part of its verdict.
    scored = [r for r in result.judge_records
              if r.step is None and not (r.item or "").endswith(", cross-check")]
    questions = max(1, len(scored))
    return {
        "id": case["id"], "criterion": kind, "injection": injection, "label": case["label"],
        "gold_positive": gold, "pred_positive": pred, "correct": pred == gold,
        "verdicts": [r.verdict for r in result.judge_records],
        "items": [r.item for r in result.judge_records],
        "steps": [r.step for r in result.judge_records],
        "sample_verdicts": [r.verdicts for r in result.judge_records],
        "confidences": [r.confidence for r in result.judge_records],
        "confidence_sources": [r.confidence_source for r in result.judge_records],
        "label_probs": [r.label_probs for r in result.judge_records],
        "case_confidence": min((r.confidence for r in scored if r.confidence is not None), default=None),
        "rationales": [r.rationale for r in result.judge_records],
        "questions": questions, "num_samples": num_samples,
        "segmented": sentences(case["sentence"]) if kind == "hallucinations" else None,
        "seconds": round(seconds, 3), "seconds_per_verdict": round(seconds / questions, 3),
        "cpu_seconds": round(cpu, 3), "load": os.getloadavg()[0],
        "model_calls": model.calls,
        "prompt_tokens": model.usage.prompt_tokens,
        "prompt_tokens_per_verdict": model.usage.prompt_tokens / questions,
        "cached_tokens": model.usage.cached_tokens,
        "completion_tokens": model.usage.completion_tokens,
        "errors": [e.message for e in result.metric_errors],
        "prompts": [r.prompt for r in result.judge_records],
        "replies": [r.replies for r in result.judge_records],
    }


def kappa(tp: int, fn: int, fp: int, tn: int) -> float:
    """Cohen's kappa of the judge's verdicts against the labels (NaN when chance agreement is 1)."""
    n = tp + fn + fp + tn
    if n == 0:
        return float("nan")
    observed = (tp + tn) / n
    chance = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / (n * n)
    return (observed - chance) / (1 - chance) if chance < 1 else float("nan")


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy, confusion counts (positive = the criterion's passing label), latency, tokens;
    agreement, Cohen's kappa and coverage: a case without a verdict (judge error, or uncertain
    below the criterion's shipped min_confidence) is not covered, and agreement and kappa are
    over the covered cases."""
    def pct(values: list[float], q: float) -> float:
        values = sorted(values)
        if not values:
            return float("nan")
        k = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
        return values[k]

    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["criterion"] + (" [injection]" if r["injection"] else ""), []).append(r)
        if r["injection"]:
            groups.setdefault("injection (all)", []).append(r)
        groups.setdefault("all", []).append(r)
    out = {}
    order = [f"{k}{s}" for k in CRITERIA for s in ("", " [injection]")] + ["injection (all)", "all"]
    for name in [o for o in order if o in groups]:
        g = groups[name]
        tp = sum(1 for r in g if r["gold_positive"] and r["pred_positive"] is True)
        fn = sum(1 for r in g if r["gold_positive"] and r["pred_positive"] is False)
        fp = sum(1 for r in g if not r["gold_positive"] and r["pred_positive"] is True)
        tn = sum(1 for r in g if not r["gold_positive"] and r["pred_positive"] is False)
        err = sum(1 for r in g if r["pred_positive"] is None)
        secs = [r["seconds_per_verdict"] for r in g]
        toks = [r["prompt_tokens_per_verdict"] for r in g]
        # Tokens the engine actually processed: the rest came from its prompt cache (the
        # system prompt and a criterion's solved examples are the same for every question).
        fresh = [(r["prompt_tokens"] - r.get("cached_tokens", 0)) / max(1, r.get("questions", 1))
                 for r in g]
        out[name] = {
            "n": len(g), "correct": tp + tn, "accuracy": (tp + tn) / len(g),
            "coverage": (len(g) - err) / len(g),
            "agreement": (tp + tn) / max(1, len(g) - err), "kappa": kappa(tp, fn, fp, tn),
            "tp": tp, "fn": fn, "fp": fp, "tn": tn, "errors": err,
            "median_s": statistics.median(secs), "p90_s": pct(secs, 0.9),
            "median_prompt_tokens": statistics.median(toks),
            "median_processed_tokens": statistics.median(fresh),
            "wrong": [r["id"] for r in g if not r["correct"]],
        }
    return out


def print_table(summary: dict[str, Any], file: Any = sys.stdout) -> None:
    print("| criterion | n | accuracy | agreement | kappa | coverage | TP | FN | FP | TN | err "
          "| median s/verdict | p90 s/verdict "
          "| median prompt tok/verdict | of which processed (not cached) |", file=file)
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", file=file)
    for name, s in summary.items():
        print(f"| {name} | {s['n']} | {s['correct']}/{s['n']} = {100 * s['accuracy']:.0f}% | "
              f"{100 * s.get('agreement', s['accuracy']):.0f}% | {s.get('kappa', float('nan')):.2f} | "
              f"{100 * s.get('coverage', 1.0):.0f}% | {s['tp']} | "
              f"{s['fn']} | {s['fp']} | {s['tn']} | {s['errors']} | {s['median_s']:.2f} | {s['p90_s']:.2f} | "
              f"{s['median_prompt_tokens']:.0f} | {s.get('median_processed_tokens', float('nan')):.0f} |",
              file=file)
    for name, s in summary.items():
        if s["wrong"] and name not in ("all", "injection (all)"):
            print(f"  wrong in {name}: {', '.join(s['wrong'])}", file=file)


THREADS: int | None = None  # --threads: a LocalModel with that many threads instead of the default
LOGPROBS = 20  # --sampled: 0, every sample generated (no one-pass verdicts from log-probabilities)


def local_judge(cache: Any = None) -> tuple[JudgeService, Counting]:
    """A JudgeService over the embedded model (as `resolve_model("local", {})` gives it)."""
    model = Counting(LocalModel(threads=THREADS) if THREADS else resolve_model("local", {}))
    resolve: Callable[[str], LLM] = lambda name: model  # noqa: E731
    return JudgeService(resolve, cache, logprobs=LOGPROBS), model


async def main_async(args: argparse.Namespace) -> None:
    global THREADS, LOGPROBS
    THREADS = args.threads
    LOGPROBS = 0 if args.sampled else 20
    cases = load_cases(args.only, args.limit, set(args.ids.split(",")) if args.ids else None,
                       args.blind)
    if args.interleave:  # round robin over the criteria: a run stopped early covers each of them
        queues: dict[str, list[tuple[str, bool, dict[str, Any]]]] = {}
        for item in cases:
            queues.setdefault(item[0], []).append(item)
        cases = [q[i] for i in range(max(map(len, queues.values()), default=0))
                 for q in queues.values() if i < len(q)]
    cache = None
    if args.cache:
        from agenteval.store import JudgeCacheDB
        cache = JudgeCacheDB(Path(args.cache))
    judge, model = local_judge(cache)
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    if args.resume and out_path.exists():
        rows = [json.loads(line) for line in out_path.read_text().splitlines() if line.strip()]
        done = {r["id"] for r in rows}
        cases = [c for c in cases if c[2]["id"] not in done]
    start = time.perf_counter()
    sink = out_path.open("a" if args.resume else "w")
    if args.jobs <= 1:
        for i, (kind, inj, case) in enumerate(cases, 1):
            row = await run_case(kind, inj, case, judge, model, args.num_samples)
            rows.append(row)
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            sink.flush()
            mark = "ok " if row["correct"] else "BAD"
            print(f"[{i}/{len(cases)}] {mark} {row['id']:8} gold={row['label']:13} got={row['verdicts']} "
                  f"{row['seconds']:.1f}s {row['prompt_tokens']}tok", file=sys.stderr, flush=True)
    else:
        # Throughput mode for quick iteration: each case gets its own counter. A row is written
        # as its case ends, so a run stopped early keeps what it judged (and `--resume` goes on).
        sem = asyncio.Semaphore(args.jobs)

        async def one(kind: str, inj: bool, case: dict[str, Any]) -> None:
            async with sem:
                j, m = local_judge(cache)  # one cache for all: a re-run with another vote is free
                row = await run_case(kind, inj, case, j, m, args.num_samples)
                rows.append(row)
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
                print(f"{'ok ' if row['correct'] else 'BAD'} {row['id']:8} gold={row['label']:13} "
                      f"got={row['verdicts']}", file=sys.stderr, flush=True)
        await asyncio.gather(*(one(k, i, c) for k, i, c in cases))
    sink.close()
    wall = time.perf_counter() - start
    summary = summarise(rows)
    Path(args.summary).write_text(json.dumps({"args": vars(args), "wall_seconds": wall,
                                              "summary": summary}, indent=1))
    print_table(summary)
    print(f"\n{len(rows)} cases in {wall:.0f} s; per-case results in {out_path}")


async def raw_reply(llm: LocalModel, request: ModelRequest) -> dict[str, Any]:
    """`request` sent to the embedded engine as the model would send it (seed 42), with no
    parsing: llama.cpp's reply, its `timings` included, and its wall seconds as `_wall`."""
    import anyio.to_thread

    from agenteval.models.openai_wire import build_body

    engine = await llm._engine()
    start = time.perf_counter()
    body = build_body(request, seed=42)
    reply: dict[str, Any] = await anyio.to_thread.run_sync(LocalModel._call, engine, body)
    reply["_wall"] = time.perf_counter() - start
    return reply


class LabProbe:
    """The base of a lab's probe (`run_probe_lab`): the embedded model `llm`, a JSON-lines
    `sink` for what the lab logs per question, and the case being scored. A subclass's
    `generate` returns what the judge goes on with and logs its other ways of asking."""

    def __init__(self, llm: LocalModel, sink: Any, case_id: str = "") -> None:
        self.llm, self.sink, self.case_id = llm, sink, case_id

    @property
    def name(self) -> str:
        return self.llm.name

    @property
    def prefills_replies(self) -> bool:
        return True


def run_probe_lab(make_probe: Callable[[LocalModel, Any], Any], default_out: Path, doc: str | None) -> None:
    """A lab's command line (`bench/lab_*.py`): the labelled cases `--ids` scored one after
    another through a judge asking `make_probe(model, sink)` (the embedded model wrapped to ask
    each question its ways too and write a JSON line per question to `sink`), questions one at
    a time (no `slots`). The probe's `case_id` is set to the case being scored."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ids", required=True)
    p.add_argument("--threads", type=int)
    p.add_argument("--out", default=str(default_out))
    args = p.parse_args()

    async def run() -> None:
        llm = LocalModel(threads=args.threads) if args.threads else LocalModel()
        by_id = {c[2]["id"]: c for c in load_cases()}
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w") as sink:
            probe = make_probe(llm, sink)
            judge = JudgeService(lambda name: probe, None)
            for case_id in args.ids.split(","):
                kind, _, case = by_id[case_id]
                probe.case_id = case_id
                run, metric_name, options = build(kind, case, 5)
                await score_case(run, [default_registry().configure(metric_name, options)], judge=judge)

    asyncio.run(run())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=[*CRITERIA, "injection"],
                   help="one criterion (its injection cases included) or only the injection cases")
    p.add_argument("--limit", type=int, help="at most N cases per criterion (and per injection group)")
    p.add_argument("--ids", help="comma-separated case ids")
    p.add_argument("--num-samples", type=int, default=1)
    p.add_argument("--jobs", type=int, default=1, help="cases at once (latencies are then not per request)")
    p.add_argument("--threads", type=int, help="llama.cpp threads (default: the CPUs this process may use)")
    p.add_argument("--blind", action="store_true",
                   help="the sets written blind (bench/judge_set/*_blind.json) instead of the main ones")
    p.add_argument("--interleave", action="store_true", help="cases round robin over the criteria")
    p.add_argument("--resume", action="store_true", help="keep the rows already in --out, run the rest")
    p.add_argument("--sampled", action="store_true",
                   help="generate every sample (as before issue 16), not one pass with log-probabilities")
    p.add_argument("--cache", metavar="SQLITE",
                   help="a judge cache (re-running with another vote or threshold then costs no model call)")
    p.add_argument("--out", default=str(OUT_DIR / "judge_results.jsonl"))
    p.add_argument("--summary", default=str(OUT_DIR / "judge_summary.json"))
    p.add_argument("--table-from", metavar="JSONL", help="print the table of stored results; run nothing")
    args = p.parse_args()
    if args.table_from:
        lines = Path(args.table_from).read_text().splitlines()
        print_table(summarise([json.loads(line) for line in lines if line.strip()]))
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
