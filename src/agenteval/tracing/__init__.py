"""Traces of case runs: recording spans while agents, simulators and judges work; reading them
back as efficiency numbers; OpenTelemetry export and import at the edge (imported on demand)."""

from agenteval.tracing.recorder import ActiveSpan, TraceRecorder, current_recorder, recording, span

__all__ = ["ActiveSpan", "TraceRecorder", "current_recorder", "recording", "span"]
