"""The agent tree of one ADK turn, from ADK's plugin callbacks (the ADK adapter's part that
needs no google-adk import: agents, tools and events are read by their attributes).

Every agent run gets an `invoke_agent NAME` span (kind `agent`, `gen_ai.agent.name`), and the
model and tool calls of a run go under its span. A run's parent is found from ADK's invocation
context, never from "the span open now", because a `ParallelAgent` runs its branches at once:

- in the same ADK invocation, the innermost agent run still open whose branch is this run's
  branch or a prefix of it (a sequential or loop stage under its workflow agent, a parallel
  branch under its `ParallelAgent`, an agent handed control with `transfer_to_agent` under the
  agent that handed it off);
- the first run of a new ADK invocation started by an `AgentTool` (which runs its agent in a
  Runner of its own) goes under that AgentTool's `execute_tool` span, known from a context
  variable the tool's task sets while the tool runs;
- any other run (the turn's first agent) goes under the turn's parent span (the invocation).

Workflow agents carry `agenteval.agent.workflow` (`sequential`, `parallel`, `loop`), a branch
run its ADK `agenteval.agent.branch`, an AgentTool's inner run `agenteval.agent.as_tool`; when
its calls are left out of the recorded events (`inner_tool_calls: exclude`), also
`agenteval.uncounted`, so the efficiency figures count what the trajectory holds.

The ADK events of an AgentTool's inner run (which ADK keeps in the inner Runner's session, not
in the turn's events) are gathered by the outer call's id, for the adapter to add to the turn.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from agenteval.schema.trace import Span
from agenteval.tracing.genai import start_agent_run
from agenteval.tracing.recorder import ActiveSpan

InnerToolCalls = Literal["include", "exclude"]
INNER_TOOL_CALLS: tuple[InnerToolCalls, ...] = ("include", "exclude")

_WORKFLOWS = {"SequentialAgent": "sequential", "ParallelAgent": "parallel", "LoopAgent": "loop"}


@dataclass
class _AgentToolCall:
    """An AgentTool call running now: its call id and span, and the tree that recorded it."""

    tree: AgentTree
    call_id: str | None
    span: ActiveSpan | None
    previous: _AgentToolCall | None = None
    done: bool = False


# The AgentTool call whose tool is running in this task (tasks copy it; the tool's inner Runner
# runs in the tool's own task, so its first agent run reads the call that started it).
_AGENT_TOOL: ContextVar[_AgentToolCall | None] = ContextVar("agenteval_adk_agent_tool", default=None)


@dataclass
class _Run:
    invocation_id: str
    branch: tuple[str, ...]
    agent: str
    span: ActiveSpan | None


def _branch(ctx: Any) -> tuple[str, ...]:
    branch = getattr(ctx, "branch", None)
    return tuple(str(branch).split(".")) if branch else ()


def _context(callback_context: Any) -> Any:
    """The InvocationContext behind a callback or tool context (ADK keeps it private)."""
    return getattr(callback_context, "_invocation_context", None)


def _is_a(obj: Any, class_name: str) -> bool:
    return any(c.__name__ == class_name for c in type(obj).__mro__)


def is_agent_tool(tool: Any) -> bool:
    """Whether an ADK tool is an `AgentTool` (it runs an agent of the app as a tool)."""
    return _is_a(tool, "AgentTool")


def runs_in_app(tool: Any) -> bool:
    """Whether an ADK tool acts on the app itself rather than on the world: an `AgentTool` (runs
    an agent of the app), `transfer_to_agent` (hands control) and `exit_loop` (ends a
    `LoopAgent`). They work through the tool context's actions, which a served response skips,
    so neither `mock_tools` nor a replay answers them: they run, and the calls they lead to are
    answered as any other."""
    if _is_a(tool, "AgentTool") or _is_a(tool, "TransferToAgentTool"):
        return True
    func = getattr(tool, "func", None)
    return getattr(func, "__module__", "").startswith("google.adk.tools.") and getattr(
        func, "__name__", "") in ("transfer_to_agent", "exit_loop")


def workflow_of(agent: Any) -> str | None:
    """`sequential`, `parallel` or `loop` for ADK's workflow agents, else None."""
    return next((kind for cls, kind in _WORKFLOWS.items() if _is_a(agent, cls)), None)


def _text(content: Any) -> str | None:
    parts = getattr(content, "parts", None) or []
    text = "".join(p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", False))
    return text or None


@dataclass
class AgentTree:
    """The agent runs of one turn (see the module docstring). `inner` maps an AgentTool call's
    id to the ADK events of its inner run, in the order they happened."""

    inner_tool_calls: InnerToolCalls = "include"
    parent: Span | None = None
    inner: dict[str, list[Any]] = field(default_factory=dict)
    top: list[ActiveSpan] = field(default_factory=list)
    _open: list[_Run] = field(default_factory=list)
    _started_by: dict[str, _AgentToolCall] = field(default_factory=dict)

    def reset(self, parent: Span | None) -> None:
        """A new turn, whose first agent runs go under `parent`."""
        self.parent = parent
        self.inner, self.top, self._open, self._started_by = {}, [], [], {}

    def _enclosing(self, invocation_id: str, branch: tuple[str, ...]) -> _Run | None:
        for run in reversed(self._open):
            if run.invocation_id == invocation_id and branch[:len(run.branch)] == run.branch:
                return run
        return None

    def enter(self, agent: Any, callback_context: Any) -> None:
        """An agent run begins (ADK's before_agent_callback)."""
        ctx = _context(callback_context)
        invocation_id = str(getattr(ctx, "invocation_id", "") or callback_context.invocation_id)
        branch = _branch(ctx)
        name = str(getattr(agent, "name", None) or callback_context.agent_name)
        attributes: dict[str, Any] = {"agenteval.agent.workflow": workflow_of(agent)}
        if branch:
            attributes["agenteval.agent.branch"] = ".".join(branch)
        enclosing = self._enclosing(invocation_id, branch)
        parent: Span | None = None
        user_text: str | None = None
        if enclosing is not None:
            parent = enclosing.span.span if enclosing.span is not None else None
        else:
            tool_call = self._started_by.get(invocation_id) or self._agent_tool()
            if tool_call is not None:  # the first run of an AgentTool's own Runner
                self._started_by[invocation_id] = tool_call
                parent = tool_call.span.span if tool_call.span is not None else None
                attributes["agenteval.agent.as_tool"] = True
                if self.inner_tool_calls == "exclude":
                    attributes["agenteval.uncounted"] = True
            else:
                parent = self.parent
            user_text = _text(getattr(ctx, "user_content", None))
        span = start_agent_run(name, user_text, parent, attributes)
        if span is not None and enclosing is None and parent is self.parent:
            self.top.append(span)
        self._open.append(_Run(invocation_id, branch, name, span))

    def leave(self, callback_context: Any, error: BaseException | None = None) -> None:
        """An agent run ends (after_agent_callback, or on_agent_error_callback with `error`)."""
        run = self._find(callback_context)
        if run is None:
            return
        self._open.remove(run)
        if run.span is not None:
            if error is not None:
                run.span.fail(f"{type(error).__name__}: {error}")
            run.span.end()

    def _find(self, callback_context: Any) -> _Run | None:
        ctx = _context(callback_context)
        invocation_id = str(getattr(ctx, "invocation_id", "") or callback_context.invocation_id)
        branch = _branch(ctx)
        agent = getattr(getattr(ctx, "agent", None), "name", None) or callback_context.agent_name
        for run in reversed(self._open):
            if (run.invocation_id, run.branch, run.agent) == (invocation_id, branch, agent):
                return run
        return None

    def span_of(self, callback_context: Any) -> Span | None:
        """The span of the agent run a model or tool call belongs to (None: not known)."""
        run = self._find(callback_context)
        return run.span.span if run is not None and run.span is not None else None

    def _agent_tool(self) -> _AgentToolCall | None:
        call = _AGENT_TOOL.get()
        return call if call is not None and call.tree is self and not call.done else None

    def tool_started(self, tool: Any, tool_context: Any, span: ActiveSpan | None) -> None:
        """A tool call begins; an AgentTool's is remembered for the run its Runner starts."""
        if _is_a(tool, "AgentTool"):
            _AGENT_TOOL.set(_AgentToolCall(self, tool_context.function_call_id, span, _AGENT_TOOL.get()))

    def tool_ended(self, tool: Any, tool_context: Any) -> None:
        call = _AGENT_TOOL.get()
        if _is_a(tool, "AgentTool") and call is not None and call.call_id == tool_context.function_call_id:
            call.done = True
            _AGENT_TOOL.set(call.previous)

    def event(self, invocation_context: Any, event: Any) -> None:
        """An event of any Runner of the turn (on_event_callback): one of an AgentTool's inner
        run is kept under the outer call that started it."""
        call = self._started_by.get(str(getattr(invocation_context, "invocation_id", "")))
        if call is None or call.call_id is None or getattr(event, "partial", False):
            return
        if (getattr(event, "author", "") or "").lower() == "user":
            return
        self.inner.setdefault(call.call_id, []).append(event)

    def close(self, output: str | None = None) -> None:
        """The turn is over: agent runs ADK did not end (an agent that handed off, a run cut
        short) end now; `output` (the final response) goes on the turn's first agent span."""
        for run in self._open:
            if run.span is not None:
                run.span.end()
        self._open = []
        if self.top and output is not None:
            self.top[0].set("output.value", output)


__all__ = ["INNER_TOOL_CALLS", "AgentTree", "InnerToolCalls", "is_agent_tool", "runs_in_app", "workflow_of"]
