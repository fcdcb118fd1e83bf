"""What a `score` process costs after its command has returned: the interpreter's teardown
(unloading the modules, freeing what the run left) unless the command kept its objects for the
console script's fast exit (`cli.teardown`).

    python bench/score_teardown.py EXPECTED --actual ACTUAL [score's options ...]

Runs `agenteval score` in a child process whose `teardown.exit_fast` records the process's CPU
(its own and its reaped children's: the workers) and the monotonic clock when the command is
done; this process waits for the child with `os.wait4`, whose CPU counts the same, and prints
the difference: the teardown's CPU and wall. The tree timed is the one on PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time


def child(out: str, argv: list[str]) -> None:
    from agenteval.cli import main, teardown

    ended = teardown.exit_fast

    def exit_fast(code: int) -> None:
        t = os.times()
        with open(out, "w") as f:
            json.dump({"cpu": t.user + t.system + t.children_user + t.children_system,
                       "at": time.monotonic(), "kept": len(teardown._kept)}, f)
        ended(code)

    teardown.exit_fast = exit_fast
    main.main(argv)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3:])
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "done.json")
        p = subprocess.Popen([sys.executable, __file__, "--child", out, "score", *sys.argv[1:]],
                             stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        end = time.monotonic()
        with open(out) as f:
            done = json.load(f)
    print(f"after the command: {usage.ru_utime + usage.ru_stime - done['cpu']:.3f} s CPU, "
          f"{end - done['at']:.3f} s wall (objects kept for a fast exit: {done['kept']}; "
          f"exit status {os.waitstatus_to_exitcode(status)}; load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
