"""Matching tool-call arguments the way users mean them, per tool and per argument.

`args_match` in a trajectory criterion maps a tool name (or `*`, any tool) to its arguments
(or `*`, any other argument) to a matcher:

| matcher | an actual value matches the expected one when |
|---|---|
| `exact` (the default) | equal as values, as ADK compares them (1 == 1.0, "1" != 1) |
| `ignore` | always: the argument is not compared, and may be missing on either side |
| `subset` | a dict or list whose items all appear in the expected value |
| `superset` | a dict or list holding every item of the expected value (extra items allowed) |
| `{"match": "regex", "pattern": P}` | its text fully matches P (no P: the expected text is it) |
| `{"match": "number", "abs": A, "rel": R}` | numbers within A, or within R times the expected value |
| `text`, or `{"match": "text", "case": false, "whitespace": false}` | equal text, ignoring case / spacing |
| `{"match": "callable", "path": "pkg.module.fn"}` | `fn(expected, actual)` returns true |

(`text` ignores both letter case and runs of whitespace unless `case` / `whitespace` say to keep
them.) An argument present on one side only never matches (but under `ignore`). Without `args_match`
a trajectory criterion compares arguments exactly as ADK does: a plain ADK config means what it
meant.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from agenteval.errors import SettingError
from agenteval.schema import FunctionCall

ArgsMatch = Mapping[str, Mapping[str, Any]]
Matcher = Callable[[Any, Any], bool]
ANY = "*"


def _subset(small: Any, big: Any) -> bool:
    if isinstance(small, dict) and isinstance(big, dict):
        return all(k in big and big[k] == v for k, v in small.items())
    if isinstance(small, list) and isinstance(big, list):
        pool = list(big)
        for item in small:
            if item not in pool:
                return False
            pool.remove(item)
        return True
    return bool(small == big)


def _text(case: bool, whitespace: bool) -> Matcher:
    def norm(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        text = " ".join(value.split()) if not whitespace else value
        return text.casefold() if not case else text

    return lambda expected, actual: bool(norm(expected) == norm(actual))


def _number(absolute: float, relative: float) -> Matcher:
    def match(expected: Any, actual: Any) -> bool:
        numbers = (int, float)
        if isinstance(expected, bool) or isinstance(actual, bool):  # True is not the number 1 here
            return type(expected) is type(actual) and bool(expected == actual)
        if not isinstance(expected, numbers) or not isinstance(actual, numbers):
            return bool(expected == actual)
        if math.isnan(expected) or math.isnan(actual):
            return False
        return abs(actual - expected) <= max(absolute, relative * abs(expected))

    return match


def _regex(pattern: str | None) -> Matcher:
    compiled = re.compile(pattern) if pattern is not None else None

    def match(expected: Any, actual: Any) -> bool:
        rule = compiled or (re.compile(expected) if isinstance(expected, str) else None)
        return rule is not None and isinstance(actual, str) and rule.fullmatch(actual) is not None

    return match


def build_matcher(spec: Any) -> Matcher | None:
    """The matcher a spec names (None for `ignore`); ValueError saying what is wrong."""
    if isinstance(spec, str):
        spec = {"match": spec}
    if not isinstance(spec, dict) or not isinstance(spec.get("match"), str):
        raise ValueError("a matcher is a name (exact, ignore, subset, superset, text) or an object "
                         "with `match`")
    kind, options = spec["match"], {k: v for k, v in spec.items() if k != "match"}
    allowed = {"exact": set(), "ignore": set(), "subset": set(), "superset": set(),
               "regex": {"pattern"}, "number": {"abs", "rel"}, "text": {"case", "whitespace"},
               "callable": {"path"}}
    if kind not in allowed:
        raise ValueError(f"unknown matcher {kind!r}; one of {', '.join(allowed)}")
    extra = set(options) - allowed[kind]
    if extra:
        raise ValueError(f"unknown key {sorted(extra)[0]!r} for the {kind} matcher")
    if kind == "ignore":
        return None
    if kind == "exact":
        return lambda expected, actual: bool(expected == actual)
    if kind == "subset":
        return lambda expected, actual: _subset(actual, expected)
    if kind == "superset":
        return lambda expected, actual: _subset(expected, actual)
    if kind == "regex":
        pattern = options.get("pattern")
        if pattern is not None and not isinstance(pattern, str):
            raise ValueError("`pattern` must be text")
        try:
            return _regex(pattern)
        except re.error as e:
            raise ValueError(f"bad pattern: {e}") from None
    if kind == "number":
        values = [options.get("abs", 0.0), options.get("rel", 0.0)]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in values):
            raise ValueError("`abs` and `rel` must be numbers >= 0")
        return _number(float(values[0]), float(values[1]))
    if kind == "text":
        flags = [options.get("case", False), options.get("whitespace", False)]
        if not all(isinstance(v, bool) for v in flags):
            raise ValueError("`case` and `whitespace` must be true or false")
        return _text(*flags)
    path = options.get("path")
    if not isinstance(path, str) or "." not in path:
        raise ValueError("`path` must name a function as package.module.function")
    module, _, name = path.rpartition(".")
    try:
        fn = getattr(importlib.import_module(module), name)
    except Exception as e:  # the config's problem, whatever the import raised
        raise ValueError(f"cannot import {path!r}: {e}") from None
    if not callable(fn):
        raise ValueError(f"{path!r} is not callable")
    return lambda expected, actual: bool(fn(expected, actual))


class MatcherError(SettingError):
    """A bad matcher, with the key it is under (`where`: `args_match.TOOL.ARG`)."""


class ArgsComparer:
    """Call equality under `args_match` (see the module docstring)."""

    def __init__(self, args_match: ArgsMatch) -> None:
        self._by_tool: dict[str, dict[str, Matcher | None]] = {}
        for tool, args in args_match.items():
            for arg, spec in args.items():
                try:
                    self._by_tool.setdefault(tool, {})[arg] = build_matcher(spec)
                except ValueError as e:
                    raise MatcherError(f"args_match.{tool}.{arg}", str(e)) from None

    def _matcher(self, tool: str | None, arg: str) -> tuple[bool, Matcher | None]:
        for t in (tool or "", ANY):
            table = self._by_tool.get(t)
            if table is not None:
                for a in (arg, ANY):
                    if a in table:
                        return True, table[a]
        return False, None

    def equal(self, actual: FunctionCall, expected: FunctionCall) -> bool:
        if actual.name != expected.name:
            return False
        got, want = actual.args or {}, expected.args or {}
        return all(self._arg_matches(expected.name, arg, got, want) for arg in {*got, *want})

    def _arg_matches(self, tool: str | None, arg: str, got: Mapping[str, Any],
                     want: Mapping[str, Any]) -> bool:
        found, matcher = self._matcher(tool, arg)
        if found and matcher is None:  # ignored
            return True
        if arg not in got or arg not in want:
            return False
        return bool(matcher(want[arg], got[arg]) if matcher is not None else want[arg] == got[arg])

    def first_difference(self, actual: FunctionCall, expected: FunctionCall) -> str | None:
        """The first argument (expected's order, then actual's) whose values do not match
        under the configured matchers; None when every argument matches."""
        got, want = actual.args or {}, expected.args or {}
        return next((arg for arg in dict.fromkeys([*want, *got])
                     if not self._arg_matches(expected.name, arg, got, want)), None)


__all__ = ["ANY", "ArgsComparer", "ArgsMatch", "MatcherError", "build_matcher"]
