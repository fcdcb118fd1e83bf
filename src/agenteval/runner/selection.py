"""Choosing what a run covers: eval sets and cases from command-line style selectors, and the
eval config that goes with them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agenteval.criteria.spec import ConfiguredMetric
from agenteval.datasets import default_config_for, load_eval_config, load_eval_set
from agenteval.errors import DataError
from agenteval.schema import EvalCase, EvalConfig, EvalSet


@dataclass
class Selection:
    """An eval set to run and, optionally, the case ids to run from it."""

    path: Path | None
    eval_set: EvalSet
    case_ids: list[str] | None = None

    def case_count(self) -> int:
        return len(self.case_ids) if self.case_ids else len(self.eval_set.eval_cases)


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


def config_beside(args: Sequence[str], agent_dir: Path | None = None) -> Path | None:
    """The eval-set file whose `test_config.json` applies (the only one given, as `adk eval`
    does), found without loading any set; None with several sets or an unknown one."""
    if len(args) != 1:
        return None
    return split_selector(args[0], agent_dir)[0]


def select(args: Sequence[str], agent_dir: Path | None = None,
           initial_session_file: str | Path | None = None) -> list[Selection]:
    """Loads every `file[:ids]` argument; an unknown file or case id is a DataError, and so is
    anything selected twice (a case id twice in one argument, one file twice, as its path or as
    its bare id, or two files with one eval_set_id): each case run has one place in the
    results, the journal and the history, so it is refused before anything runs rather than
    silently run once."""
    out: list[Selection] = []
    given: dict[Path, str] = {}  # each file (resolved) and the argument that named it
    for arg in args:
        path, ids = split_selector(arg, agent_dir)
        if path is None:
            raise DataError(arg, "", "file not found (and no such eval set id under the agent)")
        if path.resolve() in given:
            raise DataError(path, "", f"the eval set is given twice ({given[path.resolve()]!r} and {arg!r}); "
                            "give it once, its cases as one argument (FILE:id1,id2)")
        given[path.resolve()] = arg
        twice = [i for i, n in Counter(ids or []).items() if n > 1]
        if twice:
            raise DataError(path, "eval_cases", f"{'case' if len(twice) == 1 else 'cases'} "
                            f"{', '.join(map(repr, twice))} selected more than once; select each case once")
        eval_set = load_eval_set(path, initial_session_file)
        known = {c.eval_id for c in eval_set.eval_cases}
        for i in ids or []:
            if i not in known:
                raise DataError(path, "eval_cases", f"no case with eval_id {i!r}")
        seen = next((o for o in out if o.eval_set.eval_set_id == eval_set.eval_set_id), None)
        if seen is not None:  # their results, files and history rows are all keyed by the id
            raise DataError(path, "eval_set_id", f"{eval_set.eval_set_id!r} is also the id of {seen.path}; "
                            "select its cases as one argument (FILE:id1,id2) or give each set its own id")
        out.append(Selection(path, eval_set, ids))
    check_has_cases(out)
    return out


def check_has_cases(selections: Sequence[Selection]) -> None:
    """A DataError naming the file when a selected eval set holds no case: a run of nothing
    would report "0 failed" and pass a CI gate."""
    for s in selections:
        if not s.eval_set.eval_cases:
            raise DataError(s.path, "eval_cases", "the list is empty: the eval set has no case")


def check_args_match(metrics: Sequence[ConfiguredMetric], eval_sets: Sequence[EvalSet],
                     source: str | None) -> None:
    """Every tool and argument a trajectory criterion's `args_match` names appears in an expected
    tool call of the eval sets (`*` stands for any); a DataError naming the config key otherwise
    (a misspelled name would silently match nothing)."""
    args: dict[str, set[str]] = {}
    for s in eval_sets:
        for case in s.eval_cases:
            add_tool_args(case, args)
    check_args_table(metrics, args, source)


def uses_args_match(metrics: Sequence[ConfiguredMetric]) -> bool:
    return any(getattr(m.criterion, "args_match", None) for m in metrics)


def add_tool_args(case: EvalCase, args: dict[str, set[str]]) -> None:
    """Adds the argument names of each tool the case's expected invocations call to `args`."""
    for inv in case.conversation or []:
        for c in inv.tool_calls():
            args.setdefault(c.name or "", set()).update((c.args or {}).keys())


def check_args_table(metrics: Sequence[ConfiguredMetric], args: dict[str, set[str]],
                     source: str | None) -> None:
    """`check_args_match` given the argument names per tool of the expected calls."""
    every_arg = {a for names in args.values() for a in names}
    for m in metrics:
        table = getattr(m.criterion, "args_match", None) or {}
        for tool, per_arg in table.items():
            key = f"criteria.{m.name}.args_match.{tool}"
            if tool != "*" and tool not in args:
                raise DataError(source, key, f"no expected tool call is named {tool!r} "
                                f"(tools called: {', '.join(sorted(args)) or 'none'})")
            known = every_arg if tool == "*" else args[tool]
            for arg in per_arg:
                if arg != "*" and arg not in known:
                    whose = "no expected call" if tool == "*" else f"no expected call of {tool!r}"
                    raise DataError(source, f"{key}.{arg}", f"{whose} has an argument {arg!r} "
                                    f"(arguments: {', '.join(sorted(known)) or 'none'})")


def resolve_config(config_file_path: str | Path | None,
                   eval_set_path: str | Path | None) -> tuple[EvalConfig, str | None]:
    """The flag's config file, else test_config.json beside the set, else the defaults."""
    if config_file_path:
        return load_eval_config(config_file_path), str(config_file_path)
    if eval_set_path is None:
        return EvalConfig(), None
    config, found = default_config_for(eval_set_path)
    return config, str(found) if found else None


__all__ = ["Selection", "add_tool_args", "check_args_match", "check_args_table", "config_beside",
           "resolve_config", "select", "split_selector", "uses_args_match"]
