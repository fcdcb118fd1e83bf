"""`agenteval score` against ADK 2.13.0's `LocalEvalService.evaluate`, through the files.

    PYTHONPATH=src /work/adkvenv/bin/python bench/parity_service.py [--out DIR]

Writes small scenarios (expected set, actual set, config) under DIR (default
bench/out/parity_service/), then per scenario: ADK loads the sets with
`load_eval_set_from_file` (legacy lists too) and the config with
`get_evaluation_criteria_or_default`, and its real `LocalEvalService.evaluate` scores the actual
conversations given as inference results (so its metric registry, NOT_EVALUATED rule, the four
efficiency metrics and the case status are ADK's own); agenteval runs `python -m agenteval
score EXPECTED --actual ACTUAL [--config_file_path CONFIG] -o OUT`. Every case's final status
and every overall and per-invocation (score, status) must be equal. Scenarios that ADK accepts
and agenteval refuses on purpose (README, "Eval config") must exit 2 naming the file and key.
Covered: thresholds at the edge of a ROUGE score (equal, one ulp above, 0, an integer 1),
criteria as numbers and as objects, `match_type` spelt EXACT / in-order / "IN ORDER" /
any_order / Any-Order / 0 / 1 / 2, `ignore_args`, camelCase keys, the default criteria, missing
/ empty / empty-parts / thought-only final responses, missing or empty intermediate data,
InvocationEvents vs tool_uses with nested unicode args, 60 invocations, a legacy list file,
session_input and unknown case keys, `include_intermediate_responses_in_final` on ROUGE.
Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.evaluation.base_eval_service import (  # noqa: E402
    EvaluateConfig,
    EvaluateRequest,
    InferenceResult,
    InferenceStatus,
)
from google.adk.evaluation.eval_config import (  # noqa: E402
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager  # noqa: E402
from google.adk.evaluation.local_eval_service import LocalEvalService  # noqa: E402
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file  # noqa: E402

BENCH = Path(__file__).resolve().parent
Scores = dict[str, Any]


def inv(user: str, final: Any = None, calls: list[tuple[str, Any]] | None = None,
        events: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"user_content": {"role": "user", "parts": [{"text": user}]}, **extra}
    if final is not None:
        parts = [{"text": final}] if isinstance(final, str) else final
        d["final_response"] = {"role": "model", "parts": parts}
    if calls is not None:
        d["intermediate_data"] = {"tool_uses": [{"name": n, "args": a} for n, a in calls]}
    if events is not None:
        d["intermediate_data"] = {"invocation_events": events}
    return d


def eval_set(cases: dict[str, list[Any]]) -> dict[str, Any]:
    return {"eval_set_id": "s1", "eval_cases": [{"eval_id": k, "conversation": v} for k, v in cases.items()]}


def scenarios() -> dict[str, tuple[Any, Any, Any]]:
    """name -> (expected, actual or None, config or None); a str expected is written raw."""
    out: dict[str, tuple[Any, Any, Any]] = {}
    e = eval_set({"c1": [inv("q", "the cat sat")], "c2": [inv("q", "a b c d")], "c3": [inv("q", "x y z")]})
    a = eval_set({"c1": [inv("q", "the cat ran")], "c2": [inv("q", "a b")], "c3": [inv("q", "")]})
    for name, crit in [("equal", 0.6666666666666666), ("ulp_above", 0.6666666666666667), ("zero", 0),
                       ("object", {"threshold": 0.5}), ("int_1", 1),
                       ("include_intermediate", {"threshold": 0.5,
                                                 "include_intermediate_responses_in_final": True})]:
        out[f"rouge_{name}"] = (e, a, {"criteria": {"response_match_score": crit}})
    e = eval_set({"t1": [inv("q", "ok", [("f", {"x": 1}), ("g", {})])],
                  "t2": [inv("q", "ok", [("f", {"x": 1})]), inv("q2", "ok", [])]})
    a = eval_set({"t1": [inv("q", "ok", [("g", {}), ("f", {"x": 1.0}), ("h", {})])],
                  "t2": [inv("q", "ok", [("f", {"x": 1}), ("f", {"x": 1})]), inv("q2", "ok", [])]})
    for mt in ["EXACT", "in-order", "IN ORDER", "any_order", "Any-Order", 0, 1, 2]:
        out[f"trajectory_{str(mt).replace(' ', '_')}"] = (
            e, a, {"criteria": {"tool_trajectory_avg_score": {"threshold": 0.5, "match_type": mt}}})
    out["trajectory_ignore_args"] = (e, a, {"criteria": {"tool_trajectory_avg_score": {
        "threshold": 1.0, "match_type": "IN_ORDER", "ignore_args": True}}})
    out["trajectory_camel_keys"] = (e, a, {"criteria": {"tool_trajectory_avg_score": {
        "threshold": 1.0, "matchType": "IN_ORDER", "ignoreArgs": True}}})
    out["default_criteria"] = (e, a, None)
    out["missing_responses"] = (
        eval_set({"m1": [inv("q")], "m2": [inv("q", "")], "m3": [inv("q", [])],
                  "m4": [inv("q", "hi", intermediate_data={})], "m5": [inv("q", "hi", events=[])],
                  "m6": [inv("q", [{"text": "think", "thought": True}, {"text": "hi"}])]}),
        eval_set({"m1": [inv("q")], "m2": [inv("q", "")], "m3": [inv("q", "x")], "m4": [inv("q", "hi")],
                  "m5": [inv("q", "hi", [])], "m6": [inv("q", [{"text": "hi"}])]}), None)
    events = [{"author": "agent", "content": {"role": "model", "parts": [
                  {"function_call": {"name": "f", "args": {"a": [1, {"b": "é"}], "c": 2.5}}}]}},
              {"author": "agent", "content": {"role": "user", "parts": [
                  {"function_response": {"name": "f", "response": {"r": 1}}}]}},
              {"author": "agent", "content": {"role": "model", "parts": [{"text": "mid"}]}}]
    tool_uses = [("f", {"a": [1, {"b": "é"}], "c": 2.5})]
    e = eval_set({"v1": [inv("q", "done", events=events)], "v2": [inv("q", "done", tool_uses)]})
    a = eval_set({"v1": [inv("q", "done", tool_uses)], "v2": [inv("q", "done", events=events)]})
    out["events_vs_tool_uses"] = (e, a, {"criteria": {"tool_trajectory_avg_score": 1.0,
                                                      "response_match_score": 0.8}})
    camel = {"eval_set_id": "s1", "eval_cases": [{"eval_id": "cc", "conversation": [{
        "invocationId": "i", "userContent": {"role": "user", "parts": [{"text": "q"}]},
        "finalResponse": {"role": "model", "parts": [{"text": "the answer"}]},
        "intermediateData": {"toolUses": [{"name": "f", "args": {"k": 1}}]}}]}]}
    out["camel_case_invocations"] = (camel, None, None)
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
    out["sixty_invocations"] = (
        eval_set({"big": [inv(f"q{i}", " ".join(rng.choice(words) for _ in range(5)), [("f", {"i": i})])
                          for i in range(60)]}),
        eval_set({"big": [inv(f"q{i}", " ".join(rng.choice(words) for _ in range(5)),
                              [("f", {"i": i if i % 3 else -1})]) for i in range(60)]}),
        {"criteria": {"tool_trajectory_avg_score": 0.66, "response_match_score": 0.3}})
    legacy = [{"name": "leg1", "data": [{"query": "hi", "expected_tool_use": [
        {"tool_name": "f", "tool_input": {"a": 1}}], "reference": "hello there"}],
        "initial_session": {"app_name": "x", "user_id": "u", "state": {}}}]
    out["legacy_list"] = (json.dumps(legacy), eval_set({"leg1": [inv("hi", "hello", [("f", {"a": 1})])]}),
                          None)
    extras = {"eval_set_id": "s1", "name": "n", "description": "d", "creation_timestamp": 5, "eval_cases": [
        {"eval_id": "si", "session_input": {"app_name": "x", "user_id": "u", "state": {"k": 1}},
         "final_session_state": {"a": 1}, "custom_key": 3, "conversation": [inv("q", "a")]}]}
    out["session_input_and_case_extras"] = (extras, None, None)
    return out


# Accepted by ADK (silently ignored or coerced), refused by agenteval with exit 2 (README).
REFUSED = {
    "unknown_criterion_key": {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0,
                                                                         "match-typ": "IN_ORDER"}}},
    "unknown_top_key": {"criteria": {"response_match_score": 0.5}, "foo": 1},
    "empty_criteria": {"criteria": {}},
    "threshold_string": {"criteria": {"response_match_score": "0.5"}},
    "threshold_above_1": {"criteria": {"response_match_score": 1.5}},
    "threshold_negative": {"criteria": {"response_match_score": -0.5}},
}


def write(root: Path) -> list[Path]:
    shutil.rmtree(root, ignore_errors=True)
    dirs = []
    refused = eval_set({"c": [inv("q", "a b", [("f", {})])]})
    refusals = [(f"refused_{k}", (refused, None, v)) for k, v in REFUSED.items()]
    for name, (expected, actual, config) in [*scenarios().items(), *refusals]:
        d = root / name
        d.mkdir(parents=True)
        (d / "expected.json").write_text(expected if isinstance(expected, str) else json.dumps(expected))
        if actual is not None:
            (d / "actual.json").write_text(json.dumps(actual))
        if config is not None:
            (d / "config.json").write_text(json.dumps(config))
        dirs.append(d)
    return dirs


def files(d: Path) -> tuple[str, str, str | None]:
    actual = d / "actual.json" if (d / "actual.json").exists() else d / "expected.json"
    config = d / "config.json" if (d / "config.json").exists() else None
    return str(d / "expected.json"), str(actual), None if config is None else str(config)


async def adk_scores(d: Path) -> Scores:
    expected_file, actual_file, config_file = files(d)
    expected = load_eval_set_from_file(expected_file, "expected")
    actual = {c.eval_id: c.conversation
              for c in load_eval_set_from_file(actual_file, "actual").eval_cases}
    metrics = get_eval_metrics_from_config(get_evaluation_criteria_or_default(config_file))
    manager = InMemoryEvalSetsManager()
    manager.create_eval_set("app", expected.eval_set_id)
    for case in expected.eval_cases:
        manager.add_eval_case("app", expected.eval_set_id, case)
    service = LocalEvalService(root_agent=LlmAgent(name="a", model="gemini-2.5-flash"),
                               eval_sets_manager=manager)
    inferences = [InferenceResult(app_name="app", eval_set_id=expected.eval_set_id, eval_case_id=c.eval_id,
                                  inferences=actual[c.eval_id], session_id=None,
                                  status=InferenceStatus.SUCCESS) for c in expected.eval_cases]
    out: Scores = {}
    async for r in service.evaluate(EvaluateRequest(inference_results=inferences,
                                                    evaluate_config=EvaluateConfig(eval_metrics=metrics))):
        out[r.eval_id] = [r.final_eval_status.value,
                          {m.metric_name: [m.score, m.eval_status.value]
                           for m in r.overall_eval_metric_results},
                          [{m.metric_name: [m.score, m.eval_status.value] for m in p.eval_metric_results}
                           for p in r.eval_metric_result_per_invocation]]
    return out


def agenteval_scores(d: Path) -> tuple[int, Scores | str]:
    expected_file, actual_file, config_file = files(d)
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "agenteval", "score", expected_file, "--actual", actual_file,
               "-o", str(doc)]
        if config_file:
            cmd += ["--config_file_path", config_file]
        env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(BENCH.parent / "src")}
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if not doc.exists():
            return p.returncode, (p.stderr or p.stdout).strip()
        results = json.loads(doc.read_text())["eval_case_results"]
        return p.returncode, {r["eval_id"]: [
            r["final_eval_status"],
            {m["metric_name"]: [m.get("score"), m["eval_status"]] for m in r["overall_eval_metric_results"]},
            [{m["metric_name"]: [m.get("score"), m["eval_status"]] for m in p["eval_metric_results"]}
             for p in r["eval_metric_result_per_invocation"]]] for r in results}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=BENCH / "out" / "parity_service")
    args = ap.parse_args()
    faults = 0
    dirs = write(args.out)
    for d in dirs:
        code, ours = agenteval_scores(d)
        if d.name.startswith("refused_"):
            ok = code == 2 and isinstance(ours, str) and "config.json" in ours
            print(f"{'refused  ' if ok else 'DIFFERENT'} {d.name}: {ours if isinstance(ours, str) else code}")
            faults += not ok
            continue
        theirs = asyncio.run(adk_scores(d))
        same = theirs == ours
        print(f"{'identical' if same else 'DIFFERENT'} {d.name}")
        if not same:
            print(f"  ADK:       {json.dumps(theirs)}\n  agenteval: {json.dumps(ours)}")
            faults += 1
    print(f"{len(dirs) - faults} of {len(dirs)} scenarios as expected")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
