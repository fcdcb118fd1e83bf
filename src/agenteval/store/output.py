"""Writing a run's result documents where the user asked (`--output`, `output_file`).

One eval set: the document goes to the path as given. Several: one document each beside it,
named `<stem>.<eval set id><suffix>`, the id made safe for a file name (an id is never a path).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import tempfile
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import cast

from agenteval.datasets.files import shell_pieces, write_model
from agenteval.datasets.targets import TargetWriter, remove_stale_temporaries, write_all
from agenteval.errors import AgentEvalError, DataError
from agenteval.schema import CaseSummary, EvalCaseResult, EvalSetResult
from agenteval.store.fast_json import placed_checked

MAX_NAME = 160  # characters of a name made from an id: file systems allow 255 bytes in all
HISTORY_FOLDER = Path(".agenteval", "eval_history")
"""Where a store root keeps its result documents (`store.history.history_dir`)."""


def in_history(path: str | Path) -> bool:
    """Whether `path` is a document in a store's history folder (`HISTORY_FOLDER`)."""
    return Path(path).parent.parts[-2:] == HISTORY_FOLDER.parts


def safe_name(text: str) -> str:
    """`text` with every character outside `[A-Za-z0-9_.-]` replaced by `_` (no separators, no
    `..` that could climb). A name longer than `MAX_NAME` keeps its first 100 characters and its
    last 40 (where a result id keeps its time) around a hash of the whole, so that an id of any
    length names a file that can be written, and two ids still name two files."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", text)
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = f"{name[:100]}-{digest}-{name[-40:]}"
    return "_" + name if name.startswith(".") or not name else name


def output_paths(eval_set_ids: Sequence[str], output: str | Path) -> list[Path]:
    """Where the document of each eval set goes for `output` (known before the run, so that
    the targets can be checked first)."""
    out = Path(output)
    if len(eval_set_ids) == 1:
        return [out]
    return [out.with_name(f"{out.stem}.{safe_name(i)}{out.suffix}") for i in eval_set_ids]


def write_outputs(results: Sequence[EvalSetResult], output: str | Path) -> list[Path]:
    """Writes the documents (see `agenteval.datasets.targets`); returns their paths."""
    paths = output_paths([r.eval_set_id for r in results], output)
    for result, path in zip(results, paths, strict=True):
        write_model(path, result, exclude_none=False)
    return paths


_LISTS = ("eval_case_results", "summary")
_BLOCK = 1 << 20  # bytes of a document gathered before they are written to its targets
_AHEAD = 4  # blocks' bytes (`_AHEAD` x `_BLOCK`) handed to a writer's thread and not written, at most
# Blocks handed to it and not written, at most: a block of items handed over unread (`add_read`)
# holds only where they lie, and a resume's thread, four such blocks ahead, waited for the
# writer's (0.4-0.8 s of its 39 kept blocks' at load 18) instead of running its cases meanwhile.
_AHEAD_BLOCKS = 64

_DUMPED: OrderedDict[int, tuple[EvalCaseResult, bytes]] = OrderedDict()  # (a plain dict emptied
# from the front scans its deleted slots to find the first: 160 µs a call at 10,000 results)
_DUMPED_MAX = 512  # results between a case run's journal row and its place in the document
_dumped_lock = threading.Lock()


def place(raw: bytes) -> bytes:
    """An item's indented JSON (`result_json`) indented again for its place in a document's
    list (what follows the item's separator)."""
    return raw.replace(b"\n", b"\n    ")


def unplace(placed: bytes) -> bytes:
    """The inverse of `place` (exact: a JSON string holds no raw newline, so every newline of an
    indented item is one `place` followed by its four spaces)."""
    return placed.replace(b"\n    ", b"\n")


def placed_json(result: EvalCaseResult, keep: bool = True) -> bytes:
    """The JSON of a case result as a result document holds it (indented, None values kept),
    indented for its place in the document's list (`place`): what the journal stores and the
    document writer writes, serialised and placed once for both. With `keep` (the journal: the
    document takes the result later) it is remembered, by identity and holding the result so its
    id is not reused, until asked for without `keep` (the document: the result's last use) or
    `_DUMPED_MAX` later results push it out; a result is thus held no longer than its place in
    the document takes to come."""
    key = id(result)
    with _dumped_lock:
        hit = _DUMPED.get(key)
        if hit is not None and hit[0] is result and not keep:
            del _DUMPED[key]
    if hit is not None and hit[0] is result:
        return hit[1]
    placed = placed_checked(result)  # (serialised at its depth: not re-indented)
    if keep:
        remember_placed(result, placed)
    return placed


def result_json(result: EvalCaseResult, keep: bool = True) -> bytes:
    """`placed_json` as the document's item itself (not placed): the bytes `write_outputs`
    writes for the result, remembered as `placed_json` remembers them."""
    return unplace(placed_json(result, keep))


def remember_json(result: EvalCaseResult, raw: bytes) -> None:
    """Makes `raw` what `result_json(result)` gives (`remember_placed` of it placed)."""
    remember_placed(result, place(raw))


def remember_placed(result: EvalCaseResult, placed: bytes) -> None:
    """Makes `placed` what `placed_json(result)` gives: a resumed run's kept case run, read from
    its journal row, is copied into the document as the row holds it (it was validated and
    serialised when its run finished) instead of being serialised again."""
    with _dumped_lock:
        if len(_DUMPED) >= _DUMPED_MAX:
            _DUMPED.popitem(last=False)
        _DUMPED[id(result)] = (result, placed)


_SUMMARIES: OrderedDict[int, tuple[CaseSummary, bytes]] = OrderedDict()
_SUMMARIES_MAX = 64  # a summary is serialised by the document, then by the journal, at once


def placed_summary(summary: CaseSummary) -> bytes:
    """The JSON of a case summary as a result document holds it (indented, None values kept),
    placed (`place`); remembered for the next few summaries, since the document and the journal
    (`store.kept.verdict_row`) both ask for it as the case is told."""
    key = id(summary)
    with _dumped_lock:
        hit = _SUMMARIES.get(key)
    if hit is not None and hit[0] is summary:
        return hit[1]
    placed = placed_checked(summary)
    with _dumped_lock:
        if len(_SUMMARIES) >= _SUMMARIES_MAX:
            _SUMMARIES.popitem(last=False)
        _SUMMARIES[key] = (summary, placed)
    return placed


LISTED = b",\n    "  # what comes before each item of a placed list after its first
_FIRST = b"\n    "  # what comes before its first


def _listed(raws: Sequence[bytes], count: int) -> list[bytes]:
    """`raws` each after its separator, for a list holding `count` items already."""
    pieces = [piece for raw in raws for piece in (LISTED, raw)]
    if not count:
        pieces[0] = _separator(0)
    return pieces


def _separator(index: int) -> bytes:
    """What comes before item `index` of a placed list: a comma after the first, then the
    item's line and indentation."""
    return LISTED if index else _FIRST


Read = Callable[[], Iterator[Sequence[bytes | memoryview]]]
"""Items of a document's list not read yet (`DocumentWriter.add_read`): called on the writer's
thread, it gives them in order, a few at a time, each few valid until the next is asked for."""


class _Later:
    """Items handed over unread (`Read`), the first of them item `first` of its list."""

    __slots__ = ("first", "read")

    def __init__(self, read: Read, first: int) -> None:
        self.read, self.first = read, first


_Piece = bytes | _Later  # what a block of the document is made of


def _pieces(shell: EvalSetResult) -> list[bytes] | None:
    return shell_pieces(shell.model_copy(update={key: [] for key in _LISTS}), _LISTS, exclude_none=False)


def _expanded(pieces: list[_Piece]) -> Iterator[list[bytes | memoryview]]:
    """`pieces` to write in order, the items handed over unread (`_Later`) read and each put
    after its separator: given a few at a time, each few written before the next is read (the
    items read may be views of a buffer the next read overwrites)."""
    out: list[bytes | memoryview] = []
    for piece in pieces:
        if not isinstance(piece, _Later):
            out.append(piece)
            continue
        index = piece.first
        for items in piece.read():
            for item in items:
                out += (LISTED if index else _FIRST, item)
                index += 1
            yield out
            out = []
    if out:
        yield out


class DocumentWriter:
    """Writes one result document (to each of `paths`) as its cases finish, holding none of
    them: each case result goes to the targets' temporary files when `add`ed, each case summary
    to a spool (the summaries come after the cases in the document), and `commit` writes the
    rest of the document (the header, known only at the end) and puts it in place. The bytes are those
    `write_outputs` writes for the same document. `abort` leaves the target as it was.

    With `background`, each block is joined and written to the targets by a thread of the writer's
    own, in order, while the caller goes on (at most `_AHEAD` blocks' bytes wait for it): the writes
    are system calls that release the GIL, and a resumed 10,000-case run writes 280 MB of them
    (two targets) that its one busy thread used to wait for. So are the summaries' blocks,
    joined and written to the spool, and at `commit` the spool's copy to the targets (a
    resume's 24 MB of summaries: a megabyte's join releases the GIL too, and the caller waited
    to get it back). A failed write is raised by the
    next block handed over or by `commit`, which waits for every write before anything is put
    in place; `abort` waits for the thread too, so nothing is written after it."""

    def __init__(self, paths: Sequence[str | Path], shell: EvalSetResult, background: bool = False) -> None:
        pieces = _pieces(shell)
        if pieces is None:
            raise AgentEvalError(f"cannot lay out result document {shell.eval_set_result_id!r}")
        self._prelude = pieces[0]
        self._background = background
        self._thread: ThreadPoolExecutor | None = None  # (made at the first block: one thread)
        self._writes: deque[tuple[Future[None], int]] = deque()  # blocks handed to it, oldest
        self._held = 0  # first, with their bytes; the bytes of those
        self._spool = tempfile.TemporaryFile()  # noqa: SIM115 (closed by commit or abort)
        self._targets: list[TargetWriter] = []
        # A run starting to write into a store's history removes the temporary copies that
        # writers no longer alive left there (a killed run's: ~114 MB at 10,000 cases), as
        # recording a run does (`store.record.tidy`). A resume never reads its killed writer's
        # copy (it writes the whole document again), so this loses nothing while that run can
        # still be resumed. In the background, a thread of its own does it (`commit` and `abort`
        # wait for it): unlinking 114 MB just written took 0.15-0.5 s of wall (0.011-0.015 s of
        # CPU: the file system's own work) at load 20, on the run's thread before its first
        # case, then on the writer's thread before its first block, while the run's thread
        # waited for the blocks it had handed over (`_AHEAD`).
        self._stale = [Path(path).parent for path in paths if in_history(path)]
        self._removing: threading.Thread | None = None
        try:
            if not background:
                self._remove_stale()
            elif self._stale:
                self._removing = threading.Thread(target=self._remove_stale, name="agenteval-stale-copies")
                self._removing.start()
            for path in paths:  # the same bytes to each (the output and the history's copy)
                self._targets.append(TargetWriter(path))
                self._targets[-1].write(self._prelude)
        except BaseException:
            self.abort()
            raise
        self.cases = self.summaries = 0
        self._pending: list[_Piece] = []  # written to the targets by the `_BLOCK`
        self._pending_size = 0
        self._spooling: list[_Piece] = []  # summaries written to the spool by the `_BLOCK`
        self._spooling_size = 0
        self._later = False  # whether items were handed over unread (`add_read`): then written
        # without a join, as read

    def _write(self, chunk: bytes) -> None:
        # Gathered into blocks: a system call per case result and target released the GIL to
        # the run's other threads each time, and waited to get it back.
        self._pending.append(chunk)
        self._pending_size += len(chunk)
        if self._pending_size >= _BLOCK:
            self._drain()

    def _drain(self) -> None:
        pieces = self._pending
        self._pending, self._pending_size = [], 0
        if not self._background:
            self._write_block(pieces)
            return
        self._hand_over(self._write_block, pieces)

    def _hand_over(self, write: Callable[[list[_Piece]], None], pieces: list[_Piece]) -> None:
        """`write(pieces)` on the writer's thread, after what was handed over before it (once
        fewer than `_AHEAD` blocks' bytes and `_AHEAD_BLOCKS` blocks wait for it)."""
        while self._writes and (self._writes[0][0].done() or len(self._writes) >= _AHEAD_BLOCKS
                                or self._held >= _AHEAD * _BLOCK):
            done, size = self._writes.popleft()
            self._held -= size
            done.result()  # (a failed write: its DataError, here)
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="agenteval-document")
        size = sum(len(piece) for piece in pieces if not isinstance(piece, _Later))
        self._writes.append((self._thread.submit(write, pieces), size))
        self._held += size

    def _remove_stale(self) -> None:
        """`remove_stale_temporaries` of the history folders written to (see `__init__`)."""
        folders, self._stale = self._stale, []
        for folder in folders:
            remove_stale_temporaries(folder)

    def _write_block(self, pieces: list[_Piece]) -> None:
        if not self._later:
            block = b"".join(cast(list[bytes], pieces))  # (joined on the writing thread: a megabyte's copy)
            for target in self._targets:
                target.write(block)
            return
        for out in _expanded(pieces):  # (items read here, written as they lie where read)
            for target in self._targets:
                target.write_many(out)

    def _written(self) -> None:
        """Waits for every block handed to the thread; raises the first write's error."""
        try:
            while self._writes:
                self._writes.popleft()[0].result()
        finally:
            self._stop()

    def _stop(self) -> None:
        """Ends the writing thread: the blocks not started are dropped, the one being written
        is waited for (so that the targets are not touched after this); so is the removal."""
        if self._removing is not None:
            self._removing.join()
            self._removing = None
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)
            self._thread = None
        self._writes.clear()
        self._held = 0

    def add(self, result: EvalCaseResult) -> None:
        self.add_placed(placed_json(result, keep=False))

    def add_placed(self, raw: bytes) -> None:
        """Adds a case result given as its indented JSON indented again for its place in the
        document's list (`placed_json`, or made elsewhere, e.g. by a worker process), written
        as it is."""
        self._write(_separator(self.cases))
        self._write(raw)  # not joined to its separator: a result is tens of kilobytes
        self.cases += 1

    def add_placed_many(self, raws: Sequence[bytes]) -> None:
        """`add_placed` of each of `raws`, in order (a resumed run's kept case runs, gathered in
        one go: two calls each cost a tenth of a kept case's copy)."""
        if not raws:
            return
        self._pending += _listed(raws, self.cases)
        self._pending_size += sum(map(len, raws)) + len(LISTED) * len(raws)
        self.cases += len(raws)
        if self._pending_size >= _BLOCK:
            self._drain()

    def add_read(self, read: Read, count: int, size: int) -> None:
        """`add_placed` of `count` case results (about `size` bytes) that `read` gives on the
        writer's thread (`Read`): written from where they were read, with no copy of each and
        nothing of them on the caller's thread (a resumed run's kept rows: `store.kept.KeptRows`).
        What `read` raises (a damaged row: a DataError) is raised as a failed write is."""
        if count:
            self._later = True
            self._pending.append(_Later(read, self.cases))
            self._pending_size += size
            self.cases += count
            if self._pending_size >= _BLOCK:
                self._drain()

    def add_summaries_read(self, read: Read, count: int, size: int) -> None:
        """`add_summary_placed` of `count` case summaries given as `add_read` takes results."""
        if count:
            self._later = True
            self._spooling.append(_Later(read, self.summaries))
            self._spooling_size += size
            self.summaries += count
            self._spool_if_full()

    def add_listed(self, block: bytes, count: int) -> None:
        """`add_placed` of `count` case results given as one run of bytes, each after `LISTED`
        (a worker's chunk, written as one piece)."""
        if count:
            self._write(self._first(block, self.cases))
            self.cases += count

    def add_summary(self, summary: CaseSummary) -> None:
        self.add_summary_placed(placed_summary(summary))

    def add_summary_placed(self, raw: bytes) -> None:
        """Adds a case summary given as `add_placed` takes a case result."""
        # Gathered as the results are: a buffered write a summary cost 5 µs (its system calls
        # every few summaries), 10% of what a resumed run spends on a kept case.
        self._spooling += (_separator(self.summaries), raw)
        self._spooling_size += len(raw)
        self.summaries += 1
        self._spool_if_full()

    def add_summaries_placed(self, raws: Sequence[bytes]) -> None:
        """`add_summary_placed` of each of `raws`, in order (as `add_placed_many`)."""
        if not raws:
            return
        self._spooling += _listed(raws, self.summaries)
        self._spooling_size += sum(map(len, raws))
        self.summaries += len(raws)
        self._spool_if_full()

    def add_summaries_listed(self, block: bytes, count: int) -> None:
        """`add_summary_placed` of `count` case summaries given as `add_listed` takes results."""
        if count:
            self._spooling.append(self._first(block, self.summaries))
            self._spooling_size += len(block)
            self.summaries += count
            self._spool_if_full()

    @staticmethod
    def _first(block: bytes, count: int) -> bytes:
        """`block` as it follows `count` items of its list: the list's first item goes after
        its own separator."""
        if count:
            return block
        return _separator(0) + block[len(LISTED):]

    def _spool_if_full(self) -> None:
        """Writes the gathered summaries to the spool once they reach a block; a write that
        fails aborts the document (a DataError naming it)."""
        if self._spooling_size >= _BLOCK:
            try:
                self._spool_drain()
            except DataError:
                self.abort()
                raise

    def _spool_drain(self) -> None:
        pieces = self._spooling
        self._spooling, self._spooling_size = [], 0
        if self._background:
            self._hand_over(self._spool_block, pieces)
        else:
            self._spool_block(pieces)

    def _spool_block(self, pieces: list[_Piece]) -> None:
        try:
            if not self._later:
                self._spool.write(b"".join(cast(list[bytes], pieces)))
                return
            self._spool.flush()
            for out in _expanded(pieces):
                write_all(self._spool.fileno(), out)
        except OSError as e:  # (a full disk) the spool is part of the document being written
            raise DataError(self._targets[0].path if self._targets else "", "",
                            f"cannot be written: {e.strerror or e}") from None

    def _copy_spool(self, _: list[_Piece]) -> None:
        """The spooled summaries written to the targets, a megabyte at a time."""
        self._spool.seek(0)
        while block := self._spool.read(1 << 20):
            self._write_block([block])

    def commit(self, shell: EvalSetResult) -> None:
        """Ends the document with `shell`'s other fields (its lists are not written) and puts it
        in place."""
        pieces = _pieces(shell)
        if pieces is None or pieces[0] != self._prelude:
            self.abort()
            raise AgentEvalError("the result document's id changed while it was written")
        try:
            self._spool_drain()
            self._write(pieces[1])
            self._drain()
            if self._background:  # (the spool is the thread's: read there, after its writes)
                self._hand_over(self._copy_spool, [])
            else:
                self._copy_spool([])
            self._write(pieces[2])
            self._drain()
            self._written()
            for target in self._targets:
                target.commit()
        except BaseException:
            self.abort()
            raise
        finally:
            self._spool.close()

    def abort(self) -> None:
        self._stop()
        self._pending, self._pending_size = [], 0
        self._spooling, self._spooling_size = [], 0
        with contextlib.suppress(OSError):  # (a full disk) the error being reported already
            self._spool.close()
        for target in self._targets:
            target.abort()


__all__ = ["LISTED", "DocumentWriter", "Read", "output_paths", "place", "placed_json", "placed_summary",
           "remember_json", "remember_placed", "result_json", "safe_name", "unplace", "write_outputs"]
