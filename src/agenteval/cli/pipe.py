"""Output read by a consumer that stops reading (`agenteval score ... --history | head -1`).

Python raises BrokenPipeError at the first write after the reader has gone. Raised inside a
command it ended the command there, with exit 1 and no message, before its run was written
and recorded in the history: what a user piped away for a glance was lost. Instead, once a
stream's reader is gone, the rest of what the command prints to it is dropped and the command
goes on, writes its outputs, records its run and exits with the run's own code.
"""

from __future__ import annotations

import os
from typing import Any, TextIO


class _Outlet:
    """`stream` (sys.stdout or sys.stderr) whose writes and flushes, once its reader has gone,
    are dropped instead of raising; everything else is the stream's own. Its `buffer` (where
    bytes are written: click.echo of bytes, the streamed JUnit report) is guarded with it: a
    reader gone for one is gone for both."""

    def __init__(self, stream: Any, owner: _Outlet | None = None) -> None:
        self._stream = stream
        self._owner = owner or self
        self._gone = False
        self._buffer: _Outlet | None = None

    @property
    def buffer(self) -> Any:
        if self._buffer is None:
            self._buffer = _Outlet(self._stream.buffer, owner=self._owner)
        return self._buffer

    def write(self, text: Any) -> int:
        if not self._owner._gone:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self._owner._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._lose()

    def _lose(self) -> None:
        self._owner._gone = True
        # What the stream still buffers would raise again at the interpreter's exit (its
        # "Exception ignored" lines): its file descriptor now points to the null device.
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self._stream.fileno())
        finally:
            os.close(null)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard(stream: TextIO) -> TextIO:
    """`stream`, its writes dropped instead of raising once its reader has gone."""
    return _Outlet(stream)  # type: ignore[return-value]  # (a stand-in: duck-typed as TextIO)


__all__ = ["guard"]
