"""In a real browser (issue 26, item 3): on a run's case page, "Make eval case…" asks for the set
and the new case's id, adds the case run as a case, and opens it in the case editor."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from agenteval.datasets import load_eval_set
from tests.web.test_browser import agents_dir, base_url, browser, executable, page  # noqa: F401 (fixtures)


def _stored_run(url: str) -> str:
    """A chat session added as case `weather` of set `made_here`, run once: its run id."""
    sets = "/apps/shop/eval-sets/made_here"
    with httpx.Client(base_url=url, headers={"origin": url}, timeout=30) as c:  # as the page sends
        c.post(sets).raise_for_status()
        sid = c.post("/apps/shop/users/u/sessions", json={}).json()["id"]
        said = c.post(f"/apps/shop/users/u/sessions/{sid}/messages", json={"text": "weather in Paris?"})
        said.raise_for_status()
        c.post(f"{sets}/add-session", json={"eval_id": "weather", "session_id": sid, "user_id": "u"}
               ).raise_for_status()
        r = c.post(f"{sets}/run", json={"criteria": {"tool_trajectory_avg_score": 1.0}})
        r.raise_for_status()
        run_id = str(r.json()["run_id"])
        for _ in range(300):
            if c.get(f"/api/runs/{run_id}").json().get("state") == "finished":
                return run_id
            time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish")


def test_make_eval_case_opens_the_new_case_in_the_editor(page: Any, base_url: str,  # noqa: F811
                                                          agents_dir: Path) -> None:  # noqa: F811
    run_id = _stored_run(base_url)
    answers = iter(["made_here", "weather_from_run"])
    page.on("dialog", lambda d: d.accept(next(answers)))
    page.goto(f"{base_url}/#/runs/{run_id}/cases/weather")
    page.click("#make-case")
    page.wait_for_selector("#case-editor")
    assert "weather_from_run" in page.url
    cases = {c.eval_id: c for c in load_eval_set(agents_dir / "shop" / "made_here.evalset.json").eval_cases}
    made = cases["weather_from_run"]
    turn = (made.conversation or [])[0]
    assert turn.user_content.text() == "weather in Paris?"
    calls = [(c.name, c.args) for c in turn.tool_calls()]
    assert calls == [("get_weather", {"city": "Paris", "unit": "celsius"})]
    assert made.final_session_state == {"turns": 1, "city": "Paris"}
    assert page.errors == []
