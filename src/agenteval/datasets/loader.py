"""Loading eval sets (current, legacy and old formats), session files and migrating them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.datasets.files import gc_paused, read_json, write_model
from agenteval.datasets.legacy import (
    convert_session_list,
    convert_turn_list,
    is_legacy_session_list,
    is_legacy_turn_list,
)
from agenteval.errors import DataError, from_validation_error
from agenteval.schema import EvalSet, SessionFile


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
            return EvalSet.model_validate(data)
        except ValidationError as e:
            raise from_validation_error(file, e) from None
    if is_legacy_turn_list(data):
        return convert_turn_list(file, data, initial_session)
    if is_legacy_session_list(data):
        return convert_session_list(file, data)
    raise DataError(
        file,
        "",
        "not an eval set: expected an object with eval_set_id and eval_cases, "
        "or a legacy list of turns with `query`",
    )


def load_session_file(path: str | Path) -> SessionFile:
    """An initial-session file (`app_name`, `user_id`, `state`; other session keys kept)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(path, "", "expected a JSON object")
    try:
        return SessionFile.model_validate(data)
    except ValidationError as e:
        raise from_validation_error(path, e) from None


def validate_eval_set_json(text: bytes) -> EvalSet:
    """A current-format eval set parsed and validated from JSON bytes in one go by pydantic-core
    (faster than `json.loads` + `model_validate`, same values); raises ValidationError."""
    with gc_paused():
        return EvalSet.model_validate_json(text)


def load_eval_set(path: str | Path, initial_session_file: str | Path | None = None) -> EvalSet:
    """Loads an eval-set file in any supported format."""
    session = load_session_file(initial_session_file) if initial_session_file else None
    if session is None:
        try:
            text = Path(path).read_bytes()
        except OSError:
            text = b""
        if text.lstrip()[:1] == b"{":
            try:
                return validate_eval_set_json(text)
            except ValidationError as e:
                if not any(err["type"] == "json_invalid" for err in e.errors()):
                    raise from_validation_error(path, e) from None
    with gc_paused():
        return parse_eval_set(path, read_json(path), session)


def migrate(
    old: str | Path, new: str | Path, initial_session_file: str | Path | None = None
) -> EvalSet:
    """Converts a legacy file into a current-format eval set written to `new`."""
    data = read_json(old)
    if isinstance(data, dict):
        raise DataError(old, "", "already in the current eval-set format; nothing to migrate")
    session = load_session_file(initial_session_file) if initial_session_file else None
    eval_set = parse_eval_set(old, data, session)
    write_model(new, eval_set)
    return eval_set
