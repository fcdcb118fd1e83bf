"""`agenteval eval --replay RUN`: a recorded run replayed against a counting stub server makes no
model request and runs no tool, and gives the same verdicts; a changed instruction or user turn
is reported as a divergence at its step; `--replay_then live` carries on live."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agenteval.cli.main import cli
from agenteval.schema import EvalSetResult
from tests.fake_server import FakeServer, Step, reply

AGENT = '''
from pathlib import Path

from agenteval.agents import Agent

RAN = Path(__file__).with_name("tool_runs.txt")


def lookup(query: str) -> dict:
    """Looks a query up."""
    with RAN.open("a") as f:
        f.write(query + "\\n")
    return {"answer": "42 for " + query}


root_agent = Agent(name="shop", model="openai-compat:stub@BASE", instruction="INSTRUCTION",
                   tools=[lookup])
'''


def stub(body: dict[str, Any]) -> Step:
    """The bench stub's rule: a tool call first, the answer once the tool's result is back."""
    last = body["messages"][-1]["content"]
    if "Tool lookup returned:" in last:
        return Step(body=reply("Done: the lookup tool answered your request."))
    query = last.split()[-1]
    call = {"tool_calls": [{"name": "lookup", "arguments": {"query": query}}]}
    return Step(body=reply(json.dumps(call)))


def _turn(text: str) -> dict[str, Any]:
    query = text.split()[-1]
    return {"invocation_id": "", "user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model",
                               "parts": [{"text": "Done: the lookup tool answered your request."}]},
            "intermediate_data": {"tool_uses": [{"name": "lookup", "args": {"query": query}}]}}


def _write_agent(folder: Path, server: FakeServer, instruction: str) -> None:
    text = AGENT.replace("BASE", server.base_url).replace("INSTRUCTION", instruction)
    (folder / "agent.py").write_text(text)


@pytest.fixture
def shop(tmp_path: Path, server: FakeServer) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    _write_agent(folder, server, "You look things up.")
    cases = [{"eval_id": f"case{i}", "conversation": [_turn(f"find item{i}"), _turn(f"and then thing{i}")]}
             for i in range(3)]
    (folder / "shop.evalset.json").write_text(json.dumps({"eval_set_id": "shop", "eval_cases": cases}))
    server.respond = stub
    return folder


def _eval(shop: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["eval", str(shop), str(shop / "shop.evalset.json"), *args])


def _said(r: Result) -> str:
    """The console output with its line wrapping undone."""
    return " ".join(r.output.split())


def _doc(path: Path) -> EvalSetResult:
    return EvalSetResult.model_validate_json(path.read_text())


def _verdicts(doc: EvalSetResult) -> list[tuple[str, str, list[tuple[str, float | None]]]]:
    """Every case's status and scores but its measured seconds (different in any two runs)."""
    return [(r.eval_id, str(r.final_eval_status),
             [(m.metric_name, m.score) for m in r.overall_eval_metric_results
              if m.metric_name != "invocation_duration_v1"])
            for r in doc.eval_case_results]


def _recorded(shop: Path, server: FakeServer, tmp_path: Path) -> Path:
    recorded = tmp_path / "recorded.json"
    (shop / "tool_runs.txt").unlink(missing_ok=True)
    server.received.clear()
    r = _eval(shop, "--output", str(recorded))
    assert r.exit_code == 0, r.output
    assert len(server.received) == 3 * 2 * 2  # 3 cases x 2 turns x (tool call + answer)
    assert len((shop / "tool_runs.txt").read_text().split()) == 6
    server.received.clear()
    return recorded


def test_a_replay_makes_no_model_request_runs_no_tool_and_gives_the_same_verdicts(
        shop: Path, server: FakeServer, tmp_path: Path) -> None:
    recorded = _recorded(shop, server, tmp_path)
    for ref in (str(recorded), "latest"):  # a result document, or a run of the history
        replayed = tmp_path / "replayed.json"
        r = _eval(shop, "--replay", ref, "--output", str(replayed))
        assert r.exit_code == 0, r.output
        assert server.received == []
        assert len((shop / "tool_runs.txt").read_text().split()) == 6  # the tool never ran again
        assert "12 model replies and 6 tool results served from the recording, 0 diverged" in _said(r)
        before, after = _doc(recorded), _doc(replayed)
        assert _verdicts(after) == _verdicts(before)
        assert [r.error_message for r in after.eval_case_results] == [None] * 3
        assert after.run is not None and after.run.replay is not None
        assert after.run.replay.source == ref and after.run.replay.then == "stop"
        assert before.run is not None and before.run.replay is None
        # the replayed run's trace is a recording too: replaying it gives the same again
        assert after.eval_case_results[0].trace is not None


def test_a_changed_instruction_diverges_at_the_first_model_call(shop: Path, server: FakeServer,
                                                                 tmp_path: Path) -> None:
    recorded = _recorded(shop, server, tmp_path)
    _write_agent(shop, server, "You look things up, politely.")
    replayed = tmp_path / "replayed.json"
    r = _eval(shop, "--replay", str(recorded), "--output", str(replayed), "--no_history")
    assert r.exit_code == 1
    assert server.received == []
    errors = [c.error_message or "" for c in _doc(replayed).eval_case_results]
    assert all("replay diverged in case" in e and "invocation 0, step 0 (model call by agent 'shop'): "
               "the system instruction differs" in e for e in errors), errors
    assert "politely" in errors[0] and "3 diverged" in _said(r)


def test_a_changed_second_turn_diverges_there(shop: Path, server: FakeServer, tmp_path: Path) -> None:
    recorded = _recorded(shop, server, tmp_path)
    path = shop / "shop.evalset.json"
    data = json.loads(path.read_text())
    data["eval_cases"][1]["conversation"][1] = _turn("and then other1")
    path.write_text(json.dumps(data))
    replayed = tmp_path / "replayed.json"
    r = _eval(shop, "--replay", str(recorded), "--output", str(replayed), "--no_history")
    assert r.exit_code == 1 and server.received == []
    results = {c.eval_id: c for c in _doc(replayed).eval_case_results}
    assert results["case0"].error_message is None and results["case2"].error_message is None
    error = results["case1"].error_message or ""
    assert ("case 'case1' (run 0), invocation 1, step 0 (model call by agent 'shop'): message 4 (user) "
            "differs") in error
    assert "other1" in error
    assert error.endswith("\"and then other1\"}'")  # no traceback location: the divergence as it is


def test_replay_then_live_carries_on_with_the_real_model_and_tools(shop: Path, server: FakeServer,
                                                                   tmp_path: Path) -> None:
    recorded = _recorded(shop, server, tmp_path)
    path = shop / "shop.evalset.json"
    data = json.loads(path.read_text())
    data["eval_cases"][1]["conversation"][1] = _turn("and then other1")
    path.write_text(json.dumps(data))
    replayed = tmp_path / "replayed.json"
    r = _eval(shop, "--replay", str(recorded), "--replay_then", "live", "--output", str(replayed),
              "--no_history")
    assert r.exit_code == 0, r.output
    assert len(server.received) == 2  # case1's second turn only: its tool call and its answer
    assert (shop / "tool_runs.txt").read_text().split()[-1] == "other1"
    assert "carried on live" in _said(r)
    results = {c.eval_id: c for c in _doc(replayed).eval_case_results}
    assert results["case1"].error_message is None
    assert any("invocation 1, step 0" in w and "carried on live" in w for w in results["case1"].warnings)
    assert results["case0"].warnings == []
    doc = _doc(replayed)
    assert doc.run is not None and doc.run.replay is not None and doc.run.replay.then == "live"


def test_replay_refuses_a_run_without_traces_and_a_callable_agent(shop: Path, server: FakeServer,
                                                                  tmp_path: Path) -> None:
    untraced = tmp_path / "untraced.json"
    assert _eval(shop, "--no_traces", "--output", str(untraced), "--no_history").exit_code == 0
    server.received.clear()
    r = _eval(shop, "--replay", str(untraced), "--no_history")
    assert r.exit_code == 2 and "kept no traces" in _said(r) and server.received == []
    recorded = _recorded(shop, server, tmp_path)
    (shop / "agent.py").write_text("def root_agent(text, state):\n    return 'hi'\n")
    r = _eval(shop, "--replay", str(recorded), "--no_history")
    assert r.exit_code == 2 and "calls its models and tools itself" in _said(r)


@pytest.mark.parametrize("given", [["--mock_tools", "expected"], ["--mock_tools", "live"],
                                   ["--mock_tools", "expected", "--mock_tools_strict"],
                                   ["--mock_tools_strict"]])
def test_mock_tools_on_the_command_line_with_replay_is_refused(shop: Path, server: FakeServer,
                                                               given: list[str]) -> None:
    """The recording answers a replay's tool calls: the option given with it was ignored, exit 0."""
    r = _eval(shop, "--replay", "latest", *given, "--no_history")
    assert r.exit_code == 2, r.output
    assert f"{given[0]} does not apply with --replay (the recording answers the tool calls;" in _said(r)
    assert server.received == []
