"""What still read a large stored run whole (session 35): the web's run matrix of the two
newest runs, `compare previous latest --fail_on case_regression --markdown F` (and of the two result files),
`report latest --format junit` to standard output, `trace latest` (every case) and the web's
HTML export of a run, for two source trees.

Each tree gets its own copy of the run history (the database copied, the result documents
hard-linked: only read; a tree may write its case index into its copy). Per tree and view, one
fresh process: CPU seconds and peak RSS (`os.wait4`), wall for reference. The outputs (the
matrix pages' JSON, the commands' standard output and files) are compared between the trees.

The history is made by `bench_eval_memory.py --cases 50000` (one 700 MB document a run).

Usage:
    python bench/bench_large_views.py --a SRC_A --b SRC_B [--root DIR] [--only matrix,compare,...]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_case_page import DEFAULT_ROOT, copy_history

# The matrix of the two newest runs: its first page, then (same process) its last page and the
# changed-only view; each page's JSON is printed.
_MATRIX = r"""
import json, sys
from pathlib import Path
from fastapi.testclient import TestClient
from agenteval.store import RunStore
from agenteval.web.app import create_app
agents, app = Path(sys.argv[1]), sys.argv[2]
runs = RunStore(agents / app).list_runs()
ids = "&".join(f"runs={r.run_id}" for r in reversed(runs[:2]))
client = TestClient(create_app(agents), base_url="http://127.0.0.1")
for q in ("", "&offset=49900&limit=100", "&changed_only=true", "&eval_id=c7&eval_id=c49999"):
    r = client.get(f"/api/matrix?{ids}{q}")
    assert r.status_code == 200, r.text[:500]
    print(json.dumps(r.json(), sort_keys=True))
"""

# The web's HTML export of the newest run (its bytes printed).
_EXPORT = r"""
import sys
from pathlib import Path
from fastapi.testclient import TestClient
from agenteval.store import RunStore
from agenteval.web.app import create_app
agents, app = Path(sys.argv[1]), sys.argv[2]
run = RunStore(agents / app).list_runs()[0]
r = TestClient(create_app(agents), base_url="http://127.0.0.1").get(f"/api/runs/{run.run_id}/export")
assert r.status_code == 200, r.text[:500]
sys.stdout.buffer.write(r.content)
"""

VIEWS = {
    "matrix": lambda agent, out: [sys.executable, "-c", _MATRIX, str(agent.parent), agent.name],
    "compare": lambda agent, out: [sys.executable, "-m", "agenteval", "compare", "previous", "latest",
                                   "--fail_on", "case_regression", "--markdown", str(out / "c.md"),
                                   "--root", str(agent)],
    "compare files": lambda agent, out: [
        sys.executable, "-m", "agenteval", "compare",
        *sorted(map(str, (agent / ".agenteval" / "eval_history").iterdir())),
        "--fail_on", "case_regression", "--markdown", str(out / "c.md")],
    "junit": lambda agent, out: [sys.executable, "-m", "agenteval", "report", "latest", "--format", "junit",
                                 "--root", str(agent)],
    "trace": lambda agent, out: [sys.executable, "-m", "agenteval", "trace", "latest", "--root", str(agent)],
    "export": lambda agent, out: [sys.executable, "-c", _EXPORT, str(agent.parent), agent.name],
}


def _child(args: list[str], src: Path, out: Path) -> tuple[float, float, float, int, str]:
    """(wall, CPU, peak RSS MiB, exit code, digest of stdout and files written) of one process."""
    env = dict(os.environ, PYTHONPATH=str(src), COLUMNS="120")
    t = time.monotonic()
    with open(out / "stdout", "wb") as so:
        p = subprocess.Popen(args, env=env, stdout=so, stderr=subprocess.PIPE)
        err = p.stderr.read() if p.stderr else b""
        _, status, use = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{args[:6]} exited {code}: {err.decode()[-2000:]}")
    digest = hashlib.sha256()
    for f in sorted(out.iterdir()):
        digest.update(f.name.encode() + f.read_bytes())
        f.unlink()
    return wall, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024, code, digest.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, type=Path, help="source tree A (its src/)")
    ap.add_argument("--b", required=True, type=Path, help="source tree B (its src/)")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--only", default=",".join(VIEWS), help="views, comma-separated")
    ap.add_argument("--index-first", action="store_true",
                    help="make each copy's case indexes first (as a case page would), not timed")
    a = ap.parse_args()
    digests: dict[str, dict[str, str]] = {}
    print(f"{'view':<8} {'tree':<4} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9} exit  load")
    with tempfile.TemporaryDirectory(dir=a.root.parent) as tmp:
        for view in a.only.split(","):
            for tree, src in (("A", a.a), ("B", a.b)):
                agent = copy_history(a.root, Path(tmp) / f"{tree}-{view.replace(' ', '-')}")
                out = Path(tmp) / f"out-{tree}-{view.replace(' ', '-')}"
                out.mkdir()
                if a.index_first:
                    subprocess.run([sys.executable, "-c", _INDEX, str(agent)], check=True,
                                   env=dict(os.environ, PYTHONPATH=str(src)))
                wall, cpu, rss, code, digest = _child(VIEWS[view](agent, out), src, out)
                digests.setdefault(view, {})[tree] = digest
                print(f"{view:<8} {tree:<4} {wall:>8.2f} {cpu:>8.2f} {rss:>9.0f} {code:>4}  "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
                shutil.rmtree(agent.parent)
    for view, got in digests.items():
        print(f"{view}: outputs {'identical' if got['A'] == got['B'] else 'DIFFER'} ({got})")
    if any(got["A"] != got["B"] for got in digests.values()):
        raise SystemExit(1)


_INDEX = r"""
import sys
from agenteval.store import RunStore
from agenteval.store.case_index import case_index
store = RunStore(sys.argv[1])
for row in store.list_runs():
    case_index(row.result_path, store.path, row.run_id)
"""

if __name__ == "__main__":
    main()
