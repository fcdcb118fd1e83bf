"""The README's main command on the embedded local model, timed from process start to exit.

    python bench/bench_example.py [--repeat 3] [--with-history]

Runs, `--repeat` times, each in a fresh process:

    agenteval eval examples/hello_world examples/hello_world/hello_world.evalset.json \
        --output bench/out/example/run_<i>.json --no_history

(`--no_history` keeps the run from writing into examples/hello_world/.agenteval; the history
file is one small JSON write, so it does not change the timing; `--with-history` drops the flag.)

`--what-if NAME` adds variants, run interleaved with the base (base, what-if, base, ...), each
through a `sitecustomize` under bench/out/example/whatif_NAME/ put on PYTHONPATH. They measure
one duplication: the built-in agent writes the tool catalogue and a JSON call format into its
system prompt, and llama.cpp's chat template renders the request's `tools` field a second time
(248 prompt tokens without it, 476 with it, for hello_world's first call). Not fixes:

* `no-tools-field`: the embedded model leaves `tools` out of the body it hands to llama.cpp
  (replies are still parsed against the declared tools);
* `no-prompt-catalogue`: the built-in agent's system prompt is the instruction alone; the
  tools reach the model only through the native `tools` field.

Per run it reports the wall time (process start to exit), the child's CPU time and peak RSS
(from `os.wait4`), the exit code, and from the result document: model calls
(`inference_call_count_v1` summed over invocations), tokens (`token_usage_v1` summed over
invocations: total, prompt, of which cached, output) and the trajectory score
(`tool_trajectory_avg_score`, overall per case), plus `response_match_score`. The load average
before each run is printed too: the embedded model runs on the CPU, so anything else running
on the machine slows it down; the median of the runs is the number to quote.

`PYTHONDONTWRITEBYTECODE` is removed from the child's environment, as an installed tool
always has its byte code cached. The model file must already be assembled (first use does it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
OUT_DIR = BENCH_DIR / "out" / "example"
AGENT = "examples/hello_world"
EVALSET = "examples/hello_world/hello_world.evalset.json"


WHATIF_SITECUSTOMIZE = {
    "no-tools-field": '''"""bench/bench_example.py --what-if no-tools-field."""
import dataclasses

import agenteval.models.local as _local

_build_body = _local.build_body


def _without_tools(request, **kwargs):
    return _build_body(dataclasses.replace(request, tools=()), **kwargs)


_local.build_body = _without_tools
''',
    "no-prompt-catalogue": '''"""bench/bench_example.py --what-if no-prompt-catalogue."""
import agenteval.agents.builtin as _builtin
from agenteval.models.base import Message


def _system(self):
    return Message("system", _builtin._render_instruction(self.agent.instruction, self._state))


_builtin.BuiltinSession._system = _system
''',
}


@dataclass
class RunResult:
    variant: str
    index: int
    wall_s: float
    cpu_s: float
    maxrss_mb: float
    exit_code: int
    load_before: float
    model_calls: float
    total_tokens: float
    prompt_tokens: float
    cached_tokens: float
    output_tokens: float
    trajectory: list[float]
    response_match: list[float]
    invocations: int
    model_seconds: float


def _agenteval_cmd() -> list[str]:
    """The console script beside this interpreter (not the pyenv shim, a shell script)."""
    script = Path(sys.executable).parent / "agenteval"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "agenteval"]


def _snake(value: Any) -> Any:
    """Keys in snake_case (result documents are snake_case; camelCase is accepted too)."""
    if isinstance(value, dict):
        return {re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", k).lower(): _snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake(v) for v in value]
    return value


def _metric_sum(doc: dict[str, Any], name: str) -> tuple[float, int]:
    """Sum of a metric's per-invocation scores over all cases, and the invocation count."""
    total, count = 0.0, 0
    for case in doc["eval_case_results"]:
        for inv in case["eval_metric_result_per_invocation"]:
            for m in inv["eval_metric_results"]:
                if m["metric_name"] == name and m.get("score") is not None:
                    total += float(m["score"])
                    count += 1
    return total, count


def _token_sums(doc: dict[str, Any]) -> dict[str, float]:
    keys = ("total_tokens", "prompt_tokens", "cached_tokens", "output_tokens")
    sums = dict.fromkeys(keys, 0.0)
    for case in doc["eval_case_results"]:
        for inv in case["eval_metric_result_per_invocation"]:
            for m in inv["eval_metric_results"]:
                if m["metric_name"] != "token_usage_v1":
                    continue
                details = (m.get("details") or {}).get("token_usage_details") or {}
                for k in keys:
                    sums[k] += float(details.get(k) or 0.0)
    return sums


def _overall(doc: dict[str, Any], name: str) -> list[float]:
    out = []
    for case in doc["eval_case_results"]:
        for m in case["overall_eval_metric_results"]:
            if m["metric_name"] == name and m.get("score") is not None:
                out.append(float(m["score"]))
    return out


def _model_seconds(doc: dict[str, Any]) -> float:
    return sum(float(inv["actual_invocation"].get("model_duration") or 0.0)
               for case in doc["eval_case_results"]
               for inv in case["eval_metric_result_per_invocation"])


def git_head() -> str:
    """The project's commit (with `+dirty` when src/ has uncommitted changes)."""
    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD")
    return head + ("+dirty" if git("status", "--porcelain", "src") else "")


def run_once(variant: str, index: int, history: bool, env: dict[str, str]) -> RunResult:
    stem = f"run_{index}" if variant == "base" else f"{variant}_{index}"
    output = OUT_DIR / f"{stem}.json"
    output.unlink(missing_ok=True)
    cmd = [*_agenteval_cmd(), "eval", AGENT, EVALSET, "--output", str(output)]
    if not history:
        cmd.append("--no_history")
    load_before = os.getloadavg()[0]
    with open(OUT_DIR / f"{stem}.stdout", "wb") as log:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code not in (0, 1) or not output.is_file():
        sys.exit(f"run {stem} failed (exit {code}); see {OUT_DIR / f'{stem}.stdout'}")
    doc = _snake(json.loads(output.read_text(encoding="utf-8")))
    calls, invocations = _metric_sum(doc, "inference_call_count_v1")
    tokens = _token_sums(doc)
    return RunResult(
        variant=variant, index=index, wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime,
        maxrss_mb=usage.ru_maxrss / 1024, exit_code=code, load_before=load_before,
        model_calls=calls, total_tokens=tokens["total_tokens"],
        prompt_tokens=tokens["prompt_tokens"], cached_tokens=tokens["cached_tokens"],
        output_tokens=tokens["output_tokens"],
        trajectory=_overall(doc, "tool_trajectory_avg_score"),
        response_match=_overall(doc, "response_match_score"),
        invocations=invocations, model_seconds=_model_seconds(doc),
    )


def _fmt_scores(values: list[float]) -> str:
    return ", ".join(f"{v:.3g}" for v in values) or "-"


def table(runs: list[RunResult]) -> str:
    lines = ["| variant | run | wall (s) | CPU (s) | peak RSS (MB) | load 1m before | model calls "
             "| model time (s) | tokens total | prompt (cached) | output | trajectory "
             "| response_match | exit |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    med = statistics.median
    for variant in dict.fromkeys(r.variant for r in runs):
        mine = [r for r in runs if r.variant == variant]
        for r in mine:
            lines.append(
                f"| {variant} | {r.index} | {r.wall_s:.1f} | {r.cpu_s:.1f} | {r.maxrss_mb:.0f} "
                f"| {r.load_before:.2f} | {r.model_calls:g} | {r.model_seconds:.1f} "
                f"| {r.total_tokens:g} | {r.prompt_tokens:g} ({r.cached_tokens:g}) "
                f"| {r.output_tokens:g} | {_fmt_scores(r.trajectory)} "
                f"| {_fmt_scores(r.response_match)} | {r.exit_code} |")
        lines.append(
            f"| {variant} | **median** | **{med(r.wall_s for r in mine):.1f}** "
            f"| {med(r.cpu_s for r in mine):.1f} | {med(r.maxrss_mb for r in mine):.0f} | "
            f"| {med(r.model_calls for r in mine):g} | {med(r.model_seconds for r in mine):.1f} "
            f"| {med(r.total_tokens for r in mine):g} | | | | | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--with-history", action="store_true",
                        help="let the runs write examples/hello_world/.agenteval/eval_history")
    parser.add_argument("--what-if", nargs="+", default=[], choices=sorted(WHATIF_SITECUSTOMIZE),
                        help="also run these variants, interleaved with the base")
    parser.add_argument("--no-base", action="store_true", help="run only the --what-if variants")
    parser.add_argument("--json", type=Path, default=OUT_DIR / "summary.json",
                        help="where to write the per-run numbers")
    args = parser.parse_args()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    envs = {} if args.no_base else {"base": env}
    for name in args.what_if:
        shim = OUT_DIR / f"whatif_{name}"
        shim.mkdir(exist_ok=True)
        (shim / "sitecustomize.py").write_text(WHATIF_SITECUSTOMIZE[name], encoding="utf-8")
        path = os.pathsep.join(x for x in (str(shim), env.get("PYTHONPATH")) if x)
        envs[name] = {**env, "PYTHONPATH": path}
    print(f"commit {git_head()}, cpus={os.cpu_count()}, load(1m) at start={os.getloadavg()[0]:.2f}",
          flush=True)
    runs: list[RunResult] = []
    for i in range(args.repeat):
        for variant, variant_env in envs.items():
            r = run_once(variant, i, args.with_history, variant_env)
            runs.append(r)
            print(f"{variant} run {i}: wall {r.wall_s:.1f} s, cpu {r.cpu_s:.1f} s, exit {r.exit_code}, "
                  f"load before {r.load_before:.2f}, model calls {r.model_calls:g}, "
                  f"tokens {r.total_tokens:g}, trajectory {_fmt_scores(r.trajectory)}", flush=True)
    print()
    print(table(runs))
    args.json.write_text(json.dumps({"commit": git_head(), "runs": [r.__dict__ for r in runs]},
                                    indent=2), encoding="utf-8")
    print(f"\nper-run numbers: {args.json}")


if __name__ == "__main__":
    main()
