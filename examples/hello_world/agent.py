"""hello_world: an agent that rolls dice and checks whether numbers are prime.

The model is the embedded local model by default; `agenteval eval --agent_model M` swaps it.
"""

from __future__ import annotations

import random

from agenteval.agents import Agent, ToolContext


def roll_die(sides: int, tool_context: ToolContext) -> int:
    """Roll a die and return the rolled result.

    Args:
        sides: The number of sides of the die.
    """
    result = random.randint(1, sides)
    tool_context.state["rolls"] = [*tool_context.state.get("rolls", []), result]
    return result


def check_prime(nums: list[int]) -> str:
    """Check whether each number in a list is prime.

    Args:
        nums: The numbers to check.
    """
    def is_prime(n: int) -> bool:
        return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))

    return " ".join(f"{n} is {'prime' if is_prime(n) else 'not prime'}." for n in nums)


root_agent = Agent(
    name="hello_world_agent",
    model="local",
    instruction=(
        "You roll dice and answer questions about the outcome of the dice rolls. "
        "You can roll dice of different sizes and check whether numbers are prime. "
        "When asked to roll a die, call roll_die with the number of sides. "
        "When asked about prime numbers, call check_prime with all the numbers in one call. "
        "Never make up a roll or a prime check: always use the tools, then report the result "
        "in one short sentence."
    ),
    tools=[roll_die, check_prime],
)
