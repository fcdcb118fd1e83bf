"""Result documents in `<root>/.agenteval/eval_history/<result id>.evalset_result.json`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.datasets.files import gc_paused, read_json, write_model
from agenteval.errors import DataError, from_validation_error
from agenteval.schema import EvalSetResult
from agenteval.store.output import HISTORY_FOLDER, safe_name

SUFFIX = ".evalset_result.json"


def history_dir(root: str | Path) -> Path:
    """The history folder under a project or agent directory."""
    return Path(root) / HISTORY_FOLDER


def _file_name(result_id: str) -> str:
    # Any character outside a conservative set becomes "_", so ids made from paths are safe.
    return safe_name(result_id) + SUFFIX


def history_path(root: str | Path, result_id: str) -> Path:
    """Where the history keeps the document of result `result_id`."""
    return history_dir(root) / _file_name(result_id)


def save_result(root: str | Path, result: EvalSetResult) -> Path:
    """Writes a result document into the history (atomically); returns its path."""
    path = history_path(root, result.eval_set_result_id)
    write_model(path, result, exclude_none=False)
    return path


def load_result(path: str | Path) -> EvalSetResult:
    """Reads a result document; errors name the file and key."""
    with gc_paused():
        return parse_result(path, read_json(path))


def parse_result(source: str | Path, data: Any) -> EvalSetResult:
    """A result document from parsed JSON; errors name `source` and the key."""
    if not isinstance(data, dict):
        raise DataError(source, "", "expected a result document (a JSON object)")
    if "eval_cases" in data and "eval_case_results" not in data:  # a common mix-up: name it
        raise DataError(source, "", "is an eval set, not a result document (what eval and score write "
                        "with --output, or a run id)")
    with gc_paused():  # ~10^6 objects for a large run: no collections while they are built
        try:
            return EvalSetResult.model_validate(data)
        except ValidationError as e:
            raise from_validation_error(source, e) from None


def list_results(root: str | Path) -> list[Path]:
    """History files, oldest first."""
    folder = history_dir(root)
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime)


__all__ = ["history_dir", "history_path", "list_results", "load_result", "parse_result", "save_result"]
