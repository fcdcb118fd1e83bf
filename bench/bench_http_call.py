"""The client's CPU per model call: `OpenAICompatModel.generate` against a zero-latency stub.

    PYTHONPATH=TREE/src python bench/bench_http_call.py [--calls 600] [--in-flight 32] [--rounds 5]

Starts `bench/stub_server.py --latency 0` (its own process), then, in this process, makes
`--calls` calls of the stub run's shape (a system and a user message, one declared tool; the
stub answers with a tool call) with `--in-flight` of them at once, `--rounds` times, after one
untimed round (connections, first-call set-up). Prints this process's CPU time per call
(`time.process_time`, so the stub's own CPU is not counted) for each round and their minimum.
For an A/B of two trees, run it under each tree's PYTHONPATH in turn, in both orders.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from agenteval.models.base import Message, ModelRequest, ToolSpec
from agenteval.models.openai_compat import OpenAICompatModel

STUB = Path(__file__).resolve().parent / "stub_server.py"
TOOL = ToolSpec("lookup", "Look up an item in the catalogue.",
                {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
REQUEST = ModelRequest(messages=(
    Message("system", "Answer the user's questions; use the lookup tool for anything about items."),
    Message("user", "What does the catalogue say about item 42?")), tools=(TOOL,))


async def round_(model: OpenAICompatModel, calls: int, in_flight: int) -> float:
    """CPU seconds of this process for `calls` calls, `in_flight` at a time."""
    todo = iter(range(calls))

    async def worker() -> None:
        for _ in todo:
            await model.generate(REQUEST)

    start = time.process_time()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return time.process_time() - start


async def main(args: argparse.Namespace, base_url: str) -> None:
    model = OpenAICompatModel(model="stub", base_url=base_url, api_key="x", max_attempts=1)
    await round_(model, args.in_flight * 2, args.in_flight)  # untimed
    per_call = [await round_(model, args.calls, args.in_flight) / args.calls for _ in range(args.rounds)]
    print(f"load {os.getloadavg()[0]:.2f}; CPU per call (µs): "
          + " ".join(f"{t * 1e6:.0f}" for t in per_call) + f"; min {min(per_call) * 1e6:.0f}")
    await model.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    stub = subprocess.Popen([sys.executable, str(STUB), "--port", "0", "--latency", "0",
                             "--timeout", "600"], stdout=subprocess.PIPE, text=True)
    try:
        assert stub.stdout is not None
        url = stub.stdout.readline().split()[-1]  # "listening on http://127.0.0.1:PORT/v1"
        asyncio.run(main(args, url))
    finally:
        stub.terminate()
        stub.wait()
