"""`agenteval web`: loopback by default, a warning elsewhere, the URL printed, the app built
for AGENTS_DIR with the environment (uvicorn's server is replaced by a recorder: nothing
listens), and the server's stop told to the app before its connections are waited for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.cli.web import is_loopback


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    import uvicorn

    calls: list[dict[str, Any]] = []

    def run(server: Any, sockets: Any = None) -> None:
        config = server.config
        calls.append({"app": config.app, "host": config.host, "port": config.port, "server": server})

    monkeypatch.setattr(uvicorn.Server, "run", run)
    return calls


def _agents(tmp_path: Path) -> Path:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "agent.py").write_text("def root_agent(text):\n    return text\n")
    return tmp_path


def test_it_serves_on_loopback_by_default_and_prints_the_url(tmp_path: Path,
                                                             served: list[dict[str, Any]]) -> None:
    r = CliRunner().invoke(cli, ["web", str(_agents(tmp_path))])
    assert r.exit_code == 0, r.output
    assert "Serving on http://127.0.0.1:8000/" in r.output and "1 agent(s)" in r.output
    assert "warning" not in r.output
    (call,) = served
    assert (call["host"], call["port"]) == ("127.0.0.1", 8000)
    assert call["app"].title == "agenteval web"


def test_the_servers_stop_is_told_to_the_app_first(tmp_path: Path, served: list[dict[str, Any]]) -> None:
    """Ctrl-C: the app's runs are cancelled and its streams end (`Web.stop`) before uvicorn
    waits for the open connections (it waited 3 s for a run's event stream, then cut it with a
    traceback)."""
    import signal

    r = CliRunner().invoke(cli, ["web", str(_agents(tmp_path))])
    assert r.exit_code == 0, r.output
    (call,) = served
    web = call["app"].state.web
    assert not web.stopping
    call["server"].handle_exit(signal.SIGINT, None)
    assert web.stopping and call["server"].should_exit


def test_another_host_is_warned_about_and_the_token_is_in_the_url(tmp_path: Path,
                                                                  served: list[dict[str, Any]]) -> None:
    r = CliRunner().invoke(cli, ["web", str(_agents(tmp_path)), "--host", "0.0.0.0", "--port", "9001",
                                 "--token", "tok"])
    assert r.exit_code == 0, r.output
    assert "warning: serving on 0.0.0.0, reachable from other machines" in r.output
    assert "Serving on http://0.0.0.0:9001/?token=tok" in r.output
    assert served[0]["port"] == 9001


def test_bad_arguments_exit_2(tmp_path: Path, served: list[dict[str, Any]]) -> None:
    r = CliRunner().invoke(cli, ["web", str(tmp_path / "missing")])
    assert r.exit_code == 2 and served == []
    r = CliRunner().invoke(cli, ["web", str(_agents(tmp_path)), "--token", "a b"])
    assert r.exit_code == 2 and "--token" in r.output and served == []


def test_an_agent_folder_given_itself_gets_a_hint(tmp_path: Path, served: list[dict[str, Any]]) -> None:
    r = CliRunner().invoke(cli, ["web", str(_agents(tmp_path) / "a")])
    assert r.exit_code == 0 and "give its parent folder" in r.output


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                                ("127.0.0.2", True), ("0.0.0.0", False), ("10.0.0.5", False),
                                                ("example.com", False)])
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
