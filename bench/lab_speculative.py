"""Lab: does draft-free (n-gram / prompt-lookup) speculative decoding speed up the embedded judge,
and does it leave its replies unchanged? (issue 28)

Phase 1 records the judge's real requests: labelled cases of every criterion in `--criteria`
(`--per` positive and `--per` negative ones each, from bench/judge_set), scored through
`score_case` and a `JudgeService` at its defaults over `LocalModel`, every llama.cpp request body
kept as sent (grammar / JSON schema, `n_probs`/logprobs, a reply begun in the prompt).

Phase 2 starts two more engines in this process, one slot each, the same model and threads:
`off` (no speculation, as shipped) and `on` (`--type`, e.g. ngram_simple with `--size-n`
`--size-m`), and replays every recorded body to both, alternating which goes first, each with
its own prompt cache (both see the same sequence of prompts). Per call it logs: the reply text
of each, whether they are identical, the largest difference of any chosen token's
log-probability and of any top alternative's, llama.cpp's `draft_n` / `draft_n_accepted`,
generated tokens, generation ms, and the wall and process CPU seconds of each call.

    python bench/lab_speculative.py --per 2 --type ngram_simple --size-n 3 --size-m 16 [--label-calls off]
    python bench/lab_speculative.py --table-from bench/out/lab_speculative.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judge import OUT_DIR, build, load_cases

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.labelled import POSITIVE
from agenteval.models import LocalModel
from agenteval.models import local as local_module
from agenteval.runner import score_case

DEFAULT_CRITERIA = "final_response_match,rubric_final_response,rubric_tool_use,hallucinations,safety"


def pick_cases(kinds: list[str], per: int) -> list[tuple[str, dict[str, Any]]]:
    """The first `per` positive and `per` negative (not injection) cases of each criterion."""
    picked: list[tuple[str, dict[str, Any]]] = []
    for kind in kinds:
        mine = [c for k, inj, c in load_cases(only=kind) if k == kind and not inj]
        pos = [c for c in mine if c["label"] in POSITIVE]
        neg = [c for c in mine if c["label"] not in POSITIVE]
        picked += [(kind, c) for c in pos[:per] + neg[:per]]
    return picked


async def record(cases: list[tuple[str, dict[str, Any]]], threads: int) -> list[dict[str, Any]]:
    """Scores `cases` through the real judge; returns every llama.cpp request body it sent."""
    bodies: list[dict[str, Any]] = []
    original = LocalModel._complete

    def kept(engine: Any, body: dict[str, Any]) -> dict[str, Any]:
        bodies.append({k: v for k, v in copy.deepcopy(body).items() if k != "id_slot"})
        return original(engine, body)

    LocalModel._complete = staticmethod(kept)  # type: ignore[method-assign]
    try:
        llm = LocalModel(threads=threads)
        judge = JudgeService(lambda name: llm, None)
        for kind, case in cases:
            run, metric_name, options = build(kind, case, 5)
            n0 = len(bodies)
            await score_case(run, [default_registry().configure(metric_name, options)], judge=judge)
            for b in bodies[n0:]:
                b["_case"] = f"{kind}:{case['id']}:{case['label']}"
            print(f"recorded {kind} {case['id']} ({case['label']}): {len(bodies) - n0} calls",
                  file=sys.stderr, flush=True)
    finally:
        LocalModel._complete = original  # type: ignore[method-assign]
    return bodies


def start(model_path: str, threads: int, spec: argparse.Namespace | None) -> Any:
    """One engine with one slot; with `spec`, speculative decoding of that type."""
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = model_path
    p.n_parallel = 1
    p.n_ctx = 4096
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.cpuparams.poll = 0
    p.cpuparams_batch.poll = 0
    p.cache_ram_mib = 512
    p.port = 0
    p.verbosity = -1
    if spec is not None:
        kind = getattr(xllamacpp.common_speculative_type, f"COMMON_SPECULATIVE_TYPE_{spec.type.upper()}")
        p.speculative.types = [kind]
        for name in ("ngram_simple", "ngram_map_k", "ngram_map_k4v"):
            m = getattr(p.speculative, name)
            m.size_n, m.size_m, m.min_hits = spec.size_n, spec.size_m, spec.min_hits
        p.speculative.draft.n_max = spec.size_m
    return xllamacpp.Server(p)


def tokens(reply: dict[str, Any]) -> list[dict[str, Any]]:
    lp = reply["choices"][0].get("logprobs") or {}
    return list(lp.get("content") or [])


def lp_diff(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float]:
    """Largest |difference| of the chosen tokens' log-probabilities and of the top
    alternatives' (by token, over the alternatives both list)."""
    ta, tb = tokens(a), tokens(b)
    chosen, alt = 0.0, 0.0
    for x, y in zip(ta, tb, strict=False):
        if x.get("token") != y.get("token"):
            break
        chosen = max(chosen, abs(x["logprob"] - y["logprob"]))
        ya = {t["token"]: t["logprob"] for t in y.get("top_logprobs") or []}
        for t in x.get("top_logprobs") or []:
            if t["token"] in ya:
                alt = max(alt, abs(t["logprob"] - ya[t["token"]]))
    return chosen, alt


def call(server: Any, body: dict[str, Any], extra: dict[str, Any] | None = None
         ) -> tuple[dict[str, Any], float, float]:
    w, c = time.perf_counter(), time.process_time()
    sent = {k: v for k, v in body.items() if not k.startswith("_")}
    reply = server.handle_chat_completions({**sent, **(extra or {})})
    return reply, time.perf_counter() - w, time.process_time() - c


def replay(bodies: list[dict[str, Any]], args: argparse.Namespace, sink: Any) -> None:
    model_path = str(local_module.model_file(None))
    servers = {"off": start(model_path, args.threads, None), "on": start(model_path, args.threads, args)}
    for i, body in enumerate(bodies):
        order = ["off", "on"] if i % 2 == 0 else ["on", "off"]
        got: dict[str, tuple[dict[str, Any], float, float]] = {}
        # `--label-calls off`: no drafts where the judge reads log-probabilities (per request)
        extra = {"speculative.n_max": 0} if args.label_calls == "off" and body.get("logprobs") else None
        for name in order:
            got[name] = call(servers[name], body, extra if name == "on" else None)
        (a, wa, ca), (b, wb, cb) = got["off"], got["on"]
        ta, tb = a.get("timings") or {}, b.get("timings") or {}
        text_a = a["choices"][0]["message"].get("content") if "choices" in a else str(a)[:200]
        text_b = b["choices"][0]["message"].get("content") if "choices" in b else str(b)[:200]
        chosen, alt = lp_diff(a, b) if "choices" in a and "choices" in b else (float("nan"),) * 2
        row = {"i": i, "case": body["_case"], "max_tokens": body.get("max_tokens"),
               "grammar": "grammar" in body or "json_schema" in body or "response_format" in body,
               "n_probs": bool(body.get("logprobs")), "begun": body["messages"][-1]["role"] == "assistant",
               "same_text": text_a == text_b, "text_off": text_a, "text_on": text_b,
               "lp_chosen_diff": chosen, "lp_alt_diff": alt,
               "gen": tb.get("predicted_n"), "gen_off": ta.get("predicted_n"),
               "draft_n": tb.get("draft_n"), "accepted": tb.get("draft_n_accepted"),
               "gen_ms_off": ta.get("predicted_ms"), "gen_ms_on": tb.get("predicted_ms"),
               "prompt_n_off": ta.get("prompt_n"), "prompt_n_on": tb.get("prompt_n"),
               "first_tokens_off": [(t["token"], round(t["logprob"], 4)) for t in tokens(a)[:6]],
               "first_tokens_on": [(t["token"], round(t["logprob"], 4)) for t in tokens(b)[:6]],
               "wall_off": wa, "wall_on": wb, "cpu_off": ca, "cpu_on": cb, "load": os.getloadavg()[0]}
        sink.write(json.dumps(row, ensure_ascii=False) + "\n")
        sink.flush()
        print(f"{i:3} {row['case'][:40]:40} same={row['same_text']!s:5} gen={row['gen_off']}/{row['gen']} "
              f"draft={row['draft_n']} acc={row['accepted']} lp={chosen:.3f}/{alt:.3f} "
              f"wall {wa:.2f}/{wb:.2f} cpu {ca:.2f}/{cb:.2f}", file=sys.stderr, flush=True)


def table(rows: list[dict[str, Any]]) -> None:
    def med(k: str, sel: list[dict[str, Any]]) -> float:
        v = [r[k] for r in sel if r.get(k) is not None]
        return statistics.median(v) if v else float("nan")

    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        kind = r["case"].split(":")[0]
        groups.setdefault(kind, []).append(r)
        groups.setdefault("all", []).append(r)
    print(f"{'criterion':24} calls same  gen  draft acc  lp_max  wall off/on (sum)  cpu off/on (sum)")
    for kind, sel in groups.items():
        same = sum(r["same_text"] for r in sel)
        lp = max((r["lp_chosen_diff"] for r in sel if r["lp_chosen_diff"] == r["lp_chosen_diff"]), default=0)
        print(f"{kind:24} {len(sel):5} {same:4} {sum(r['gen'] or 0 for r in sel):4} "
              f"{sum(r['draft_n'] or 0 for r in sel):5} {sum(r['accepted'] or 0 for r in sel):4} {lp:7.4f}"
              f"  {sum(r['wall_off'] for r in sel):7.1f}/{sum(r['wall_on'] for r in sel):7.1f}"
              f"  {sum(r['cpu_off'] for r in sel):7.1f}/{sum(r['cpu_on'] for r in sel):7.1f}"
              f"  (median gen ms {med('gen_ms_off', sel):.0f}/{med('gen_ms_on', sel):.0f})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--criteria", default=DEFAULT_CRITERIA)
    p.add_argument("--per", type=int, default=2, help="positive and negative cases per criterion")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--type", default="ngram_simple", help="ngram_simple, ngram_map_k, ngram_cache, ...")
    p.add_argument("--size-n", type=int, default=3, help="n-gram length looked up")
    p.add_argument("--size-m", type=int, default=16, help="tokens drafted after a match")
    p.add_argument("--min-hits", type=int, default=1)
    p.add_argument("--label-calls", choices=("on", "off"), default="on",
                   help="off: calls asking for log-probabilities sent with speculative.n_max 0 "
                        "(xllamacpp 2026.10.11549 drafts all the same)")
    p.add_argument("--bodies", help="replay these recorded bodies (JSON lines) instead of recording")
    p.add_argument("--out", default=str(OUT_DIR / "lab_speculative.jsonl"))
    p.add_argument("--table-from", metavar="JSONL")
    args = p.parse_args()
    if args.table_from:
        table([json.loads(x) for x in Path(args.table_from).read_text().splitlines()])
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.bodies:
        bodies = [json.loads(x) for x in Path(args.bodies).read_text().splitlines()]
    else:
        bodies = asyncio.run(record(pick_cases(args.criteria.split(","), args.per), args.threads))
        local_module._ENGINES.clear()  # free the recording engine's memory
        with out.with_suffix(".bodies.jsonl").open("w") as f:
            f.writelines(json.dumps(b, ensure_ascii=False) + "\n" for b in bodies)
    with out.open("w") as sink:
        replay(bodies, args, sink)
    table([json.loads(x) for x in out.read_text().splitlines()])


if __name__ == "__main__":
    main()
