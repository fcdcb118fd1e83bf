"""Page load and first render of the web UI on a large run and a long history (issue 27).

Builds a store of hand-made runs in a temporary AGENTS_DIR (agent `shop`): one eval set of
`--cases` cases (1,000 by default, one tool call and an answer each) recorded `--history` times
(200 by default, every 10th case's answer and call changed in each run, so the matrix and
failure groups have work), serves it with the real server under uvicorn, and times in headless
Chromium (Playwright, Debian's chromium) from navigation to the first view rendered:

* the run page of the newest run (`#/runs/<id>`: header, charts, first 100 case rows);
* the explore page of it (`#/runs/<id>/explore`: failure groups, flaky cases across the history,
  the first 500 search hits with their review controls);
* the run matrix of the newest two runs (`#/matrix`, up to 500 rows);
* the run history (`#/runs`: trend charts over every run, the first 50 rows).

Each page is loaded `--repeat` times (the first one cold: the server reads the document); the
median and the cold time are printed and written to bench/out/web/summary.json.

Usage:
    python bench/bench_web.py [--cases 1000] [--history 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import call  # noqa: E402
from tests.result_builders import case, result  # noqa: E402
from tests.web.browser_support import chromium, find_chromium, serve, write_agents  # noqa: E402

from agenteval.store import record_run  # noqa: E402

T = "tool_trajectory_avg_score"


def build(agents: Path, cases: int, history: int) -> list[str]:
    """Records `history` runs of `cases` cases into agent `shop`; the run ids, oldest first."""
    ids = []
    for r in range(history):
        docs = []
        for i in range(cases):
            want = [call("lookup", q=f"q{i}")]
            changed = (i + r) % 10 == 0
            got = [call("lookup", q=f"q{i}x" if changed else f"q{i}")]
            docs.append(case(f"case_{i:04d}", {T: 0.0 if changed else 1.0}, calls=got, expected_calls=want,
                             response=f"answer {i} run {r if changed else 0}", duration=0.5 + (i % 7) / 10,
                             tokens=100 + i % 50))
        run_id = f"big_{r:03d}"
        record_run(agents / "shop", [result(docs, run_id, "big", created=1_700_000_000.0 + r)])
        ids.append(run_id)
    return ids


def timed(page: Any, url: str, selector: str) -> float:
    """Seconds from navigation to `selector` being visible (a fresh document each time)."""
    page.goto("about:blank")
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(selector, timeout=120_000)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--history", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    executable = find_chromium()
    if executable is None:
        print("no Chromium found", file=sys.stderr)
        return 2
    from agenteval.web.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        agents = write_agents(Path(tmp) / "agents")
        t0 = time.perf_counter()
        ids = build(agents, args.cases, args.history)
        print(f"recorded {args.history} runs of {args.cases} cases in {time.perf_counter() - t0:.1f} s")
        newest, previous = ids[-1], ids[-2] if len(ids) > 1 else ids[-1]
        pages = {
            "run": (f"/#/runs/{newest}", "table.cases tbody tr"),
            "explore": (f"/#/runs/{newest}/explore", ".search tbody tr"),
            "matrix": (f"/#/matrix?runs={previous},{newest}", "table.matrix tbody tr"),
            "history": ("/#/runs", "table tbody tr"),
        }
        out: dict[str, Any] = {"cases": args.cases, "history": args.history, "pages": {}}
        with serve(create_app(agents)) as url, chromium(executable) as browser:
            page = browser.new_context(viewport={"width": 1400, "height": 860}).new_page()
            for name, (path, selector) in pages.items():
                times = [timed(page, url + path, selector) for _ in range(args.repeat)]
                warm = times[1:] or times
                out["pages"][name] = {"cold_s": round(times[0], 3),
                                      "median_warm_s": round(statistics.median(warm), 3),
                                      "rows": page.locator(selector).count()}
                print(f"{name:8} cold {times[0]:.2f} s, warm median {statistics.median(warm):.2f} s "
                      f"({out['pages'][name]['rows']} rows rendered)")
    folder = ROOT / "bench" / "out" / "web"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
