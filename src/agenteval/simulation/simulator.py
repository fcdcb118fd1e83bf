"""The LLM-backed user simulator: plays the user of a `conversation_scenario`.

Turn 1 is the scenario's starting prompt, verbatim. Each later turn is written by a model that
sees the conversation plan, the persona if any, and the conversation so far, and either writes
the user's next message or the stop signal when the plan is done (or the agent keeps failing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agenteval.models.base import LLM, Message, ModelError, ModelRequest
from agenteval.schema import ConversationScenario, InvocationEvent
from agenteval.schema.config import names_persona, persona_unseen
from agenteval.simulation.config import LlmBackedUserSimulatorConfig
from agenteval.simulation.personas import persona

PROMPT_VERSION = "user-sim-2"
TURN_LIMIT = "turn limit reached"  # `NextTurn.reason` when `max_allowed_invocations` ended it

# The default instructions are one system message that stays the same for the whole
# conversation (what to write, the plan, the persona), then one user message with the
# conversation so far and a short closing line. Each turn's prompt thus begins with the last
# turn's up to the end of its conversation, and the embedded engine evaluates only the new
# messages and the closing line (version 1 put the instructions after the conversation, so
# every turn evaluated them again: about 70 tokens a turn). The closing line keeps what to
# write last, where a small model heeds it.
_DEFAULT_SYSTEM = """You are role-playing a human user talking to an AI agent. Stay in character.
You will be shown the conversation so far. Write the user's next message only, in plain text,
one or two sentences. Advance the plan: answer the agent's questions, give the next request, or
correct the agent if it got something wrong. If every step of the plan is done, or the agent has
failed twice, write exactly {stop_signal} and nothing else.

Your plan for this conversation:
{plan}
{persona}"""

_DEFAULT_TURN = """Conversation so far:
{history}

You are the user, not the agent. Your next message to the agent, following your plan (or
{stop_signal}):"""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass
class NextTurn:
    """The simulator's decision: a message to send, or None when the conversation is over."""

    message: str | None
    reason: str


class LlmUserSimulator:
    """Generates user turns for one scenario."""

    def __init__(self, scenario: ConversationScenario, model: LLM,
                 config: LlmBackedUserSimulatorConfig) -> None:
        self.scenario = scenario
        self.model = model
        self.config = config
        self.persona = persona(scenario.user_persona)
        self.history: list[tuple[str, str]] = []
        template = config.custom_instructions
        if template is not None and self.persona is not None and not names_persona(template):
            raise ValueError(f"user_simulator_config.custom_instructions: "
                             f"{persona_unseen('the scenario')}")

    def record(self, role: str, text: str) -> None:
        """Adds a message to the transcript the simulator reads."""
        self.history.append((role, text))

    def record_agent_turn(self, answer: str, events: Sequence[InvocationEvent]) -> None:
        """Adds the agent's turn to the transcript: its answer, after its tool calls and their
        results when the config's `include_function_calls` asks for them (as ADK, the simulated
        user reads the answers only by default)."""
        if self.config.include_function_calls:
            for event in events:
                for part in (event.content.parts or []) if event.content else []:
                    if (call := part.function_call) is not None:
                        self.record("agent", f"[calls {call.name}({_json(call.args or {})})]")
                    if (result := part.function_response) is not None:
                        self.record("tool", f"[{result.name} returned {_json(result.response)}]")
        self.record("agent", answer)

    def messages(self) -> tuple[Message, ...]:
        """The messages asking for the next user turn: with `custom_instructions`, that template
        filled in as one user message (ADK's form); otherwise the default system message and the
        conversation so far (see `_DEFAULT_SYSTEM`)."""
        persona_text = ""
        if self.persona:
            lines = [f"- {i}" for b in self.persona.behaviors for i in b.behavior_instructions]
            persona_text = f"\nYour persona: {self.persona.description}\n" + "\n".join(lines) + "\n"
        history = "\n".join(f"{role}: {text}" for role, text in self.history) or "(nothing yet)"
        values = {"plan": self.scenario.conversation_plan, "persona": persona_text,
                  "history": history, "stop_signal": self.config.stop_signal,
                  "conversation_plan": self.scenario.conversation_plan,
                  "conversation_history": history}

        def fill(template: str) -> str:
            # Both `{name}` and ADK's Jinja-style `{{ name }}` placeholders; other braces stay as written.
            return re.sub(r"\{\{\s*(\w+)\s*\}\}|\{(\w+)\}",
                          lambda m: values.get(m.group(1) or m.group(2), m.group(0)), template)

        if self.config.custom_instructions:
            return (Message("user", fill(self.config.custom_instructions)),)
        return Message("system", fill(_DEFAULT_SYSTEM)), Message("user", fill(_DEFAULT_TURN))

    async def next_turn(self, turns_so_far: int) -> NextTurn:
        """The next user message, or None with the reason the conversation ends."""
        limit = self.config.max_allowed_invocations
        if limit != -1 and turns_so_far >= limit:
            return NextTurn(None, TURN_LIMIT)
        if turns_so_far == 0:
            return NextTurn(self.scenario.starting_prompt, "starting prompt")
        temperature, max_tokens = self.config.sampling()
        response = await self.model.generate(ModelRequest(
            messages=self.messages(), temperature=temperature, max_tokens=max_tokens))
        text = response.text.strip()
        if self.config.stop_signal.lower() in text.lower():
            return NextTurn(None, "stop signal")
        if not text:
            raise ModelError(f"the user simulator's model {self.model.name} replied with no text "
                             f"for user turn {turns_so_far + 1}")
        return NextTurn(text, "generated")
