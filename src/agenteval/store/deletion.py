"""Deleting a recorded run: its documents' rows in the run database, their reviews, the files
the history holds; or an unfinished run the journal holds. A run being written is refused.

What is deleted: the documents `RUN` names (a document's id or unique prefix, `latest`,
`previous`, or the id `eval` prints, which names every document of that run: one per eval
set). Their rows (runs, cases, criteria, summaries, the case index: all refer to the run's row)
and their reviews go in one transaction: a run is deleted whole or not at all. A document
inside the history folder is deleted with them; one recorded where the user wrote it
(`--output`) is the user's file and is left (and said so).

Order, so that nothing is half done and no document comes back: each history file is first
renamed aside (`<name>.deleting`: no longer a history document, so a recording that tidies the
history meanwhile does not record it again), then the rows go, then the renamed files; a
transaction that fails puts the files back. A process killed between the two leaves the rows
and a `.deleting` file, which deleting the run again removes.

The run is claimed for the deletion (`Journal.claim`): a run that a live process owns (an
`eval` or a resume under way, the web's run) is refused, naming its owner, and none can begin
while it is deleted. A run the journal holds (unfinished, or recorded then killed before the
journal forgot it) is forgotten by the journal too.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from agenteval.errors import DataError
from agenteval.store.db import RunRow, RunStore, UnknownRun, history_db_path
from agenteval.store.history import history_dir
from agenteval.store.history_schema import migrate
from agenteval.store.journal import Journal, UnjournaledRun
from agenteval.store.sqlite import connect

ASIDE = ".deleting"


@dataclass(frozen=True)
class DeletedRun:
    """What a deletion removed: the documents' rows (`documents`), the files of those the
    history held (`files`), the reviews, and whether the journal held the run (`journaled`:
    its unfinished case runs are gone too); `kept` are documents outside the history, left."""

    run_id: str  # the run (as `eval` prints it) or, for a document recorded without one, its id
    documents: list[RunRow] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    reviews: int = 0
    journaled: bool = False


@dataclass(frozen=True)
class ToDelete:
    """The run a reference names, as `delete_run` would delete it: `exact`, the reference that
    names just that (a document's id, or the run's when it names the whole run), so that a
    deletion confirmed after `find` deletes what was shown even if `latest` moved meanwhile."""

    exact: str
    run_id: str
    group: str | None
    documents: list[RunRow]
    journaled: bool


def find(root: str | Path, ref: str) -> ToDelete:
    """What `delete_run(root, ref)` would delete (nothing is changed). `UnknownRun` when neither
    the history nor the journal holds such a run; a DataError when `ref` is ambiguous."""
    store, journal = RunStore(root), Journal(root)
    whole = store.documents(ref) if ref else []
    docs = whole or _resolved(store, ref)
    if docs:
        group = docs[0].run_group
        exact = group if whole and group else docs[0].run_id
        run_id = group or docs[0].run_id
    else:
        try:
            group = run_id = exact = journal.get(ref).run_id
        except UnjournaledRun:
            raise UnknownRun(store.path, "", f"no run {ref!r} in the run history or the journal "
                             "of unfinished runs (`agenteval runs` lists them)") from None
    journaled = group is not None and any(r.run_id == group for r in journal.runs())
    return ToDelete(exact, run_id, group, docs, journaled)


def _resolved(store: RunStore, ref: str) -> list[RunRow]:
    try:
        return [store.resolve(ref)]
    except UnknownRun:
        return []


def delete_run(root: str | Path, ref: str) -> DeletedRun:
    """Deletes the run `ref` names from the store at `root` (see the module docstring; `find`
    says what that is). DataError naming the reference when no run or several match
    (`UnknownRun` when neither the history nor the journal holds it), and `RunOwned` naming the
    owner when a live process owns the run: nothing is changed then."""
    target = find(root, ref)
    journal = Journal(root)
    if target.group is not None:
        journal.claim(target.group)  # RunOwned (a DataError naming its owner) while it is written
    try:
        # (looked at again under the claim: a recording may have ended meanwhile)
        target = find(root, target.exact)
        docs = target.documents
        files, kept, reviews = _remove(root, docs) if docs else ([], [], 0)
        if target.journaled:
            assert target.group is not None
            journal.forget(target.group)
    finally:
        if target.group is not None:
            journal.release(target.group)
    return DeletedRun(target.run_id, docs, files, kept, reviews, target.journaled)


def _remove(root: str | Path, docs: list[RunRow]) -> tuple[list[Path], list[Path], int]:
    """The documents' rows and reviews in one transaction, their history files around it."""
    folder = history_dir(root).resolve()
    held = [d.result_path for d in docs if d.result_path.resolve().parent == folder]
    kept = [d.result_path for d in docs if d.result_path.resolve().parent != folder]
    aside: list[tuple[Path, Path]] = []
    try:
        for path in held:
            moved = path.with_name(path.name + ASIDE)
            if path.exists():
                path.replace(moved)
                aside.append((path, moved))
        reviews = _delete_rows(history_db_path(root), [d.run_id for d in docs])
    except BaseException:
        for path, moved in reversed(aside):
            moved.replace(path)
        raise
    for path in held:
        path.with_name(path.name + ASIDE).unlink(missing_ok=True)
    return held, kept, reviews


def _delete_rows(path: Path, ids: list[str]) -> int:
    """Deletes the documents' rows (their cases', criteria's and index's by the foreign keys)
    and their reviews in one transaction; returns how many reviews went."""
    def prepare(conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA foreign_keys=ON")  # the case rows and the case index go with the run's
        migrate(conn, path)

    with connect(path, False, prepare, "the run database") as conn:
        if conn is None:  # (its documents were found in it a moment ago)
            raise DataError(path, "", "the run database is gone")
        marks = ", ".join("?" * len(ids))
        conn.execute("BEGIN IMMEDIATE")
        try:
            reviews = 0
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'reviews'").fetchone():
                reviews = conn.execute(f"DELETE FROM reviews WHERE run_id IN ({marks})", ids).rowcount
            conn.execute(f"DELETE FROM runs WHERE run_id IN ({marks})", ids)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return reviews


__all__ = ["ASIDE", "DeletedRun", "ToDelete", "delete_run", "find"]
