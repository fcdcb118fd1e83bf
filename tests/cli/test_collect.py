"""`agenteval collect` as a user runs it: a process listening on a free port, fed a framework's
OTLP/JSON export over HTTP, each conversation printed and listed by `agenteval runs`; bad
options refused with exit 2 before anything listens."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.collector.helpers import TRACES

FREE = {"criteria": {"tool_trajectory_single_tool_use": {"threshold": 1.0, "tool_name": "get_weather"}}}


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_collect_scores_a_posted_export_and_records_it(tmp_path: Path) -> None:
    (tmp_path / "free.json").write_text(json.dumps(FREE))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "collect", "--port", "0", "--grpc_port", "0",
         "--quiet_seconds", "0.3", "--eval_set", str(TRACES / "expected.evalset.json"),
         "--config_file_path", "free.json"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},  # a hung stop dumps its threads (below)
        # As from a terminal: Ctrl-C's default action, whatever the test runner's (an ignored
        # SIGINT would be inherited through exec, and Python then installs no KeyboardInterrupt
        # handler).
        preexec_fn=_sigint_default)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/v1/traces", banner)
        assert found, banner + (proc.stderr.read() if proc.stderr else "")
        url = f"http://127.0.0.1:{found.group(1)}/v1/traces"
        reply = httpx.post(url, content=(TRACES / "langgraph.otlp.json").read_bytes(),
                           headers={"Content-Type": "application/json"}, timeout=30)
        assert reply.status_code == 200
        bad = httpx.post(url, content=b"[1]", headers={"Content-Type": "application/json"})
        assert bad.status_code == 400
        grpc_line = proc.stdout.readline()
        assert re.match(r"Receiving OTLP/gRPC traces on 127\.0\.0\.1:\d+\.$", grpc_line), grpc_line
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert all(line.startswith("passed traces/weather-") for line in lines), lines
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            # Seen in two full suites on a slow machine, never alone (cause not found): say where
            # every thread of the process was when Ctrl-C did not stop it.
            proc.send_signal(signal.SIGABRT)
            out, err = proc.communicate(timeout=30)
            raise AssertionError(f"collect did not stop within 60 s of Ctrl-C (SIGINT in pytest: "
                                 f"{signal.getsignal(signal.SIGINT)})\n{out}\n{err}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Received 21 spans in 1 requests (1 rejected)" in out
    assert "rejected a request" in err and "resourceSpans" in err
    runs = subprocess.run([sys.executable, "-m", "agenteval", "runs"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert runs.returncode == 0 and runs.stdout.count("traces") >= 2, runs.stdout + runs.stderr


def test_collect_refuses_a_reference_based_criterion_for_unmatched_conversations(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text(json.dumps({"criteria": {"response_match_score": 0.8}}))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "agenteval", "collect", "--port", "0", "--no_grpc",
                           "--config_file_path", "bad.json"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and time.monotonic() - started < 120
    assert "bad.json" in done.stderr and "response_match_score need expected turns" in done.stderr


def test_collect_on_an_address_that_is_no_host_names_host(tmp_path: Path) -> None:
    (tmp_path / "free.json").write_text(json.dumps(FREE))
    done = subprocess.run([sys.executable, "-m", "agenteval", "collect", "--host", "999.1.1.1", "--port", "0",
                           "--no_grpc", "--config_file_path", "free.json"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "error: --host: cannot listen on 999.1.1.1:0" in done.stderr, done.stderr


def _export_of_trace(path: Path, trace_prefix: str) -> bytes:
    """`path`'s OTLP/JSON export with only the spans of the trace whose id starts so."""
    document = json.loads(path.read_text())
    for rs in document["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            ss["spans"] = [s for s in ss["spans"] if s["traceId"].startswith(trace_prefix)]
    return json.dumps(document).encode()


def _collect_until_stopped(cwd: Path, quiet: str, body: bytes, wait_for_line: bool) -> tuple[str, str]:
    """Runs `collect` in `cwd`, posts `body`, (waits for one verdict line,) stops it with Ctrl-C."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "collect", "--port", "0", "--no_grpc", "--quiet_seconds", quiet,
         "--eval_set", str(TRACES / "expected.evalset.json"), "--config_file_path", "free.json"],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default)
    try:
        assert proc.stdout is not None
        lines = []
        banner = r"http://127\.0\.0\.1:(\d+)/v1/traces"
        while not (found := re.search(banner, line := proc.stdout.readline())):
            assert line, proc.stderr.read() if proc.stderr else ""
            lines.append(line)
        reply = httpx.post(f"http://127.0.0.1:{found.group(1)}/v1/traces", content=body,
                           headers={"Content-Type": "application/json"}, timeout=30)
        assert reply.status_code == 200
        if wait_for_line:
            lines.append(proc.stdout.readline())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    return "".join(lines) + out, err


def test_collect_restarted_mid_conversation_scores_it_once_whole(tmp_path: Path) -> None:
    # a session of two turns (one trace each); collect restarted between them, within the quiet period
    (tmp_path / "free.json").write_text(json.dumps(FREE))
    first = _export_of_trace(TRACES / "langgraph.otlp.json", "cc7e9f")
    out, _ = _collect_until_stopped(tmp_path, "60", first, wait_for_line=False)
    assert "turn(s)" not in out, out  # not scored as a conversation of one turn
    assert "Kept 1 conversation(s) still open (7 spans)" in out, out
    second = _export_of_trace(TRACES / "langgraph.otlp.json", "570c16")
    out, _ = _collect_until_stopped(tmp_path, "3", second, wait_for_line=True)
    assert "Going on with 1 conversation(s) (7 spans)" in out, out
    assert "passed traces/weather-paris-rome: 2 turn(s)" in out, out
    assert "Kept" not in out  # (the held file names only the traces scored, whose late spans are dropped)
    # a held file that is not one: exit 2 naming it, before anything listens
    (tmp_path / ".agenteval" / "collect.held.json").write_text("{")
    done = subprocess.run([sys.executable, "-m", "agenteval", "collect", "--port", "0", "--no_grpc",
                           "--config_file_path", "free.json"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "collect.held.json" in done.stderr and "malformed JSON" in done.stderr
