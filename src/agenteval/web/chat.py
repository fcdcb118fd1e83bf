"""Chatting with an agent: one turn at a time in a live agent session, each turn recorded as an
eval-set invocation with its trace, and the session saved after every turn.

An ADK agent's turns record the tool calls made inside its `AgentTool`s as its eval runs do:
as the agent folder's `test_config.json` says (`inner_tool_calls`), read when a live session
starts, so a session saved as a case holds the calls `agenteval eval` would compare with it.

Live agent sessions are kept in memory while the server runs, so the agent remembers the
conversation as it would in an eval run. After a restart (or for a session created elsewhere),
the next turn opens a fresh agent session with the stored state: the agent keeps the state,
not its own memory of the earlier turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agenteval.agents import AgentSession, SessionSpec, to_adapter
from agenteval.datasets.config import default_config_for
from agenteval.errors import DataError, describe
from agenteval.models import ModelUnavailable, parse_model_name
from agenteval.models.base import OnChunk, streaming_to
from agenteval.models.scripted import ScriptedModel
from agenteval.runner import Services
from agenteval.runner.turns import record_turn
from agenteval.runner.values import make_safe
from agenteval.schema import Content, content_text
from agenteval.store.sessions import ChatSession, ChatTurn
from agenteval.tracing import TraceRecorder, recording, span
from agenteval.tracing.figures import figures
from agenteval.web.agents import LoadedAgent


@dataclass
class _Live:
    session: AgentSession | None = None
    agent: Any = None  # the imported agent `session` runs (an agent imported again starts anew)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def check_model(agent: LoadedAgent, model: str | None, source: str | None = None,
                key: str = "model") -> None:
    """A DataError (`source`, `key`: the request's field) unless the agent can run on `model`:
    a name some backend understands, for an agent whose model can be replaced (agenteval's own
    `Agent`)."""
    if not model:
        return
    try:
        parse_model_name(model)
        to_adapter(agent.agent, lambda name: ScriptedModel([], name=name), model,
                   override_name="a model replacing the agent's own")
    except ModelUnavailable as e:
        raise DataError(source, key, str(e)) from None
    except Exception as e:  # AgentLoadError: this agent brings its own model
        raise DataError(source, key, str(e)) from None


class ChatService:
    """Live chat sessions over one model pool (API keys from `env`)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.models = Services.create(env).models
        self._live: dict[tuple[str, str], _Live] = {}

    def _slot(self, app: str, session_id: str) -> _Live:
        return self._live.setdefault((app, session_id), _Live())

    def lock(self, app: str, session_id: str) -> asyncio.Lock:
        """The session's lock: hold it from reading the session to saving it after a turn, so
        two messages to one session never interleave."""
        return self._slot(app, session_id).lock

    async def send(self, agent: LoadedAgent, session: ChatSession, text: str,
                   recorder: TraceRecorder | None = None, on_chunk: OnChunk | None = None) -> ChatTurn:
        """Runs one turn and appends it to `session` (in memory; the caller saves it). An agent
        that fails (to start, or in the turn) gives a turn carrying its error. `recorder`, when
        given, records the turn's spans (a caller watches its steps finish while it runs);
        `on_chunk` hears the replies' text as the model writes it (agenteval's own `Agent` on a
        backend that streams, see `agents.builtin`; other agents' turns send none)."""
        return await self._turn(agent, session, self._slot(agent.name, session.id), text,
                                recorder or TraceRecorder(), on_chunk)

    async def _turn(self, agent: LoadedAgent, session: ChatSession, live: _Live, text: str,
                    recorder: TraceRecorder, on_chunk: OnChunk | None = None) -> ChatTurn:
        index = len(session.turns)
        user = Content.from_text(text, role="user")
        result = error = recorded = None
        started = time.perf_counter()
        with recording(recorder):
            try:
                with span("invocation", f"invocation {index}", {
                        "agenteval.invocation_index": index, "input.value": text,
                        "gen_ai.conversation.id": session.id}) as recorded:
                    if live.session is not None and live.agent is not agent.agent:
                        # the agent's code was edited and imported again: its next turn runs the
                        # edit, from the state the session has saved
                        with contextlib.suppress(Exception):
                            await live.session.close()
                        live.session = None
                    if live.session is None:
                        # A test_config.json that does not load fails the turn, naming the file.
                        config, _ = default_config_for(agent.path / "test_config.json")
                        adapter = to_adapter(agent.agent, self.models.get, session.model,
                                             config.inner_tool_calls)
                        live.agent = agent.agent
                        live.session = await adapter.start_session(SessionSpec(
                            session.app_name, session.user_id, session.id, copy.deepcopy(session.state)))
                    with streaming_to(on_chunk):
                        result = await live.session.send(user)
                    if recorded is not None:
                        recorded.set("output.value", content_text(result.final_response))
            except (Exception, SystemExit) as e:  # the agent's failure is the turn's, not the server's
                error = describe(e)
        elapsed = time.perf_counter() - started
        fig = figures(recorder.trace, recorded.span) if recorded is not None else None
        warnings: list[str] = []
        invocation = record_turn(session.id, index, user, result, elapsed, fig, warnings)
        if live.session is not None:
            try:
                session.state = make_safe(live.session.state(), "session state", warnings)
            except Exception as e:  # an adapter whose state() fails keeps the last known state
                warnings.append(f"session state: {describe(e)}")
        turn = ChatTurn(invocation=invocation, trace=recorder.trace, error=error, warnings=warnings)
        session.turns.append(turn)
        return turn

    async def forget(self, app: str, session_id: str) -> None:
        """Closes and drops the live agent session, if any."""
        live = self._live.pop((app, session_id), None)
        if live is not None and live.session is not None:
            with contextlib.suppress(Exception):  # best effort: the session is gone either way
                await live.session.close()

    async def close(self) -> None:
        """Closes every live agent session (at server shutdown)."""
        for app, session_id in list(self._live):
            await self.forget(app, session_id)


__all__ = ["ChatService", "check_model"]
