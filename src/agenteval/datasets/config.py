"""Loading eval configs and finding the `test_config.json` beside an eval set."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from agenteval.datasets.files import read_json
from agenteval.datasets.nesting import MAX_DEPTH
from agenteval.errors import DataError, from_validation_error
from agenteval.schema import EvalConfig


def load_eval_config(path: str | Path) -> EvalConfig:
    """Parses a config file; unknown top-level keys are errors (ADK ignores them).

    Unlike ADK, a config path that does not exist is an error, not a silent use of defaults.
    """
    data = read_json(path, MAX_DEPTH)
    if not isinstance(data, dict):
        raise DataError(path, "", "expected a JSON object with `criteria`")
    try:
        config = EvalConfig.model_validate(data)
    except ValidationError as e:
        raise from_validation_error(path, e) from None
    _refuse_unused_custom_metrics(path, config, "criteria" in data)
    return config


def _refuse_unused_custom_metrics(path: str | Path, config: EvalConfig, has_criteria: bool) -> None:
    # A custom metric runs only if `criteria` names it (as in ADK, which then skips it
    # silently): declared alone, it left the run green without ever being scored.
    for name in config.custom_metrics or {}:
        if name not in config.criteria:
            where = ("`criteria`" if has_criteria else
                     "`criteria` (absent from this file: the default criteria run)")
            raise DataError(path, f"custom_metrics.{name}",
                            f"declared but not named in {where}, so it would never run; add "
                            f'"{name}": <threshold> to criteria, or remove it')


def default_config_for(eval_set_path: str | Path) -> tuple[EvalConfig, Path | None]:
    """The `test_config.json` beside an eval set if there is one, else the default criteria."""
    candidate = Path(eval_set_path).parent / "test_config.json"
    if candidate.is_file():
        return load_eval_config(candidate), candidate
    return EvalConfig(), None
