"""Where a verdict's time goes on the embedded judge, per model call and per judged case.

Each labelled case (bench_judge.py's cases: the 2nd to the (`--per` + 1)-th of each criterion in
`--criteria`) is scored through `score_case` at the criterion's defaults (`num_samples` 5,
one-pass verdicts from log-probabilities), exactly as `agenteval score` scores it, one case at a
time. Every call into llama.cpp is timed from the reply's own `timings`:

  processed   prompt tokens evaluated for this call (`prompt_n`)
  reused      prompt tokens taken from the slot's cache or the RAM prompt cache (`cache_n`)
  generated   completion tokens (`predicted_n`)
  compute     llama.cpp's prompt + generation milliseconds for this call
  waiting     the call's wall time minus its compute: queued for a slot (ours or llama.cpp's)
              or sharing a batch with other slots

and every case by its wall and CPU seconds (`time.process_time`: llama.cpp's threads included,
so on a shared machine CPU seconds are the steadier figure) with the 1-minute load average.

Before / after a change: run this once against the old source (a worktree of the old commit on
PYTHONPATH) and once against the new, then `--compare OLD.jsonl NEW.jsonl`:

    git worktree add /tmp/before <commit>
    PYTHONPATH=/tmp/before/src python bench/bench_judge_speed.py --out bench/out/speed_before.jsonl
    python bench/bench_judge_speed.py --out bench/out/speed_after.jsonl
    python bench/bench_judge_speed.py --compare bench/out/speed_before.jsonl bench/out/speed_after.jsonl

Every criterion is warmed up with one untimed case first (its solved examples into the prompt
cache, as in any run after its first question): the first of its cases that shares no material
with the timed ones (the 2nd to the (`--per` + 1)-th), so no timed case finds its own material
already evaluated. `--concurrent` scores a criterion's timed cases at once (as `agenteval score
--parallelism` does) instead of one after another.

`--responses` (hallucinations): the labelled sentences that share a context, as the lines of one
response (one judged case whose questions share their material), against the same sentences
judged one case each, alternating, in one process: prompt tokens evaluated per sentence show
whether a response's material is evaluated once or once per sentence; per-sentence verdicts
are checked against the labels. `--messages-only` chooses slots by whole messages only (as
before session 12), for an A/B of the slot choice by shared text in two processes.

`--ab` compares in one process, under the same load, case by case in alternating order: `old`
(a rationale in every reply with no token cap, questions one at a time: the engine's slots
hidden from the judge) against `new` (the defaults). Prompt versions cannot be compared in one
process (the prompts are the source's): run a worktree of the old commit beside this one, at
the same time, on the same cases, for the same load. A tag at the start of each question keeps one
configuration from reusing the other's evaluated question.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judge import OUT_DIR, build, load_cases, predicted

import agenteval
from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.labelled import POSITIVE, criterion_config
from agenteval.criteria.judge.labelled import build as build_labelled
from agenteval.models import LLM, LocalModel, Message, ModelRequest, ModelResponse
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase

DEFAULT_CRITERIA = "final_response_match,rubric_final_response,hallucinations,safety"

_CALLS: list[dict[str, Any]] = []  # every llama.cpp call of the current case
_LOCK = threading.Lock()


def _instrument() -> None:
    """Wraps LocalModel._call to keep each reply's timings with the call's wall time."""
    original = LocalModel._call

    def timed(engine: Any, body: dict[str, Any], *args: Any) -> dict[str, Any]:
        start = time.perf_counter()
        reply = original(engine, body, *args)
        end = time.perf_counter()
        t = reply.get("timings") or {}
        with _LOCK:
            _CALLS.append({"start": start, "end": end, "processed": t.get("prompt_n", 0),
                           "reused": t.get("cache_n", 0), "generated": t.get("predicted_n", 0),
                           "prompt_ms": t.get("prompt_ms", 0.0), "gen_ms": t.get("predicted_ms", 0.0),
                           "max_tokens": body.get("max_tokens")})
        return reply

    LocalModel._call = staticmethod(timed)  # type: ignore[method-assign]


class Submitted:
    """Wraps the model: records when each request was submitted (time queued for our own slot
    limiter counts as waiting) and puts `tag` at the start of each question. With `slots`
    False the engine's slots are hidden from the judge, which then asks one question at a time
    (as before issue 28)."""

    def __init__(self, llm: LocalModel, tag: str = "", slots: bool = True) -> None:
        self._llm, self.tag = llm, tag
        self.submitted: list[float] = []
        # the judge begins its replies in the prompt (a source before session 12 has no such flag)
        self.prefills_replies = getattr(llm, "prefills_replies", False)
        if slots:
            self.slots = llm.slots

    @property
    def name(self) -> str:
        return self._llm.name

    async def generate(self, request: ModelRequest) -> ModelResponse:
        self.submitted.append(time.perf_counter())
        if self.tag:  # on the question, not on a reply begun in the prompt after it
            messages = list(request.messages)
            i = len(messages) - 1
            while i > 0 and messages[i].role == "assistant":
                i -= 1
            messages[i] = Message(messages[i].role, f"[{self.tag}] {messages[i].content}")
            request = replace(request, messages=tuple(messages))
        return await self._llm.generate(request)


def judge_for(model: Submitted, old: bool = False) -> JudgeService:
    """The judge at the defaults; `old`: a rationale in every reply, with no token cap (200)."""
    resolve: Callable[[str], LLM] = lambda name: model  # noqa: E731
    if old:
        return JudgeService(resolve, None, rationale_tokens=200, rationales="always")
    return JudgeService(resolve, None)


async def score(kind: str, case: dict[str, Any], judge: JudgeService, num_samples: int) -> dict[str, Any]:
    run, metric_name, options = build(kind, case, num_samples)
    metric = default_registry().configure(metric_name, options)
    result = await score_case(run, [metric], judge=judge)
    scored = [r for r in result.judge_records
              if r.step is None and not (r.item or "").endswith(", cross-check")]
    pred = predicted(result)
    return {"id": case["id"], "criterion": kind, "label": case["label"],
            "gold_positive": case["label"] in POSITIVE, "pred_positive": pred,
            "correct": pred == (case["label"] in POSITIVE), "verdicts": max(1, len(scored)),
            "labels": [r.verdict for r in result.judge_records],
            "rationales": [r.rationale for r in result.judge_records],
            "probs": [r.label_probs for r in result.judge_records],
            "errors": [e.message for e in result.metric_errors]}


async def score_merged(kind: str, cases: list[dict[str, Any]], judge: JudgeService,
                       num_samples: int) -> dict[str, Any]:
    """`cases` as the invocations of one case (a judged case with several questions)."""
    built = [build_labelled(kind, c) for c in cases]
    case = EvalCase(eval_id="+".join(b.id for b in built),
                    conversation=[i for b in built for i in b.case.conversation or []])
    run = CaseRun(case, [i for b in built for i in b.actual], "s")
    metric = default_registry().configure(built[0].metric, criterion_config(built[0], num_samples))
    result = await score_case(run, [metric], judge=judge)
    scored = [r for r in result.judge_records
              if r.step is None and not (r.item or "").endswith(", cross-check")]
    return {"id": case.eval_id, "criterion": f"{kind} x{len(cases)}", "label": None,
            "gold_positive": None, "pred_positive": [r.verdict for r in scored], "correct": None,
            "verdicts": max(1, len(scored)), "labels": [r.verdict for r in result.judge_records],
            "rationales": [r.rationale for r in result.judge_records],
            "errors": [e.message for e in result.metric_errors]}


def response_groups(limit: int | None = None) -> list[list[dict[str, Any]]]:
    """The hallucination cases (tuning set) grouped by context, groups of two sentences or more."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for kind, injection, case in load_cases(only="hallucinations"):
        if kind == "hallucinations" and not injection:
            groups.setdefault(json.dumps(case["context"], sort_keys=True), []).append(case)
    return [g for g in groups.values() if len(g) > 1][:limit]


async def score_response(group: list[dict[str, Any]], judge: JudgeService, num_samples: int
                         ) -> dict[str, Any]:
    """`group`'s sentences as the lines of one response, scored as one hallucinations case."""
    merged = {**group[0], "id": "+".join(c["id"] for c in group),
              "sentence": "\n".join(c["sentence"] for c in group)}
    run, metric_name, options = build("hallucinations", merged, num_samples)
    metric = default_registry().configure(metric_name, options)
    result = await score_case(run, [metric], judge=judge)
    per: dict[int, bool] = {}
    for r in result.judge_records:  # a sentence is positive when its question (and check) are
        n = int((r.item or "0").split(",")[0].split()[-1])
        per[n] = per.get(n, True) and r.score == 1.0
    preds = [per.get(i + 1) for i in range(len(group))]
    right = sum(p == (c["label"] in POSITIVE) for p, c in zip(preds, group, strict=True))
    return {"id": merged["id"], "criterion": "hallucinations response", "label": [c["label"] for c in group],
            "pred_positive": preds, "correct": right,
            "verdicts": len(group), "labels": [r.verdict for r in result.judge_records],
            "errors": [e.message for e in result.metric_errors]}


async def responses_ab(args: argparse.Namespace, model: Submitted, sink: Any) -> None:
    """`--responses`: each group as one response and as separate cases, alternating."""
    groups = response_groups(args.per)
    await score(*("hallucinations", groups[0][0]), judge_for(model), args.num_samples)  # warm-up
    for i, group in enumerate(groups):
        for config in (["response", "single"] if i % 2 == 0 else ["single", "response"]):
            mine = Submitted(model._llm, f"{config}-{group[0]['id']}-{args.run_tag}")
            judge = judge_for(mine)
            _CALLS.clear()
            load0, cpu0, wall0 = os.getloadavg()[0], time.process_time(), time.perf_counter()
            if config == "response":
                row = await score_response(group, judge, args.num_samples)
            else:
                rows = [await score("hallucinations", c, judge, args.num_samples) for c in group]
                row = {"id": "+".join(c["id"] for c in group), "criterion": "hallucinations single",
                       "pred_positive": [r["pred_positive"] for r in rows],
                       "correct": sum(bool(r["correct"]) for r in rows), "verdicts": len(group),
                       "labels": [x for r in rows for x in r["labels"]]}
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            calls = call_rows(list(_CALLS), list(mine.submitted))
            tot = {k: sum(c[k] for c in calls) for k in ("processed", "reused", "generated")}
            row.update(config=config, seconds=wall, cpu_seconds=cpu, load=[load0, os.getloadavg()[0]],
                       calls=calls, source=str(Path(agenteval.__file__).resolve().parent),
                       by_text=not args.messages_only)
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            sink.flush()
            print(f"{config:8} {row['id'][:40]:40} right {row['correct']}/{len(group)} {wall:6.1f}s "
                  f"cpu={cpu:5.1f}s calls={len(calls)} proc={tot['processed']} reused={tot['reused']} "
                  f"gen={tot['generated']} load={load0:.1f}", file=sys.stderr, flush=True)


def call_rows(calls: list[dict[str, Any]], submitted: list[float]) -> list[dict[str, Any]]:
    """Per call: its wall seconds from submission (the nearest earlier submission) and how
    much of it was waiting rather than llama.cpp computing this call."""
    rows, pending = [], sorted(submitted)
    for c in sorted(calls, key=lambda c: c["start"]):
        sub = max((s for s in pending if s <= c["start"]), default=c["start"])
        if sub in pending:
            pending.remove(sub)
        wall = c["end"] - sub
        compute = (c["prompt_ms"] + c["gen_ms"]) / 1000
        rows.append({**c, "wall": wall, "compute": compute, "waiting": max(0.0, wall - compute)})
    return rows


def _material(case: dict[str, Any]) -> set[str]:
    """The case's material as a slot could reuse it: every field's value (and every context
    field's), long enough that a shared one means a shared evaluated prefix."""
    parts = [v for k, v in case.items() if k not in ("id", "label", "note", "criterion", "context")]
    parts += list(case.get("context", {}).values())
    texts = (v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in parts)
    return {t for t in texts if len(t) >= 16}


def warm_up_case(candidates: list[dict[str, Any]], timed: list[dict[str, Any]]) -> dict[str, Any]:
    """The first of `candidates` sharing no material with any `timed` case: a warm-up that
    shares a context (hal-001 and hal-002) hands the timed case its material already
    evaluated (session 22: 1 token processed), so its time is not a verdict's."""
    taken = set().union(*(_material(c) for c in timed))
    for case in candidates:
        if not _material(case) & taken:
            return case
    raise SystemExit("no warm-up case shares no material with the timed cases")


async def main_async(args: argparse.Namespace) -> None:
    _instrument()
    model = Submitted(LocalModel(threads=args.threads) if args.threads else LocalModel())
    judge = judge_for(model)
    kinds = args.criteria.split(",")
    if args.ids:  # these cases, in this order (the first of each criterion is its warm-up)
        by_id = {c[2]["id"]: c for c in load_cases()}
        cases = [by_id[i] for i in args.ids.split(",")]
    else:
        cases = [c for c in load_cases() if c[0] in kinds and not c[1]]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for kind, _, case in cases:
        by_kind.setdefault(kind, []).append(case)
    if not args.ids:  # timed: the 2nd to the (per + 1)-th as before; a warm-up sharing none
        n = args.per * args.invocations
        by_kind = {k: [warm_up_case(v[:1] + v[n + 1:], v[1:n + 1]), *v[1:n + 1]] for k, v in by_kind.items()}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    src = Path(agenteval.__file__).resolve().parent
    print(f"agenteval from {src}; load {os.getloadavg()}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    await model._llm.load()
    (await model._llm._engine()).table.by_text = not args.messages_only
    print(f"model loaded in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    with out.open("w") as sink:
        if args.responses:
            await responses_ab(args, model, sink)
            return
        for kind in kinds:
            warm, *timed = by_kind.get(kind, [])
            w0, c0 = time.perf_counter(), time.process_time()
            _CALLS.clear()
            await score(kind, warm, judge, args.num_samples)  # examples into the prompt cache
            print(f"{kind}: warmed in {time.perf_counter() - w0:.1f} s "
                  f"(cpu {time.process_time() - c0:.1f} s, "
                  f"calls {len(_CALLS)}, processed {sum(c['processed'] for c in _CALLS)}, generated "
                  f"{sum(c['generated'] for c in _CALLS)}, load {os.getloadavg()[0]:.1f})",
                  file=sys.stderr, flush=True)
            _CALLS.clear()
            model.submitted.clear()
            k = args.invocations
            groups = [timed] if args.concurrent else [timed[j:j + k] for j in range(0, len(timed), k)]
            for i, group in enumerate(groups):
                configs = (["old", "new"] if i % 2 == 0 else ["new", "old"]) if args.ab else [""]
                for config in configs:
                    tag = f"{config}-{group[0]['id']}-{args.run_tag}" if config else ""
                    mine = Submitted(model._llm, tag, slots=config != "old")
                    rows = await timed_group(kind, group, judge_for(mine, config == "old"), mine, args)
                    for row in rows:
                        row.update(source=str(src), config=config)
                        sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                        sink.flush()
    print(f"load after: {os.getloadavg()}", file=sys.stderr)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    table(rows)
    if args.ab:
        compare([r for r in rows if r["config"] == "old"], [r for r in rows if r["config"] == "new"])


async def timed_group(kind: str, group: list[dict[str, Any]], judge: JudgeService, model: Submitted,
                      args: argparse.Namespace) -> list[dict[str, Any]]:
    """Scores `group` at once, with its wall and CPU seconds (split per case) and its calls."""
    _CALLS.clear()
    model.submitted.clear()
    load0, cpu0, wall0 = os.getloadavg()[0], time.process_time(), time.perf_counter()
    if args.invocations > 1:  # the group is one case of several invocations
        results = [await score_merged(kind, group, judge, args.num_samples)]
    else:
        results = await asyncio.gather(*(score(kind, c, judge, args.num_samples) for c in group))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    calls = call_rows(list(_CALLS), list(model.submitted))
    rows = []
    for r in results:
        rows.append({**r, "concurrent": len(group), "seconds": wall / len(results),
                     "cpu_seconds": cpu / len(results), "group_seconds": wall, "group_cpu": cpu,
                     "load": [load0, os.getloadavg()[0]], "calls": calls if r is results[0] else [],
                     "group_calls": len(calls)})
        tot = {k: sum(c[k] for c in calls) for k in ("processed", "reused", "generated", "waiting")}
        print(f"{kind:22} {r['id'][:8]:8} {model.tag.split('-')[0]:3} {'ok ' if r['correct'] else 'BAD'} "
              f"{wall:6.1f}s cpu={cpu:5.1f}s calls={len(calls)} proc={tot['processed']} "
              f"reused={tot['reused']} gen={tot['generated']} wait={tot['waiting']:.1f}s load={load0:.1f}",
              file=sys.stderr, flush=True)
    return rows


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))] if values else float("nan")


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per criterion (and all): median / p90 wall and CPU per case and per verdict, tokens."""
    out = {}
    for kind in [*dict.fromkeys(r["criterion"] for r in rows), "all"]:
        mine = [r for r in rows if kind in ("all", r["criterion"])]
        calls = [c for r in mine for c in r["calls"]]
        per_case = [r["seconds"] for r in mine]
        cpu_case = [r["cpu_seconds"] for r in mine]
        per_v = [r["seconds"] / r["verdicts"] for r in mine]
        # Cases judged failing (their verdicts carry a rationale): per verdict.
        failing = [r["seconds"] / r["verdicts"] for r in mine if r["pred_positive"] is False]
        cpu_failing = [r["cpu_seconds"] / r["verdicts"] for r in mine if r["pred_positive"] is False]
        cpu_v = [r["cpu_seconds"] / r["verdicts"] for r in mine]
        processed, reused = sum(c["processed"] for c in calls), sum(c["reused"] for c in calls)
        wall = max(1e-9, sum(c["wall"] for c in calls))
        out[kind] = {
            "cases": len(mine), "correct": sum(bool(r["correct"]) for r in mine),
            "case_s": statistics.median(per_case), "case_s_p90": pct(per_case, 0.9),
            "case_cpu": statistics.median(cpu_case), "case_cpu_p90": pct(cpu_case, 0.9),
            "verdict_s": statistics.median(per_v), "verdict_s_p90": pct(per_v, 0.9),
            "verdict_cpu": statistics.median(cpu_v), "verdict_cpu_p90": pct(cpu_v, 0.9),
            "failing": len(failing),
            "failing_s": statistics.median(failing) if failing else float("nan"),
            "failing_s_p90": pct(failing, 0.9),
            "failing_cpu": statistics.median(cpu_failing) if cpu_failing else float("nan"),
            "failing_cpu_p90": pct(cpu_failing, 0.9),
            "calls_per_case": len(calls) / max(1, len(mine)),
            "processed_per_case": processed / max(1, len(mine)),
            "reused_share": reused / max(1, processed + reused),
            "generated_per_case": sum(c["generated"] for c in calls) / max(1, len(mine)),
            "prompt_s_share": sum(c["prompt_ms"] for c in calls) / 1000 / wall,
            "gen_s_share": sum(c["gen_ms"] for c in calls) / 1000 / wall,
            "wait_s_share": sum(c["waiting"] for c in calls) / wall,
            "load": statistics.median(r["load"][0] for r in mine),
        }
    return out


def table(rows: list[dict[str, Any]]) -> None:
    s = summary(rows)
    print("| criterion | cases | right | s/case median (p90) | CPU s/case median (p90) "
          "| s/verdict median (p90) | CPU s/verdict median (p90) | calls/case "
          "| prompt tok processed/case | reused | generated/case "
          "| time: prompt / generation / waiting | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, v in s.items():
        print(f"| {kind} | {v['cases']} | {v['correct']} | {v['case_s']:.1f} ({v['case_s_p90']:.1f}) | "
              f"{v['case_cpu']:.1f} ({v['case_cpu_p90']:.1f}) | "
              f"{v['verdict_s']:.1f} ({v['verdict_s_p90']:.1f}) | "
              f"{v['verdict_cpu']:.1f} ({v['verdict_cpu_p90']:.1f}) | {v['calls_per_case']:.1f} | "
              f"{v['processed_per_case']:.0f} | {100 * v['reused_share']:.0f}% | "
              f"{v['generated_per_case']:.0f} | {100 * v['prompt_s_share']:.0f}% / "
              f"{100 * v['gen_s_share']:.0f}% / {100 * v['wait_s_share']:.0f}% | {v['load']:.1f} |")


def compare(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> None:
    b, a = summary(before), summary(after)
    print("| criterion | s/case before → after | CPU s/case before → after | faster (wall / CPU) "
          "| s/verdict median (p90) before → after | CPU s/verdict before → after "
          "| s/failing verdict median (p90) before → after | CPU s/failing verdict before → after "
          "| same verdicts | same rationales |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    old = {r["id"]: r for r in before}
    for kind in a:
        if kind not in b:
            continue
        mine = [r for r in after if r["id"] in old and kind in ("all", r["criterion"])]
        same = [r["pred_positive"] == old[r["id"]]["pred_positive"] for r in mine]
        said = [r.get("rationales") == old[r["id"]].get("rationales") for r in mine]
        x, y = b[kind], a[kind]

        def mp(v: dict[str, float], k: str) -> str:
            return f"{v[k]:.2f} ({v[k + '_p90']:.2f})"
        print(f"| {kind} | {x['case_s']:.2f} → {y['case_s']:.2f} | "
              f"{x['case_cpu']:.2f} → {y['case_cpu']:.2f} | "
              f"{x['case_s'] / y['case_s']:.2f}x / {x['case_cpu'] / y['case_cpu']:.2f}x | "
              f"{mp(x, 'verdict_s')} → {mp(y, 'verdict_s')} | "
              f"{x['verdict_cpu']:.2f} → {y['verdict_cpu']:.2f} | "
              f"{mp(x, 'failing_s')} → {mp(y, 'failing_s')} "
              f"[{y['failing']}] | {x['failing_cpu']:.2f} → {y['failing_cpu']:.2f} | "
              f"{sum(same)}/{len(same)} | {sum(said)}/{len(said)} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--criteria", default=DEFAULT_CRITERIA)
    p.add_argument("--per", type=int, default=3, help="timed cases per criterion (after one warm-up case)")
    p.add_argument("--num-samples", type=int, default=5)
    p.add_argument("--ids", help="comma-separated case ids instead of the first --per of each criterion")
    p.add_argument("--threads", type=int)
    p.add_argument("--concurrent", action="store_true", help="a criterion's timed cases at once")
    p.add_argument("--invocations", type=int, default=1,
                   help="K labelled cases as the K invocations of one judged case (K questions)")
    p.add_argument("--responses", action="store_true",
                   help="hallucination sentences sharing a context: one response vs one case each")
    p.add_argument("--ab", action="store_true", help="old vs new configuration, interleaved in one process")
    p.add_argument("--messages-only", action="store_true",
                   help="slots chosen by whole messages only, as before session 12 (no text sharing)")
    p.add_argument("--run-tag", default=str(int(time.time())))
    p.add_argument("--out", default=str(OUT_DIR / "judge_speed.jsonl"))
    p.add_argument("--table-from", metavar="JSONL")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = p.parse_args()
    read = lambda path: [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]  # noqa: E731
    if args.compare:
        compare(read(args.compare[0]), read(args.compare[1]))
    elif args.table_from:
        rows = read(args.table_from)
        if any(r.get("config") for r in rows):
            compare([r for r in rows if r.get("config") == "old"],
                    [r for r in rows if r.get("config") == "new"])
        else:
            table(rows)
    else:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
