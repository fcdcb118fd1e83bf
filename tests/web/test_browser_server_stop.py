"""`agenteval web` stopped (SIGTERM, as Ctrl-C) while a run started from the page goes on, in a
real browser (see test_browser.py): the page says the run was cancelled because the server
stopped and that its case runs can be resumed; the server stops at once, without a traceback.
It waited 3 s for the run's event stream, cut it with "Exception in ASGI application", and the
page said only "the progress stream closed", offering "Open results" of a run never recorded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import eval_set, inv
from tests.web.browser_support import free_port

expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect

SLOW_AGENT = '''\
"""A callable agent taking 2 s a turn: the run is still going when the server stops."""

import time


def root_agent(text):
    time.sleep(2)
    return "slept"
'''


@pytest.fixture(scope="module")
def server(browser_agents: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    folder = browser_agents / "slow"
    folder.mkdir()
    (folder / "agent.py").write_text(SLOW_AGENT, encoding="utf-8")
    es = eval_set("slow", {f"c{i}": [inv(f"question {i}", "slept")] for i in range(8)})
    (folder / "slow.evalset.json").write_text(json.dumps(es.model_dump(mode="json", exclude_none=True)),
                                              encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "agenteval", "web", str(browser_agents),
                             "--port", str(port)], env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    import urllib.request

    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/api/apps", timeout=5)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("agenteval web did not start") from None
            time.sleep(0.2)
    try:
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def base_url(server: tuple[str, subprocess.Popen[bytes]]) -> str:
    return server[0]


Server = tuple[str, "subprocess.Popen[bytes]"]


def test_a_run_going_on_as_the_server_stops_says_so(page: Any, server: Server) -> None:
    url, proc = server
    page.goto(url + "/#/app/slow/evalsets/slow")
    page.click("text=Run evaluation (all)…")
    page.click("#start-run")
    expect(page.locator(".prog .pstatus")).to_contain_text("case runs", timeout=30_000)  # it runs
    proc.send_signal(signal.SIGTERM)
    expect(page.locator(".prog .pstatus")).to_contain_text(
        "cancelled: the server stopped; the case runs done are kept: resume the run", timeout=30_000)
    expect(page.locator(".prog .open-results")).to_have_count(0)
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err and b"graceful shutdown exceeded" not in err, err.decode()
