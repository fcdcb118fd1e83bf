"""What the prefix cache, the sampling strategy and the judge cache save, on the local judge.

For each of --cases judge questions (the real prompts of bench_judge.py's cases, taken evenly
from the five criteria) it draws --num-samples samples at T=0.7 in several ways and records
wall time and the prompt tokens llama.cpp actually processed (prompt minus cached tokens):

  seq        K requests with n=1, one after another (the prompt prefix stays cached in the slot)
  concurrent K requests with n=1 at once, as a client firing independent requests would
             (ADK's LlmAsJudge does this, up to parallelism_limit)
  n          one request with n=K through LocalModel (what JudgeService does: samples drawn one
             after another on the same slot, prefill paid once)
  nocache    K requests with n=1, one after another, with llama.cpp's prompt cache off
             (`cache_prompt: false`): the cost without any prefix reuse
  server_n   one body with "n": K sent straight to llama.cpp (its own multi-completion)

Every mode starts cold: a per-(mode, case) tag at the very start of the system message keeps
one mode from reusing another's cached prefix. Then it checks the judge cache: the same cases
scored twice through score_case with a JudgeCacheDB; the second pass must make 0 model calls.

    python bench/bench_judge_sampling.py [--cases 20] [--num-samples 5] [--modes seq,n,...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio.to_thread

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judge import OUT_DIR, build, load_cases, local_judge

from agenteval.criteria import default_registry
from agenteval.criteria.base import EvalContext
from agenteval.criteria.judge.base import JudgeCriterion
from agenteval.criteria.judge.engine.decision import JudgeQuestion
from agenteval.criteria.judge.engine.verdict import verdict_schema
from agenteval.criteria.judge.prompting import prompts
from agenteval.models import Message, ModelRequest, resolve_model
from agenteval.models.local import _ENGINES
from agenteval.models.openai_wire import build_body
from agenteval.runner import score_case
from agenteval.store import JudgeCacheDB

MODES = ("seq", "concurrent", "n", "nocache", "server_n")


Question = tuple[str, JudgeQuestion]  # (case id, the question its criterion asks)


async def questions(n_cases: int) -> list[Question]:
    """(case id, first question) of n_cases cases spread over criteria. A two-step rubric
    criterion's question is its second step, built from the requirement the judge wrote (that
    greedy first call is not part of the sampling comparison)."""
    per = max(1, -(-n_cases // 5))
    judge, _ = local_judge()
    out = []
    for kind, _, case in load_cases(limit=per):
        run, metric_name, options = build(kind, case, 1)
        criterion = default_registry().configure(metric_name, options).build()
        assert isinstance(criterion, JudgeCriterion)
        ctx = EvalContext(actual=run.actual, expected=run.case.conversation, case_rubrics=(),
                          judge=judge)
        asked, _ = await criterion.aquestions(ctx)
        out.append((case["id"], asked[0]))
    # interleave criteria so that a small --cases still covers all five
    out.sort(key=lambda x: (int(x[0].split("-")[1]), x[0]))
    return out[:n_cases]


def request(tag: str, q: JudgeQuestion, k: int) -> ModelRequest:
    """The request JudgeService would send for `q` (its solved examples as earlier turns),
    with `tag` at the start of the system prompt so that no mode reuses another's cache."""
    shots = tuple(m for user, reply in q.examples
                  for m in (Message("user", user), Message("assistant", reply)))
    return ModelRequest(messages=(Message("system", f"[{tag}] {prompts.SYSTEM}"), *shots,
                                  Message("user", q.prompt)),
                        json_schema=verdict_schema(q.labels, q.notes), temperature=0.7,
                        max_tokens=200, n=k, seed=7)


async def run_mode(mode: str, tag: str, q: JudgeQuestion, k: int) -> dict[str, Any]:
    model = resolve_model("local", {})
    req = request(tag, q, k)
    start = time.perf_counter()
    processed = total = completion = 0
    texts: list[str] = []
    if mode in ("seq", "concurrent", "n"):
        if mode == "n":
            responses = [await model.generate(req)]
        elif mode == "seq":
            responses = [await model.generate(replace(req, n=1, seed=7 + i)) for i in range(k)]
        else:
            responses = list(await asyncio.gather(*(model.generate(replace(req, n=1, seed=7 + i))
                                                    for i in range(k))))
        for r in responses:
            total += r.usage.prompt_tokens
            processed += r.usage.prompt_tokens - r.usage.cached_tokens
            completion += r.usage.completion_tokens
            texts += [g.text for g in r.generations]
    else:
        engine = next(iter(_ENGINES.values()))
        bodies = []
        if mode == "nocache":
            for i in range(k):
                body = build_body(replace(req, n=1), seed=7 + i)
                body["cache_prompt"] = False
                bodies.append(body)
        else:  # server_n
            bodies.append(build_body(req, n=k, seed=7))
        for body in bodies:
            reply = await anyio.to_thread.run_sync(engine.server.handle_chat_completions, body)
            usage = reply.get("usage") or {}
            timings = reply.get("timings") or {}
            total += int(usage.get("prompt_tokens") or 0)
            processed += int(timings.get("prompt_n", usage.get("prompt_tokens") or 0))
            completion += int(usage.get("completion_tokens") or 0)
            texts += [c["message"]["content"] for c in reply.get("choices", [])]
    seconds = time.perf_counter() - start
    return {"mode": mode, "seconds": seconds, "prompt_tokens": total, "processed_tokens": processed,
            "completion_tokens": completion, "samples": len(texts), "texts": texts}


async def main_async(args: argparse.Namespace) -> None:
    qs = await questions(args.cases)
    k = args.num_samples
    modes = args.modes.split(",")
    await resolve_model("local", {}).generate(request("warm-up", JudgeQuestion(0, None, "Say yes."), 1))
    rows = []
    for i, (cid, q) in enumerate(qs, 1):
        for mode in modes:
            row = await run_mode(mode, f"{mode}-{cid}-{args.run_tag}", q, k)
            row["id"] = cid
            rows.append(row)
            print(f"[{i}/{len(qs)}] {cid} {mode:10} {row['seconds']:6.1f}s processed "
                  f"{row['processed_tokens']:5} of {row['prompt_tokens']:5} prompt tok, "
                  f"{row['completion_tokens']} out, "
                  f"{row['samples']} samples", file=sys.stderr, flush=True)
    out = Path(args.out)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"\n{len(qs)} questions x {k} samples at T=0.7; wall time and prompt tokens per question "
          "(summed over its samples):\n")
    print("| mode | total s | median s/question | prompt tok/question (median) | processed tok/question "
          "(median) | processed, total | completion tok, total | samples |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in modes:
        mine = [r for r in rows if r["mode"] == mode]
        print(f"| {mode} | {sum(r['seconds'] for r in mine):.1f} | "
              f"{statistics.median(r['seconds'] for r in mine):.2f} | "
              f"{statistics.median(r['prompt_tokens'] for r in mine):.0f} | "
              f"{statistics.median(r['processed_tokens'] for r in mine):.0f} | "
              f"{sum(r['processed_tokens'] for r in mine)} | {sum(r['completion_tokens'] for r in mine)} | "
              f"{sum(r['samples'] for r in mine)} |")
    if not args.skip_cache_check:
        await judge_cache_check(args, [cid for cid, _ in qs])


async def judge_cache_check(args: argparse.Namespace, ids: list[str]) -> None:
    cases = load_cases(ids=set(ids))
    with tempfile.TemporaryDirectory() as tmp:
        cache = JudgeCacheDB(Path(tmp) / "judge_cache.sqlite")
        results = []
        for attempt in ("first", "second"):
            judge, model = local_judge(cache)
            start = time.perf_counter()
            scores = []
            for kind, _, case in cases:
                run, metric_name, options = build(kind, case, args.num_samples)
                metric = default_registry().configure(metric_name, options)
                result = await score_case(run, [metric], judge=judge)
                scores.append(result.overall_eval_metric_results[0].score)
            results.append((attempt, time.perf_counter() - start, model.calls, judge.calls, scores))
        cache.close()
    print(f"\nJudge cache ({len(cases)} cases, num_samples={args.num_samples}, JudgeCacheDB):\n")
    print("| pass | seconds | model calls | judge.calls |")
    print("|---|---|---|---|")
    for attempt, seconds, calls, judge_calls, _ in results:
        print(f"| {attempt} | {seconds:.2f} | {calls} | {judge_calls} |")
    same = results[0][4] == results[1][4]
    print(f"\nsecond pass scores identical to the first: {same}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=int, default=20)
    p.add_argument("--num-samples", type=int, default=5)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--run-tag", default=str(int(time.time())), help="part of the cold-start tag")
    p.add_argument("--skip-cache-check", action="store_true")
    p.add_argument("--out", default=str(OUT_DIR / "judge_sampling.jsonl"))
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
