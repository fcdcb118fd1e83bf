"""A journaled run's recording in the run history begun while the run goes on.

Recording a journaled run copies its cases' rows from the journal into the history in SQLite
(`store.verdict_copy`): for 5,000 trivial cases ≈0.1 s of CPU and twice that of wall after the
last case, and for a resumed 10,000-case run with 100 cases left the copy of the 9,900 kept
cases (≈0.2 s) was serial work after the run. `start` begins the recording on a thread of its
own (`RunStore.begin_copy`: its transaction, the rows of the verdicts told so far copied), which
then copies the verdicts told since, again and again (closer together as the run nears its
expected end), each time through a fresh snapshot of the journal (`HeldCopy.more`); the
recording at the end takes it (`take`) and adds only the last verdicts and the run's row
(`RunStore.record_copied`).

When it begins: at once for a resume (`kept`: its kept cases are most of the copy); otherwise
(a fresh run) once the run's remaining case runs are expected to take at most `HOLD` / 2
seconds at the rate they have been journaled so far.

Atomicity: the copies are one transaction with the recording's end, so readers never see a run
half recorded; a process killed meanwhile leaves nothing (SQLite drops an uncommitted
transaction) and its journal as it was (the copy only reads it). Other writers of the history
(another run recording, the web UI) wait for the held write lock, so it is held at most `HOLD`
seconds after the first copy: a run not ended by then drops the held copy (rolled back) and
records as before, at the end. A run that fails drops it at once (`drop`).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path

from agenteval.store.db import RunStore
from agenteval.store.journal_writer import appended
from agenteval.store.verdict_copy import HeldCopy

HOLD = 10.0
"""Seconds a copied recording holds the history's write lock after its first copy, at most."""
EVERY = 0.5
"""Seconds between a held recording's copies of the verdicts told since (`HeldCopy.more`) while
the run's rate is not known; once it is, each copy comes halfway to its expected end (at least
`PAUSE` seconds apart)."""
PAUSE = 0.05
POLL = 0.25
"""Seconds between a fresh run's looks at its progress in the journal, before it begins."""

_copies: dict[tuple[Path, str], KeptCopy] = {}  # by (history database, document id)
_lock = threading.Lock()


class KeptCopy:
    """One recording begun early, on its own thread (see the module docstring)."""

    def __init__(self, store: RunStore, journal: Path, journal_run_id: str, eval_set_id: str, run_id: str,
                 hold: float, kept: bool) -> None:
        self._cond = threading.Condition()
        # "waiting" (not begun), "copying" (a copy under way), "held"; then "taken", "dropped"
        # or "failed".
        self._state = "waiting"
        self._held: HeldCopy | None = None
        self._args = (store, journal, journal_run_id, eval_set_id, run_id)
        self._hold, self._kept = hold, kept
        self._thread = threading.Thread(target=self._run, name="agenteval-history-copy", daemon=True)
        self._thread.start()

    def _set(self, state: str, held: HeldCopy | None) -> bool:
        """Ends a copy: the state `state` unless the copy was given up meanwhile (then False)."""
        with self._cond:
            if self._state != "copying":
                return False
            self._state, self._held = state, held
            self._cond.notify_all()
            return True

    def _run(self) -> None:
        store, journal, journal_run_id, eval_set_id, run_id = self._args
        rate = _Rate(journal, journal_run_id)
        if not self._begins(rate):  # (taken or dropped first)
            return
        held: HeldCopy | None = None
        try:
            held = store.begin_copy(journal, journal_run_id, eval_set_id, run_id)
        except Exception:
            held = None
        if not self._set("held" if held is not None else "failed", held):
            if held is not None:
                with contextlib.suppress(Exception):
                    held.rollback()
            return
        assert held is not None
        end = time.monotonic() + self._hold
        while True:
            # The next copy halfway to the run's expected end: the copies come closer together
            # as it nears, so the recording's end finds few verdicts left to copy.
            left = rate.left() if len(held.unread) > 1 else self._hold
            pause = EVERY if left is None else max(PAUSE, left / 2)
            with self._cond:
                wait = max(0.0, min(pause, end - time.monotonic()))
                self._cond.wait_for(lambda: self._state != "held", wait)
                if self._state == "held" and time.monotonic() >= end:
                    self._state = "dropped"  # (not taken in time)
                if self._state != "held":
                    break
                self._state = "copying"
            try:
                more = held.more()
            except Exception:
                more = None
            if not self._set("held" if more is not None else "failed", held if more is not None else None) \
                    or more is None:
                break
        with self._cond:
            taken = self._state == "taken"
        if not taken:
            with contextlib.suppress(Exception):
                held.rollback()

    def _begins(self, rate: _Rate) -> bool:
        """Waits until the copy should begin (see the module docstring), then marks it begun;
        False: taken or dropped first."""
        while True:
            left = None if self._kept else rate.left()
            with self._cond:
                if self._state != "waiting":
                    return False
                if self._kept or (left is not None and left <= self._hold / 2):
                    self._state = "copying"
                    return True
                self._cond.wait_for(lambda: self._state != "waiting", POLL)

    def take(self) -> HeldCopy | None:
        """The held recording (any copy under way waited for), for the caller to finish; None
        when it was not begun, failed or was dropped (the caller then records as usual)."""
        with self._cond:
            while self._state == "copying":
                self._cond.wait()
            if self._state != "held":
                if self._state == "waiting":
                    self._state = "dropped"
                    self._cond.notify_all()
                return None
            self._state = "taken"
            self._cond.notify_all()
            return self._held

    def drop(self) -> None:
        """Gives the recording up: rolled back by its thread (once a copy under way is done)."""
        with self._cond:
            if self._state in ("waiting", "copying", "held"):
                self._state = "dropped"
                self._cond.notify_all()

    def wait(self) -> None:
        """Waits for the thread to end (its copy rolled back, taken or failed)."""
        self._thread.join()


class _Rate:
    """A journaled run's expected time left, at the rate its case runs have been journaled since
    the first look. The first look reads the journal; while the run's writer is in this process
    (the usual case: the run is this process's), the later ones count the rows it has been given
    since (`journal_writer.appended`) instead of reading the journal again."""

    def __init__(self, journal: Path, journal_run_id: str) -> None:
        self._journal, self._run_id = journal, journal_run_id
        self._first: tuple[float, int] | None = None  # (when, case runs journaled) at the first look
        self._base: tuple[int, int, int] | None = None  # (journaled, total, writer's count) then

    def left(self) -> float | None:
        """Seconds the run's remaining case runs are expected to take (None: not known yet)."""
        found = self._counted() if self._base is not None else None
        if found is None:
            found = self._progress()
            given = appended(self._journal, self._run_id)
            self._base = None if found is None or given is None else (*found, given)
        now = time.monotonic()
        if found is None:
            return None
        if self._first is None:
            self._first = (now, found[0])
            return None
        done, total = found
        if done <= self._first[1]:
            return None if done < total else 0.0
        return (total - done) * (now - self._first[0]) / (done - self._first[1])

    def _counted(self) -> tuple[int, int] | None:
        """The run's progress from its writer's count since the last look at the journal (None:
        the writer is gone)."""
        assert self._base is not None
        done, total, given = self._base
        now = appended(self._journal, self._run_id)
        return None if now is None else (done + now - given, total)

    def _progress(self) -> tuple[int, int] | None:
        """The run's case runs journaled so far and in all (None: the journal or the run is not
        there yet)."""
        try:
            with contextlib.closing(sqlite3.connect(f"{self._journal.resolve().as_uri()}?mode=ro", uri=True,
                                                    timeout=1)) as conn:
                row = conn.execute("SELECT (SELECT count(*) FROM journal_cases WHERE run_id = r.run_id), "
                                   "total FROM journal_runs r WHERE run_id = ?", (self._run_id,)).fetchone()
        except sqlite3.Error:
            return None
        return None if row is None else (int(row[0]), int(row[1]))


def start(root: str | Path, journal: Path, journal_run_id: str, eval_set_id: str, run_id: str,
          hold: float = HOLD, kept: bool = True) -> KeptCopy:
    """Begins recording document `run_id` (of eval set `eval_set_id` of the journaled run
    `journal_run_id`, its journal at `journal`) in the history of `root` on a thread: at once
    when the run `kept` cases (a resume), else once its end is near; the recording finds it with
    `take`."""
    store = RunStore(root)
    copy = KeptCopy(store, journal, journal_run_id, eval_set_id, run_id, hold, kept)
    with _lock:
        old = _copies.pop((store.path, run_id), None)
        _copies[(store.path, run_id)] = copy
    if old is not None:
        old.drop()
    return copy


def take(root: str | Path, run_id: str) -> HeldCopy | None:
    """The recording of document `run_id` begun by `start` in the history of `root` (None:
    none, or dropped); the caller finishes it (`RunStore.record_copied`) or rolls it back."""
    with _lock:
        copy = _copies.pop((RunStore(root).path, run_id), None)
    return copy.take() if copy is not None else None


def drop(copy: KeptCopy) -> None:
    """Gives up `copy` (its run failed): rolled back, forgotten here."""
    with _lock:
        for key, c in list(_copies.items()):
            if c is copy:
                del _copies[key]
    copy.drop()


__all__ = ["EVERY", "HOLD", "PAUSE", "POLL", "KeptCopy", "drop", "start", "take"]
