"""bench/bench_judge.py with `--jobs` > 1 writes each case's row as the case ends: a run stopped
early (the embedded judge takes minutes per case under load) keeps what it judged, and `--resume`
goes on from it (session 22 lost a tuning run's 22 judged rows that way)."""

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import bench_judge


def test_a_case_judged_before_the_run_stops_keeps_its_row(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    first_written = asyncio.Event()

    async def run_case(kind: str, injection: bool, case: dict[str, Any], *_: Any) -> dict[str, Any]:
        if case["id"] == "frm-002":  # the run stops (killed, or a case fails) after frm-001 ended
            await first_written.wait()
            raise KeyboardInterrupt
        first_written.set()
        return {"id": case["id"], "label": case["label"], "correct": True, "verdicts": ["valid"]}

    monkeypatch.setattr(bench_judge, "run_case", run_case)
    monkeypatch.setattr(bench_judge, "local_judge", lambda cache=None: (None, None))
    out = tmp_path / "rows.jsonl"
    args = argparse.Namespace(threads=None, sampled=False, only="final_response_match", limit=None,
                              ids="frm-001,frm-002", blind=False, interleave=False, cache=None,
                              out=str(out), resume=False, jobs=2, num_samples=1,
                              summary=str(tmp_path / "summary.json"))
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(bench_judge.main_async(args))
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["frm-001"]
