"""Mutation fuzzing of the bad-input promise: every input gets exit 0, 1 or 2, never a traceback,
and exit 2 names the file.

    python bench/fuzz_bad_inputs.py [--n 400] [--seed 0]

Starts from the parity corpus' first cases (tests/fixtures/parity) and a small eval config;
each trial mutates one of them at one random JSON path (a value replaced by another type, a key
removed or renamed, a list emptied or made an object, a string made huge or given a lone
surrogate escape, the file cut short, a bare NaN) and runs `agenteval score` on it in process
(the streamed path and, with --html, the whole-run path) and `agenteval eval` of a plain
callable agent for mutated expected sets. Prints the counts and every input whose handling broke
the promise (a traceback, another exit code, or an exit 2 whose message does not name the file).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from agenteval.cli.main import cli

PARITY = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "parity"
REPLACEMENTS: list[Any] = [None, 0, -1, 1.5, True, "", "x", [], {}, [1], {"a": 1}, "9" * 400]


def _paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*here, i))
    return out


def _mutate(doc: Any, rng: random.Random) -> tuple[str, str]:
    """(the mutated file's text, what was done)."""
    doc = copy.deepcopy(doc)
    kind = rng.choice(["replace", "replace", "replace", "delete", "rename", "truncate", "nan", "surrogate"])
    if kind == "truncate":
        text = json.dumps(doc)
        cut = rng.randrange(1, len(text))
        return text[:cut], f"cut at {cut}"
    paths = [p for p in _paths(doc) if p]
    path = rng.choice(paths)
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if kind == "delete" and isinstance(parent, dict):
        del parent[last]
        return json.dumps(doc), f"deleted {path}"
    if kind == "rename" and isinstance(parent, dict):
        parent[f"{last}X"] = parent.pop(last)
        return json.dumps(doc), f"renamed {path}"
    if kind == "nan":
        parent[last] = 12345.5
        return json.dumps(doc).replace("12345.5", "NaN", 1), f"NaN at {path}"
    if kind == "surrogate":
        parent[last] = "SURROGATE"
        return json.dumps(doc).replace('"SURROGATE"', '"\\ud800"', 1), f"lone surrogate at {path}"
    value = rng.choice(REPLACEMENTS)
    parent[last] = value
    return json.dumps(doc), f"{path} = {json.dumps(value)[:20]}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    expected = json.loads((PARITY / "expected.evalset.json").read_text())
    actual = json.loads((PARITY / "actual.evalset.json").read_text())
    expected["eval_cases"], actual["eval_cases"] = expected["eval_cases"][:3], actual["eval_cases"][:3]
    config = {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
                           "response_match_score": 0.5}}
    codes: Counter[str] = Counter()
    broken: list[str] = []
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "agent.py").write_text("def root_agent(text, state):\n    return 'ok'\n")
        for _ in range(args.n):
            target = rng.choice(["expected", "actual", "config"])
            base = {"expected": expected, "actual": actual, "config": config}[target]
            text, what = _mutate(base, rng)
            files = {"e.evalset.json": json.dumps(expected), "a.evalset.json": json.dumps(actual),
                     "c.json": json.dumps(config)}
            name = {"expected": "e.evalset.json", "actual": "a.evalset.json", "config": "c.json"}[target]
            files[name] = text
            for rel, content in files.items():
                (root / rel).write_text(content, encoding="utf-8", errors="surrogatepass")
            score = ["score", "e.evalset.json", "--actual", "a.evalset.json", "--config_file_path", "c.json"]
            commands = [[*score, "-o", "out.json"], [*score, "--html", "r.html"]]
            if target != "actual":
                commands.append(["eval", "agent.py", "e.evalset.json", "--config_file_path", "c.json",
                                 "--no_history", "--no_traces"])
            for command in commands:
                cwd = os.getcwd()
                os.chdir(root)
                try:
                    r = runner.invoke(cli, command, env={"COLUMNS": "200"})
                finally:
                    os.chdir(cwd)
                out = r.output
                tb = r.exception is not None and not isinstance(r.exception, SystemExit)
                codes[f"{command[0]} exit {r.exit_code}"] += 1
                ok = not tb and "Traceback" not in out and r.exit_code in (0, 1, 2)
                if ok and r.exit_code == 2 and not any(f in out for f in (name, "c.json", "--")):
                    ok = False
                if not ok:
                    first = out.strip().splitlines()[-1] if out.strip() else repr(r.exception)
                    broken.append(f"{command[0]} {target} {what}: exit {r.exit_code}: {first[:160]}")
    tried = sum(codes.values())
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(codes.items()))
    print(f"{args.n} mutated inputs, {tried} command runs: {counts}")
    print(f"handled as promised: {tried - len(broken)}; broken: {len(broken)}")
    for line in broken:
        print("  " + line)


if __name__ == "__main__":
    main()
