"""A journaled run's case rows staged in the run history as the run goes (`store.staging`), on
a thread of its own.

`start` begins it with the run: every `EVERY` seconds (closer together as the run nears its
expected end, at the rate its cases have been journaled so far: `_Rate`) the thread stages the
verdicts told since, each stage a short transaction of its own (`staging.stage`). The recording
at the end stops it (`take`) and adds only the last verdicts and the run's row
(`RunStore.record_copied`). A resume takes the document id its killed run staged under
(`staged_document`), so the kept cases' rows are in the history already and only those told
since are copied. A run that fails stops it (`drop`); its stage stays for its resume.

Its lifetime is the run's: one that ends (`end`, as `runner.evaluate` does when its run returns),
or whose journal writer in this process was seen and is gone (the run released or forgotten),
stages once more and stops, whether or not the run is ever recorded (a library caller, a test);
the recording then adds only what came after.

Stages are invisible to every reader until the recording (no `runs` row); other writers of the
history wait at most for one stage's transaction (tens of ms), never for the run.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path

from agenteval.store.db import RunStore
from agenteval.store.journal_writer import appended
from agenteval.store.staging import stage
from agenteval.store.verdict_copy import ATTACHED, beside

EVERY = 0.5
"""Seconds between a run's stages while its rate is not known; once it is, each stage comes
halfway to its expected end (at least `PAUSE` seconds apart, at most `EVERY`)."""
PAUSE = 0.05

_NEWEST = f"SELECT max(told) FROM {ATTACHED}.journal_verdicts WHERE run_id = ?"

_copies: dict[tuple[Path, str], KeptCopy] = {}  # by (history database, document id)
_lock = threading.Lock()


class KeptCopy:
    """One run's stages, on their own thread (see the module docstring)."""

    def __init__(self, store: RunStore, journal: Path, journal_run_id: str, eval_set_id: str, run_id: str,
                 every: float) -> None:
        self._cond = threading.Condition()
        self._stopped = self._ended = False
        self._args = (store, journal, journal_run_id, eval_set_id, run_id)
        self._every = every
        self.told = 0
        """The last verdict number staged (0: none yet)."""
        self._thread = threading.Thread(target=self._run, name="agenteval-history-copy", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        store, journal, journal_run_id, eval_set_id, run_id = self._args
        rate = _Rate(journal, journal_run_id)
        conn: sqlite3.Connection | None = None
        try:
            while True:
                with self._cond:
                    if self._stopped:
                        break
                    last = self._ended
                left = rate.left()
                last = last or rate.gone  # (a last stage, then no more)
                if conn is None and rate.seen:  # (attached once the journal holds the run, not before)
                    conn = store.attached(journal)
                # (A look by index first: no transaction, no lock, while nothing new was told.)
                newest = None
                if conn is not None:
                    (newest,) = conn.execute(_NEWEST, (journal_run_id,)).fetchone()
                if newest is not None and newest > self.told:
                    assert conn is not None
                    told = stage(conn, run_id, journal_run_id, eval_set_id)
                    if told is None:  # (recorded already)
                        break
                    self.told = told
                if last:
                    break
                pause = self._every if left is None else max(PAUSE, min(self._every, left / 2))
                with self._cond:
                    self._cond.wait_for(lambda: self._stopped or self._ended, pause)
        except Exception:  # (the recording copies whatever is not staged: nothing is lost)
            pass
        finally:
            if conn is not None:  # (its checkpoint, the syncs, beside: `settle` waits for it)
                beside(conn.close, "agenteval-history-close")
            _forget(self)

    def end(self) -> None:
        """Tells the stages their run has ended: one more comes (beside the caller), then none;
        returns at once."""
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    def stop(self) -> None:
        """Stops the stages: a stage under way ends first (its thread is waited for)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
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
        self.gone = False
        """Whether the run's writer in this process, once seen, is gone (the run's journal is
        done with here: released, forgotten or closed)."""

    @property
    def seen(self) -> bool:
        """Whether a look found the run in the journal."""
        return self._first is not None

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
        self.gone = now is None
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
          every: float = EVERY) -> KeptCopy:
    """Begins staging document `run_id` (of eval set `eval_set_id` of the journaled run
    `journal_run_id`, its journal at `journal`) in the history of `root`, on a thread; the
    recording stops it with `take`."""
    store = RunStore(root)
    copy = KeptCopy(store, journal, journal_run_id, eval_set_id, run_id, every)
    with _lock:
        old = _copies.pop((store.path, run_id), None)
        _copies[(store.path, run_id)] = copy
    if old is not None:
        old.stop()
    return copy


def staged_document(root: str | Path, journal_run_id: str, eval_set_id: str) -> str | None:
    """The document id the journaled run `journal_run_id` staged eval set `eval_set_id` under in
    the history of `root`, for its resume to take (None: none)."""
    return RunStore(root).staged_document(journal_run_id, eval_set_id)


def take(root: str | Path, run_id: str) -> None:
    """Stops the stages of document `run_id` in the history of `root`, if `start` began them, for
    its recording."""
    with _lock:
        copy = _copies.pop((RunStore(root).path, run_id), None)
    if copy is not None:
        copy.stop()


def end(copy: KeptCopy) -> None:
    """Tells `copy` its run has ended (see `KeptCopy.end`): not recorded, it stops by itself
    (and is forgotten here); recorded, `take` stops it."""
    copy.end()


def drop(copy: KeptCopy) -> None:
    """Stops `copy` (its run failed: its stage stays, for its resume), forgotten here."""
    _forget(copy)
    copy.stop()


def _forget(copy: KeptCopy) -> None:
    """Removes `copy` from `_copies` (a copy begun again for the same document stays)."""
    with _lock:
        for key, c in list(_copies.items()):
            if c is copy:
                del _copies[key]


__all__ = ["EVERY", "PAUSE", "KeptCopy", "drop", "end", "staged_document", "start", "take"]
