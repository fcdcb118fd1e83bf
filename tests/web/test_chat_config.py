"""Chat turns of an ADK agent record the calls inside its AgentTools as the agent folder's
test_config.json says (`inner_tool_calls`), as `agenteval eval` records them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agenteval.store.sessions import ChatSession
from agenteval.web.agents import LoadedAgent
from agenteval.web.chat import ChatService
from agenteval.web.views import turn_json
from tests.agents.test_adk_tree import agent_tool_app

pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated in favor of Workflow:DeprecationWarning",
                                        "ignore:The `plugins` argument is deprecated:DeprecationWarning")


def _calls(folder: Path) -> list[tuple[str, str]]:
    agent = LoadedAgent("travel", folder, agent_tool_app(), "adk")
    session = ChatSession(id="s1", app_name="travel", user_id="u", created=0.0)

    async def go() -> list[tuple[str, str]]:
        chat = ChatService({})
        try:
            turn = await chat.send(agent, session, "Plan my Paris trip")
        finally:
            await chat.close()
        assert turn.error is None, turn.error
        (tree,) = turn_json(turn).agents  # the turn's agent tree, for the chat's trace tab
        (root,) = tree.roots
        assert (root.agent, [(c.agent, c.via) for c in root.children]) == (
            "travel_agent", [("research_agent", "tool")])
        return [(c.name, str(c.args)) for c in turn.invocation.tool_calls()]

    return asyncio.run(go())


def test_inner_tool_calls_follow_the_agents_test_config(tmp_path: Path) -> None:
    outer = ("research_agent", "{'request': 'Paris trip'}")
    inner = [("search_flights", "{'dest': 'Paris'}"), ("get_hotel_price", "{'city': 'Paris'}")]
    assert _calls(tmp_path) == [outer, *inner]  # no test_config.json: the default, include
    (tmp_path / "test_config.json").write_text('{"criteria": {}, "inner_tool_calls": "exclude"}')
    assert _calls(tmp_path) == [outer]  # as adk eval records them


def test_a_test_config_that_does_not_load_fails_the_turn_naming_it(tmp_path: Path) -> None:
    (tmp_path / "test_config.json").write_text('{"criteria": {}, "inner_tool_calls": "sometimes"}')
    agent = LoadedAgent("travel", tmp_path, agent_tool_app(), "adk")
    session = ChatSession(id="s1", app_name="travel", user_id="u", created=0.0)
    turn = asyncio.run(ChatService({}).send(agent, session, "hi"))
    assert turn.error is not None and "test_config.json" in turn.error and "inner_tool_calls" in turn.error
