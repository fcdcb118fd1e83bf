"""How soon a chat reply shows on the embedded model when it is streamed, and how soon Stop frees
the engine: time to the first piece of text against the whole reply, and from cancelling a
streamed call to its slot idle (llama.cpp's /slots). One warm-up call first (model load, prompt
cache); then `--rounds` rounds of: the reply unstreamed, the same reply streamed, a long reply
streamed and cancelled after its second piece. Prints one JSON line per round and a summary.

    python bench/bench_chat_stream.py --rounds 3 --tokens 40
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import anyio
import httpx

from agenteval.models import LocalModel, Message, ModelRequest
from agenteval.models.base import generate_streaming


async def busy(model: LocalModel) -> int:
    base, key = await model.http_endpoint()
    async with httpx.AsyncClient() as client:
        r = await client.get(base.removesuffix("/v1") + "/slots", headers={"Authorization": f"Bearer {key}"})
    return sum(1 for s in r.json() if s.get("is_processing"))


async def round_(model: LocalModel, tokens: int) -> dict[str, float]:
    request = ModelRequest(messages=(Message("user", "Tell me about the history of the bicycle."),),
                           max_tokens=tokens)
    start = time.perf_counter()
    await model.generate(request)
    whole = time.perf_counter() - start
    first: list[float] = []
    start = time.perf_counter()
    await generate_streaming(model, request, lambda _: first.append(time.perf_counter() - start))
    streamed = time.perf_counter() - start
    long = ModelRequest(messages=request.messages, max_tokens=2000)
    pieces = 0
    with anyio.CancelScope() as scope:
        def heard(_: str) -> None:
            nonlocal pieces
            pieces += 1
            if pieces == 2:
                scope.cancel()
        await generate_streaming(model, long, heard)
    cancelled = time.perf_counter()
    while await busy(model):
        await anyio.sleep(0.05)
    return {"whole_s": round(whole, 2), "first_piece_s": round(first[0], 2),
            "streamed_whole_s": round(streamed, 2), "pieces": len(first),
            "cancel_to_idle_s": round(time.perf_counter() - cancelled, 2)}


async def main(rounds: int, tokens: int) -> None:
    model = LocalModel()
    await model.generate(ModelRequest(messages=(Message("user", "Hi"),), max_tokens=2))  # load
    rows = []
    for _ in range(rounds):
        rows.append(await round_(model, tokens))
        print(json.dumps(rows[-1]), flush=True)
    summary = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(json.dumps({"median": summary, "rounds": rounds, "max_tokens": tokens}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=40)
    args = parser.parse_args()
    anyio.run(main, args.rounds, args.tokens)
