"""The pytest plugin (entry point `pytest11: agenteval`).

Opt-in: nothing is collected unless `--agenteval` is given or the ini option
`agenteval = true` is set. Then every `*.evalset.json` and `*.test.json` file becomes a
collector with one item per eval case. The agent is `--agenteval-agent` / ini
`agenteval_agent`, or else the nearest directory at or above the file that holds an agent
(`agent.py` or a package exposing `root_agent`). An eval set with no case is a collection
error. The first item of a file runs the file's cases left selected (`-k`, `-m`, ...) once, in
parallel; each item then reports its own case; results go to the run history under the rootdir.
A failing item shows its per-criterion table, errors and judge rationales, not a traceback into
the framework.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval.errors import AgentEvalError


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agenteval", "agent evaluation (agenteval)")
    group.addoption("--agenteval", action="store_true", help="collect *.evalset.json and *.test.json files")
    group.addoption("--agenteval-agent", help="agent directory or file exposing root_agent")
    group.addoption("--agenteval-agent-model", help="model for the agent (replaces its own)")
    group.addoption("--agenteval-judge-model", help="judge model for LLM-judged criteria")
    group.addoption("--agenteval-escalate-judge-model",
                    help="where every judged criterion's uncertain verdicts go")
    group.addoption("--agenteval-num-samples", type=int, help="judge samples per question")
    group.addoption("--agenteval-judge-rationales", choices=["negative", "always", "never"],
                    help="which judge verdicts get a written rationale (default: negative)")
    group.addoption("--agenteval-case-timeout", type=float,
                    help="seconds per case run (default: the config's case_timeout)")
    group.addoption("--agenteval-isolation", choices=["none", "process"],
                    help="where the agent's turns run (default: the config's isolation)")
    group.addoption("--agenteval-num-runs", type=int, help="runs per case (default 1)")
    group.addoption("--agenteval-parallelism", type=int, help="cases in flight at once (default 4)")
    group.addoption("--agenteval-executor", choices=["local", "ray"], default="local",
                    help="where case runs go: this process, or a Ray cluster (RAY_ADDRESS, else the "
                    "one `ray start` runs on this machine, else a new local one; pip install "
                    "'agenteval[ray]')")
    parser.addini("agenteval", "collect eval files as tests", type="bool", default=False)
    parser.addini("agenteval_agent", "agent directory or file exposing root_agent", default="")
    parser.addini("agenteval_num_runs", "runs per case", default="1")
    parser.addini("agenteval_judge_model", "judge model for LLM-judged criteria", default="")


def _enabled(config: pytest.Config) -> bool:
    if config.getoption("--agenteval"):
        return True
    try:
        return bool(config.getini("agenteval"))
    except ValueError as e:  # `agenteval = ture`: pytest's own message, as a usage error
        raise pytest.UsageError(f"ini option agenteval: {e}") from None


# The RunRequest fields the options set, each with its option and the ini option behind it.
_OPTIONS = {"num_runs": ("--agenteval-num-runs", "agenteval_num_runs"),
            "parallelism": ("--agenteval-parallelism", None),
            "judge_model": ("--agenteval-judge-model", "agenteval_judge_model"),
            "agent_model": ("--agenteval-agent-model", None),
            "escalate_judge_model": ("--agenteval-escalate-judge-model", None),
            "num_samples": ("--agenteval-num-samples", None),
            "judge_rationales": ("--agenteval-judge-rationales", None),
            "case_timeout": ("--agenteval-case-timeout", None),
            "isolation": ("--agenteval-isolation", None),
            "executor": ("--agenteval-executor", None)}
_REQUEST = pytest.StashKey[Any]()
_FROM_INI = pytest.StashKey[set[str]]()
# The command line's flags that the run's own messages name (`--judge_model: unknown model`),
# said here as the option (or ini option) the user gave.
_CLI_FLAG = re.compile(r"(?<![\w-])--(judge_model|escalate_judge_model|agent_model|isolation|executor)\b")


def pytest_configure(config: pytest.Config) -> None:
    if _enabled(config):
        config.stash[_FROM_INI] = set()
        config.stash[_REQUEST] = _request(config)


def _in_pytest_terms(config: pytest.Config, message: str) -> str:
    """`message` with the command line's flags named as this plugin's options."""
    def option(m: re.Match[str]) -> str:
        flag, ini = _OPTIONS[m.group(1)]
        return f"ini option {ini}" if m.group(1) in config.stash.get(_FROM_INI, set()) else flag

    return _CLI_FLAG.sub(option, message)


def _request(config: pytest.Config) -> Any:
    """The options as a RunRequest without agent or eval set (each file gives its own), checked
    as every front end's are; a usage error naming the option it refuses, before anything runs."""
    from pydantic import ValidationError

    from agenteval.runner.request import RunRequest

    values: dict[str, Any] = {}
    from_ini = config.stash.get(_FROM_INI, set())
    for field, (option, ini) in _OPTIONS.items():
        value = config.getoption(option)
        if value is None and ini is not None and config.getini(ini) != "":
            value = config.getini(ini)  # a string: read as the field's type, or refused
            from_ini.add(field)
        if value is not None:
            values[field] = value
    try:
        return RunRequest(**values)
    except ValidationError as e:
        first = e.errors()[0]
        field = str(first["loc"][0])
        option, ini = _OPTIONS[field]
        where = f"ini option {ini}" if field in from_ini else option
        raise pytest.UsageError(f"{where}: {first['msg']}") from None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not _enabled(parent.config):
        return None
    if file_path.name.endswith((".evalset.json", ".test.json")):
        return EvalFile.from_parent(parent, path=file_path)
    return None


def _find_agent(start: Path, stop: Path) -> Path | None:
    """The nearest folder from `start` up to `stop` with an agent.py or a root_agent package."""
    for folder in [start, *start.parents]:
        init = folder / "__init__.py"
        if (folder / "agent.py").is_file() or (init.is_file() and "root_agent" in init.read_text()):
            return folder
        if folder == stop:
            break
    return None


def _agent_option(config: pytest.Config) -> Path | None:
    """The agent the options name: `--agenteval-agent` from the current folder, the ini's
    `agenteval_agent` from the ini file's (as pytest reads an ini file's paths)."""
    if given := config.getoption("--agenteval-agent"):
        return Path(given)
    ini = config.getini("agenteval_agent")
    if not ini:
        return None
    return config.inipath.parent / ini if config.inipath is not None else Path(ini)


class EvalCaseFailure(Exception):
    """A case did not pass; the message is the rendered report."""


class EvalFile(pytest.File):
    """An eval-set file: one item per case; runs all cases together on first use."""

    results: Any = None
    failed: Exception | None = None  # why the file's run failed: each item says so, none runs it again

    def collect(self) -> Iterator[pytest.Item]:
        from agenteval.datasets import load_eval_set
        from agenteval.datasets.legacy import legacy_case_id
        from agenteval.runner.selection import Selection, check_has_cases

        try:
            eval_set = load_eval_set(self.path)
            check_has_cases([Selection(self.path, eval_set)])  # as `eval` refuses a set of nothing
        except AgentEvalError as e:
            raise self.CollectError(str(e)) from None
        self.eval_set = eval_set
        for case in eval_set.eval_cases:
            # A `.test.json` turn list's one case is named by the file's path (`legacy_case_id`):
            # its item by the file's name, so that node ids (and JUnit names) are the same on
            # every machine and checkout.
            name = self.path.name if case.eval_id == legacy_case_id(self.path) else case.eval_id
            yield EvalCaseItem.from_parent(self, name=name, eval_id=case.eval_id)

    def run_all(self) -> Any:
        """Runs the file's selected cases (those of its items left after `-k`, `-m`,
        `--deselect`, and not skipped by a marker) once; later items reuse the results, or the
        error it ended in."""
        if self.failed is not None:
            raise self.failed
        if self.results is None:
            try:
                self.results = self._run()
            except Exception as e:
                self.failed = e
                raise
        return self.results

    def run_again(self, eval_id: str) -> Any:
        """Runs one case again, on its own, and records it: its item is run a second time (a
        rerun plugin's `--reruns`), which the file's first results cannot answer."""
        return self._run([eval_id])

    def _run(self, only: list[str] | None = None) -> Any:
        from agenteval.agents import load_root_agent
        from agenteval.runner import Selection, start
        from agenteval.runner.request import request_config, to_job
        from agenteval.runner.sync import run_sync
        from agenteval.store import record

        config = self.config
        agent_path = _agent_option(config) or _find_agent(self.path.parent, config.rootpath)
        if agent_path is None:
            raise AgentEvalError(f"{self.path}: no agent found beside or above this file; set "
                                 "--agenteval-agent or the ini option agenteval_agent")
        request = config.stash[_REQUEST].model_copy(update={"agent_path": str(agent_path),
                                                             "eval_sets": [str(self.path)]}, deep=True)
        eval_config, source = request_config(request, self.path)  # test_config.json beside the file
        job = to_job(request, eval_config, source, command="pytest", argv=list(config.invocation_params.args),
                   agent=load_root_agent(agent_path), app_name=agent_path.resolve().name)
        selected = only or [item.eval_id for item in self.session.items
                            if isinstance(item, EvalCaseItem) and item.parent is self and not _not_run(item)]
        whole = len(selected) == len(self.eval_set.eval_cases)
        job.selections = [Selection(self.path, self.eval_set, case_ids=None if whole else selected)]
        if job.executor == "ray":
            from agenteval.runner.executors.pick import check_executor

            check_executor(job, job.isolation or job.config.isolation)  # refused before a cluster starts
            _share_ray(config)
        done = run_sync(start(job, dict(os.environ), config.rootpath))
        record(config.rootpath, done)
        (result,) = done.results
        return result


def _not_run(item: pytest.Item) -> bool:
    """Whether pytest will not run `item`: a `skip` / `skipif` marker that holds, or an
    `xfail(run=False)` (unless `--runxfail`). Its case is then neither run (a model's time) nor
    recorded in the history, as a case `-k` leaves is not. A marker whose condition cannot be
    evaluated counts as one that holds: the item's own set-up reports the error, and runs nothing."""
    from _pytest.skipping import evaluate_skip_marks, evaluate_xfail_marks

    try:
        xfail = evaluate_xfail_marks(item)
        return evaluate_skip_marks(item) is not None or (
            xfail is not None and not xfail.run and not item.config.option.runxfail)
    except (Exception, pytest.fail.Exception):  # `fail` is what pytest raises for a bad condition
        return True


_RAY_FAILED = pytest.StashKey[AgentEvalError]()


def _share_ray(config: pytest.Config) -> None:
    """Connects to Ray once for the session (starting a cluster costs seconds), for every eval
    file's run; disconnects (stopping a cluster it started) when the session ends. A cluster
    that cannot be used fails every item with the reason, tried once (a local one that does not
    start takes a minute to say so)."""
    from agenteval.runner.executors.ray_executor import join_cluster
    from agenteval.runner.executors.ray_worker import import_ray

    if _RAY_FAILED in config.stash:
        raise config.stash[_RAY_FAILED]
    ray = import_ray()
    if not ray.is_initialized():
        try:
            join_cluster(ray, None)
        except AgentEvalError as e:
            config.stash[_RAY_FAILED] = e
            raise
        config.add_cleanup(ray.shutdown)


class EvalCaseItem(pytest.Item):
    """One eval case."""

    def __init__(self, *, eval_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.eval_id = eval_id
        self.attempts = 0

    def runtest(self) -> None:
        from agenteval.schema import EvalStatus

        parent = self.parent
        if not isinstance(parent, EvalFile):
            raise TypeError("EvalCaseItem outside an EvalFile")
        self.attempts += 1
        result = parent.run_all() if self.attempts == 1 else parent.run_again(self.eval_id)
        summary = next(s for s in result.summary if s.eval_id == self.eval_id)
        if summary.final_eval_status != EvalStatus.PASSED:
            raise EvalCaseFailure(_render(result, self.eval_id))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, EvalCaseFailure):
            return str(excinfo.value)
        if isinstance(excinfo.value, AgentEvalError):
            return _in_pytest_terms(self.config, str(excinfo.value))
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # A line number, not None: pytest's report of an item a `skip` marker skips requires one.
        return self.path, 0, f"eval case {self.eval_id}"


def _render(result: Any, eval_id: str) -> str:
    """The case's criteria table, errors and negative judge rationales, as plain text."""
    from rich.console import Console

    from agenteval.reporting import case_table, invocation_details

    console = Console(width=110, record=True, file=open(os.devnull, "w"), color_system=None)  # noqa: SIM115
    cases = [c for c in result.eval_case_results if c.eval_id == eval_id]
    for case in cases:
        console.print(invocation_details(case))
    console.print(case_table(cases))
    return console.export_text()
