"""Writing eval sets beside an agent, as `adk eval_set` does: create one, add cases to it.

A set lives at `AGENT_PATH/<eval_set_id>.evalset.json` (ADK's place for it). Every write is
atomic, keeps what was read as it was (`write_as_read`) and is read back by agenteval's own
loader, so what is written always loads, in agenteval and in ADK.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from agenteval.datasets.files import editing, read_json, write_as_read, write_model
from agenteval.datasets.loader import check_scenario_persona, load_eval_set, load_eval_set_to_edit
from agenteval.errors import DataError, from_validation_error
from agenteval.schema import ConversationScenario, EvalCase, EvalSet, SessionInput

SET_ID = re.compile(r"^[a-zA-Z0-9_]+$")  # ADK's rule for the ids it creates
MAX_SET_ID = 200


def eval_set_path(agent_dir: str | Path, eval_set_id: str) -> Path:
    """Where the set `eval_set_id` of the agent lives; a DataError for an id ADK would refuse."""
    if not SET_ID.match(eval_set_id):
        raise DataError(None, "EVAL_SET_ID", f"{eval_set_id!r}: use letters, digits and _ only")
    if len(eval_set_id) > MAX_SET_ID:  # it names the file: 255 bytes at most on most systems
        raise DataError(None, "EVAL_SET_ID", f"{eval_set_id[:40]}... is {len(eval_set_id)} characters "
                        f"long; at most {MAX_SET_ID}")
    return Path(agent_dir) / f"{eval_set_id}.evalset.json"


def check_new_case_id(eval_id: str, field: str) -> None:
    """Refuses, as a DataError naming `field`, a new case id that a selection could not pick
    out: blank (it names nothing) or holding `,` or `:` (`FILE:id1,id2` separates by them).
    Ids already in a file (ADK's own) are not checked, only those agenteval writes."""
    if not eval_id.strip():
        raise DataError(None, field, f"{eval_id!r} is blank: name the new case")
    if {",", ":"} & set(eval_id):
        raise DataError(None, field, f"{eval_id!r} holds ',' or ':', which FILE:id1,id2 cannot "
                        "select by: choose another id")


def create_eval_set(agent_dir: str | Path, eval_set_id: str) -> Path:
    """Writes an empty eval set; a DataError when one exists already."""
    path = eval_set_path(agent_dir, eval_set_id)
    with editing(path):
        if path.exists():
            raise DataError(path, "", "already exists")
        write_model(path, EvalSet(eval_set_id=eval_set_id, name=eval_set_id, eval_cases=[],
                                  creation_timestamp=time.time()))
    return path


def scenario_id(scenario: ConversationScenario) -> str:
    """ADK's id for a scenario case: the first 8 hex digits of the sha256 of its sorted JSON."""
    text = json.dumps(scenario.model_dump(mode="json", exclude_none=True), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def load_scenarios(path: str | Path) -> list[ConversationScenario]:
    """A scenarios file (`{"scenarios": [...]}`, as `adk eval_set add_eval_case` reads); an empty
    list is a DataError (nothing to add)."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise DataError(path, "scenarios", "expected an object with a `scenarios` list")
    for key in data:  # a key beside the list (a `session_input`, say) would be dropped unread
        if key != "scenarios":
            raise DataError(path, key, "unknown key (the file holds `scenarios` only; a session "
                            "input goes in --session_input_file)")
    if not data["scenarios"]:
        raise DataError(path, "scenarios", "empty: nothing to add")
    out = []
    for i, raw in enumerate(data["scenarios"]):
        try:
            out.append(ConversationScenario.model_validate(raw))
        except ValidationError as e:
            raise from_validation_error(path, e, f"scenarios[{i}]") from None
        if not out[-1].starting_prompt.strip():  # the simulated user's first message
            raise DataError(path, f"scenarios[{i}].starting_prompt", "empty: it is the first message")
        if not out[-1].conversation_plan.strip():  # what the simulated user follows after it
            raise DataError(path, f"scenarios[{i}].conversation_plan", "empty: the simulated user "
                            "would have nothing to follow")
        check_scenario_persona(path, f"scenarios[{i}]", out[-1])
    return out


def load_session_input(path: str | Path) -> SessionInput:
    """A session-input file (`--session_input_file`): `{app_name, user_id, session_id?, state?}`.

    An unknown key is refused, naming it: an eval set's `session_input` keeps unknown keys (they
    round-trip), but in a file written for this option a mistyped `stat` would silently start
    every case it adds with an empty state.
    """
    try:
        session = SessionInput.model_validate(read_json(path))
    except ValidationError as e:
        raise from_validation_error(path, e) from None
    for key in session.model_extra or {}:
        raise DataError(path, key, "unknown key (a session input holds app_name, user_id, "
                        "session_id and state)")
    return session


def add_cases(agent_dir: str | Path, eval_set_id: str, cases: Sequence[EvalCase],
              skip_existing: bool = False) -> tuple[list[str], list[str]]:
    """Appends cases to the set (created when missing); returns (added ids, skipped ids). An id
    the set has already is skipped with `skip_existing`, else a DataError."""
    path = eval_set_path(agent_dir, eval_set_id)
    with editing(path):  # read and written with no other edit between (none is lost)
        eval_set = load_eval_set_to_edit(path) if path.exists() else EvalSet(
            eval_set_id=eval_set_id, name=eval_set_id, eval_cases=[], creation_timestamp=time.time())
        known = {c.eval_id for c in eval_set.eval_cases}
        added, skipped = [], []
        for case in cases:
            if case.eval_id in known:
                if not skip_existing:
                    raise DataError(path, "eval_cases", f"already has a case {case.eval_id!r}")
                skipped.append(case.eval_id)
                continue
            eval_set.eval_cases.append(case)
            known.add(case.eval_id)
            added.append(case.eval_id)
        if added:
            write_as_read(path, eval_set)
            load_eval_set(path)  # what was written loads
    return added, skipped


def scenario_cases(scenarios: Sequence[ConversationScenario],
                   session_input: SessionInput | None) -> list[EvalCase]:
    """One conversation-scenario case per scenario, with ADK's ids."""
    return [EvalCase(eval_id=scenario_id(s), conversation_scenario=s, session_input=session_input,
                     creation_timestamp=time.time()) for s in scenarios]


__all__ = ["SET_ID", "add_cases", "create_eval_set", "eval_set_path", "load_scenarios",
           "load_session_input", "scenario_cases", "scenario_id"]
