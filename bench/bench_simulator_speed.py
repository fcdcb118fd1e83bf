"""What a user-simulator turn costs on the embedded model: prompt version 1 against 2.

    python bench/bench_simulator_speed.py [--conversations 3] [--turns 4]

Version 1 (`user-sim-1`) sent one user message: the plan, the persona, the conversation so far,
then the instructions. Version 2 (the default now) sends the instructions, plan and persona as a
system message and the conversation with a short closing line as the user message, so each turn
begins with the last turn's prompt up to the end of its conversation. Version 1 is reproduced
exactly as `custom_instructions` holding its template (custom instructions are sent as one user
message).

Both versions play the same scripted conversations in one process, interleaved turn by turn (A
B A B, so both see the same load): each turn the simulator is asked for the next user message
with the same transcript (the scripted user and agent lines, not the generated ones, so both
versions are asked about identical conversations), and every llama.cpp call is timed from its
reply's own `timings` (prompt tokens evaluated and reused, tokens generated). A tag opens each
version's system/first message so neither reuses the other's evaluated prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

from agenteval.models import LocalModel
from agenteval.schema import ConversationScenario
from agenteval.simulation import LlmBackedUserSimulatorConfig, LlmUserSimulator

VERSION_1 = """You are role-playing a human user talking to an AI agent. Stay in character.
Your plan for this conversation:
{plan}
{persona}
Conversation so far:
{history}

Write the user's next message only, in plain text, one or two sentences. Advance the plan: answer
the agent's questions, give the next request, or correct the agent if it got something wrong.
If every step of the plan is done, or the agent has failed twice, write exactly {stop_signal}
and nothing else."""

CONVERSATIONS = [
    ("Ask the agent to roll a 6-sided die. When it tells you the result, ask whether that number "
     "is prime. Once it has answered, say thanks and end the conversation.", "NOVICE",
     [("user", "Roll a 6-sided die for me."), ("agent", "I rolled the die: you got a 4."),
      ("user", "Is 4 a prime number?"), ("agent", "No, 4 is not prime: it is 2 times 2."),
      ("user", "Thanks! Can you roll it once more?"), ("agent", "Sure, this time it is a 5."),
      ("user", "Is 5 prime?"), ("agent", "Yes, 5 is prime.")]),
    ("Book a table for two at an Italian restaurant tomorrow at 7 pm, then ask for the address.",
     "EXPERT",
     [("user", "I need a table for two tomorrow, Italian, around 7 pm."),
      ("agent", "I found Trattoria Roma with a table at 7:00 pm. Shall I book it?"),
      ("user", "Yes, book it under the name Lee."),
      ("agent", "Booked: Trattoria Roma, tomorrow 7:00 pm, two people, name Lee."),
      ("user", "What is the address?"), ("agent", "It is at 12 Via Verdi, near the station."),
      ("user", "Great, is there parking?"), ("agent", "There is a public car park next door.")]),
    ("Ask for the weather in Paris tomorrow, then whether to take an umbrella.", None,
     [("user", "What's the weather in Paris tomorrow?"),
      ("agent", "Tomorrow in Paris: 14 degrees, showers in the afternoon."),
      ("user", "Should I take an umbrella?"), ("agent", "Yes, showers are likely after 2 pm."),
      ("user", "And the day after?"), ("agent", "Dry and sunny, 17 degrees."),
      ("user", "Thanks."), ("agent", "You're welcome!")]),
]

_CALLS: list[dict[str, Any]] = []


def _instrument() -> None:
    original = LocalModel._call

    def timed(engine: Any, body: dict[str, Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        start = time.perf_counter()
        reply = original(engine, body, *args, **kwargs)
        t = reply.get("timings") or {}
        _CALLS.append({"wall": time.perf_counter() - start, "processed": t.get("prompt_n", 0),
                       "reused": t.get("cache_n", 0), "generated": t.get("predicted_n", 0)})
        return reply

    LocalModel._call = staticmethod(timed)  # type: ignore[method-assign]


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--conversations", type=int, default=len(CONVERSATIONS))
    ap.add_argument("--turns", type=int, default=4, help="simulator turns per conversation")
    args = ap.parse_args()
    _instrument()
    model = LocalModel()
    tag = str(int(time.time()))
    print(f"load average {os.getloadavg()[0]:.1f}")
    rows: dict[str, list[dict[str, Any]]] = {"v1": [], "v2": []}
    for plan, persona, script in CONVERSATIONS[:args.conversations]:
        scenario = ConversationScenario(starting_prompt=script[0][1], conversation_plan=plan,
                                        user_persona=persona)
        simulators = {
            "v1": LlmUserSimulator(scenario, model, LlmBackedUserSimulatorConfig(
                custom_instructions=f"[{tag} v1]\n{VERSION_1}")),
            "v2": LlmUserSimulator(scenario, model, LlmBackedUserSimulatorConfig()),
        }
        simulators["v2"].scenario = scenario.model_copy(
            update={"conversation_plan": f"[{tag} v2] {plan}"})
        for turn in range(args.turns):
            for version in (("v1", "v2") if turn % 2 == 0 else ("v2", "v1")):
                sim = simulators[version]
                sim.history = list(script[:2 * turn + 2])
                del _CALLS[:]
                start = time.perf_counter()
                await sim.next_turn(turn + 1)
                wall = time.perf_counter() - start
                calls = list(_CALLS)
                rows[version].append({"turn": turn + 1, "wall": wall,
                                      **{k: sum(c[k] for c in calls)
                                         for k in ("processed", "reused", "generated")}})
                print(f"{version} turn {turn + 1}: {wall:5.2f}s processed={rows[version][-1]['processed']} "
                      f"reused={rows[version][-1]['reused']} generated={rows[version][-1]['generated']}")
    print("\n| version | turns | s/turn median | prompt tokens evaluated / turn | reused | generated |")
    print("|---|---|---|---|---|---|")
    for version, r in rows.items():
        later = [x for x in r if x["turn"] > 1]  # the first turn of each conversation is cold for both
        print(f"| {version} (turns 2+) | {len(later)} | {statistics.median(x['wall'] for x in later):.2f} | "
              f"{statistics.median(x['processed'] for x in later):.0f} | "
              f"{statistics.median(x['reused'] for x in later):.0f} | "
              f"{statistics.median(x['generated'] for x in later):.0f} |")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
