"""`agenteval eval`'s start-up: process start to the first model call, in instructions or CPU.

    python bench/bench_eval_start.py count --src TREE/src [--out FILE]   # callgrind-free count
    python bench/bench_eval_start.py cpu --src TREE/src [--repeat 5]
    python bench/bench_eval_start.py models --src TREE/src             # pydantic models built
    python bench/bench_eval_start.py whole --src TREE/src [--cases 8]  # a whole run's count

Runs `agenteval eval bench_agent bench.evalset.json --no_history` on bench_scaling.py's fixtures
(one case of 3 turns, its agent package pointed at a closed local port) with an audit hook that
ends the process at its first `socket.connect`: the first model call, nothing connects before
it. `count` gives the instructions of that process (cachegrind, `bench/instructions.py`:
load-proof); `cpu` its CPU seconds at the hook (`time.process_time`), min and median of
`--repeat`; `models` the pydantic models (and `TypeAdapter`s) whose validator exists at the hook,
by module. `whole` counts a whole `eval` of `--cases` cases (`--parallelism 4`) against
bench_scaling.py's stub at 200 ms a call, start to exit, so that what a cut defers to the run is
counted too. Byte code: run `python -m compileall -q TREE/src` first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scaling  # (bench/ is not a package: its directory put on the path above)
import instructions

PYTHON = "/root/.pyenv/versions/3.11.7/bin/python"  # the real binary, not pyenv's shim
WORK = Path(tempfile.gettempdir()) / "agenteval_eval_start"

# The child: an audit hook ends the process at the first connect, after printing what `mode` asks.
CHILD = r'''
import os, sys, time
MODE = sys.argv.pop(1)

def report():
    if MODE == "cpu":
        print(time.process_time(), file=sys.stderr)
    elif MODE == "models":
        import json, pydantic
        seen, todo, out = set(), [pydantic.BaseModel], []
        while todo:
            cls = todo.pop()
            for sub in cls.__subclasses__():
                if sub not in seen:
                    seen.add(sub)
                    todo.append(sub)
                    out.append([sub.__module__, sub.__qualname__,
                                bool(sub.__dict__.get("__pydantic_complete__"))])
        print(json.dumps(out), file=sys.stderr)

def hook(event, args):
    if event == "socket.connect":
        report()
        sys.stderr.flush()
        os._exit(0)

sys.addaudithook(hook)
from ENTRY_MODULE import ENTRY_FUNC as main
sys.argv[0] = "agenteval"
sys.exit(main())
'''


def fixtures(cases: int = 1, base_url: str = "http://127.0.0.1:9/v1") -> list[str]:
    """The eval command's arguments on a set of `cases` cases (written under WORK)."""
    WORK.mkdir(exist_ok=True)
    pkg = WORK / "bench_agent"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("from . import agent as agent\n", encoding="utf-8")
    (pkg / "agent.py").write_text(bench_scaling.AGENTEVAL_AGENT.format(
        base_url=base_url, tool=bench_scaling.TOOL_SOURCE), encoding="utf-8")
    evalset = WORK / "bench.evalset.json"
    evalset.write_text(json.dumps(bench_scaling.eval_set(cases, 3)), encoding="utf-8")
    (WORK / "test_config.json").write_text(json.dumps({"criteria": {
        "tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}), encoding="utf-8")
    return ["eval", str(pkg), str(evalset), "--no_history", "--output", str(WORK / "out.json")]


def child_code(src: str) -> str:
    """CHILD calling the console script's entry point, as TREE's pyproject.toml names it."""
    with open(Path(src).parent / "pyproject.toml", "rb") as f:
        module, func = tomllib.load(f)["project"]["scripts"]["agenteval"].split(":")
    return CHILD.replace("ENTRY_MODULE", module).replace("ENTRY_FUNC", func)


def child(mode: str, src: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": src}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    run = subprocess.run([PYTHON, "-c", child_code(src), mode, *fixtures()], env=env, cwd=WORK,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"exit {run.returncode}\n{run.stderr[-2000:]}")
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["count", "cpu", "models", "whole"])
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--src", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default="/dev/null", help="cachegrind's per-function file")
    args = parser.parse_args()
    src = str(Path(args.src).resolve())
    if args.mode == "count":
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        n = instructions.count([PYTHON, "-c", child_code(src), "none", *fixtures()], src, out=args.out)
        print(f"{n / 1e6:,.1f} M instructions to the first model call ({src})")
    elif args.mode == "whole":
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        stub = bench_scaling.Stub(0.2, 900)  # (it stops itself then: valgrind at load 18 outlived 60 s)
        try:
            # Calls slowed down by valgrind must not time out (a failed case is cheaper).
            config = WORK / "whole_config.json"
            config.write_text(json.dumps({
                "criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8},
                "endpoints": {f"openai-compat:stub@{stub.base_url}": {"timeout": 600}}}))
            argv = [*fixtures(args.cases, stub.base_url), "--parallelism", "4",
                    "--config_file_path", str(config)]
            n = instructions.count([PYTHON, "-m", "agenteval", *argv], src, out=args.out)
        finally:
            stub.stop()
        statuses = [c["final_eval_status"] for c in
                    json.loads((WORK / "out.json").read_text())["eval_case_results"]]
        if statuses != [1] * args.cases:
            raise SystemExit(f"not every case passed: {statuses}")
        print(f"{n / 1e6:,.1f} M instructions, a whole eval of {args.cases} cases ({src})")
    elif args.mode == "cpu":
        cpu = [float(child("cpu", src).stderr.split()[-1]) for _ in range(args.repeat)]
        print(f"load {os.getloadavg()[0]:.2f}; CPU to the first call (s): "
              + " ".join(f"{c:.3f}" for c in cpu)
              + f"; min {min(cpu):.3f}, median {statistics.median(cpu):.3f} ({src})")
    else:
        rows = json.loads(child("models", src).stderr.strip().splitlines()[-1])
        built = sorted((m, q) for m, q, done in rows if done)
        print(f"{len(built)} of {len(rows)} pydantic models built at the first call:")
        for m, q in built:
            print(f"  {m}.{q}")


if __name__ == "__main__":
    main()
