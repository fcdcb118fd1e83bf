"""The web's first `/api/compare` of two stored runs (session 37): in one history, or in two
agents' histories (`Stores.of_two`), for two source trees.

Each tree in a fresh process over the same agents folder (only read: make a copy first, a newer
tree may upgrade the databases in place): the request's CPU seconds (measured around it), the
process's CPU and peak RSS (`os.wait4`), and the response body's SHA-256, compared between the
trees (the counts, the regression flag and the first page of changed cases, byte for byte).

Usage:
    python bench/bench_compare_first.py --a SRC_A --b SRC_B --agents DIR --run-a ID --run-b ID
        [--margin 0] [--show changed] [--limit 100]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import hashlib, json, sys, time
from pathlib import Path
from fastapi.testclient import TestClient
from agenteval.web.app import create_app
agents, query = Path(sys.argv[1]), sys.argv[2]
client = TestClient(create_app(agents), base_url="http://127.0.0.1")
t = time.process_time()
r = client.get(f"/api/compare?{query}")
cpu = time.process_time() - t
assert r.status_code == 200, r.text[:500]
body = r.json()
print(json.dumps({"cpu": cpu, "bytes": len(r.content), "sha256": hashlib.sha256(r.content).hexdigest(),
                  "counts": body["counts"], "has_regressions": body["has_regressions"]}))
"""


def _run(src: Path, agents: Path, query: str) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(src))
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        p = subprocess.Popen([sys.executable, "-c", _CHILD, str(agents), query], env=env, stdout=so,
                             stderr=se)
        _, status, use = os.wait4(p.pid, 0)
        so.seek(0)
        se.seek(0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{src} failed: {se.read().decode()[-2000:]}")
        got: dict[str, object] = json.loads(so.read())
    return {**got, "process_cpu": use.ru_utime + use.ru_stime, "peak_mib": use.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, type=Path, help="source tree A (its src/)")
    ap.add_argument("--b", required=True, type=Path, help="source tree B (its src/)")
    ap.add_argument("--agents", required=True, type=Path, help="the agents folder the web serves")
    ap.add_argument("--run-a", required=True, help="the baseline run's id")
    ap.add_argument("--run-b", required=True, help="the candidate run's id")
    ap.add_argument("--margin", type=float, default=0.0)
    ap.add_argument("--show", default="changed")
    ap.add_argument("--limit", type=int, default=100)
    args = ap.parse_args()
    query = f"a={args.run_a}&b={args.run_b}&margin={args.margin}&show={args.show}&limit={args.limit}"
    got = {}
    for tree, src in (("A", args.a), ("B", args.b)):
        got[tree] = _run(src, args.agents, query)
        g = got[tree]
        print(f"tree {tree}: request CPU {g['cpu']:.2f} s, process CPU {g['process_cpu']:.2f} s, "
              f"peak {g['peak_mib']:.0f} MiB, {g['bytes']:,} bytes, load {os.getloadavg()[0]:.1f}",
              flush=True)
    same = got["A"]["sha256"] == got["B"]["sha256"]
    print(f"bodies {'identical' if same else 'DIFFER'}: {json.dumps(got['B']['counts'])}")


if __name__ == "__main__":
    main()
