"""`agenteval eval --replay RUN [--replay_then live]`: the recorded run to replay, checked before
anything runs, and the divergences told on the console after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from agenteval.agents.replay import for_replay
from agenteval.errors import AgentEvalError, DataError
from agenteval.models.replay import Recording, ReplayThen
from agenteval.runner import EvalJob
from agenteval.store.lookup import is_path, load_run


def load_recording(ref: str, store_root: str | Path, then: ReplayThen) -> Recording:
    """The run `ref` (a result document's path, or a run id / prefix / latest from the run
    history under `store_root`) as a recording; a DataError when it kept no traces."""
    try:
        document = load_run(ref, store_root)
    except AgentEvalError:
        raise
    except (OSError, ValueError) as e:
        raise DataError(ref if is_path(ref) else None, "--replay",
                        f"cannot read the run to replay: {e}") from None
    recording = Recording([document], ref, then)
    if recording.traced == 0:
        raise DataError(ref if is_path(ref) else None, "--replay",
                        f"run {ref!r} kept no traces (it ran with --no_traces, or is a re-scoring): "
                        "there is nothing to replay")
    return recording


def prepare_replay(job: EvalJob, resolve_model: Any) -> None:
    """Sets up `job.agent` to replay (model and tools served from the recording); refuses what
    cannot be replayed: agents calling their own models, case runs in other processes."""
    isolation = job.isolation or getattr(job.config, "isolation", None) or "none"
    if job.executor != "local" or isolation != "none":
        raise AgentEvalError("--replay serves the recording to case runs in this process: drop "
                             "--executor ray / --isolation process")
    if not job.traces:
        raise AgentEvalError("--replay compares against the recording as the trace records it: "
                             "drop --no_traces")
    job.agent = for_replay(job.agent, resolve_model, job.agent_model)
    job.agent_model = None  # resolved into the replaying model


def report_divergences(console: Console, recording: Recording) -> None:
    """One line per case run that departed from the recording."""
    diverged = recording.divergences()
    served = sum(c.served_model for c in recording.cassettes)
    tools = sum(c.served_tools for c in recording.cassettes)
    ran = sum(c.run_tools for c in recording.cassettes)  # handoffs and agent tools, run again
    console.print(f"Replay of {escape(recording.source)}: {len(recording.cassettes)} case run(s), "
                  f"{served} model replies and {tools} tool results served from the recording, "
                  + (f"{ran} recorded call(s) of tools acting on the app run again (handoffs, agent "
                     "tools, loop exits), " if ran else "")
                  + f"{len(diverged)} diverged" + (" (carried on live)" if diverged and
                                                   recording.then == "live" else ""))
    for d in diverged:
        console.print(f"  {escape(str(d))}")


__all__ = ["load_recording", "prepare_replay", "report_divergences"]
