"""`AgentEvaluator`: ADK's programmatic evaluation API, for use in tests.

`await AgentEvaluator.evaluate(agent_module, path_or_dir, num_runs=2, ...)` finds `*.test.json`
and `*.evalset.json` files (recursively in a directory), runs each with the `test_config.json`
beside it, records the results in the run history (which ADK's test path skips), and raises one
`EvaluationFailed` listing every failing case and criterion with its threshold and score, where
ADK uses an `assert` inside library code. This is a front end: it reads the environment (model
API keys) and prints the report when asked.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console

from agenteval.datasets import load_eval_set
from agenteval.errors import DataError
from agenteval.reporting import console_report
from agenteval.runner import Selection, resolve_config, start
from agenteval.runner.request import RunRequest, to_job
from agenteval.schema import EvalConfig, EvalSet, EvalSetResult, EvalStatus
from agenteval.store import record, write_outputs


class EvaluationFailed(AssertionError):
    """Some cases failed; `failures` has one line per failing case and criterion."""

    def __init__(self, failures: Sequence[str], results: Sequence[EvalSetResult]) -> None:
        self.failures = list(failures)
        self.results = list(results)
        super().__init__("Following are all the test failures:\n" + "\n".join(self.failures))


def failure_lines(results: Sequence[EvalSetResult]) -> list[str]:
    """`<eval id>: <criterion> expected >= <threshold>, got <score>` for every failing criterion.

    Over several runs the score is the mean of the runs' scores, which `repeat_gating: mean`
    holds to the threshold. ADK's AgentEvaluator pools instead: the mean of every scored
    invocation of every run. The two differ when runs score different numbers of invocations
    (a simulated conversation's length varies; an invocation may go unscored); the line then
    gives ADK's figure too, so that it reads as ADK's would, while the verdict stays the one
    shown first."""
    lines = []
    for result in results:
        errors = {(c.eval_id, e.metric_name): e.message for c in result.eval_case_results
                  for e in c.metric_errors}
        inference = {c.eval_id: c.error_message for c in result.eval_case_results if c.error_message}
        for case in result.summary:
            if case.final_eval_status == EvalStatus.PASSED:
                continue
            where = f"{result.eval_set_id}/{case.eval_id}"
            if case.eval_id in inference:
                lines.append(f"{where}: the agent failed: {inference[case.eval_id]}")
            for m in case.metrics:
                if m.eval_status in (EvalStatus.FAILED, EvalStatus.NOT_EVALUATED):
                    runs = f" (mean of {m.runs} runs)" if m.runs > 1 else ""
                    got = "not evaluated" if m.mean is None else f"{_shown(m.mean, m.threshold)}{runs}"
                    pooled = _pooled(result, case.eval_id, m.metric_name) if m.runs > 1 else None
                    if m.mean is not None and pooled is not None and f"{pooled:.4g}" != f"{m.mean:.4g}":
                        got += f"; pooled over the runs' invocations, as ADK reports it: {pooled:.4g}"
                    reason = errors.get((case.eval_id, m.metric_name))
                    lines.append(f"{where}: {m.metric_name} expected >= {m.threshold}, got {got}"
                                 + (f" — {reason}" if reason else ""))
    return lines


def _shown(score: float, threshold: float | None) -> str:
    """A failing score to 4 significant digits, or every digit where those would round it up to
    the threshold or past it (a score one ulp below 0.17297517297517298 is not "0.173")."""
    short = f"{score:.4g}"
    return repr(score) if threshold is not None and float(short) >= threshold else short


def _pooled(result: EvalSetResult, eval_id: str, metric_name: str) -> float | None:
    """ADK's overall score of a criterion over a case's runs: the mean of every invocation's
    score (None where no invocation was scored)."""
    scores = [r.score for c in result.eval_case_results if c.eval_id == eval_id
              for inv in c.eval_metric_result_per_invocation for r in inv.eval_metric_results
              if r.metric_name == metric_name and r.score is not None]
    return sum(scores) / len(scores) if scores else None


def _module_name(agent_module: Any) -> str | None:
    """The agent's module as the user named it, for the run header."""
    if isinstance(agent_module, str):
        return agent_module
    return getattr(agent_module, "__name__", None)


def _agent_location(agent_module: Any, agent_name: str | None, executor: str) -> str | None:
    """The agent for the run header: its module's name; for the Ray executor, where every
    worker imports it from (the module's package folder or file)."""
    if executor == "local":
        return _module_name(agent_module)
    if agent_name:
        raise DataError(None, "", f"agent_name={agent_name!r} selects a sub-agent in this process; the "
                        f"{executor} executor imports the agent module's root_agent on every worker")
    module = importlib.import_module(agent_module) if isinstance(agent_module, str) else agent_module
    file = getattr(module, "__file__", None)
    if not isinstance(module, ModuleType) or file is None:
        raise DataError(None, "", f"the {executor} executor imports the agent on every worker: pass its "
                        "module (or module name), not an agent object")
    path = Path(file)
    return str(path.parent if path.name == "__init__.py" else path)


def _root_agent(agent_module: Any, agent_name: str | None) -> Any:
    module = importlib.import_module(agent_module) if isinstance(agent_module, str) else agent_module
    agent: Any = module
    if isinstance(module, ModuleType):
        holder = getattr(module, "agent", module)
        if not hasattr(holder, "root_agent"):
            unimported = holder is module and any(
                (Path(p) / "agent.py").is_file() for p in getattr(module, "__path__", ()))
            hint = ("; its agent.py is not imported: add `from . import agent` to its __init__.py "
                    "(as ADK's agent packages do)") if unimported else ""
            raise DataError(None, "", f"module {module.__name__!r} has no root_agent (nor agent.root_agent)"
                            + hint)
        agent = holder.root_agent
    if agent_name:
        found = agent.find_agent(agent_name) if hasattr(agent, "find_agent") else None
        if found is None:
            raise DataError(None, "", f"no sub-agent named {agent_name!r}")
        agent = found
    return agent


class AgentEvaluator:
    """ADK-compatible entry points, over agenteval's runner."""

    @staticmethod
    async def evaluate(agent_module: Any, eval_dataset_file_path_or_dir: str | Path, num_runs: int = 2,
                       agent_name: str | None = None, initial_session_file: str | Path | None = None,
                       print_detailed_results: bool = True, output_file: str | Path | None = None,
                       app_name: str | None = None, *, parallelism: int = 4,
                       agent_model: str | None = None, judge_model: str | None = None,
                       store_root: str | Path | None = ".", executor: str = "local") -> list[EvalSetResult]:
        """Evaluates every eval file at the path (a directory is searched recursively).
        `executor="ray"` runs the cases on a Ray cluster (the one `RAY_ADDRESS` names, else a
        new local one), each worker importing the agent module itself."""
        path = Path(eval_dataset_file_path_or_dir)
        files = sorted([*path.rglob("*.test.json"), *path.rglob("*.evalset.json")]) if path.is_dir() \
            else [path]
        if not files:
            raise DataError(path, "", "no *.test.json or *.evalset.json files found")
        results: list[EvalSetResult] = []
        agent = _root_agent(agent_module, agent_name)
        where = _agent_location(agent_module, agent_name, executor)
        for file in files:
            eval_set = load_eval_set(file, initial_session_file)
            config, source = resolve_config(None, file)
            results += await AgentEvaluator._run(agent, [Selection(file, eval_set)], config, source,
                                                 num_runs, parallelism, agent_model, judge_model,
                                                 app_name, store_root, where, executor)
        AgentEvaluator._finish(results, print_detailed_results, output_file)
        return results

    @staticmethod
    async def evaluate_eval_set(agent_module: Any, eval_set: EvalSet,
                                criteria: dict[str, float] | None = None,
                                eval_config: EvalConfig | None = None, num_runs: int = 2,
                                agent_name: str | None = None, print_detailed_results: bool = True,
                                output_file: str | Path | None = None, app_name: str | None = None,
                                *, parallelism: int = 4, agent_model: str | None = None,
                                judge_model: str | None = None,
                                store_root: str | Path | None = ".",
                                executor: str = "local") -> EvalSetResult:
        """Evaluates one in-memory eval set with `eval_config` (or the deprecated `criteria`);
        `executor` as for `evaluate`."""
        if not eval_set.eval_cases:
            raise DataError(None, "eval_cases", f"eval set {eval_set.eval_set_id!r} has no cases")
        config = eval_config or (EvalConfig(criteria=dict(criteria)) if criteria else EvalConfig())
        agent = _root_agent(agent_module, agent_name)
        results = await AgentEvaluator._run(agent, [Selection(None, eval_set)], config, None,
                                            num_runs, parallelism, agent_model, judge_model,
                                            app_name, store_root,
                                            _agent_location(agent_module, agent_name, executor), executor)
        AgentEvaluator._finish(results, print_detailed_results, output_file)
        return results[0]

    @staticmethod
    async def _run(agent: Any, selections: list[Selection], config: EvalConfig, source: str | None,
                   num_runs: int, parallelism: int, agent_model: str | None, judge_model: str | None,
                   app_name: str | None, store_root: str | Path | None,
                   agent_path: str | None, executor: str = "local") -> list[EvalSetResult]:
        if num_runs < 1:
            raise ValueError("num_runs must be at least 1")
        request = RunRequest(agent_path=agent_path, num_runs=num_runs, parallelism=parallelism,
                             agent_model=agent_model, judge_model=judge_model,
                             executor=executor)  # a Literal: pydantic checks it
        job = to_job(request, config, source, command="AgentEvaluator", agent=agent, app_name=app_name)
        job.selections = selections
        done = await start(job, dict(os.environ), store_root)
        if store_root is not None:
            record(store_root, done)
        return done.results

    @staticmethod
    def _finish(results: list[EvalSetResult], detailed: bool, output_file: str | Path | None) -> None:
        if output_file is not None:
            write_outputs(results, output_file)
        if detailed:
            console = Console()
            for renderable in console_report(results, detailed=True):
                console.print(renderable)
        failures = failure_lines(results)
        if failures:
            raise EvaluationFailed(failures, results)
