"""Finding the agent under test: a directory or module exposing `root_agent`, as `adk eval`
loads it, and wrapping it in the right adapter."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from agenteval.agents.base import AgentAdapter
from agenteval.agents.builtin import Agent, BuiltinAdapter
from agenteval.agents.callable import CallableAdapter
from agenteval.errors import AgentEvalError
from agenteval.models.base import LLM


class AgentLoadError(AgentEvalError):
    """The agent could not be found or imported."""


# The private module names agent files and packages are imported under (`agenteval_agent_<hash>`,
# so two agents' `agent.py` do not collide), each with the name its user knows it by.
_SHOWN: dict[str, str] = {}


def shown_module_name(name: str) -> str:
    """The module `name` as its user knows it: an agent file or package imported under a private
    name is named by the file's stem or the folder's name (`my_agent.Odd`, not
    `agenteval_agent_123.Odd`); any other name as it is."""
    head, dot, rest = name.partition(".")
    shown = _SHOWN.get(head)
    return name if shown is None else shown + dot + rest


def _shadows(name: str, folder: Path) -> bool:
    """True when importing `name` would not give the package in `folder`: a standard-library
    module of that name, or a module already imported from elsewhere (`json/`, `test/`, ...)."""
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return True
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    return module is not None and (origin is None or Path(origin).resolve().parent != folder.resolve())


def _import_package(path: Path) -> ModuleType:
    """The package directory `path`, imported by its name as `adk eval` does (so its absolute
    imports of itself work), or under a private name when that name is taken."""
    if not _shadows(path.name, path):
        parent = str(path.parent.resolve())
        if parent not in sys.path:
            sys.path.insert(0, parent)
        return importlib.import_module(path.name)
    return _exec(f"agenteval_agent_{path.name}_{abs(hash(str(path.resolve())))}", path / "__init__.py",
                 path.name, [str(path)])


def _exec(name: str, location: Path, shown: str, search: list[str] | None = None) -> ModuleType:
    """Imports the file `location` as module `name` (a package when `search` is given), shown to
    the user as `shown`."""
    spec = importlib.util.spec_from_file_location(name, location, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise AgentLoadError(f"{location}: cannot import")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    _SHOWN[name] = shown
    spec.loader.exec_module(module)
    return module


def _import_path(path: Path) -> ModuleType:
    if path.is_dir():
        if (path / "__init__.py").is_file():
            return _import_package(path)
        path = path / "agent.py"
    if not path.is_file():
        raise AgentLoadError(f"{path}: no agent here (expected a package directory, an agent.py, "
                             "or a .py file exposing root_agent)")
    if (path.parent / "__init__.py").is_file():
        # A module of a package (an ADK folder's agent.py given as a file): imported as one, so
        # its relative imports (`from .tools import ...`) work as they do under the folder.
        package = _import_package(path.parent)
        if path.stem == "__init__":
            return package
        return importlib.import_module(f"{package.__name__}.{path.stem}")
    return _exec(f"agenteval_agent_{abs(hash(str(path.resolve())))}", path, path.stem)


def check_agent_path(agent_path: str | Path) -> None:
    """An AgentLoadError now unless `agent_path` could hold an agent (a folder, or a .py file),
    without importing anything: a wrong path is reported before other checks."""
    path = Path(agent_path)
    if path.is_dir() or (path.is_file() and path.suffix == ".py"):
        return
    what = "does not exist" if not path.exists() else "is not a folder or a .py file"
    raise AgentLoadError(f"{path}: {what} (expected a package directory, a folder with agent.py, "
                         "or a .py file exposing root_agent)")


def agent_home(agent_path: str | Path) -> Path:
    """The folder that holds an agent's eval sets and `.agenteval/` store: the agent's folder,
    or the folder of an agent given as a .py file."""
    path = Path(agent_path)
    return path.parent if path.suffix == ".py" and path.is_file() else path


def _where(error: BaseException, folder: Path) -> str:
    """` (at FILE:LINE)`: the last line of the agent's own code (a file under `folder`) that the
    error passed through, even when a library raised it (a missing key read at import); '' when
    none did. A SyntaxError's place is the broken file's line, which no frame holds (its message
    gave only the file's bare name, `(agent.py, line 2)`, and the frame the `import` of it)."""
    if isinstance(error, SyntaxError) and error.filename and error.lineno:
        return f" (at {error.filename}:{error.lineno})"
    root = folder.resolve()
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if Path(f.filename).is_file() and Path(f.filename).resolve().is_relative_to(root)]
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def load_root_agent(agent_path: str | Path) -> Any:
    """Imports the agent module and returns its `root_agent`: a package's `agent` module's
    first, when the package imports one (as `adk eval`), then the package's own."""
    path = Path(agent_path)
    try:
        module = _import_path(path)
    except AgentLoadError:
        raise
    except SystemExit as e:  # sys.exit() at import must not end agenteval, even with code 0
        raise AgentLoadError(f"{path}: importing the agent failed: it called sys.exit({e.code!r})") from e
    except Exception as e:
        said = e.msg if isinstance(e, SyntaxError) else e  # its place is said by `_where`
        raise AgentLoadError(f"{path}: importing the agent failed: {type(e).__name__}: {said}"
                             f"{_where(e, agent_home(path))}") from e
    sub = getattr(module, "agent", None)
    # As adk eval (and AgentEvaluator): a package's imported `agent` module is looked in before
    # the package's own names, so an ADK folder scores the agent that adk eval scored.
    for holder in (sub, module) if isinstance(sub, ModuleType) else (module, sub):
        if holder is None:
            continue
        # Like adk eval: an ADK `app` (with its plugins) wins over the bare root_agent.
        app = getattr(holder, "app", None)
        if app is not None and is_adk_agent(app):
            return app
        if hasattr(holder, "root_agent"):
            return holder.root_agent
    # The files looked in are named: a folder's name alone left which file to fix unsaid.
    looked = [str(getattr(h, "__file__", None) or h.__name__) for h in (sub, module)
              if isinstance(h, ModuleType)]
    raise AgentLoadError(f"{path}: the module defines no `root_agent` (looked in {', '.join(looked)})")


def is_adk_agent(obj: Any) -> bool:
    """True for a google-adk agent (checked by module name, so google-adk is never imported)."""
    return any(c.__module__.startswith("google.adk.") for c in type(obj).__mro__)


def to_adapter(obj: Any, resolve_model: Callable[[str], LLM], model_override: str | None = None,
               inner_tool_calls: Literal["include", "exclude"] = "include",
               override_name: str = "--agent_model") -> AgentAdapter:
    """Wraps a loaded agent in its adapter. `model_override` replaces the agent's model (an
    error for an agent with its own says `override_name` applies to agenteval's only);
    `inner_tool_calls` is the ADK adapter's (see `EvalConfig.inner_tool_calls`)."""
    if isinstance(obj, Agent):
        model = obj.model
        if model_override or isinstance(model, str):
            model = resolve_model(model_override or str(model))
        return BuiltinAdapter(obj, model)
    if model_override:
        raise AgentLoadError(f"{override_name} applies to agenteval Agent agents only; this "
                             f"root_agent is a {type(obj).__name__} with its own model")
    if hasattr(obj, "start_session"):
        return obj  # type: ignore[no-any-return]
    if is_adk_agent(obj):
        from agenteval.agents.adk import AdkAdapter

        return AdkAdapter(obj, inner_tool_calls)
    if callable(obj):
        return CallableAdapter(obj)
    raise AgentLoadError(f"root_agent is a {type(obj).__name__}, which agenteval cannot run: "
                         "use agenteval.agents.Agent, a callable, an ADK agent or an AgentAdapter")


def agent_names(adapter: AgentAdapter) -> set[str] | None:
    """The names of the app's agents, as its events' authors give them: agenteval's built-in
    agent's own; an ADK app's root agent, its sub-agents and the agents its `AgentTool`s run,
    however deep. None where they cannot be known (a callable, any other adapter: a callable
    may author the events it reports with any name)."""
    if isinstance(adapter, BuiltinAdapter):
        return {adapter.agent.name}
    if type(adapter).__name__ != "AdkAdapter":  # not imported: google-adk is optional
        return None
    root = getattr(adapter, "agent", None)
    root = getattr(root, "root_agent", None) or root  # an ADK App
    names: set[str] = set()
    seen: set[int] = set()
    todo = [root]
    while todo:
        agent = todo.pop()
        if agent is None or id(agent) in seen:
            continue
        seen.add(id(agent))
        if isinstance(getattr(agent, "name", None), str):
            names.add(agent.name)
        todo += list(getattr(agent, "sub_agents", None) or [])
        # An AgentTool's agent authors the inner events (`inner_tool_calls`).
        todo += [getattr(t, "agent", None) for t in getattr(agent, "tools", None) or []]
    return names or None


def describe(adapter: AgentAdapter) -> tuple[str, str | None]:
    """(kind, model name) of an adapter, for the run header: `builtin`, `callable`, `adk` or
    `adapter`; the model is the one the agent runs on when it can be told, else None."""
    if isinstance(adapter, BuiltinAdapter):
        return "builtin", adapter.model.name
    if isinstance(adapter, CallableAdapter):
        return "callable", None
    if type(adapter).__name__ == "AdkAdapter":  # not imported: google-adk is optional
        root = getattr(getattr(adapter, "agent", None), "root_agent", None) or getattr(adapter, "agent", None)
        model = getattr(root, "model", None)
        return "adk", model if isinstance(model, str) and model else getattr(model, "model", None)
    return "adapter", None
