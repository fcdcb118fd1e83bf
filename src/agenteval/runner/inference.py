"""The inference phase: run the agent through one case's user turns in a fresh session."""

from __future__ import annotations

import copy
import dataclasses
import time
import uuid
from collections.abc import AsyncIterator, Callable

import anyio

from agenteval.agents.base import AgentAdapter, SessionSpec, TurnResult
from agenteval.agents.mock_tools import MockTools, ServedToolsAdapter
from agenteval.errors import describe
from agenteval.models.replay import Cassette, recorded_user_turn, replay_case, replay_turn
from agenteval.runner.scoring import TURN_LIMIT_WARNING, CaseRun
from agenteval.runner.turns import record_turn
from agenteval.runner.values import make_safe
from agenteval.schema import (
    Content,
    ConversationScenario,
    EvalCase,
    Invocation,
    content_text,
)
from agenteval.simulation import LlmUserSimulator
from agenteval.simulation.simulator import TURN_LIMIT
from agenteval.tracing import current_recorder, span
from agenteval.tracing.figures import figures

DEFAULT_USER_ID = "test_user_id"
_CLOSE_SECONDS = 10.0


def session_spec(case: EvalCase, app_name: str) -> SessionSpec:
    """A fresh session for one run of a case.

    Unlike ADK, a pinned `session_id` never carries history or state between runs: every run
    gets its own session, with the case's initial state copied in.
    """
    si = case.session_input
    base = si.session_id if si and si.session_id else "agenteval-session"
    return SessionSpec(
        app_name=si.app_name if si else app_name,
        user_id=si.user_id if si else DEFAULT_USER_ID,
        session_id=f"{base}-{uuid.uuid4().hex[:12]}",
        state=copy.deepcopy(si.state) if si else {},
    )


SimulatorFactory = Callable[[ConversationScenario], LlmUserSimulator]


async def _user_turns(case: EvalCase, simulator: SimulatorFactory | None, warnings: list[str],
                      ) -> AsyncIterator[tuple[Content, Callable[[TurnResult], None]]]:
    """The user messages of a case, each with a callback that tells the source what the agent did.

    A static conversation replays its user turns; a scenario asks the user simulator. A
    conversation the simulator's turn limit cut short says so in `warnings`: it scores as any
    other (as in ADK), but the simulated user did not end it.
    """
    if case.conversation is not None:
        for expected in case.conversation:
            yield expected.user_content, lambda turn: None
        return
    if case.conversation_scenario is None or simulator is None:
        raise ValueError("a conversation_scenario case needs a user simulator model")
    sim = simulator(case.conversation_scenario)
    count = 0
    while True:
        with span("user_simulator", "simulate user turn", {"agenteval.invocation_index": count}) as s:
            served, message = recorded_user_turn(count)  # a replay serves the simulator's turns too
            if not served:
                decided = await sim.next_turn(count)
                message = decided.message
                if decided.reason == TURN_LIMIT:
                    limit = sim.config.max_allowed_invocations
                    warnings.append(f"{TURN_LIMIT_WARNING} "
                                    f"(max_allowed_invocations: {limit}) before the simulated user "
                                    "said it was done")
            if s is not None:
                s.set("output.value", message)
                s.set("agenteval.finished", message is None)
        if message is None:
            return
        sim.record("user", message)
        yield Content.from_text(message, role="user"), (
            lambda turn: sim.record_agent_turn(content_text(turn.final_response), turn.events))
        count += 1


def timeout_message(timeout: float, kept: int) -> str:
    """The error of a case run stopped at its limit of `timeout` seconds, `kept` turns kept."""
    return (f"TimeoutError: the case took longer than {timeout:g} s (case timeout); "
            f"{kept} turn{'' if kept == 1 else 's'} finished before are kept")


def new_run(case: EvalCase, eval_set_id: str, run_index: int, spec: SessionSpec) -> CaseRun:
    """An empty record of one run of `case` in the session `spec`."""
    return CaseRun(case=case, actual=[], eval_set_id=eval_set_id, session_id=spec.session_id,
                   user_id=spec.user_id, run_index=run_index)


def set_session_details(run: CaseRun, spec: SessionSpec) -> None:
    """Records the session the run used (its state as the agent left it, if known)."""
    run.session_details = {"id": spec.session_id, "app_name": spec.app_name,
                           "user_id": spec.user_id, "state": run.session_state}


async def infer_case(adapter: AgentAdapter, case: EvalCase, eval_set_id: str, run_index: int,
                     app_name: str | None = None,
                     simulator: SimulatorFactory | None = None,
                     timeout: float | None = None, *, spec: SessionSpec | None = None,
                     on_turn: Callable[[Invocation], None] | None = None,
                     mock_tools: MockTools | None = None) -> CaseRun:
    """Replays the case's user turns in order (or simulates them) and records the invocations,
    in the session `spec` (default: a fresh one, `session_spec`); `on_turn` hears each
    invocation as soon as it is recorded. With `mock_tools` (or an adapter wrapped by
    `agents.mock_tools.with_mock_tools`), the session's tool calls are
    served from the case's expected invocations (`agents.mock_tools`), each turn's from its
    own, and the recorded tool-response events say how each was served.

    An exception from the agent ends the case's inference; it is recorded in `error_message`
    and the invocations recorded so far are kept. A run longer than `timeout` seconds (wall
    time, measured here) always records the timeout error, whatever the agent did: it is
    cancelled where it waits (a thread it started cannot be stopped, and finishes unobserved),
    and an agent that swallows the cancellation, or holds the interpreter in one call past the
    limit, still gets the timeout error when it returns, with only the turns finished within
    the limit kept (its late reply, or error, is dropped). A call that never lets go of the
    interpreter holds this process until it returns: to stop such an agent at the limit, run
    it in a worker process (`runner.executors.process`).
    """
    spec = spec or session_spec(case, app_name or adapter.name)
    if mock_tools is None and isinstance(adapter, ServedToolsAdapter):
        mock_tools = adapter.mock_tools
    if mock_tools is not None:  # a copy: the spec given may have been sent elsewhere already
        spec = dataclasses.replace(spec, tools=mock_tools.for_case(case))
    run = new_run(case, eval_set_id, run_index, spec)
    deadline = None if timeout is None else time.monotonic() + timeout
    ended: float | None = None  # when the turns ended (None: cancelled at the limit)
    with anyio.move_on_after(timeout) as scope, \
            replay_case(eval_set_id, case.eval_id, run_index) as cassette:
        ended = await _converse(adapter, case, spec, run, simulator, deadline, on_turn)
    if cassette is not None:
        replay_outcome(cassette, run)
    if timeout is not None and (scope.cancelled_caught or ended is None
                                or (deadline is not None and ended > deadline)):
        run.error_message = timeout_message(timeout, len(run.actual))
    set_session_details(run, spec)
    return run


def replay_outcome(cassette: Cassette, run: CaseRun) -> None:
    """A replayed case run's divergence, if any, on its record: the error it ended with (the
    replay stopped there), or a warning when the run carried on live."""
    cassette.end()
    if cassette.divergence is None:
        return
    if cassette.then == "live":
        run.warnings.append(f"{cassette.divergence}; carried on live from there")
    else:  # said as it is: not as the agent (ADK, say) wrapped the exception, nor where it was raised
        run.error_message = f"ReplayDiverged: {cassette.divergence}"


async def _converse(adapter: AgentAdapter, case: EvalCase, spec: SessionSpec, run: CaseRun,
                    simulator: SimulatorFactory | None, deadline: float | None = None,
                    on_turn: Callable[[Invocation], None] | None = None) -> float:
    """The turns of one case run, recorded into `run` as they finish; returns when (monotonic
    clock) they ended, before the session is closed. A turn that finishes after `deadline` is
    not recorded, and ends the run."""
    session = None
    try:
        session = await adapter.start_session(spec)
        i = 0
        async for user_content, observe in _user_turns(case, simulator, run.warnings):
            started = time.perf_counter()
            replay_turn(i)
            with span("invocation", f"invocation {i}", {
                    "agenteval.invocation_index": i, "input.value": user_content.text(),
                    "gen_ai.conversation.id": spec.session_id}) as recorded:
                if spec.tools is not None:
                    spec.tools.begin_turn(i)
                turn = await session.send(user_content)
                if spec.tools is not None:
                    if spec.tools.refused is not None:  # even if the agent caught it
                        raise spec.tools.refused
                    spec.tools.mark(turn.events)
                if deadline is not None and time.monotonic() > deadline:
                    # Late (the agent swallowed the cancellation, or held the interpreter): the
                    # turn did not finish within the limit, and is not recorded.
                    return time.monotonic()
                if recorded is not None:
                    recorded.set("output.value", content_text(turn.final_response))
            elapsed = time.perf_counter() - started
            observe(turn)
            fig = None  # the figures of the turn's span, when it was traced
            if recorded is not None and (current := current_recorder()) is not None:
                fig = figures(current.trace, recorded.span)
            invocation = record_turn(spec.session_id, i, user_content, turn, elapsed, fig, run.warnings)
            run.actual.append(invocation)
            if on_turn is not None:
                on_turn(invocation)
            i += 1
        run.session_state = make_safe(session.state(), "session state", run.warnings)
        return time.monotonic()
    except (Exception, SystemExit) as e:  # the agent's failure belongs to this case, not the run
        # SystemExit too: an agent calling sys.exit() must not end the run (KeyboardInterrupt
        # and cancellation still do).
        refused = spec.tools.refused if spec.tools is not None else None
        # A strict refusal, not ADK's wrapping of it; made safe as the agent's values are (its
        # message may hold a lone surrogate, which failed the journal's and history's writing).
        run.error_message = make_safe(describe(refused or e), "error", run.warnings)
        return time.monotonic()
    finally:
        if session is not None:
            # Shielded, so a session is closed even when the case was cancelled (timed out);
            # bounded, so a close that hangs cannot hang the run.
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_SECONDS):
                try:
                    await session.close()
                except (Exception, SystemExit) as e:
                    run.error_message = run.error_message or make_safe(describe(e), "error", run.warnings)
