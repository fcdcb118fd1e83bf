"""A resumed run's kept cases copied into the run history while its remaining cases run.

Recording a journaled run copies its cases' rows from the journal into the history in SQLite
(`store.verdict_copy`); for a resumed 10,000-case run with 100 cases left, that copy of the
9,900 kept cases (≈0.2 s, in SQLite, which releases the GIL) was serial work after the run,
while the run's own thread spent the run on the remaining cases. `start` begins the recording
on a thread of its own as the resumed run starts (`RunStore.begin_copy`: its transaction, the
kept cases' rows copied), and the recording at the end takes it (`take`) and adds only the
cases told since (`RunStore.record_copied`).

Atomicity: the copy is one transaction with the recording's end, so readers never see a run
half recorded; a process killed meanwhile leaves nothing (SQLite drops an uncommitted
transaction). Other writers of the history (another run recording, the web UI) wait for the
held write lock, so it is held at most `HOLD` seconds after the copy: a run whose remaining
cases take longer drops the held copy (rolled back) and records as before, at the end. A run
that fails drops it at once (`drop`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

from agenteval.store.db import RunStore
from agenteval.store.verdict_copy import HeldCopy

HOLD = 10.0
"""Seconds a copied recording is held for its run's end, at most (other writers wait that long)."""

_copies: dict[tuple[Path, str], KeptCopy] = {}  # by (history database, document id)
_lock = threading.Lock()


class KeptCopy:
    """One recording begun early, on its own thread (see the module docstring)."""

    def __init__(self, store: RunStore, journal: Path, journal_run_id: str, eval_set_id: str, run_id: str,
                 hold: float) -> None:
        self._cond = threading.Condition()
        self._state = "copying"  # then "held" or "failed"; then "taken" or "dropped"
        self._held: HeldCopy | None = None
        self._args = (store, journal, journal_run_id, eval_set_id, run_id, hold)
        self._thread = threading.Thread(target=self._copy, name="agenteval-history-copy", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        store, journal, journal_run_id, eval_set_id, run_id, hold = self._args
        held: HeldCopy | None = None
        try:
            held = store.begin_copy(journal, journal_run_id, eval_set_id, run_id)
        except Exception:
            held = None
        finally:
            with self._cond:
                dropped = self._state == "dropped"
                if not dropped:
                    self._state = "held" if held is not None else "failed"
                    self._held = held
                self._cond.notify_all()
        if held is None:
            return
        if not dropped:
            with self._cond:
                end = time.monotonic() + hold
                while self._state == "held" and (left := end - time.monotonic()) > 0:
                    self._cond.wait(left)
                dropped = self._state == "held"  # (not taken in time)
                if dropped:
                    self._state = "dropped"
        if dropped:
            with contextlib.suppress(Exception):
                held.rollback()

    def take(self) -> HeldCopy | None:
        """The held recording (its copy waited for), for the caller to finish; None when the
        copy failed or was dropped (the caller then records as usual)."""
        with self._cond:
            while self._state == "copying":
                self._cond.wait()
            if self._state != "held":
                return None
            self._state = "taken"
            self._cond.notify_all()
            return self._held

    def drop(self) -> None:
        """Gives the recording up: rolled back by its thread (once its copy is done)."""
        with self._cond:
            if self._state in ("copying", "held"):
                self._state = "dropped"
                self._cond.notify_all()

    def wait(self) -> None:
        """Waits for the thread to end (its copy rolled back, taken or failed)."""
        self._thread.join()


def start(root: str | Path, journal: Path, journal_run_id: str, eval_set_id: str, run_id: str,
          hold: float = HOLD) -> KeptCopy:
    """Begins recording document `run_id` (of eval set `eval_set_id` of the journaled run
    `journal_run_id`, its journal at `journal`) in the history of `root` now, on a thread; the
    recording finds it with `take`."""
    store = RunStore(root)
    copy = KeptCopy(store, journal, journal_run_id, eval_set_id, run_id, hold)
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


__all__ = ["HOLD", "KeptCopy", "drop", "start", "take"]
