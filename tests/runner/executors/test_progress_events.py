"""Progress is the same whichever executor runs the agent: every finished turn (`TurnDone`), the
judge questions planned (`JudgeCallsPlanned`) and every answered one, named with its case run
and "judge call k of n" (`JudgeCallDone`), before the case run's `CaseFinished`, with the
local executor and with worker processes (`--isolation process`). The Ray executor's are
checked in test_ray_executor.py, on the cluster those tests share."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agenteval.agents import load_root_agent
from agenteval.criteria.judge.engine.progress import judging, plan, tag
from agenteval.runner import EvalJob, Selection, Services, run
from agenteval.schema import EvalConfig, EvalSet
from agenteval.schema.progress import CaseFinished, JudgeCallDone, JudgeCallsPlanned, TurnDone
from tests.fake_server import FakeServer, chat
from tests.helpers import eval_set, inv

AGENT = '''
def root_agent(text):
    return "answer to " + text
'''


def progress_by_case(events: list[object]) -> dict[tuple[str, int], list[tuple[object, ...]]]:
    """Each case run's progress events in the order heard: turns as ("turn", k, n), judge
    questions planned as ("planned", n), answered as ("judge", k, n), the end as ("finished",)."""
    out: dict[tuple[str, int], list[tuple[object, ...]]] = {}
    for e in events:
        if isinstance(e, TurnDone):
            out.setdefault((e.eval_id, e.run_index), []).append(("turn", e.turn, e.turns))
        elif isinstance(e, JudgeCallsPlanned):
            out.setdefault((e.eval_id, e.run_index), []).append(("planned", e.calls))
        elif isinstance(e, JudgeCallDone):
            assert e.eval_id is not None and e.run_index is not None and e.seconds is not None
            out.setdefault((e.eval_id, e.run_index), []).append(("judge", e.call, e.calls))
        elif isinstance(e, CaseFinished):
            out.setdefault((e.eval_id, e.run_index), []).append(("finished",))
    return out


def test_process_workers_report_turns_and_judge_calls_as_the_local_executor_does(
        tmp_path: Path, server: FakeServer) -> None:
    server.respond = chat(lambda _: json.dumps({"rationale": "same facts", "verdict": "valid"}))
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    s = eval_set("p", {c: [inv(f"{c} one", f"answer to {c} one"), inv(f"{c} two", f"answer to {c} two")]
                       for c in ("a", "b")})
    path = tmp_path / "p.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    config = EvalConfig(criteria={"final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
        "judge_model": f"openai-compat:judge@{server.base_url}", "num_samples": 1}}})
    heard = {}
    for isolation in ("none", "process"):
        events: list[object] = []
        job = EvalJob(config=config, agent=load_root_agent(str(agent)), agent_path=str(agent),
                      selections=[Selection(path, EvalSet.model_validate_json(path.read_text()))],
                      isolation=isolation)
        asyncio.run(run(job, Services.create({}), events.append))
        heard[isolation] = progress_by_case(events)
    expected = [("turn", 1, 2), ("turn", 2, 2), ("planned", 2), ("judge", 1, 2), ("judge", 2, 2),
                ("finished",)]
    assert heard["none"] == {("a", 0): expected, ("b", 0): expected}
    assert heard["process"] == heard["none"]


def test_judge_calls_are_counted_per_case_run_and_plans_grow() -> None:
    event = JudgeCallDone(model="m", model_calls=1, prompt_tokens=5, samples=1, cached=False)
    assert tag(event) is event  # outside a case run's scoring: as it was
    plan(3)  # nothing to count it in: nothing happens
    planned: list[object] = []
    with judging("s", "c", 2, planned.append) as tally:
        plan(2)
        first, second = tag(event), tag(event)
        third = tag(event)  # a cross-check nobody planned: the plan grows with it
    assert (first.eval_id, first.run_index, first.call, first.calls) == ("c", 2, 1, 2)
    assert (second.call, second.calls, third.call, third.calls) == (2, 2, 3, 3)
    assert tally.answered == 3 and first.seconds is not None and first.seconds >= 0
    assert planned == [JudgeCallsPlanned("s", "c", 2, 2)]


@pytest.mark.anyio
async def test_concurrent_case_runs_keep_their_own_tallies() -> None:
    import anyio

    event = JudgeCallDone(model="m", model_calls=1, prompt_tokens=5, samples=1, cached=False)
    seen: list[JudgeCallDone] = []

    async def case(eval_id: str, questions: int) -> None:
        with judging("s", eval_id, 0):
            plan(questions)
            for _ in range(questions):
                await anyio.sleep(0.01)
                seen.append(tag(event))

    async with anyio.create_task_group() as tg:
        tg.start_soon(case, "x", 2)
        tg.start_soon(case, "y", 3)
    assert sorted((e.eval_id, e.call, e.calls) for e in seen) == [
        ("x", 1, 2), ("x", 2, 2), ("y", 1, 3), ("y", 2, 3), ("y", 3, 3)]
