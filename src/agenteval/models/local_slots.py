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
back to the slot holding its conversation so far), then the most leading text of the call's
last message, and remembers what each slot holds (`message_chain`: one hash per leading run of
messages; `message_texts`: the messages themselves). The prefix of a call is everything but its
last message (`prefix_key`); a reply begun in the prompt (a trailing assistant message) is not
a message here (`conversation`).

Questions that share text inside their last message (the sentences of one response checked
against the same context, the questions about one labelled conversation) go to the slot holding
that text, queued behind the call running there, instead of each evaluating the shared text in
a slot of its own: several of them are in flight at once, so before this each landed in another
slot and evaluated the context again, once per sentence. A call queues when a busy slot shares
at least `QUEUE_MIN_CHARS` more of its last message than any free slot and more than the text
every question with this prefix starts with (`_heads`: the fixed instructions of a criterion's
questions, which every slot comes to hold once, so questions of different cases still run side
by side). An agent's or simulator's steps are not affected: each step's earlier messages are its
own, so no other call shares them. A prefix that no slot holds and no file has is *cold*: the
first call evaluates it, and concurrent calls with the same prefix wait for it instead of
every slot evaluating the same 2,000 tokens at once (on a CPU, evaluating prompt tokens is
arithmetic-bound: four at once cost four times one). Likewise a call whose long prefix only busy
slots hold, with no file yet, waits for one of them (which then saves it) rather than evaluate
it all again in an empty slot (`_wait_for_holder`). Only a prefix asked for by two calls or
more is saved (a judge's, not each step of one agent conversation), or one asked for by a call
whose reply is begun in the prompt (`begun`: a judge's question, behind the fixed system prompt
and examples of its criterion), saved when first evaluated: a run that asks a criterion once
(one case, one invocation) would otherwise evaluate it cold in every process. Likewise an agent's
or the user simulator's *head*: a call whose prefix is its system message alone (an agent's first
step, with the tool declarations the chat template renders after it, which `message_chain` counts
in; every simulator turn) is saved when first evaluated at `HEAD_MIN_TOKENS` or more, so the
README's one-case run, whose agent asks its head once, starts warm in the next process (476
tokens, ~60% of its wall time, evaluated cold before). Heads are files of their own (`HEAD_FILE`
names, at most `max_files` of them, least recently used removed): a run of many scenarios, each
with its own simulator head, never evicts a judge's criterion files.

A judge's verdict may be asked in several calls (the label, then its rationale; a cross-check's
notes one field at a time: `criteria.judge.engine.prefill`), each the one before continued: the
same messages, a longer reply begun in the prompt. Such a follow-up evaluates only the few new
tokens in the slot holding the rest, so a slot released by a call whose reply was begun is *kept*
for `hold` seconds (`HOLD_SECONDS`) for a call whose messages extend the ones it holds: the
follow-up comes from the same coroutine a moment later, and without the hold a call waiting for a
free slot took it first, and the follow-up evaluated its question's differing tail again in
another slot (tens of tokens: ~0.4 s on a quiet 2-core machine, against the ~0.2 s the split
saves). The hold ends early when the same caller (`owner`: the asking task, whose calls are one
after another) asks something else: the follow-up is then not coming (a passing verdict's label
is its only call, and its task goes on to its next question). Otherwise, after the hold, the slot
goes on as any released slot; a kept slot is idle only while other calls wait for one, at most
`hold` seconds per judge call, and calls that share its text queue behind it as behind a busy
slot.

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

__all__ = ["HEAD_MIN_TOKENS", "HOLD_SECONDS", "QUEUE_MIN_CHARS", "SAVE_MIN_TOKENS", "SlotTable", "begun",
           "conversation", "is_head", "message_chain", "message_texts", "prefix_key"]

log = logging.getLogger(__name__)

SAVE_MIN_TOKENS = 512  # a prefix shorter than this is cheap to evaluate again: not saved
# An agent's or simulator's head (see the module) is saved from this many evaluated tokens. A
# restore reads ~29 KB a token (a few ms for hundreds of tokens, from the page cache) where a
# token evaluated costs ~35 ms on this 2-core machine, so any head pays in time; the bound is
# the disk (~2 MB at 64 tokens) for heads too short to matter (64 tokens: ~2 s here).
HEAD_MIN_TOKENS = 64
HEAD_FILE = "head-"  # the file name's start for heads (their own least-recently-used pool)
MAX_FILES = 8  # per pool: ~80 MB each for a criterion's examples, ~15 MB for an agent's head
# A call waits for the busy slot holding this much more of its last message (characters, ~4 per
# token) rather than evaluate it again in a free slot: a hallucination question's context is
# 150-300 characters; on a CPU each token evaluated again costs what it cost the first time.
QUEUE_MIN_CHARS = 120
# How long a slot released by a judge's call is kept for that call's follow-up (see the module):
# the follow-up arrives within milliseconds (measured by bench/bench_slot_hold.py); a verdict
# takes 2-3 s, so a hold that expires unused costs a waiting call at most ~1% of one.
HOLD_SECONDS = 0.02

Post = Callable[[str, dict[str, Any]], dict[str, Any]]


def begun(body: dict[str, Any]) -> bool:
    """Whether the call's reply is begun in the prompt: its last message is an assistant's
    after another message (see `conversation`)."""
    messages = body.get("messages") or []
    return len(messages) >= 2 and messages[-1].get("role") == "assistant"


def conversation(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The call's messages, less a reply begun in the prompt: a trailing assistant message after
    another message (a judge's fixed JSON head, `criteria.judge.engine.prefill`) is the start of
    the reply, not a turn of the conversation, so the question before it stays the call's last
    message and the prefix is what comes before the question (with the head counted as the last
    message, every question's prefix would hold the question itself: no two calls would share
    one, no file would be saved, and an empty slot would evaluate the whole prompt)."""
    messages = list(body.get("messages") or [])
    return messages[:-1] if begun(body) else messages


def message_chain(body: dict[str, Any], salt: str) -> tuple[str, ...]:
    """One hash per leading run of the call's messages (`conversation`: the first, the first
    two, ...), each made from the one before: two calls share the first k hashes exactly when
    they share their first k messages and their declared `tools` (the chat template renders
    them into the first message). `salt` names the model and engine the state was computed
    with."""
    chain, previous = [], salt
    if body.get("tools"):  # none (a judge's call): the hashes are the messages' alone
        previous += json.dumps(body["tools"], sort_keys=True, ensure_ascii=False)
    for message in conversation(body):
        text = previous + json.dumps(message, sort_keys=True, ensure_ascii=False)
        previous = hashlib.sha256(text.encode()).hexdigest()[:40]
        chain.append(previous)
    return tuple(chain)


Texts = tuple[tuple[str, str], ...]


def message_texts(body: dict[str, Any]) -> Texts:
    """(role, content) of each of the call's messages (`conversation`), content as text (parts
    as JSON)."""
    out = []
    for message in conversation(body):
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
        out.append((str(message.get("role")), text))
    return tuple(out)


def is_head(chain: tuple[str, ...], texts: Texts, fixed: bool) -> bool:
    """Whether a call's prefix is an agent's or simulator's head (see the module): its
    conversation is a system message and one more (`texts`, as `message_texts` gives them), and
    its reply is not begun in the prompt (`fixed`: a judge's question, saved by its own rule)."""
    return not fixed and len(chain) == 2 and len(texts) == 2 and texts[0][0] == "system"


def _lead(a: str, b: str) -> int:
    """Length of the longest common leading text of `a` and `b`."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]: halve (slices compare in C)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def prefix_key(body: dict[str, Any], salt: str) -> str | None:
    """The hash naming a call's shared prefix (every message of its `conversation` but the
    last), or None when it has no earlier message."""
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
        self._texts: list[Texts] = [()] * slots  # and its messages, for text shared inside one
        # The call running in each busy slot (its chain and messages), and the calls queued
        # behind it (FIFO; `release` hands the slot to the first).
        self._running: dict[int, tuple[tuple[str, ...], Texts]] = {}
        self._queues: dict[int, list[threading.Event]] = {}
        self._heads: dict[str, str] = {}  # per prefix: the text its last messages all start with
        self._used: list[float] = [0.0] * slots
        self._free = set(range(slots))
        # Slots kept for a follow-up call (see the module): the messages held, until when, and
        # the caller whose follow-up it is; and the caller of each busy slot's call.
        self._kept: dict[int, tuple[tuple[str, ...], float, object]] = {}
        self._owners: dict[int, object] = {}
        self.hold = HOLD_SECONDS  # 0: no slot is kept (as before; benchmarks)
        self._cond = threading.Condition()
        self._warming: dict[str, threading.Event] = {}
        self._wanted: dict[str, int] = {}  # calls that asked for each prefix
        self._big: set[str] = set()  # prefixes evaluated at SAVE_MIN_TOKENS or more
        self._head_keys: set[str] = set()  # prefixes that are heads (`is_head`): their own files
        self._unsaved: set[str] = set()  # prefixes whose file could not be written
        self.directory, self._post, self.salt, self.max_files = directory, post, salt, max_files
        self.saved = self.restored = self.queued = self.continued = 0  # counts, for benchmarks
        self.by_text = True  # False: slots chosen by whole messages only (as before; benchmarks)

    def _file(self, key: str) -> Path | None:
        if self.directory is None:
            return None
        return self.directory / f"{HEAD_FILE if key in self._head_keys else ''}{key}.bin"

    def _has_file(self, key: str) -> bool:
        path = self._file(key)
        return path is not None and self._post is not None and path.is_file()

    def _holds(self, key: str) -> bool:
        return any(key in chain for chain in self._held)

    def acquire(self, key: str | None, chain: tuple[str, ...] = (),
                texts: Texts = (), owner: object = None, fixed: bool = False) -> tuple[int, bool]:
        """A free slot for a call with prefix `key`, message chain `chain` and messages `texts`
        (blocking until one is free, or until the busy slot holding the text it shares is; see
        the module), and whether this call is the one to evaluate a cold prefix (then `release`
        must be told). Concurrent calls with a cold prefix wait here until its first call is
        done. `owner` names the caller (None: unknown), whose calls come one after another: its
        slot kept for a follow-up is taken by this call if this is the follow-up, else handed
        on (see the module). `fixed`: the call's reply is begun in the prompt (`is_head`)."""
        with self._cond:
            if key is not None:
                if len(self._wanted) > 10_000:  # one entry per distinct prefix: keep it bounded
                    self._wanted.clear()
                    self._heads.clear()
                    self._big.clear()
                    self._unsaved.clear()
                    self._head_keys.clear()
                self._wanted[key] = self._wanted.get(key, 0) + 1
                if is_head(chain, texts, fixed):
                    self._head_keys.add(key)
            while True:
                self._expire(owner, chain)
                kept = self._continuing(chain)
                if kept is not None:  # the follow-up of the call that released it
                    del self._kept[kept]
                    self._running[kept] = (chain, texts)
                    self._owners[kept] = owner
                    self.continued += 1
                    return kept, False
                if key is not None and not self._holds(key) and not self._has_file(key):
                    event = self._warming.get(key)
                    if event is not None:  # another call is evaluating this prefix
                        self._cond.wait_for(event.is_set)
                        continue
                    warming = True
                else:
                    warming = False
                if not self._free or (not warming and self._wait_for_holder(key)):
                    self._cond.wait(self._until_expiry())
                    continue
                slot = self._choose(key, chain, texts)
                behind = None if warming else self._behind(key, chain, texts, slot)
                if behind is not None:
                    granted = threading.Event()
                    self._queues.setdefault(behind, []).append(granted)
                    self.queued += 1
                    while not granted.is_set():  # a kept slot is handed on when its hold ends
                        self._cond.wait(self._until_expiry())
                        self._expire()
                    slot = behind  # handed over by `release`, never put back in `_free`
                self._free.discard(slot)
                self._running[slot] = (chain, texts)
                self._owners[slot] = owner
                if warming and key is not None:
                    self._warming[key] = threading.Event()
                return slot, warming

    def kept_for(self, chain: tuple[str, ...]) -> bool:
        """Whether a slot is kept for a call with message chain `chain` (its follow-up)."""
        with self._cond:
            self._expire()
            return self._continuing(chain) is not None

    def _continuing(self, chain: tuple[str, ...]) -> int | None:
        """The kept slot whose messages `chain` extends (or repeats), if any."""
        fits = [(len(held), s) for s, (held, _, _) in self._kept.items()
                if held and chain[:len(held)] == held]
        return max(fits)[1] if fits else None

    def _until_expiry(self) -> float | None:
        """Seconds until the first hold ends (None: no slot is kept): how long a waiter sleeps."""
        if not self._kept:
            return None
        return max(0.0, min(until for _, until, _ in self._kept.values()) - time.monotonic())

    def _expire(self, owner: object = None, chain: tuple[str, ...] = ()) -> None:
        """Hands on every kept slot whose hold has ended, or that is kept for `owner` when its
        call `chain` does not extend what the slot holds (the follow-up is not coming). Called
        by waiting and arriving calls: no timer thread."""
        now = time.monotonic()
        ended = [s for s, (held, until, mine) in self._kept.items() if until <= now or (
            owner is not None and mine == owner and chain[:len(held)] != held)]
        for slot in ended:
            del self._kept[slot]
            self._hand_on(slot)
        if ended:
            self._cond.notify_all()

    def _hand_on(self, slot: int) -> None:
        """A slot no call runs in or is kept for goes to the first call queued behind it, or is
        free."""
        queue = self._queues.get(slot)
        if queue:  # a call queued behind this one takes the slot as it is
            queue.pop(0).set()
        else:
            self._queues.pop(slot, None)
            self._free.add(slot)

    def _wait_for_holder(self, key: str | None) -> bool:
        """Whether a call should wait for a busy slot holding its prefix rather than take a free
        one: the prefix is long (evaluated at SAVE_MIN_TOKENS or more), no free slot holds it and
        no file has it yet (it is saved when the holder is released, being asked for again), so
        a free slot would evaluate all of it (~2,000 tokens, ~35 s on 2 cores) where the wait is
        one call (a verdict: 2-3 s). Only where files can be written (else each slot evaluates
        it once, rather than every call waiting for one slot) and not for a prefix that could
        not be saved."""
        if key is None or self.directory is None or self._post is None or key not in self._big \
                or key in self._unsaved or self._has_file(key):
            return False
        holders = [s for s in range(len(self._held)) if key in self._held[s]]
        return bool(holders) and not any(s in self._free for s in holders)

    def _shared(self, held: tuple[tuple[str, ...], Texts], chain: tuple[str, ...],
                texts: Texts) -> tuple[int, int]:
        """(leading messages in common, leading characters in common of the first message that
        differs) between what a slot holds and a call."""
        held_chain, held_texts = held
        n = _common(held_chain, chain)
        if not self.by_text or n >= len(texts) or n >= len(held_texts) \
                or held_texts[n][0] != texts[n][0]:
            return n, 0
        return n, _lead(held_texts[n][1], texts[n][1])

    def _choose(self, key: str | None, chain: tuple[str, ...], texts: Texts = ()) -> int:
        # The most leading messages in common (a slot holding the prefix shares at least all
        # but the last), then the most leading text of the next message; then an empty slot;
        # then the least recently used.
        def rank(s: int) -> tuple[int, int, bool, float]:
            n, chars = self._shared((self._held[s], self._texts[s]), chain, texts)
            return -n, -chars, bool(self._held[s]), self._used[s]
        return min(self._free, key=rank)

    def _behind(self, key: str | None, chain: tuple[str, ...], texts: Texts, free: int) -> int | None:
        """The busy slot this call should queue behind instead of taking `free` (see the
        module), or None. Learns the text every question with this prefix starts with from the
        calls that share nothing more with any slot."""
        if key is None or not self.by_text or len(texts) != len(chain) or not texts:
            return None
        last = len(chain) - 1
        text = texts[last][1]
        head = self._heads.get(key)
        common = len(text) if head is None else _lead(head, text)

        def extra(held: tuple[tuple[str, ...], Texts]) -> int:
            n, chars = self._shared(held, chain, texts)
            return (len(text) if n > last else chars if n == last else 0) - common

        here = extra((self._held[free], self._texts[free]))
        busy = [(extra(self._running[s]), s) for s in self._running if s not in self._free]
        busy += [(extra((self._held[s], self._texts[s])), s) for s in self._kept]
        best, slot = max(busy, default=(0, -1))
        if max(best, here) < QUEUE_MIN_CHARS:  # no other question shares more: learn the head
            self._heads[key] = text if head is None else text[:common]
        return slot if best - max(here, 0) >= QUEUE_MIN_CHARS else None

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
                chain: tuple[str, ...] = (), texts: Texts = (), fixed: bool = False) -> None:
        """After the call in `slot`: the slot now holds `chain` and `texts` (and so `key`),
        and goes to the first call queued behind it, if any (kept `hold` seconds first for a
        follow-up when the call's reply was begun: `fixed`); a prefix
        evaluated afresh (`evaluated` prompt tokens, at least SAVE_MIN_TOKENS) that two calls
        or more asked for, or that is `fixed` (the call's reply was `begun`: a judge's
        question), is saved to its file, and so is a head (`is_head`) evaluated afresh at
        HEAD_MIN_TOKENS or more; calls waiting for a cold prefix go on."""
        path = self._file(key) if key is not None else None
        head = key is not None and is_head(chain, texts, fixed) and evaluated >= HEAD_MIN_TOKENS
        shared = key is not None and (fixed or self._wanted.get(key, 0) >= 2)
        if key is not None and evaluated >= SAVE_MIN_TOKENS:
            self._big.add(key)  # saved once another call asks for it (at once if fixed)
        if key is not None and path is not None and self._post is not None \
                and not path.is_file() and (head or (shared and key in self._big)) \
                and not self._save(slot, path):
            self._unsaved.add(key)
        with self._cond:
            self._held[slot] = chain or ((key,) if key else ())
            self._texts[slot] = texts if chain else ()
            self._used[slot] = time.monotonic()
            self._running.pop(slot, None)
            owner = self._owners.pop(slot, None)
            if fixed and chain and self.hold > 0:  # kept for a follow-up (see the module)
                self._kept[slot] = (chain, time.monotonic() + self.hold, owner)
            else:
                self._hand_on(slot)
            if warming and key is not None:
                event = self._warming.pop(key, None)
                if event is not None:
                    event.set()
            self._cond.notify_all()

    def _save(self, slot: int, path: Path) -> bool:
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
            return False
        self._prune(path.parent, path.name.startswith(HEAD_FILE))
        return True

    def _prune(self, directory: Path, heads: bool) -> None:
        """Keeps the `max_files` most recently used files of the pool (heads or the rest)."""
        with contextlib.suppress(OSError):
            files = [p for p in directory.glob("*.bin") if p.name.startswith(HEAD_FILE) == heads]
            files.sort(key=lambda p: p.stat().st_mtime, reverse=True)
            for old in files[self.max_files:]:
                old.unlink()
