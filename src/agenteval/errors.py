"""Errors raised for bad input: each names the file and the JSON path at fault."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError


class AgentEvalError(Exception):
    """Base class of agenteval's own errors."""


class DataError(AgentEvalError):
    """Bad input data: `file: path: message` on one line."""

    def __init__(self, file: str | Path | None, path: str, message: str) -> None:
        self.file = str(file) if file is not None else None
        self.path = path
        self.message = message
        where = ": ".join(p for p in (self.file, path) if p)
        super().__init__(f"{where}: {message}" if where else message)


class SettingError(ValueError):
    """A bad value below the setting being read, at `where` (a dotted path from it, e.g.
    `args_match.TOOL.ARG`): whoever reads the setting names `SETTING.where`."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where


def json_path(loc: Sequence[int | str], prefix: str = "") -> str:
    """Renders a pydantic location as `eval_cases[3].conversation[0].user_content`.

    Union-member tags (class names such as `IntermediateData`, `function-after[...]`) are
    dropped: they name pydantic's internals, not keys of the file.
    """
    out = prefix
    for item in loc:
        if isinstance(item, int):
            out += f"[{item}]"
        elif item[:1].isupper() or "[" in item or item in {"str", "float", "int", "bool"}:
            continue
        else:
            out += f".{item}" if out else item
    return out


def from_validation_error(
    file: str | Path | None, err: ValidationError, prefix: str = ""
) -> DataError:
    """The first problem of a validation error, as a DataError. When the value is a union's,
    pydantic reports one problem per member, the first at the field itself; a member's problem
    deeper inside the value (`mock_tools.roll` for `{"roll": "x"}`) is the one named, since it is
    the member the value's shape chose."""
    errors = err.errors()
    first, path = errors[0], json_path(errors[0]["loc"], prefix)
    for other in errors[1:]:
        deeper = json_path(other["loc"], prefix)
        if deeper.startswith((f"{path}.", f"{path}[")) and len(deeper) > len(path):
            first, path = other, deeper
    message = first["msg"]
    if first["type"] == "missing":
        message = "field required"
    elif first["type"] == "extra_forbidden":
        message = "unknown key"
    elif first["type"] == "string_too_short" and first.get("ctx", {}).get("min_length") == 1:
        message = "must not be empty"
    return DataError(file, path, message)


def unwrap(exc: BaseException) -> BaseException:
    """The first exception an exception group (e.g. from a task group) wraps, however deep;
    any other exception as it is."""
    # Duck-typed: BaseExceptionGroup is built in from Python 3.11 only (anyio backports it).
    while isinstance(getattr(exc, "exceptions", None), tuple) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


_PLACED = "_agenteval_placed"


def placed(exc: BaseException) -> BaseException:
    """`exc`, marked as saying in its message where it comes from (the user's code it is about):
    `describe` then adds no `(at ...)`, which would name agenteval's line that raised it."""
    setattr(exc, _PLACED, True)  # in the instance's __dict__: kept when pickled from a worker
    return exc


def describe(exc: BaseException) -> str:
    """One line saying what went wrong: `Type: message (at file:line)`, for the exception an
    exception group (e.g. from a task group) wraps rather than for the group, so the cause is
    never reduced to "unhandled errors in a TaskGroup". An `AgentEvalError` has no `(at ...)`:
    its message names what the user can act on, and the line is agenteval's own."""
    import traceback

    exc = unwrap(exc)
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    if isinstance(exc, AgentEvalError) or getattr(exc, _PLACED, False):
        where = ""
    text = str(exc)
    if isinstance(exc, SystemExit):
        text = f"the agent called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {text}{where}" if text else f"{type(exc).__name__}{where}"


# Loggers that log an agent's exception with its traceback before raising it on to agenteval,
# which records it on the case: google-adk logs each failing turn twice (the node, then the
# runner), about 90 lines each, so a run with failing cases buried its report under them.
_RERAISING = ("google_adk",)


class OneLineErrors(logging.Filter):
    """Writes a record of a `_RERAISING` logger that carries an exception as one line: its
    message, then the exception as `describe` says it. Other records pass as they are."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None and record.name.startswith(_RERAISING):
            record.msg = f"{record.getMessage().rstrip('.')}: {describe(record.exc_info[1])}"
            record.args = None
            record.exc_info = record.exc_text = None
        return True


def configure_logging(level: str | int) -> None:
    """For a process's main (the CLI, an isolation worker): the root logger at `level`, written
    to standard error; above DEBUG, the tracebacks `OneLineErrors` names are one line each."""
    logging.basicConfig(level=level.upper() if isinstance(level, str) else level)
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        for handler in logging.getLogger().handlers:
            if not any(isinstance(f, OneLineErrors) for f in handler.filters):
                handler.addFilter(OneLineErrors())
