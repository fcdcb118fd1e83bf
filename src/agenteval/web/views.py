"""What the API returns, as JSON-ready values: sessions, run rows, run and case views,
comparisons and trends. Verdicts, summaries, diffs and comparisons come from `verdicts`,
`reporting` and the store; these functions only shape them (and pair tool calls argument by
argument, which nothing else does).

Statuses the API computes are words (`passed`, `failed`, `not_evaluated`, `informational`);
documents are returned as they are stored (ADK's integers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import agenteval.reporting.certificates as certificates
from agenteval.calibration import reviewable
from agenteval.reporting.agent_tree import case_agents, multi_agent, node_facts, verdict_text
from agenteval.reporting.compare import CaseChanges, CaseDelta, Shown
from agenteval.reporting.html import tool_call_diff
from agenteval.reporting.outcome import (
    call_lines,
    criterion_reason,
    problems,
    report_why,
    result_reason,
    shown_why,
)
from agenteval.reporting.paired import inconclusive_line
from agenteval.schema import (
    EvalCaseResult,
    EvalMetricResult,
    EvalSetResult,
    EvalStatus,
    FunctionCall,
    Invocation,
    MetricSummary,
    RunSpec,
    content_text,
)
from agenteval.store.sessions import ChatSession, ChatTurn
from agenteval.tracing.agent_summary import AgentNode, InvocationAgents, agent_summary
from agenteval.verdicts import CaseOutcome, SetCounts, invocation_tokens, outcomes
from agenteval.verdicts.paired import CaseStat, PairedComparison
from agenteval.web.contract import (
    AgentNodeView,
    ArgumentDiff,
    CallPair,
    CaseRow,
    CaseVerdict,
    CaseView,
    ChatTurnView,
    DiffLine,
    InvocationAgentsView,
    InvocationView,
    RunRow,
    RunState,
    RunView,
    ScoreCell,
    SessionEvent,
    SessionView,
    StatusWord,
    SummaryMetric,
    ToolCall,
    ToolResult,
)
from agenteval.web.contract_compare import (
    CaseChange,
    ComparisonView,
    CriterionChange,
    MeasureView,
    PairedCaseView,
    PairedView,
    TrendPoint,
)
from agenteval.web.history import StoredRun

MAX_RUN_CASES = 100  # cases not passed listed with a run; the rest are paged by /cases

_WORDS: dict[EvalStatus, StatusWord] = {EvalStatus.PASSED: "passed", EvalStatus.FAILED: "failed",
                                        EvalStatus.NOT_EVALUATED: "not_evaluated",
                                        EvalStatus.INFORMATIONAL: "informational"}


def status_word(status: EvalStatus) -> StatusWord:
    return _WORDS[status]


# --- chat sessions ---------------------------------------------------------------------------

def turn_json(turn: ChatTurn) -> ChatTurnView:
    """A chat turn: the user's text, the answer, the tool calls and results, the invocation
    (as an eval set holds it), the trace and the error."""
    inv = turn.invocation
    return ChatTurnView(
        user=content_text(inv.user_content), response=content_text(inv.final_response),
        tool_calls=[ToolCall(name=c.name, args=c.args) for c in inv.tool_calls()],
        tool_responses=[ToolResult(name=r.name, response=r.response) for r in inv.tool_responses()],
        invocation=inv,
        trace=turn.trace, error=turn.error, warnings=turn.warnings,
        agents=_agents(agent_summary(turn.trace)))


def session_json(session: ChatSession, turns: bool = True) -> SessionView:
    """A session as ADK's dev server shows one (`id`, `app_name`, `user_id`, `state`, `events`),
    with its turns; `events` are the turns' messages and tool events in order."""
    return SessionView(
        id=session.id, app_name=session.app_name, user_id=session.user_id, state=session.state,
        initial_state=session.initial_state, created=session.created, model=session.model,
        num_turns=len(session.turns), turns=[turn_json(t) for t in session.turns] if turns else None,
        events=[event for i, t in enumerate(session.turns) for event in _events(i, t.invocation)]
        if turns else [])


def _events(index: int, inv: Invocation) -> list[SessionEvent]:
    events = [SessionEvent(invocation_index=index, author="user", content=inv.user_content)]
    data = inv.model_dump(mode="json", exclude_none=True).get("intermediate_data") or {}
    for event in data.get("invocation_events", []):
        if event.get("content"):
            events.append(SessionEvent.model_validate({**event, "invocation_index": index}))
    if inv.final_response is not None:
        events.append(SessionEvent(invocation_index=index, author="agent", content=inv.final_response))
    return events


# --- runs ------------------------------------------------------------------------------------

def _row_fields(stored: StoredRun) -> dict[str, Any]:
    row = stored.row
    try:
        path = str(row.result_path.relative_to(stored.root))
    except ValueError:
        path = str(row.result_path)
    return dict(
        run_id=row.run_id, created=row.created, eval_set_id=row.eval_set_id, agent=row.agent,
        agent_model=row.agent_model, judge_model=row.judge_model, num_runs=row.num_runs,
        cases_total=row.cases_total, cases_passed=row.cases_passed, cases_failed=row.cases_failed,
        cases_not_evaluated=row.cases_not_evaluated, duration_seconds=row.duration_seconds,
        total_tokens=row.total_tokens, result_path=path, eval_set_sha256=row.eval_set_sha256,
        gating=row.gating, run_group=row.run_group, app=stored.app,
        # The store's counts, as `agenteval runs` shows them: a case not evaluated is not failed.
        status="failed" if row.cases_failed else "not_evaluated" if row.cases_not_evaluated else "passed")


def run_row(stored: StoredRun) -> RunRow:
    """A row of the run history (`RunStore.list_runs`'s fields), with its app and status."""
    return RunRow(**_row_fields(stored))


def summary_metric(m: MetricSummary, gating: str | None = None,
                   runs: Sequence[EvalCaseResult] = ()) -> SummaryMetric:
    """A criterion's summary with its status as a word; with the case's `gating` rule, its
    reason is `criterion_reason`'s (else the one stored)."""
    reason = criterion_reason(m, gating, runs) if gating is not None else m.reason
    return SummaryMetric(**{**dict(m), "reason": reason}, status=status_word(m.eval_status))


def _score(m: EvalMetricResult, stored: str | None, run: EvalCaseResult | None = None,
           invocation: int | None = None) -> ScoreCell:
    note = run.certificate(m.metric_name) if run is not None else None
    return ScoreCell(name=m.metric_name, score=m.score, threshold=m.threshold,
                     status=status_word(m.eval_status), reason=result_reason(m, stored, run, invocation),
                     certificate=None if note is None else certificates.line(note).split(": ", 1)[1])


def run_view(stored: StoredRun, not_passed: EvalSetResult, counts: SetCounts,
             criteria: tuple[list[str], list[str]], header: RunSpec | None, state: RunState = "finished",
             max_cases: int = MAX_RUN_CASES,
             read: Callable[[list[str]], Mapping[str, CaseOutcome]] = lambda ids: {}) -> RunView:
    """A run: its header, the `counts`, the criteria it was scored with (`RunStore.criteria`:
    gating ones first, in the config's order where known), and the cases that did not pass
    (`not_passed`: their summaries; at most `max_cases` shown, all of them paged by `/cases`),
    each with its verdict, criteria summaries and why it failed as `agenteval runs show` says
    it (`shown_why`: of the shown cases as `read` gives them from the document, else of their
    summaries)."""
    cases = outcomes(not_passed)[:max_cases]
    full = read([c.eval_id for c in cases])
    gating, informational = criteria
    configured = list((header.config.get("criteria") or {}) if header else {})
    rank = {name: i for i, name in enumerate(configured)}  # the config's order, where known
    ordered = sorted(gating, key=lambda n: rank.get(n, len(rank)))
    return RunView(
        **_row_fields(stored), header=header, counts=counts, criteria=[*ordered, *informational],
        cases_not_passed=counts.total - counts.passed, state=state,
        cases=[CaseVerdict(eval_id=c.eval_id, status=status_word(c.status), runs=c.num_runs,
                           metrics=[summary_metric(m, c.gating, c.runs) for m in c.summary.metrics],
                           problems=shown_why(c, full.get(c.eval_id)))
               for c in cases])



def statuses(word: str | None) -> set[int] | None:
    """The statuses shown as `word` (None: every status)."""
    return None if word is None else {int(s) for s, w in _WORDS.items() if w == word}


def case_rows(page: Sequence[EvalCaseResult]) -> list[CaseRow]:
    """Per case run of a page its status, each criterion's score, threshold and status, the
    agent's error and the run's warnings."""
    return [CaseRow(
        eval_id=r.eval_id, run_index=r.run_index, status=status_word(r.final_eval_status),
        metrics=[_score(m, r.reason(m.metric_name), r) for m in r.overall_eval_metric_results],
        error=r.error_message, metric_errors=len(r.metric_errors), warnings=list(r.warnings),
        seconds=_total([p.actual_invocation.duration for p in r.eval_metric_result_per_invocation]),
        tokens=_total([invocation_tokens(p.actual_invocation) for p in r.eval_metric_result_per_invocation]),
    ) for r in page]


def _total(values: Sequence[float | None]) -> float | None:
    """The sum of the values given (None when none is): a case run's totals, as the run's are."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def argument_diff(expected: Sequence[FunctionCall], actual: Sequence[FunctionCall]) -> list[CallPair]:
    """Expected and actual calls paired by tool name in order (the n-th expected call of a tool
    with its n-th actual call); per pair the arguments that differ (`expected` / `actual`
    values, `missing` on the side that lacks the argument). Unpaired calls are `missing` (expected,
    not made) or `unexpected` (made, not expected). Arguments compare as the trajectory
    criterion compares them (as values: 1 == 1.0, "1" != 1)."""
    out: list[CallPair] = []
    used: set[int] = set()
    for i, e in enumerate(expected):
        j = next((j for j, a in enumerate(actual) if j not in used and a.name == e.name), None)
        if j is None:
            out.append(CallPair(tool=e.name, expected_index=i, actual_index=None, status="missing",
                                arguments=[]))
            continue
        used.add(j)
        want, got = e.args or {}, actual[j].args or {}
        diffs = [ArgumentDiff(name=k, expected=want.get(k), actual=got.get(k),
                              missing="actual" if k not in got else "expected" if k not in want else None)
                 for k in dict.fromkeys([*want, *got]) if k not in want or k not in got or want[k] != got[k]]
        same = not diffs and (e.args is None) == (actual[j].args is None)
        out.append(CallPair(tool=e.name, expected_index=i, actual_index=j,
                            status="same" if same else "different", arguments=diffs))
    out += [CallPair(tool=a.name, expected_index=None, actual_index=j, status="unexpected", arguments=[])
            for j, a in enumerate(actual) if j not in used]
    return out


def _agent_node(node: AgentNode) -> AgentNodeView:
    # Built children first from an explicit stack: an agent chain of any depth.
    order: list[AgentNode] = []
    stack = [node]
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(n.children)
    built: dict[int, AgentNodeView] = {}
    for n in reversed(order):
        built[id(n)] = AgentNodeView(agent=n.agent, via=n.via, span_ids=n.span_ids, facts=node_facts(n),
                                     passed=n.passed, verdict=verdict_text(n),
                                     children=[built[id(k)] for k in n.children])
    return built[id(node)]


def agents_view(run: EvalCaseResult) -> list[InvocationAgentsView]:
    """The case run's agent trees (`reporting.agent_tree`) when more than one agent ran, else []."""
    return _agents(case_agents(run))


def _agents(summary: list[InvocationAgents]) -> list[InvocationAgentsView]:
    if not multi_agent(summary):
        return []
    return [InvocationAgentsView(index=inv.index, roots=[_agent_node(n) for n in inv.roots])
            for inv in summary]


def case_view(result: EvalSetResult, case: CaseOutcome, run: EvalCaseResult, app: str | None,
              run_group: str | None = None) -> CaseView:
    """One case run whole (trace and judge records included), its verdict over runs and why it
    did not pass as `runs show` and the Markdown report say it (`report_why`: with each judged
    criterion's certificate; for a case that passed, what counted against it: `problems`), and
    per invocation the tool-call diff, the argument-level diff and the judge records
    about it."""
    invocations = []
    for i, per in enumerate(run.eval_metric_result_per_invocation):
        exp, act = per.expected_invocation, per.actual_invocation
        expected_calls = exp.tool_calls() if exp is not None else []
        invocations.append(InvocationView(
            index=i, user=content_text(act.user_content),
            expected_response=content_text(exp.final_response) if exp is not None else None,
            actual_response=content_text(act.final_response),
            tool_call_diff=[DiffLine(op=op, call=line) for op, line in
                            tool_call_diff(call_lines(expected_calls), call_lines(act.tool_calls()))],
            argument_diff=argument_diff(expected_calls, act.tool_calls()),
            scores=[_score(m, run.reason(m.metric_name, i), run, i) for m in per.eval_metric_results],
            judge_records=[k for k, r in enumerate(run.judge_records) if r.invocation_index == i]))
    return CaseView(
        run_id=result.eval_set_result_id, run_group=run_group, app=app, eval_set_id=result.eval_set_id,
        eval_id=case.eval_id, run_index=run.run_index, runs=[r.run_index for r in case.runs],
        status=status_word(run.final_eval_status), verdict=status_word(case.status),
        summary=[summary_metric(m, case.gating, case.runs) for m in case.summary.metrics],
        problems=problems(case) if case.status == EvalStatus.PASSED else report_why(case),
        invocations=invocations, result=run, agents=agents_view(run),
        reviewable=reviewable(run))


# --- comparisons and trends ------------------------------------------------------------------

def _metric_or_none(m: MetricSummary | None) -> SummaryMetric | None:
    return None if m is None else summary_metric(m)


def comparison_json(c: CaseChanges, show: Shown, total: int, offset: int,
                    page: Sequence[CaseDelta]) -> ComparisonView:
    """`reporting.compare.case_changes`'s result as JSON (changes as their words), with a page
    (`page`, from `offset`) of the `total` cases `show` names."""
    return ComparisonView(
        baseline_id=c.baseline_id, candidate_id=c.candidate_id, baseline_set=c.baseline_set,
        candidate_set=c.candidate_set, margin=c.margin, has_regressions=c.has_regressions,
        counts={k.value: v for k, v in c.counts().items()}, show=show, total=total, offset=offset,
        cases=[CaseChange(eval_id=d.eval_id, change=d.change.value, regressed=d.regressed,
                          before=status_word(d.before) if d.before is not None else None,
                          after=status_word(d.after) if d.after is not None else None,
                          criteria=[CriterionChange(metric_name=k.metric_name, change=k.change.value,
                                                    delta=k.delta, significant=k.significant,
                                                    before=_metric_or_none(k.before),
                                                    after=_metric_or_none(k.after)) for k in d.criteria])
               for d in page])


def paired_json(c: PairedComparison, total: int, offset: int, page: Sequence[CaseStat],
                criteria_differ: list[str]) -> PairedView:
    """`verdicts.paired.compare_paired`'s result as JSON, with a page (`page`, from `offset`)
    of the `total` cases asked for, what `agenteval compare` says of its INCONCLUSIVE cases, and
    `criteria_differ` (`reporting.paired.config_differences` of the two runs' configs)."""
    measures = [MeasureView(
        name=m.name, pairs=m.pairs, pass_a=m.pass_a, pass_b=m.pass_b, pass_ci=m.pass_ci, a_only=m.a_only,
        b_only=m.b_only, p_value=m.p_value, p_adjusted=m.p_adjusted, score_a=m.score_a,
        score_b=m.score_b, score_ci=m.score_ci, score_p=m.score_p,
        significant="regression" if m in c.regressions else "improvement" if m in c.improvements else None)
        for m in c.measures]
    cases = [PairedCaseView(eval_id=x.eval_id, change=x.change.value, passed_a=x.passed_a, runs_a=x.runs_a,
                            passed_b=x.passed_b, runs_b=x.runs_b, p_value=x.p_value,
                            pass_k_a=x.pass_at(c.k, "a"), pass_k_b=x.pass_at(c.k, "b")) for x in page]
    return PairedView(baseline_id=c.baseline_id, candidate_id=c.candidate_id, alpha=c.alpha,
                      decision=c.decision(), gate_failed=c.gate_failed, measures=measures,
                      counts={k.value: v for k, v in c.counts().items()}, total=total, offset=offset,
                      cases=cases, k=c.k, pass_k_a=c.pass_k("a"), pass_k_b=c.pass_k("b"),
                      inconclusive=inconclusive_line(c), criteria_differ=criteria_differ)


def trend_point(stored: StoredRun, criteria: dict[str, float]) -> TrendPoint:
    """One run on the charts: its pass rate (from its row) and each criterion's mean score over
    its cases (`RunStore.criterion_means`)."""
    row = stored.row
    return TrendPoint(run_id=row.run_id, run_group=row.run_group, app=stored.app, created=row.created,
                      eval_set_id=row.eval_set_id, cases=row.cases_total, passed=row.cases_passed,
                      pass_rate=row.cases_passed / row.cases_total if row.cases_total else None,
                      criteria=criteria)


__all__ = ["argument_diff", "case_rows", "case_view", "comparison_json", "paired_json", "run_row", "run_view",
           "session_json", "status_word", "summary_metric", "trend_point", "turn_json"]
