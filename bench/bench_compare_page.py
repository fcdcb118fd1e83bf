"""The web's compare page of the two newest runs of a large history (session 36), in headless
Chromium, for one source tree: `agenteval web` served from a copy of the history (database
copied, documents hard-linked), the page opened at #/compare/A/B and waited for until it shows
its counts and its case list.

Printed: wall seconds until the page is painted (noise under load), the bytes of the API's
responses, the page's JavaScript heap (used, after painting), the rows in its table, and the
server's CPU seconds and peak RSS (`os.wait4` once it is stopped).

Usage:
    python bench/bench_compare_page.py --src SRC [--root DIR] [--into DIR] [--chromium PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_case_page import DEFAULT_ROOT, copy_history


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True, type=Path, help="the source tree (its src/)")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--into", type=Path, default=None, help="where the copy goes (default: beside --root)")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(dir=a.into or a.root.parent) as tmp:
        agent = copy_history(a.root, Path(tmp))
        sys.path.insert(0, str(a.src))
        from agenteval.store import RunStore

        runs = RunStore(agent).list_runs()
        run_a, run_b = runs[1].run_id, runs[0].run_id
        port = _port()
        command = [sys.executable, "-m", "agenteval", "web", str(agent.parent), "--port", str(port)]
        server = subprocess.Popen(command, env=dict(os.environ, PYTHONPATH=str(a.src)),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                urllib.request.urlopen(url + "/api/runs?limit=1", timeout=5)
                break
            except OSError:
                time.sleep(0.1)
        api_bytes = 0
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=a.chromium, headless=True,
                                        args=["--no-sandbox", "--disable-dev-shm-usage"])
            page = browser.new_page(viewport={"width": 1400, "height": 860})
            page.set_default_timeout(900_000)
            sizes: list[int] = []
            page.on("response", lambda r: sizes.append(int(r.headers.get("content-length", 0)))
                    if "/api/" in r.url else None)
            t = time.monotonic()
            page.goto(f"{url}/#/compare/{run_a}/{run_b}")
            page.wait_for_selector(".compare .counts")
            page.wait_for_selector(".compare table.cmp:not(.measures)")
            wall = time.monotonic() - t
            rows = page.locator(".compare table.cmp:not(.measures) tbody tr").count()
            cdp = page.context.new_cdp_session(page)
            cdp.send("HeapProfiler.collectGarbage")
            cdp.send("Performance.enable")
            metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            api_bytes = sum(sizes)
            browser.close()
        server.send_signal(signal.SIGINT)
        _, _, use = os.wait4(server.pid, 0)
        print(f"page painted in {wall:.1f} s wall; {len(sizes)} API responses, {api_bytes:,} bytes; "
              f"JS heap used {metrics.get('JSHeapUsedSize', 0) / 2**20:.1f} MiB; {rows} rows; "
              f"server CPU {use.ru_utime + use.ru_stime:.2f} s, peak {use.ru_maxrss / 1024:.0f} MiB; "
              f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
