"""Reading JSON with located errors, and writing files atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agenteval.errors import DataError


def read_json(path: str | Path) -> Any:
    """Parses a JSON file; a missing file or malformed JSON is a DataError naming the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(p, "", "file not found") from None
    except IsADirectoryError:
        raise DataError(p, "", "is a directory, expected a JSON file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(p, "", f"cannot read: {e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(p, f"line {e.lineno} column {e.colno}", f"malformed JSON: {e.msg}") from None


def write_text_atomic(path: str | Path, text: str | bytes) -> None:
    """Writes via a temporary file and a rename, so a crash never leaves a partial file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8") if isinstance(text, str) else text)
        # mkstemp creates 0600; give the file the permissions an ordinary write would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_model(path: str | Path, model: BaseModel, *, exclude_none: bool = True) -> None:
    """Writes a wire model as indented snake_case JSON, atomically."""
    # Serialised straight to bytes by pydantic-core: no intermediate str for large documents.
    data = model.__pydantic_serializer__.to_json(model, indent=2, exclude_none=exclude_none)
    write_text_atomic(path, data + b"\n")
