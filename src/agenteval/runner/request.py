"""`RunRequest`: everything a run of an agent over eval sets needs, whoever asks for it.

The CLI's `eval` flags, the web's run body, the pytest plugin's options and `AgentEvaluator`'s
arguments are four parsers of this one model; `to_job` turns a request into the `EvalJob` the
runner runs, with the config resolved by one rule (see `request_config`), so that every front
end runs the same cases with the same criteria, limits and settings. The request is data
(JSON-serialisable); the loaded agent and eval sets are not part of it.
"""


import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval.criteria import default_registry
from agenteval.errors import DataError, from_validation_error
from agenteval.runner.job import EvalJob
from agenteval.runner.selection import resolve_config
from agenteval.schema import Concurrency, EvalConfig, LlmAsAJudgeCriterion
from agenteval.schema.config import MockMode
from agenteval.schema.criterion import Rationales
from agenteval.schema.run import RunCommand
from agenteval.verdicts.sequential import SequentialRule


class RunOutputs(BaseModel):
    """Files a run's results are written to besides the run history (each a path, or None)."""

    model_config = ConfigDict(extra="forbid")

    output: str | None = Field(default=None, description="The result document (ADK's EvalSetResult "
                               "layout; one file per eval set, named after it, when several).")
    junit_xml: str | None = Field(default=None, description="A JUnit XML report.")
    html: str | None = Field(default=None, description="A self-contained HTML report.")
    markdown: str | None = Field(default=None, description="A Markdown summary.")
    otlp_endpoint: str | None = Field(default=None, description="An OTLP/HTTP collector the run's "
                                      "traces are exported to.")


class RunRequest(BaseModel):
    """What to run and how. Unset fields take the config's value, else the default."""

    model_config = ConfigDict(extra="forbid")

    agent_path: str | None = Field(default=None, description="The agent: a package folder or a .py "
                                   "file exposing root_agent (None: the front end hands the agent in).")
    eval_sets: list[str] = Field(default_factory=list, description="Eval sets to run: FILE, FILE:id1,id2 "
                                 "(those cases only) or the id of a set stored beside the agent.")
    config_file: str | None = Field(default=None, description="The eval config. Default: "
                                    "test_config.json beside the eval set when one set is given, else "
                                    "the defaults.")
    criteria: dict[str, Any] | None = Field(default=None, description="Criteria replacing the config's "
                                            "(name to threshold or criterion object, as in a config "
                                            "file); the rest of the config stays.")
    num_samples: int | None = Field(default=None, ge=1, le=100, description="Judge samples per "
                                    "question, laid over every LLM-judged criterion.")
    agent_model: str | None = Field(default=None, description="A model replacing the agent's own.")
    judge_model: str | None = Field(default=None, description="The judge model of every LLM-judged "
                                    "criterion.")
    escalate_judge_model: str | None = Field(default=None, description="Where every judged "
                                             "criterion's uncertain verdicts go.")
    judge_rationales: Rationales | None = Field(
        default=None, description="Which verdicts of every judged criterion get a rationale.")
    num_runs: int = Field(default=1, ge=1, description="Runs of every case (with until_decided: in "
                          "the first round).")
    until_decided: bool = Field(default=False, description="Run again the cases whose pass / fail is "
                                "not decided yet (agenteval.verdicts.sequential), until each is "
                                "decided or has had max_runs runs.")
    max_runs: int = Field(default=10, ge=1, description="With until_decided: runs per case at most.")
    decide_alpha: float = Field(default=0.05, gt=0, lt=1, description="With until_decided: the chance "
                                "that a case's decision is wrong, at most.")
    decide_rate: float = Field(default=0.5, gt=0, lt=1, description="With until_decided: a case is "
                               "decided passed when its pass chance is above this, failed below.")
    parallelism: int = Field(default=4, ge=1, description="Case runs in flight at once.")
    model_parallelism: dict[str, int] = Field(default_factory=dict, description="Calls in flight at "
                                              "once per model endpoint (over the config's "
                                              "endpoints.*.max_concurrency).")
    judge_timeout: float | None = Field(default=None, gt=0, description="Seconds to wait for one "
                                        "judge reply.")
    judge_attempts: int | None = Field(default=None, ge=1, description="Tries per judge call.")
    case_timeout: float | None = Field(default=None, gt=0, description="Seconds per case run (else "
                                       "the config's case_timeout).")
    isolation: Literal["none", "process"] | None = Field(default=None, description="Where the agent's "
                                                         "turns run (else the config's isolation).")
    executor: Literal["local", "ray"] = Field(default="local", description="Where case runs go.")
    ray_address: str | None = Field(default=None, description="With the ray executor: the cluster.")
    resume: str | None = Field(default=None, description="An interrupted run to finish (its id, a "
                               "unique prefix, or latest): only the case runs it lacks are run.")
    retry_errors: bool = Field(default=False, description="With resume: also run again the case runs "
                               "that ended in an agent or judge error.")
    traces: bool = Field(default=True, description="Record each case run's spans.")
    history: bool = Field(default=True, description="Record the run in the run history (and its "
                          "case runs in the run journal as they finish).")
    no_cache: bool = Field(default=False, description="Ask judges again instead of reusing cached "
                           "verdicts.")
    mock_tools: MockMode | dict[str, MockMode] | None = Field(
        default=None, description="Tool calls answered from the eval set's expected calls instead of "
        "running the tool (agenteval.agents.mock_tools): a mode for every tool, or per tool name (*: "
        "the others); replaces the config's mock_tools.")
    mock_tools_strict: bool | None = Field(default=None, description="With mock_tools: an expected-"
                                           "mode call matching no expected call fails the case "
                                           "(else the config's mock_tools_strict).")
    outputs: RunOutputs = Field(default_factory=RunOutputs)


def with_samples(criteria: dict[str, Any], num_samples: int | None) -> dict[str, Any]:
    """`num_samples` laid over every LLM-judged criterion's `judge_model_options`."""
    if num_samples is None:
        return criteria
    out: dict[str, Any] = {}
    for name, value in criteria.items():
        spec = default_registry().get(name)
        if spec is not None and issubclass(spec.criterion_model, LlmAsAJudgeCriterion):
            entry: dict[str, Any] = dict(value) if isinstance(value, dict) else {"threshold": value}
            options = entry.get("judge_model_options")
            entry["judge_model_options"] = {**(options if isinstance(options, dict) else {}),
                                            "num_samples": num_samples}
            value = entry
        out[name] = value
    return out


def with_tool_mocking(config: EvalConfig, request: RunRequest, source: str | None = None) -> EvalConfig:
    """The request's `mock_tools` and `mock_tools_strict`, where set, in place of the config's.
    Strict with no tool in `expected` mode is refused (DataError naming the request, else the
    config file `source`): it refused nothing, and a run that looked hermetic ran every tool;
    but not the config's strict under the request's own modes (`--mock_tools live`: run live)."""
    update: dict[str, Any] = {k: v for k in ("mock_tools", "mock_tools_strict")
                              if (v := getattr(request, k)) is not None}
    out = config.model_copy(update=update) if update else config
    modes = out.mock_tools
    served = (modes,) if isinstance(modes, str) else (modes or {}).values()
    # (The config's strict under a request's own modes, all live, is that request's choice.)
    if out.mock_tools_strict and "expected" not in served and (request.mock_tools_strict
                                                                 or request.mock_tools is None):
        raise DataError(None if request.mock_tools_strict else source, "mock_tools_strict",
                        "is true, but no tool is answered from the eval set (mock_tools is "
                        f"{'not set' if modes is None else json.dumps(modes)}): every tool would run "
                        "live; set mock_tools to expected (--mock_tools expected), or drop strict")
    return out


def request_config(request: RunRequest, beside: str | Path | None,
                   source_of_criteria: str = "the request") -> tuple[EvalConfig, str | None]:
    """The config a request runs with, and where it came from: `config_file`, else
    test_config.json beside `beside` (the one eval set given), else the defaults; then the
    request's `criteria` (named `source_of_criteria` in errors and as the source) and
    `num_samples` laid over it (and `mock_tools`, `mock_tools_strict`: `with_tool_mocking`)."""
    config, source = resolve_config(request.config_file, beside)
    config = with_tool_mocking(config, request, source)
    if request.criteria is None and request.num_samples is None:
        return config, source
    criteria = with_samples(config.criteria if request.criteria is None else request.criteria,
                            request.num_samples)
    try:  # read as a config file's `criteria` is (an integer threshold is a number)
        checked = EvalConfig.model_validate({"criteria": criteria}).criteria
    except ValidationError as e:
        raise from_validation_error(source_of_criteria, e) from None
    return (config.model_copy(update={"criteria": checked}),
            source_of_criteria if request.criteria is not None else source)


def to_job(request: RunRequest, config: EvalConfig, config_source: str | None, *, command: RunCommand,
         argv: Sequence[str] | None = None, agent: Any = None, app_name: str | None = None) -> EvalJob:
    """The job a request asks for, with `config` (see `request_config`); its eval sets and agent
    are loaded by the caller (`job.selections`, `job.agent`), so that it can refuse what is
    cheap to check first."""
    if request.retry_errors and request.resume is None:
        raise DataError(None, "retry_errors", "needs resume: the run whose errors to run again")
    rule = None
    if request.until_decided:
        if request.max_runs < request.num_runs:
            raise DataError(None, "max_runs", f"is {request.max_runs}, below num_runs "
                            f"({request.num_runs}): the first round runs num_runs")
        rule = SequentialRule(request.decide_alpha, request.decide_rate, request.max_runs)
    return EvalJob(config=config, config_source=config_source, judge_model=request.judge_model,
                   escalate_judge_model=request.escalate_judge_model,
                   judge_rationales=request.judge_rationales,
                   concurrency=Concurrency(cases=request.parallelism, model_calls=request.model_parallelism),
                   judge_timeout=request.judge_timeout, judge_attempts=request.judge_attempts,
                   command=command, argv=list(argv) if argv is not None else None, agent=agent,
                   num_runs=request.num_runs, agent_model=request.agent_model, app_name=app_name,
                   agent_path=request.agent_path, traces=request.traces, case_timeout=request.case_timeout,
                   resume=request.resume, retry_errors=request.retry_errors, executor=request.executor,
                   ray_address=request.ray_address, isolation=request.isolation, until_decided=rule)


__all__ = ["RunOutputs", "RunRequest", "request_config", "to_job", "with_samples",
           "with_tool_mocking"]
