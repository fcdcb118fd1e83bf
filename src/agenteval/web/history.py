"""The run stores the server reads: each agent folder's and AGENTS_DIR's own (where
`agenteval score --history` run from it records), found by run id, never by path.

A run is named by its document id (`eval_set_result_id`, the history's `run_id`) or by its run
id (`RunSpec.run_id`, the history's `run_group`; the first document of the run). One case, or
one page of case runs, is read through the document's case index (`store.case_index`: its own
bytes only); whole result documents are read through a small cache, so paging through one
large run reads it once.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

from agenteval.errors import DataError
from agenteval.schema import EvalCaseResult, EvalSetResult
from agenteval.store import RunRow, RunStore, load_result
from agenteval.store.case_index import CaseIndex, Unindexed, case_index
from agenteval.verdicts import CaseOutcome, outcomes
from agenteval.verdicts.paired import Runs
from agenteval.web.agents import AgentsDir

T = TypeVar("T")

_CACHED_DOCUMENTS = 4
# Documents kept loaded besides the one last read, counted by their files' bytes: loaded, a
# document takes about five times its file (a 50,000-case run: 700 MB of JSON, 3.8 GB), so four
# large ones would take tens of GB.
_CACHED_BYTES = 256 << 20
_CACHED_INDEXES = 8  # (a 50,000-case run's index: 100,000 spots, ≈ 20 MB)
_CACHED_DERIVED = 8  # what a run's cases gave (`over_cases`: the search's facts, failure groups)


def _file_key(stored: StoredRun) -> tuple[str, float, int]:
    """The run's document as the caches know it: its path, modification time and size."""
    path = stored.row.result_path
    try:
        info = path.stat()
    except OSError as e:
        raise DataError(path, "", f"the run's result document cannot be read: {e.strerror}") from None
    return str(path), info.st_mtime, info.st_size


@dataclass(frozen=True)
class StoredRun:
    """A recorded document: the store it is in (`app` None for AGENTS_DIR's own) and its row."""

    app: str | None
    root: Path
    row: RunRow


class Stores:
    """Every run store under AGENTS_DIR."""

    def __init__(self, agents: AgentsDir) -> None:
        self.agents = agents
        self._documents: OrderedDict[tuple[str, float, int], EvalSetResult] = OrderedDict()
        self._lock = threading.Lock()
        self._loading = threading.Lock()  # one load at a time: two views of a large run load it once
        self._indexes: OrderedDict[tuple[str, float, int], CaseIndex | None] = OrderedDict()
        self._derived: OrderedDict[tuple[object, ...], object] = OrderedDict()

    def roots(self, app: str | None = None) -> list[tuple[str | None, Path]]:
        """(app, store root) of every store, or of one app's."""
        if app is not None:
            folder = self.agents.folder(app)
            return [] if folder is None else [(app, folder)]
        out: list[tuple[str | None, Path]] = [(name, self.agents.root / name) for name in self.agents.names()]
        return [*out, (None, self.agents.root)]

    def runs(self, app: str | None = None) -> list[StoredRun]:
        """Recorded documents, newest first. A store whose database cannot be read is left out
        of the full list (and is an error when asked for by its app)."""
        return self.listing(app)[0]

    def unreadable(self) -> list[str]:
        """Why each store left out of the full list could not be read (`file: message`)."""
        return self.listing(None)[1]

    def listing(self, app: str | None = None) -> tuple[list[StoredRun], list[str]]:
        """`runs(app)`, and why each store left out of it could not be read."""
        out, unreadable = [], []
        for name, root in self.roots(app):
            try:
                rows = RunStore(root).list_runs()
            except DataError as e:
                if app is not None:
                    raise
                unreadable.append(str(e))
                continue
            out += [StoredRun(name, root, r) for r in rows]
        return sorted(out, key=lambda s: s.row.created, reverse=True), unreadable

    def find(self, run_id: str, app: str | None = None) -> StoredRun | None:
        """The document with this id, else the first document of the run with this run id."""
        runs = self.runs(app)
        found = next((s for s in runs if s.row.run_id == run_id), None)
        if found is None:
            group = [s for s in runs if s.row.run_group == run_id]
            found = min(group, key=lambda s: s.row.created) if group else None
        return found

    def document(self, stored: StoredRun) -> EvalSetResult:
        """The run's result document (cached by path, modification time and size: at most
        `_CACHED_DOCUMENTS`, and besides the last one read at most `_CACHED_BYTES` of files)."""
        key = _file_key(stored)
        found = self._cached(key)
        if found is not None:
            return found
        with self._loading:
            found = self._cached(key)  # (loaded meanwhile by the request this one waited for)
            if found is not None:
                return found
            with self._lock:
                # Room first, so that a large document is not loaded beside the ones it evicts.
                while self._documents and (len(self._documents) >= _CACHED_DOCUMENTS or sum(
                        size for _, _, size in self._documents) > _CACHED_BYTES):
                    self._documents.popitem(last=False)
            result = load_result(stored.row.result_path)
            # A large document is millions of long-lived objects without cycles; left to the
            # cyclic GC, every full collection rescans them all (seconds per request on a
            # 10,000-case run). Frozen, they are skipped; reference counting still frees them
            # when evicted.
            gc.freeze()
            with self._lock:
                self._documents[key] = result
            return result

    def _cached(self, key: tuple[str, float, int]) -> EvalSetResult | None:
        with self._lock:
            found = self._documents.get(key)
            if found is not None:
                self._documents.move_to_end(key)
            return found

    def case(self, stored: StoredRun, eval_id: str) -> tuple[EvalSetResult, CaseOutcome | None]:
        """The run's document head and its case `eval_id` (None when it has no such case), read
        by the document's case index, or from the whole document when it has none."""
        index = self.index(stored)
        if index is not None:
            try:
                return index.head, index.case(eval_id)
            except Unindexed:  # (changed since it was indexed: whole, below)
                pass
        result = self.document(stored)
        return result, next((c for c in outcomes(result) if c.eval_id == eval_id), None)

    def read_cases(self, stored: StoredRun, eval_ids: Iterable[str]) -> dict[str, CaseOutcome]:
        """These cases (by eval id) as the run's document holds them, read through its case
        index (only their bytes); none when the document has no usable index or cannot be read
        (callers then use the database's words, as `agenteval runs show` does)."""
        try:
            index = self.index(stored)
            if index is None:
                return {}
            return {c.eval_id: c for e in eval_ids if (c := index.case(e)) is not None}
        except (Unindexed, DataError):
            return {}

    def case_page(self, stored: StoredRun, offset: int, limit: int,
                  statuses: set[int] | None) -> tuple[int, list[EvalCaseResult]]:
        """How many of the run's case runs have one of `statuses` (or all), and those from
        `offset` (at most `limit`), in the document's order."""
        index = self.index(stored)
        if index is not None:
            try:
                return index.page(offset, limit, statuses)
            except Unindexed:
                pass
        runs = [r for r in self.document(stored).eval_case_results
                if statuses is None or r.final_eval_status in statuses]
        return len(runs), runs[offset:offset + limit]

    def over_cases(self, stored: StoredRun, consume: Callable[[Iterable[CaseOutcome]], T]) -> T:
        """`consume` of the run's case outcomes in case order (cached: at most
        `_CACHED_DERIVED` results), read one case at a time through the document's case index
        (memory: what `consume` keeps), else from the whole document."""
        def compute() -> T:
            index = self.index(stored)
            try:
                if index is None:
                    raise Unindexed("no index")
                return consume(index.outcomes())
            except Unindexed:  # (none, or changed since it was indexed)
                return consume(outcomes(self.document(stored)))

        return self._derive((*_file_key(stored), consume.__module__, consume.__qualname__), compute)

    def _derive(self, key: tuple[object, ...], compute: Callable[[], T]) -> T:
        """`compute()`, kept under `key` among the last `_CACHED_DERIVED` results."""
        with self._lock:
            if key in self._derived:
                self._derived.move_to_end(key)
                return cast(T, self._derived[key])
        got = compute()
        with self._lock:
            self._derived[key] = got
            while len(self._derived) > _CACHED_DERIVED:
                self._derived.popitem(last=False)
        return got

    def index(self, stored: StoredRun) -> CaseIndex | None:
        """The run's case index (None: its document has none), cached by the file's path,
        modification time and size."""
        key = _file_key(stored)
        with self._lock:
            if key in self._indexes:
                self._indexes.move_to_end(key)
                return self._indexes[key]
        try:
            index: CaseIndex | None = case_index(stored.row.result_path, RunStore(stored.root).path,
                                                  stored.row.run_id)
        except Unindexed:
            index = None
        with self._lock:
            self._indexes[key] = index
            while len(self._indexes) > _CACHED_INDEXES:
                self._indexes.popitem(last=False)
        return index

    def of_two(self, a: StoredRun, b: StoredRun, what: str, compute: Callable[[], T]) -> T:
        """`compute()` of runs `a` and `b`, cached under `what` with both runs (at most
        `_CACHED_DERIVED` results, shared with `over_cases`): a large comparison's next page
        reads only its own cases. Runs are known by store, id and row: a recorded run does
        not change (recorded again, its row is new)."""
        return self._derive(("two", *(str(s.root) for s in (a, b)), a.row, b.row, what), compute)

    def head(self, stored: StoredRun) -> EvalSetResult:
        """The run's document head from its row (id, eval set, created, gating; no case)."""
        row = stored.row
        return EvalSetResult(eval_set_result_id=row.run_id, eval_set_id=row.eval_set_id,
                             creation_timestamp=row.created, gating=row.gating)

    def summary(self, stored: StoredRun) -> EvalSetResult:
        """Verdicts and criterion summaries from the database alone (no case results)."""
        return RunStore(stored.root).summary(stored.row.run_id)

    def case_runs(self, stored: StoredRun) -> Runs:
        """Each case run's verdict and criteria, from the database alone (for comparisons)."""
        return RunStore(stored.root).case_runs(stored.row.run_id)


__all__ = ["StoredRun", "Stores"]
