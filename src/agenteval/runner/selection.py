"""Choosing what a run covers: eval sets and cases from command-line style selectors, and the
eval config that goes with them."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import ijson
from pydantic import ValidationError

from agenteval.criteria.spec import ConfiguredMetric
from agenteval.datasets import default_config_for, load_eval_config, load_eval_set
from agenteval.datasets.files import check_rereadable
from agenteval.datasets.loader import check_persona
from agenteval.datasets.nesting import MAX_DEPTH
from agenteval.datasets.scan import scan_file
from agenteval.datasets.stream import CaseStream, malformed, raw_items, read_head
from agenteval.errors import DataError, from_validation_error
from agenteval.runner.expected_agents import NamedAgents
from agenteval.runner.item_walk import Unread, walk
from agenteval.schema import EvalCase, EvalConfig, EvalSet

_SET_FIELDS = tuple(k for k in EvalSet.model_fields if k != "eval_cases")
_RECORD_VERSION = "2"  # of `SetRecord`: a record another version wrote is not trusted


@dataclass(frozen=True)
class SetRecord:
    """What a run journals of a streamed eval-set file (in its fingerprint, `files`), so that
    resuming it over the same bytes need not check every case again: the sha256 of the file's
    bytes, the set's other fields as JSON, and what `StreamedCases.read` found."""

    sha256: str
    shell: str
    digest: str
    count: int
    scenario: bool
    tool_args: dict[str, list[str]]
    agents: NamedAgents = field(default_factory=NamedAgents)
    version: str = _RECORD_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "shell": self.shell, "digest": self.digest, "count": self.count,
                "scenario": self.scenario, "tool_args": self.tool_args, "agents": self.agents.to_json(),
                "version": self.version}

    @classmethod
    def from_json(cls, data: Any) -> SetRecord | None:
        """The record `data` holds; None for anything else (an older or another agenteval's
        record, a hand-edited journal): the file is then checked whole."""
        if not isinstance(data, dict) or data.get("version") != _RECORD_VERSION:
            return None
        args = data.get("tool_args")
        kinds = {"sha256": str, "shell": str, "digest": str, "count": int, "scenario": bool}
        if any(not isinstance(data.get(k), t) for k, t in kinds.items()) or not isinstance(args, dict):
            return None
        if any(not isinstance(v, list) or not all(isinstance(a, str) for a in v) for v in args.values()):
            return None
        agents = NamedAgents.from_json(data.get("agents"))
        if agents is None:
            return None
        return cls(data["sha256"], data["shell"], data["digest"], data["count"], data["scenario"],
                   {str(k): list(v) for k, v in args.items()}, agents)


def file_sha256(path: Path) -> str:
    """The sha256 of the file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@dataclass(eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class StreamedCases:
    """The cases of a current-format eval-set file, read from it a case at a time each time they
    are iterated (a run holds the cases in flight, not the set). `read` checks the whole file
    first, as loading it would (each case valid, eval ids unique: a DataError naming the file
    and field), and keeps what a run needs before its first case: how many, their ids, the
    expected tool calls' argument names, the agents the expected events name, whether any case
    is a conversation scenario, and the digest of the set's JSON (`model_dump_json`, as if
    loaded whole). `record` is what a run journals of the file; a file whose bytes a trusted
    record names is not checked again (`trusted`: `ids` is then empty). `validated` counts the
    cases validated so far."""

    path: Path
    count: int = 0
    ids: list[str] = field(default_factory=list)
    tool_args: dict[str, set[str]] = field(default_factory=dict)
    scenario: bool = False
    digest: str = ""
    agents: NamedAgents = field(default_factory=NamedAgents)
    record: SetRecord | None = None
    trusted: bool = False
    validated: int = 0

    @classmethod
    def read(cls, path: Path,
             trusted: Mapping[str, SetRecord] | None = None) -> tuple[EvalSet, StreamedCases]:
        """The eval set's other fields (`eval_cases` empty) and its cases, checked unless the
        file's bytes are those of a record in `trusted` (by sha256: a resumed run's)."""
        if trusted:
            record = trusted.get(file_sha256(path))
            if record is not None:
                out = cls(path, record.count, [], {k: set(v) for k, v in record.tool_args.items()},
                          record.scenario, record.digest, record.agents, record, trusted=True)
                return EvalSet.model_validate_json(record.shell), out
        before = os.stat(path)
        # Every field of the set, wherever the file puts it: ADK writes creation_timestamp
        # after eval_cases, and a shell without it would differ from the set loaded whole.
        head = read_head(path, "eval_cases", _SET_FIELDS, what="case")
        try:
            shell = EvalSet.model_validate({**head, "eval_cases": []})
        except ValidationError as e:
            raise from_validation_error(path, e) from None
        out = cls(path)
        shell_json = shell.model_dump_json()
        prefix, marker, suffix = shell_json.partition('"eval_cases":[]')
        if not marker:  # cannot happen: the field is always dumped
            raise DataError(path, "eval_cases", "cannot lay out the eval set")
        digest = hashlib.sha256((prefix + '"eval_cases":[').encode())
        first: dict[str, int] = {}
        for i, case in CaseStream(path, "eval_cases", EvalCase, MAX_DEPTH):
            out.validated += 1
            j = first.setdefault(case.eval_id, i)
            if j != i:
                raise DataError(path, f"eval_cases[{i}].eval_id",
                                f"duplicate eval_id {case.eval_id!r} (also eval_cases[{j}])")
            check_persona(path, i, case)
            digest.update((b"," if i else b"") + case.model_dump_json().encode())
            add_tool_args(case, out.tool_args)
            out.agents.add(case, i)
            out.scenario = out.scenario or case.conversation_scenario is not None
            out.ids.append(case.eval_id)
        out.count = len(out.ids)
        digest.update(("]" + suffix).encode())
        out.digest = digest.hexdigest()
        # The bytes checked are those hashed only if the file did not change meanwhile; a file
        # that did gets no record (a resume then checks it whole).
        sha256 = file_sha256(path)
        after = os.stat(path)
        if (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns):
            out.record = SetRecord(sha256, shell_json, out.digest, out.count, out.scenario,
                                   {k: sorted(v) for k, v in out.tool_args.items()}, out.agents)
        return shell, out

    def __iter__(self) -> Iterator[EvalCase]:
        return cast(Iterator[EvalCase], self.cases())  # (none is kept: each is an EvalCase)

    def cases(self, kept: Container[str] = frozenset()) -> Iterator[EvalCase | str]:
        """The cases in file order; one whose eval_id is in `kept` (a resumed run's, whose
        results are known) is not validated: it comes as its eval_id (a stand-in EvalCase of it
        cost a tenth of a kept case's resume). A DataError naming the file and field for a case
        that is invalid, or when the file no longer holds the cases `read` found."""
        scan_file(self.path, MAX_DEPTH)  # no nesting bomb reaches the parser (cached if unchanged)
        n = 0
        for i, (eval_id, data) in enumerate(self._items(kept)):
            n = i + 1
            if eval_id is None:
                eval_id = data.get("eval_id") if isinstance(data, dict) else None
            if i >= self.count or (not self.trusted and eval_id != self.ids[i]):
                raise DataError(self.path, f"eval_cases[{i}]", "the eval set changed while it ran")
            if isinstance(eval_id, str) and eval_id in kept:
                yield eval_id
                continue
            self.validated += 1
            try:
                yield EvalCase.model_validate(data)
            except ValidationError as e:
                raise from_validation_error(self.path, e, f"eval_cases[{i}]") from None
        if n != self.count:
            raise DataError(self.path, "eval_cases", "the eval set changed while it ran")

    def _items(self, kept: Container[str]) -> Iterator[tuple[str | None, Any]]:
        """Each item of the file's case list, as (its eval id, None) when it is a kept case's
        found without parsing it, else (None, its parsed JSON). A trusted file (its bytes the
        journaled ones: checked whole when the run began) with kept cases is walked at C speed
        (`item_walk`), only the items to run parsed by ijson from their bytes; anything else,
        and the rest of a file the walk cannot read, is parsed by ijson, every item."""
        n = 0
        if self.trusted and kept:
            try:
                for eval_id, window, start, end in walk(self.path, "eval_cases"):
                    n += 1
                    if eval_id is not None and eval_id in kept:
                        yield eval_id, None
                    else:
                        yield None, _item(self.path, window[start:end].encode("latin-1"))
                return
            except Unread:
                pass  # (the rest as ijson reads it, from the item the walk could not read)
        for i, data in enumerate(raw_items(self.path, "eval_cases")):
            if i >= n:
                yield None, data


def _item(path: Path, raw: bytes) -> Any:
    """The one JSON value of an item's bytes, as ijson parses it in the file (`raw_items`)."""
    try:
        return next(ijson.items(raw, "", use_float=True))
    except ijson.JSONError as e:
        raise malformed(path, e) from None


@dataclass
class Selection:
    """An eval set to run and, optionally, the case ids to run from it. With `streamed`, the
    set's cases are read from its file as they run, and `eval_set` holds none of them (its
    other fields only): ask `cases()`, `case_count()`, `has_cases()` rather than
    `eval_set.eval_cases`."""

    path: Path | None
    eval_set: EvalSet
    case_ids: list[str] | None = None
    streamed: StreamedCases | None = None

    def case_count(self) -> int:
        if self.case_ids:
            return len(self.case_ids)
        return self.streamed.count if self.streamed is not None else len(self.eval_set.eval_cases)

    def has_cases(self) -> bool:
        """Whether any case is selected (a set with none is refused: `check_has_cases`)."""
        return self.case_count() > 0

    def cases(self) -> Iterator[EvalCase]:
        """Every case of the set (read from its file when streamed)."""
        return iter(self.streamed) if self.streamed is not None else iter(self.eval_set.eval_cases)

    def whole(self) -> EvalSet:
        """The eval set with its cases (a streamed one loaded whole: only where it must be)."""
        if self.streamed is None:
            return self.eval_set
        return self.eval_set.model_copy(update={"eval_cases": list(self.streamed)})

    def digest(self) -> str:
        """The sha256 of the whole eval set's JSON (`EvalSet.model_dump_json`)."""
        if self.streamed is not None:
            return self.streamed.digest
        return hashlib.sha256(self.eval_set.model_dump_json().encode()).hexdigest()

    def scenario(self) -> bool:
        """Whether a case of the set is a conversation scenario (a simulated user)."""
        if self.streamed is not None:
            return self.streamed.scenario
        return any(c.conversation_scenario is not None for c in self.eval_set.eval_cases)

    def named_agents(self) -> NamedAgents:
        """The agents the selected cases' expected events name (`runner.expected_agents`)."""
        if self.streamed is not None:
            return self.streamed.agents
        out = NamedAgents()
        ids = set(self.case_ids) if self.case_ids else None
        for i, case in enumerate(self.eval_set.eval_cases):
            if ids is None or case.eval_id in ids:
                out.add(case, i)
        return out

    def tool_args(self, args: dict[str, set[str]]) -> None:
        """Adds the argument names of each tool the set's expected invocations call to `args`."""
        if self.streamed is not None:
            for name, names in self.streamed.tool_args.items():
                args.setdefault(name, set()).update(names)
            return
        for case in self.eval_set.eval_cases:
            add_tool_args(case, args)


def split_selector(arg: str, agent_dir: Path | None) -> tuple[Path | None, list[str] | None]:
    """`file[:id1,id2]` → (file, ids); a bare id names `<agent_dir>/<id>.evalset.json`.
    A colon with no id after it is a DataError: running the whole set instead would be a
    silent guess at what was meant."""
    candidates: list[tuple[str, list[str] | None]] = [(arg, None)]
    if ":" in arg:
        head, _, tail = arg.rpartition(":")
        candidates.append((head, [i for i in tail.split(",") if i]))
    for name, ids in candidates:
        path = Path(name) if Path(name).is_file() else None
        if path is None and agent_dir is not None and (agent_dir / f"{name}.evalset.json").is_file():
            path = agent_dir / f"{name}.evalset.json"
        if path is not None and ids == []:
            raise DataError(None, "", f"{arg!r}: no case ids after ':'; give FILE:id1,id2, "
                            "or FILE alone for every case")
        if path is not None:
            return path, ids
    return None, None


def config_beside(args: Sequence[str], agent_dir: Path | None = None) -> Path | None:
    """The eval-set file whose `test_config.json` applies (the only one given, as `adk eval`
    does), found without loading any set; None with several sets or an unknown one."""
    if len(args) != 1:
        return None
    return split_selector(args[0], agent_dir)[0]


def select(args: Sequence[str], agent_dir: Path | None = None,
           initial_session_file: str | Path | None = None, *, stream: bool = False,
           trusted: Mapping[str, SetRecord] | None = None) -> list[Selection]:
    """Loads every `file[:ids]` argument; an unknown file or case id is a DataError, and so is
    anything selected twice (a case id twice in one argument, one file twice, as its path or as
    its bare id, or two files with one eval_set_id): each case run has one place in the
    results, the journal and the history, so it is refused before anything runs rather than
    silently run once. With `stream`, a current-format set of which every case runs is checked
    whole but not kept: its cases are read from the file as they run (`StreamedCases`), and not
    checked again when its bytes are those of a record in `trusted` (a resumed run's files)."""
    out: list[Selection] = []
    given: dict[Path, str] = {}  # each file (resolved) and the argument that named it
    for arg in args:
        path, ids = split_selector(arg, agent_dir)
        if path is None:
            check_rereadable(arg)  # a directory or a pipe is named as such
            raise DataError(arg or "''", "", "file not found (and no such eval set id under the agent)")
        if path.resolve() in given:
            raise DataError(path, "", f"the eval set is given twice ({given[path.resolve()]!r} and {arg!r}); "
                            "give it once, its cases as one argument (FILE:id1,id2)")
        given[path.resolve()] = arg
        check_selected_once(path, ids or [])
        streamed = None
        if stream and not ids and initial_session_file is None and _is_object(path):
            eval_set, streamed = StreamedCases.read(path, trusted)
            known = set(streamed.ids)
        else:
            eval_set = load_eval_set(path, initial_session_file)
            known = {c.eval_id for c in eval_set.eval_cases}
        for i in ids or []:
            if i not in known:
                raise DataError(path, "eval_cases", f"no case with eval_id {i!r}")
        seen = next((o for o in out if o.eval_set.eval_set_id == eval_set.eval_set_id), None)
        if seen is not None:  # their results, files and history rows are all keyed by the id
            raise DataError(path, "eval_set_id", f"{eval_set.eval_set_id!r} is also the id of {seen.path}; "
                            "select its cases as one argument (FILE:id1,id2) or give each set its own id")
        out.append(Selection(path, eval_set, ids, streamed))
    check_has_cases(out)
    return out


def _is_object(path: Path) -> bool:
    """Whether the file holds a JSON object (a current-format set; a legacy one is a list)."""
    with open(path, "rb") as f:
        head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1] == b"{"


def check_selected_once(path: Path | None, ids: Sequence[str]) -> None:
    """A DataError naming the file when a case id is selected more than once: each case run has
    one place in the results, the journal and the history."""
    twice = [i for i, n in Counter(ids).items() if n > 1]
    if twice:
        raise DataError(path, "eval_cases", f"{'case' if len(twice) == 1 else 'cases'} "
                        f"{', '.join(map(repr, twice))} selected more than once; select each case once")


def check_has_cases(selections: Sequence[Selection]) -> None:
    """A DataError naming the file when a selected eval set holds no case: a run of nothing
    would report "0 failed" and pass a CI gate."""
    for s in selections:
        if not s.has_cases():
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


def check_selected_args(metrics: Sequence[ConfiguredMetric], selections: Sequence[Selection],
                        source: str | None) -> None:
    """`check_args_match` over the selections' eval sets (a streamed one read from its first
    pass, not loaded again)."""
    args: dict[str, set[str]] = {}
    for s in selections:
        s.tool_args(args)
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


__all__ = ["Selection", "SetRecord", "StreamedCases", "add_tool_args", "check_args_match", "check_args_table",
           "check_selected_args", "check_selected_once", "config_beside", "file_sha256",
           "resolve_config", "select", "split_selector", "uses_args_match"]
