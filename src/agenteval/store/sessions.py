"""Chat sessions of the web UI: one JSON file per session in `<app dir>/.agenteval/sessions/`.

A session is what a person said to an agent and what it did, turn by turn (each turn's
invocation, in the eval-set `Invocation` shape, and its trace), with the state it started from
and the state it has now. Files are written atomically. A session id is a name of letters,
digits, `_` and `-` (the server makes them; anything else is refused before a path is built),
and a session file that is a symbolic link is not read, so nothing outside the folder is
reached through an id.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from agenteval.datasets.files import read_json, write_model
from agenteval.datasets.nesting import MAX_RESULT_DEPTH
from agenteval.errors import from_validation_error
from agenteval.schema import Invocation
from agenteval.schema.base import WireModel
from agenteval.schema.trace import Trace

_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
SUFFIX = ".json"


class ChatTurn(WireModel):
    """One user message and what the agent did: the invocation (as an eval set holds it), its
    trace, the agent's error when the turn failed (the invocation then has no response), and
    what was lost making the agent's values JSON (see `agenteval.runner.values`)."""

    invocation: Invocation
    trace: Trace | None = None
    error: str | None = None
    warnings: list[str] = Field(default_factory=list)


class ChatSession(WireModel):
    """A conversation with one agent. `model` is the model the agent was asked to run on (None:
    its own); `initial_state` is the state the session started with, `state` the state now."""

    id: str
    app_name: str
    user_id: str
    created: float
    model: str | None = None
    initial_state: dict[str, Any] = Field(default_factory=dict)
    state: dict[str, Any] = Field(default_factory=dict)
    turns: list[ChatTurn] = Field(default_factory=list)


def valid_session_id(session_id: str) -> bool:
    """True for a name the store may turn into a file name."""
    return _ID.fullmatch(session_id) is not None


def sessions_dir(app_dir: str | Path) -> Path:
    return Path(app_dir) / ".agenteval" / "sessions"


class SessionStore:
    """The chat sessions of one agent folder."""

    def __init__(self, app_dir: str | Path) -> None:
        self.folder = sessions_dir(app_dir)

    def _path(self, session_id: str) -> Path | None:
        if not valid_session_id(session_id):
            return None
        path = self.folder / f"{session_id}{SUFFIX}"
        return None if path.is_symlink() else path

    def create(self, app_name: str, user_id: str, state: dict[str, Any] | None = None,
               model: str | None = None) -> ChatSession:
        """A new session (written at once) with a fresh id."""
        state = dict(state or {})
        session = ChatSession(id=uuid.uuid4().hex, app_name=app_name, user_id=user_id, created=time.time(),
                              model=model, initial_state=state, state=dict(state))
        self.save(session)
        return session

    def get(self, session_id: str) -> ChatSession | None:
        """The session, or None when there is none by that id. A damaged file is a DataError
        naming it and the key."""
        path = self._path(session_id)
        if path is None or not path.is_file():
            return None
        data = read_json(path, MAX_RESULT_DEPTH)  # sessions hold traces, as result documents do
        try:
            return ChatSession.model_validate(data)
        except ValidationError as e:
            raise from_validation_error(path, e) from None

    def save(self, session: ChatSession) -> None:
        """Writes the session (atomically: a reader sees the old file or the new one)."""
        path = self._path(session.id)
        if path is None:
            raise ValueError(f"invalid session id {session.id!r}")
        write_model(path, session)

    def delete(self, session_id: str) -> bool:
        """Removes the session; False when there was none."""
        path = self._path(session_id)
        if path is None or not path.is_file():
            return False
        path.unlink()
        return True

    def ids(self) -> list[str]:
        """Ids of the stored sessions, oldest file first."""
        if not self.folder.is_dir():
            return []
        files = [p for p in self.folder.glob(f"*{SUFFIX}")
                 if valid_session_id(p.stem) and not p.is_symlink() and p.is_file()]
        return [p.stem for p in sorted(files, key=lambda p: p.stat().st_mtime)]


__all__ = ["ChatSession", "ChatTurn", "SessionStore", "sessions_dir", "valid_session_id"]
