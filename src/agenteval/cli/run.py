"""`agenteval eval`: load the agent and eval sets, run them through the runner, report, save.

This is the edge where the environment is read (model API keys) and output is printed.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field

import click
from rich.console import Console

from agenteval.agents import agent_home, check_agent_path, load_root_agent
from agenteval.cli.commands import Outputs, finish, warn_weak_judges
from agenteval.cli.progress import ProgressBar
from agenteval.errors import AgentEvalError
from agenteval.runner import (
    EvalJob,
    Services,
    check_judges,
    config_beside,
    resolve_config,
    run,
    select,
    weak_judges,
)
from agenteval.runner.durable import AlreadyFinished, claim_resume
from agenteval.runner.sync import run_sync
from agenteval.schema import Concurrency, EvalConfig


@dataclass
class EvalArgs:
    agent_path: str
    eval_sets: list[str]
    config_file_path: str | None = None
    detailed: bool = False
    num_runs: int = 1
    parallelism: int = 4
    model_parallelism: dict[str, int] = field(default_factory=dict)
    agent_model: str | None = None
    judge_model: str | None = None
    eval_storage_uri: str | None = None
    log_level: str = "WARNING"
    no_cache: bool = False
    judge_timeout: float | None = None
    judge_attempts: int | None = None
    escalate_judge_model: str | None = None
    traces: bool = True
    case_timeout: float | None = None
    resume: str | None = None
    retry_errors: bool = False
    executor: str = "local"
    ray_address: str | None = None
    isolation: str | None = None
    outputs: Outputs = field(default_factory=Outputs)


def eval_command(args: EvalArgs) -> int:
    logging.basicConfig(level=args.log_level.upper())
    console = Console()
    if args.eval_storage_uri:
        raise AgentEvalError("--eval_storage_uri: only local storage is supported; results go to "
                             "--output and to .agenteval/eval_history beside the agent")
    check_agent_path(args.agent_path)
    agent_dir = agent_home(args.agent_path)  # its eval sets and store: a .py file's folder
    # Everything that can be refused without the eval sets is checked first: a bad config on a
    # 10,000-case set fails at once. Like adk eval, test_config.json beside the eval set is used
    # when exactly one set is given.
    beside = config_beside(args.eval_sets, agent_dir)
    if args.config_file_path or beside is not None:
        config, source = resolve_config(args.config_file_path, beside)
    else:
        config, source = EvalConfig(), None
    concurrency = Concurrency(cases=args.parallelism, model_calls=args.model_parallelism)
    job = EvalJob(config=config, config_source=source, judge_model=args.judge_model,
                  concurrency=concurrency, judge_timeout=args.judge_timeout,
                  judge_attempts=args.judge_attempts, escalate_judge_model=args.escalate_judge_model,
                  command="eval", argv=sys.argv[1:],
                  num_runs=args.num_runs, agent_model=args.agent_model,
                  app_name=agent_dir.resolve().name, agent_path=args.agent_path, traces=args.traces,
                  case_timeout=args.case_timeout, resume=args.resume, retry_errors=args.retry_errors,
                  executor=args.executor, ray_address=args.ray_address, isolation=args.isolation)
    if args.resume and args.outputs.history_root is None:
        raise AgentEvalError("--resume / --retry_errors: the run journal lives in the run history; "
                             "drop --no_history")
    services = Services.for_job(job, dict(os.environ), store_root=agent_dir,
                                no_cache=args.no_cache, journal=args.outputs.history_root is not None)
    try:
        return _eval(args, job, services, console)
    except AlreadyFinished as e:  # nothing runs, nothing is recorded again: the run's own verdict
        click.echo(str(e))  # one line, however wide the terminal
        return 0 if e.passed else 1
    finally:
        if services.journal is not None:
            services.journal.close()


def _eval(args: EvalArgs, job: EvalJob, services: Services, console: Console) -> int:
    metrics = job.metrics()
    if job.resume is not None and services.journal is not None:
        # Before anything else: a run another process owns, or one already finished, is
        # refused or reported without loading the eval sets or the agent.
        job.resume = claim_resume(services.journal, job.resume, job.retry_errors)
    check_judges(metrics, job, services)
    job.selections = select(args.eval_sets, agent_home(args.agent_path))
    args.outputs.check([s.eval_set.eval_set_id for s in job.selections])  # before the agent is imported
    job.agent = load_root_agent(args.agent_path)
    console.print(f"Using criteria from {job.config_source or 'defaults'}: "
                  f"{', '.join(m.name for m in metrics if not m.spec.informational)}")
    warn_weak_judges(console, weak_judges(metrics))
    with ProgressBar() as progress:
        result = run_sync(run(job, services, progress))
    return finish(console, result, args.detailed, args.outputs)
