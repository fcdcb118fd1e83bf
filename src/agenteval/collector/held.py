"""The conversations `agenteval collect` still held when it stopped, kept on disk for its next
start in the same directory (`Assembler.hold` / `restore`): a restart mid-conversation would
otherwise score the conversation's first part at the stop and its rest as a second case.

The file (`.agenteval/collect.held.json`) is JSON: `{"format": FORMAT, "conversations": [{"spans":
[...]}], "taken": [trace ids]}`, a span being `OtlpSpan`'s
fields (times in epoch seconds, attributes as read). It is written whole (a temporary file renamed
over it) or not at all, and removed once read back. Two `collect`s in one directory each add what
they held to it (under the folder's edit lock): the second to stop neither replaces nor removes
what the first kept.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agenteval.collector.assembler import Held
from agenteval.datasets.files import editing
from agenteval.errors import DataError
from agenteval.tracing.otlp_json import OtlpSpan, check_times

FORMAT = "agenteval collect: conversations held at stop, v1"


def held_path(root: str | Path) -> Path:
    """Where the history under `root` keeps the conversations held at stop."""
    return Path(root) / ".agenteval" / "collect.held.json"


def save(path: Path, held: Held) -> None:
    """Adds `held` to `path`: with what another `collect` in the directory kept there since this
    one started (it removed the file it read then), written whole; nothing held and nothing
    there leaves no file. A file there that is not one is a DataError naming it (kept as it is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with editing(path):  # (another collect stopping at the same time adds its own in turn)
        there = load(path)
        if there is not None:
            held = Held(there.conversations + held.conversations,
                        there.taken + [t for t in held.taken if t not in set(there.taken)])
        if not held.conversations and not held.taken:
            path.unlink(missing_ok=True)
            return
        _write(path, held)


def _write(path: Path, held: Held) -> None:
    document = {"format": FORMAT, "taken": held.taken, "conversations": [
        {"spans": [asdict(s) for s in spans]} for spans in held.conversations]}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(document, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _span(raw: Any, where: str, path: Path) -> OtlpSpan:
    if not isinstance(raw, dict):
        raise DataError(path, where, "a span must be an object")
    try:
        s = OtlpSpan(**raw)
    except TypeError as e:
        raise DataError(path, where, f"not a held span: {e}") from None
    texts = {"trace_id": s.trace_id, "span_id": s.span_id, "name": s.name, "status": s.status}
    for name, value in texts.items():
        if not isinstance(value, str):
            raise DataError(path, f"{where}.{name}", f"must be text, got {value!r}")
    times: dict[str, object] = {"start": s.start, "end": s.end}
    for key, seconds in times.items():
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                    or not math.isfinite(seconds)):
            raise DataError(path, f"{where}.{key}", f"must be epoch seconds, got {seconds!r}")
    if s.start is None:
        raise DataError(path, f"{where}.start", "field required")
    if not isinstance(s.attributes, dict) or not isinstance(s.resource, dict):
        raise DataError(path, f"{where}.attributes", "attributes and resource must be objects")
    check_times(s.start, s.end, f"{where}.end", path, s.name)
    return s


def load(path: Path) -> Held | None:
    """The conversations held at `path` (None when there is no such file); a file that is not
    one is a DataError naming it and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(path, "", f"cannot read: {e}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(path, "", f"malformed JSON ({e.msg}, line {e.lineno}): move it away to start "
                        "without the conversations it held") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise DataError(path, "format", f"not a file of conversations held by agenteval collect "
                        f"(expected {FORMAT!r})")
    taken, raw_conversations = document.get("taken"), document.get("conversations")
    if not isinstance(taken, list) or not all(isinstance(t, str) for t in taken):
        raise DataError(path, "taken", "must be a list of trace ids")
    if not isinstance(raw_conversations, list):
        raise DataError(path, "conversations", "must be a list")
    conversations = []
    for i, raw in enumerate(raw_conversations):
        where = f"conversations[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("spans"), list):
            raise DataError(path, where, "must be an object with a `spans` list")
        conversations.append([_span(s, f"{where}.spans[{k}]", path) for k, s in enumerate(raw["spans"])])
    return Held(conversations, taken)


__all__ = ["FORMAT", "held_path", "load", "save"]
