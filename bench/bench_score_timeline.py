"""A timeline of one sharded `agenteval score` (issue 29 item 4): when the parent process starts,
imports, checks and splits the files, when the fork server and each worker start, each chunk's
wall span and CPU in its worker, when the parent hears each chunk, commits the document and
ends; and each process's CPU. Serial parts (before the first chunk starts, after the last ends)
and the workers' idle gaps are summed at the end.

    python bench/bench_score_timeline.py [--workers N] [--json OUT] -- EXPECTED --actual ACTUAL ...

The arguments after `--` are `agenteval score`'s. The parent runs in a child Python process (its
interpreter start counted from just before it is launched); the workers log through
`score_timeline_hook` (imported by the fork server). The clock is CLOCK_MONOTONIC, shared by all
the processes. Wrapping costs a few µs an event (one per chunk and phase), nothing per case.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent


def child(argv: list[str], launched: float, out: str, workers: int) -> None:
    """In the timed process: wraps the phases, runs `agenteval score`, writes the events."""
    events: list[tuple[str, float, float, float]] = []

    def mark(label: str) -> None:
        events.append((label, time.monotonic(), time.process_time(), time.thread_time()))

    mark("interpreter up")
    from agenteval.cli import commands, main, teardown
    from agenteval.runner import sharded, streamed
    from agenteval.store import output
    mark("cli imported")
    import threading

    import score_timeline_hook
    sharded.start, sharded.score_chunk = score_timeline_hook.start, score_timeline_hook.score_chunk
    sharded.PRELOAD.append("score_timeline_hook")
    pool_init = sharded._Pool.__init__

    def counted(self: Any, *a: Any, **k: Any) -> None:
        forks = getattr(sharded, "forks_here", lambda: False)()  # (not in older trees)
        mark(f"pool: {threading.active_count()} thread(s), forks here: {forks}")
        pool_init(self, *a, **k)
    sharded._Pool.__init__ = counted  # type: ignore[method-assign]

    def wrap(owner: Any, name: str, label: str | None = None, every: int = 0) -> None:
        f = getattr(owner, name)
        count = [0]

        def wrapped(*a: Any, **k: Any) -> Any:
            count[0] += 1
            tag = label or name
            n = count[0]
            if every and (n - 1) % every:
                return f(*a, **k)
            mark(f"{tag}#{n} begin")
            try:
                return f(*a, **k)
            finally:
                mark(f"{tag}#{n} end")
        setattr(owner, name, wrapped)

    # (`streamed` imports these from `sharded` where it re-scores since session 35; older trees
    # hold them in `streamed` itself.)
    home = streamed if hasattr(streamed, "worker_count") else sharded
    if workers:  # the processes asked for, whatever the CPUs' idle share now
        home.worker_count = lambda *a: workers
    wrap(commands, "open_eval_set", "commands.open_eval_set")
    wrap(commands, "prepare")
    wrap(streamed, "open_eval_set", "streamed.open_eval_set")
    wrap(home, "worker_count")
    wrap(home, "hold_fork_server")
    wrap(sharded, "frame_ok" if hasattr(sharded, "frame_ok") else "spans")  # (the split ends before it)
    wrap(sharded._Pool, "__init__", "pool")
    wrap(sharded._Pool, "shutdown", "pool.shutdown")
    wrap(sharded, "_tell", "tell", every=250)
    wrap(sharded, "end_run")
    wrap(output.DocumentWriter, "commit", "writer.commit")
    wrap(commands, "finish")
    if hasattr(commands, "TableAhead"):  # (the report's table rendered while the workers score)
        wrap(commands.TableAhead, "__call__", "table ahead")
    wrap(sharded, "start_header")  # (it hashes the expected file where the split does not)
    wrap(commands, "run_sync")
    wrap(commands.ProgressBar, "__exit__", "progress bar exit")
    ended = teardown.exit_fast

    def exit_fast(code: int) -> None:
        mark("exit")
        t = os.times()
        Path(out).write_text(json.dumps({"launched": launched, "events": events,
                                         "children_cpu": t.children_user + t.children_system,
                                         "self_cpu": t.user + t.system}))
        ended(code)
    teardown.exit_fast = exit_fast
    main.main(argv)


def report(data: dict[str, Any], logs: Path) -> dict[str, Any]:
    t0 = data["launched"]
    rows = [(e[1] - t0, e[0], e[2], e[3]) for e in data["events"]]
    workers: dict[str, dict[str, Any]] = {}
    for p in sorted(logs.glob("worker-*.log")):
        w: dict[str, Any] = {"chunks": []}
        for line in p.read_text().split("\n"):
            if not line:
                continue
            kind, *v = line.split()
            if kind == "start":
                w["start"] = float(v[0]) - t0
            else:
                first, a, b, c0, c1 = int(v[0]), *map(float, v[1:])
                w["chunks"].append((first, a - t0, b - t0, c1 - c0))
        workers[p.stem] = w
    print(f"{'t (s)':>8} {'CPU':>7} {'main thr':>8}  parent event")
    for t, label, cpu, thr in rows:
        print(f"{t:8.3f} {cpu:7.3f} {thr:8.3f}  {label}")
    if not workers:
        print("scored in one process (no worker logged a chunk)")
        return {"exit": max(r[0] for r in rows), "parent_cpu": data["self_cpu"]}
    first_chunk = min(c[1] for w in workers.values() for c in w["chunks"])
    last_chunk = max(c[2] for w in workers.values() for c in w["chunks"])
    end = max(r[0] for r in rows)
    print(f"\nfirst chunk begins {first_chunk:.3f} s, last chunk ends {last_chunk:.3f} s, "
          f"parent exits {end:.3f} s")
    summary: dict[str, Any] = {"first_chunk": first_chunk, "last_chunk": last_chunk, "exit": end,
                               "parent_cpu": data["self_cpu"], "children_cpu": data["children_cpu"],
                               "workers": {}}
    for name, w in workers.items():
        ch = w["chunks"]
        busy = sum(b - a for _, a, b, _ in ch)
        cpu = sum(c for *_, c in ch)
        print(f"{name}: started {w.get('start', float('nan')):.3f}, {len(ch)} chunks, "
              f"{ch[0][1]:.3f} → {ch[-1][2]:.3f} s, busy {busy:.2f} s wall, {cpu:.2f} s CPU in chunks, "
              f"idle inside its span {ch[-1][2] - ch[0][1] - busy:.2f} s")
        summary["workers"][name] = {"start": w.get("start"), "chunks": len(ch), "first": ch[0][1],
                                    "last": ch[-1][2], "busy": busy, "cpu": cpu}
    print(f"parent CPU {data['self_cpu']:.2f} s; "
          f"children (fork server + workers) {data['children_cpu']:.2f} s")
    return summary


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[5:], float(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", type=Path, help="write the summary here")
    ap.add_argument("--workers", type=int, default=0,
                    help="score in this many processes (default: as `score` decides: one per CPU, "
                    "up to --parallelism)")
    ap.add_argument("score_args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    score_args = [a for a in args.score_args if a != "--"]
    with tempfile.TemporaryDirectory() as tmp:
        # (the fork server, which imports the hook, does not get this process's sys.path on 3.11)
        path = os.pathsep.join(p for p in (str(BENCH), os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, "SCORE_TIMELINE_DIR": tmp, "PYTHONPATH": path}
        out = os.path.join(tmp, "parent.json")
        launched = time.monotonic()
        subprocess.run([sys.executable, str(Path(__file__)), "--child", str(launched), out,
                        str(args.workers), "score", *score_args], env=env, check=False,
                       stdout=subprocess.DEVNULL)
        wall = time.monotonic() - launched
        summary = report(json.loads(Path(out).read_text()), Path(tmp))
    summary["wall"] = wall
    print(f"wall {wall:.3f} s (load {os.getloadavg()[0]:.2f})")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
