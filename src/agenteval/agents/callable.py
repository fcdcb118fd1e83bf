"""Plain Python callables as agents.

The callable receives the user's text, and the session state if it takes a second parameter:
`fn(text)` or `fn(text, state)`, sync or async (an `async def`, an object whose `__call__` is one,
or a function returning an awaitable). It returns the reply text, a `TurnResult`, or a
dict `{"response": str, "tool_calls": [{"name", "args", "response"?}]}` describing what it did
(`tool_calls` may be left out; `response` may not: a reply without it fails the case).

A callable with a parameter named `tools` also receives a `ToolCalls` (`agents.mock_tools`):
`tools.call(name, args, fn)` (or `await tools.acall(...)`) runs `fn(**args)`, or, under
`mock_tools`, answers from the eval set without running it; the calls made through it are
recorded as the turn's events, before any the callable reports itself.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import anyio

from agenteval.agents.base import SessionSpec, TurnResult
from agenteval.agents.mock_tools import ToolCalls
from agenteval.errors import placed
from agenteval.schema import Content, FunctionCall, FunctionResponse, InvocationEvent, Part
from agenteval.tracing.genai import agent_step, tool_call, tool_result


def _reported_calls(calls: Any) -> list[dict[str, Any]]:
    """The `tool_calls` a callable reported, checked: a mistake is a TypeError saying where (it
    fails the case), not one raised from inside agenteval."""
    def wrong(where: str, expected: str, got: Any) -> TypeError:
        return TypeError(f"the agent's reply: tool_calls{where}: expected {expected}, got "
                         f"{'nothing' if got is None else type(got).__name__}")

    if not isinstance(calls, list):
        raise wrong("", "a list of calls", calls)
    for i, call in enumerate(calls):
        if not isinstance(call, dict):
            raise wrong(f"[{i}]", "a call {name, args, response?}", call)
        if not isinstance(call.get("name"), str):
            raise wrong(f"[{i}].name", "the tool's name (a string)", call.get("name"))
        if not isinstance(call.get("args", {}), dict):
            raise wrong(f"[{i}].args", "an object", call.get("args"))
    return calls


def _turn_from(value: Any, author: str) -> TurnResult:
    if isinstance(value, TurnResult):
        return value
    if isinstance(value, str):
        return TurnResult(final_response=Content.from_text(value))
    if isinstance(value, dict):
        events = []
        for i, call in enumerate(_reported_calls(value.get("tool_calls", []))):
            cid = call.get("id") or f"call_{i + 1}"
            events.append(InvocationEvent(author=author, content=Content(role="model", parts=[
                Part(function_call=FunctionCall(id=cid, name=call["name"], args=call.get("args", {})))])))
            if "response" in call:
                response = call["response"]
                events.append(InvocationEvent(author=author, content=Content(role="user", parts=[
                    Part(function_response=FunctionResponse(
                        id=cid, name=call["name"],
                        response=response if isinstance(response, dict) else {"result": response}))])))
        if value.get("response") is None:  # a key misspelt is not an empty answer
            keys = "" if "response" in value else f" (its keys: {', '.join(map(str, value)) or 'none'})"
            raise TypeError(f"the agent's reply: response: expected the answer (a string), got nothing{keys}")
        return TurnResult(final_response=Content.from_text(str(value["response"])), events=events)
    raise TypeError(f"an agent callable returned {type(value).__name__}; expected str, dict "
                    "or TurnResult")


def _defined_at(fn: Any) -> str:
    """` (FILE:LINE)` where the callable is defined, '' when that cannot be told."""
    target = fn if inspect.isroutine(fn) else type(fn)
    try:
        return f" ({inspect.getsourcefile(target)}:{inspect.getsourcelines(target)[1]})"
    except (OSError, TypeError):
        return ""


TOOLS_PARAM = "tools"


def _hooked_events(hook: ToolCalls, author: str) -> list[InvocationEvent]:
    """The calls made through the `tools` hook, each call then its response."""
    events = []
    for name, args, cid, response in hook.calls:
        events.append(InvocationEvent(author=author, content=Content(role="model", parts=[
            Part(function_call=FunctionCall(id=cid, name=name, args=args))])))
        events.append(InvocationEvent(author=author, content=Content(role="user", parts=[
            Part(function_response=FunctionResponse(id=cid, name=name, response=response))])))
    return events


def _handed_to(events: list[InvocationEvent]) -> set[str]:
    """The agents the events' `transfer_to_agent` calls hand control to."""
    return {str(p.function_call.args.get("agent_name")) for e in events
            for p in (e.content.parts or [] if e.content else [])
            if p.function_call is not None and p.function_call.name == "transfer_to_agent"
            and p.function_call.args}


def _record_reported_calls(turn: TurnResult, name: str) -> None:
    """The tool calls the callable reported, as tool spans (untimed: they happened inside it).

    Events authored by an agent other than the callable (`name`) are that agent's run: each
    stretch of one author's events becomes an untimed `invoke_agent AUTHOR` span holding its
    calls, under the run of the agent that handed it control (`transfer_to_agent`, as agenteval
    records an ADK handoff), else under the callable's step; so a callable running several
    agents shows their tree as an ADK app does."""
    responses = {p.function_response.id: p.function_response.response for e in turn.events
                 for p in (e.content.parts or [] if e.content else []) if p.function_response}
    stretches: list[tuple[str | None, list[InvocationEvent]]] = []
    for e in turn.events:
        author = e.author if e.author and e.author != name else None
        if not stretches or stretches[-1][0] != author:
            stretches.append((author, []))
        stretches[-1][1].append(e)
    with ExitStack() as open_runs:
        handed: set[str] = set()
        for author, events in stretches:
            if author is None or author not in handed:  # not handed control: a run of its own
                open_runs.close()
            run = open_runs.enter_context(agent_step(author, None)) if author is not None else None
            if run is not None:
                run.set("agenteval.untimed", True)
            texts = []
            for e in events:
                for p in (e.content.parts or [] if e.content else []):
                    texts += [p.text] if p.text else []
                    if p.function_call is not None:
                        fc = p.function_call
                        with tool_call(fc.name or "", fc.id, fc.args) as s:
                            if s is not None:
                                s.set("agenteval.untimed", True)
                            tool_result(s, responses.get(fc.id))
            if run is not None and texts:
                run.set("output.value", texts[-1])
            handed = _handed_to(events)


class CallableSession:
    def __init__(self, fn: Callable[..., Any], name: str, spec: SessionSpec) -> None:
        self.fn = fn
        self.name = name
        self._state = spec.state
        self._server = spec.tools
        params = inspect.signature(fn).parameters
        self._takes_tools = TOOLS_PARAM in params
        # The state goes positionally: only a second named positional parameter takes it (a
        # `**kwargs` or keyword-only one counted, and `fn(text, **kw)` got a TypeError).
        positional = [n for n, p in params.items() if n != TOOLS_PARAM and p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        self._takes_state = len(positional) >= 2
        # An object whose `__call__` is async is an async callable too (it was called in a
        # thread and its coroutine refused as "returned coroutine").
        self._is_async = (inspect.iscoroutinefunction(fn)
                          or inspect.iscoroutinefunction(type(fn).__call__))

    def state(self) -> dict[str, Any]:
        return self._state

    async def close(self) -> None:
        return None

    async def send(self, message: Content) -> TurnResult:
        args: tuple[Any, ...] = (message.text(),) + ((self._state,) if self._takes_state else ())
        hook = ToolCalls(self._server)
        kwargs: dict[str, Any] = {TOOLS_PARAM: hook} if self._takes_tools else {}
        started = time.perf_counter()
        with agent_step(self.name, message.text()) as recorded:
            if self._is_async:
                value = await self.fn(*args, **kwargs)
            else:
                # Abandoned on cancel (a case timeout): the thread cannot be stopped, the run goes on.
                value = await anyio.to_thread.run_sync(lambda: self.fn(*args, **kwargs),
                                                       abandon_on_cancel=True)
                if inspect.isawaitable(value):  # a sync wrapper of an async function (a decorator)
                    value = await value
            try:
                turn = _turn_from(value, self.name)
            except TypeError as e:
                # Said at the callable that replied: the line raising it is agenteval's own.
                raise placed(TypeError(f"{e}{_defined_at(self.fn)}")) from None
            if hook.calls:
                turn.events = [*_hooked_events(hook, self.name), *turn.events]
            if recorded is not None:
                _record_reported_calls(turn, self.name)
                recorded.set("output.value", turn.final_response.text() if turn.final_response else "")
        if turn.model_seconds is None:  # the callable's own time: it is not known how it was spent
            turn.model_seconds = time.perf_counter() - started
        return turn


class CallableAdapter:
    """Adapts a plain function to the runner's protocol."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        self.fn = fn
        self._name: str = name or str(getattr(fn, "__name__", "agent"))

    @property
    def name(self) -> str:
        return self._name

    async def start_session(self, spec: SessionSpec) -> CallableSession:
        return CallableSession(self.fn, self._name, spec)
