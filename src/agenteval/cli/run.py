"""`agenteval eval`: load the agent and eval sets, run, report, save.

This is the edge where the environment is read (model API keys) and output is printed.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agenteval.agents import load_root_agent
from agenteval.cli.commands import report, warn_weak_judges
from agenteval.cli.reports import write_reports
from agenteval.datasets.files import write_model
from agenteval.errors import AgentEvalError
from agenteval.runner.job import Job, resolve_config, run_job, select, weak_judges
from agenteval.runner.sync import run_sync
from agenteval.schema import EvalCaseResult, EvalConfig
from agenteval.store import record_run, save_result


@dataclass
class EvalArgs:
    agent_path: str
    eval_sets: list[str]
    config_file_path: str | None
    detailed: bool
    output: str | None
    num_runs: int
    parallelism: int
    agent_model: str | None
    judge_model: str | None
    eval_storage_uri: str | None
    log_level: str
    history: bool
    no_cache: bool = False
    junit_xml: str | None = None
    html: str | None = None
    markdown: str | None = None


def eval_command(args: EvalArgs) -> int:
    started = time.monotonic()
    logging.basicConfig(level=args.log_level.upper())
    console = Console()
    if args.eval_storage_uri:
        raise AgentEvalError("--eval_storage_uri: only local storage is supported; results go to "
                             "--output and to .agenteval/eval_history beside the agent")
    selections = select(args.eval_sets, Path(args.agent_path))
    # Like adk eval: test_config.json beside the eval set is used when exactly one set is given.
    if args.config_file_path or len(selections) == 1:
        config, source = resolve_config(args.config_file_path, selections[0].path)
    else:
        config, source = EvalConfig(), None
    job = Job(agent=load_root_agent(args.agent_path), selections=selections, config=config,
              config_source=source, num_runs=args.num_runs, parallelism=args.parallelism,
              agent_model=args.agent_model, judge_model=args.judge_model,
              app_name=Path(args.agent_path).resolve().name, store_root=args.agent_path,
              no_cache=args.no_cache)
    gating = [m.name for m in job.metrics() if not m.spec.informational]
    console.print(f"Using criteria from {source or 'defaults'}: {', '.join(gating)}")
    warn_weak_judges(console, weak_judges(job.metrics()))
    total = sum(len(s.case_ids or s.eval_set.eval_cases) for s in selections) * args.num_runs
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("evaluating", total=total)

        def done(result: EvalCaseResult) -> None:
            progress.advance(task)

        results = run_sync(run_job(job, dict(os.environ), done))
    code = report(console, results, args.detailed)
    if args.output:
        if len(results) == 1:
            write_model(args.output, results[0], exclude_none=False)
        else:  # several eval sets: one document each, beside the requested name
            out = Path(args.output)
            for r in results:
                write_model(out.with_name(f"{out.stem}.{r.eval_set_id}{out.suffix}"), r, exclude_none=False)
        console.print(f"Results written to {args.output}")
    for path in write_reports(results, args.junit_xml, args.html, args.markdown):
        console.print(f"Report written to {path}")
    if args.history:
        paths = [save_result(args.agent_path, r) for r in results]
        for path in paths:
            console.print(f"History: {path}")
        record_run(args.agent_path, results, paths, {
            "command": "eval", "agent": job.app_name, "agent_model": args.agent_model,
            "judge_model": args.judge_model, "duration_seconds": time.monotonic() - started,
            "num_runs": args.num_runs, "parallelism": args.parallelism, "config_file": source,
            "config": config.model_dump(mode="json")},
            eval_set_files=[s.path for s in selections])  # one result per selection, in order
    return code
