"""Built-in user personas (ids as in ADK: EXPERT, NOVICE, EVALUATOR), in our own words: pure
data, read by the user simulator and by the criterion that judges it."""


from agenteval.schema.evalset import UserBehavior, UserPersona


def _b(name: str, instruction: str, violation: str) -> UserBehavior:
    return UserBehavior(name=name, description=instruction, behavior_instructions=[instruction],
                        violation_rubrics=[violation])


PERSONAS: dict[str, UserPersona] = {
    "EXPERT": UserPersona(id="EXPERT", description="A knowledgeable user who is precise and brief.",
                          behaviors=[
        _b("precise", "Give all relevant details of your request up front, precisely.",
           "The user withheld details they had, or was vague."),
        _b("corrects", "Point out any mistake the agent makes and insist on the fix.",
           "The user let an agent mistake pass."),
        _b("limited_patience", "If the agent fails twice, stop the conversation.",
           "The user kept going after repeated agent failures."),
        _b("professional", "Keep a terse, professional tone.", "The user was chatty or rude."),
    ]),
    "NOVICE": UserPersona(id="NOVICE", description="A user new to the topic who needs guidance.",
                          behaviors=[
        _b("goal_first", "State your goal and let the agent ask for details; answer its questions.",
           "The user dumped every detail at once or ignored the agent's questions."),
        _b("trusting", "Do not correct the agent; accept what it says.",
           "The user corrected the agent."),
        _b("conversational", "Write casually, like a person chatting.", "The user was stiff."),
    ]),
    "EVALUATOR": UserPersona(id="EVALUATOR", description="A user checking that the agent can do a task.",
                             behaviors=[
        _b("relevant_only", "Answer only what the agent asks; add nothing unrelated.",
           "The user volunteered unrelated information."),
        _b("no_troubleshooting", "If the agent fails, end the conversation.",
           "The user tried to troubleshoot for the agent."),
        _b("conversational", "Write casually, like a person chatting.", "The user was stiff."),
    ]),
}

def builtin_persona(persona_id: str) -> UserPersona:
    """The built-in persona `persona_id` (its id in any case); a ValueError naming the built-in
    ids when there is none."""
    found = PERSONAS.get(persona_id.upper())
    if found is None:
        raise ValueError(f"unknown user persona {persona_id!r}; built-in: {', '.join(PERSONAS)}")
    return found


__all__ = ["PERSONAS", "builtin_persona"]
