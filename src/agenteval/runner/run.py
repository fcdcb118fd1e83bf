"""The one way to run a job: `run` (infer, then score) and `rescore` (score what was recorded).

Every front end (the CLI's `eval` and `score`, `AgentEvaluator`, the pytest plugin, the web)
calls one of these, through `start` when it has no services of its own, and gets a `Run`: its
header (`RunSpec`) and one result document per eval set, each document carrying the header.
Models, limits and the judge cache come from the `Services` handed in; progress goes to the
`listener` as typed events.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenteval.agents import describe, to_adapter
from agenteval.criteria import ConfiguredMetric
from agenteval.criteria.judge import JudgeService
from agenteval.errors import AgentEvalError, DataError
from agenteval.models import ModelUnavailable, parse_model_name
from agenteval.models.base import LLM
from agenteval.runner.durable import fingerprint, resume_from
from agenteval.runner.evaluate import EvalSetRequest, run_evaluation
from agenteval.runner.executors.pick import executor_for
from agenteval.runner.header import finish_header, start_header
from agenteval.runner.job import EvalJob, JobOptions, ScoreJob, judge_models
from agenteval.runner.recorded import score_recorded
from agenteval.runner.selection import check_args_match, check_has_cases
from agenteval.runner.services import Services
from agenteval.schema import (
    AgentInfo,
    ConversationScenario,
    EvalCaseResult,
    EvalSetResult,
    LlmAsAJudgeCriterion,
    ModelRoles,
    Run,
    RunSpec,
)
from agenteval.schema.progress import Listener, RunFinished, RunStarted
from agenteval.simulation import LlmUserSimulator, parse_simulator_config
from agenteval.store import JudgeCacheDB
from agenteval.tracing.ingest import TraceConversations


def _judge(services: Services, listener: Listener | None) -> JudgeService:
    """The run's judge: its models from the run's pool, verdicts cached where services say."""
    return JudgeService(services.models.get, services.judge_cache, listener=listener)


def check_judges(metrics: list[ConfiguredMetric], job: JobOptions, services: Services) -> None:
    """Resolves every judge model (and the user simulator's) up front, so a bad name or a
    missing key fails before any work, naming where the name came from (the flag, or the config
    file and key). `run` and `rescore` do it first; a front end may do it even before loading
    the eval sets."""
    for m in metrics:
        if not isinstance(m.criterion, LlmAsAJudgeCriterion):
            continue
        options = m.criterion.judge_model_options
        for key, name, flag in (("judge_model", options.judge_model, job.judge_model),
                                ("escalate_to", options.escalate_to, job.escalate_judge_model)):
            if not name:
                continue
            try:
                services.models.get(name)
            except ModelUnavailable as e:
                if flag:
                    raise DataError(None, "--judge_model" if key == "judge_model" else
                                    "--escalate_judge_model", str(e)) from None
                raise DataError(job.config_source, f"criteria.{m.name}.judge_model_options.{key}",
                                str(e)) from None
    judged = any(isinstance(m.criterion, LlmAsAJudgeCriterion) for m in metrics)
    if judged and isinstance(services.judge_cache, JudgeCacheDB):
        services.judge_cache.check()  # a corrupt cache fails here, not in every judged case
    if job.config.user_simulator_config is not None:  # checked whether or not a case needs it
        sim_config = parse_simulator_config(job.config.user_simulator_config, job.config_source)
        try:
            services.models.get(sim_config.model)
        except ModelUnavailable as e:
            raise DataError(job.config_source, "user_simulator_config.model", str(e)) from None


def _canonical(name: str) -> str:
    """The canonical spelling of a model name; a name the pool was handed a model under (not a
    scheme) stays as it is."""
    try:
        return parse_model_name(name).name
    except ModelUnavailable:
        return name


def _finish(header: RunSpec, results: list[EvalSetResult], judge: JudgeService,
            services: Services, listener: Listener | None) -> Run:
    finish_header(header, results, judge.calls, judge.prompt_tokens, services.models.limits())
    if listener is not None:
        t = header.totals
        listener(RunFinished(header.run_id, t.passed, t.failed, t.not_evaluated,
                             header.duration_seconds or 0.0))
    return Run(header, results)


async def run(job: EvalJob, services: Services, listener: Listener | None = None) -> Run:
    """Runs the job's agent over its eval sets and scores every case run.

    With a journal (`services.journal`) this process owns the run (`Journal.claim`; resuming a
    run another live process owns is a `RunOwned` error, one already recorded in the run
    history is `AlreadyFinished`) and commits each case run to the journal as it finishes. The
    run stays in the journal, owned, after `run` returns: recording its documents
    (`agenteval.store.record`) forgets it there, and ownership ends with `journal.release` /
    `close` or the process. A run that raises is released at once (interrupted: resumable)."""
    if job.agent is None:
        raise AgentEvalError("EvalJob.agent is required")
    if job.num_runs < 1:
        raise ValueError("num_runs must be at least 1")
    metrics = job.metrics()
    check_judges(metrics, job, services)
    judge = _judge(services, listener)
    executor = executor_for(job, services, judge, listener)  # None: the local executor
    check_has_cases(job.selections)
    check_args_match(metrics, [s.eval_set for s in job.selections], job.config_source)
    adapter = to_adapter(job.agent, services.models.get, job.agent_model)
    kind, agent_model = describe(adapter)
    requests = [EvalSetRequest(s.eval_set, metrics, s.case_ids, job.config.not_evaluated,
                               job.config.repeat_gating) for s in job.selections]
    simulator: Any = None
    sim_model_name = None
    if any(c.conversation_scenario for r in requests for c in r.cases()):
        sim_config = parse_simulator_config(job.config.user_simulator_config, job.config_source)
        try:
            sim_model = services.models.get(sim_config.model)
        except ModelUnavailable as e:
            raise DataError(job.config_source, "user_simulator_config.model", str(e)) from None
        sim_model_name = _canonical(sim_config.model)

        def simulator(scenario: ConversationScenario) -> LlmUserSimulator:
            return LlmUserSimulator(scenario, sim_model, sim_config)

    roles = ModelRoles(agent=_canonical(agent_model) if kind == "builtin" and agent_model else agent_model,
                       judge=[_canonical(n) for n in judge_models(metrics)],
                       user_simulator=sim_model_name)
    header = start_header(job, job.selections, roles, job.num_runs, job.endpoint_settings(metrics))
    header.agent = AgentInfo(name=job.app_name or adapter.name, path=job.agent_path, kind=kind)
    journal = services.journal
    if job.resume is not None and journal is None:
        raise AgentEvalError("resuming a run needs the run journal (a store root for the run)")
    kept = resume_from(job, journal, header) if journal is not None else {}
    total = sum(len(r.cases()) for r in requests) * job.num_runs

    def journaled(result: EvalCaseResult) -> None:
        if journal is not None:
            journal.append(header.run_id, result.eval_set_id, result)

    try:
        if journal is not None:
            journal.begin(header, fingerprint(job), total)
        if listener is not None:
            listener(RunStarted(header.run_id, total - len(kept)))
        results = await run_evaluation(adapter, requests, num_runs=job.num_runs,
                                       parallelism=job.concurrency.cases, app_name=job.app_name,
                                       simulator=simulator, judge=judge, listener=listener,
                                       header=header, traces=job.traces, finished=kept,
                                       on_case_done=journaled,
                                       case_timeout=job.case_timeout or job.config.case_timeout,
                                       executor=executor)
    except BaseException:
        if journal is not None:  # interrupted: resumable at once, by this process or another
            journal.release(header.run_id)
        raise
    return _finish(header, results, judge, services, listener)


async def rescore(job: ScoreJob, services: Services, listener: Listener | None = None) -> Run:
    """Scores what an agent already did (`job.actual`) against the expected eval set."""
    if job.expected is None or job.actual is None:
        raise AgentEvalError("ScoreJob.expected and ScoreJob.actual are required")
    metrics = job.metrics()
    check_judges(metrics, job, services)
    judge = _judge(services, listener)
    check_has_cases([job.expected])
    check_args_match(metrics, [job.expected.eval_set], job.config_source)
    roles = ModelRoles(judge=[_canonical(n) for n in judge_models(metrics)])
    header = start_header(job, [job.expected], roles, endpoints=job.endpoint_settings(metrics))
    header.actual_file = None if job.actual_source is None else str(job.actual_source)
    if listener is not None:
        runs = (len(job.actual.eval_case_results) if isinstance(job.actual, EvalSetResult)
                else len(job.actual.conversations) if isinstance(job.actual, TraceConversations)
                else len(job.actual.eval_cases))
        listener(RunStarted(header.run_id, runs))
    result = await score_recorded(job.expected.eval_set, job.actual, metrics,
                                  actual_source=job.actual_source, policy=job.config.not_evaluated,
                                  gating=job.config.repeat_gating, judge=judge,
                                  parallelism=job.concurrency.cases, listener=listener,
                                  header=header)
    header.num_runs = max((s.runs for s in result.summary), default=1)
    return _finish(header, [result], judge, services, listener)


async def start(job: EvalJob | ScoreJob, env: Mapping[str, str], store_root: str | Path | None = None,
                *, no_cache: bool = False, journal: bool = False, models: Mapping[str, LLM] | None = None,
                listener: Listener | None = None) -> Run:
    """The front door for a front end that has no services of its own: builds them from the
    job (`Services.for_job`: its concurrency, and the config's and the command line's endpoint
    settings, so these are always in force), then `run`s an `EvalJob` or `rescore`s a
    `ScoreJob`. Verdicts are cached and the run journaled under `store_root` (none without
    one, or with `no_cache` / `journal=False`); the journal is closed when the run ends."""
    services = Services.for_job(job, env, store_root=store_root, no_cache=no_cache, models=models,
                                journal=journal)
    try:
        if isinstance(job, EvalJob):
            return await run(job, services, listener)
        return await rescore(job, services, listener)
    finally:
        if services.journal is not None:
            services.journal.close()


__all__ = ["Run", "check_judges", "rescore", "run", "start"]
