"""The README's main command, before vs after, in fresh processes: the first run on a machine
(no saved prompt states) and the next ones (states on disk, page cache warm).

    python bench/bench_main_command.py --before /tmp/s20a/src --after /tmp/s20b/src \\
        [--pairs 2] [--modes cold,warm] [--out bench/out/main_command.jsonl]

Each run is, in a copy of examples/hello_world under a scratch directory:

    agenteval eval hello_world hello_world/hello_world.evalset.json --print_detailed_results

under `/usr/bin/time -v` (wall, user + sys CPU, peak RSS), with the tree's `src` on PYTHONPATH
and HOME pointing at a scratch home whose model directory holds a link to the assembled model
(`~/.cache/agenteval/models`), so the prompt states written (`prompt-states/` beside the model
file) are the run's own, never the shared ones other runs use. `cold`: an empty prompt-state
directory (a machine's first run); `warm`: each tree's own home, kept between its runs (primed
once before the first pair). Pairs alternate which tree goes first (A B, B A, ...), and the
1-minute load is recorded before and after each run.

Inside the child, every llama.cpp call's own `timings` (prompt tokens evaluated and reused,
their ms, tokens generated and their ms) and the model's load time are written to a JSONL
beside the output, through a wrapper that only records (`--child`); the replies are kept so
that the two trees' replies can be compared call by call (hello_world's `roll_die` is random:
the reply reporting the roll may differ between runs whatever the tree).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _child(log_path: str, argv: list[str]) -> int:
    """Runs the CLI with the embedded model's calls and load recorded into `log_path`."""
    from agenteval.models import local as local_module

    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - open for the whole run
    complete, stream, start = (local_module.LocalModel._complete, local_module.LocalModel._stream,
                               local_module._start_server)

    def record(kind: str, body: dict[str, Any], reply: dict[str, Any], seconds: float) -> None:
        choice = (reply.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        log.write(json.dumps({"kind": kind, "seconds": round(seconds, 4), "slot": body.get("id_slot"),
                              "messages": len(body.get("messages") or []),
                              "tools": len(body.get("tools") or []),
                              "timings": reply.get("timings"), "reply": message.get("content")}) + "\n")
        log.flush()

    def timed_complete(engine: Any, body: dict[str, Any]) -> dict[str, Any]:
        t = time.perf_counter()
        reply = complete(engine, body)
        record("call", body, reply, time.perf_counter() - t)
        return reply

    def timed_stream(engine: Any, body: dict[str, Any], assembler: Any, stop: Any) -> dict[str, Any]:
        t = time.perf_counter()
        reply = stream(engine, body, assembler, stop)
        record("call", body, reply, time.perf_counter() - t)
        return reply

    def timed_start(key: Any) -> Any:
        t = time.perf_counter()
        engine = start(key)
        log.write(json.dumps({"kind": "load", "seconds": round(time.perf_counter() - t, 4)}) + "\n")
        return engine

    local_module.LocalModel._complete = staticmethod(timed_complete)  # type: ignore[method-assign]
    local_module.LocalModel._stream = staticmethod(timed_stream)  # type: ignore[method-assign]
    local_module._start_server = timed_start
    from agenteval.cli.main import main

    def table_line() -> None:
        if log.closed:  # (written already)
            return
        table = None
        for engine in local_module._ENGINES.values():
            table = engine.table
        if table is not None:
            log.write(json.dumps({"kind": "table", "saved": table.saved,
                                  "restored": table.restored}) + "\n")
        log.close()

    # `eval` ends by os._exit once the exit handlers have run (cli.teardown.end): this one runs
    # before the embedded engines' own (registered after theirs), while they are still there.
    atexit.register(table_line)
    sys.argv = ["agenteval", *argv]
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        table_line()
    return 0


def _load() -> float:
    return os.getloadavg()[0]


def _home(scratch: Path, name: str) -> Path:
    """A scratch HOME whose model directory links to the assembled model."""
    source = Path.home() / ".cache" / "agenteval" / "models"
    models = scratch / name / ".cache" / "agenteval" / "models"
    models.mkdir(parents=True, exist_ok=True)
    for file in source.glob("*.gguf*"):
        target = models / file.name
        if not target.exists():
            if file.suffix == ".gguf":
                target.symlink_to(file)
            else:
                shutil.copy(file, target)
    return scratch / name


def _run(src: str, home: Path, work: Path, log_path: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=src, HOME=str(home))
    argv = ["eval", "hello_world", "hello_world/hello_world.evalset.json", "--print_detailed_results"]
    command = ["/usr/bin/time", "-v", sys.executable, str(Path(__file__).resolve()), "--child",
               str(log_path), "--", *argv]
    log_path.unlink(missing_ok=True)  # the child appends: this run's records only
    before = _load()
    proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    after = _load()
    err = proc.stderr

    def field(name: str) -> str:
        match = re.search(rf"{re.escape(name)}: (.+)", err)
        return match.group(1).strip() if match else ""

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(p) for p in wall.split(":")] if wall else [0.0]
    seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    records = [json.loads(line) for line in log_path.read_text().splitlines()] if log_path.is_file() else []
    calls = [r for r in records if r["kind"] == "call"]
    return {"exit": proc.returncode, "wall": round(seconds, 2),
            "cpu": round(float(field("User time (seconds)") or 0)
                         + float(field("System time (seconds)") or 0), 2),
            "rss_mib": round(int(field("Maximum resident set size (kbytes)") or 0) / 1024),
            "load_before": round(before, 2), "load_after": round(after, 2),
            "model_load": next((r["seconds"] for r in records if r["kind"] == "load"), None),
            "table": next((r for r in records if r["kind"] == "table"), None),
            "calls": [{"seconds": c["seconds"], "tools": c["tools"], "messages": c["messages"],
                       **{k: (c["timings"] or {}).get(k) for k in
                          ("prompt_n", "cache_n", "prompt_ms", "predicted_n", "predicted_ms")}}
                      for c in calls],
            "replies": [c["reply"] for c in calls],
            "passed": "PASSED" in proc.stdout, "stdout_tail": proc.stdout[-300:] if proc.returncode else ""}


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        rest = sys.argv[3:]
        raise SystemExit(_child(sys.argv[2], rest[1:] if rest[:1] == ["--"] else rest))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the before tree's src directory")
    parser.add_argument("--after", required=True, help="the after tree's src directory")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--modes", default="cold,warm")
    parser.add_argument("--scratch", default=None, help="scratch directory (default: a new temp one)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "main_command.jsonl"))
    args = parser.parse_args()
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="main_command_"))
    trees = {"before": args.before, "after": args.after}
    works = {name: scratch / f"examples-{name}" for name in trees}  # each tree its own store: a
    for work in works.values():  # history one tree's schema upgrades may be refused by the other's
        if not work.is_dir():
            shutil.copytree(ROOT / "examples" / "hello_world", work / "hello_world",
                            ignore=shutil.ignore_patterns("__pycache__", ".agenteval"))
    modes = args.modes.split(",")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if "warm" in modes:  # each tree's warm home primed once (its states written)
        for name, src in trees.items():
            if (scratch / f"warm-{name}").is_dir():  # a scratch directory used before: primed
                continue
            home = _home(scratch, f"warm-{name}")
            result = _run(src, home, works[name], scratch / f"prime-{name}.jsonl")
            print(f"primed {name}: wall {result['wall']} s, load {result['load_before']}", flush=True)
    rows: list[dict[str, Any]] = []
    for pair in range(args.pairs):
        for mode in modes:
            order = ["before", "after"] if pair % 2 == 0 else ["after", "before"]
            for name in order:
                if mode == "cold":
                    home = scratch / f"cold-{name}-{pair}"
                    shutil.rmtree(home, ignore_errors=True)
                    home = _home(scratch, home.name)
                else:
                    home = _home(scratch, f"warm-{name}")
                result = _run(trees[name], home, works[name], scratch / f"{mode}-{name}-{pair}.jsonl")
                row = {"pair": pair, "mode": mode, "tree": name, **result}
                rows.append(row)
                with out.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")
                first = row["calls"][0] if row["calls"] else {}
                print(f"pair {pair} {mode:4} {name:6} wall {row['wall']:7.1f} s  cpu {row['cpu']:7.1f} s  "
                      f"rss {row['rss_mib']} MiB  load {row['load_before']}->{row['load_after']}  "
                      f"first call: {first.get('prompt_n')} evaluated / {first.get('cache_n')} cached, "
                      f"{first.get('prompt_ms')} ms  exit {row['exit']}", flush=True)
    for mode in modes:
        for what in ("wall", "cpu"):
            ratios = []
            for pair in range(args.pairs):
                side = {r["tree"]: r for r in rows if r["pair"] == pair and r["mode"] == mode}
                if {"before", "after"} <= side.keys() and side["before"][what]:
                    ratios.append(side["after"][what] / side["before"][what])
            if ratios:
                print(f"{mode} {what} after/before per pair: {', '.join(f'{r:.3f}' for r in ratios)}"
                      f" (median {statistics.median(ratios):.3f})")
        # hello_world's roll_die is random (unseeded): the reply reporting the roll may differ.
        same = [r["replies"] for r in rows if r["mode"] == mode]
        differing = sorted({i for s in same for i, text in enumerate(s) if text != same[0][i]})
        print(f"{mode}: calls whose reply differs between runs: {differing or 'none'}")


if __name__ == "__main__":
    main()
