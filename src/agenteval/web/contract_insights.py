"""The web API's response models for looking into runs (issue 27): a run's cases searched,
filtered and sorted, its failure groups, flaky cases across the history, the run matrix and
human reviews. Listed in `/openapi.json` with the rest (`agenteval.web.contract`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agenteval.web.contract import Out, StatusWord


class CaseHit(Out):
    """A case of a run matching a search, with what it was sorted by."""

    position: int
    """Its place in the run (case order, from 0)."""
    eval_id: str
    """The case."""
    status: StatusWord
    """Its verdict over runs."""
    score: float | None
    """The mean of its gating criteria's means (None: nothing scored)."""
    seconds: float | None
    """The agent's seconds over its runs."""
    tokens: float | None
    """The agent's tokens over its runs."""
    failing: list[str]
    """Its failing (or not evaluated) gating criteria."""
    tools: list[str]
    """The tools it called."""
    errors: list[str]
    """Its error types (`TimeoutError`, `<criterion> error`)."""


class CaseSearch(Out):
    """One page of a run's cases matching a search, and what the run can be filtered by."""

    total: int
    """Cases matching (over every page)."""
    cases: list[CaseHit]
    """This page, in the order asked for."""
    criteria: list[str]
    """Every criterion failing somewhere in the run."""
    tools: list[str]
    """Every tool called in the run."""
    arguments: list[str]
    """Every tool argument (`tool.arg`) passed in the run."""
    errors: list[str]
    """Every error type in the run."""


class FailureGroupView(Out):
    """Failing cases sharing one reason (`12 cases: `lookup.q` differs`)."""

    reason: str
    """What failed, the same words for every case it applies to."""
    eval_ids: list[str]
    """The cases, in case order."""


class FlakyView(Out):
    """A case whose verdicts both passed and failed across the history."""

    eval_set_id: str
    """Its eval set."""
    eval_id: str
    """The case."""
    runs: int
    """Case runs seen (every stored run and its repeats)."""
    passed: int
    """Of which passed."""
    pass_rate: float
    """passed / runs."""
    flip_rate: float
    """The share of consecutive verdicts that differ."""
    stored_runs: int
    """Stored runs the case appears in."""


class MatrixCellView(Out):
    """One case in one run of the matrix."""

    status: StatusWord
    """Its verdict."""
    score: float | None
    """The mean of its gating criteria's means."""
    answer: list[str]
    """Each invocation's final response (in the column's case run)."""
    calls: list[str]
    """Its tool calls, `name(arg=value)`."""
    changed: bool
    """Whether answer or calls differ from the cell to the left."""
    diff: list[str]
    """The line diff against the cell to the left (`- `, `+ `, `  ` lines; calls as `call …`)."""
    error: str | None
    """The agent's error when the case run ended in one."""


class MatrixColumn(Out):
    """A run of the matrix."""

    run_id: str
    """The run's document id."""
    label: str
    """The run id the CLI printed (else the document id), with its agent model if any."""
    created: float
    """When it ran (epoch seconds)."""
    run_index: int = 0
    """Which of the run's repeats this column shows."""
    run_indices: int = 1
    """How many repeats the run has (1: not repeated; more: a column per repeat, or one picked)."""


class MatrixRowView(Out):
    """One eval id across the runs."""

    eval_id: str
    """The case."""
    changed: bool
    """Whether any cell changed against its left neighbour."""
    cells: list[MatrixCellView | None]
    """One per column (None: that run lacks the case)."""


class MatrixView(Out):
    """Runs side by side: cases as rows, runs (a column per repeat of a repeated run) as columns."""

    columns: list[MatrixColumn]
    """The runs, in the order asked for, each repeated one's run indices in order."""
    total: int
    """Rows before paging (after `changed_only`)."""
    rows: list[MatrixRowView]
    """This page of rows."""


class ToolParamView(Out):
    """An argument of a declared tool."""

    name: str
    """The argument's name."""
    type: str
    """Its JSON schema type (`string`, `integer`, …; `any` when none is declared)."""
    required: bool
    """Whether a call must pass it."""
    description: str
    """What the tool's docstring says of it."""
    json_schema: dict[str, Any] = Field(default_factory=dict)
    """Its JSON schema, for typed inputs: `type` (lower case), `enum`, `items`, `properties` and
    `required` of an object, bounds (`agents.declared.json_schema`)."""


class ToolInfo(Out):
    """A tool the agent declares (read from the agent object, not from a run)."""

    name: str
    """The tool's name, as calls name it."""
    description: str
    """Its description."""
    params: list[ToolParamView]
    """Its arguments, in declaration order."""
    agent: str
    """The agent (or sub-agent) declaring it."""


class ReviewBody(Out):
    """A person's review of a verdict (PUT body)."""

    eval_id: str = Field(min_length=1, max_length=500)
    """The case."""
    run_index: int = Field(0, ge=0)
    """Which of its runs."""
    target: str = Field("", max_length=500)
    """"" for the case's verdict, else the judged criterion's name."""
    agreement: Literal["agree", "disagree"]
    """Whether the reviewer agrees with the verdict (`disagree`: the judge was wrong)."""
    comment: str = Field("", max_length=4000)
    """Why."""
    reviewer: str | None = Field(None, max_length=200)
    """Who (free text)."""


class ReviewView(ReviewBody):
    """A stored review."""

    run_id: str
    """The run's document id."""
    created: float
    """When it was stored (epoch seconds)."""


__all__ = ["CaseHit", "CaseSearch", "FailureGroupView", "FlakyView", "MatrixCellView", "MatrixColumn",
           "MatrixRowView", "MatrixView", "ReviewBody", "ReviewView", "ToolInfo", "ToolParamView"]
