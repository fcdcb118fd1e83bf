"""Writing eval sets beside an agent: edits that overlap in time lose nothing."""

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from agenteval.datasets import authoring, load_eval_set
from agenteval.datasets.authoring import add_cases, create_eval_set
from agenteval.schema import EvalCase
from tests.helpers import inv


def _case(eval_id: str) -> EvalCase:
    return EvalCase(eval_id=eval_id, conversation=[inv(eval_id)])


def test_two_edits_at_once_keep_both_cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two `eval_set record`s at once both read the set before either wrote it: one case was lost
    # (6 at once kept 4). The second edit now waits for the first.
    create_eval_set(tmp_path, "s")
    first_read, second_done = threading.Event(), threading.Event()
    load = authoring.load_eval_set

    def slow_first_load(path: Any) -> Any:
        loaded = load(path)
        if not first_read.is_set():
            first_read.set()
            second_done.wait(1.0)  # the second edit would be written here without the lock
        return loaded

    monkeypatch.setattr(authoring, "load_eval_set", slow_first_load)
    one = threading.Thread(target=add_cases, args=(tmp_path, "s", [_case("one")]))
    one.start()
    first_read.wait(5)

    def second() -> None:
        add_cases(tmp_path, "s", [_case("two")])
        second_done.set()

    two = threading.Thread(target=second)
    two.start()
    one.join(10)
    two.join(10)
    assert sorted(c.eval_id for c in load_eval_set(tmp_path / "s.evalset.json").eval_cases) == ["one", "two"]


def test_a_folder_that_cannot_be_opened_for_the_lock_still_gets_its_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The lock is a convenience: a folder it cannot open (no read permission) must not turn an
    # edit that can be written into an internal error.
    create_eval_set(tmp_path, "s")
    real_open = os.open

    def no_folders(path: Any, flags: int, *args: Any) -> int:
        if Path(path).is_dir():
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", no_folders)
    add_cases(tmp_path, "s", [_case("one")])
    monkeypatch.undo()
    assert [c.eval_id for c in load_eval_set(tmp_path / "s.evalset.json").eval_cases] == ["one"]
