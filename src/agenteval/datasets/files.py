"""Reading JSON with located errors, and writing files atomically."""

from __future__ import annotations

import codecs
import gc
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from agenteval.datasets.nesting import MAX_RESULT_DEPTH, check_depth
from agenteval.errors import DataError

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None  # type: ignore[assignment]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pauses the cyclic GC, restoring its previous state on exit.

    Loading a large document builds millions of long-lived objects and no cycles; with the GC
    on, every allocation threshold rescans the growing graph (a 37 MB eval set: 4.0 s instead
    of 0.7 s).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def editing(path: str | Path) -> Iterator[None]:
    """Holds, across processes, the right to one read-modify-write of the file at `path` (an
    eval set that `eval_set` commands and the web add cases to): two commands adding a case each
    at once both read the set before either wrote it, and one case was lost. The lock is an
    advisory `flock` on the folder holding the file (the file itself is replaced by each
    atomic write, and may not exist yet), so edits in one folder take turns; without `fcntl`
    (Windows) nothing is locked."""
    if fcntl is None:  # pragma: no cover (Windows)
        yield
        return
    folder = Path(path).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a folder that cannot be made or read: the edit's own read or write says why
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def reading(path: str | Path) -> Iterator[None]:
    """Turns the OSError of reading the file at `path` into a DataError naming it."""
    try:
        yield
    except FileNotFoundError:
        raise DataError(path, "", "file not found") from None
    except IsADirectoryError:
        raise DataError(path, "", "is a directory, expected a JSON file") from None
    except OSError as e:
        raise DataError(path, "", f"cannot read: {e}") from None


def check_rereadable(path: str | Path, what: str = "") -> None:
    """DataError unless `path` is a regular file or does not exist (its reader says so then): an
    eval set or a recorded run is read more than once (its head, then its cases), which a pipe
    (`<(...)`) cannot be, and opening one with no writer waits for ever."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode):
        raise DataError(path, what, "is a directory, expected a file")
    if not stat.S_ISREG(mode):
        raise DataError(path, what, "is not a regular file (a pipe?): it is read more than once; "
                        "write it to a file first")


def read_bytes(path: str | Path) -> bytes:
    """A JSON file's bytes without a leading UTF-8 byte-order mark (Windows editors write one);
    a missing or unreadable file is a DataError naming it."""
    p = Path(path)
    with reading(p):
        data = p.read_bytes()
    return data[len(codecs.BOM_UTF8):] if data.startswith(codecs.BOM_UTF8) else data


def parse_json(file: str | Path | None, data: bytes, max_depth: int) -> Any:
    """Parses JSON bytes (UTF-8, a leading byte-order mark allowed). Malformed JSON, bytes that
    are not UTF-8 and nesting deeper than `max_depth` are DataErrors naming the file and where."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    check_depth(file, data, max_depth)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(file, "", f"cannot read: {e}") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        raise DataError(file, f"line {e.lineno} column {e.colno}", f"malformed JSON: {e.msg}") from None
    except _NonFinite as e:
        check_finite(file, data)  # names the place
        raise DataError(file, "", f"malformed JSON: {e} is not a JSON number") from None
    if _SURROGATE_ESCAPE.search(data):  # rare: only then is the parsed value walked
        _check_surrogates(file, value, "")
    return value


class _NonFinite(ValueError):
    """NaN, Infinity or -Infinity met by `json.loads` (see `check_finite`)."""


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


# A string (skipped whole) or a bare NaN / Infinity outside strings.
_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def check_finite(file: str | Path | None, data: bytes) -> None:
    """A DataError at `line L column C` of the first bare NaN / Infinity (outside a string):
    Python's parser and pydantic's take them, JSON and the streamed reader do not, so every
    path refuses them alike. Costs one byte search unless such a word is there."""
    if b"NaN" not in data and b"Infinity" not in data:
        return
    text = data.decode("utf-8", errors="replace")
    for m in _CONSTANT.finditer(text):
        if m.group(1):
            line = text.count("\n", 0, m.start(1)) + 1
            column = m.start(1) - text.rfind("\n", 0, m.start(1))
            raise DataError(file, f"line {line} column {column}",
                            f"malformed JSON: {m.group(1)} is not a JSON number (JSON numbers are "
                            "finite; agenteval writes such values as strings)")


# A \uD800-\uDFFF escape: JSON allows one alone, UTF-8 (so no file agenteval writes) cannot hold it.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _check_surrogates(file: str | Path | None, value: Any, where: str) -> None:
    """A DataError at the first string (or key) holding an unpaired surrogate."""
    if isinstance(value, str):
        if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise DataError(file, where, "holds an unpaired UTF-16 surrogate (a \\uD800-\\uDFFF escape "
                            "alone), which UTF-8 cannot hold")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_surrogates(file, k, f"{where}.{k}" if where else str(k))
            _check_surrogates(file, v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_surrogates(file, v, f"{where}[{i}]")


def read_json(path: str | Path, max_depth: int = MAX_RESULT_DEPTH) -> Any:
    """Parses a JSON file; a missing file, malformed JSON and nesting deeper than `max_depth`
    are DataErrors naming the file (and the place). The default is the limit for result
    documents; the files a user writes are read with `nesting.MAX_DEPTH`."""
    return parse_json(path, read_bytes(path), max_depth)


def write_text_atomic(path: str | Path, text: str | bytes) -> None:
    """Writes via a temporary file and a rename, so a crash never leaves a partial file."""
    _write_chunks_atomic(path, [text.encode("utf-8") if isinstance(text, str) else text])


def _write_chunks_atomic(path: str | Path, chunks: Iterable[bytes]) -> None:
    # One way of writing for every output (atomic for files, streamed for FIFOs and devices,
    # through symbolic links): see agenteval.datasets.targets.
    from agenteval.datasets.targets import write_target

    write_target(path, chunks)


def write_model(path: str | Path, model: BaseModel, *, exclude_none: bool = True) -> None:
    """Writes a wire model as indented snake_case JSON, atomically.

    Top-level lists of models (a result's cases, a set's cases) are serialised item by item,
    with the same bytes as in one piece: a 260 MB result document in one buffer, plus its copy,
    cost 1–2 s of page faults and 500 MB of peak memory.
    """
    _write_chunks_atomic(path, _json_chunks(model, exclude_none))


def write_as_read(path: str | Path, model: BaseModel) -> None:
    """Writes a model read from a user's file (an eval set) with the keys it was read with,
    explicit nulls included, and the fields set since; a field neither given nor set is left
    out, as it was. `write_model` would drop the nulls, and a reader then takes the default,
    which is not always null (an eval case's `final_session_state` null would come back `{}`):
    an edit of one case must change nothing else in the file."""
    _write_chunks_atomic(path, _json_chunks(model, False, exclude_unset=True))


def _dump(model: BaseModel, exclude_none: bool, exclude_unset: bool = False) -> bytes:
    # Serialised straight to bytes by pydantic-core: no intermediate str for large documents.
    return model.__pydantic_serializer__.to_json(model, indent=2, exclude_none=exclude_none,
                                                 exclude_unset=exclude_unset)


@cache
def _list_fields(cls: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Fields typed `list[M]` (M a model) that serialise as their items do on their own."""
    decorators = cls.__pydantic_decorators__
    if decorators.model_serializers:
        return {}
    custom = {name for d in decorators.field_serializers.values() for name in d.info.fields}
    found: dict[str, type[BaseModel]] = {}
    for name, info in cls.model_fields.items():
        args = get_args(info.annotation)
        if (get_origin(info.annotation) is list and len(args) == 1 and isinstance(args[0], type)
                and issubclass(args[0], BaseModel) and not info.exclude and name not in custom):
            found[name] = args[0]
    return found


def shell_pieces(model: BaseModel, names: Sequence[str], exclude_none: bool,
                 exclude_unset: bool = False) -> list[bytes] | None:
    """`_dump(model)` cut where its (empty) list fields `names` are, in document order: piece
    0 ends with the first list's `"name": [`, each next piece starts with that list's `]` and
    ends with the next one's `[`, the last ends the document (with a newline). Items written
    between the pieces by `list_item` give the document `_dump` would write with the lists
    filled. None when a list's place cannot be found unambiguously."""
    # A list serialises, at indentation depth 1, as `"name": [` + each item (its own pretty JSON
    # indented by 4 more spaces) + `]`; JSON strings hold no raw newline, so re-indenting is a
    # replace. Each list is cut out of the rest of the document at its unique `[]` placeholder.
    rest = _dump(model, exclude_none, exclude_unset)
    markers = {name: b'\n  "' + name.encode() + b'": []' for name in names}
    if any(rest.count(marker) != 1 for marker in markers.values()):
        return None
    pieces = []
    opening = b""
    for name in sorted(names, key=lambda n: rest.index(markers[n])):
        before, _, rest = rest.partition(markers[name])
        pieces.append(opening + before + markers[name][:-1])
        opening = b"\n  ]"
    pieces.append(opening + rest + b"\n")
    return pieces


def list_item(item: BaseModel, index: int, exclude_none: bool, exclude_unset: bool = False) -> bytes:
    """Item `index` of a list field placed by `shell_pieces`."""
    return (b",\n    " if index else b"\n    ") + _dump(item, exclude_none, exclude_unset).replace(
        b"\n", b"\n    ")


def _json_chunks(model: BaseModel, exclude_none: bool, exclude_unset: bool = False) -> Iterator[bytes]:
    """`_dump(model)` and a newline, in pieces: each streamed list's items one at a time."""
    lists = {name: value for name, item_type in _list_fields(type(model)).items()
             if isinstance(value := getattr(model, name), list) and value
             and all(type(item) is item_type for item in value)}
    pieces = shell_pieces(model.model_copy(update={name: [] for name in lists}), list(lists),
                          exclude_none, exclude_unset) if lists else None
    if pieces is None:
        yield _dump(model, exclude_none, exclude_unset) + b"\n"
        return
    order = sorted(lists, key=lambda n: _field_index(type(model), n))
    for piece, name in zip(pieces, order, strict=False):
        yield piece
        for i, item in enumerate(lists[name]):
            yield list_item(item, i, exclude_none, exclude_unset)
    yield pieces[-1]


def _field_index(cls: type[BaseModel], name: str) -> int:
    return list(cls.model_fields).index(name)
