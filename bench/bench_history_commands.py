"""The history commands a user waits on, over a large stored run, for two source trees.

Runs, as processes, `agenteval runs show latest`, `report latest --format markdown / junit /
html -o F`, `compare previous latest` (also with `--markdown F`) and `runs flaky`, each over
its own copy of a run history (the database copied, the result documents hard-linked: they
are only read; a newer tree may upgrade the database in place, so each tree gets its own),
tree A and tree B alternately, `--repeat` rounds. Per command and tree: wall and CPU seconds
(median) and peak RSS (`/usr/bin/time`); the reports' bytes (and `compare`'s printed output) are
compared between the trees.

The history is made by `bench_eval_memory.py` (its 50,000-case runs: six 700 MB documents).

Usage:
    python bench/bench_history_commands.py --a SRC_A --b SRC_B [--root DIR] [--repeat 1]
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
from pathlib import Path

DEFAULT_ROOT = Path(__file__).parent / "out" / "eval_memory" / "n50000" / "agent"
COMMANDS = {
    "runs show": ["runs", "show", "latest"],
    "report markdown": ["report", "latest", "--format", "markdown", "-o", "{out}/r.md"],
    "report junit": ["report", "latest", "--format", "junit", "-o", "{out}/r.xml"],
    "report html": ["report", "latest", "--format", "html", "-o", "{out}/r.html"],
    "compare": ["compare", "previous", "latest", "--fail_on", "none"],
    "compare markdown": ["compare", "previous", "latest", "--fail_on", "case_regression", "--markdown",
                         "{out}/c.md"],
    "runs flaky": ["runs", "flaky"],
}


def _copy(root: Path, into: Path) -> Path:
    """A copy of `root`'s history: the database copied, the documents hard-linked."""
    src, dst = root / ".agenteval", into / ".agenteval"
    (dst / "eval_history").mkdir(parents=True)
    shutil.copy(src / "history.sqlite", dst / "history.sqlite")
    for doc in (src / "eval_history").iterdir():
        os.link(doc, dst / "eval_history" / doc.name)
    return into


def _run(src: str, root: Path, args: list[str], out: Path) -> dict[str, float]:
    cmd = ["/usr/bin/time", "-f", "%e %U %S %M", sys.executable, "-m", "agenteval",
           *[a.format(out=out) for a in args], "--root", str(root)]
    p = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": src}, capture_output=True, text=True,
                       cwd=root)
    (out / "stdout.txt").write_text(p.stdout)
    wall, user, system, kb = p.stderr.strip().splitlines()[-1].split()
    return {"wall": float(wall), "cpu": float(user) + float(system), "rss_mib": int(kb) / 1024,
            "exit": float(p.returncode)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="source tree A (its src/)")
    ap.add_argument("--b", required=True, help="source tree B (its src/)")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", nargs="*", choices=list(COMMANDS), default=list(COMMANDS))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.root.parent) as tmp:
        trees = {t: (src, _copy(args.root, Path(tmp) / t)) for t, src in (("A", args.a), ("B", args.b))}
        rows: dict[str, dict[str, list[dict[str, float]]]] = {}
        for name in args.only:
            for _ in range(args.repeat):
                for tree, (src, root) in trees.items():
                    out = root / "reports"
                    out.mkdir(exist_ok=True)
                    got_one = _run(src, root, COMMANDS[name], out)
                    rows.setdefault(name, {}).setdefault(tree, []).append(got_one)
            got = {t: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for t, rs in rows[name].items()}
            same = ""
            if name.startswith("report") or name == "compare markdown":
                f = {"report markdown": "r.md", "report junit": "r.xml",
                     "report html": "r.html"}.get(name, "c.md")
                a, b = ((trees[t][1] / "reports" / f).read_bytes() for t in "AB")
                same = " same bytes" if a == b else " BYTES DIFFER"
            if name.startswith("compare"):
                a, b = ((trees[t][1] / "reports" / "stdout.txt").read_bytes() for t in "AB")
                same += " same output" if a == b else " OUTPUT DIFFERS"
            print(f"{name:16} " + "  ".join(
                f"{t}: {g['wall']:6.2f} s wall {g['cpu']:6.2f} s CPU {g['rss_mib']:7.0f} MiB "
                f"exit {g['exit']:.0f}"
                for t, g in got.items()) + same, flush=True)
        print(json.dumps({n: {t: rs for t, rs in v.items()} for n, v in rows.items()}))


if __name__ == "__main__":
    main()
