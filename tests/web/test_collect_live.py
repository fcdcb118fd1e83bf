"""`agenteval web` shows runs recorded by another process as they arrive: `/api/runs/live`
sends an event when a collector (here a real one on a free port, fed a framework's OTLP/JSON
export over HTTP) records a conversation into a history the server reads."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx

from tests.collector.helpers import TRACES, live_collector
from tests.web.api_support import Live


def test_the_live_stream_announces_collected_runs(live: Live) -> None:
    events: list[dict[str, Any]] = []
    opened = threading.Event()

    def follow() -> None:
        with live.http.stream("GET", "/api/runs/live", timeout=60) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            opened.set()
            for line in r.iter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line[6:]))
                    return

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    assert opened.wait(10)
    root = live.agents_dir / "echo"  # the store of the app `echo`
    with live_collector(root, [TRACES / "expected.evalset.json"]) as collector:
        assert httpx.post(collector.url, content=(TRACES / "adk.otlp.json").read_bytes(),
                          headers={"Content-Type": "application/json"}).status_code == 200
        outcomes = collector.wait_for(2)
    reader.join(30)
    assert events and events[0]["runs"] >= 1
    assert events[0]["newest"] in {o.result_id for o in outcomes}
    listed = live.get("/api/runs", params={"app": "echo"}).json()
    assert {r["run_id"] for r in listed} >= {o.result_id for o in outcomes}
    assert {r["eval_set_id"] for r in listed if r["run_id"] in {o.result_id for o in outcomes}} == {"traces"}
