"""Recorded runs loaded whole: what an agent did (an eval set of actual conversations, a result
document, traces), paired with the expected cases (`recorded_source`), a source for the driver
(`runner.driver`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.datasets import check_unique_ids, parse_eval_set, validate_eval_set_json
from agenteval.datasets.files import parse_json, read_bytes
from agenteval.datasets.nesting import MAX_RESULT_DEPTH, check_depth
from agenteval.errors import DataError
from agenteval.runner.driver import (
    Collected,
    Scorer,
    Sinks,
    Source,
    completed,
    drive,
    new_document,
    progress,
)
from agenteval.runner.scoring import CaseRun, NotEvaluatedPolicy
from agenteval.schema import EvalCase, EvalCaseResult, EvalSet, EvalSetResult
from agenteval.schema.progress import Listener
from agenteval.schema.run import RunSpec
from agenteval.store.history import parse_result
from agenteval.tracing.ingest import TraceConversations, read_traces
from agenteval.tracing.otlp_json import looks_like_otlp

Actual = EvalSet | EvalSetResult | TraceConversations


def load_actual(path: str | Path) -> Actual:
    """What an agent did: an eval set of actual conversations, a result document written by
    `agenteval eval` (told apart by its `eval_set_result_id`), or an OpenTelemetry trace export
    (OTLP/JSON, told apart by its `resourceSpans`; see `agenteval.tracing.ingest`). An eval set
    or result document is refused when it holds one eval id twice (one (eval id, run index)
    pair, for a result document)."""
    text = read_bytes(path)
    head = text[:4096]
    if looks_like_otlp(head, path):
        check_depth(path, text, MAX_RESULT_DEPTH)  # a trace export is read by `json` too
        try:
            return read_traces(path, text.decode("utf-8-sig"))
        except UnicodeDecodeError as e:
            raise DataError(path, "", f"cannot read: {e}") from None
    if b"eval_set_result_id" not in head and b"evalSetResultId" not in head:
        # Fast path for an eval set (a result document, which starts with its id, skips it).
        # Whatever it rejects takes the general path below, which tells result documents
        # apart and locates errors.
        try:
            return validate_eval_set_json(text, path)
        except ValidationError:
            pass
    # A result document nests an eval set's content a few levels deeper than the set does.
    data = parse_json(path, text, MAX_RESULT_DEPTH)
    if isinstance(data, dict) and "eval_set_result_id" in data:
        result = parse_result(path, data)
        if not result.eval_case_results:  # re-scoring nothing would pass the gate
            raise DataError(path, "eval_case_results", "the list is empty: there is no case run to score")
        check_unique_runs(path, result)
        return result
    return parse_eval_set(path, data)


def check_unique_runs(source: str | Path | None, result: EvalSetResult) -> None:
    """Refuses a result document holding one run of one case twice: re-scored, the copies would
    count as two runs of the statistics (or one would be dropped)."""
    first: dict[tuple[str, int], int] = {}
    for i, got in enumerate(result.eval_case_results):
        j = first.setdefault((got.eval_id, got.run_index), i)
        if j != i:
            raise DataError(source, f"eval_case_results[{i}]",
                            f"duplicate run {got.run_index} of eval_id {got.eval_id!r} "
                            f"(also eval_case_results[{j}])")


def pair_runs(expected: EvalSet, actual: EvalSet,
              actual_source: str | Path | None = None) -> list[CaseRun]:
    """Pairs cases by eval id; missing or repeated ids and unequal turn counts are errors."""
    check_unique_ids(None, expected)  # loaded sets were checked; these may come from Python
    check_unique_ids(actual_source, actual)
    actual_index = {c.eval_id: (i, c) for i, c in enumerate(actual.eval_cases)}
    expected_ids = {c.eval_id for c in expected.eval_cases}
    extra = [c.eval_id for c in actual.eval_cases if c.eval_id not in expected_ids]
    if extra:
        i = actual_index[extra[0]][0]
        raise DataError(actual_source, f"eval_cases[{i}].eval_id",
                        f"{extra[0]!r} is not in the expected eval set")
    runs = []
    for case in expected.eval_cases:
        if case.eval_id not in actual_index:
            raise DataError(actual_source, "eval_cases",
                            f"no case with eval_id {case.eval_id!r} (the expected set has it)")
        i, got = actual_index[case.eval_id]
        runs.append(paired_case(case, got, i, expected.eval_set_id, actual_source))
    return runs


def paired_case(case: EvalCase, got: EvalCase, i: int, eval_set_id: str,
                source: str | Path | None) -> CaseRun:
    """The run of expected `case` that actual case `got` (`eval_cases[i]` of `source`)
    recorded; a missing conversation or another number of turns is an error."""
    if got.conversation is None:
        raise DataError(source, f"eval_cases[{i}].conversation",
                        "field required: recorded runs need a conversation")
    if case.conversation is not None and len(case.conversation) != len(got.conversation):
        raise DataError(source, f"eval_cases[{i}].conversation",
                        f"{len(got.conversation)} invocations, but the expected case "
                        f"{case.eval_id!r} has {len(case.conversation)}")
    state = got.session_input.state if got.session_input else None
    return CaseRun(case=case, actual=list(got.conversation), eval_set_id=eval_set_id,
                   session_state=got.final_session_state or state)


def runs_from_result(expected: EvalSet, result: EvalSetResult,
                     source: str | Path | None = None) -> list[CaseRun]:
    """The recorded runs of a result document, paired with the expected cases, for re-scoring;
    a run recorded twice is an error."""
    check_unique_ids(None, expected)
    check_unique_runs(source, result)
    cases = {c.eval_id: c for c in expected.eval_cases}
    runs = []
    for i, got in enumerate(result.eval_case_results):
        case = cases.get(got.eval_id)
        if case is None:
            raise DataError(source, f"eval_case_results[{i}].eval_id",
                            f"{got.eval_id!r} is not in the expected eval set")
        runs.append(recorded_run(case, got, i, expected.eval_set_id, source))
    return runs


def recorded_run(case: EvalCase, got: EvalCaseResult, i: int, eval_set_id: str,
                 source: str | Path | None) -> CaseRun:
    """The run of expected `case` that result `got` (`eval_case_results[i]` of `source`)
    recorded, to score again; another number of turns (but for a run that failed) is an error."""
    actual = [p.actual_invocation for p in got.eval_metric_result_per_invocation]
    if case.conversation is not None and len(actual) != len(case.conversation) \
            and got.error_message is None:
        raise DataError(source, f"eval_case_results[{i}].eval_metric_result_per_invocation",
                        f"{len(actual)} invocations, but the expected case {case.eval_id!r} "
                        f"has {len(case.conversation)}")
    return CaseRun(case=case, actual=actual, eval_set_id=eval_set_id, session_id=got.session_id,
                   user_id=got.user_id, run_index=got.run_index, error_message=got.error_message,
                   session_state=(got.session_details or {}).get("state"),
                   session_details=got.session_details, trace=got.trace,
                   warnings=list(got.warnings))  # what the run said of itself stays said


def recorded_source(expected: EvalSet, actual: Actual,
                    actual_source: str | Path | None = None) -> Source:
    """The recorded runs of `actual` (an eval set of actual conversations, a result document,
    traces), each paired with its expected case; the pairing errors are raised here. A case's
    runs are summarised together wherever they are in a result document."""
    if isinstance(actual, EvalSetResult):
        runs = runs_from_result(expected, actual, actual_source)
    elif isinstance(actual, TraceConversations):
        conversations, traces = actual.match(expected)
        runs = pair_runs(expected, conversations, actual_source)
        for run in runs:
            run.trace = traces.get(run.case.eval_id)
    else:
        runs = pair_runs(expected, actual, actual_source)
    return Source(expected.eval_set_id, lambda: iter(runs), total=len(runs),
                  together=not isinstance(actual, EvalSetResult),
                  actual_file=None if actual_source is None else str(actual_source))


async def score_recorded(expected: EvalSet, actual: Actual,
                         metrics: Sequence[ConfiguredMetric],
                         *, actual_source: str | Path | None = None,
                         policy: NotEvaluatedPolicy = "fail", gating: str = "mean",
                         judge: JudgeService | None = None, parallelism: int = 4,
                         listener: Listener | None = None,
                         header: RunSpec | None = None) -> EvalSetResult:
    """Scores every case of a recorded run (an eval set of actual conversations, or a result
    document's recorded invocations); one EvalSetResult, summarised over repeated runs by
    `gating` and carrying `header` as its `run` (as it is: see `runner.rescore` for a run)."""
    source = recorded_source(expected, actual, actual_source)
    document = new_document(expected.eval_set_id)
    collected = Collected()
    sink = Sinks([progress(listener), collected])
    await drive(source.read(), Scorer(metrics, policy, judge, listener), sink,
                parallelism=parallelism, gating=gating, together=source.together)
    sink.on_document(completed(document, gating, header))
    return collected.documents[0]
