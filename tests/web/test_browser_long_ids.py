"""A long case id in a narrow window (640 px, about 80 columns), in a real browser (see
test_browser.py): the eval set's case table, the run's 'Why cases did not pass', its cases table and
the case page keep within the window (the id wraps; a wide table scrolls in its own box). The
id pushed the set's other columns out of sight and ran past the failure list's card."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.web.test_browser import (  # noqa: F401 (fixtures)
    agents_dir,
    base_url,
    browser,
    executable,
)
from tests.web.test_browser_edges import api

LONG = "a_case_identifier_with_no_space_to_break_at_" * 4
TURN = {"invocation_id": "i1", "user_content": {"role": "user", "parts": [{"text": "weather in paris"}]},
        "final_response": {"role": "model", "parts": [{"text": "It is 25°C and cloudy in Paris."}]}}
# What runs past the window: the page or a card wider than it shows (it scrolls sideways or cuts
# its text), or a case table outside a box of its own that scrolls sideways.
WIDER = """() => [...[...document.querySelectorAll('.page, .page .card')]
    .filter((el) => el.scrollWidth > el.clientWidth + 1),
  ...[...document.querySelectorAll('table.cases')]
    .filter((el) => !el.closest('.cases-wrap') && el.getBoundingClientRect().right > innerWidth + 1)]
  .map((el) => el.tagName + '.' + el.className)"""


def test_a_long_case_id_keeps_within_a_narrow_window(browser: Any, base_url: str,  # noqa: F811
                                                     agents_dir: Path) -> None:  # noqa: F811
    (agents_dir / "shop" / "longids.evalset.json").write_text(json.dumps(
        {"eval_set_id": "longids", "eval_cases": [{"eval_id": LONG, "conversation": [TURN]}]}))
    context = browser.new_context(viewport={"width": 640, "height": 720})
    context.set_default_timeout(10_000)
    p = context.new_page()
    try:
        p.goto(base_url + "/#/app/shop/evalsets/longids")
        p.wait_for_selector("table.cases tbody tr")
        assert p.evaluate(WIDER) == []  # every column of the set's table in sight
        run = api(p, "/apps/shop/eval-sets/longids/run", "POST", {})["run_id"]
        deadline = time.monotonic() + 20
        while api(p, f"/api/runs/{run}").get("state") != "finished" and time.monotonic() < deadline:
            time.sleep(0.2)
        p.goto(base_url + f"/#/runs/{run}")
        p.wait_for_selector(".card.failing li")
        p.wait_for_selector("table.cases tbody tr")
        assert p.evaluate(WIDER) == []
        p.goto(base_url + f"/#/runs/{run}/cases/{quote(LONG, safe='')}")
        p.wait_for_selector("h2")
        assert p.evaluate(WIDER) == []
    finally:
        context.close()
