"""One evaluation job, as every front end (CLI, AgentEvaluator, pytest plugin) runs it.

Selecting eval sets and cases, resolving the config and judge models, building the agent
adapter and the user simulator, then running. The caller passes the environment (for model
API keys) and decides where results go; nothing here prints or reads `os.environ`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenteval.agents import to_adapter
from agenteval.criteria import ConfiguredMetric, default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.base import WEAK_ON_EMBEDDED
from agenteval.datasets import default_config_for, load_eval_config, load_eval_set
from agenteval.errors import DataError
from agenteval.models import parse_model_name, resolve_model
from agenteval.models.base import LLM
from agenteval.models.resolve import DEFAULT_HTTP_CONCURRENCY
from agenteval.runner.evaluate import EvalSetRequest, run_evaluation
from agenteval.schema import (
    ConversationScenario,
    EvalCaseResult,
    EvalConfig,
    EvalSet,
    EvalSetResult,
    LlmAsAJudgeCriterion,
)
from agenteval.simulation import LlmUserSimulator, parse_simulator_config
from agenteval.store import JudgeCacheDB, judge_cache_path


@dataclass
class Selection:
    """An eval set to run and, optionally, the case ids to run from it."""

    path: Path | None
    eval_set: EvalSet
    case_ids: list[str] | None = None


def split_selector(arg: str, agent_dir: Path | None) -> tuple[Path | None, list[str] | None]:
    """`file[:id1,id2]` → (file, ids); a bare id names `<agent_dir>/<id>.evalset.json`."""
    candidates: list[tuple[str, list[str] | None]] = [(arg, None)]
    if ":" in arg:
        head, _, tail = arg.rpartition(":")
        candidates.append((head, [i for i in tail.split(",") if i]))
    for name, ids in candidates:
        if Path(name).is_file():
            return Path(name), ids
        if agent_dir is not None and (agent_dir / f"{name}.evalset.json").is_file():
            return agent_dir / f"{name}.evalset.json", ids
    return None, None


def select(args: Sequence[str], agent_dir: Path | None = None,
           initial_session_file: str | Path | None = None) -> list[Selection]:
    """Loads every `file[:ids]` argument; an unknown file or case id is a DataError."""
    out = []
    for arg in args:
        path, ids = split_selector(arg, agent_dir)
        if path is None:
            raise DataError(arg, "", "file not found (and no such eval set id under the agent)")
        eval_set = load_eval_set(path, initial_session_file)
        known = {c.eval_id for c in eval_set.eval_cases}
        for i in ids or []:
            if i not in known:
                raise DataError(path, "eval_cases", f"no case with eval_id {i!r}")
        out.append(Selection(path, eval_set, ids))
    return out


def resolve_config(config_file_path: str | Path | None,
                   eval_set_path: str | Path | None) -> tuple[EvalConfig, str | None]:
    """The flag's config file, else test_config.json beside the set, else the defaults."""
    if config_file_path:
        return load_eval_config(config_file_path), str(config_file_path)
    if eval_set_path is None:
        return EvalConfig(), None
    config, found = default_config_for(eval_set_path)
    return config, str(found) if found else None


def with_judge_model(metrics: Sequence[ConfiguredMetric], judge_model: str | None) -> list[ConfiguredMetric]:
    """Points every LLM-judged criterion at `judge_model`."""
    if not judge_model:
        return list(metrics)
    out = []
    for m in metrics:
        c = m.criterion
        if isinstance(c, LlmAsAJudgeCriterion):
            options = c.judge_model_options.model_copy(update={"judge_model": judge_model})
            c = c.model_copy(update={"judge_model_options": options})
        out.append(ConfiguredMetric(m.spec, c))
    return out


def weak_judges(metrics: Sequence[ConfiguredMetric]) -> list[str]:
    """Names of the metrics judged by the embedded model on questions where it was measured to
    be weak (`WEAK_ON_EMBEDDED`): verdicts a user should not rely on."""
    out = []
    for m in metrics:
        c = m.criterion
        if (m.name in WEAK_ON_EMBEDDED and isinstance(c, LlmAsAJudgeCriterion)
                and parse_model_name(c.judge_model_options.judge_model).backend == "local"):
            out.append(m.name)
    return out


def make_judge(env: Mapping[str, str], store_root: str | Path | None, no_cache: bool = False,
               parallelism: int = DEFAULT_HTTP_CONCURRENCY) -> JudgeService:
    """Judge (and agent) models resolved with `env`; verdicts cached under `store_root` unless
    `no_cache`. An HTTP model's concurrency limit is raised to `parallelism`, so that the run's
    parallel cases are not throttled to the backend default; the local model keeps its slots."""

    def resolve(name: str) -> LLM:
        http = parse_model_name(name).backend != "local"
        limit = max(DEFAULT_HTTP_CONCURRENCY, parallelism) if http else None
        return resolve_model(name, env, max_concurrency=limit)

    cache = None if no_cache or store_root is None else JudgeCacheDB(judge_cache_path(store_root))
    return JudgeService(resolve, cache)


def check_judges(metrics: Sequence[ConfiguredMetric], judge: JudgeService) -> None:
    """Resolves every judge model up front, so a bad name or a missing key fails before any work."""
    for m in metrics:
        if isinstance(m.criterion, LlmAsAJudgeCriterion):
            judge.resolve(m.criterion.judge_model_options.judge_model)


@dataclass
class Job:
    """Everything needed to run an agent over eval sets."""

    agent: Any  # a loaded root_agent, Agent, callable, ADK agent or AgentAdapter
    selections: Sequence[Selection]
    config: EvalConfig
    config_source: str | None = None
    num_runs: int = 1
    parallelism: int = 4
    agent_model: str | None = None
    judge_model: str | None = None
    app_name: str | None = None
    store_root: str | Path | None = None
    no_cache: bool = False

    def metrics(self) -> list[ConfiguredMetric]:
        resolved = default_registry().resolve(self.config, self.config_source)
        return with_judge_model(resolved, self.judge_model)


async def run_job(job: Job, env: Mapping[str, str],
                  on_case_done: Callable[[EvalCaseResult], None] | None = None) -> list[EvalSetResult]:
    """Runs the job: one EvalSetResult per selected eval set."""
    judge = make_judge(env, job.store_root, job.no_cache, job.parallelism)
    metrics = job.metrics()
    check_judges(metrics, judge)
    adapter = to_adapter(job.agent, judge.resolve, job.agent_model)
    requests = [EvalSetRequest(s.eval_set, metrics, s.case_ids, job.config.not_evaluated,
                               job.config.repeat_gating) for s in job.selections]
    simulator = None
    if any(c.conversation_scenario for r in requests for c in r.cases()):
        sim_config = parse_simulator_config(job.config.user_simulator_config, job.config_source)
        sim_model = judge.resolve(sim_config.model)

        def simulator(scenario: ConversationScenario) -> LlmUserSimulator:
            return LlmUserSimulator(scenario, sim_model, sim_config)

    return await run_evaluation(adapter, requests, num_runs=job.num_runs, parallelism=job.parallelism,
                                app_name=job.app_name, on_case_done=on_case_done,
                                simulator=simulator, judge=judge)
