"""`agenteval eval_set`: create, add_eval_case, record, generate_eval_cases; what they write
loads in agenteval and in ADK."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.datasets import load_eval_set
from tests.fake_server import FakeServer, Step

AGENT = '''
def root_agent(text, state):
    """Looks orders up."""
    return {"response": "order " + text + " is shipped",
            "tool_calls": [{"name": "lookup", "args": {"order": text}, "response": {"status": "shipped"}}]}
'''


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT)
    return folder


def _cli(*args: str | Path) -> str:
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.output


def _adk_loads(path: Path) -> None:
    adk = pytest.importorskip("google.adk.evaluation.eval_set")
    adk.EvalSet.model_validate_json(path.read_text())


def test_record_and_generate_refuse_a_missing_set_before_anything_runs(agent: Path) -> None:
    # As add_eval_case (and ADK's): a mistyped set id makes no new set.
    (agent / "agent.py").write_text(AGENT + "\nraise SystemExit('the agent was loaded')\n")
    for args in (["record", str(agent), "ordrs", "--prompt", "x"],
                 ["generate_eval_cases", str(agent), "ordrs", "--model", "bogus"]):
        r = CliRunner().invoke(cli, ["eval_set", *args])
        assert r.exit_code == 2 and "ordrs.evalset.json: no such eval set" in r.output, r.output
        assert "agenteval eval_set create" in r.output
    assert not (agent / "ordrs.evalset.json").exists()


def test_create_add_and_record(agent: Path, tmp_path: Path) -> None:
    assert "Created" in _cli("eval_set", "create", agent, "orders")
    r = CliRunner().invoke(cli, ["eval_set", "create", str(agent), "orders"])
    assert r.exit_code == 2 and "already exists" in r.output
    assert CliRunner().invoke(cli, ["eval_set", "create", str(agent), "bad/id"]).exit_code == 2
    scenarios = tmp_path / "scenarios.json"
    scenarios.write_text(json.dumps({"scenarios": [
        {"starting_prompt": "Where is order 7?", "conversation_plan": "Ask for order 7, then thank."}]}))
    session = tmp_path / "session.json"
    session.write_text(json.dumps({"app_name": "shop", "user_id": "u", "state": {"tier": "gold"}}))
    assert "Added 1 scenario case(s)" in _cli("eval_set", "add_eval_case", agent, "orders",
                                             "--scenarios_file", scenarios, "--session_input_file", session)
    again = _cli("eval_set", "add_eval_case", agent, "orders", "--scenarios_file", scenarios)
    assert "1 already there" in again
    out = _cli("eval_set", "record", agent, "orders", "--prompt", "A1", "--prompt", "B2", "--eval_id", "two")
    assert "Recorded case two (2 turn(s))" in out
    path = agent / "orders.evalset.json"
    s = load_eval_set(path)
    scenario_case, recorded = s.eval_cases
    assert len(scenario_case.eval_id) == 8 and scenario_case.session_input is not None
    assert recorded.conversation is not None and len(recorded.conversation) == 2
    assert recorded.conversation[1].final_response is not None
    assert recorded.conversation[1].final_response.text() == "order B2 is shipped"
    assert [c.args for c in recorded.conversation[1].tool_calls()] == [{"order": "B2"}]
    _adk_loads(path)
    # the recorded case passes when the agent is evaluated on it again
    r = CliRunner().invoke(cli, ["eval", str(agent), f"{path}:two", "--no_history"])
    assert r.exit_code == 0, r.output


def test_generate_eval_cases_names_the_option_of_an_unknown_model(agent: Path) -> None:
    _cli("eval_set", "create", agent, "gen")
    r = CliRunner().invoke(cli, ["eval_set", "generate_eval_cases", str(agent), "gen", "--count", "1",
                                 "--model", "bogus"])
    assert r.exit_code == 2 and "error: --model: unknown model 'bogus'" in r.output, r.output
    assert load_eval_set(agent / "gen.evalset.json").eval_cases == []


def test_generate_eval_cases_keeps_valid_distinct_scenarios(agent: Path, server: FakeServer) -> None:
    def reply(content: str) -> Step:
        return Step(200, {"model": "w", "usage": {"prompt_tokens": 9, "completion_tokens": 9},
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": content}}]})

    def scenario(prompt: str) -> str:
        return json.dumps({"starting_prompt": prompt, "conversation_plan": "Ask, then confirm and stop.",
                           "user_persona": "NOVICE"})

    server.steps = [reply(scenario("Where is my order 12?")), reply("not json at all"),
                    reply(scenario("where is my order 12")), reply(scenario("Cancel order 9 please")),
                    reply(scenario("Can I return a broken kettle?"))]
    _cli("eval_set", "create", agent, "gen")
    out = _cli("eval_set", "generate_eval_cases", agent, "gen", "--count", "3", "--model",
               f"openai-compat:w@{server.base_url}")
    assert "Generated 3 scenario case(s) in gen from 5 attempt(s)" in out
    assert "4 valid as written, 1 near-duplicate(s) dropped, 1 invalid" in out
    path = agent / "gen.evalset.json"
    prompts = [c.conversation_scenario.starting_prompt for c in load_eval_set(path).eval_cases
               if c.conversation_scenario]
    assert prompts == ["Where is my order 12?", "Cancel order 9 please", "Can I return a broken kettle?"]
    assert "Looks orders up." in server.received[0]["messages"][1]["content"]  # the agent was described
    _adk_loads(path)


def test_add_eval_case_refuses_a_missing_set_and_an_empty_scenarios_file(agent: Path, tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios.json"
    scenarios.write_text(json.dumps({"scenarios": [
        {"starting_prompt": "Where is order 7?", "conversation_plan": "Ask for order 7, then thank."}]}))
    # As `adk eval_set add_eval_case`: the set must exist (a typo in its id makes no new set).
    r = CliRunner().invoke(cli, ["eval_set", "add_eval_case", str(agent), "ordrs", "--scenarios_file",
                                 str(scenarios)])
    assert r.exit_code == 2 and "ordrs.evalset.json: no such eval set" in r.output
    assert "agenteval eval_set create" in r.output and not (agent / "ordrs.evalset.json").exists()
    _cli("eval_set", "create", agent, "orders")
    before = (agent / "orders.evalset.json").read_bytes()
    scenarios.write_text(json.dumps({"scenarios": []}))
    r = CliRunner().invoke(cli, ["eval_set", "add_eval_case", str(agent), "orders", "--scenarios_file",
                                 str(scenarios)])
    assert r.exit_code == 2 and "scenarios.json: scenarios: empty: nothing to add" in r.output
    scenarios.write_text(json.dumps({"scenarios": [{"starting_prompt": " ", "conversation_plan": "Ask."}]}))
    r = CliRunner().invoke(cli, ["eval_set", "add_eval_case", str(agent), "orders", "--scenarios_file",
                                 str(scenarios)])
    assert r.exit_code == 2 and "scenarios.json: scenarios[0].starting_prompt: empty" in r.output, r.output
    # A blank plan, and a key beside `scenarios` (dropped unread), were accepted.
    for content, where in (({"scenarios": [{"starting_prompt": "Hi", "conversation_plan": " \n"}]},
                            "scenarios[0].conversation_plan: empty"),
                           ({"scenarios": [{"starting_prompt": "Hi", "conversation_plan": "Ask."}],
                             "session_input": {"app_name": "shop", "user_id": "u"}},
                            "session_input: unknown key")):
        scenarios.write_text(json.dumps(content))
        r = CliRunner().invoke(cli, ["eval_set", "add_eval_case", str(agent), "orders", "--scenarios_file",
                                     str(scenarios)])
        assert r.exit_code == 2 and f"scenarios.json: {where}" in r.output, r.output
    # An unknown persona id would fail every run of the case ("unknown user persona"): refused here.
    scenarios.write_text(json.dumps({"scenarios": [{"starting_prompt": "Hi", "conversation_plan": "Ask.",
                                                    "user_persona": "ALIEN"}]}))
    r = CliRunner().invoke(cli, ["eval_set", "add_eval_case", str(agent), "orders", "--scenarios_file",
                                 str(scenarios)])
    assert r.exit_code == 2, r.output
    assert "scenarios.json: scenarios[0].user_persona: unknown user persona 'ALIEN'" in r.output
    assert (agent / "orders.evalset.json").read_bytes() == before


def test_record_from_an_empty_or_undecodable_prompts_file_names_the_file(agent: Path, tmp_path: Path) -> None:
    _cli("eval_set", "create", agent, "orders")
    before = (agent / "orders.evalset.json").read_bytes()
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    r = CliRunner().invoke(cli, ["eval_set", "record", str(agent), "orders", "--prompts_file", str(empty)])
    assert r.exit_code == 2 and f"{empty}: --prompts_file: no user message" in r.output, r.output
    empty.write_bytes(b"\xff\xfe hi\n")
    r = CliRunner().invoke(cli, ["eval_set", "record", str(agent), "orders", "--prompts_file", str(empty)])
    assert r.exit_code == 2 and f"{empty}: --prompts_file: not UTF-8 text" in r.output, r.output
    assert (agent / "orders.evalset.json").read_bytes() == before


@pytest.mark.parametrize(("args", "message"), [
    (["--prompt", "x", "--eval_id", ""], "--eval_id: empty"),
    (["--prompt", "x", "--prompt", " "], "--prompt: an empty message"),
    (["--prompt", "x", "--eval_id", "o1"], "orders.evalset.json: eval_cases: already has a case 'o1'"),
    (["--prompt", "x", "--eval_id", "a:b"], "--eval_id: 'a:b' holds ',' or ':'"),
    (["--prompt", "same"], "orders.evalset.json: eval_cases: already has a case 'recorded_"),
])
def test_record_refuses_before_the_agent_runs(agent: Path, args: list[str], message: str) -> None:
    _cli("eval_set", "create", agent, "orders")
    _cli("eval_set", "record", agent, "orders", "--prompt", "same")
    _cli("eval_set", "record", agent, "orders", "--prompt", "a", "--eval_id", "o1")
    before = (agent / "orders.evalset.json").read_bytes()
    (agent / "agent.py").write_text(AGENT + "\nraise SystemExit('the agent was loaded')\n")
    r = CliRunner().invoke(cli, ["eval_set", "record", str(agent), "orders", *args])
    assert r.exit_code == 2 and message in r.output, r.output
    assert (agent / "orders.evalset.json").read_bytes() == before


def test_a_mistyped_key_in_the_session_input_file_is_refused(agent: Path, tmp_path: Path) -> None:
    # `stat` for `state` kept every added case's starting state empty, without a word.
    _cli("eval_set", "create", agent, "orders")
    before = (agent / "orders.evalset.json").read_bytes()
    scenarios = tmp_path / "scenarios.json"
    scenarios.write_text(json.dumps({"scenarios": [{"starting_prompt": "Hi", "conversation_plan": "Ask."}]}))
    session = tmp_path / "session.json"
    session.write_text(json.dumps({"appName": "shop", "userId": "u", "stat": {"tier": "gold"}}))
    for command in ("add_eval_case", "generate_eval_cases"):
        extra = ["--scenarios_file", str(scenarios)] if command == "add_eval_case" else ["--model", "bogus"]
        r = CliRunner().invoke(cli, ["eval_set", command, str(agent), "orders", *extra,
                                     "--session_input_file", str(session)])
        assert r.exit_code == 2, r.output
        assert "session.json: stat: unknown key" in r.output, r.output
    assert (agent / "orders.evalset.json").read_bytes() == before
    # ADK's camelCase keys are the fields themselves, not unknown keys.
    session.write_text(json.dumps({"appName": "shop", "userId": "u", "sessionId": "s1", "state": {"t": 1}}))
    _cli("eval_set", "add_eval_case", agent, "orders", "--scenarios_file", scenarios,
         "--session_input_file", session)
    (case,) = load_eval_set(agent / "orders.evalset.json").eval_cases
    assert case.session_input is not None and case.session_input.state == {"t": 1}


def test_record_and_generate_take_the_agents_folder_as_create_does(agent: Path) -> None:
    # Given agent.py, they looked for AGENT/agent.py/ID.evalset.json and told the user to make it
    # with `eval_set create agent.py ID`, which refuses a file.
    _cli("eval_set", "create", agent, "orders")
    for args in (["record", str(agent / "agent.py"), "orders", "--prompt", "x"],
                 ["generate_eval_cases", str(agent / "agent.py"), "orders", "--model", "bogus"]):
        r = CliRunner().invoke(cli, ["eval_set", *args])
        assert r.exit_code == 2 and "is a file" in r.output, r.output
        assert "eval_set create" not in r.output


@pytest.mark.parametrize("command", [["record", "--prompt", "x"], ["record", "--rebuild"], ["add_eval_case"]])
def test_a_legacy_list_under_the_sets_name_is_refused_not_rewritten(agent: Path, tmp_path: Path,
                                                                     command: list[str]) -> None:
    legacy = Path(__file__).resolve().parents[1] / "fixtures" / "adk" / "home_automation_agent"
    before = (legacy / "simple_test2.test.json").read_bytes()
    (agent / "orders.evalset.json").write_bytes(before)
    scenarios = tmp_path / "scenarios.json"
    scenarios.write_text(json.dumps({"scenarios": [{"starting_prompt": "Where is order 7?",
                                                    "conversation_plan": "Ask for order 7, then thank."}]}))
    extra = ["--scenarios_file", str(scenarios)] if command == ["add_eval_case"] else command[1:]
    (agent / "agent.py").write_text(AGENT + "\nraise SystemExit('the agent was loaded')\n")
    r = CliRunner().invoke(cli, ["eval_set", command[0], str(agent), "orders", *extra])
    assert r.exit_code == 2 and "orders.evalset.json: a legacy test file" in r.output, r.output
    assert (agent / "orders.evalset.json").read_bytes() == before
