"""The example agent in the web server, on the real embedded model (slow: marked `model`): one
chat turn with its tool call and trace, then the session added to an eval set and run."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO
from tests.web.api_support import serve


@pytest.mark.model
def test_chat_with_hello_world_on_the_embedded_model_and_run_it(tmp_path: Path) -> None:
    from agenteval.web import create_app

    agents = tmp_path / "agents"
    shutil.copytree(REPO / "examples" / "hello_world", agents / "hello_world",
                    ignore=shutil.ignore_patterns(".agenteval", "__pycache__"))
    with serve(create_app(agents)) as url, httpx.Client(base_url=url, headers={"origin": url},
                                                        timeout=600) as http:
        assert http.get("/api/apps").json() == [{"name": "hello_world", "kind": "builtin", "error": None}]
        sid = http.post("/apps/hello_world/users/u/sessions", json={}).json()["id"]
        turn = http.post(f"/apps/hello_world/users/u/sessions/{sid}/messages",
                         json={"text": "Roll a 6-sided die for me."}).json()
        assert turn["error"] is None
        assert turn["tool_calls"] == [{"name": "roll_die", "args": {"sides": 6}}]
        rolled = turn["tool_responses"][0]["response"]["result"]
        assert str(rolled) in turn["response"] and turn["state"]["rolls"] == [rolled]
        assert any(sp["kind"] == "llm" for sp in turn["trace"]["spans"])
        assert http.post("/apps/hello_world/eval-sets/chat").status_code == 201
        added = http.post("/apps/hello_world/eval-sets/chat/add-session",
                          json={"eval_id": "roll", "session_id": sid, "user_id": "u"})
        assert added.status_code == 201
        run = http.post("/apps/hello_world/eval-sets/chat/run",
                        json={"criteria": {"tool_trajectory_avg_score": 1.0}}).json()["run_id"]
        with http.stream("GET", f"/api/runs/{run}/events") as events:
            last = [line for line in events.iter_lines() if line.startswith("data: ")][-1]
        assert '"type": "RunFinished"' in last
