"""Real-browser test support: a test agents folder, a scripted OpenAI-compatible judge, the web
server under uvicorn on a free 127.0.0.1 port (a thread of the test process), and headless
Chromium driven by Playwright (Debian's `chromium`; Playwright's own download is never used)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.fake_server import FakeServer, chat

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--no-first-run",
                 "--disable-sync"]

# Markup that would run or break out of an attribute if any of it reached innerHTML.
PAYLOAD = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">"\'><svg onload=window.__xss=3>'

SHOP_AGENT = '''\
"""A scripted agent (a plain callable): weather and table bookings, with the tools it used."""


import time


def root_agent(text, state):
    state["turns"] = state.get("turns", 0) + 1
    low = text.lower()
    if "crash" in low:
        raise RuntimeError("<b>the agent crashed</b>")
    if "slow" in low:
        time.sleep(0.2)
        return "Done, slowly."
    if "weather" in low:
        city = "Paris" if "paris" in low else "London"
        state["city"] = city
        return {"response": f"It is 21°C and sunny in {city}.",
                "tool_calls": [{"name": "get_weather", "args": {"city": city, "unit": "celsius"},
                                "response": {"temp_c": 21, "sky": "sunny"}}]}
    if "book" in low:
        return {"response": "Booked a table for 2 at 19:00 at Chez Marcel.",
                "tool_calls": [{"name": "find_restaurant", "args": {"area": "centre"},
                                "response": {"name": "Chez Marcel"}},
                               {"name": "book_table", "args": {"restaurant": "Chez Marcel", "people": 2},
                                "response": {"ok": True}}]}
    return "Hello! Ask me about the weather or to book a table."
'''

EVIL_AGENT = f'''\
"""An agent whose every string is markup: reply, tool name, argument name and value, result."""

P = {PAYLOAD!r}


def root_agent(text):
    calls = [{{"name": "t" + P, "args": {{P: P}}, "response": {{"r": P}}}}]
    return {{"response": P + " " + text, "tool_calls": calls}}
'''


def find_chromium() -> str | None:
    """Debian's chromium (or the browser named by AGENTEVAL_CHROMIUM); None when there is none."""
    for candidate in (os.environ.get("AGENTEVAL_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


BROKEN_AGENT = 'raise ImportError("this agent cannot be imported")\n'


def write_agents(root: Path) -> Path:
    """AGENTS_DIR with `shop` (the callable above), `evil` (markup payloads everywhere),
    `broken` (fails to import) and `dice` (the built-in agent, on a model chosen in the page)."""
    for name, source in (("shop", SHOP_AGENT), ("evil", EVIL_AGENT), ("broken", BROKEN_AGENT),
                         ("dice", DICE_AGENT)):
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "agent.py").write_text(source, encoding="utf-8")
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


DICE_AGENT = '''\
"""agenteval's built-in agent: its model is chosen in the page (the scripted model of the tests)."""

from agenteval.agents import Agent


def roll_die(sides: int) -> int:
    """Roll a die and return the result.

    Args:
        sides: The number of sides of the die.
    """
    return 4


root_agent = Agent(name="dice", model="local", instruction="Roll dice with roll_die.", tools=[roll_die])
'''


def _answer(question: str) -> str:
    """What the scripted model replies. As the built-in agent: a request to roll asks for
    roll_die, a tool result is turned into the answer. As a judge: a reference of 25°C against
    an answer of 21°C is `invalid`, anything else `valid`; a question holding markup gets the
    markup back in its rationale (so the page must show it as text)."""
    if "Tool roll_die returned:" in question:
        return "You rolled a 4."
    if "Verdict" not in question and "roll" in question.lower():
        return json.dumps({"tool_calls": [{"name": "roll_die", "arguments": {"sides": 6}}]})
    verdict, why = "valid", "Both answers give the same facts."
    if "25°C" in question:
        verdict = "invalid"
        why = "The reference says 25°C and cloudy; the response says 21°C and sunny."
    if "<script>" in question:
        why = "Echo: " + PAYLOAD
    return json.dumps({"verdict": verdict, "rationale": why})


class ScriptedModel(FakeServer):
    """The scripted model (see `_answer`): a FakeServer, started at once; `model` is its name."""

    def __init__(self) -> None:
        super().__init__(respond=chat(_answer, usage=(50, 12, 0), model="judge"))
        self.start()
        self.model = f"openai-compat:scripted@{self.base_url}"


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Runs the ASGI app under uvicorn on a free port in a thread; yields its base URL."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the web server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def serve_agents(agents: Path) -> Iterator[str]:
    """The web app over the agents folder `agents`, served as by `serve`; yields its base URL."""
    from agenteval.web.app import create_app

    with serve(create_app(agents)) as url:
        yield url


@contextmanager
def chromium(executable: str) -> Iterator[Any]:
    """A headless Chromium from `executable`, through Playwright's synchronous API."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def fresh_page(browser: Any, timeout_ms: int) -> Iterator[Any]:
    """A page in a fresh browser context (1400x860, `timeout_ms` for every wait); the page's
    uncaught errors are collected in `page.errors`. The context is closed afterwards."""
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    context.set_default_timeout(timeout_ms)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    try:
        yield page
    finally:
        context.close()


def shot(page: Any, folder: Path, name: str) -> Path:
    """A screenshot of the page as a test artefact, without the passing toasts (a step's
    "case saved" over the view shown in docs/screenshots/)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), style=".toast { visibility: hidden; }")
    return path
