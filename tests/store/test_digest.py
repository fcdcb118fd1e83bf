"""A case run's digest gives every sink of a resumed run what the whole result gives: the case
summary, the totals, the history's rows, the console table and the JUnit and Markdown reports,
from a fraction of the bytes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from agenteval.reporting import markdown
from agenteval.reporting.console import _lines
from agenteval.reporting.junit import _testcase
from agenteval.reporting.outcome import problems
from agenteval.runner.header import TotalsCounter
from agenteval.schema import EvalCaseResult, EvalMetricResultPerInvocation, EvalStatus, MetricError
from agenteval.schema.result import JudgeCertificateNote, MetricReason
from agenteval.store.case_rows import case_rows
from agenteval.store.digest import digest_json, from_digest
from agenteval.store.output import result_json
from agenteval.verdicts.aggregate import summarise_case
from agenteval.verdicts.outcome import CaseOutcome
from tests.result_builders import case, invocation, judge, metric

CERT = JudgeCertificateNote(metric_name="judged", status="below_floor", text="below floor: κ 0.31",
                            kappa=0.31, advisory=True)


def _runs(eval_id: str, n: int, fail_at: int | None = None) -> list[EvalCaseResult]:
    """`n` runs of a case with everything a sink reads: two turns (one timed, one with tokens),
    overall and per-invocation reasons, judge records (one escalated), a certificate; run
    `fail_at` fails a criterion, has a metric error and a negative verdict."""
    runs = []
    for i in range(n):
        failing = i == fail_at
        escalated = judge("judged", 1.0, "the stronger judge agrees")
        records = [judge("judged", 0.0 if failing else 1.0, f"rationale {i}", item="r1",
                         verdict="no" if failing else "yes"),
                   judge("judged", 1.0, "sure", item="r2").model_copy(update={
                       "uncertain": True, "escalated": escalated, "judge_model": "scripted:k",
                       "prompt_tokens": 11})]
        errors = [MetricError(metric_name="m", message="flaky", invocation_index=1)] if failing else []
        r = case(eval_id, {"m": 0.25 if failing else 0.75 + i / 100, "judged": 0.0 if failing else 1.0,
                           "info": None},
                 run_index=i, judge_records=records, duration=1.25 + i, tokens=40 + i, metric_errors=errors)
        second = EvalMetricResultPerInvocation(actual_invocation=invocation("again", duration=None, tokens=9),
                                               eval_metric_results=[metric("m", 0.5)])
        overall = [m.model_copy(update={"criterion": {"threshold": 0.5, "rubrics": ["long text"] * 20}})
                   for m in r.overall_eval_metric_results]
        overall[2] = overall[2].model_copy(update={"eval_status": EvalStatus.INFORMATIONAL})
        runs.append(r.model_copy(update={
            "eval_metric_result_per_invocation": [*r.eval_metric_result_per_invocation, second],
            "overall_eval_metric_results": overall,
            "reasons": [MetricReason(metric_name="m", reason=f"overall {i}"),
                        MetricReason(metric_name="m", invocation_index=0, reason="turn 0 " * 50)],
            "judge_certificates": [CERT], "warnings": ["a warning"],
            "final_eval_status": EvalStatus.FAILED if failing else EvalStatus.PASSED}))
    return runs


CASES = {
    "one run passing": _runs("p", 1),
    "one run failing": _runs("f", 1, fail_at=0),
    "three runs, one failing": _runs("r", 3, fail_at=1),
    "agent error": [case("e", {}, error="the agent raised", duration=0.5)],
    "no timings": [case("n", {"m": 1.0})],
}


def _outcome(runs: list[EvalCaseResult], gating: str = "mean") -> CaseOutcome:
    return CaseOutcome("s", gating, summarise_case(runs[0].eval_id, runs, gating, False), runs)


@pytest.mark.parametrize("name", CASES)
def test_every_sink_reads_the_same_of_a_digest_as_of_the_whole_result(name: str) -> None:
    whole = CASES[name]
    digests = [from_digest(digest_json(r)) for r in whole]
    for gating in ("mean", "all_runs", "any_run"):
        a, b = _outcome(whole, gating), _outcome(digests, gating)
        assert b.summary == a.summary  # what the document's summary and the history's rows hold
        assert (b.duration(), b.tokens()) == (a.duration(), a.tokens())
        assert case_rows(b) == case_rows(a)
        totals_a, totals_b = TotalsCounter(), TotalsCounter()
        totals_a.add(a)
        totals_b.add(b)
        assert vars(totals_b) == vars(totals_a)
        assert problems(b) == problems(a)
        xml_a, xml_b = ET.Element("s"), ET.Element("s")
        _testcase(xml_a, a)
        _testcase(xml_b, b)
        assert ET.tostring(xml_b) == ET.tostring(xml_a)
        assert markdown._failure_rows(b) == markdown._failure_rows(a)
        assert markdown._details(b) == markdown._details(a)
    for r, d in zip(whole, digests, strict=True):
        assert _lines(d) == _lines(r)  # the console's case table
        assert (d.eval_set_id, d.eval_id, d.run_index, d.final_eval_status, d.session_id) == \
            (r.eval_set_id, r.eval_id, r.run_index, r.final_eval_status, r.session_id)


def test_a_digest_is_a_small_part_of_the_result() -> None:
    (run,) = CASES["one run failing"]
    digest, whole = digest_json(run), result_json(run, keep=False)
    assert len(digest) * 4 < len(whole), (len(digest), len(whole))
    for left_out in ("judge prompt", "long text", "turn 0", "prompt f", "again"):
        assert left_out in whole.decode() and left_out not in digest
    assert "rationale 0" in digest and "overall 0" in digest  # what the reports show
