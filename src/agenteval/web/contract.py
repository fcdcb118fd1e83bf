"""The web API's response models: what every JSON route returns, listed in `/openapi.json`.

The page's JSDoc types (`static/types.js`) are generated from that schema
(`agenteval.web.openapi`), and `tests/web/test_contract.py` checks that the page's modules read
only fields these models have. Documents the API hands back as stored are the schema package's
own models (`EvalSet`, `EvalCase`, `EvalSetResult`, `EvalCaseResult`, `RunSpec`, `MetricSummary`,
`Invocation`, `Trace`), never described again here. Every model is serialised by field name
(snake_case), as the result documents are.

Routes that return no JSON say so in their docstrings: the run's server-sent events
(`/api/runs/{run_id}/events`, events as `jobs` describes them), its HTML report
(`/api/runs/{run_id}/export`), and the page and its files (`/`, `/static`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agenteval.schema import (
    Content,
    EvalCaseResult,
    Invocation,
    MetricSummary,
    RunSpec,
)
from agenteval.schema.trace import Trace
from agenteval.verdicts import SetCounts

StatusWord = Literal["passed", "failed", "not_evaluated", "informational"]
RunState = Literal["running", "recording", "finished", "failed", "cancelled"]


class Out(BaseModel):
    """A response model: fields documented by their docstrings, no other keys."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")


# --- agents and criteria ---------------------------------------------------------------------

class AppInfo(Out):
    """An agent folder under AGENTS_DIR, imported."""

    name: str
    """The folder's name (the `app` of every path)."""
    kind: str | None
    """What kind of agent it is (None when it could not be imported)."""
    error: str | None
    """Why it could not be imported (None when it was)."""


class CriterionInfo(Out):
    """A registered criterion a run may use."""

    name: str
    """The criterion's (metric's) name, as an eval config names it."""
    description: str
    """What it measures."""
    judged: bool
    """Whether an LLM judge scores it (it then takes judge model options)."""
    min_value: float | None
    """The lowest score it gives."""
    max_value: float | None
    """The highest score it gives."""
    default_threshold: float | None
    """agenteval's default config's threshold for it, else None."""
    informational: bool
    """Reported only: never passes or fails a case."""


class AgentNodeView(Out):
    """One agent in an invocation's agent tree (`tracing.agent_summary`), as the CLI and the
    HTML report show it."""

    agent: str
    """The agent's name."""
    via: str | None
    """How control reached it: handoff, tool, sequential, parallel, loop or sub_agent (None: the
    invocation's first agent)."""
    span_ids: list[str]
    """Its runs' `agent` spans in the trace (empty: calls were expected from it, it never ran)."""
    facts: list[str]
    """What its line says: how it was reached, its runs, its own calls, tokens, time and tools."""
    passed: bool | None
    """Whether its calls matched when a criterion matched them on their own (None: none did)."""
    verdict: str | None
    """That verdict in words: `✓ calls matched`, or `✗` and why (naming both agents for a call
    made by the wrong one)."""
    children: list[AgentNodeView]
    """The agents it handed control to, called as tools, or ran as workflow stages."""


class InvocationAgentsView(Out):
    """The agent tree of one invocation."""

    index: int
    """The invocation's index."""
    roots: list[AgentNodeView]
    """Its first agents (and agents calls were expected from that never ran)."""


# --- chat sessions ---------------------------------------------------------------------------

class ToolCall(Out):
    """A tool call the agent made."""

    name: str
    """The tool."""
    args: dict[str, Any] | None
    """Its arguments."""


class ToolResult(Out):
    """A tool's response."""

    name: str | None
    """The tool (None when the response does not name it)."""
    response: dict[str, Any] | None
    """What it returned."""


class ChatTurnView(Out):
    """One turn of a chat session."""

    user: str
    """The user's text."""
    response: str
    """The agent's final answer as text ('' when it gave none)."""
    tool_calls: list[ToolCall]
    """The tool calls the agent made, in order."""
    tool_responses: list[ToolResult]
    """The tools' responses, in order."""
    invocation: Invocation
    """The turn as an eval set holds it."""
    trace: Trace | None
    """What happened inside the turn (None when no trace was kept)."""
    error: str | None
    """The agent's error when the turn failed."""
    warnings: list[str]
    """What was lost making the agent's values JSON."""
    agents: list[InvocationAgentsView]
    """The turn's agent tree when more than one agent ran in it, else empty."""


class SentTurn(ChatTurnView):
    """The turn a message gave, with where it is in the session and the state after it."""

    index: int
    """The turn's index in the session."""
    state: dict[str, Any]
    """The session's state after the turn."""


class SessionEvent(Out):
    """A message or tool event of a session, as ADK's dev server lists them (other keys of the
    recorded event are kept)."""

    model_config = ConfigDict(extra="allow")

    invocation_index: int
    """The turn the event belongs to."""
    author: str | None = None
    """`user`, `agent` or the recorded event's author."""
    content: Content | None = None
    """The event's content."""


class SessionView(Out):
    """A chat session as ADK's dev server shows one, with its turns."""

    id: str
    """The session id."""
    app_name: str
    """The agent it talks to."""
    user_id: str
    """The user it belongs to."""
    state: dict[str, Any]
    """The state now."""
    initial_state: dict[str, Any]
    """The state it started with."""
    created: float
    """When it was created (epoch seconds)."""
    model: str | None
    """The model the agent was asked to run on (None: its own)."""
    num_turns: int
    """How many turns it has."""
    turns: list[ChatTurnView] | None
    """Its turns (None in a listing of sessions)."""
    events: list[SessionEvent]
    """The turns' messages and tool events in order (empty in a listing)."""


class Deleted(Out):
    """What a DELETE removed."""

    deleted: str
    """The id of the session or case deleted."""


class DeletedRunView(Deleted):
    """What deleting a recorded run removed (`deleted`: its document id)."""

    reviews: int
    """How many reviews of it went with it."""
    kept: list[str]
    """Its documents left on disk: recorded from where they were written, outside the history."""


# --- runs ------------------------------------------------------------------------------------

class RunDefaults(Out):
    """What `agenteval eval` would use for an eval set: the run dialog opens with it."""

    criteria: dict[str, dict[str, Any]]
    """Criteria by name, each its resolved criterion object (threshold, match type, judge model
    options, ...), the informational ones left out."""
    source: str | None
    """The config they come from, relative to the agent's folder (None: no test_config.json
    beside the set, so the defaults)."""


class UnfinishedRun(Out):
    """A journaled run that did not finish."""

    run_id: str
    """The run: give it as `resume` to finish it."""
    status: str
    """`interrupted` (nobody owns it: resumable) or `running` (a live process owns it)."""
    started: float
    """When it started (seconds since the epoch)."""
    done: int
    """Case runs finished."""
    total: int
    """Case runs it covers."""
    errors: int
    """Finished case runs that ended in an agent or judge error (`retry_errors` runs them again)."""


class RunRef(Out):
    """A run by its id: one just started, or a document just stored."""

    run_id: str
    """The run's id: follow it at `/api/runs/{run_id}`."""


class Cancelling(Out):
    """A run asked to stop."""

    run_id: str
    """The run."""
    state: Literal["cancelling"]
    """Always `cancelling`: the run's events say when it has stopped."""


class RunRow(Out):
    """A row of the run history: one result document as the run store lists it."""

    run_id: str
    """The document's id (`eval_set_result_id`)."""
    created: float
    """When it was recorded (epoch seconds)."""
    eval_set_id: str
    """The eval set it ran."""
    agent: str | None
    """The agent's name, as the run header records it."""
    agent_model: str | None
    """The model the agent ran on, when one replaced its own."""
    judge_model: str | None
    """The judge model."""
    num_runs: int
    """Runs per case."""
    cases_total: int
    """Cases in the document."""
    cases_passed: int
    """Cases that passed."""
    cases_failed: int
    """Cases that failed (not counting those not evaluated), as `agenteval runs` counts them."""
    cases_not_evaluated: int
    """Cases no gating criterion gave a verdict for, counted apart from failed ones."""
    duration_seconds: float | None
    """Wall-clock time when measured, else the agent's summed invocation durations."""
    total_tokens: float | None
    """Agent tokens."""
    result_path: str
    """The document's file, relative to its store's folder where it lies inside it."""
    eval_set_sha256: str | None
    """The eval set file's hash when the run started."""
    gating: str
    """How repeated runs decide a case's verdict."""
    run_group: str | None
    """The run (`RunSpec.run_id`) the document belongs to."""
    app: str | None
    """The agent folder whose history holds it (None: AGENTS_DIR's own, e.g. an upload)."""
    status: Literal["passed", "failed", "not_evaluated"]
    """`passed` when every case passed; `failed` when a case failed; else `not_evaluated` (the
    cases that did not pass were not evaluated)."""


class SummaryMetric(MetricSummary):
    """A criterion's summary over a case's runs, with its status as a word."""

    status: StatusWord
    """`eval_status` as a word."""


class CaseVerdict(Out):
    """A case of a run that did not pass: its verdict and why."""

    eval_id: str
    """The case."""
    status: StatusWord
    """Its verdict over its runs."""
    runs: int
    """How many times it ran."""
    metrics: list[SummaryMetric]
    """Each criterion's summary over its runs."""
    problems: list[str]
    """Why it did not pass, one line per failing criterion."""


class RunView(RunRow):
    """A recorded run: its history row, header, counts and the cases that did not pass."""

    header: RunSpec | None
    """The run header (None for a document recorded without one)."""
    counts: SetCounts
    """Cases by verdict over their runs."""
    criteria: list[str]
    """The criteria scored, gating ones first (in the config's order), then informational ones."""
    cases_not_passed: int
    """How many cases did not pass (`cases` lists the first 100)."""
    cases: list[CaseVerdict]
    """The first cases that did not pass; every case is paged by `/api/runs/{run_id}/cases`."""
    state: RunState
    """`finished` for a recorded run."""


class JobView(Out):
    """A run started by this server that is not recorded (yet): running, failed or cancelled."""

    run_id: str
    """The run."""
    app: str
    """The agent it runs."""
    eval_set_id: str
    """The eval set it runs."""
    state: RunState
    """Where it is."""
    error: str | None
    """Why it failed."""
    result_ids: list[str]
    """Its result documents, once recorded."""
    events: int
    """Progress events so far (`/api/runs/{run_id}/events` streams them)."""


class ScoreCell(Out):
    """One criterion's score in one case run (or invocation)."""

    name: str
    """The criterion."""
    score: float | None
    """Its score (None when not scored)."""
    threshold: float | None
    """The threshold it was held to."""
    status: StatusWord
    """Its status."""
    reason: str | None
    """Why, as the criterion said where it decided (for a document without reasons: the score
    against the threshold where it did not pass); None for a pass with nothing stored."""
    certificate: str | None = None
    """A judged criterion's calibration certificate in the run (`certified: κ …`, `uncalibrated:
    …`, advisory when it did not gate); None for criteria not judged and older documents."""


class CaseRow(Out):
    """A case run in a page of a run's cases."""

    eval_id: str
    """The case."""
    run_index: int
    """Which of its runs."""
    status: StatusWord
    """The case run's status."""
    metrics: list[ScoreCell]
    """Each criterion's score."""
    error: str | None
    """The agent's error when inference failed."""
    metric_errors: int
    """How many criteria failed to score."""
    warnings: list[str] = []
    """What the case run said of itself, passed or not (`EvalCaseResult.warnings`)."""
    seconds: float | None = None
    """The agent's time over the case run's turns, summed (None when no turn was timed)."""
    tokens: float | None = None
    """The agent's tokens over the case run's turns, summed (None when none were reported)."""


class DiffLine(Out):
    """A line of the expected-against-actual tool-call diff."""

    op: Literal[" ", "-", "+"]
    """` ` in both, `-` expected and not made, `+` made and not expected."""
    call: str
    """The call as `name({args})`."""


class ArgumentDiff(Out):
    """An argument that differs between an expected call and the actual call paired with it."""

    name: str
    """The argument."""
    expected: Any
    """Its expected value (None when missing)."""
    actual: Any
    """Its actual value (None when missing)."""
    missing: Literal["expected", "actual"] | None
    """The side that lacks the argument, if one does."""


class CallPair(Out):
    """An expected call paired with the actual call of the same tool (the n-th with the n-th)."""

    tool: str
    """The tool."""
    expected_index: int | None
    """The expected call's index (None: made, not expected)."""
    actual_index: int | None
    """The actual call's index (None: expected, not made)."""
    status: Literal["same", "different", "missing", "unexpected"]
    """How the pair compares."""
    arguments: list[ArgumentDiff]
    """The arguments that differ."""


class InvocationView(Out):
    """One invocation of a case run, expected against actual."""

    index: int
    """The invocation's index."""
    user: str
    """The user's text."""
    expected_response: str | None
    """The expected answer (None when the case has no reference)."""
    actual_response: str
    """The agent's answer."""
    tool_call_diff: list[DiffLine]
    """Expected against actual tool calls, line by line."""
    argument_diff: list[CallPair]
    """Expected and actual calls paired, with the arguments that differ."""
    scores: list[ScoreCell]
    """Each criterion's score for this invocation."""
    judge_records: list[int]
    """Indexes into the case run's `judge_records` about this invocation."""


class CaseView(Out):
    """One case run whole, its verdict over runs and why it failed."""

    run_id: str
    """The document's id."""
    run_group: str | None = None
    """The run (`RunSpec.run_id`, as `agenteval eval` prints it) the document belongs to."""
    app: str | None
    """The agent folder whose history holds the run (None: AGENTS_DIR's own)."""
    eval_set_id: str
    """The eval set."""
    eval_id: str
    """The case."""
    run_index: int
    """The run shown."""
    runs: list[int]
    """The case's run indexes."""
    status: StatusWord
    """This run's status."""
    verdict: StatusWord
    """The case's verdict over its runs."""
    summary: list[SummaryMetric]
    """Each criterion over the case's runs."""
    problems: list[str]
    """Why the case did not pass, as `runs show` says it (each judged criterion's certificate
    last); for a case that passed, what counted against it (negative judge verdicts, errors)."""
    reviewable: list[str] = []
    """The run's judged criteria: those whose reviews `agenteval judge calibrate --from_reviews`
    takes as labels (only they are offered a review)."""
    invocations: list[InvocationView]
    """Per invocation: the diffs and scores."""
    result: EvalCaseResult
    """The case run as stored (trace and judge records included)."""
    agents: list[InvocationAgentsView]
    """Each invocation's agent tree when more than one agent ran in the case run, else empty."""


__all__ = ["AppInfo", "ArgumentDiff", "CallPair", "Cancelling", "CaseRow", "CaseVerdict", "CaseView",
           "ChatTurnView", "CriterionInfo", "Deleted", "DeletedRunView", "DiffLine", "InvocationView",
           "JobView", "Out",
           "RunRef", "RunRow", "RunState", "RunView", "ScoreCell", "SentTurn", "SessionEvent", "SessionView",
           "StatusWord", "SummaryMetric", "ToolCall", "ToolResult"]
