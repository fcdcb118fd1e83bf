"""Legacy formats: `*.test.json` turn lists and the old list-of-sessions eval-set file."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval.errors import DataError, from_validation_error
from agenteval.schema import (
    Content,
    EvalCase,
    EvalSet,
    FunctionCall,
    IntermediateData,
    Invocation,
    Part,
    SessionFile,
    SessionInput,
)


class _ExpectedToolUse(BaseModel):
    model_config = ConfigDict(extra="allow")  # e.g. the never-used `mock_tool_output`

    tool_name: str
    tool_input: dict[str, Any] = Field(default_factory=dict)


class _IntermediateResponse(BaseModel):
    author: str
    text: str


class _LegacyTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str
    expected_tool_use: list[_ExpectedToolUse] = Field(default_factory=list)
    expected_intermediate_agent_responses: list[_IntermediateResponse] = Field(
        default_factory=list
    )
    reference: str | None = None


def is_legacy_turn_list(data: Any) -> bool:
    """A `.test.json` turn list: a JSON list whose items have a `query`."""
    return isinstance(data, list) and all(isinstance(t, dict) and "query" in t for t in data)


def is_legacy_session_list(data: Any) -> bool:
    """The old eval-set file: a non-empty list of `{name, data: [turns]}`."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(s, dict) and "data" in s and "name" in s for s in data)
    )


def _invocations(file: str | Path, turns: list[Any], prefix: str) -> list[Invocation]:
    out = []
    for i, raw in enumerate(turns):
        try:
            turn = _LegacyTurn.model_validate(raw)
        except ValidationError as e:
            raise from_validation_error(file, e, f"{prefix}[{i}]") from None
        out.append(
            Invocation(
                invocation_id=str(uuid.uuid4()),
                user_content=Content(role="user", parts=[Part(text=turn.query)]),
                final_response=Content(role="model", parts=[Part(text=turn.reference or "")]),
                intermediate_data=IntermediateData(
                    tool_uses=[FunctionCall(name=t.tool_name, args=t.tool_input)
                               for t in turn.expected_tool_use],
                    intermediate_responses=[
                        (r.author, [Part(text=r.text)])
                        for r in turn.expected_intermediate_agent_responses
                    ],
                ),
            )
        )
    return out


def set_id_for(path: str | Path) -> str:
    """An eval-set id derived from a file name: safe as a file-name segment (unlike ADK's path)."""
    name = Path(path).name
    for suffix in (".test.json", ".evalset.json", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "eval_set"


def session_input_from(session: SessionFile | None) -> SessionInput | None:
    """The session input an initial-session file describes."""
    if session is None:
        return None
    return SessionInput(app_name=session.app_name, user_id=session.user_id, state=session.state)


def convert_turn_list(
    file: str | Path, data: list[Any], initial_session: SessionFile | None = None
) -> EvalSet:
    """A `.test.json` turn list becomes one case whose id is the file path (as ADK names it)."""
    case = EvalCase(
        eval_id=str(file),
        conversation=_invocations(file, data, ""),
        session_input=session_input_from(initial_session),
    )
    return EvalSet(eval_set_id=set_id_for(file), name=set_id_for(file), eval_cases=[case])


def convert_session_list(file: str | Path, data: list[Any]) -> EvalSet:
    """Each `{name, data, initial_session}` item becomes a case named `name`."""
    cases = []
    for i, item in enumerate(data):
        if not isinstance(item["data"], list):
            raise DataError(file, f"[{i}].data", "expected a list of turns")
        session = None
        if item.get("initial_session") is not None:
            try:
                session = SessionFile.model_validate(item["initial_session"])
            except ValidationError as e:
                raise from_validation_error(file, e, f"[{i}].initial_session") from None
        cases.append(
            EvalCase(
                eval_id=str(item["name"]),
                conversation=_invocations(file, item["data"], f"[{i}].data"),
                session_input=session_input_from(session),
            )
        )
    return EvalSet(eval_set_id=set_id_for(file), name=set_id_for(file), eval_cases=cases)
