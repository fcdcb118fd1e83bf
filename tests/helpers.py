"""Builders for invocations and eval sets used across tests."""

from __future__ import annotations

from typing import Any

from agenteval.schema import (
    Content,
    EvalCase,
    EvalSet,
    FunctionCall,
    IntermediateData,
    Invocation,
)


def call(name: str, **args: Any) -> FunctionCall:
    return FunctionCall(name=name, args=args)


def inv(prompt: str = "hi", response: str | None = "ok",
        calls: list[FunctionCall] | None = None) -> Invocation:
    return Invocation(
        user_content=Content.from_text(prompt, role="user"),
        final_response=Content.from_text(response) if response is not None else None,
        intermediate_data=IntermediateData(tool_uses=calls or []),
    )


def eval_set(set_id: str, cases: dict[str, list[Invocation]]) -> EvalSet:
    return EvalSet(eval_set_id=set_id,
                   eval_cases=[EvalCase(eval_id=k, conversation=v) for k, v in cases.items()])
