"""What the run journal costs, and what resuming a large run costs, with a trivial agent.

    python bench/bench_journal.py [--cases 5000] [--repeat 3] [--resume-cases 10000] [--left 0.01]
                                  [--src DIR]

1. `eval`: `agenteval eval AGENT SET --parallelism 8 --output OUT` with a plain-callable agent
   that answers at once (so the run is nothing but agenteval's own work), with the run history
   and journal on (the default) against `--no_history`: wall, CPU (user + system, from
   `os.wait4`) and peak RSS per process, median of `--repeat` interleaved rounds.
2. `--resume`: a `--resume-cases` run whose agent SIGKILLs its process at case
   (1 - `--left`) x cases, after sleeping 1 s so that the journal has committed every case run
   before it (the journal commits within 0.5 s); then `agenteval eval ... --resume RUN` is
   timed, and compared with a fresh run of only the remaining cases (`--left` of the set).

`--src` puts another checkout's `src/` first on PYTHONPATH (a `git worktree` of an older commit,
for before/after); without it, this checkout's `src/` is put first (the `agenteval` script on the
PATH may be an editable install of another copy: in session 14 it was a copy of the session's
start, so every "after" run without PYTHONPATH ran the "before" code). `--ab SRC` pairs the
resume of this checkout (A) with SRC's (B): each makes
its own killed run once (a journal belongs to the agenteval that wrote it), then each of
`--repeat` rounds resumes a fresh copy of A's killed store and of B's, the first side alternating
by round (the copy is not timed),
and the CPU ratio A/B is given pair by pair; unless `--skip-overhead`, the `eval` runs of 1. are
paired too (`eval_ab`: A on, B on, A off, B off, B first every other round). Outputs under
bench/out/journal/ (summary.json).
Numbers are whole processes, start to exit.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
OUT = BENCH_DIR / "out" / "journal"

AGENT = '''
import os, signal, time
from pathlib import Path

KILL_AT = os.environ.get("BENCH_KILL_AT")

def root_agent(text):
    if KILL_AT is not None and text == "case " + KILL_AT:
        time.sleep(1.0)  # every case run before this one is committed by now
        os.kill(os.getpid(), signal.SIGKILL)
    return "answer to " + text
'''


def write_set(path: Path, cases: range) -> None:
    def case(i: int) -> dict[str, Any]:
        return {"eval_id": f"c{i:06d}", "conversation": [
            {"user_content": {"role": "user", "parts": [{"text": f"case {i}"}]},
             "final_response": {"role": "model", "parts": [{"text": f"answer to case {i}"}]}}]}
    path.write_text(json.dumps({"eval_set_id": "bench", "eval_cases": [case(i) for i in cases]}))


SRC: str | None = None  # --src


def script() -> str:
    return str(Path(sys.executable).parent / "agenteval")


def timed(cmd: list[str], env: dict[str, str] | None = None, src: str | None = None) -> dict[str, Any]:
    env = dict(env if env is not None else os.environ)
    src = src or SRC
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "user": usage.ru_utime,
            "sys": usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "exit": os.waitstatus_to_exitcode(status), "stderr": err[-500:]}


def fresh_agent(name: str) -> Path:
    agent = OUT / name
    shutil.rmtree(agent, ignore_errors=True)
    agent.mkdir(parents=True)
    (agent / "__init__.py").write_text(AGENT)
    return agent


def median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def compiled(*srcs: str | None) -> None:
    """Writes the trees' bytecode before anything is timed: with PYTHONDONTWRITEBYTECODE set (as
    in some shells) a fresh worktree is otherwise compiled again by every process it runs,
    ≈0.3 s each on the side that lacks its .pyc files (bench/README.md, session 17)."""
    for src in srcs:
        if src:
            compileall.compile_dir(src, quiet=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--resume-cases", type=int, default=10_000)
    ap.add_argument("--left", type=float, default=0.01)
    ap.add_argument("--skip-overhead", action="store_true")
    ap.add_argument("--skip-resume", action="store_true")
    ap.add_argument("--src", default=None, help="a checkout's src/ to run instead of the installed one")
    ap.add_argument("--ab", default=None, metavar="SRC", help="pair this checkout's resume with SRC's")
    args = ap.parse_args()
    global SRC
    SRC = args.src or str(BENCH_DIR.parent / "src")
    compiled(SRC, args.ab)
    OUT.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    if args.ab:
        if not args.skip_overhead:
            summary["eval_ab"] = eval_ab(args.cases, args.repeat, args.ab)
        if not args.skip_resume:
            summary["resume_ab"] = resume_ab(args.resume_cases, args.left, args.repeat, args.ab)
        summary["load_after"] = os.getloadavg()[0]
        (OUT / "summary_ab.json").write_text(json.dumps(summary, indent=2))
        return

    if not args.skip_overhead:
        evalset = OUT / "overhead.evalset.json"
        write_set(evalset, range(args.cases))
        rounds: dict[str, list[dict[str, Any]]] = {"journal": [], "no_history": []}
        for _ in range(args.repeat):
            for kind in rounds:
                agent = fresh_agent(f"agent_{kind}")  # an empty history each round
                extra = ["--no_history"] if kind == "no_history" else []
                r = timed([script(), "eval", str(agent), str(evalset), "--parallelism", "8",
                           "--output", str(OUT / f"{kind}.json"), *extra])
                assert r["exit"] in (0, 1), r["stderr"]
                rounds[kind].append(r)
        j, n = rounds["journal"], rounds["no_history"]
        summary["overhead"] = {"cases": args.cases, "rounds": rounds,
                               "journal_wall": median(j, "wall"), "no_history_wall": median(n, "wall"),
                               "journal_cpu": median(j, "cpu"), "no_history_cpu": median(n, "cpu"),
                               "journal_rss": median(j, "rss_mib"), "no_history_rss": median(n, "rss_mib")}
        o = summary["overhead"]
        print(f"eval {args.cases} cases: history+journal {o['journal_wall']:.2f} s wall / "
              f"{o['journal_cpu']:.2f} s CPU / {o['journal_rss']:.0f} MiB; --no_history "
              f"{o['no_history_wall']:.2f} s / {o['no_history_cpu']:.2f} s / {o['no_history_rss']:.0f} MiB; "
              f"overhead {100 * (o['journal_wall'] / o['no_history_wall'] - 1):+.1f}% wall, "
              f"{100 * (o['journal_cpu'] / o['no_history_cpu'] - 1):+.1f}% CPU")
        pairs = [a["cpu"] / b["cpu"] for a, b in zip(j, n, strict=True)]  # (each round's two runs)
        o["cpu_ratios"] = pairs
        extra_cpu = statistics.median(a["cpu"] - b["cpu"] for a, b in zip(j, n, strict=True))
        print(f"  on/off CPU pair by pair: median {statistics.median(pairs):.3f} ({min(pairs):.3f}-"
              f"{max(pairs):.3f}); on - off median {extra_cpu:.2f} s")

    if args.skip_resume:  # (a run of another tree, `--src`, keeps its own summary)
        name = "summary_src.json" if args.src else "summary.json"
        (OUT / name).write_text(json.dumps(summary, indent=2))
        return
    n_cases = args.resume_cases
    kill_at = int(n_cases * (1 - args.left))
    evalset = OUT / "resume.evalset.json"
    write_set(evalset, range(n_cases))
    agent = fresh_agent("agent_resume")
    env = {**os.environ, "BENCH_KILL_AT": str(kill_at)}
    killed = timed([script(), "eval", str(agent), str(evalset), "--parallelism", "1",
                    "--output", str(OUT / "never.json")], env)
    assert killed["exit"] == -9, killed
    drop_killed_document()
    resumed = timed([script(), "eval", str(agent), str(evalset), "--resume", "latest",
                     "--output", str(OUT / "resumed.json")])
    assert resumed["exit"] in (0, 1), resumed["stderr"]
    assert count_results(OUT / "resumed.json") == n_cases
    rest = OUT / "rest.evalset.json"
    write_set(rest, range(kill_at, n_cases))
    only_rest = timed([script(), "eval", str(fresh_agent("agent_rest")), str(rest), "--no_history",
                       "--output", str(OUT / "rest.json")])
    summary["resume"] = {"cases": n_cases, "left": n_cases - kill_at, "killed_run": killed,
                         "resume": resumed, "remaining_alone": only_rest}
    print(f"--resume of {n_cases} cases with {n_cases - kill_at} left: {resumed['wall']:.2f} s wall / "
          f"{resumed['cpu']:.2f} s CPU / {resumed['rss_mib']:.0f} MiB; the {n_cases - kill_at} remaining "
          f"cases alone: {only_rest['wall']:.2f} s / {only_rest['cpu']:.2f} s; first run (killed at "
          f"{kill_at}): {killed['wall']:.2f} s")
    summary["load_after"] = os.getloadavg()[0]
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2))


def drop_killed_document() -> None:
    """Removes the temporary document the killed run left (about 114 MB at 10,000 cases; they
    piled up to gigabytes under bench/out/journal/)."""
    from agenteval.datasets.targets import remove_stale_temporaries

    remove_stale_temporaries(OUT)


def count_results(path: Path) -> int:
    """The case runs of a document, counted in a child process: a child forked from a parent
    that once held a 100 MB document reports the parent's peak as its own (`ru_maxrss` survives
    `exec`), so the parent never loads one."""
    code = "import json, sys; print(len(json.load(open(sys.argv[1]))['eval_case_results']))"
    return int(subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                              check=True).stdout)


def eval_ab(n_cases: int, repeat: int, other_src: str) -> dict[str, Any]:
    """`eval` of `n_cases` with the history and journal on and with `--no_history`, this
    checkout (A) and `other_src` (B) in turn each round (A on, B on, A off, B off, then B first
    in the next round; a fresh agent directory each run): CPU ratios A/B of the journaled runs
    pair by pair, and each side's on/off ratio (the journal's cost) pair by pair."""
    evalset = OUT / "overhead.evalset.json"
    write_set(evalset, range(n_cases))
    rounds: dict[str, list[dict[str, Any]]] = {"A on": [], "B on": [], "A off": [], "B off": []}
    for i in range(repeat):
        # Which side runs first alternates by round: with A always first, the identical
        # `--no_history` runs of A took 8-10% more CPU than B's (bench/README.md, session 16).
        order = ("A on", "B on", "A off", "B off") if i % 2 == 0 else ("B on", "A on", "B off", "A off")
        for kind in order:
            side, mode = kind.split()
            agent = fresh_agent(f"agent_{side}_{mode}")
            extra = ["--no_history"] if mode == "off" else []
            r = timed([script(), "eval", str(agent), str(evalset), "--parallelism", "8",
                       "--output", str(OUT / f"{side}_{mode}.json"), *extra],
                      src=None if side == "A" else other_src)
            assert r["exit"] in (0, 1), r["stderr"]
            rounds[kind].append(r)
    ratios = {f"{name} {of}": [a[of] / b[of] for a, b in zip(rounds[x], rounds[y], strict=True)]
              for name, x, y in (("A/B on", "A on", "B on"), ("A on/off", "A on", "A off"),
                                 ("B on/off", "B on", "B off")) for of in ("cpu", "user", "wall")}
    print(f"eval {n_cases} cases, {repeat} rounds: CPU A on {median(rounds['A on'], 'cpu'):.2f} s, B on "
          f"{median(rounds['B on'], 'cpu'):.2f} s, A off {median(rounds['A off'], 'cpu'):.2f} s, B off "
          f"{median(rounds['B off'], 'cpu'):.2f} s; wall A on {median(rounds['A on'], 'wall'):.2f} s, B on "
          f"{median(rounds['B on'], 'wall'):.2f} s, A off {median(rounds['A off'], 'wall'):.2f} s, B off "
          f"{median(rounds['B off'], 'wall'):.2f} s; " + "; ".join(
              f"{name} median {statistics.median(r):.3f} ({min(r):.3f}-{max(r):.3f})"
              for name, r in ratios.items()))
    return {"cases": n_cases, "B": other_src, "rounds": rounds, "cpu_ratios": ratios}


def resume_ab(n_cases: int, left: float, repeat: int, other_src: str) -> dict[str, Any]:
    """See the module docstring (`--ab`)."""
    kill_at = int(n_cases * (1 - left))
    evalset = OUT / "resume.evalset.json"
    write_set(evalset, range(n_cases))
    sides = {"A": None, "B": other_src}
    for side, src in sides.items():  # each side's killed run, kept as a template
        agent = fresh_agent(f"killed_{side}")
        kill_env = {**os.environ, "BENCH_KILL_AT": str(kill_at)}
        killed = timed([script(), "eval", str(agent), str(evalset), "--parallelism", "1",
                        "--output", str(OUT / "never.json")], kill_env, src)
        assert killed["exit"] == -9, killed
        drop_killed_document()
    rest = OUT / "rest.evalset.json"
    write_set(rest, range(kill_at, n_cases))
    rounds: dict[str, list[dict[str, Any]]] = {"A": [], "B": [], "rest": []}
    for i in range(repeat):
        r = timed([script(), "eval", str(fresh_agent("agent_rest")), str(rest), "--no_history",
                   "--output", str(OUT / "rest.json")])
        rounds["rest"].append(r)
        for side in ("A", "B") if i % 2 == 0 else ("B", "A"):  # the first side alternates by round
            src = sides[side]
            copy = OUT / f"resumed_{side}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(OUT / f"killed_{side}", copy)
            out = OUT / f"resumed_{side}.json"
            r = timed([script(), "eval", str(copy), str(evalset), "--resume", "latest", "--output", str(out)],
                      src=src)
            assert r["exit"] in (0, 1), r["stderr"]
            assert count_results(out) == n_cases
            rounds[side].append(r)
    ratios = [a["cpu"] / b["cpu"] for a, b in zip(rounds["A"], rounds["B"], strict=True)]
    user = [a["user"] / b["user"] for a, b in zip(rounds["A"], rounds["B"], strict=True)]
    a, b = rounds["A"], rounds["B"]
    rest_cpu, rest_wall = median(rounds["rest"], "cpu"), median(rounds["rest"], "wall")
    print(f"--resume of {n_cases} cases with {n_cases - kill_at} left, {repeat} pairs: "
          f"A {median(a, 'cpu'):.2f} s CPU / {median(a, 'wall'):.2f} s wall / "
          f"{median(a, 'rss_mib'):.0f} MiB; "
          f"B ({other_src}) "
          f"{median(b, 'cpu'):.2f} s / {median(b, 'wall'):.2f} s / {median(b, 'rss_mib'):.0f} MiB; A/B CPU "
          f"median {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), user CPU A "
          f"{median(a, 'user'):.2f} / B {median(b, 'user'):.2f} s, A/B median {statistics.median(user):.3f} "
          f"({min(user):.3f}-{max(user):.3f}); the "
          f"{n_cases - kill_at} remaining cases alone (A, --no_history): {rest_cpu:.2f} s CPU / "
          f"{rest_wall:.2f} s wall")
    return {"cases": n_cases, "left": n_cases - kill_at, "B": other_src, "rounds": rounds,
            "cpu_ratios": ratios, "user_ratios": user}


if __name__ == "__main__":
    main()
