"""`agenteval eval_set record --rebuild`: a set's static cases re-recorded from a live run (the
counterpart of `adk test --rebuild`); scenario cases stay; a failing agent writes nothing."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agenteval.cli.main import cli
from agenteval.datasets import load_eval_set

AGENT = '''
from pathlib import Path

STATUS = Path(__file__).with_name("status.txt")


def root_agent(text, state):
    """Looks orders up."""
    status = STATUS.read_text().strip()
    if status == "broken":
        raise RuntimeError("the order service is down")
    return {"response": "order " + text + " is " + status,
            "tool_calls": [{"name": "lookup", "args": {"order": text}, "response": {"status": status}}]}
'''


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT)
    (folder / "status.txt").write_text("shipped")
    return folder


def _cli(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_rebuild_rerecords_the_static_cases_and_keeps_the_rest(shop: Path, tmp_path: Path) -> None:
    assert _cli("eval_set", "create", shop, "orders").exit_code == 0
    assert _cli("eval_set", "record", shop, "orders", "--prompt", "A1", "--prompt", "B2",
                "--eval_id", "two").exit_code == 0
    assert _cli("eval_set", "record", shop, "orders", "--prompt", "C3", "--eval_id", "one").exit_code == 0
    scenarios = tmp_path / "scenarios.json"
    scenarios.write_text(json.dumps({"scenarios": [
        {"starting_prompt": "Where is order 7?", "conversation_plan": "Ask for order 7."}]}))
    assert _cli("eval_set", "add_eval_case", shop, "orders", "--scenarios_file", scenarios).exit_code == 0
    path = shop / "orders.evalset.json"
    before = load_eval_set(path)
    (shop / "status.txt").write_text("delivered")  # the agent changed: the expectations are stale
    assert _cli("eval", shop, f"{path}:two,one", "--no_history").exit_code == 1

    r = _cli("eval_set", "record", shop, "orders", "--rebuild")
    assert r.exit_code == 0, r.output
    assert "Re-recorded 2 case(s) of orders from a live run; 1 conversation-scenario case(s) left" in r.output
    after = load_eval_set(path)
    assert [c.eval_id for c in after.eval_cases] == [c.eval_id for c in before.eval_cases]
    two = after.case("two")
    assert two is not None and two.conversation is not None
    assert [t.final_response.text() if t.final_response else None for t in two.conversation] == [
        "order A1 is delivered", "order B2 is delivered"]
    assert [t.user_content.text() for t in two.conversation] == ["A1", "B2"]
    assert two.conversation[1].tool_responses()[0].response == {"status": "delivered"}
    assert after.eval_cases[2] == before.eval_cases[2]  # the scenario case, untouched
    assert _cli("eval", shop, f"{path}:two,one", "--no_history").exit_code == 0

    (shop / "status.txt").write_text("returned")  # one case only
    assert _cli("eval_set", "record", shop, "orders", "--rebuild", "--eval_id", "one").exit_code == 0
    again = load_eval_set(path)
    assert again.case("two") == after.case("two")
    one = again.case("one")
    assert one is not None and one.conversation is not None
    assert one.conversation[0].final_response is not None
    assert one.conversation[0].final_response.text() == "order C3 is returned"


def test_rebuild_writes_nothing_when_the_agent_fails_or_the_input_is_bad(shop: Path) -> None:
    assert _cli("eval_set", "create", shop, "orders").exit_code == 0
    assert _cli("eval_set", "record", shop, "orders", "--prompt", "A1", "--eval_id", "one").exit_code == 0
    path = shop / "orders.evalset.json"
    written = path.read_bytes()
    (shop / "status.txt").write_text("broken")
    r = _cli("eval_set", "record", shop, "orders", "--rebuild")
    assert r.exit_code == 2 and "the agent failed on case 'one'" in r.output
    assert path.read_bytes() == written
    r = _cli("eval_set", "record", shop, "orders", "--rebuild", "--prompt", "X")
    assert r.exit_code == 2 and "give no --prompt" in r.output
    r = _cli("eval_set", "record", shop, "orders", "--rebuild", "--eval_id", "nope")
    assert r.exit_code == 2 and "no case 'nope'" in r.output
    r = _cli("eval_set", "record", shop, "missing", "--rebuild")
    assert r.exit_code == 2 and "no such eval set" in r.output
    assert path.read_bytes() == written
