"""google-adk agents under test, run through ADK's own `Runner` with in-memory services.

Each session gets its own Runner, whose `InMemorySessionService` holds the case's session. A turn's
events become invocation events as `adk eval` builds them (§1.5 of the ADK reference): events with
a call, a response, text, inline data or grounding are kept; the final response is the content of
the last `is_final_response()` event (text beats audio-only), and that event keeps only its usage
unless it also calls tools. Thought parts stay, marked `thought=True`. App details come from the
model requests, as ADK's request interceptor sees them. With `mock_tools`, a plugin's
`before_tool_callback` answers served calls from the eval set (returning a response skips the
tool, ADK's own mechanism; the agent's code is not patched). google-adk is imported here only,
and this module is imported only when an ADK agent is found.
"""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from agenteval.agents.adk_tree import INNER_TOOL_CALLS, AgentTree, InnerToolCalls, is_agent_tool, runs_in_app
from agenteval.agents.base import SessionSpec, TurnResult
from agenteval.agents.mock_tools import ToolServer
from agenteval.errors import AgentEvalError
from agenteval.schema import AgentDetails, AppDetails, Content, InvocationEvent, UsageMetadata
from agenteval.schema.content import Blob, FunctionCall, FunctionResponse, Part, learn_fields
from agenteval.tracing.figures import union_seconds
from agenteval.tracing.genai import model_reply, start_model_call, start_tool_call, tool_result
from agenteval.tracing.recorder import current_span

try:
    _App: Any = importlib.import_module("google.adk.apps").App
    _BasePlugin: Any = importlib.import_module("google.adk.plugins").BasePlugin
    _Runner: Any = importlib.import_module("google.adk.runners").Runner
    _InMemorySessionService: Any = importlib.import_module("google.adk.sessions").InMemorySessionService
    _InMemoryArtifactService: Any = importlib.import_module("google.adk.artifacts").InMemoryArtifactService
    _InMemoryMemoryService: Any = importlib.import_module("google.adk.memory").InMemoryMemoryService
    _genai: Any = importlib.import_module("google.genai.types")
except ImportError as e:  # pragma: no cover - depends on the environment
    raise AgentEvalError(f"running a google-adk agent needs google-adk ({e}): "
                         "pip install 'agenteval[adk]'") from e

# What the installed genai's models hold is what the agent may return: kept, not refused.
for _ours, _theirs in ((Part, _genai.Part), (FunctionCall, _genai.FunctionCall),
                       (FunctionResponse, _genai.FunctionResponse), (Blob, _genai.Blob),
                       (UsageMetadata, _genai.GenerateContentResponseUsageMetadata)):
    learn_fields(_ours, _theirs.model_fields)

try:  # ADK's own model/tool busy-time collector (what `adk eval` uses); private, so optional
    _collect_busy: Any = importlib.import_module(
        "google.adk.telemetry._instrumentation").collect_busy_intervals
except (ImportError, AttributeError):  # pragma: no cover - older or newer google-adk
    _collect_busy = None

_APP_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
# What `adk eval` adds to model requests that set no retry options (EnsureRetryOptionsPlugin).
_RETRY = {"attempts": 7, "initial_delay": 5.0, "max_delay": 120, "exp_base": 2.0,
          "http_status_codes": [408, 429, 500, 502, 503, 504]}


def _dump(obj: Any) -> Any:
    """A genai/pydantic object as JSON-ready data (other values unchanged)."""
    return obj.model_dump(mode="json", exclude_none=True) if hasattr(obj, "model_dump") else obj


def _instruction_text(instruction: Any) -> str:
    """A system instruction (text, Part, Content or a list of them) as text."""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, list):
        return "\n".join(_instruction_text(i) for i in instruction)
    if hasattr(instruction, "parts"):
        return _instruction_text(list(instruction.parts or []))
    return str(getattr(instruction, "text", None) or "")


def _request_messages(llm_request: Any) -> list[dict[str, Any]]:
    """An ADK model request's contents as role/content messages, for the trace."""
    out: list[dict[str, Any]] = []
    config = getattr(llm_request, "config", None)
    system = _instruction_text(getattr(config, "system_instruction", None))
    if system:
        out.append({"role": "system", "content": system})
    for content in getattr(llm_request, "contents", None) or []:
        out.append({"role": content.role or "user",
                    "content": [_dump(p) for p in content.parts or []]})
    return out


def _tool_names(llm_request: Any) -> list[str]:
    config = getattr(llm_request, "config", None)
    return [str(d.name) for t in getattr(config, "tools", None) or []
            for d in getattr(t, "function_declarations", None) or []]


def _reply(span: Any, llm_response: Any) -> None:
    """An ADK model response recorded on its span: text, tool calls, token counts."""
    content = llm_response.content
    parts = content.parts if content is not None and content.parts else []
    usage = llm_response.usage_metadata
    model_reply(
        span, model=getattr(llm_response, "model_version", None),
        text="".join(p.text for p in parts if p.text and not p.thought),
        tool_calls=[{"name": p.function_call.name, "arguments": dict(p.function_call.args or {})}
                    for p in parts if p.function_call],
        input_tokens=getattr(usage, "prompt_token_count", None),
        output_tokens=getattr(usage, "candidates_token_count", None),
        cached_tokens=getattr(usage, "cached_content_token_count", None),
        reasoning_tokens=getattr(usage, "thoughts_token_count", None),
        tool_use_tokens=getattr(usage, "tool_use_prompt_token_count", None))
    if getattr(llm_response, "error_code", None):
        span.fail(f"{llm_response.error_code}: {getattr(llm_response, 'error_message', '')}")


class _Recorder(_BasePlugin):  # type: ignore[misc]
    """Records agent runs, model and tool calls as a tree of spans (`adk_tree`) and times the
    calls (for runs without a trace), gathers the events of AgentTools' inner runs, keeps each
    agent's first model request of the turn, and adds `adk eval`'s default retry options to
    requests that have none."""

    def __init__(self, inner_tool_calls: InnerToolCalls = "include") -> None:
        super().__init__(name="agenteval_recorder")
        self.tree = AgentTree(inner_tool_calls)
        self.reset()

    def reset(self) -> None:
        self.tree.reset(current_span())
        self.requests: dict[str, Any] = {}
        self.model: list[tuple[float, float]] = []
        self.tool: list[tuple[float, float]] = []
        self._model_started: dict[tuple[str, str, str], float] = {}
        self._tool_started: dict[Any, float] = {}
        self._model_spans: dict[tuple[str, str, str], Any] = {}
        self._tool_spans: dict[Any, Any] = {}

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        self.tree.enter(agent, callback_context)

    async def after_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        self.tree.leave(callback_context)

    async def on_agent_error_callback(self, *, agent: Any, callback_context: Any,
                                      error: Exception) -> None:
        self.tree.leave(callback_context, error)

    async def on_event_callback(self, *, invocation_context: Any, event: Any) -> None:
        self.tree.event(invocation_context, event)

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        self.requests.setdefault(callback_context.agent_name, llm_request)
        config = llm_request.config = llm_request.config or _genai.GenerateContentConfig()
        config.http_options = config.http_options or _genai.HttpOptions()
        config.http_options.retry_options = (config.http_options.retry_options
                                             or _genai.HttpRetryOptions(**_RETRY))
        key = _model_key(callback_context)
        self._model_started[key] = time.monotonic()
        model = str(getattr(llm_request, "model", None) or "model")
        self._model_spans[key] = start_model_call(model, _request_messages(llm_request),
                                                  _tool_names(llm_request),
                                                  self.tree.span_of(callback_context))

    def _end_model(self, callback_context: Any, done: bool, llm_response: Any = None,
                   error: BaseException | None = None) -> None:
        key = _model_key(callback_context)
        started = self._model_started.pop(key, None) if done else self._model_started.get(key)
        if started is not None:  # a streamed call ends once per chunk: the union keeps the last
            self.model.append((started, time.monotonic()))
        span = self._model_spans.pop(key, None) if done else None
        if span is not None:
            if llm_response is not None:
                _reply(span, llm_response)
            if error is not None:
                span.fail(f"{type(error).__name__}: {error}")
            span.end()

    async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
        self._end_model(callback_context, not llm_response.partial, llm_response)

    async def on_model_error_callback(self, *, callback_context: Any, llm_request: Any,
                                      error: Exception) -> None:
        self._end_model(callback_context, True, error=error)

    async def before_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any) -> None:
        key = tool_context.function_call_id or id(tool_context)
        self._tool_started[key] = time.monotonic()
        span = start_tool_call(str(getattr(tool, "name", tool)), tool_context.function_call_id,
                               dict(tool_args or {}), self.tree.span_of(tool_context))
        self._tool_spans[key] = span
        self.tree.tool_started(tool, tool_context, span)

    def _end_tool(self, tool_context: Any, result: Any = None, error: BaseException | None = None) -> None:
        key = tool_context.function_call_id or id(tool_context)
        started = self._tool_started.pop(key, None)
        if started is not None:
            self.tool.append((started, time.monotonic()))
        span = self._tool_spans.pop(key, None)
        if span is not None:
            if result is None and error is None:  # recorded as ADK sends it, so a replay can serve it
                result = {"result": None}
            tool_result(span, _dump(result), None if error is None else f"{type(error).__name__}: {error}")
            span.end()

    async def after_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any,
                                  result: Any) -> None:
        self.tree.tool_ended(tool, tool_context)
        self._end_tool(tool_context, result)

    async def on_tool_error_callback(self, *, tool: Any, tool_args: Any, tool_context: Any,
                                     error: Exception) -> None:
        self.tree.tool_ended(tool, tool_context)
        self._end_tool(tool_context, error=error)

    def app_details(self) -> AppDetails:
        """Each agent's instruction and tool declarations, as sent in its first request."""
        details = {}
        for agent, request in self.requests.items():
            config = getattr(request, "config", None)
            details[agent] = AgentDetails(
                name=agent,
                instructions=_instruction_text(getattr(config, "system_instruction", None)),
                tool_declarations=[_dump(t) for t in getattr(config, "tools", None) or []])
        return AppDetails(agent_details=details)


class _ServedTools(_BasePlugin):  # type: ignore[misc]
    """Answers tool calls from the eval set (`mock_tools`): a response returned from
    `before_tool_callback` is the call's response and the tool does not run. It comes after the
    recorder, so the call's span is open (and marked served) when it answers; ADK runs the
    after-tool callbacks on the served response as on a real one."""

    def __init__(self, server: ToolServer, recorder: _Recorder) -> None:
        super().__init__(name="agenteval_mock_tools")
        self.server = server
        self.recorder = recorder

    async def before_tool_callback(self, *, tool: Any, tool_args: Any,
                                   tool_context: Any) -> dict[str, Any] | None:
        name, args = str(getattr(tool, "name", tool)), dict(tool_args or {})
        # An AgentTool, a handoff, a loop exit: a served response skips them. An AgentTool whose
        # agent the turn expects no call from (a set recorded with inner_tool_calls "exclude")
        # is answered whole, as the set recorded it: its agent's calls could match nothing.
        inner = getattr(getattr(tool, "agent", None), "name", None) if is_agent_tool(tool) else None
        if runs_in_app(tool) and (inner is None or self.server.expects_from(inner)):
            self.server.runs(name, args, tool_context.function_call_id)
            served = None
        else:
            served = self.server.serve(name, args, tool_context.function_call_id,
                                       getattr(tool_context, "agent_name", None))
        span = self.recorder._tool_spans.get(tool_context.function_call_id or id(tool_context))
        if span is not None:
            span.set("agenteval.served", "live" if served is None else "expected")
        return served


def _model_key(callback_context: Any) -> tuple[str, str, str]:
    branch = getattr(getattr(callback_context, "_invocation_context", None), "branch", None)
    return callback_context.invocation_id, str(branch or ""), callback_context.agent_name


def _has_payload(content: Any) -> bool:
    return any(p.function_call or p.function_response or p.text or p.inline_data
               for p in content.parts or [])


def _has_text(content: Any) -> bool:
    return any(p.text for p in content.parts or [])


def _invocation_event(e: Any, content: Any) -> InvocationEvent:
    return InvocationEvent(
        author=e.author,
        content=Content.model_validate(_dump(content)) if content is not None else None,
        grounding_metadata=_dump(e.grounding_metadata),
        usage_metadata=(UsageMetadata.model_validate(_dump(e.usage_metadata))
                        if e.usage_metadata is not None else None),
        model_version=e.model_version,
    )


def _call_ids(event: Any) -> list[str]:
    return [c.id for c in event.get_function_calls() if c.id]


def _inner_events(event: Any, inner: Mapping[str, list[Any]], seen: set[str]) -> list[InvocationEvent]:
    """The events of the AgentTool runs `event`'s calls started, each after the call that
    started it: their tool calls and responses (nothing else of their content: the inner agent's
    answer is the outer call's response), and the usage of their model calls."""
    out: list[InvocationEvent] = []
    for call_id in _call_ids(event):
        if call_id in seen:
            continue
        seen.add(call_id)
        for e in inner.get(call_id, ()):
            parts = [p for p in (e.content.parts if e.content is not None else None) or []
                     if p.function_call or p.function_response]
            if parts:
                out.append(_invocation_event(e, _genai.Content(role=e.content.role, parts=parts)))
                out.extend(_inner_events(e, inner, seen))
            elif e.usage_metadata is not None or e.model_version:
                out.append(_invocation_event(e, None))
    return out


def turn_events(events: list[Any], inner: Mapping[str, list[Any]] | None = None,
                ) -> tuple[Content | None, list[InvocationEvent]]:
    """A turn's ADK events as (final response, invocation events), as `adk eval` converts them;
    with `inner` (an AgentTool call's id -> the ADK events of its inner run), each AgentTool's
    inner tool calls and responses follow the call that started them, authored by the inner
    agent (which `adk eval` leaves out)."""
    final: Any = None
    kept: list[Any] = []
    for event in events:
        if event.partial or (event.author or "").lower() == "user":
            continue
        content = event.content
        if content is not None and content.parts:
            if event.is_final_response() and (final is None or not _has_text(final.content)
                                              or _has_text(content)):
                final = event
            if event.grounding_metadata is not None or _has_payload(content):
                kept.append(event)
        elif event.grounding_metadata is not None:
            kept.append(event)
    out: list[InvocationEvent] = []
    seen: set[str] = set()
    for e in kept:
        out.append(_invocation_event(e, e.content if e is not final or e.get_function_calls() else None))
        if inner:
            out.extend(_inner_events(e, inner, seen))
    final_content = Content.model_validate(_dump(final.content)) if final is not None else None
    return final_content, out


class AdkSession:
    """One ADK session in its own Runner."""

    def __init__(self, runner: Any, recorder: _Recorder, session: Any) -> None:
        self._runner = runner
        self._recorder = recorder
        self._session = session
        self._state: dict[str, Any] = dict(session.state)

    def state(self) -> dict[str, Any]:
        return self._state

    async def send(self, message: Content) -> TurnResult:
        new_message = _genai.Content.model_validate(message.model_dump(mode="json", exclude_none=True))
        recorder = self._recorder
        recorder.reset()
        events: list[Any] = []
        collector: AbstractContextManager[Any] = _collect_busy() if _collect_busy else nullcontext()
        with collector as busy:
            agen = self._runner.run_async(user_id=self._session.user_id,
                                          session_id=self._session.id, new_message=new_message)
            try:
                async for event in agen:
                    events.append(event)
            finally:
                await agen.aclose()
                recorder.tree.close()
        if busy is not None:
            model_s, tool_s = busy.model_seconds(), busy.tool_seconds()
        else:  # the plugin's own timing: tool time spent awaiting a model counts as model time
            model_s = union_seconds(recorder.model)
            tool_s = union_seconds(recorder.model + recorder.tool) - model_s
        await self._refresh_state()
        tree = recorder.tree
        final, turn = turn_events(events, tree.inner if tree.inner_tool_calls == "include" else None)
        if final is not None:
            tree.close(final.text(include_thoughts=False))
        return TurnResult(final_response=final, events=turn, model_seconds=model_s,
                          tool_seconds=tool_s, app_details=recorder.app_details())

    async def _refresh_state(self) -> None:
        s = self._session
        current = await self._runner.session_service.get_session(
            app_name=s.app_name, user_id=s.user_id, session_id=s.id)
        if current is not None:
            self._state = dict(current.state)

    async def close(self) -> None:
        await self._runner.close()


class AdkAdapter:
    """Runs a google-adk agent (`BaseAgent`) or `App` through ADK's `Runner`.

    `inner_tool_calls`: whether the tool calls and responses made inside an `AgentTool`'s agent
    run are added to the turn's recorded events, after the call that started them and authored
    by the inner agent (`include`), or left out as `adk eval` records them (`exclude`). Either
    way the trace has them, under the AgentTool's `execute_tool` span.
    """

    def __init__(self, agent: Any, inner_tool_calls: InnerToolCalls = "include") -> None:
        if inner_tool_calls not in INNER_TOOL_CALLS:
            raise AgentEvalError(f"inner_tool_calls must be one of {', '.join(INNER_TOOL_CALLS)}, "
                                 f"not {inner_tool_calls!r}")
        self.agent = agent
        self.inner_tool_calls: InnerToolCalls = inner_tool_calls

    @property
    def name(self) -> str:
        return str(self.agent.name)

    def _app(self, spec: SessionSpec, recorder: _Recorder) -> Any:
        ours = [recorder] + ([_ServedTools(spec.tools, recorder)] if spec.tools is not None else [])
        if isinstance(self.agent, _App):
            return self.agent.model_copy(update={"plugins": [*self.agent.plugins, *ours]})
        name = next((n for n in (spec.app_name, self.agent.name)
                     if _APP_NAME.match(n) and n != "user"), "agenteval")
        try:
            return _App(name=name, root_agent=self.agent, plugins=ours)
        except Exception as e:
            raise AgentEvalError(f"cannot run {type(self.agent).__name__} {self.name!r} as an ADK "
                                 f"app: {e}") from e

    async def start_session(self, spec: SessionSpec) -> AdkSession:
        recorder = _Recorder(self.inner_tool_calls)
        runner = _Runner(app=self._app(spec, recorder), app_name=spec.app_name,
                         session_service=_InMemorySessionService(),
                         artifact_service=_InMemoryArtifactService(),
                         memory_service=_InMemoryMemoryService())
        try:
            session = await runner.session_service.create_session(
                app_name=spec.app_name, user_id=spec.user_id, session_id=spec.session_id,
                state=spec.state)
        except BaseException:
            await runner.close()
            raise
        return AdkSession(runner, recorder, session)
