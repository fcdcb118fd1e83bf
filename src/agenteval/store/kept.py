"""A told case's verdict in the run journal, and a resumed run's kept case built from it.

When a journaled run tells a case (its runs all known, its summary made), the journal keeps,
beside the case's run rows, a verdict row (`verdict_row`): the case summary's JSON as the
document holds it, and a record of what the rest of the run reads of the case: the history's
rows (`store.case_rows.CaseRows`) and what the totals count (agent and metric errors, uncertain
and escalated judge verdicts). A resumed run that kept every run of such a case gets it as a
`KeptCase`: the document copies the run rows and the summary as they are, the totals and the
history take the record, and nothing is parsed, summarised or serialised again. A sink that
needs the case itself (the JUnit and Markdown reports, the console's first cases) asks
`KeptCase.outcome()`, built once from the runs' digests (`store.digest`) and the summary.

Format: a verdict row holds the case's place in its document, runs, status, agent seconds and
tokens and tally in columns (what a resume's totals read), and in its record a JSON array of
`VERSION`, the first agent error, the judge models and the judge prompt tokens. The case's metric
rows (run index, criterion, score, threshold, status) and summary rows (as `CaseRows` holds them,
without the run id and eval id) are rows of their own beside it (`journal_metrics`,
`journal_summaries`, tied to the verdict by its `told` number), committed in the same
transaction, so that the history records them with one `INSERT ... SELECT` in SQLite
(`store.verdict_copy`) instead of encoding them as JSON here and decoding them there. A case
of one run whose summary rows are what its metric rows give (`derived_summaries`: a summary of
one run is its score as mean and bounds, deviation 0, pass@1 and pass^1 1 or 0, as
`verdicts.aggregate` makes it) has only its metric rows beside it, its record of `DERIVED`
version (3): the history derives the summary rows from them in SQLite (copied values and
constants: exact), so a usual run's journal holds half the rows (the rows beside the verdicts,
committed by the writer thread while the run goes on, were the largest item of what journaling
cost: bench/README.md, session 15). Records of version 1 (agenteval before session 14) hold the metric and
summary rows in the record: the history reads them with `read_record`. A record of another
version is not read: the case is then read as its runs' digests, as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from agenteval.errors import DataError
from agenteval.schema import CaseSummary, EvalCaseResult, EvalStatus, MetricSummary
from agenteval.store.case_rows import CaseRows, first_error, judged, metric_rows, summary_rows
from agenteval.store.digest import from_digest
from agenteval.store.journal_writer import VerdictRow
from agenteval.store.output import placed_summary, remember_placed
from agenteval.verdicts.outcome import CaseOutcome

VERSION = 2
"""The verdict record's format version (its first item): 2, its rows beside it; `DERIVED` (3),
its metric rows beside it and its summary rows derived from them; 1 (older journals), its rows
in it. A resume keeps cases of any (`READABLE`)."""
DERIVED = 3
BESIDE = (VERSION, DERIVED)
"""The versions whose rows are beside the verdict (the history copies them: `Journal.copyable`)."""
READABLE = (1, 2, 3)
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode  # (`json.dumps`
# with separators builds an encoder each call)

@dataclass(frozen=True)
class Tally:
    """What the run's totals count of a case besides its rows: runs that ended in an agent
    error, metric errors, uncertain judge verdicts not escalated, escalated verdicts."""

    agent_errors: int = 0
    metric_errors: int = 0
    uncertain: int = 0
    escalated: int = 0


def tally(runs: list[EvalCaseResult]) -> Tally:
    """The `Tally` of a case's runs (what `runner.header.TotalsCounter` counts of them)."""
    agent = metric = uncertain = escalated = 0
    for run in runs:
        agent += bool(run.error_message)
        metric += len(run.metric_errors)
        for r in run.judge_records:
            uncertain += r.uncertain and r.escalated is None
            escalated += r.escalated is not None
    return Tally(agent, metric, uncertain, escalated)


def verdict_row(run_id: str, outcome: CaseOutcome, position: int) -> VerdictRow:
    """The journal's verdict row of a told case, the `position`th of its eval set's document
    (see the module docstring), with its metric and summary rows (without run and eval ids)."""
    summary, runs = outcome.summary, outcome.runs
    seconds, tokens, t = figures(outcome)
    if len(runs) == 1:  # (the usual case: the run's fields read in one call, as `metric_rows`
        # reads a criterion's; three walks over the runs were a fifth of a verdict's cost)
        index, results, error, records = _RUN(runs[0].__dict__)
        metrics = [(index, name, score, threshold, int(status))
                   for name, score, threshold, status in (_METRIC(m.__dict__) for m in results)]
        error = error or None
        judges, judge_tokens = judged(runs) if records else ((), 0)
    else:
        metrics, error = metric_rows(runs), first_error(runs)
        judges, judge_tokens = judged(runs)
    derived = summary.runs == 1 and derivable(metrics, summary.metrics)
    version = DERIVED if derived else VERSION
    # (What `_encode` gives, without an encoder's call, for the usual record: no error, no judge.)
    record = f"[{version},null,[],{judge_tokens}]" if error is None and not judges \
        else _encode([version, error, judges, judge_tokens])
    summaries = [] if derived else summary_rows(summary.metrics, runs)
    return (run_id, outcome.eval_set_id, summary.eval_id, position, summary.runs,
            int(summary.final_eval_status), seconds, tokens, t.agent_errors, t.metric_errors, t.uncertain,
            t.escalated, placed_summary(summary), record, metrics, summaries)


_RUN = itemgetter("run_index", "overall_eval_metric_results", "error_message", "judge_records")
_METRIC = itemgetter("metric_name", "score", "threshold", "eval_status")  # (`case_rows.metric_rows`')

_last: tuple[CaseOutcome, tuple[float | None, float | None, Tally]] | None = None


def figures(outcome: CaseOutcome) -> tuple[float | None, float | None, Tally]:
    """The case's agent seconds and tokens (`CaseOutcome.duration`, `tokens`) and `tally`:
    what both its verdict row and the run's totals (`runner.header.TotalsCounter`) count, made
    once for the last case asked about (both ask as it is told, one after the other)."""
    global _last
    last = _last
    if last is not None and last[0] is outcome:
        return last[1]
    made = (outcome.duration(), outcome.tokens(), tally(outcome.runs))
    _last = (outcome, made)
    return made


_PASSED, _INFORMATIONAL = int(EvalStatus.PASSED), int(EvalStatus.INFORMATIONAL)


def derived_summaries(metrics: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The summary rows (without run and eval ids) that a case of one run has when they are
    what its metric rows (run index, criterion, score, threshold, status) give: what
    `store.verdict_copy` derives in SQL for a `DERIVED` verdict; a verdict is `DERIVED` only
    when its summary rows equal these (compared as the history stores them: `derivable`)."""
    return [(name, threshold, 1, int(score is not None), int(status == _PASSED), score,
             None if score is None else 0.0, score, score,
             None if status == _INFORMATIONAL else float(status == _PASSED),
             None if status == _INFORMATIONAL else float(status == _PASSED), status, None)
            for _, name, score, threshold, status in metrics]


def summaries_derived(c: CaseRows) -> bool:
    """Whether case `c`'s summary rows are those the history's `case_summaries` view derives
    from its metric rows (`derived_summaries`; compared as Python values; a NaN score, which
    SQLite stores as NULL, is never derived)."""
    if c.num_runs != 1 or len(c.metrics) != len(c.summaries):
        return False
    metrics = [m[1:] for m in c.metrics]
    if any(m[2] != m[2] for m in metrics):  # (NaN)
        return False
    return derived_summaries(metrics) == [s[1:] for s in c.summaries]


# A summary's fields that repeat its metric row's values, and those that are constants given
# whether the run was scored and its status (`_CONSTANTS`, in `_REST`'s order).
_COPIED = itemgetter("metric_name", "threshold", "mean", "ci_low", "ci_high", "eval_status")
_REST = itemgetter("runs", "scored_runs", "passed_runs", "std", "pass_at_k", "pass_pow_k")
# (A criterion not evaluated has none: its summary row keeps its reason, which no metric row has.)
_CONSTANTS = {(scored, int(status)): (1, int(scored), int(status == _PASSED), 0.0 if scored else None,
                                      *(None if status == _INFORMATIONAL else float(status == _PASSED),) * 2)
              for scored in (False, True) for status in EvalStatus if status != EvalStatus.NOT_EVALUATED}
_MEMBERS = {int(status): status for status in EvalStatus}


def derivable(metrics: list[tuple[Any, ...]], summaries: Sequence[MetricSummary]) -> bool:
    """Whether `summary_rows(summaries) == derived_summaries(metrics)` (the same comparisons,
    field by field; a criterion not evaluated never, as its row keeps its reason), without
    making either list: two reads of each summary's fields in C and
    a tuple of the metric row's values (a case of one run is told thousands of times a run)."""
    if len(metrics) != len(summaries):
        return False
    for (_, name, score, threshold, status), summary in zip(metrics, summaries, strict=True):
        fields = summary.__dict__
        # (The status compared as the member it is: comparing a member with an int goes through
        # the enum's slot, several times the cost of the rest of the tuple.)
        if _COPIED(fields) != (name, threshold, score, score, score, _MEMBERS.get(status)) \
                or _REST(fields) != _CONSTANTS.get((score is not None, status)):
            return False
    return True


def read_record(eval_id: str, status: int, runs: int, seconds: float | None, tokens: float | None,
                record: str) -> CaseRows | None:
    """The history's rows of a case from its verdict's columns and a version-1 record (None: a
    record of another version; version 2's rows are beside it, read by `store.verdict_copy`)."""
    try:
        items = json.loads(record)
    except ValueError:
        return None
    if not isinstance(items, list) or len(items) != 6 or items[0] != 1:
        return None
    _, error, metrics, summaries, judges, judge_tokens = items
    return CaseRows(eval_id, EvalStatus(status), runs, seconds, tokens, error,
                    [(eval_id, *m) for m in metrics], [(eval_id, *m, None) for m in summaries], tuple(judges),
                    judge_tokens)


Frame = tuple[int, int, tuple[str, str, int]]
"""Where a row lies in a run's rows file: its frame's offset and size, and its case run's key
(`store.journal_rows`)."""


class KeptRows:
    """The rows of a block of kept cases (`KeptCase.rows_from`) where they lie in their run's
    rows file, not read yet: each case's runs' frames (`runs`, case after case, run order) and
    summaries' (`summaries`, case after case). A resumed run's document has its writer's thread
    read and write them (`store.output.DocumentWriter.add_read`: nothing of them on the run's
    thread, no copy of each row); a sink that needs them (the reports' rebuilt cases) reads the
    whole block at its first ask (`read`, the journal reader's `read_many`)."""

    def __init__(self, path: Path, runs: list[Frame], summaries: list[Frame],
                 read: Callable[[list[Frame]], list[tuple[bytes, str | None] | None]]) -> None:
        self.path, self.runs, self.summaries = path, runs, summaries
        self._read = read
        self._got: tuple[list[tuple[bytes, str | None]], list[bytes]] | None = None

    def got(self) -> tuple[list[tuple[bytes, str | None]], list[bytes]]:
        """Each run's row (placed) and digest, and each summary (placed), read once."""
        if self._got is None:
            whole: list[tuple[bytes, str | None]] = []
            got = self._read(self.runs) + self._read(self.summaries)
            for frame, one in zip(self.runs + self.summaries, got, strict=True):
                # (The reader checked these frames lie within the file; a row of another form
                # was never written to a rows file: as `journal_rows.RowsReader.views` says.)
                if one is None or not one[0].startswith(b"{\n"):
                    raise DataError(self.path, "", f"the run journal's row of case {frame[2][1]!r} "
                                    f"(run {frame[2][2]}) is damaged; run the eval again without --resume")
                whole.append(one)
            n = len(self.runs)
            self._got = (whole[:n], [one[0] for one in whole[n:]])
        return self._got


@dataclass
class KeptCase:
    """A case of a resumed run whose runs were all kept and whose verdict the journal holds
    (see the module docstring): `rows` each run's JSON as the document holds it, placed in its
    list (`store.output.place`; run order), `summary` the summary's, placed too; its status,
    runs, agent seconds and tokens and `tally` are what the totals count, `case_rows` what the
    history records (read from `record` when asked). With `rows_from`, its rows, digests and
    summary are not read yet: they are runs `run_at` to `run_at + num_runs - 1` and summary
    `summary_at` of that block (`KeptRows`), read when first asked for."""

    eval_set_id: str
    eval_id: str
    gating: str
    _rows: list[bytes]
    _digests: list[str | None]
    _summary: bytes
    status: EvalStatus
    num_runs: int
    seconds: float | None
    tokens: float | None
    tally: Tally
    record: str
    _outcome: CaseOutcome | None = field(default=None, repr=False)
    # A version-2 record's metric and summary rows, read from beside it when asked (the reader's).
    beside: Callable[[], tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]] | None = \
        field(default=None, repr=False)
    rows_from: KeptRows | None = field(default=None, repr=False)
    run_at: int = 0
    summary_at: int = 0

    def _load(self, rows_from: KeptRows) -> None:
        runs, summaries = rows_from.got()
        mine = runs[self.run_at:self.run_at + self.num_runs]
        self._rows, self._digests = [r[0] for r in mine], [r[1] for r in mine]
        self._summary = summaries[self.summary_at]
        self.rows_from = None

    @property
    def rows(self) -> list[bytes]:
        if self.rows_from is not None:
            self._load(self.rows_from)
        return self._rows

    @property
    def digests(self) -> list[str | None]:
        if self.rows_from is not None:
            self._load(self.rows_from)
        return self._digests

    @property
    def summary(self) -> bytes:
        if self.rows_from is not None:
            self._load(self.rows_from)
        return self._summary

    @property
    def case_rows(self) -> CaseRows:
        if self.record.startswith(("[2,", "[3,")) and self.beside is not None:
            _, error, judges, judge_tokens = json.loads(self.record)
            metrics, summaries = self.beside()
            if self.record.startswith("[3,"):
                summaries = derived_summaries(metrics)
            return CaseRows(self.eval_id, self.status, self.num_runs, self.seconds, self.tokens, error,
                            [(self.eval_id, *m) for m in metrics], [(self.eval_id, *m) for m in summaries],
                            tuple(judges), judge_tokens)
        rows = read_record(self.eval_id, self.status, self.num_runs, self.seconds, self.tokens, self.record)
        if rows is None:  # (the reader returns no KeptCase of another record version)
            raise ValueError(f"a verdict record of another version: {self.eval_id!r}")
        return rows

    def outcome(self) -> CaseOutcome:
        """The case itself, for a sink that reads more than the rows: its summary parsed, its
        runs rebuilt from their digests (a run without one parsed whole), each run remembered
        as its row (`remember_placed`). Built once."""
        if self._outcome is None:
            runs = [_run(raw, digest) for raw, digest in zip(self.rows, self.digests, strict=True)]
            self._outcome = CaseOutcome(self.eval_set_id, self.gating,
                                        CaseSummary.model_validate_json(self.summary), runs)
        return self._outcome


def _run(raw: bytes, digest: str | None) -> EvalCaseResult:
    result: EvalCaseResult | None = None
    if digest is not None:
        try:
            result = from_digest(digest)
        except ValueError:  # a digest of another format
            result = None
    if result is None:
        result = EvalCaseResult.model_validate_json(raw)
    if raw.startswith(b"{\n"):  # (a row of an older agenteval is compact JSON)
        remember_placed(result, raw)
    return result


__all__ = ["BESIDE", "DERIVED", "READABLE", "VERSION", "Frame", "KeptCase", "KeptRows", "Tally", "derivable",
           "derived_summaries", "figures", "read_record", "summaries_derived", "tally", "verdict_row"]
