"""`--mock_tools` on the Ray executor: the workers' adapters answer tool calls from the eval set
as the local executor's do (a callable agent using the `tools` hook, on a real local cluster)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.schema import (
    Content,
    EvalCase,
    EvalSet,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
)

AGENT = '''
from pathlib import Path

RAN = Path(__file__).with_name("ran.log")


def lookup(city):
    with RAN.open("a") as f:
        f.write(city + "\\n")
    return {"temp": 30}


def root_agent(text, tools):
    weather = tools.call("lookup", {"city": text}, lookup)
    return f"{text}: {weather['temp']} C"
'''


def _case(i: int) -> EvalCase:
    city = f"city{i}"
    return EvalCase(eval_id=f"c{i}", conversation=[Invocation(
        user_content=Content.from_text(city, role="user"), final_response=Content.from_text(f"{city}: 12 C"),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(id="e0", name="lookup", args={"city": city})],
            tool_responses=[FunctionResponse(id="e0", name="lookup", response={"temp": 12})]))])


def test_ray_workers_serve_tool_calls_from_the_eval_set(ray_cluster: Any, tmp_path: Path) -> None:
    agent = tmp_path / "weather"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    path = agent / "weather.evalset.json"
    path.write_text(EvalSet(eval_set_id="weather", eval_cases=[_case(i) for i in range(4)])
                    .model_dump_json(exclude_none=True))
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--executor", "ray", "--mock_tools",
                                 "expected", "--no_history", "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert not (agent / "ran.log").exists()  # no worker ran the tool
    doc = json.loads(out.read_text())
    served = [e.get("served") for c in doc["eval_case_results"]
              for inv in c["eval_metric_result_per_invocation"]
              for e in inv["actual_invocation"]["intermediate_data"]["invocation_events"] if e.get("served")]
    assert served == [["expected"]] * 4
