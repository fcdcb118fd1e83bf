"""Loading eval sets (current, legacy and old formats), session files and migrating them."""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.datasets.files import check_finite, gc_paused, parse_json, read_bytes, read_json, write_model
from agenteval.datasets.legacy import (
    convert_session_list,
    convert_turn_list,
    is_legacy_session_list,
)
from agenteval.datasets.nesting import MAX_DEPTH, check_depth
from agenteval.datasets.targets import same_file
from agenteval.errors import DataError, from_validation_error
from agenteval.schema import ConversationScenario, EvalCase, EvalSet, SessionFile
from agenteval.schema.personas import builtin_persona


def parse_eval_set(
    file: str | Path, data: Any, initial_session: SessionFile | None = None
) -> EvalSet:
    """An EvalSet from parsed JSON, detecting the format by its shape (not by trial and error).

    Unlike ADK, a current-format file with a mistake is reported as such, with its JSON path,
    instead of falling through to the legacy converter.
    """
    with gc_paused():
        return _parse_eval_set(file, data, initial_session)


def _parse_eval_set(file: str | Path, data: Any, initial_session: SessionFile | None) -> EvalSet:
    if isinstance(data, dict):
        if initial_session is not None:
            raise DataError(file, "", "an initial session file applies only to legacy test files")
        try:
            eval_set = EvalSet.model_validate(data)
        except ValidationError as e:
            raise from_validation_error(file, e) from None
        check_unique_ids(file, eval_set)
        check_personas(file, eval_set)
        return eval_set
    if is_legacy_session_list(data):
        if initial_session is not None:  # it was ignored: every case started without its state
            raise DataError(file, "", "an initial session file applies only to a .test.json turn "
                            "list; in this list-of-sessions file each session gives its own "
                            "`initial_session`")
        return convert_session_list(file, data)
    if isinstance(data, list):  # a `.test.json` turn list: each turn is checked, with its path
        return convert_turn_list(file, data, initial_session)
    raise DataError(
        file,
        "",
        "not an eval set: expected an object with eval_set_id and eval_cases, "
        "or a legacy list of turns with `query`",
    )


def load_session_file(path: str | Path) -> SessionFile:
    """An initial-session file (`app_name`, `user_id`, `state`; ADK's other session keys
    ignored, any other key refused)."""
    data = read_json(path, MAX_DEPTH)
    if not isinstance(data, dict):
        raise DataError(path, "", "expected a JSON object")
    try:
        return SessionFile.model_validate(data)
    except ValidationError as e:
        raise from_validation_error(path, e) from None


def validate_eval_set_json(text: bytes, file: str | Path | None = None) -> EvalSet:
    """A current-format eval set parsed and validated from JSON bytes in one go by pydantic-core
    (faster than `json.loads` + `model_validate`, same values).

    Raises ValidationError for what the schema rejects (the caller locates it, or tries the
    other formats), and a DataError naming `file` for nesting deeper than the limit, for
    duplicate eval ids and for a scenario's unknown persona id.
    """
    if text.startswith(codecs.BOM_UTF8):
        text = text[len(codecs.BOM_UTF8):]
    check_depth(file, text, MAX_DEPTH)
    check_finite(file, text)
    with gc_paused():
        eval_set = EvalSet.model_validate_json(text)
    check_unique_ids(file, eval_set)
    check_personas(file, eval_set)
    return eval_set


def check_unique_ids(file: str | Path | None, eval_set: EvalSet) -> None:
    """Refuses an eval set holding two cases with one eval id: results, history rows and the
    pairing of actual with expected cases are all keyed by it (ADK refuses adding one too)."""
    ids = [case.eval_id for case in eval_set.eval_cases]
    if len(set(ids)) == len(ids):
        return
    first: dict[str, int] = {}
    for i, eval_id in enumerate(ids):
        j = first.setdefault(eval_id, i)
        if j != i:
            raise DataError(file, f"eval_cases[{i}].eval_id",
                            f"duplicate eval_id {eval_id!r} (also eval_cases[{j}])")


def check_scenario_persona(file: str | Path | None, where: str, scenario: ConversationScenario) -> None:
    """Refuses a scenario (at `where` in `file`) whose `user_persona` is an id no built-in persona
    has: the simulator could not play it, so every run of the case would fail."""
    if isinstance(scenario.user_persona, str):
        try:
            builtin_persona(scenario.user_persona)
        except ValueError as e:
            raise DataError(file, f"{where}.user_persona", str(e)) from None


def check_persona(file: str | Path | None, index: int, case: EvalCase) -> None:
    """`check_scenario_persona` on the case at `eval_cases[index]`, if it is a scenario."""
    if case.conversation_scenario is not None:
        check_scenario_persona(file, f"eval_cases[{index}].conversation_scenario",
                               case.conversation_scenario)


def check_personas(file: str | Path | None, eval_set: EvalSet) -> None:
    """`check_persona` on each case of the set."""
    for i, case in enumerate(eval_set.eval_cases):
        check_persona(file, i, case)


def load_eval_set(path: str | Path, initial_session_file: str | Path | None = None) -> EvalSet:
    """Loads an eval-set file in any supported format (a leading byte-order mark allowed)."""
    session = load_session_file(initial_session_file) if initial_session_file else None
    text = read_bytes(path)
    if session is None and text.lstrip()[:1] == b"{":
        try:
            return validate_eval_set_json(text, path)
        except ValidationError as e:
            if not any(err["type"] == "json_invalid" for err in e.errors()):
                raise from_validation_error(path, e) from None
    with gc_paused():
        return parse_eval_set(path, parse_json(path, text, MAX_DEPTH), session)


def load_eval_set_to_edit(path: str | Path) -> EvalSet:
    """An eval-set file that a case is to be added to or changed in; a legacy file (a list of
    turns or of sessions, ADK's `.test.json`) is a DataError naming it: written back, it would be
    in the eval-set format, and the legacy file, the only copy of what a faulty conversion would
    lose, gone (as `migrate` never replaces its source)."""
    if read_bytes(path).lstrip()[:1] == b"[":
        raise DataError(path, "", "a legacy test file (a JSON list, ADK's .test.json format): adding a "
                        "case would rewrite it in the eval-set format; migrate it first (agenteval "
                        f"migrate {path} NEW.evalset.json) and add to the new file")
    return load_eval_set(path)


def migrate(old: str | Path, new: str | Path, initial_session_file: str | Path | None = None,
            *, force: bool = False) -> EvalSet:
    """Converts a legacy file into a current-format eval set written to `new`.

    An existing file `new` (or the file a link `new` points to) is replaced only with `force`;
    the source itself never is, by any of its names, since the legacy file is the only copy of
    what a faulty conversion would lose. Streams (`/dev/stdout`, a FIFO) are written as usual.
    """
    if same_file(old, new):
        raise DataError(new, "", f"is the source file {str(old)!r}; write the eval set to "
                        "another file")
    if os.path.isfile(new) and not force:
        raise DataError(new, "", "already exists; use --force to replace it")
    data = read_json(old, MAX_DEPTH)
    if isinstance(data, dict) and ("eval_cases" in data or "eval_set_id" in data):
        raise DataError(old, "", "already in the current eval-set format; nothing to migrate")
    if isinstance(data, dict):
        raise DataError(old, "", "not a legacy test file: expected a list of turns with `query`, "
                        "got an object")
    session = load_session_file(initial_session_file) if initial_session_file else None
    eval_set = parse_eval_set(old, data, session)
    write_model(new, eval_set)
    return eval_set

