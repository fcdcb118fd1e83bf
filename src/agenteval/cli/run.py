"""`agenteval eval`: load the agent and eval sets, run, report, save.

This is the edge where the environment is read (model API keys) and output is printed.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agenteval.agents import load_root_agent, to_adapter
from agenteval.cli.commands import check_judges, judge_service, report, resolve_config, with_judge_model
from agenteval.criteria import default_registry
from agenteval.datasets import load_eval_set
from agenteval.datasets.files import write_model
from agenteval.errors import AgentEvalError, DataError
from agenteval.runner import EvalSetRequest, run_evaluation
from agenteval.schema import (
    ConversationScenario,
    EvalCaseResult,
    EvalConfig,
    EvalSet,
)
from agenteval.simulation import LlmUserSimulator, parse_simulator_config
from agenteval.store import save_result


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


def split_selector(arg: str, agent_path: Path) -> tuple[Path | str, list[str] | None]:
    """`file[:id1,id2]` → (file, ids); a bare id names `<agent_path>/<id>.evalset.json`."""
    candidates: list[tuple[str, list[str] | None]] = [(arg, None)]
    if ":" in arg:
        head, _, tail = arg.rpartition(":")
        candidates.append((head, [i for i in tail.split(",") if i]))
    for name, ids in candidates:
        if Path(name).is_file():
            return Path(name), ids
        stored = agent_path / f"{name}.evalset.json"
        if stored.is_file():
            return stored, ids
    return arg, None


def _requests(args: EvalArgs) -> tuple[list[EvalSetRequest], str | None, EvalConfig]:
    agent_dir = Path(args.agent_path)
    selected: list[tuple[Path, EvalSet, list[str] | None]] = []
    for arg in args.eval_sets:
        path, ids = split_selector(arg, agent_dir)
        if isinstance(path, str):
            raise DataError(path, "", "file not found (and no such eval set id under the agent)")
        eval_set = load_eval_set(path)
        known = {c.eval_id for c in eval_set.eval_cases}
        for i in ids or []:
            if i not in known:
                raise DataError(path, "eval_cases", f"no case with eval_id {i!r}")
        selected.append((path, eval_set, ids))
    # Like adk eval: test_config.json beside the eval set is used when exactly one set is given.
    if args.config_file_path or len(selected) == 1:
        config, source = resolve_config(args.config_file_path, str(selected[0][0]))
    else:
        config, source = EvalConfig(), None
    metrics = with_judge_model(default_registry().resolve(config, source), args.judge_model)
    requests = [EvalSetRequest(s, metrics, ids, config.not_evaluated, config.repeat_gating)
                for _, s, ids in selected]
    return requests, source, config


def eval_command(args: EvalArgs) -> int:
    logging.basicConfig(level=args.log_level.upper())
    console = Console()
    if args.eval_storage_uri:
        raise AgentEvalError("--eval_storage_uri: only local storage is supported; results go to "
                             "--output and to .agenteval/eval_history beside the agent")
    requests, source, config = _requests(args)
    judge = judge_service(args.agent_path, args.no_cache)
    resolve = judge.resolve

    simulator = None
    if any(c.conversation_scenario for r in requests for c in r.cases()):
        sim_config = parse_simulator_config(config.user_simulator_config, source)
        sim_model = resolve(sim_config.model)

        def simulator(scenario: ConversationScenario) -> LlmUserSimulator:
            return LlmUserSimulator(scenario, sim_model, sim_config)

    adapter = to_adapter(load_root_agent(args.agent_path), resolve, args.agent_model)
    check_judges(list(requests[0].metrics), judge)
    gating = [m.name for m in requests[0].metrics if not m.spec.informational]
    console.print(f"Using criteria from {source or 'defaults'}: {', '.join(gating)}")
    total = sum(len(r.cases()) for r in requests) * args.num_runs
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("evaluating", total=total)

        def done(result: EvalCaseResult) -> None:
            progress.advance(task)

        results = asyncio.run(run_evaluation(adapter, requests, num_runs=args.num_runs,
                                             parallelism=args.parallelism,
                                             app_name=Path(args.agent_path).name,
                                             on_case_done=done, simulator=simulator,
                                             judge=judge))
    code = report(console, results, args.detailed)
    if args.output:
        if len(results) == 1:
            write_model(args.output, results[0], exclude_none=False)
        else:  # several eval sets: one document each, beside the requested name
            out = Path(args.output)
            for r in results:
                write_model(out.with_name(f"{out.stem}.{r.eval_set_id}{out.suffix}"), r, exclude_none=False)
        console.print(f"Results written to {args.output}")
    if args.history:
        for r in results:
            console.print(f"History: {save_result(args.agent_path, r)}")
    return code
