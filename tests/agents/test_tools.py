"""`agents.tools.as_response`: a tool's return value as a function response, JSON-ready."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pydantic import TypeAdapter

from agenteval.agents import tools
from agenteval.agents.tools import as_response


def test_a_dict_is_the_response_and_anything_else_its_result_all_json_ready() -> None:
    day = datetime.date(2026, 11, 29)
    assert as_response({"when": day, "n": 1}) == {"when": "2026-11-29", "n": 1}
    assert as_response([day, (1, 2)]) == {"result": ["2026-11-29", [1, 2]]}
    assert as_response(None) == {"result": None}


def test_the_adapters_are_made_once_not_per_tool_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # Making a pydantic adapter builds its schema (about 1 ms): per tool call, that was 2% of the
    # event loop's CPU at 32 calls in flight.
    made: list[Any] = []

    def counting(kind: Any) -> TypeAdapter[Any]:
        made.append(kind)
        return TypeAdapter(kind)

    monkeypatch.setattr(tools, "TypeAdapter", counting)
    for _ in range(3):
        as_response({"a": 1})
        as_response(2)
    assert len(made) <= 2
