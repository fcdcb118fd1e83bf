"""Legacy formats: `*.test.json` turn lists and the old list-of-sessions eval-set file."""


import os
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
    FunctionResponse,
    IntermediateData,
    Invocation,
    Part,
    SessionFile,
    SessionInput,
)


class _ExpectedToolUse(BaseModel):
    # A mistyped key (`tool_inpt`) is refused: kept as an extra, it left the call without its
    # arguments, and the case scored against the wrong trajectory.
    model_config = ConfigDict(defer_build=True, extra="forbid")

    tool_name: str
    tool_input: dict[str, Any] = Field(default_factory=dict)
    # ADK's first evaluator answered a matching call with {"result": mock_tool_output} instead
    # of running the tool: kept as the call's recorded response (what `--mock_tools` answers)
    mock_tool_output: Any = None


class _IntermediateResponse(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    author: str
    text: str


class _LegacyTurn(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    query: str
    expected_tool_use: list[_ExpectedToolUse] = Field(default_factory=list)
    expected_intermediate_agent_responses: list[_IntermediateResponse] = Field(
        default_factory=list
    )
    reference: str | None = None


_SESSION_KEYS = frozenset({"name", "data", "initial_session"})


def is_legacy_session_list(data: Any) -> bool:
    """The old eval-set file: a non-empty list of `{name, data: [turns], initial_session}`, told
    from a `.test.json` turn list by its first item (each item is then checked)."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], dict)
            and "data" in data[0] and "query" not in data[0])


def _calls(uses: list[_ExpectedToolUse]) -> tuple[list[FunctionCall], list[FunctionResponse]]:
    """A turn's expected calls and, for those with a `mock_tool_output` (null too: the key is
    what counts), their responses; paired by id when only some calls have one (id-less calls
    and responses pair by position)."""
    mocked = [t for t in uses if "mock_tool_output" in t.model_fields_set]
    ids = 0 < len(mocked) < len(uses)
    calls = [FunctionCall(id=f"legacy_{i}" if ids else None, name=t.tool_name, args=t.tool_input)
             for i, t in enumerate(uses)]
    responses = [FunctionResponse(id=c.id, name=t.tool_name, response={"result": t.mock_tool_output})
                 for c, t in zip(calls, uses, strict=True) if "mock_tool_output" in t.model_fields_set]
    return calls, responses


def _invocations(file: str | Path, turns: list[Any], prefix: str) -> list[Invocation]:
    if not turns:  # a case with no turn could never pass: refused, as an empty eval set is
        raise DataError(file, prefix, "the list is empty: there is no turn")
    out = []
    for i, raw in enumerate(turns):
        if not isinstance(raw, dict):
            raise DataError(file, f"{prefix}[{i}]", "expected a turn: an object with `query`")
        try:
            turn = _LegacyTurn.model_validate(raw)
        except ValidationError as e:
            raise from_validation_error(file, e, f"{prefix}[{i}]") from None
        # An empty query is kept, as ADK 2.13 keeps it (a turn whose user message is empty): a
        # file ADK loads must load here too; `migrate` notes it (`asks_nothing`).
        calls, responses = _calls(turn.expected_tool_use)
        out.append(
            Invocation(
                # The same every time the file is read (a UUID, as ADK's random one): the set's
                # digest is what a resume compares, and a random id changed it on every read,
                # so a run of a legacy file could never be resumed ("eval set changed").
                invocation_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{legacy_case_id(file)}{prefix}[{i}]")),
                user_content=Content(role="user", parts=[Part(text=turn.query)]),
                final_response=Content(role="model", parts=[Part(text=turn.reference or "")]),
                intermediate_data=IntermediateData(
                    tool_uses=calls,
                    tool_responses=responses,
                    intermediate_responses=[
                        (r.author, [Part(text=r.text)])
                        for r in turn.expected_intermediate_agent_responses
                    ],
                ),
            )
        )
    return out


def asks_nothing(eval_set: EvalSet) -> list[str]:
    """Where a case's turn has an empty (or blank) user message, which asks the agent nothing:
    `case 'c', turn 2` (1-based), in order."""
    return [f"case {c.eval_id!r}, turn {i + 1}" for c in eval_set.eval_cases
            for i, inv in enumerate(c.conversation or []) if not inv.user_content.text().strip()]


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


def legacy_case_id(file: str | Path) -> str:
    """The eval id of a `.test.json` turn list's one case: the file's path as given, when it is
    relative (ADK's id: the path it was given), else, for a file under the working directory,
    its path from there, with `/` between folders. An absolute id named one machine's folders
    (`/home/ci/...`), so the same case had another id, and another history, on every machine
    and checkout. A file elsewhere keeps its absolute path (a `../` id could not be used in a
    URL, as the web's are)."""
    path = Path(file)
    if not path.is_absolute():
        return str(file)
    try:
        relative = os.path.relpath(path)
    except ValueError:  # (Windows: another drive)
        return str(file)
    return str(file) if relative.startswith(os.pardir) else Path(relative).as_posix()


def convert_turn_list(
    file: str | Path, data: list[Any], initial_session: SessionFile | None = None
) -> EvalSet:
    """A `.test.json` turn list becomes one case whose id is the file's path (`legacy_case_id`)."""
    case = EvalCase(
        eval_id=legacy_case_id(file),
        conversation=_invocations(file, data, ""),
        session_input=session_input_from(initial_session),
    )
    return EvalSet(eval_set_id=set_id_for(file), name=set_id_for(file), eval_cases=[case])


def convert_session_list(file: str | Path, data: list[Any]) -> EvalSet:
    """Each `{name, data, initial_session}` item becomes a case whose eval id is `name`.

    A `name` that is missing, null or not a string is an error, as it is in ADK (whose EvalCase
    requires a string id): a made-up id (say, the file's stem and the index) would change when
    cases are reordered and could not be chosen on the command line or matched against recorded
    runs. Two items with one name are an error too, naming both.
    """
    cases = []
    first: dict[str, int] = {}
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise DataError(file, f"[{i}]", "expected an object with `name` and `data`")
        for key in ("name", "data"):
            if key not in item:
                raise DataError(file, f"[{i}].{key}", "field required")
        for key in item:  # ADK reads these three and ignores the rest: a mistyped one is lost
            if key not in _SESSION_KEYS:
                raise DataError(file, f"[{i}].{key}", "unknown key (a session holds name, "
                                "data and initial_session)")
        name = item["name"]
        if not isinstance(name, str):
            got = "null" if name is None else type(name).__name__
            raise DataError(file, f"[{i}].name", f"expected a string (the case's eval_id), got {got}")
        if not name:
            raise DataError(file, f"[{i}].name", "must not be empty (it is the case's eval_id)")
        j = first.setdefault(name, i)
        if j != i:
            raise DataError(file, f"[{i}].name", f"duplicate eval_id {name!r} (also [{j}].name)")
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
                eval_id=name,
                conversation=_invocations(file, item["data"], f"[{i}].data"),
                session_input=session_input_from(session),
            )
        )
    return EvalSet(eval_set_id=set_id_for(file), name=set_id_for(file), eval_cases=cases)
