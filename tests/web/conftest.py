"""Fixtures of the web tests: the API's (`tests/web/api_support.py`: `agents_dir`, `live`) and,
for a browser module that serves its own `base_url`, `browser_agents`, `browser` and `page`
(test_browser.py, and the modules taking its fixtures, have their own)."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.api_support import agents_dir, live  # noqa: F401  (fixtures)
from tests.web.browser_support import chromium, find_chromium, fresh_page, write_agents


@pytest.fixture(scope="module")
def browser_agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The browser tests' agents folder (`write_agents`) for a module's `base_url` to add its
    runs and eval sets to and serve (`serve_agents`); the module is skipped without Chromium or
    the playwright package."""
    if find_chromium() is None:
        pytest.skip("no Chromium found (/usr/bin/chromium): browser tests skipped")
    pytest.importorskip("playwright.sync_api")
    return write_agents(tmp_path_factory.mktemp("agents"))


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[Any]:
    """One Chromium for the module (a launch costs 2-3 s; each test has a fresh context)."""
    path = find_chromium()
    assert path is not None
    with chromium(path) as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page of `browser` that fails its test on any script error."""
    with fresh_page(browser, 15_000) as p:
        yield p
    assert p.errors == []
