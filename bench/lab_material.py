"""Lab: what evaluating a verdict's material costs on the embedded engine, per prompt token, and
which engine settings change it (issue 28 item 1, session 19).

A passing verdict is one label call whose prompt is a criterion's fixed prefix (system prompt and
solved examples, 1,100-2,600 tokens, already in the slot) and then its material (the question,
reference and answer: 65-110 tokens) and the reply's begun head. Nearly all of its time is the
material's evaluation. This lab replays the judge's own label-call bodies (`--record` writes them:
labelled cases scored by the real judge, `lab_speculative.record`) to one engine per parameter set
(the shipped settings of `models.local._start_server` with one slot unless `--slots`, then the
set's changes, `lab_engine_params.apply` keys plus `idle=on/off`: llama.cpp's
`cache_idle_slots`, `cram=MiB`: its RAM prompt cache, `fit=on/off`: its start-up memory fit).
Bodies are grouped by prefix; each group is warmed once (its prefix evaluated), then replayed in
order, so every call finds the prefix in the slot and evaluates its own material only (the
previous body's material differs). Per call: llama.cpp's `timings` (`prompt_n`, `prompt_ms`,
`predicted_ms`), the process CPU seconds (llama.cpp's threads included) and wall; and the label
log-probabilities against the `default` set's in the same round. Sets are measured round by
round, the order alternating (A B, B A, ...).

A set with `short=1` (or `--short` for all) replaces each body's prefix by a one-line system
prompt (the same material): the material's cost with nothing before it to attend to, i.e. how
much of a verdict is attention over the long prefix.

    python bench/lab_material.py --record bench/out/s19_bodies.jsonl
    python bench/lab_material.py --bodies bench/out/s19_bodies.jsonl --sets 'noidle:idle=off' --rounds 4
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_engine_params import apply

from agenteval.models import local as local_module

OUT = Path(__file__).resolve().parent / "out" / "lab_material.jsonl"


def start(spec: str, model_path: str, slots: int, ctx: int, threads: int) -> tuple[Any, float]:
    """One engine at the shipped settings (`slots` slots of `ctx` tokens), then `spec`'s changes."""
    import xllamacpp as x

    p = x.CommonParams()
    p.model.path = model_path
    p.n_parallel = slots
    p.n_ctx = slots * ctx
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.cpuparams.poll = 0
    p.cpuparams_batch.poll = 0
    p.cache_ram_mib = local_module._PROMPT_CACHE_MIB
    p.port = 0
    p.verbosity = -1
    for item in filter(None, spec.split(",")):
        key, _, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if key == "idle":
            p.cache_idle_slots = value == "on"
        elif key == "cram":
            p.cache_ram_mib = int(value)
        elif key == "short":  # not an engine setting: the bodies' prefix (see `run`)
            pass
        elif key == "fit":
            p.fit_params = value == "on"
        else:
            apply(p, key, value, x)
    t = time.perf_counter()
    server = x.Server(p)
    return server, time.perf_counter() - t


def prefix_of(body: dict[str, Any]) -> str:
    """The messages before the question (the question is the last user message)."""
    msgs = body["messages"]
    last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
    return json.dumps(msgs[:last_user], sort_keys=True)


def shortened(body: dict[str, Any]) -> dict[str, Any]:
    msgs = body["messages"]
    last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
    return {**body, "messages": [{"role": "system", "content": "You judge answers."}, *msgs[last_user:]]}


def label_probs(reply: dict[str, Any]) -> dict[str, float]:
    content = (reply["choices"][0].get("logprobs") or {}).get("content") or []
    if not content:
        return {}
    return {t["token"]: math.exp(t["logprob"]) for t in content[0].get("top_logprobs") or []}


def call(server: Any, body: dict[str, Any], slot: int) -> dict[str, Any]:
    w, c = time.perf_counter(), time.process_time()
    reply = server.handle_chat_completions({**body, "id_slot": slot})
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    if "choices" not in reply:
        raise SystemExit(f"engine error: {str(reply)[:300]}")
    t = reply.get("timings") or {}
    return {"prompt_n": int(t.get("prompt_n") or 0), "cache_n": int(t.get("cache_n") or 0),
            "prompt_ms": float(t.get("prompt_ms") or 0.0),
            "predicted_ms": float(t.get("predicted_ms") or 0.0),
            "wall": wall, "cpu": cpu, "probs": label_probs(reply),
            "text": reply["choices"][0]["message"].get("content")}


def run(args: argparse.Namespace) -> None:
    bodies = [json.loads(line) for line in Path(args.bodies).read_text().splitlines() if line.strip()]
    bodies = [{k: v for k, v in b.items() if k != "stream"} for b in bodies
              if b.get("max_tokens") == 1 or args.all_calls]
    if args.short:
        bodies = [shortened(b) for b in bodies]
    groups: dict[str, list[dict[str, Any]]] = {}
    for b in bodies:
        groups.setdefault(prefix_of(b), []).append(b)
    model_path = str(local_module.model_file(None))
    specs = {"default": ""} | dict(s.split(":", 1) for s in args.sets)
    servers = {}
    for name, spec in specs.items():
        servers[name], secs = start(spec, model_path, args.slots, args.ctx, args.threads)
        print(f"loaded {name} ({spec or 'shipped'}) in {secs:.1f} s", file=sys.stderr, flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as sink:
        for r in range(args.rounds):
            names = list(specs) if r % 2 == 0 else list(specs)[::-1]
            got: dict[str, list[dict[str, Any]]] = {}
            for name in names:
                rows = []
                short = "short=" in specs[name]
                for g, members in enumerate(groups.values()):
                    members = [shortened(b) for b in members] if short else members
                    slot = g % args.slots
                    # Warm: the prefix (and the last member's material) into the slot, untimed.
                    call(servers[name], members[-1], slot)
                    for i, b in enumerate(members):
                        timed = call(servers[name], b, slot)
                        rows.append({"group": g, "i": i, "case": b.get("_case"), **timed})
                got[name] = rows
            for name in names:
                for row, base in zip(got[name], got["default"], strict=True):
                    common = set(row["probs"]) & set(base["probs"])
                    dp = max((abs(row["probs"][t] - base["probs"][t]) for t in common), default=0.0)
                    row = {k: v for k, v in row.items() if k != "probs"}
                    sink.write(json.dumps({"tag": args.tag, "round": r, "set": name, "short": args.short,
                                           "load": os.getloadavg()[0], "dp": dp,
                                           "same_text": row["text"] == base["text"],
                                           **row}) + "\n")
                rows = got[name]
                pn = sum(x["prompt_n"] for x in rows)
                over = sum(x["wall"] - (x["prompt_ms"] + x["predicted_ms"]) / 1000 for x in rows)
                print(f"r{r} {name:10} calls {len(rows)} prompt_n {pn} "
                      f"{sum(x['prompt_ms'] for x in rows) / pn:6.1f} ms/tok (llama) "
                      f"{sum(x['cpu'] for x in rows) / pn * 1000:6.1f} ms CPU/tok "
                      f"wall-minus-compute {over:5.2f} s "
                      f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    table([json.loads(line) for line in out.read_text().splitlines() if line.strip()], args.tag)


def table(rows: list[dict[str, Any]], tag: str | None) -> None:
    """Per set: llama.cpp ms per prompt token and CPU ms per prompt token, and their ratios to
    `default` round by round (the same calls)."""
    rows = [r for r in rows if tag is None or r["tag"] == tag]
    by: dict[tuple[str, int, bool], dict[str, list[dict[str, Any]]]] = {}
    for r in rows:
        by.setdefault((r["tag"], r["round"], r["short"]), {}).setdefault(r["set"], []).append(r)

    def per_tok(xs: list[dict[str, Any]], k: str, scale: float = 1.0) -> float:
        return sum(x[k] for x in xs) * scale / max(1, sum(x["prompt_n"] for x in xs))

    sets = sorted({r["set"] for r in rows}, key=lambda s: (s != "default", s))
    for s in sets:
        rounds = [g for g in by.values() if s in g and "default" in g]
        ms = [per_tok(g[s], "prompt_ms") for g in rounds]
        cpu = [per_tok(g[s], "cpu", 1000) for g in rounds]
        rm = [per_tok(g[s], "prompt_ms") / per_tok(g["default"], "prompt_ms") for g in rounds]
        rc = [per_tok(g[s], "cpu") / per_tok(g["default"], "cpu") for g in rounds]
        over = [sum(x["wall"] - (x["prompt_ms"] + x["predicted_ms"]) / 1000 for x in g[s]) / len(g[s])
                for g in rounds]
        mine = [x for g in rounds for x in g[s]]
        loads = [x["load"] for x in mine]
        print(f"{s:10} rounds {len(rounds)} ms/tok {statistics.median(ms):6.1f} CPU ms/tok "
              f"{statistics.median(cpu):6.1f}  ratio ms {statistics.median(rm):.3f} "
              f"[{' '.join(f'{x:.2f}' for x in rm)}] CPU {statistics.median(rc):.3f} "
              f"[{' '.join(f'{x:.2f}' for x in rc)}]  per-call overhead "
              f"{statistics.median(over) * 1000:5.0f} ms  same text "
              f"{sum(x['same_text'] for x in mine)}/{len(mine)} max dp {max(x['dp'] for x in mine):.4f}"
              f"  load {min(loads):.1f}-{max(loads):.1f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bodies", help="JSON lines of judge request bodies (see --record)")
    p.add_argument("--record", help="write the judge's request bodies here and exit")
    p.add_argument("--criteria", default="final_response_match,safety")
    p.add_argument("--per", type=int, default=2, help="--record: positive and negative cases each")
    p.add_argument("--sets", nargs="*", default=[], help="name:key=value,... (see above)")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--slots", type=int, default=1)
    p.add_argument("--ctx", type=int, default=4096)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--short", action="store_true", help="a one-line prefix instead of the judge's")
    p.add_argument("--all-calls", action="store_true", help="rationale calls too, not only label calls")
    p.add_argument("--tag", default=time.strftime("%H%M%S"))
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--table-from")
    args = p.parse_args()
    if args.table_from:
        lines = Path(args.table_from).read_text().splitlines()
        table([json.loads(line) for line in lines if line.strip()], args.tag if "--tag" in sys.argv else None)
        return
    if args.record:
        import asyncio

        from lab_speculative import pick_cases, record

        recorded = asyncio.run(record(pick_cases(args.criteria.split(","), args.per), args.threads))
        Path(args.record).write_text("".join(json.dumps(b) + "\n" for b in recorded), encoding="utf-8")
        print(f"{len(recorded)} bodies in {args.record}", file=sys.stderr)
        return
    run(args)


if __name__ == "__main__":
    main()
