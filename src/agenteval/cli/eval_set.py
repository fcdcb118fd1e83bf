"""`agenteval eval_set ...`: write eval sets beside an agent (ADK's `adk eval_set` commands, and
`record` and `generate_eval_cases` on any model)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from agenteval.cli import options as opt


@click.group(name="eval_set")
def eval_set() -> None:
    """Create eval sets and add cases to them (AGENT_PATH/EVAL_SET_ID.evalset.json)."""
    from agenteval.errors import configure_logging

    configure_logging("WARNING")  # as `eval`'s: google-adk's tracebacks of a failing turn in one line


def _create(agent_path: str, eval_set_id: str) -> int:
    from agenteval.datasets.authoring import create_eval_set

    click.echo(f"Created {create_eval_set(agent_path, eval_set_id)}")
    return 0


@eval_set.command()
@click.argument("agent_path", type=click.Path(exists=True, file_okay=False))
@click.argument("eval_set_id")
def create(agent_path: str, eval_set_id: str) -> None:
    """Create an empty eval set EVAL_SET_ID for the agent (an error if it exists)."""
    sys.exit(opt.guard(_create, agent_path, eval_set_id))


def _existing_set(agent_path: str, eval_set_id: str) -> Path:
    """The set's file, which must exist: a mistyped id makes no new set (as `adk eval_set
    add_eval_case`); checked before any agent or model runs."""
    from agenteval.datasets.authoring import eval_set_path
    from agenteval.errors import DataError

    path = eval_set_path(agent_path, eval_set_id)
    if not path.is_file():
        raise DataError(path, "", f"no such eval set; make it first: agenteval eval_set create "
                        f"{agent_path} {eval_set_id}")
    return path


def _add(agent_path: str, eval_set_id: str, scenarios_file: str, session_input_file: str | None) -> int:
    from agenteval.datasets.authoring import (
        add_cases,
        load_scenarios,
        load_session_input,
        scenario_cases,
    )

    _existing_set(agent_path, eval_set_id)
    session = load_session_input(session_input_file) if session_input_file else None
    added, skipped = add_cases(agent_path, eval_set_id, scenario_cases(load_scenarios(scenarios_file),
                                                                        session), skip_existing=True)
    click.echo(f"Added {len(added)} scenario case(s) to {eval_set_id}"
               + (f"; {len(skipped)} already there: {', '.join(skipped)}" if skipped else ""))
    return 0


@eval_set.command(name="add_eval_case")
@click.argument("agent_path", type=click.Path(exists=True, file_okay=False))
@click.argument("eval_set_id")
@click.option("--scenarios_file", "--scenarios-file", required=True, type=click.Path(dir_okay=False),
              help='Conversation scenarios: {"scenarios": [{"starting_prompt", "conversation_plan", ...}]}.')
@click.option("--session_input_file", "--session-input-file", type=click.Path(dir_okay=False),
              help="The session each case starts with: {app_name, user_id, state}.")
def add_eval_case(agent_path: str, eval_set_id: str, scenarios_file: str,
                  session_input_file: str | None) -> None:
    """Add one conversation-scenario case per scenario to the existing set EVAL_SET_ID (`eval_set
    create` makes it; ids as ADK makes them; existing ones skipped)."""
    sys.exit(opt.guard(_add, agent_path, eval_set_id, scenarios_file, session_input_file))


def _rebuild(agent_path: str, eval_set_id: str, eval_ids: list[str], agent_model: str | None) -> int:
    import os

    from agenteval.agents import load_root_agent, to_adapter
    from agenteval.authoring import rerecord_case
    from agenteval.datasets.authoring import eval_set_path
    from agenteval.datasets.files import editing, write_as_read
    from agenteval.datasets.loader import load_eval_set, load_eval_set_to_edit
    from agenteval.errors import DataError
    from agenteval.runner.services import Services
    from agenteval.runner.sync import run_sync
    from agenteval.schema import EvalCase

    path = eval_set_path(agent_path, eval_set_id)
    if not path.exists():
        raise DataError(path, "", "no such eval set: --rebuild re-records an existing set")
    eval_set = load_eval_set_to_edit(path)
    known = {c.eval_id for c in eval_set.eval_cases}
    if unknown := [i for i in eval_ids if i not in known]:
        raise DataError(path, "eval_cases", f"no case {', '.join(map(repr, unknown))}")
    chosen = [c for c in eval_set.eval_cases if c.conversation is not None
              and (not eval_ids or c.eval_id in eval_ids)]
    services = Services.create(dict(os.environ))
    adapter = to_adapter(load_root_agent(agent_path), services.models.get, agent_model)

    async def rerecord() -> dict[str, EvalCase]:
        # One case at a time, in the set's order; any failure leaves the file as it was.
        return {c.eval_id: await rerecord_case(adapter, c, eval_set_id, Path(agent_path).resolve().name)
                for c in chosen}

    new = run_sync(rerecord())
    with editing(path):  # the set as it is now: a case added while the agent ran is kept
        eval_set = load_eval_set(path)
        eval_set.eval_cases = [new.get(c.eval_id, c) for c in eval_set.eval_cases]
        write_as_read(path, eval_set)
        load_eval_set(path)  # what was written loads
    left = sum(c.conversation is None for c in eval_set.eval_cases)
    click.echo(f"Re-recorded {len(new)} case(s) of {eval_set_id} from a live run"
               + (f"; {left} conversation-scenario case(s) left as they are" if left else ""))
    return 0


def _pickable(eval_id: str | None) -> None:
    """Refuses a new case id that `FILE:id1,id2` could not pick out (one rule with the web's:
    `datasets.authoring.check_new_case_id`), an empty one too (not taken for "no id given");
    ids of ADK's own files are not checked."""
    if eval_id is not None:
        from agenteval.datasets.authoring import check_new_case_id

        check_new_case_id(eval_id, "--eval_id")


def _record(agent_path: str, eval_set_id: str, prompts: tuple[str, ...], prompts_file: str | None,
            eval_id: str | None, agent_model: str | None, rebuild: bool = False) -> int:
    import os

    from agenteval.agents import load_root_agent, to_adapter
    from agenteval.authoring import record_case, recorded_id
    from agenteval.datasets.authoring import add_cases
    from agenteval.datasets.files import read_bytes
    from agenteval.datasets.loader import load_eval_set_to_edit
    from agenteval.errors import DataError
    from agenteval.runner.services import Services
    from agenteval.runner.sync import run_sync

    if rebuild:
        if prompts or prompts_file:
            raise DataError(None, "--rebuild", "re-records the set's own user turns: give no --prompt "
                            "or --prompts_file")
        return _rebuild(agent_path, eval_set_id, [eval_id] if eval_id else [], agent_model)
    # A bad or missing set fails before the agent runs; so do a case id that is empty or taken
    # (the one given, or the one the prompts make) and an empty message (as --prompts_file's
    # blank lines are skipped).
    path = _existing_set(agent_path, eval_set_id)
    if eval_id == "":
        raise DataError(None, "--eval_id", "empty: name the new case, or leave --eval_id out")
    _pickable(eval_id)
    if any(not p.strip() for p in prompts):
        raise DataError(None, "--prompt", "an empty message: each --prompt is a user turn")
    turns = list(prompts)
    if prompts_file:
        try:
            text = read_bytes(prompts_file).decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(prompts_file, "--prompts_file", f"not UTF-8 text ({e.reason} at byte "
                            f"{e.start})") from None
        turns += [line.strip() for line in text.splitlines() if line.strip()]
    if not turns and prompts_file:
        raise DataError(prompts_file, "--prompts_file", "no user message in it (one a line)")
    if not turns:
        raise DataError(None, "--prompt", "give the user's message(s): --prompt TEXT or --prompts_file F")
    new_id = eval_id or recorded_id(turns)
    # before the agent runs: a legacy file, or a taken id, is refused at once
    if new_id in {c.eval_id for c in load_eval_set_to_edit(path).eval_cases}:
        raise DataError(path, "eval_cases", f"already has a case {new_id!r}"
                        + ("" if eval_id else " (recorded from the same prompts): give --eval_id"))
    services = Services.create(dict(os.environ))
    adapter = to_adapter(load_root_agent(agent_path), services.models.get, agent_model)
    case = run_sync(record_case(adapter, turns, new_id, Path(agent_path).resolve().name))
    added, _ = add_cases(agent_path, eval_set_id, [case])
    click.echo(f"Recorded case {added[0]} ({len(turns)} turn(s)) in {eval_set_id}")
    return 0


@eval_set.command()
@click.argument("agent_path", type=click.Path(exists=True, file_okay=False))
@click.argument("eval_set_id")
@click.option("--prompt", "prompts", multiple=True, help="A user message (repeat for more turns).")
@click.option("--prompts_file", "--prompts-file", type=click.Path(exists=True, dir_okay=False),
              help="User messages, one per line (after any --prompt).")
@click.option("--eval_id", "--eval-id", help="The new case's id (default: recorded_<hash>); with "
              "--rebuild, the one case to re-record.")
@click.option("--agent_model", "--agent-model", help="Model for the agent, replacing its own.")
@click.option("--rebuild", is_flag=True, help="Re-record the set's existing static cases instead: "
              "run the agent on each case's user turns and store its answers and tool calls as the "
              "new expectations (like `adk test --rebuild`); all or nothing.")
def record(agent_path: str, eval_set_id: str, prompts: tuple[str, ...], prompts_file: str | None,
           eval_id: str | None, agent_model: str | None, rebuild: bool) -> None:
    """Run the agent on the prompts (one session) and store what it did as a new static case in
    the existing set EVAL_SET_ID (`eval_set create` makes it; a mistyped id makes no new set);
    with --rebuild, re-record the set's cases from a live run. A taken case id is refused before
    the agent runs."""
    sys.exit(opt.guard(_record, agent_path, eval_set_id, prompts, prompts_file, eval_id, agent_model,
                       rebuild))


def _generate(agent_path: str, eval_set_id: str, count: int, model: str, instruction: str | None,
              session_input_file: str | None) -> int:
    import os

    from agenteval.agents import load_root_agent
    from agenteval.authoring import describe_agent, generate_scenarios
    from agenteval.datasets.authoring import add_cases, load_session_input, scenario_cases
    from agenteval.errors import DataError
    from agenteval.models.base import ModelUnavailable
    from agenteval.runner.services import Services
    from agenteval.runner.sync import run_sync

    _existing_set(agent_path, eval_set_id)
    session = load_session_input(session_input_file) if session_input_file else None
    try:
        llm = Services.create(dict(os.environ)).models.get(model)
    except ModelUnavailable as e:  # named by its option, as eval names --judge_model
        raise DataError(None, "--model", str(e)) from None
    description = describe_agent(load_root_agent(agent_path))
    result = run_sync(generate_scenarios(llm, description, count, instruction=instruction))
    added, skipped = add_cases(agent_path, eval_set_id, scenario_cases(result.scenarios, session),
                               skip_existing=True)
    click.echo(f"Generated {len(added)} scenario case(s) in {eval_set_id} from {result.attempts} "
               f"attempt(s) in {result.seconds:.1f} s: {result.first_write_valid} valid as written, "
               f"{result.duplicates} near-duplicate(s) dropped, {len(result.invalid)} invalid"
               + (f", {len(skipped)} already in the set" if skipped else ""))
    for line in result.invalid:
        click.echo(f"  invalid: {line}")
    return 0 if len(added) + len(skipped) >= count else 1


@eval_set.command(name="generate_eval_cases")
@click.argument("agent_path", type=click.Path(exists=True, file_okay=False))
@click.argument("eval_set_id")
@click.option("--count", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--model", default="local", show_default=True, help="The model that writes the scenarios.")
@click.option("--instruction", help="What the scenarios should focus on.")
@click.option("--session_input_file", "--session-input-file", type=click.Path(dir_okay=False))
def generate_eval_cases(agent_path: str, eval_set_id: str, count: int, model: str, instruction: str | None,
                        session_input_file: str | None) -> None:
    """Have a model write COUNT realistic conversation scenarios for the agent (from its
    instruction and tools), checked and deduplicated, and add them as cases to the existing set
    EVAL_SET_ID (`eval_set create` makes it). Exit 1 when fewer than COUNT could be written."""
    sys.exit(opt.guard(_generate, agent_path, eval_set_id, count, model, instruction, session_input_file))


def _from_trace(source: str, case_id: str | None, into: str, eval_id: str | None, root: str) -> int:
    from agenteval.authoring import add_case_to, case_from_source

    _pickable(eval_id)
    case = case_from_source(source, root, case_id, eval_id)
    path = add_case_to(into, case)
    turns = len(case.conversation or [])
    calls = sum(len(inv.tool_calls()) for inv in case.conversation or [])
    click.echo(f"Added case {case.eval_id} ({turns} turn(s), {calls} tool call(s)) to {path}")
    return 0


@eval_set.command(name="from_trace")
@click.argument("source")
@click.option("--case", "case_id", help="Which conversation (its session id) of a trace file, or which "
              "case (its eval_id) of a run; needed when there are several.")
@click.option("--into", required=True, type=click.Path(dir_okay=False),
              help="The eval set file (SET.evalset.json) to add the case to; made when missing.")
@click.option("--eval_id", "--eval-id", help="The new case's id (default: the conversation's or case's).")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=".", show_default=True,
              help="Store root holding .agenteval/ (for a run id).")
def from_trace(source: str, case_id: str | None, into: str, eval_id: str | None, root: str) -> None:
    """Make an eval case from what the agent did: SOURCE is an OTLP/JSON trace file, a result
    file, or a stored run (id, prefix, latest, previous). The user turns, the agent's answers and
    tool calls as the expected ones and the session's final state go into the eval set INTO
    (ADK's format); an eval_id already there is refused."""
    sys.exit(opt.guard(_from_trace, source, case_id, into, eval_id, root))
