"""How long a worker's chunk (6.8 MB, as a sharded `score` sends 250 cases) takes to reach the
parent's reader thread while the parent's main thread runs pure Python for 100 ms (holding the
GIL but for its switches, as rendering the report's table does), against an idle main thread;
with the default switch interval and pipe size, and with a 1 ms interval and a 1 MB pipe.

    python bench/bench_gil_pipe.py [--rounds 2]

The reader takes the GIL back after each pipe read (64 KB by default): a busy main thread lets
it at every switch interval only, so the sending worker waits.
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing
import os
import sys
import threading
import time
from multiprocessing.connection import Connection

PAYLOAD = os.urandom(6_800_000)


def _child(go: Connection, out: Connection) -> None:
    go.recv()
    out.send_bytes(PAYLOAD)


def _trial(interval: float, pipe: int, busy: float) -> float:
    """Seconds from the go to the whole chunk received, the main thread busy for `busy` s."""
    sys.setswitchinterval(interval)
    r, w = multiprocessing.Pipe(duplex=False)
    go_r, go_w = multiprocessing.Pipe(duplex=False)
    if pipe:
        fcntl.fcntl(r.fileno(), fcntl.F_SETPIPE_SZ, pipe)
    p = multiprocessing.get_context("fork").Process(target=_child, args=(go_r, w))
    p.start()
    done: list[float] = []
    reader = threading.Thread(target=lambda: (r.recv_bytes(), done.append(time.monotonic())))
    reader.start()
    t0 = time.monotonic()
    go_w.send(1)
    x = 0
    while time.monotonic() - t0 < busy:
        x += 1
    reader.join()
    p.join()
    sys.setswitchinterval(0.005)
    return done[0] - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    for _ in range(args.rounds):
        for interval, pipe, busy in ((0.005, 0, 0.0), (0.005, 0, 0.1), (0.005, 1 << 20, 0.1),
                                     (0.001, 0, 0.1), (0.001, 1 << 20, 0.1)):
            took = _trial(interval, pipe, busy)
            print(f"main thread busy {busy * 1000:3.0f} ms, switch {interval * 1000:.0f} ms, pipe "
                  f"{pipe or 65536:>8}: chunk received after {took * 1000:6.1f} ms "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
