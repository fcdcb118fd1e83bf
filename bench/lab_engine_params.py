"""Lab: the embedded model's own engine parameters (issue 28 item 1): which llama.cpp settings make
prompt evaluation and decoding faster on this machine, and do they keep the numerics?

Every parameter set named on the command line gets its own engine in this process (the shipped
model, one slot, `--ctx` tokens, no RAM prompt cache, `poll` 0 as shipped unless the set says
otherwise), beside `default`: the settings `models.local._start_server` ships. Then `--rounds`
rounds; in each, every set is measured in turn, the order alternating round by round (A B, B A, …),
on the same fixed prompt (about `--prompt-tokens` tokens of the labelled judge cases' JSON, one
fresh prefix per round so nothing is reused across rounds):

  prompt   one call with `cache_prompt` off and one generated token: the whole prompt evaluated;
           process CPU seconds per prompt token (llama.cpp's threads included) and wall
  decode   the same prompt again with `cache_prompt` on and `--gen` tokens generated greedily: the
           prompt is taken from the slot (1 token evaluated) so the call is decoding; CPU and wall
           seconds per generated token

and the numerics of each set against `default` in the same round: the same generated tokens, the
largest |difference| of a chosen token's log-probability and of any top-5 alternative's
probability (what the judge's label probabilities are made of).

`--bodies FILE` (JSON lines of recorded judge request bodies) also replays each body to every
engine with the prompt cache on, as the judge sends them (grammar, `n_probs` 20, replies begun in
the prompt), and compares the reply text and log-probabilities the same way. `--record FILE`
writes such a file: labelled cases (`--criteria`, `--per` positive and negative each) scored by
the real judge at its defaults (`lab_speculative.record`), then exits.

    python bench/lab_engine_params.py --sets 'ub256:n_ubatch=256' 'tb1:threads_batch=1' --rounds 4
    python bench/lab_engine_params.py --env-ab OMP_WAIT_POLICY=PASSIVE --pairs 4
    python bench/lab_engine_params.py --table-from bench/out/lab_engine_params.jsonl

`--env-ab VAR=VALUE[,VAR=VALUE]`: settings read from the environment when the engine's library is
loaded (this build runs its threads with OpenMP: `OMP_WAIT_POLICY`, `GOMP_SPINCOUNT`), so they
cannot share a process: `--pairs` pairs of child processes, each one engine at the shipped
settings, one without and one with the variables, the first alternating pair by pair; a child's
round is its pair, so the table pairs them the same way.

Set syntax: `name:key=value,key=value`; keys: threads, threads_batch, n_batch, n_ubatch,
fa (on/off/auto), kv (f16/q8_0), poll, poll_batch, load (auto/none/mmap/mlock/mmap_mlock),
repack (on/off: llama.cpp's repacked CPU weight layouts), strict (pin threads to cores 0..n-1),
priority (0 normal … 3 realtime).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from agenteval.models import local as local_module

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "out" / "lab_engine_params.jsonl"


def apply(params: Any, key: str, value: str, x: Any) -> None:
    """Sets one lab key on an `xllamacpp.CommonParams`."""
    if key == "threads":
        params.cpuparams.n_threads = int(value)
    elif key == "threads_batch":
        params.cpuparams_batch.n_threads = int(value)
    elif key in ("n_batch", "n_ubatch"):
        setattr(params, key, int(value))
    elif key == "fa":
        params.flash_attn_type = getattr(x.llama_flash_attn_type, {
            "on": "LLAMA_FLASH_ATTN_TYPE_ENABLED", "off": "LLAMA_FLASH_ATTN_TYPE_DISABLED",
            "auto": "LLAMA_FLASH_ATTN_TYPE_AUTO"}[value])
    elif key == "kv":
        kind = getattr(x.ggml_type, f"GGML_TYPE_{value.upper()}")
        params.cache_type_k = kind
        params.cache_type_v = kind
    elif key == "poll":
        params.cpuparams.poll = int(value)
    elif key == "poll_batch":
        params.cpuparams_batch.poll = int(value)
    elif key == "load":
        params.load_mode = getattr(x.llama_load_mode, f"LLAMA_LOAD_MODE_{value.upper()}")
    elif key == "repack":
        params.no_extra_bufts = value == "off"
    elif key == "strict":
        for cpu in (params.cpuparams, params.cpuparams_batch):
            n = int(value)
            cpu.cpumask = [i < n for i in range(len(cpu.cpumask))]
            cpu.mask_valid = True
            cpu.strict_cpu = True
    elif key == "priority":
        params.cpuparams.priority = int(value)
        params.cpuparams_batch.priority = int(value)
    else:
        raise SystemExit(f"unknown key {key!r}")


def start(spec: str, model_path: str, ctx: int, threads: int) -> tuple[Any, float]:
    """One engine: the shipped settings (`_start_server`'s), one slot, then `spec`'s changes."""
    import xllamacpp as x

    p = x.CommonParams()
    p.model.path = model_path
    p.n_parallel = 1
    p.n_ctx = ctx
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.cpuparams.poll = 0
    p.cpuparams_batch.poll = 0
    p.cache_ram_mib = 0  # no RAM prompt cache: every round's prompt is evaluated
    p.port = 0
    p.verbosity = -1
    for item in filter(None, spec.split(",")):
        key, _, value = item.partition("=")
        apply(p, key.strip(), value.strip(), x)
    t = time.perf_counter()
    server = x.Server(p)
    return server, time.perf_counter() - t


def prompt_text(tokens: int, round_no: int) -> str:
    """About `tokens` tokens of labelled cases (JSON, ~3.3 characters a token), after a
    round-specific first line so no round reuses another's prefix."""
    raw = (ROOT / "judge_set" / "final_response_match.json").read_text(encoding="utf-8")
    return f"Round {round_no}. Summarise what these cases have in common.\n" + raw[: int(tokens * 3.3)]


def body(text: str, max_tokens: int, cache: bool) -> dict[str, Any]:
    return {"messages": [{"role": "system", "content": "You are a careful assistant."},
                         {"role": "user", "content": text}],
            "max_tokens": max_tokens, "temperature": 0, "seed": 42, "logprobs": True,
            "top_logprobs": 5, "cache_prompt": cache}


def call(server: Any, sent: dict[str, Any]) -> tuple[dict[str, Any], float, float]:
    w, c = time.perf_counter(), time.process_time()
    reply = server.handle_chat_completions(sent)
    if "choices" not in reply:
        raise SystemExit(f"engine error: {str(reply)[:300]}")
    return reply, time.perf_counter() - w, time.process_time() - c


def tokens_of(reply: dict[str, Any]) -> list[dict[str, Any]]:
    return list((reply["choices"][0].get("logprobs") or {}).get("content") or [])


def numerics(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Same tokens? Largest chosen log-probability difference and largest top-alternative
    probability difference, over the positions up to the first differing token."""
    ta, tb = tokens_of(a), tokens_of(b)
    same = [x.get("token") for x in ta] == [y.get("token") for y in tb]
    chosen = alt = 0.0
    for x, y in zip(ta, tb, strict=False):
        if x.get("token") != y.get("token"):
            break
        chosen = max(chosen, abs(x["logprob"] - y["logprob"]))
        yb = {t["token"]: t["logprob"] for t in y.get("top_logprobs") or []}
        for t in x.get("top_logprobs") or []:
            if t["token"] in yb:
                alt = max(alt, abs(math.exp(t["logprob"]) - math.exp(yb[t["token"]])))
    return {"same_tokens": same, "lp_chosen": chosen, "p_alt": alt, "n_tokens": len(ta)}


def measure(server: Any, text: str, gen: int) -> dict[str, Any]:
    p_reply, p_wall, p_cpu = call(server, body(text, 1, False))
    d_reply, d_wall, d_cpu = call(server, body(text, gen, True))
    pt, dt = p_reply.get("timings") or {}, d_reply.get("timings") or {}
    n_prompt, n_gen = int(pt.get("prompt_n") or 0), int(dt.get("predicted_n") or 0)
    return {"prompt_n": n_prompt, "prompt_cpu": p_cpu, "prompt_wall": p_wall,
            "prompt_cpu_per_tok": p_cpu / max(1, n_prompt), "prompt_tok_s_wall": n_prompt / p_wall,
            "prompt_ms": pt.get("prompt_ms"), "decode_prompt_n": dt.get("prompt_n"), "gen_n": n_gen,
            "decode_cpu": d_cpu, "decode_wall": d_wall, "decode_cpu_per_tok": d_cpu / max(1, n_gen),
            "decode_tok_s_wall": n_gen / d_wall, "predicted_ms": dt.get("predicted_ms"),
            "_p": p_reply, "_d": d_reply}


def run(args: argparse.Namespace) -> None:
    model_path = str(local_module.model_file(None))
    specs = {"default": ""} | dict(s.split(":", 1) if ":" in s else (s, s) for s in args.sets)
    if args.name:  # a child of --env-ab: its one engine is `default` under another name
        specs = {args.name: ""}
    servers: dict[str, Any] = {}
    for name, spec in specs.items():
        servers[name], secs = start(spec, model_path, args.ctx, args.threads)
        print(f"loaded {name} ({spec or 'shipped'}) in {secs:.1f} s", file=sys.stderr, flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as sink:
        for r in range(args.first_round, args.first_round + args.rounds):
            text = prompt_text(args.prompt_tokens, r)
            names = list(specs)
            order = names if r % 2 == 0 else names[::-1]
            got: dict[str, dict[str, Any]] = {}
            for name in order:
                got[name] = measure(servers[name], text, args.gen)
            base = got["default"] if "default" in got else next(iter(got.values()))
            for pos, name in enumerate(order):
                m = got[name]
                row = {k: v for k, v in m.items() if not k.startswith("_")}
                row |= {"tag": args.tag, "round": r, "set": name, "spec": specs[name], "position": pos,
                        "load": os.getloadavg()[0], "threads": args.threads,
                        "decode": numerics(base["_d"], m["_d"]), "first": numerics(base["_p"], m["_p"]),
                        "tokens": [[t["token"], t["logprob"]] for t in tokens_of(m["_d"])]}
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                print(f"r{r} {name:10} prompt {m['prompt_n']} tok {m['prompt_cpu_per_tok'] * 1000:6.1f} "
                      f"ms CPU/tok {m['prompt_tok_s_wall']:5.1f} tok/s wall | decode {m['gen_n']} tok "
                      f"{m['decode_cpu_per_tok'] * 1000:6.1f} ms CPU/tok {m['decode_tok_s_wall']:5.1f} tok/s "
                      f"(prompt_n {m['decode_prompt_n']}) | same {row['decode']['same_tokens']} "
                      f"dlp {row['decode']['lp_chosen']:.4f} dp {row['decode']['p_alt']:.4f} "
                      f"load {row['load']:.1f}", file=sys.stderr, flush=True)
            if args.bodies:
                replay(servers, Path(args.bodies), r, args.tag, sink)
    if args.name:
        return
    table([json.loads(line) for line in out.read_text().splitlines() if line.strip()], args.tag)


def replay(servers: dict[str, Any], path: Path, r: int, tag: str, sink: Any) -> None:
    """Every recorded judge body to every engine (cache on, as sent), order alternating."""
    bodies = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for i, b in enumerate(bodies):
        sent = {k: v for k, v in b.items() if not k.startswith("_")}
        names = list(servers) if (i + r) % 2 == 0 else list(servers)[::-1]
        got = {name: call(servers[name], sent) for name in names}
        base = got["default"][0]
        for name, (reply, wall, cpu) in got.items():
            row = {"tag": tag, "round": r, "replay": i, "case": b.get("_case"), "set": name,
                   "same_text": reply["choices"][0]["message"].get("content")
                   == base["choices"][0]["message"].get("content"),
                   "numerics": numerics(base, reply), "cpu": cpu, "wall": wall,
                   "prompt_n": (reply.get("timings") or {}).get("prompt_n"), "load": os.getloadavg()[0]}
            sink.write(json.dumps(row) + "\n")
        texts = {n: r_["choices"][0]["message"].get("content") for n, (r_, _, _) in got.items()}
        print(f"replay {i} {b.get('_case')}: " + ", ".join(
            f"{n} cpu {c:.2f} same {texts[n] == texts['default']}" for n, (_, _, c) in got.items()),
            file=sys.stderr, flush=True)


def table(rows: list[dict[str, Any]], tag: str | None) -> None:
    """Per set: medians, and the CPU ratio to `default` pair by pair (the same round)."""
    rows = [r for r in rows if "prompt_n" in r and "replay" not in r and (tag is None or r.get("tag") == tag)]
    by: dict[tuple[Any, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r.get("tag"), r["round"]), {})[r["set"]] = r
    sets = sorted({r["set"] for r in rows}, key=lambda s: (s != "default", s))
    print("set        rounds  prompt ms CPU/tok (wall tok/s)  ratio to default [pairs]      "
          "decode ms CPU/tok (wall tok/s)  ratio [pairs]           same tokens  max dlp  max dp  load")
    for s in sets:
        mine = [r for r in rows if r["set"] == s]
        pr = [g[s]["prompt_cpu_per_tok"] / g["default"]["prompt_cpu_per_tok"] for g in by.values()
              if s in g and "default" in g]
        dr = [g[s]["decode_cpu_per_tok"] / g["default"]["decode_cpu_per_tok"] for g in by.values()
              if s in g and "default" in g]

        def med(k: str, sel: list[dict[str, Any]] = mine) -> float:
            return statistics.median(r[k] for r in sel)

        same, compared = sum(r["decode"]["same_tokens"] for r in mine), len(mine)
        # across processes (--env-ab): the generated tokens against default's of the same round
        cross = [(g[s]["tokens"], g["default"]["tokens"]) for g in by.values()
                 if s in g and "default" in g and "tokens" in g[s]]
        if cross and s != "default":
            same, compared = sum([t for t, _ in a] == [t for t, _ in b] for a, b in cross), len(cross)
            drift = max(abs(x[1] - y[1]) for a, b in cross for x, y in zip(a, b, strict=False))
            print(f"{s}: tokens as default's in {same}/{len(cross)} rounds, max |dlogprob| {drift:.4f}")
        print(f"{s:10} {len(mine):5}  {med('prompt_cpu_per_tok') * 1000:7.1f}"
              f" ({med('prompt_tok_s_wall'):5.1f})"
              f"        {statistics.median(pr):.3f} [{' '.join(f'{x:.2f}' for x in pr)}]"
              f"   {med('decode_cpu_per_tok') * 1000:7.1f} ({med('decode_tok_s_wall'):5.1f})"
              f"    {statistics.median(dr):.3f} [{' '.join(f'{x:.2f}' for x in dr)}]"
              f"   {same}/{compared}  {max(r['decode']['lp_chosen'] for r in mine):.4f}"
              f"  {max(max(r['decode']['p_alt'], r['first']['p_alt']) for r in mine):.4f}"
              f"  {min(r['load'] for r in mine):.1f}-{max(r['load'] for r in mine):.1f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", nargs="*", default=[], help="name:key=value,... (see above)")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--prompt-tokens", type=int, default=1000)
    p.add_argument("--gen", type=int, default=32)
    p.add_argument("--ctx", type=int, default=2048)
    p.add_argument("--threads", type=int, default=2, help="the shipped default: the CPUs allowed")
    p.add_argument("--bodies", help="JSON lines of judge request bodies to replay each round")
    p.add_argument("--record", help="write the judge's request bodies here (see above) and exit")
    p.add_argument("--criteria", default="final_response_match")
    p.add_argument("--per", type=int, default=2, help="--record: positive and negative cases each")
    p.add_argument("--env-ab", help="VAR=VALUE[,VAR=VALUE]: child processes with and without (see above)")
    p.add_argument("--pairs", type=int, default=4, help="--env-ab: pairs of child processes")
    p.add_argument("--name", help=argparse.SUPPRESS)  # a child's set name
    p.add_argument("--first-round", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--tag", default=time.strftime("%H%M%S"))
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--table-from", help="print the table of a JSON-lines file (all tags, or --tag)")
    args = p.parse_args()
    if args.table_from:
        tag = args.tag if "--tag" in sys.argv else None
        lines = Path(args.table_from).read_text().splitlines()
        table([json.loads(line) for line in lines if line.strip()], tag)
        return
    if args.record:
        record_bodies(args)
        return
    if args.env_ab:
        env_ab(args)
        return
    run(args)


def env_ab(args: argparse.Namespace) -> None:
    """`--pairs` pairs of children: shipped settings without and with `--env-ab`'s variables."""
    import subprocess

    extra = dict(item.split("=", 1) for item in args.env_ab.split(","))
    label = "env:" + args.env_ab
    for i in range(args.pairs):
        sides = [("default", {}), (label, extra)]
        for name, env in sides if i % 2 == 0 else sides[::-1]:
            cmd = [sys.executable, __file__, "--name", name, "--first-round", str(i), "--rounds", "1",
                   "--prompt-tokens", str(args.prompt_tokens), "--gen", str(args.gen), "--ctx", str(args.ctx),
                   "--threads", str(args.threads), "--tag", args.tag, "--out", args.out]
            subprocess.run(cmd, env={**os.environ, **env}, check=True)
    table([json.loads(line) for line in Path(args.out).read_text().splitlines() if line.strip()], args.tag)


def record_bodies(args: argparse.Namespace) -> None:
    """The judge's real request bodies for `--criteria` (see `lab_speculative.record`)."""
    import asyncio

    sys.path.insert(0, str(ROOT))
    from lab_speculative import pick_cases, record

    bodies = asyncio.run(record(pick_cases(args.criteria.split(","), args.per), args.threads))
    Path(args.record).write_text("".join(json.dumps(b) + "\n" for b in bodies), encoding="utf-8")
    print(f"{len(bodies)} bodies in {args.record}", file=sys.stderr)


if __name__ == "__main__":
    main()
