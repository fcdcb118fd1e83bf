"""Lab: where one verdict's material evaluation goes, op by op, on the embedded engine (issue 28
item 1, session 20).

A passing verdict is one label call: its criterion's fixed prefix (1,100-2,600 tokens) is already
in the slot, and the call evaluates its material (64-110 tokens) and generates one token. This
lab loads one engine at the shipped settings (`models.local._params`: the same threads, batch,
flash attention, KV type, repacking), takes the label-call bodies of one prefix group from a file
`lab_material.py --record` wrote (the longest prefix unless `--group`), evaluates the prefix once
(untimed), then replays the group's calls `--calls` times in all, so each call evaluates only its
own material behind the cached prefix. With `--perf FILE` it runs `perf record` on its own
process for exactly those calls (not the load, not the warm-up), and prints the samples by op:

  q4_K gemm      the 168 Q4_K weight matrices, repacked to q4_K_8x8 (`ggml_gemm_q4_K_8x8_q8_K`)
  q6_K matmul    the Q6_K weights, not repacked in this build (`ggml_vec_dot_q6_K_q8_K`)
  q8_0 matmul    Q8_0 weights (a derived model file): llamafile's tinyBLAS or `vec_dot_q8_0`
  quantize       the activations quantised to q8_K / q8_0 for those matmuls
  attention      flash attention over the prefix and material (f16 K/V dot products, the online
                 softmax, the K/V rows converted)
  waiting        libgomp (threads spinning or sleeping at ggml's barriers) and the kernel
  other          norms, rope, adds, the KV store, the sampler, the server

Also per call: llama.cpp's `timings` (prompt tokens evaluated, prompt ms), process CPU seconds,
and the label's top probabilities (`--probs-out` keeps them to compare model files). `--model`
replaces the model file (e.g. a derived one, `lab_requant.py`); `--short` replays the material
behind a one-line system prompt (no long prefix to attend to).

    python bench/lab_op_profile.py --bodies bench/out/s19_bodies.jsonl --calls 24 --perf /tmp/op.data
    python bench/lab_op_profile.py --report /tmp/op.data
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_engine_params import apply
from lab_material import prefix_of, shortened

from agenteval.models import local as local_module

# Op by symbol (perf's `dso,sym`), first match wins; the rest is "other".
OPS: list[tuple[str, str]] = [
    ("waiting", r"libgomp|\[kernel|\[unknown\]|gomp_|futex|ggml_barrier|sched_yield"),
    ("q4_K gemm", r"q4_K_8x8|q4_K_8x4|q4_K.*gemm|gemm.*q4_K|gemv_q4_K"),
    # This build has no Q6_K repack but a tiled K-quant driver; in this model only Q6_K goes through
    # it (`mul_mat_tiled_driver<block_q6_K, 16, false, 32, true>`: microtile <16, false, 32, ...>).
    ("q6_K matmul", r"q6_K_q8_K|gemm_q6_K|gemv_q6_K|tiled_"),
    ("q8_0 matmul", r"tinyBLAS_Q0|vec_dot_q8_0|q8_0_q8_0|gemm_q8_0|gemv_q8_0"),
    ("quantize", r"quantize_row_q8|quantize_mat_q8|quantize_q8|from_float"),
    # Flash attention; with it off, K*Q and V*softmax are f16 GEMMs in llamafile's tinyBLAS
    # (`tinyBLAS<8, __m256, __m256, unsigned short, ...>`) and the softmax is its own op.
    ("attention", r"flash_attn|vec_dot_f16|vec_mad_f16|vec_mad_f32|vec_scale|fp16_to_fp32|"
                  r"fp32_to_fp16|softmax|soft_max|expf|tinyBLAS<.*unsigned short"),
]


def op_of(dso: str, sym: str) -> str:
    for name, pattern in OPS:
        if re.search(pattern, f"{dso} {sym}"):
            return name
    return "other"


def engine(model_path: str, slots: int, ctx: int, threads: int, spec: str = "") -> Any:
    """One engine with the shipped parameters (no saved prompt states), then `spec`'s changes
    (`lab_engine_params.apply` keys: fa, kv, n_ubatch, threads, ...)."""
    import xllamacpp

    key = local_module._EngineKey(model_path, slots, ctx, threads)
    params = local_module._params(xllamacpp, key, None)
    for k, v in settings(spec).items():
        if k not in ("model", "short"):
            apply(params, k, v, xllamacpp)
    return xllamacpp.Server(params)


def settings(spec: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in filter(None, spec.split(",")))


def call(server: Any, body: dict[str, Any]) -> dict[str, Any]:
    w, c = time.perf_counter(), time.process_time()
    reply = server.handle_chat_completions({**body, "id_slot": 0})
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    if "choices" not in reply:
        raise SystemExit(f"engine error: {str(reply)[:300]}")
    t = reply.get("timings") or {}
    content = (reply["choices"][0].get("logprobs") or {}).get("content") or []
    top = content[0].get("top_logprobs") or [] if content else []
    return {"prompt_n": int(t.get("prompt_n") or 0), "cache_n": int(t.get("cache_n") or 0),
            "prompt_ms": float(t.get("prompt_ms") or 0.0),
            "predicted_ms": float(t.get("predicted_ms") or 0.0),
            "wall": wall, "cpu": cpu, "text": reply["choices"][0]["message"].get("content"),
            "probs": {x["token"]: math.exp(x["logprob"]) for x in top[:5]}}


def groups_of(path: str) -> list[list[dict[str, Any]]]:
    bodies = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    bodies = [{k: v for k, v in b.items() if k != "stream"} for b in bodies if b.get("max_tokens") == 1]
    groups: dict[str, list[dict[str, Any]]] = {}
    for b in bodies:
        groups.setdefault(prefix_of(b), []).append(b)
    return [g for _, g in sorted(groups.items(), key=lambda kv: -len(kv[0]))]


def run(args: argparse.Namespace) -> None:
    """Every set's engine loaded (one process: engines run one at a time), each warmed on its
    group's prefix, then `--rounds` rounds of `--calls` calls per set, the order alternating."""
    shipped = str(local_module.model_file(None))
    specs = {"default": ""} | dict(s.split(":", 1) for s in args.sets)
    if args.only_sets:
        specs = {k: v for k, v in specs.items() if k in args.only_sets.split(",")}
    group = groups_of(args.bodies)[args.group]
    servers: dict[str, Any] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    for name, spec in specs.items():
        conf = settings(spec)
        t = time.perf_counter()
        servers[name] = engine(conf.get("model", shipped), args.slots, args.ctx, args.threads, spec)
        bodies[name] = [shortened(b) for b in group] if conf.get("short") == "1" else group
        warm = call(servers[name], bodies[name][-1])
        print(f"{name} ({spec or 'shipped'}): loaded in {time.perf_counter() - t:.1f} s, warm "
              f"{warm['prompt_n']} tokens", file=sys.stderr, flush=True)
    names = list(specs)
    if args.interleave:
        interleaved(args, specs, servers, bodies, len(group))
        return
    for r in range(args.rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            perf = None
            if args.perf and r == 0:
                perf = subprocess.Popen(["perf", "record", "-F", str(args.freq), "-p", str(os.getpid()),
                                         "-o", f"{args.perf}.{name}", "-q"], stdout=subprocess.DEVNULL)
                time.sleep(1.0)  # perf attaches to every thread of the process
            load0 = os.getloadavg()[0]
            rows = [{"i": i, "case": bodies[name][i % len(group)].get("_case"),
                     **call(servers[name], bodies[name][i % len(group)])} for i in range(args.calls)]
            load1 = os.getloadavg()[0]
            if perf is not None:
                perf.send_signal(signal.SIGINT)
                perf.wait()
            summary(name, r, rows, load0, load1)
            with open(args.out, "a", encoding="utf-8") as sink:
                for row in rows:
                    sink.write(json.dumps({"tag": args.tag, "set": name, "spec": specs[name], "round": r,
                                           "load": load1, **row}) + "\n")
    table(args.out, args.tag)
    if args.perf:
        for name in names:
            report(f"{args.perf}.{name}")


def interleaved(args: argparse.Namespace, specs: dict[str, str], servers: dict[str, Any],
                bodies: dict[str, list[dict[str, Any]]], n: int) -> None:
    """Call by call: each body to every set in turn, the first set alternating call by call, so
    a pair of calls is seconds apart under the same load (a round is `--calls` such steps)."""
    names = list(specs)
    k = 0
    for r in range(args.rounds):
        got: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        load0 = os.getloadavg()[0]
        for i in range(args.calls):
            for name in names if k % 2 == 0 else names[::-1]:
                got[name].append({"i": i, "case": bodies[name][i % n].get("_case"),
                                  **call(servers[name], bodies[name][i % n])})
            k += 1
        load1 = os.getloadavg()[0]
        for name in names:
            summary(name, r, got[name], load0, load1)
            with open(args.out, "a", encoding="utf-8") as sink:
                for row in got[name]:
                    sink.write(json.dumps({"tag": args.tag, "set": name, "spec": specs[name], "round": r,
                                           "load": load1, **row}) + "\n")
    table(args.out, args.tag)


def summary(name: str, r: int, rows: list[dict[str, Any]], load0: float, load1: float) -> None:
    pn = sum(x["prompt_n"] for x in rows)
    print(f"r{r} {name:10} {len(rows)} calls, {pn / len(rows):.0f} tokens a call behind "
          f"{statistics.median(x['cache_n'] for x in rows):.0f} cached: "
          f"{sum(x['prompt_ms'] for x in rows) / pn:6.1f} ms/token (llama.cpp), "
          f"{sum(x['cpu'] for x in rows) / pn * 1000:6.1f} ms CPU/token, "
          f"{sum(x['wall'] for x in rows) / len(rows):.2f} s wall a call; load {load0:.1f} -> {load1:.1f}",
          file=sys.stderr, flush=True)


def table(path: str, tag: str | None) -> None:
    """Per set against `default`, round by round on the same calls: llama.cpp ms per prompt
    token and CPU ms per prompt token (and their ratios), same reply text, and the largest
    |difference| of a top-5 label probability."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    rows = [x for x in rows if tag is None or x["tag"] == tag]
    by: dict[tuple[str, int], dict[str, list[dict[str, Any]]]] = {}
    for x in rows:
        by.setdefault((x["tag"], x["round"]), {}).setdefault(x["set"], []).append(x)

    def per_tok(xs: list[dict[str, Any]], k: str) -> float:
        return sum(x[k] for x in xs) / max(1, sum(x["prompt_n"] for x in xs))

    sets = sorted({x["set"] for x in rows}, key=lambda s: (s != "default", s))
    for s in sets:
        rounds = [g for g in by.values() if s in g and "default" in g]
        if not rounds:
            continue
        ms = [per_tok(g[s], "prompt_ms") for g in rounds]
        cpu = [per_tok(g[s], "cpu") * 1000 for g in rounds]
        rm = [per_tok(g[s], "prompt_ms") / per_tok(g["default"], "prompt_ms") for g in rounds]
        rc = [per_tok(g[s], "cpu") / per_tok(g["default"], "cpu") for g in rounds]
        dps, same = [], 0
        for g in rounds:
            for a, b in zip(g[s], g["default"], strict=True):
                common = set(a["probs"]) & set(b["probs"])
                dps.append(max((abs(a["probs"][t] - b["probs"][t]) for t in common), default=1.0))
                same += a["text"] == b["text"]
        loads = [x["load"] for g in rounds for x in g[s]]
        print(f"{s:10} rounds {len(rounds)} ms/tok {statistics.median(ms):6.1f} CPU ms/tok "
              f"{statistics.median(cpu):6.1f}  ratio ms {statistics.median(rm):.3f} "
              f"[{' '.join(f'{x:.2f}' for x in rm)}] CPU {statistics.median(rc):.3f} "
              f"[{' '.join(f'{x:.2f}' for x in rc)}]  same text {same}/{len(dps)} "
              f"max dp {max(dps):.4f}  load {min(loads):.1f}-{max(loads):.1f}")


def report(path: str) -> None:
    """perf's self samples by op (above) and the 15 hottest symbols."""
    out = subprocess.run(["perf", "report", "-i", path, "--no-children", "--sort", "dso,sym", "--stdio",
                          "-F", "overhead,sample,dso,sym", "--percent-limit", "0"],
                         capture_output=True, text=True, check=True).stdout
    by_op: dict[str, float] = {}
    samples_of: dict[str, int] = {}
    top: list[tuple[float, str, str]] = []
    total = 0
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+(\S+)\s+\[.\]\s+(.*)$", line)
        if not m:
            continue
        pct, samples, dso, sym = float(m[1]), int(m[2]), m[3], m[4].strip()
        total += samples
        op = op_of(dso, sym)
        by_op[op] = by_op.get(op, 0.0) + pct
        samples_of[op] = samples_of.get(op, 0) + samples
        top.append((pct, dso, sym))
    print(f"{path}: {total} samples")
    for op, pct in sorted(by_op.items(), key=lambda kv: -kv[1]):
        print(f"  {op:12} {pct:5.1f}%  {samples_of[op]:6d} samples")
    for pct, dso, sym in sorted(top, reverse=True)[:15]:
        print(f"    {pct:5.1f}%  {op_of(dso, sym):12} {dso:22} {sym[:90]}")


def project(path: str, base_ms: float, per_kv_ms: float) -> None:
    """What a verdict would take under the candidates, from a `bench_judge_speed.py` output:
    each call's prompt time rescaled by the ms per prompt token of a linear model in the cached
    tokens before it, `base_ms + per_kv_ms * n_kv / 1000` (`--fit`; the attention part is the
    second term), everything else (decoding, glue) kept. Candidates: flash attention off (the
    attention part x `FA_OFF`, this lab's perf samples), and the fixed prefix cut to N tokens."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]

    def per_tok(n_kv: float, attention: float = 1.0) -> float:
        return base_ms + attention * per_kv_ms * n_kv / 1000

    cands: dict[str, tuple[float, float]] = {"as measured": (1.0, 1e9), "fa off": (FA_OFF, 1e9)}
    for n in (1500, 1000, 500, 150):
        cands[f"prefix <= {n}"] = (1.0, n)
        cands[f"fa off, prefix <= {n}"] = (FA_OFF, n)
    print(f"{path}: {len(rows)} cases; model {base_ms} + {per_kv_ms} ms per 1,000 cached tokens")
    for name, (att, cap) in cands.items():
        per_verdict = []
        for r in rows:
            secs = r["seconds"]
            for c in r["calls"]:
                scale = per_tok(min(c["reused"], cap), att) / per_tok(c["reused"])
                secs -= c["prompt_ms"] / 1000 * (1 - scale)
            per_verdict.append(secs / r["verdicts"])
        ordered = sorted(per_verdict)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        print(f"  {name:24} s per verdict median {statistics.median(per_verdict):5.2f}  p90 {p90:5.2f}")


# Flash attention off: its attention part's factor. Call by call (tag ab2) a material cost 0.922
# of the shipped, whose attention is 0.378 of it: 1 - 0.078 / 0.378 = 0.79 (perf's sample count
# said 5,951 / 9,040 = 0.66).
FA_OFF = 0.79


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bodies", default=str(Path(__file__).resolve().parent / "out" / "s19_bodies.jsonl"))
    p.add_argument("--group", type=int, default=0, help="prefix group, by prefix length (0: longest)")
    p.add_argument("--calls", type=int, default=8, help="calls per set and round")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--interleave", action="store_true", help="sets alternate call by call (no --perf)")
    p.add_argument("--sets", nargs="*", default=[],
                   help="name:key=value,... (model=PATH, short=1, lab_engine_params keys)")
    p.add_argument("--only-sets", help="comma-separated set names to run (default: all, with default)")
    p.add_argument("--slots", type=int, default=1)
    p.add_argument("--ctx", type=int, default=local_module.DEFAULT_CTX_PER_SLOT)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--perf", help="perf record round 0's calls of each set into PERF.<set>")
    p.add_argument("--freq", type=int, default=499)
    p.add_argument("--report", help="print a perf file's samples by op and exit")
    p.add_argument("--project", help="a bench_judge_speed.py output: s per verdict under the candidates")
    p.add_argument("--fit", default="25.7,6.6", help="--project: ms per prompt token, base,per 1,000 cached")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "out" / "lab_op_profile.jsonl"))
    p.add_argument("--table-from", help="print the table of a --out file (with --tag: one run)")
    p.add_argument("--tag", default=time.strftime("%H%M%S"))
    args = p.parse_args()
    if args.report:
        report(args.report)
    elif args.project:
        base, per_kv = map(float, args.fit.split(","))
        project(args.project, base, per_kv)
    elif args.table_from:
        table(args.table_from, args.tag if "--tag" in sys.argv else None)
    else:
        run(args)


if __name__ == "__main__":
    main()
