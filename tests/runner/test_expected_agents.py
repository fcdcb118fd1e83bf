"""An expected author that is not an agent of the app is refused before the run, naming the file
and the field (it failed the case at run time, exit 1, after the agent had run)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.agents import Agent
from agenteval.cli.main import cli
from agenteval.errors import DataError
from agenteval.models import ScriptedModel
from agenteval.runner import EvalJob, Selection, Services, run
from agenteval.runner.selection import SetRecord, StreamedCases
from agenteval.schema import EvalConfig, EvalSet

FIELD = "eval_cases[1].conversation[0].intermediate_data.invocation_events[{k}].author"


def _event(author: str, name: str = "lookup", **args: Any) -> dict[str, Any]:
    return {"author": author, "content": {"role": "model", "parts": [
        {"function_call": {"name": name, "args": args}}]}}


def _set(*authors: str) -> dict[str, Any]:
    """Two cases: one without events, then one whose expected turn has an event per author."""
    def case(eval_id: str, events: list[dict[str, Any]] | None) -> dict[str, Any]:
        turn: dict[str, Any] = {"invocation_id": "t",
                                "user_content": {"role": "user", "parts": [{"text": "hi"}]},
                                "final_response": {"role": "model", "parts": [{"text": "ok"}]}}
        if events is not None:
            turn["intermediate_data"] = {"invocation_events": events}
        return {"eval_id": eval_id, "conversation": [turn]}
    return {"eval_set_id": "s", "eval_cases": [case("plain", None),
                                               case("named", [_event(a) for a in authors])]}


def _job(data: dict[str, Any], criteria: dict[str, Any], path: Path) -> EvalJob:
    path.write_text(json.dumps(data))
    agent = Agent("shop", ScriptedModel(["ok"] * 10))
    return EvalJob(agent=agent, selections=[Selection(path, EvalSet.model_validate(data))],
                   config=EvalConfig.model_validate({"criteria": criteria}))


@pytest.mark.parametrize(("per_agent", "authors", "refused_at"), [
    (True, ["shpo"], 0),  # per_agent: every author counts
    (None, ["shop", "shpo"], 1),  # auto, two authors: matched per agent
    (None, ["shpo"], None),  # auto, one author: matched flat, as ADK does; the author is not read
    (False, ["shop", "shpo"], None),  # flat: authors are not read
])
def test_an_expected_author_that_is_no_agent_of_the_app_is_refused_before_the_run(
        tmp_path: Path, per_agent: bool | None, authors: list[str], refused_at: int | None) -> None:
    criteria = {"tool_trajectory_avg_score": {"threshold": 1.0, "per_agent": per_agent}}
    job = _job(_set(*authors), criteria, tmp_path / "s.evalset.json")
    if refused_at is None:
        asyncio.run(run(job, Services.create({})))  # runs (the case fails: no call was made)
        return
    with pytest.raises(DataError) as e:
        asyncio.run(run(job, Services.create({})))
    assert e.value.file == str(tmp_path / "s.evalset.json")
    assert e.value.path == FIELD.format(k=refused_at)
    said = "'shpo' is not an agent of the app (its agents: shop); tool_trajectory_avg_score reads it"
    assert said in e.value.message


def test_a_handoff_to_no_agent_of_the_app_is_refused_where_a_turns_handler_is_read(tmp_path: Path) -> None:
    data = _set("shop")
    data["eval_cases"][1]["conversation"][0]["intermediate_data"]["invocation_events"].append(
        _event("shop", "transfer_to_agent", agent_name="helpdesk"))
    job = _job(data, {"turn_agent_match_v1": 1.0}, tmp_path / "s.evalset.json")
    with pytest.raises(DataError) as e:
        asyncio.run(run(job, Services.create({})))
    assert e.value.path == ("eval_cases[1].conversation[0].intermediate_data.invocation_events[1]"
                            ".content.parts[0].function_call.args.agent_name")
    assert "'helpdesk' is not an agent of the app" in e.value.message


def test_a_streamed_set_and_its_journaled_record_keep_the_names(tmp_path: Path) -> None:
    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps(_set("shop", "shpo")))
    _, streamed = StreamedCases.read(path)
    assert streamed.agents.several == {"shop": FIELD.format(k=0), "shpo": FIELD.format(k=1)}
    assert streamed.record is not None
    again = SetRecord.from_json(json.loads(json.dumps(streamed.record.to_json())))
    assert again is not None and again.agents == streamed.agents
    _, trusted = StreamedCases.read(path, {again.sha256: again})
    assert trusted.trusted and trusted.agents == streamed.agents


def test_eval_refuses_it_exit_2_naming_file_and_field_nothing_recorded(tmp_path: Path) -> None:
    agent = tmp_path / "shop"
    agent.mkdir()
    (agent / "agent.py").write_text("from agenteval.agents import Agent\n"
                                    "from agenteval.models import ScriptedModel\n"
                                    "root_agent = Agent('shop', ScriptedModel(['ok'] * 10))\n")
    (agent / "s.evalset.json").write_text(json.dumps(_set("shop", "shpo")))
    r = CliRunner().invoke(cli, ["eval", str(agent), "s", "--no_cache"], env={"COLUMNS": "400"})
    assert r.exit_code == 2, r.output
    assert f"{agent / 's.evalset.json'}: {FIELD.format(k=1)}: 'shpo' is not an agent of the app" in r.output
    assert not (agent / ".agenteval" / "eval_history").exists() or \
        not list((agent / ".agenteval" / "eval_history").iterdir())


def test_a_callable_whose_agents_are_not_known_is_not_checked(tmp_path: Path) -> None:
    path = tmp_path / "s.evalset.json"
    data = _set("shop", "shpo")
    path.write_text(json.dumps(data))
    job = EvalJob(agent=lambda text: "ok", selections=[Selection(path, EvalSet.model_validate(data))],
                  config=EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": 1.0}}))
    asyncio.run(run(job, Services.create({})))
