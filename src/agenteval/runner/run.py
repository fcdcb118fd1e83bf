"""The one way to run a job: `run` (infer, then score) and `rescore` (score what was recorded).

Every front end (the CLI's `eval` and `score`, `AgentEvaluator`, the pytest plugin, the web)
calls one of these, through `start` when it has no services of its own, and gets a `Run`: its
header (`RunSpec`) and one result document per eval set, each document carrying the header.
Models, limits and the judge cache come from the `Services` handed in; progress goes to the
`listener` as typed events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agenteval.agents import agent_names, describe, to_adapter
from agenteval.agents.mock_tools import with_mock_tools
from agenteval.criteria.judge import JudgeService
from agenteval.errors import AgentEvalError, DataError
from agenteval.models import ModelUnavailable
from agenteval.models.base import LLM
from agenteval.runner.driver import (
    Collected,
    Journaled,
    Sink,
    Sinks,
    Totals,
    end_run,
    new_document,
    progress,
    rescore_source,
)
from agenteval.runner.durable import fingerprint, resume_from
from agenteval.runner.evaluate import Documents, EvalSetRequest, run_evaluation
from agenteval.runner.executors.pick import executor_for
from agenteval.runner.expected_agents import check_expected_agents
from agenteval.runner.header import start_header
from agenteval.runner.job import EvalJob, ScoreJob, judge_models
from agenteval.runner.judges import canonical, check_judges, judge_service
from agenteval.runner.plan import RunPlan, prepare
from agenteval.runner.selection import Selection, check_args_match, check_has_cases, check_selected_args
from agenteval.runner.services import Services
from agenteval.schema import AgentInfo, ConversationScenario, ModelRoles, Run, RunSpec
from agenteval.schema.config import names_persona, persona_unseen
from agenteval.schema.progress import Listener
from agenteval.simulation import LlmBackedUserSimulatorConfig, LlmUserSimulator


async def run(job: EvalJob, services: Services, listener: Listener | None = None,
              plan: RunPlan | None = None, documents: Documents | None = None,
              outputs: Sequence[Sink] = ()) -> Run:
    """Runs the job's agent over its eval sets and scores every case run, as `plan` says (by
    default the job `prepare`d against `services` now: a front end that prepared it earlier,
    to refuse a bad judge before loading anything, hands its plan in). With `documents`, each
    eval set's document streams to the sink it gives as its cases are decided
    (`run_evaluation`), and the `Run` holds the documents without their case lists. `outputs`
    hear the run as the journal does: each case run as it finishes, each case, each document.

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
    plan = plan if plan is not None else prepare(job, services)
    metrics = list(plan.metrics)
    judge = judge_service(services, listener)
    executor = executor_for(job, plan, services, judge, listener)  # None: the local executor
    check_has_cases(job.selections)
    check_selected_args(metrics, job.selections, job.config_source)
    adapter = to_adapter(job.agent, services.models.get, job.agent_model, plan.inner_tool_calls)
    check_expected_agents(metrics, [(s.path, s.named_agents()) for s in job.selections], agent_names(adapter))
    kind, agent_model = describe(adapter)
    adapter = with_mock_tools(adapter, plan.mock_tools)
    requests = [EvalSetRequest(s.eval_set, metrics, s.case_ids, plan.not_evaluated, plan.repeat_gating,
                               s.streamed) for s in job.selections]
    simulator: Any = None
    sim_model_name = None
    if any(s.scenario() for s in job.selections):
        sim_config = plan.simulator_config()
        try:
            sim_model = services.models.get(sim_config.model)
        except ModelUnavailable as e:
            raise DataError(job.config_source, "user_simulator_config.model", str(e)) from None
        sim_model_name = canonical(sim_config.model)
        check_personas_shown(sim_config, job.selections, job.config_source)

        def simulator(scenario: ConversationScenario) -> LlmUserSimulator:
            return LlmUserSimulator(scenario, sim_model, sim_config)

    roles = ModelRoles(agent=canonical(agent_model) if kind == "builtin" and agent_model else agent_model,
                       judge=[canonical(n) for n in judge_models(metrics)],
                       user_simulator=sim_model_name)
    header = start_header(job, job.selections, roles, plan.num_runs, plan.endpoint_settings())
    header.agent = AgentInfo(name=job.app_name or adapter.name, path=job.agent_path, kind=kind)
    journal = services.journal
    if job.resume is not None and journal is None:
        raise AgentEvalError("resuming a run needs the run journal (a store root for the run)")
    kept = resume_from(job, journal, header) if journal is not None else {}
    total = sum(r.count() for r in requests) * plan.num_runs

    totals = Totals()
    sink = Sinks([None if journal is None else Journaled(journal, fingerprint(job), total),
                  progress(listener), totals, *outputs])
    try:
        sink.on_start(header, total - len(kept))
        results = await run_evaluation(adapter, requests, num_runs=plan.num_runs,
                                       parallelism=plan.parallelism, app_name=job.app_name,
                                       simulator=simulator, judge=judge, listener=listener,
                                       header=header, traces=plan.traces, finished=kept, sink=sink,
                                       case_timeout=plan.case_timeout,
                                       executor=executor, until_decided=job.until_decided,
                                       documents=documents,
                                       end=lambda: _end(header, totals, judge, services))
    except BaseException:
        sink.on_abort()  # the journal releases the run: resumable at once, here or elsewhere
        raise
    sink.on_end(header)
    return Run(header, results)


def check_personas_shown(config: LlmBackedUserSimulatorConfig, selections: Sequence[Selection],
                         source: str | None) -> None:
    """A DataError before anything runs when `custom_instructions` has no `{{ persona }}` and a
    scenario case names a persona (the sets are read again only then)."""
    template = config.custom_instructions
    if template is None or names_persona(template):
        return
    for selection in selections:
        if not selection.scenario():
            continue
        for i, case in enumerate(selection.cases()):
            if case.conversation_scenario is not None and case.conversation_scenario.user_persona is not None:
                where = (f"case {case.eval_id!r} of {selection.path or selection.eval_set.eval_set_id} "
                         f"(eval_cases[{i}])")
                raise DataError(source, "user_simulator_config.custom_instructions", persona_unseen(where))


def _end(header: RunSpec, totals: Totals, judge: JudgeService, services: Services) -> None:
    """Before the documents are completed: every case run committed to the journal (so the
    documents are newer than the journal's last change to the run: see `store.record.recorded`)
    and the header's totals and end filled in."""
    if services.journal is not None:
        services.journal.flush(header.run_id)
    end_run(header, totals, judge, services)


async def rescore(job: ScoreJob, services: Services, listener: Listener | None = None,
                  plan: RunPlan | None = None) -> Run:
    """Scores what an agent already did (`job.actual`) against the expected eval set, as `plan`
    says (by default the job `prepare`d now)."""
    if job.expected is None or job.actual is None:
        raise AgentEvalError("ScoreJob.expected and ScoreJob.actual are required")
    plan = plan if plan is not None else prepare(job, services)
    check_has_cases([job.expected])
    check_args_match(list(plan.metrics), [job.expected.eval_set], job.config_source)
    from agenteval.runner.recorded import recorded_source  # (here: `eval` never needs it)

    source = recorded_source(job.expected.eval_set, job.actual, job.actual_source)
    source.cases = job.expected.case_count()
    collected = Collected()
    header = await rescore_source(job, plan, services, job.expected, source,
                                  new_document(source.eval_set_id), [collected], listener)
    return Run(header, collected.documents)


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
