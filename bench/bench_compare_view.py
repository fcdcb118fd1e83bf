"""The web's compare view of the two newest runs of a large history (session 36): the requests
the compare page makes, in one fresh server process a tree, for two source trees.

Per request: CPU seconds (the process's, measured around it) and the response's bytes; per
process: CPU and peak RSS (`os.wait4`). The two trees' aggregate numbers (the per-case counts
and regression flag, the paired decision, measures and counts) are printed and compared; the
case lists are not (session 36 pages them).

`--requests` names the requests: `whole` (what the page asked before session 36: every case of
both comparisons) or `paged` (what it asks since: the changed cases' first page, the paired
view of those cases, the next page of unchanged cases and their paired view).

The history is made by `bench_eval_memory.py --cases 50000`; it is copied first (database
copied, documents hard-linked: `bench_case_page.copy_history`).

Usage:
    python bench/bench_compare_view.py --a SRC_A --requests-a whole --b SRC_B --requests-b paged
        [--root DIR] [--into DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_case_page import DEFAULT_ROOT, copy_history

_CHILD = r"""
import json, sys, time
from pathlib import Path
from fastapi.testclient import TestClient
from agenteval.store import RunStore
from agenteval.web.app import create_app
agents, app, kind = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
runs = RunStore(agents / app).list_runs()
a, b = runs[1].run_id, runs[0].run_id
client = TestClient(create_app(agents), base_url="http://127.0.0.1")
out = []
def get(url):
    t = time.process_time()
    r = client.get(url)
    assert r.status_code == 200, r.text[:500]
    out.append({"url": url.replace(a, "A").replace(b, "B"), "cpu": time.process_time() - t,
                "bytes": len(r.content)})
    return r.json()
base = f"a={a}&b={b}"
if kind == "whole":
    c = get(f"/api/compare?{base}&margin=0")
    p = get(f"/api/compare/paired?{base}")
else:
    c = get(f"/api/compare?{base}&margin=0&show=changed&limit=100")
    ids = "".join(f"&eval_id={x['eval_id']}" for x in c["cases"])
    p = get(f"/api/compare/paired?{base}&limit={len(c['cases'])}{ids}")  # (as the page asks)
    more = get(f"/api/compare?{base}&margin=0&show=unchanged&offset=100&limit=100")
    ids = "".join(f"&eval_id={x['eval_id']}" for x in more["cases"])
    get(f"/api/compare/paired?{base}&limit={len(more['cases'])}{ids}")
agg = {"counts": c["counts"], "has_regressions": c["has_regressions"], "decision": p["decision"],
       "gate_failed": p["gate_failed"], "measures": p["measures"], "paired_counts": p["counts"]}
print(json.dumps({"requests": out, "aggregate": agg}))
"""


def _run(src: Path, agent: Path, kind: str) -> tuple[float, float, dict[str, object]]:
    env = dict(os.environ, PYTHONPATH=str(src))
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        p = subprocess.Popen([sys.executable, "-c", _CHILD, str(agent.parent), agent.name, kind], env=env,
                             stdout=so, stderr=se)
        _, status, use = os.wait4(p.pid, 0)
        so.seek(0)
        se.seek(0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{kind} failed: {se.read().decode()[-2000:]}")
        got: dict[str, object] = json.loads(so.read())
    return use.ru_utime + use.ru_stime, use.ru_maxrss / 1024, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, type=Path, help="source tree A (its src/)")
    ap.add_argument("--b", type=Path, help="source tree B (its src/; none: A alone)")
    ap.add_argument("--requests-a", default="whole", choices=("whole", "paged"))
    ap.add_argument("--requests-b", default="paged", choices=("whole", "paged"))
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--into", type=Path, default=None, help="where the copies go (default: beside --root)")
    a = ap.parse_args()
    aggregates = {}
    with tempfile.TemporaryDirectory(dir=a.into or a.root.parent) as tmp:
        for tree, src, kind in (("A", a.a, a.requests_a), ("B", a.b, a.requests_b))[:2 if a.b else 1]:
            agent = copy_history(a.root, Path(tmp) / tree)
            t = time.monotonic()
            cpu, rss, got = _run(src, agent, kind)
            wall = time.monotonic() - t
            print(f"tree {tree} ({kind}): CPU {cpu:.2f} s, peak {rss:.0f} MiB, wall {wall:.1f} s, "
                  f"load {os.getloadavg()[0]:.1f}")
            for r in got["requests"]:  # type: ignore[attr-defined]
                print(f"  {r['url'][:90]:<90} CPU {r['cpu']:7.2f} s  {r['bytes']:>12,} bytes")
            aggregates[tree] = got["aggregate"]
            shutil.rmtree(agent.parent)
    same = aggregates["A"] == aggregates.get("B", aggregates["A"])
    print(f"aggregates {'identical' if same else 'DIFFER'}: {json.dumps(aggregates['A'])[:400]}")
    if not same:
        print(json.dumps(aggregates["B"])[:400])
        raise SystemExit(1)


if __name__ == "__main__":
    main()
