"""Conversations still open when `collect` stops, held on disk and gone on with at its next start:
one conversation across a restart is scored once, whole; a held file that is not one is refused
by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval.collector import Assembler, Limits
from agenteval.collector.held import FORMAT, held_path, load, save
from agenteval.errors import DataError
from tests.collector.test_assembler import span


def test_a_conversation_held_across_a_restart_is_one_conversation(tmp_path: Path) -> None:
    before = Assembler(Limits(quiet_seconds=5))
    before.add([span(9, 9)], now=0.0)
    (_,) = before.done(now=0.0)  # a trace whose root ended: taken before the stop
    before.add([span(1, 2, parent=1, session="s"), span(1, 1, session="s")], now=1.0)  # turn 1
    before.add([span(3, 5, parent=4)], now=1.0)  # a trace whose root has not arrived
    save(held_path(tmp_path), before.hold())
    assert (before.held, before.open_traces, before.done(now=99, everything=True)) == (0, 0, [])

    held = load(held_path(tmp_path))
    assert held is not None and held.spans == 3 and held.taken == [f"{9:032x}"]
    after = Assembler(Limits(quiet_seconds=5))
    after.restore(held, now=100.0)
    after.add([span(2, 3, session="s")], now=101.0)  # turn 2, after the restart
    after.add([span(3, 4), span(9, 10, parent=9)], now=101.0)  # the root; a late span of a scored trace
    (rooted,) = after.done(now=101.0)  # its root ended
    assert sorted(s.span_id[-1] for s in rooted.spans) == ["4", "5"]
    assert after.done(now=105.9) == []  # the session: quiet 4.9 s
    (session,) = after.done(now=106.0)
    assert session.key == "s" and sorted(s.span_id[-1] for s in session.spans) == ["1", "2", "3"]
    assert after.late_spans == 1 and after.held == 0
    assert session.spans[0] == span(1, 2, parent=1, session="s")  # read back equal to what was held


def test_nothing_held_leaves_no_file(tmp_path: Path) -> None:
    path = held_path(tmp_path)
    save(path, Assembler().hold())
    assert not path.exists() and load(path) is None


def test_two_collects_in_one_directory_keep_what_each_held(tmp_path: Path) -> None:
    # The second to stop replaced the first's file (or removed it, holding nothing itself).
    path = held_path(tmp_path)
    first, second = Assembler(Limits(quiet_seconds=5)), Assembler(Limits(quiet_seconds=5))
    first.add([span(1, 1, session="a")], now=0.0)
    second.add([span(9, 9)], now=0.0)
    (_,) = second.done(now=0.0)  # a trace taken, nothing open
    save(path, first.hold())
    save(path, Assembler().hold())  # a third, holding nothing
    save(path, second.hold())
    held = load(path)
    assert held is not None and held.taken == [f"{9:032x}"]
    assert [[s.span_id[-1] for s in c] for c in held.conversations] == [["1"]]
    third = Assembler(Limits(quiet_seconds=5))
    third.add([span(3, 3, session="c")], now=0.0)
    save(path, third.hold())
    held = load(path)
    assert held is not None and [[s.span_id[-1] for s in c] for c in held.conversations] == [["1"], ["3"]]


def test_a_file_there_that_is_not_one_is_kept_and_named(tmp_path: Path) -> None:
    path = held_path(tmp_path)
    path.parent.mkdir()
    path.write_text("{")
    with pytest.raises(DataError, match=r"collect\.held\.json"):
        save(path, Assembler().hold())
    assert path.read_text() == "{"


@pytest.mark.parametrize(("text", "field"), [
    ("{", "malformed JSON"),
    ("[]", "format"),
    ('{"format": "x"}', "format"),
    ("F", "malformed JSON"),
    ("T1", "taken"),
    ("T[]C{}", "conversations"),
    ('T[]C[{"spans": [{"trace_id": 1}]}]', "conversations[0].spans[0]"),
    ('T[]C[{"spans": [SPAN]}, {"spans": [SPAN_BAD]}]', "conversations[1].spans[0].start"),
    ('T[]C[{"spans": [SPAN_BACK]}]', "conversations[0].spans[0].end"),
])
def test_a_held_file_that_is_not_one_is_refused_naming_it_and_the_field(tmp_path: Path, text: str,
                                                                       field: str) -> None:
    good = {"trace_id": "a" * 32, "span_id": "b" * 16, "parent_id": None, "name": "n", "start": 1.0,
            "end": 2.0, "attributes": {}, "status": "unset", "error": None, "resource": {}, "where": ""}
    spans = {"SPAN_BACK": {**good, "end": 0.5}, "SPAN_BAD": {**good, "start": "1"}, "SPAN": good}
    for name, value in spans.items():
        text = text.replace(name, json.dumps(value))
    if text.startswith("T"):
        taken, _, conversations = text[1:].partition("C")
        rest = f', "conversations": {conversations}' if conversations else ""
        text = f'{{"format": {json.dumps(FORMAT)}, "taken": {taken}{rest}}}'
    path = tmp_path / "held.json"
    path.write_text(text)
    with pytest.raises(DataError) as e:
        load(path)
    assert "held.json" in str(e.value) and field in str(e.value)
