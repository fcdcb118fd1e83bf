"""Replaying a google-adk agent through ADK's own plugin mechanism (see `agents.replay`).

`ReplayPlugin` comes first among the app's plugins. Its `before_model_callback` compares ADK's
model request (as the trace records it: system instruction and contents, tool names) with the
recorded one and returns the recorded reply as an `LlmResponse`, so ADK never calls the
model; its `before_tool_callback` returns the recorded result, so the tool never runs, except
the tools that act on the app itself (`adk_tree.runs_in_app`: an `AgentTool`, whose agent's
calls are then replayed, a handoff, a loop's exit), which take their recorded call and run. ADK
skips the later plugins' before-callbacks when one answers (and, for a model call, the
after-callbacks too), so the plugin hands the served call to agenteval's recorder itself: the
replayed run's trace and app details are recorded as a live run's are. Imported only for ADK
agents.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from agenteval.agents.adk import _request_messages, _tool_names
from agenteval.agents.adk_tree import runs_in_app
from agenteval.models.replay import current_cassette

_App: Any = importlib.import_module("google.adk.apps").App
_BasePlugin: Any = importlib.import_module("google.adk.plugins").BasePlugin
_LlmResponse: Any = importlib.import_module("google.adk.models").LlmResponse
_genai: Any = importlib.import_module("google.genai.types")

_RECORDER = "agenteval_recorder"  # the ADK adapter's recording plugin
_APP_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")

__all__ = ["ReplayPlugin", "with_replay_plugin"]


def _recorder(context: Any) -> Any:
    manager = getattr(getattr(context, "_invocation_context", None), "plugin_manager", None)
    return manager.get_plugin(_RECORDER) if manager is not None else None


class ReplayPlugin(_BasePlugin):  # type: ignore[misc]
    """Serves recorded model replies and tool results in a replayed case run (see the module);
    outside one, or once the replay went live, it lets every call through."""

    def __init__(self) -> None:
        super().__init__(name="agenteval_replay")

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
        cassette = current_cassette()
        if cassette is None or cassette.live:
            return None
        reply = cassette.model_step(_request_messages(llm_request), _tool_names(llm_request),
                                    agent=getattr(callback_context, "agent_name", None))
        if reply is None:
            return None
        parts = [_genai.Part(text=reply.text)] if reply.text else []
        parts += [_genai.Part(function_call=_genai.FunctionCall(name=c.name, args=dict(c.args)))
                  for c in reply.tool_calls]
        u = reply.usage
        response = _LlmResponse(
            content=_genai.Content(role="model", parts=parts), model_version=reply.model or None,
            usage_metadata=_genai.GenerateContentResponseUsageMetadata(
                prompt_token_count=u.prompt_tokens, candidates_token_count=u.completion_tokens,
                total_token_count=u.prompt_tokens + u.completion_tokens,
                cached_content_token_count=u.cached_tokens or None))
        if (recorder := _recorder(callback_context)) is not None:
            await recorder.before_model_callback(callback_context=callback_context, llm_request=llm_request)
            await recorder.after_model_callback(callback_context=callback_context, llm_response=response)
        return response

    async def before_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any) -> Any:
        cassette = current_cassette()
        if cassette is None or cassette.live:
            return None
        got = cassette.tool_step(str(getattr(tool, "name", tool)), dict(tool_args or {}),
                                 runs=runs_in_app(tool), agent=getattr(tool_context, "agent_name", None))
        if got is None:
            return None
        # ADK runs the after-tool callbacks on a served result: the recorder's ends this span.
        if (recorder := _recorder(tool_context)) is not None:
            await recorder.before_tool_callback(tool=tool, tool_args=tool_args, tool_context=tool_context)
        return got[0]


def with_replay_plugin(agent: Any) -> Any:
    """An ADK agent or `App` as an `App` with `ReplayPlugin` first among its plugins."""
    if isinstance(agent, _App):
        return agent.model_copy(update={"plugins": [ReplayPlugin(), *agent.plugins]})
    name = agent.name if _APP_NAME.match(agent.name) and agent.name != "user" else "agenteval"
    return _App(name=name, root_agent=agent, plugins=[ReplayPlugin()])
