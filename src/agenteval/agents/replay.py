"""Agents set up to replay a recorded run (`agenteval eval --replay RUN`; see `models.replay`).

* An agenteval `Agent`: its model is wrapped in a `ReplayModel` and each tool in a function
  of the same name, signature and docstring that serves the recorded result (the tool's own
  code runs only when the replay has gone live).
* A google-adk agent: run as an ADK `App` with a plugin (`adk_replay.ReplayPlugin`) whose
  `before_model_callback` and `before_tool_callback` answer from the recording, so neither
  ADK's model nor the tools are called; nothing of the user's agent is patched.

Plain callables and other adapters call their models and tools themselves, out of agenteval's
reach: they cannot be replayed (`AgentLoadError`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

import anyio

from agenteval.agents.builtin import Agent
from agenteval.agents.loader import AgentLoadError, is_adk_agent
from agenteval.agents.tools import CONTEXT_PARAM
from agenteval.models.base import LLM
from agenteval.models.replay import ReplayModel, current_cassette

__all__ = ["for_replay", "replayed_tool"]


def replayed_tool(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` as a tool whose calls, in a replayed case run, return the recorded result instead
    of running `fn` (which runs when there is no replay, or the replay went live)."""
    params = inspect.signature(fn).parameters
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    name = fn.__name__

    @functools.wraps(fn)
    async def served(**kwargs: Any) -> Any:
        cassette = current_cassette()
        if cassette is not None and not cassette.live:
            got = cassette.tool_step(name, {k: v for k, v in kwargs.items() if k != CONTEXT_PARAM},
                                     defaults)
            if got is not None:
                return got[0]
        if inspect.iscoroutinefunction(fn):
            return await fn(**kwargs)
        return await anyio.to_thread.run_sync(lambda: fn(**kwargs), abandon_on_cancel=True)

    return served


def for_replay(agent: Any, resolve_model: Callable[[str], LLM], model_override: str | None = None) -> Any:
    """`agent` set up to replay (see the module); `model_override` replaces an `Agent`'s model
    (resolved here: pass no override to the adapter afterwards)."""
    if isinstance(agent, Agent):
        model = agent.model
        if model_override or isinstance(model, str):
            model = resolve_model(model_override or str(model))
        return dataclasses.replace(agent, model=ReplayModel(model, agent.name),
                                   tools=[replayed_tool(t) for t in agent.tools])
    if model_override:
        raise AgentLoadError(f"--agent_model applies to agenteval Agent agents only; this "
                             f"root_agent is a {type(agent).__name__} with its own model")
    if is_adk_agent(agent):
        from agenteval.agents.adk_replay import with_replay_plugin

        return with_replay_plugin(agent)
    raise AgentLoadError(f"--replay replays agenteval Agent and google-adk agents; this root_agent is "
                         f"a {type(agent).__name__}, which calls its models and tools itself")
