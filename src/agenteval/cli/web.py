"""`agenteval web [AGENTS_DIR]`: serve the web UI and its JSON API (FastAPI on uvicorn).

FastAPI and uvicorn are imported only when the command runs (the `web` extra). This is the edge
where the environment is read (model API keys, handed to the app).
"""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from types import FrameType

import click

from agenteval.cli import options as opt

_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def is_loopback(host: str) -> bool:
    """True for a host only this machine can reach (`localhost`, 127.0.0.0/8, ::1)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _serve(agents_dir: str, host: str, port: int, token: str | None) -> int:
    try:
        import uvicorn

        from agenteval.web import create_app
    except ImportError as e:
        click.echo(f"error: agenteval web needs FastAPI and uvicorn ({e}); run: "
                   "pip install 'agenteval[web]'", err=True)
        return 2
    from agenteval.web.agents import AgentsDir
    from agenteval.web.security import LOOPBACK_HOSTS

    root = Path(agents_dir)
    if not root.is_dir():
        click.echo(f"error: {agents_dir}: not a directory (expected a folder holding agent folders)",
                   err=True)
        return 2
    names = AgentsDir(root).names()
    if not names:
        hint = (" (it is an agent itself: give its parent folder)"
                if any((root / m).is_file() for m in ("agent.py", "__init__.py")) else "")
        click.echo(f"warning: no agent folder (holding agent.py or __init__.py) under {agents_dir}{hint}",
                   err=True)
    loopback = is_loopback(host)
    if not loopback:
        click.echo(f"warning: serving on {host}, reachable from other machines: anyone who can reach "
                   "it can run your agents" + ("" if token else "; consider --token"), err=True)
    # A wildcard address is reached by names the server cannot know; a named host by that name
    # (and the loopback names, for the machine itself).
    unspecified = host in ("0.0.0.0", "::", "")
    allowed: set[str] | str = "*" if unspecified else {*LOOPBACK_HOSTS, host.lower().strip("[]")}
    try:
        app = create_app(root, token=token, env=dict(os.environ), allowed_hosts=allowed)
    except ValueError as e:
        click.echo(f"error: --token: {e}", err=True)
        return 2
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    click.echo(f"agenteval web: {len(names)} agent(s) under {root.resolve()}")
    click.echo(f"Serving on {url}  (API docs: http://{shown}:{port}/docs; Ctrl-C stops)")
    web = app.state.web

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            # Before the open connections are waited for: the runs still going are cancelled
            # (their pages told "the server stopped"), which ends their event streams, and the
            # history's change streams end. Waited on, then cut, the streams held Ctrl-C up
            # 3 s and printed a traceback; the page said only that its stream had closed.
            web.stop()
            super().handle_exit(sig, frame)

    # Whatever stream is still open after a few seconds does not hold Ctrl-C up.
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=3)
    Server(config).run()
    return 0


@click.command(name="web")
@click.argument("agents_dir", default=".", type=click.Path(file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (anything but loopback is reachable from other machines).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--token", default=None, help="Require this token on every request (visit /?token=T once).")
def web(agents_dir: str, host: str, port: int, token: str | None) -> None:
    """Serve the web UI for every agent folder under AGENTS_DIR (default: the current folder):
    chat, eval sets, runs, results, run history and traces."""
    sys.exit(opt.guard(_serve, agents_dir, host, port, token))


__all__ = ["is_loopback", "web"]
