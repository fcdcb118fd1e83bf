"""The embedded engine's slots, and the shared prompt prefixes they hold, kept on disk.

A judge asks every question of a criterion behind the same long prefix (system prompt and
solved examples, 1,100-2,600 tokens). llama.cpp keeps a prefix it has evaluated in the slot
that evaluated it (and in its RAM prompt cache), so within a process only the first question
pays for it; but every new process paid again: about 30 s per criterion on an idle 2-core
machine, 8 minutes under load, before its first verdict. Here that evaluated state is saved to
a file once (`/slots/N?action=save`: ~29 KB per token, a few ms) and restored into a slot
(`action=restore`) the first time a process needs it, so a fresh process starts warm.

`SlotTable` assigns each call a slot itself (`id_slot`), preferring the free slot whose
conversation shares the most leading messages with the call's (so an agent's next step goes
back to the slot holding its conversation so far), and remembers what each slot holds
(`message_chain`: one hash per leading run of messages). The prefix of a call is everything but
its last message (`prefix_key`). A prefix that no slot holds and no file has is *cold*: the
first call evaluates it, and concurrent calls with the same prefix wait for it instead of
every slot evaluating the same 2,000 tokens at once (on a CPU, evaluating prompt tokens is
arithmetic-bound: four at once cost four times one). Only a prefix asked for by two calls or
more is saved (a judge's, not each step of one agent conversation).

Files live in `directory`, named by a hash of the model, the engine version and the prefix's
messages; at most `max_files` are kept (least recently used removed). A file that cannot be
written or restored is not an error: the call then evaluates its prompt as it would have.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["SAVE_MIN_TOKENS", "SlotTable", "message_chain", "prefix_key"]

log = logging.getLogger(__name__)

SAVE_MIN_TOKENS = 512  # a prefix shorter than this is cheap to evaluate again: not saved
MAX_FILES = 8  # ~80 MB each for a criterion's examples; kept least recently used first

Post = Callable[[str, dict[str, Any]], dict[str, Any]]


def message_chain(body: dict[str, Any], salt: str) -> tuple[str, ...]:
    """One hash per leading run of the call's messages (the first, the first two, ...), each
    made from the one before: two calls share the first k hashes exactly when they share their
    first k messages. `salt` names the model and engine the state was computed with."""
    chain, previous = [], salt
    for message in body.get("messages") or []:
        text = previous + json.dumps(message, sort_keys=True, ensure_ascii=False)
        previous = hashlib.sha256(text.encode()).hexdigest()[:40]
        chain.append(previous)
    return tuple(chain)


def prefix_key(body: dict[str, Any], salt: str) -> str | None:
    """The hash naming a call's shared prefix (every message but the last), or None when it
    has no earlier message."""
    chain = message_chain(body, salt)
    return chain[-2] if len(chain) >= 2 else None


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def http_post(base_url: str, api_key: str) -> Post:
    """A POST of JSON to the engine's own HTTP listener (slot actions have no in-process call),
    never through a proxy the environment names."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            base_url + path, data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"})
        with opener.open(request, timeout=60) as reply:
            result = json.loads(reply.read())
        return result if isinstance(result, dict) else {}
    return post


class SlotTable:
    """Slot assignment and the on-disk prefix states of one engine (thread-safe: calls run in
    worker threads)."""

    def __init__(self, slots: int, directory: Path | None, post: Post | None, salt: str,
                 max_files: int = MAX_FILES) -> None:
        """`directory` None (or `post` None): no files, slots are still assigned."""
        self._held: list[tuple[str, ...]] = [()] * slots  # each slot's message chain
        self._used: list[float] = [0.0] * slots
        self._free = set(range(slots))
        self._cond = threading.Condition()
        self._warming: dict[str, threading.Event] = {}
        self._wanted: dict[str, int] = {}  # calls that asked for each prefix
        self._big: set[str] = set()  # prefixes evaluated at SAVE_MIN_TOKENS or more
        self.directory, self._post, self.salt, self.max_files = directory, post, salt, max_files
        self.saved = self.restored = 0  # counts, for benchmarks

    def _file(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / f"{key}.bin"

    def _has_file(self, key: str) -> bool:
        path = self._file(key)
        return path is not None and self._post is not None and path.is_file()

    def _holds(self, key: str) -> bool:
        return any(key in chain for chain in self._held)

    def acquire(self, key: str | None, chain: tuple[str, ...] = ()) -> tuple[int, bool]:
        """A free slot for a call with prefix `key` and message chain `chain` (blocking until
        one is free), and whether this call is the one to evaluate a cold prefix (then
        `release` must be told). Concurrent calls with a cold prefix wait here until its first
        call is done."""
        with self._cond:
            if key is not None:
                if len(self._wanted) > 10_000:  # one entry per distinct prefix: keep it bounded
                    self._wanted.clear()
                self._wanted[key] = self._wanted.get(key, 0) + 1
            while True:
                if key is not None and not self._holds(key) and not self._has_file(key):
                    event = self._warming.get(key)
                    if event is not None:  # another call is evaluating this prefix
                        self._cond.wait_for(event.is_set)
                        continue
                    warming = True
                else:
                    warming = False
                if not self._free:
                    self._cond.wait()
                    continue
                slot = self._choose(key, chain)
                self._free.discard(slot)
                if warming and key is not None:
                    self._warming[key] = threading.Event()
                return slot, warming

    def _choose(self, key: str | None, chain: tuple[str, ...]) -> int:
        # The most leading messages in common (a slot holding the prefix shares at least all
        # but the last); then an empty slot; then the least recently used.
        return min(self._free, key=lambda s: (-_common(self._held[s], chain),
                                              bool(self._held[s]), self._used[s]))

    def prepare(self, slot: int, key: str | None) -> None:
        """Restores `key`'s saved state into `slot` unless the slot holds it already."""
        path = self._file(key) if key is not None else None
        if key is None or key in self._held[slot] or path is None or self._post is None \
                or not path.is_file():
            return
        try:
            reply = self._post(f"/slots/{slot}?action=restore", {"filename": path.name})
        except Exception as exc:  # a stale or foreign file: evaluate the prompt instead
            log.info("could not restore prompt state %s: %s", path.name, exc)
            return
        if reply.get("n_restored"):
            self.restored += 1
            with contextlib.suppress(OSError):
                path.touch()

    def release(self, slot: int, key: str | None, warming: bool, evaluated: int,
                chain: tuple[str, ...] = ()) -> None:
        """After the call in `slot`: the slot now holds `chain` (and so `key`); a prefix
        evaluated afresh (`evaluated` prompt tokens, at least SAVE_MIN_TOKENS) that two calls
        or more asked for is saved to its file; calls waiting for a cold prefix go on."""
        path = self._file(key) if key is not None else None
        shared = key is not None and self._wanted.get(key, 0) >= 2
        if path is not None and self._post is not None and shared and not path.is_file() \
                and (evaluated >= SAVE_MIN_TOKENS or key in self._big):
            self._save(slot, path)
        elif key is not None and evaluated >= SAVE_MIN_TOKENS:
            self._big.add(key)  # saved once another call asks for it
        with self._cond:
            self._held[slot] = chain or ((key,) if key else ())
            self._used[slot] = time.monotonic()
            self._free.add(slot)
            if warming and key is not None:
                event = self._warming.pop(key, None)
                if event is not None:
                    event.set()
            self._cond.notify_all()

    def _save(self, slot: int, path: Path) -> None:
        # Written under a temporary name and renamed: a concurrent process never restores half
        # a file. llama.cpp writes into its own save directory, which is `path`'s.
        temp = f"{path.stem}-{threading.get_ident()}.part"
        assert self._post is not None
        try:
            self._post(f"/slots/{slot}?action=save", {"filename": temp})
            (path.parent / temp).replace(path)
            self.saved += 1
        except Exception as exc:
            log.info("could not save prompt state %s: %s", path.name, exc)
            with contextlib.suppress(OSError):
                (path.parent / temp).unlink()
            return
        self._prune(path.parent)

    def _prune(self, directory: Path) -> None:
        with contextlib.suppress(OSError):
            files = sorted(directory.glob("*.bin"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in files[self.max_files:]:
                old.unlink()
