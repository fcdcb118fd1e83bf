from pathlib import Path

import pytest

from agenteval.agents import Agent, AgentLoadError, CallableAdapter, load_root_agent, to_adapter
from agenteval.agents.builtin import BuiltinAdapter
from agenteval.models import ScriptedModel
from tests.conftest import REPO


def test_loads_example_package_root_agent() -> None:
    agent = load_root_agent(REPO / "examples" / "hello_world")
    assert isinstance(agent, Agent) and agent.name == "hello_world_agent"
    model = ScriptedModel(["hi"], name="scripted")
    adapter = to_adapter(agent, lambda name: model, "override")
    assert isinstance(adapter, BuiltinAdapter) and adapter.model is model


def test_loads_single_file_callable(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("def root_agent(text):\n    return text.upper()\n")
    adapter = to_adapter(load_root_agent(tmp_path / "bot.py"), lambda n: ScriptedModel([]))
    assert isinstance(adapter, CallableAdapter) and adapter.name == "root_agent"


@pytest.mark.parametrize(("files", "message"), [
    ({}, "no agent here"),
    ({"agent.py": "x = 1\n"}, "defines no `root_agent`"),
    ({"agent.py": "import not_a_module_anywhere\n"}, "importing the agent failed: ModuleNotFoundError"),
])
def test_load_errors_are_clear(tmp_path: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(AgentLoadError, match=message):
        load_root_agent(tmp_path)


def test_an_import_error_names_the_agents_line_that_failed(tmp_path: Path) -> None:
    # Only the exception was said: a KeyError raised inside `os` left the user to search for it.
    agent = tmp_path / "keyed_agent"
    agent.mkdir()
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text('import os\n\nKEY = os.environ["AGENTEVAL_TEST_NO_SUCH_KEY"]\n')
    with pytest.raises(AgentLoadError) as raised:
        load_root_agent(agent)
    assert str(raised.value) == (f"{agent}: importing the agent failed: KeyError: "
                                 f"'AGENTEVAL_TEST_NO_SUCH_KEY' (at {agent / 'agent.py'}:3)")


@pytest.mark.parametrize("package", [False, True])
def test_a_syntax_error_names_the_broken_files_path_and_line(tmp_path: Path, package: bool) -> None:
    # It said `(agent.py, line 2)`, the bare name, and in a package also `(at .../__init__.py:1)`,
    # the line importing the broken file, as if that were where the error was.
    agent = tmp_path / "broken_agent"
    agent.mkdir()
    if package:
        (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text("def root_agent(text):\n    x = (\n")
    with pytest.raises(AgentLoadError) as raised:
        load_root_agent(agent)
    assert str(raised.value) == (f"{agent}: importing the agent failed: SyntaxError: '(' was never "
                                 f"closed (at {agent / 'agent.py'}:2)")


def test_no_root_agent_names_the_files_looked_in(tmp_path: Path) -> None:
    # It named only the folder: which of its files was expected to define root_agent was unsaid.
    (tmp_path / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "agent.py").write_text("x = 1\n")
    with pytest.raises(AgentLoadError) as raised:
        load_root_agent(tmp_path)
    assert str(raised.value).endswith(f"defines no `root_agent` (looked in {tmp_path / 'agent.py'}, "
                                      f"{tmp_path / '__init__.py'})")


def test_a_packages_agent_py_given_as_a_file_keeps_its_relative_imports(tmp_path: Path) -> None:
    # It was imported alone: "attempted relative import with no known parent package".
    agent = tmp_path / "relative_agent"
    agent.mkdir()
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "helpers.py").write_text("def reply(text):\n    return 'ok ' + text\n")
    (agent / "agent.py").write_text("from .helpers import reply\n\nroot_agent = reply\n")
    assert load_root_agent(agent / "agent.py")("x") == "ok x"
    assert load_root_agent(agent / "__init__.py")("y") == "ok y"


def test_a_packages_agent_module_is_looked_in_first_as_adk_eval_does(tmp_path: Path) -> None:
    # An ADK folder whose __init__.py imports agent.py and defines a root_agent of its own:
    # adk eval scores agent.py's (the package's `agent` attribute first); agenteval scored the other.
    package = tmp_path / "twice_defined_agent"
    package.mkdir()
    (package / "__init__.py").write_text("from . import agent\n\n"
                                         "def root_agent(text):\n    return 'package'\n")
    (package / "agent.py").write_text("def root_agent(text):\n    return 'agent.py'\n")
    assert load_root_agent(package)("hi") == "agent.py"


def test_the_apps_agents_are_named_where_they_can_be_known() -> None:
    """What a run checks expected authors against (`runner.expected_agents`): the built-in agent's
    name; an ADK app's root, sub-agents and AgentTool agents at any depth; none for a callable."""
    from agenteval.agents import agent_names

    model = ScriptedModel(["ok"])
    assert agent_names(to_adapter(Agent("shop", model), lambda name: model)) == {"shop"}
    assert agent_names(to_adapter(lambda text: "ok", lambda name: model)) is None
    pytest.importorskip("google.adk", reason="google-adk is not installed")
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.tools.agent_tool import AgentTool

    inner = LlmAgent(name="inner_agent", model="gemini-2.0-flash")
    booking = LlmAgent(name="booking_agent", model="gemini-2.0-flash", tools=[AgentTool(inner)])
    root = LlmAgent(name="triage_agent", model="gemini-2.0-flash", sub_agents=[booking])
    want = {"triage_agent", "booking_agent", "inner_agent"}
    assert agent_names(to_adapter(root, lambda name: model)) == want
    assert agent_names(to_adapter(App(name="trips", root_agent=root), lambda name: model)) == want
