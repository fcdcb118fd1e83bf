"""`until_decided`: rerun rounds for the cases not yet decided, on a plain callable agent whose
cases pass with known chances (seeded, one case run at a time so that the draws are repeatable)."""

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.agents import CallableAdapter
from agenteval.cli.main import cli
from agenteval.criteria import resolve_metrics
from agenteval.errors import DataError
from agenteval.runner import EvalSetRequest, run_evaluation
from agenteval.runner.request import RunRequest, to_job
from agenteval.schema import EvalConfig, EvalStatus
from agenteval.verdicts.sequential import Decisions, SequentialRule
from tests.helpers import call, eval_set, inv

METRICS = resolve_metrics(EvalConfig(criteria={"tool_trajectory_avg_score": 1.0}))
CHANCES = {"always": 1.0, "never": 0.0, "mostly": 0.9, "coin": 0.5}


def _agent(seed: int) -> Any:
    rng = random.Random(seed)

    def agent(text: str, state: dict[str, Any]) -> dict[str, Any]:
        ok = rng.random() < CHANCES[text]
        return {"response": "r", "tool_calls": [{"name": "ok" if ok else "bad", "args": {}, "response": 1}]}

    return agent


def test_reruns_only_the_undecided_cases_until_decided_or_out_of_runs() -> None:
    s = eval_set("s", {k: [inv(k, calls=[call("ok")])] for k in CHANCES})
    (doc,) = asyncio.run(run_evaluation(CallableAdapter(_agent(1)), [EvalSetRequest(s, METRICS)],
                                        parallelism=1, until_decided=SequentialRule(0.05, 0.5, 20)))
    decisions = Decisions.model_validate(doc.metadata["until_decided"])
    got = {c.eval_id: (c.decision.value, c.runs, c.passed_runs) for c in decisions.cases}
    # Always / never: the fewest runs that can decide at alpha 0.05 (5).
    assert got["always"] == ("passed", 5, 5) and got["never"] == ("failed", 5, 0)
    assert got["mostly"][0] == "passed" and 5 <= got["mostly"][1] < 20
    # A coin: runs until the runs left could not decide it, whatever they gave.
    assert got["coin"][0] == "undecided" and 10 <= got["coin"][1] <= 20
    assert all(c.confidence >= 0.95 for c in decisions.cases if c.decision.value != "undecided")
    # The document holds every run, case by case in run order, and the summaries count them.
    pairs = [(c.eval_id, c.run_index) for c in doc.eval_case_results]
    expected = [(k, j) for k in CHANCES for j in range(got[k][1])]
    assert pairs == expected
    assert {x.eval_id: x.runs for x in doc.summary} == {k: v[1] for k, v in got.items()}
    passed = {k: sum(c.final_eval_status == EvalStatus.PASSED for c in doc.eval_case_results
                     if c.eval_id == k) for k in CHANCES}
    assert passed == {k: v[2] for k, v in got.items()}


def test_resumed_runs_count_towards_the_decision() -> None:
    s = eval_set("s", {"always": [inv("always", calls=[call("ok")])]})
    rule = SequentialRule(0.05, 0.5, 20)
    (first,) = asyncio.run(run_evaluation(CallableAdapter(_agent(2)), [EvalSetRequest(s, METRICS)],
                                          parallelism=1, until_decided=rule))
    kept = {(r.eval_set_id, r.eval_id, r.run_index): r for r in first.eval_case_results[:3]}
    calls: list[str] = []

    def counting(text: str, state: dict[str, Any]) -> dict[str, Any]:
        calls.append(text)
        return {"response": "r", "tool_calls": [{"name": "ok", "args": {}, "response": 1}]}

    (doc,) = asyncio.run(run_evaluation(CallableAdapter(counting), [EvalSetRequest(s, METRICS)],
                                        parallelism=1, until_decided=rule, finished=kept))
    assert len(calls) == 2 and len(doc.eval_case_results) == 5  # 3 kept + the 2 that decide


def test_the_request_checks_max_runs() -> None:
    config = EvalConfig()
    with pytest.raises(DataError, match="max_runs"):
        to_job(RunRequest(until_decided=True, num_runs=5, max_runs=3), config, None, command="eval")
    job = to_job(RunRequest(until_decided=True, max_runs=12, decide_alpha=0.1), config, None, command="eval")
    assert job.until_decided == SequentialRule(0.1, 0.5, 12)
    assert to_job(RunRequest(), config, None, command="eval").until_decided is None


AGENT = '''
import random

rng = random.Random(5)
CHANCES = {"always": 1.0, "never": 0.0, "coin": 0.5}


def root_agent(text, state):
    ok = rng.random() < CHANCES[text]
    return {"response": "r", "tool_calls": [{"name": "ok" if ok else "bad", "args": {}, "response": 1}]}
'''


def test_eval_until_decided_on_the_command_line(tmp_path: Path) -> None:
    agent = tmp_path / "coin_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("coins", {k: [inv(k, calls=[call("ok")])] for k in ("always", "never", "coin")})
    path = agent / "coins.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    (agent / "test_config.json").write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}}))
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--until_decided", "--max_runs", "12",
                                 "--parallelism", "1", "--output", str(out), "--no_history"],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 1, r.output  # "never" fails
    doc = json.loads(out.read_text())
    decided = {c["eval_id"]: (c["decision"], c["runs"]) for c in doc["metadata"]["until_decided"]["cases"]}
    # The coin stops once the runs left could not decide it, whatever they gave.
    assert decided["always"] == ("passed", 5) and decided["never"] == ("failed", 5)
    assert decided["coin"][0] == "undecided" and 5 <= decided["coin"][1] <= 12
    total = sum(n for _, n in decided.values())
    assert len(doc["eval_case_results"]) == total
    assert f"1 passed, 1 failed, 1 undecided; {total} case runs" in r.output
    # why it stayed undecided, and what would decide it
    assert re.search(r"undecided: coin passed \d+/\d+ \(no outcome of 12 runs could decide it; "
                     r"--max_runs \d+ could\)", r.output), r.output
    # `report` of the run says so too (it said nothing of the decisions)
    decisions = r.output[r.output.index("coins: until decided"):r.output.index("could)") + 6]
    shown = CliRunner().invoke(cli, ["report", str(out)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and decisions in shown.output, shown.output


def test_a_resumed_run_past_its_first_rounds_goes_on_from_there() -> None:
    """A run interrupted after its second round: the resumed run replays the rounds from the
    runs it kept (all of them there), then runs only what the rule asks for next."""
    s = eval_set("s", {"coin": [inv("coin", calls=[call("ok")])]})
    rule = SequentialRule(0.05, 0.5, 20)
    outcomes = iter([True, False, True, False, True])  # round 1: 1 run; round 2: 4 more

    def scripted(text: str, state: dict[str, Any]) -> dict[str, Any]:
        ok = next(outcomes, True)
        return {"response": "r", "tool_calls": [{"name": "ok" if ok else "bad", "args": {}, "response": 1}]}

    (first,) = asyncio.run(run_evaluation(CallableAdapter(scripted), [EvalSetRequest(s, METRICS)],
                                          parallelism=1, until_decided=rule))
    kept = {(r.eval_set_id, r.eval_id, r.run_index): r for r in first.eval_case_results[:5]}
    calls: list[str] = []

    def counting(text: str, state: dict[str, Any]) -> dict[str, Any]:
        calls.append(text)
        return {"response": "r", "tool_calls": [{"name": "ok", "args": {}, "response": 1}]}

    (doc,) = asyncio.run(run_evaluation(CallableAdapter(counting), [EvalSetRequest(s, METRICS)],
                                        parallelism=1, until_decided=rule, finished=kept))
    assert len(doc.eval_case_results) == 5 + len(calls) and calls
    assert doc.metadata["until_decided"]["cases"][0]["runs"] == 5 + len(calls)
