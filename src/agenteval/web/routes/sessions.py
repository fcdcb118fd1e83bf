"""Chat sessions (ADK's `/apps/{app}/users/{user_id}/sessions` shapes): create, list, read,
delete, and send a message (one agent turn, recorded with its trace)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from agenteval.errors import DataError
from agenteval.schema.trace import Span
from agenteval.store.sessions import ChatSession
from agenteval.tracing.recorder import TraceRecorder
from agenteval.web.chat import check_model
from agenteval.web.context import ContractRoute, Web, WebDep, not_found
from agenteval.web.contract import Deleted, SentTurn, SessionView
from agenteval.web.views import session_json, turn_json

router = APIRouter(prefix="/apps/{app}/users/{user_id}/sessions", tags=["sessions"],
                   route_class=ContractRoute)

UserId = str  # any text (never part of a path); checked against the stored session


class NewSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    state: dict[str, Any] = Field(default_factory=dict)
    model: str | None = Field(default=None, description="Model for the agent, replacing its own "
                              "(agenteval Agent only), e.g. `openai-compat:M@http://host/v1`.")


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=100_000)


def _session(web: Web, app: str, user_id: str, session_id: str) -> ChatSession:
    session = web.sessions(app).get(session_id)
    if session is None or session.user_id != user_id:
        not_found(f"no session {session_id!r} of user {user_id!r} for agent {app!r}")
    return session


@router.post("")
def create_session(app: str, user_id: UserId, web: WebDep, body: NewSession | None = None) -> SessionView:
    """A new session with `state`; `model` (checked now) replaces the agent's model."""
    body = body or NewSession()
    agent = web.agent(app)
    check_model(agent, body.model)
    return session_json(web.sessions(app).create(app, user_id, body.state, body.model))


@router.get("")
def list_sessions(app: str, user_id: UserId, web: WebDep, *, response: Response) -> list[SessionView]:
    """The user's sessions with this agent, oldest first (without their turns). A session file
    that cannot be read is left out, named (`file: message`) in the JSON list of the
    `X-Unreadable-Sessions` header (whose it is cannot be known)."""
    store = web.sessions(app)
    out, unreadable = [], []
    for i in store.ids():
        try:
            session = store.get(i)
        except DataError as e:
            unreadable.append(str(e))
            continue
        if session is not None and session.user_id == user_id:
            out.append(session_json(session, turns=False))
    if unreadable:  # (JSON's \u escapes keep a header's latin-1)
        response.headers["X-Unreadable-Sessions"] = json.dumps(unreadable)
    return out


@router.get("/{session_id}")
def get_session(app: str, user_id: UserId, session_id: str, web: WebDep) -> SessionView:
    """The session with its turns and its current state."""
    return session_json(_session(web, app, user_id, session_id))


@router.delete("/{session_id}")
async def delete_session(app: str, user_id: UserId, session_id: str, web: WebDep) -> Deleted:
    await anyio.to_thread.run_sync(_session, web, app, user_id, session_id)
    async with web.chat.lock(app, session_id):  # a turn in flight is saved first, then deleted
        await anyio.to_thread.run_sync(_session, web, app, user_id, session_id)
        await web.chat.forget(app, session_id)
        await anyio.to_thread.run_sync(web.sessions(app).delete, session_id)
    return Deleted(deleted=session_id)


@router.post("/{session_id}/messages")
async def send_message(app: str, user_id: UserId, session_id: str, body: Message,
                       web: WebDep) -> SentTurn:
    """Runs the agent for one turn. An agent that fails gives a turn with its `error` (status
    200); the turn is saved with the session either way. Returns the turn and the state now."""
    agent = await anyio.to_thread.run_sync(web.agent, app)
    await anyio.to_thread.run_sync(_session, web, app, user_id, session_id)  # 404 before any lock
    async with web.chat.lock(app, session_id):
        session = await anyio.to_thread.run_sync(_session, web, app, user_id, session_id)
        turn = await web.chat.send(agent, session, body.text)
        await anyio.to_thread.run_sync(web.sessions(app).save, session)
    return SentTurn(**dict(turn_json(turn)), index=len(session.turns) - 1, state=session.state)


STEP_POLL_SECONDS = 0.2  # how often a streamed turn looks for newly finished steps (at the
# latest: a chunk of the reply wakes it at once)


def _step(s: Span) -> dict[str, Any]:
    """A finished model or tool call of a turn in progress, as the stream sends it."""
    a = s.attributes
    detail = a.get("gen_ai.tool.call.arguments") if s.kind == "tool" else a.get("output.value")
    return {"kind": s.kind, "name": s.name, "seconds": None if s.end is None else s.end - s.start,
            "text": str(detail)[:500] if detail is not None else None}


@router.post("/{session_id}/messages/stream")
async def stream_message(app: str, user_id: UserId, session_id: str, body: Message, web: WebDep,
                         request: Request) -> StreamingResponse:
    """The turn of `messages`, as server-sent events while it runs (a stream, not JSON): a
    `chunk` event with each piece of a reply's text as the model writes it (`{call, text}`:
    `call` numbers the turn's model calls from 1, so a new number starts a new draft; sent for
    agenteval's own `Agent` on a backend that streams, never for a written tool call), a `step`
    event as each model or tool call finishes (`{kind, name, seconds, text}`: the call's
    arguments or the model's output), then one `turn` event with what `messages` returns. A
    client that disconnects (the page's Stop) cancels the turn, and with it the model call in
    flight (its generation stops): nothing is saved and the agent's live session is closed, so
    the next message starts it again from the saved state."""
    agent = await anyio.to_thread.run_sync(web.agent, app)
    await anyio.to_thread.run_sync(_session, web, app, user_id, session_id)  # 404 before streaming

    async def events() -> AsyncIterator[str]:
        recorder = TraceRecorder()
        chunks: list[tuple[int, str]] = []  # (model call, text) not sent yet
        wake = asyncio.Event()

        def on_chunk(text: str) -> None:
            # The model call in flight is the last one recorded (a span is recorded at its start).
            call = sum(1 for s in recorder.trace.spans if s.kind == "llm")
            if chunks and chunks[-1][0] == call:
                chunks[-1] = (call, chunks[-1][1] + text)  # one event for what came meanwhile
            else:
                chunks.append((call, text))
            wake.set()

        async with web.chat.lock(app, session_id):
            session = await anyio.to_thread.run_sync(_session, web, app, user_id, session_id)
            task = asyncio.ensure_future(web.chat.send(agent, session, body.text, recorder, on_chunk))
            sent: set[str] = set()
            try:
                while True:
                    woken = asyncio.ensure_future(wake.wait())
                    done, _ = await asyncio.wait({task, woken}, timeout=STEP_POLL_SECONDS,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    woken.cancel()
                    wake.clear()
                    for s in list(recorder.trace.spans):
                        if s.kind in ("llm", "tool") and s.end is not None and s.span_id not in sent:
                            sent.add(s.span_id)
                            yield f"event: step\ndata: {json.dumps(_step(s), default=str)}\n\n"
                    while chunks:
                        call, text = chunks.pop(0)
                        yield f"event: chunk\ndata: {json.dumps({'call': call, 'text': text})}\n\n"
                    if task in done:
                        break
                    if await request.is_disconnected():
                        return
                turn = task.result()
                await anyio.to_thread.run_sync(web.sessions(app).save, session)
                out = SentTurn(**dict(turn_json(turn)), index=len(session.turns) - 1, state=session.state)
                yield f"event: turn\ndata: {out.model_dump_json()}\n\n"
            finally:
                if not task.done():  # stopped: the turn is dropped with the agent's live session
                    # Shielded, and waited with `wait` (a cancelled `gather` would cancel the turn
                    # again and again): the turn's model call must get to close its stream.
                    with anyio.CancelScope(shield=True):
                        task.cancel()
                        await asyncio.wait({task})
                        await web.chat.forget(app, session_id)

    return StreamingResponse(events(), media_type="text/event-stream")
