"""The agents the server offers: every folder under AGENTS_DIR holding an `agent.py` or an
`__init__.py`, as `adk web` finds them, loaded as `agenteval eval` loads them.

Finding agents imports nothing; an agent is imported the first time it is described or used,
and kept. An agent that fails to import is remembered with its error (the server stays up); a
folder whose real path lies outside AGENTS_DIR (a symbolic link pointing out) is not offered.
"""

from __future__ import annotations

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


def _kind(agent: Any) -> str:
    # The adapter's kind, without resolving the agent's model: a stand-in model answers the
    # model lookup, so listing agents never loads or calls one.
    adapter = to_adapter(agent, lambda name: ScriptedModel([], name=name))
    return describe(adapter)[0]


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
        """The agent `name`, imported on first use (None when there is no such agent)."""
        path = self.folder(name)
        if path is None:
            return None
        with self._lock:
            known = self._loaded.get(name)
            if known is not None:
                return known
            try:
                agent = load_root_agent(path)
                loaded = LoadedAgent(name, path, agent, _kind(agent))
            except AgentEvalError as e:
                loaded = LoadedAgent(name, path, error=str(e))
            except Exception as e:  # a root_agent no adapter takes, an adapter that raises...
                loaded = LoadedAgent(name, path, error=describe_error(e))
            self._loaded[name] = loaded
            return loaded


__all__ = ["AgentsDir", "LoadedAgent"]
