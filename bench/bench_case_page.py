"""One case of a large stored run, as a user opens it: the web's case page and a page of the
run's case list, and `agenteval trace RUN CASE`, for two source trees.

Each tree gets its own copy of the run history (the database copied, the result documents
hard-linked: they are only read; a tree may write its case index into its database). Per tree,
in a fresh process each: the web app (`create_app`, in process through its test client) asked
for the last case of the newest run (first view), then another case (second view), then the
list's last page of 100, then `trace latest CASE` as a process; in another web process, the
run's search (twice) and its failure groups; and on a fresh copy, `trace` first. Wall and CPU seconds and peak
RSS (`os.wait4`). The pages' JSON is compared between the trees.

The history is made by `bench_eval_memory.py --cases 50000` (one 700 MB document a run).

Usage:
    python bench/bench_case_page.py --a SRC_A --b SRC_B [--root DIR] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_ROOT = Path(__file__).parent / "out" / "eval_memory" / "n50000" / "agent"

_WEB = r"""
import json, sqlite3, sys, time
from pathlib import Path
from fastapi.testclient import TestClient
from agenteval.store import RunStore
from agenteval.web.app import create_app
agents, app = Path(sys.argv[1]), sys.argv[2]
run = RunStore(agents / app).list_runs()[0]
with sqlite3.connect(RunStore(agents / app).path) as db:  # (the ids alone: not the summaries' models)
    cases = [r[0] for r in db.execute("SELECT eval_id FROM cases WHERE run_id = ? ORDER BY position",
                                      (run.run_id,))]
last, other = cases[-1], cases[len(cases) // 2]
client = TestClient(create_app(agents), base_url="http://127.0.0.1")
out = {}
asks = ((("first case", f"/api/runs/{run.run_id}/cases/{last}"),
         ("second case", f"/api/runs/{run.run_id}/cases/{other}"),
         ("last list page", f"/api/runs/{run.run_id}/cases?offset={len(cases) - 100}&limit=100"))
        if sys.argv[3] == "cases" else
        (("first search", f"/api/runs/{run.run_id}/search?text={last}"),
         ("second search", f"/api/runs/{run.run_id}/search?text={other}"),
         ("failure groups", f"/api/runs/{run.run_id}/groups")))
for name, url in asks:
    t, c = time.monotonic(), time.process_time()
    r = client.get(url)
    assert r.status_code == 200, r.text[:500]
    out[name] = {"wall": time.monotonic() - t, "cpu": time.process_time() - c, "body": r.json()}
print(json.dumps(out))
"""


def _child(args: list[str], src: Path) -> tuple[float, float, float, str]:
    """(wall, CPU, peak RSS MiB, stdout) of one process with `src` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(src), COLUMNS="120")
    t = time.monotonic()
    p = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read() if p.stdout else b""
    _, status, use = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{args[:4]} failed: {p.stderr.read().decode()[-2000:] if p.stderr else ''}")
    return wall, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024, out.decode()


def copy_history(root: Path, into: Path) -> Path:
    """The history at `root` (an agent folder) copied into `into`/agent: database copied,
    documents hard-linked."""
    agent = into / root.name
    store = root / ".agenteval"
    (agent / ".agenteval" / "eval_history").mkdir(parents=True)
    if (root / "__init__.py").exists():
        shutil.copy(root / "__init__.py", agent / "__init__.py")
    for name in ("history.sqlite", "history.sqlite-wal"):
        if (store / name).exists():
            shutil.copy(store / name, agent / ".agenteval" / name)
    for doc in (store / "eval_history").iterdir():
        os.link(doc, agent / ".agenteval" / "eval_history" / doc.name)
    return agent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, type=Path, help="source tree A (its src/)")
    ap.add_argument("--b", required=True, type=Path, help="source tree B (its src/)")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    times: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    bodies: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(dir=a.root.parent) as tmp:
        for _ in range(a.repeat):
            for tree, src in (("A", a.a), ("B", a.b)):
                agent = copy_history(a.root, Path(tmp) / f"{tree}{len(times)}")
                got = {}
                for what in ("cases", "search"):
                    wall, cpu, rss, out = _child([sys.executable, "-c", _WEB, str(agent.parent), agent.name,
                                                  what], src)
                    for name, v in json.loads(out).items():
                        times.setdefault((tree, f"web {name}"), []).append((v["wall"], v["cpu"], rss))
                        got[name] = v
                    times.setdefault((tree, f"web process ({what})"), []).append((wall, cpu, rss))
                bodies[tree] = {k: v["body"] for k, v in got.items()}
                case = got["first case"]["body"]["eval_id"]
                trace = [sys.executable, "-m", "agenteval", "trace", "latest", case, "--root"]
                after_web = _child([*trace, str(agent)], src)[:3]
                times.setdefault((tree, "trace, after the web"), []).append(after_web)
                shutil.rmtree(agent.parent)
                agent = copy_history(a.root, Path(tmp) / f"{tree}{len(times)}")
                first = _child([*trace, str(agent)], src)[:3]
                times.setdefault((tree, "trace, first reader"), []).append(first)
                shutil.rmtree(agent.parent)
    print(f"load {os.getloadavg()[0]:.1f}; {a.repeat} round(s); medians")
    print(f"{'what':<22} {'tree':<4} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9}")
    for (tree, name), runs in sorted(times.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"{name:<22} {tree:<4} {statistics.median(r[0] for r in runs):>8.2f} "
              f"{statistics.median(r[1] for r in runs):>8.2f} {max(r[2] for r in runs):>9.0f}")
    same = bodies.get("A") == bodies.get("B")
    print("pages' JSON identical between the trees:", same)
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
