"""Chat sessions on disk: one JSON file per session, written atomically, read back whole; ids
that are not plain names and files that are symbolic links are never used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agenteval.errors import DataError
from agenteval.schema import Content, Invocation
from agenteval.store.sessions import ChatTurn, SessionStore, sessions_dir, valid_session_id


def test_a_session_is_created_saved_read_listed_and_deleted(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    s = store.create("app", "u", {"a": 1}, model="local")
    assert valid_session_id(s.id) and s.state == s.initial_state == {"a": 1}
    s.turns.append(ChatTurn(invocation=Invocation(user_content=Content.from_text("hi", role="user")),
                            error="RuntimeError: x"))
    s.state["a"] = 2
    store.save(s)
    back = store.get(s.id)
    assert back == s and back.initial_state == {"a": 1}
    other = store.create("app", "v")
    assert sorted(store.ids()) == sorted([s.id, other.id])
    assert store.delete(s.id) and not store.delete(s.id)
    assert store.get(s.id) is None and store.ids() == [other.id]
    assert not list(sessions_dir(tmp_path).glob("*.tmp*"))  # atomic writes leave nothing behind


@pytest.mark.parametrize("bad", ["", "..", "../x", "a/b", "a.json", "/etc/passwd", "x" * 129, "a\x00b"])
def test_ids_that_are_not_plain_names_are_never_paths(tmp_path: Path, bad: str) -> None:
    store = SessionStore(tmp_path)
    assert not valid_session_id(bad)
    assert store.get(bad) is None and not store.delete(bad)


def test_a_session_file_that_is_a_link_is_not_read(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "app")
    s = store.create("app", "u")
    outside = tmp_path / "outside.json"
    os.replace(sessions_dir(tmp_path / "app") / f"{s.id}.json", outside)
    os.symlink(outside, sessions_dir(tmp_path / "app") / f"{s.id}.json")
    assert store.get(s.id) is None and store.ids() == [] and not store.delete(s.id)
    assert outside.is_file()


def test_a_damaged_session_file_names_the_file_and_key(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    s = store.create("app", "u")
    (sessions_dir(tmp_path) / f"{s.id}.json").write_text('{"id": "x", "app_name": "a", "user_id": "u"}')
    with pytest.raises(DataError, match=r"\.json: created: field required"):
        store.get(s.id)
