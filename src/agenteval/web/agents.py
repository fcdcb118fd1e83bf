"""The agents the server offers: every folder under AGENTS_DIR holding an `agent.py` or an
`__init__.py`, as `adk web` finds them, loaded as `agenteval eval` loads them.

Finding agents imports nothing; an agent is imported the first time it is described or used,
and kept while its folder's Python files stay as they were: once one is edited, added or
removed, the next use imports the agent again (an edit is what the next chat turn or run
runs; a fixed agent that failed to import loads). An agent that fails to import is remembered
with its error (the server stays up); a folder whose real path lies outside AGENTS_DIR (a
symbolic link pointing out) is not offered.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenteval.agents import describe, load_root_agent, to_adapter
from agenteval.errors import AgentEvalError
from agenteval.errors import describe as describe_error
from agenteval.models.scripted import ScriptedModel
from agenteval.web.paths import child, plain_name

_MARKERS = ("agent.py", "__init__.py")
_SKIP = {"__pycache__", "node_modules", "venv", "site-packages"}


@dataclass(frozen=True)
class LoadedAgent:
    """An imported agent (`root_agent`) and its kind, or why it could not be imported."""

    name: str
    path: Path
    agent: Any = None
    kind: str | None = None
    error: str | None = None
    # the folder's Python files as they were imported (see _sources)
    sources: tuple[tuple[str, int, int], ...] = ()


def _kind(agent: Any) -> str:
    # The adapter's kind, without resolving the agent's model: a stand-in model answers the
    # model lookup, so listing agents never loads or calls one.
    adapter = to_adapter(agent, lambda name: ScriptedModel([], name=name))
    return describe(adapter)[0]


def _sources(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """The `.py` files under `folder` (path, modification time in ns, size), hidden folders
    (`.agenteval/`, `.venv/`), caches and virtual environments left out: the agent's code."""
    found = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIP]
        for name in files:
            if name.endswith(".py"):
                try:
                    st = os.stat(os.path.join(top, name))
                except OSError:  # removed while walking: the next look sees it gone
                    continue
                found.append((os.path.join(top, name), st.st_mtime_ns, st.st_size))
    return tuple(sorted(found))


def _forget_modules(folder: Path) -> None:
    """Drops the modules imported from `folder` from `sys.modules`, so importing the agent
    again executes its files again (a package imported by its name would be found cached)."""
    root = folder.resolve()
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if origin and Path(origin).resolve().is_relative_to(root):
            del sys.modules[name]


class AgentsDir:
    """The agent folders under one directory, and their loaded agents."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._loaded: dict[str, LoadedAgent] = {}
        self._lock = threading.Lock()  # imports change sys.modules: one at a time

    def names(self) -> list[str]:
        """The agent folders, sorted (nothing imported)."""
        if not self.root.is_dir():
            return []
        out = []
        for entry in self.root.iterdir():
            if entry.name.startswith((".", "_")) or entry.name in _SKIP or not plain_name(entry.name):
                continue
            if self.folder(entry.name) is not None:
                out.append(entry.name)
        return sorted(out)

    def folder(self, name: str) -> Path | None:
        """The folder of agent `name`; None when there is no such agent (or the name is not a
        plain folder name, or the folder lies outside the root)."""
        path = child(self.root, name)
        if path is None or name.startswith((".", "_")) or not path.is_dir():
            return None
        return path if any((path / m).is_file() for m in _MARKERS) else None

    def load(self, name: str) -> LoadedAgent | None:
        """The agent `name`, imported on first use and again once its Python files changed
        (None when there is no such agent)."""
        path = self.folder(name)
        if path is None:
            return None
        sources = _sources(path)
        with self._lock:
            known = self._loaded.get(name)
            if known is not None and known.sources == sources:
                return known
            if known is not None:
                _forget_modules(path)
            try:
                agent = load_root_agent(path)
                loaded = LoadedAgent(name, path, agent, _kind(agent), sources=sources)
            except AgentEvalError as e:
                loaded = LoadedAgent(name, path, error=str(e), sources=sources)
            except Exception as e:  # a root_agent no adapter takes, an adapter that raises...
                loaded = LoadedAgent(name, path, error=describe_error(e), sources=sources)
            self._loaded[name] = loaded
            return loaded


__all__ = ["AgentsDir", "LoadedAgent"]
