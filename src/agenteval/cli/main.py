"""The `agenteval` command line: a thin front end over the runner and the result document.

Start-up stays fast: commands import the package's heavy parts only when they run.
Exit codes: 0 every case passed, 1 a case failed, 2 bad input, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from agenteval.cli import options as opt
from agenteval.cli import pipe, teardown
from agenteval.cli.options import report_options

# The commands defined in modules of their own, by name: each module is imported when its
# command is asked for (or the command list is shown), not by every command's start (their
# modules were 1.5% of `eval`'s start-up to its first model call).
_ELSEWHERE = {
    "runs": "agenteval.cli.history", "report": "agenteval.cli.history",
    "compare": "agenteval.cli.compare", "trace": "agenteval.cli.trace", "judge": "agenteval.cli.judge",
    "eval_set": "agenteval.cli.eval_set", "web": "agenteval.cli.web", "collect": "agenteval.cli.collect",
}


class _Commands(click.Group):
    """The command group; Ctrl-C anywhere in a command (its start included, before a run has
    begun) exits 130, as a shell reports it: click's own answer ("Aborted!", exit 1) would say
    that a case failed. The commands of `_ELSEWHERE` are added when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_ELSEWHERE})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _ELSEWHERE.get(cmd_name)
        if module is not None and cmd_name not in self.commands:
            command = getattr(importlib.import_module(module), cmd_name)
            if not isinstance(command, click.Command):  # (a renamed command: a bug, said at once)
                raise TypeError(f"{module}.{cmd_name} is not the {cmd_name!r} command")
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("\ninterrupted", err=True)
            ctx.exit(130)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agenteval")
def cli() -> None:
    """Evaluate AI agents: final responses and tool trajectories against eval sets."""


@cli.command()
@click.argument("expected_evalset", type=click.Path(dir_okay=False))
@click.option("--actual", "actual_evalset", required=True, type=click.Path(dir_okay=False),
              help="Eval set holding what the agent did, with the same eval ids.")
@opt.config_file_path
@opt.output
@opt.print_detailed_results
@opt.parallelism
@opt.model_parallelism
@opt.judge_model
@opt.escalate_judge_model
@opt.judge_rationales
@opt.judge_endpoint_options
@opt.no_cache
@report_options
@opt.otlp_endpoint
@click.option("--history", is_flag=True,
              help="Also save the result into ./.agenteval/eval_history and record it in the run "
              "database (see `agenteval runs`).")
def score(expected_evalset: str, actual_evalset: str, config_file_path: str | None,
          output: str | None, print_detailed_results: bool, parallelism: int,
          model_parallelism: dict[str, int], judge_model: str | None,
          escalate_judge_model: str | None, judge_rationales: str | None, judge_timeout: float | None,
          judge_attempts: int | None, no_cache: bool, junit_xml: str | None, html: str | None,
          markdown: str | None, otlp_endpoint: str | None, history: bool) -> None:
    """Score a recorded run (ACTUAL) against EXPECTED_EVALSET without running any agent.

    Judge verdicts are cached in ./.agenteval/judge_cache.sqlite, so re-scoring unchanged
    results makes no model calls. Large indented files with deterministic criteria only are
    scored in worker processes: up to --parallelism, at most one per CPU this command may use
    (whatever other programs are doing as it starts).
    """
    from agenteval.cli.commands import Outputs, ScoreArgs, score_command

    sys.exit(opt.guard(score_command, ScoreArgs(
        expected=expected_evalset, actual=actual_evalset, config_file_path=config_file_path,
        detailed=print_detailed_results, judge_model=judge_model, no_cache=no_cache,
        parallelism=parallelism, model_parallelism=model_parallelism,
        judge_timeout=judge_timeout, judge_attempts=judge_attempts,
        escalate_judge_model=escalate_judge_model, judge_rationales=judge_rationales,
        outputs=Outputs(output=output, junit_xml=junit_xml, html=html, markdown=markdown,
                        history_root="." if history else None,
                        otlp_endpoint=opt.otlp_from(otlp_endpoint, dict(os.environ))))))


@cli.command(name="eval")
@click.argument("agent_path", type=click.Path())
@click.argument("eval_set_file_or_id", nargs=-1, required=True)
@opt.config_file_path
@opt.print_detailed_results
@opt.output
@click.option("--num_runs", "--num-runs", default=1, show_default=True,
              type=click.IntRange(min=1, max=opt.MAX_RUNS),
              help="Run every case this many times.")
@opt.until_decided_options
@opt.parallelism
@opt.model_parallelism
@click.option("--agent_model", "--agent-model", help="Model for the agent, replacing its own "
              "(e.g. local, openai:gpt-4o-mini, ollama:qwen2.5, openai-compat:M@http://host/v1).")
@opt.judge_model
@opt.escalate_judge_model
@opt.judge_rationales
@opt.judge_endpoint_options
@opt.no_cache
@click.option("--eval_storage_uri", "--eval-storage-uri", hidden=True,
              help="Accepted for adk eval compatibility; only local storage is supported.")
@click.option("--log_level", "--log-level", default="WARNING", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
                                case_sensitive=False))
@click.option("--no_history", "--no-history", is_flag=True,
              help="Do not write the result into the agent's .agenteval/eval_history.")
@click.option("--no_traces", "--no-traces", is_flag=True,
              help="Do not record what the agent did inside each invocation (spans).")
@click.option("--case_timeout", "--case-timeout", type=opt.FloatRange(min=0, min_open=True), metavar="S",
              help="Stop a case run after S seconds and record it with a timeout error (the run goes "
              "on). Default: the config's case_timeout, else none.")
@click.option("--isolation", type=click.Choice(["none", "process"]),
              help="Where the agent's turns run: this process (none), or a worker process per case "
              "run in flight, killed when a case passes --case_timeout (process). Default: the "
              "config's isolation, else none.")
@click.option("--resume", metavar="RUN",
              help="Finish the interrupted run RUN (its id, a unique prefix, or latest; see `agenteval "
              "runs`): run only the case runs it lacks. The eval sets and config must be unchanged. "
              "One process owns a run; a finished one is not run again.")
@click.option("--retry_errors", "--retry-errors", metavar="RUN",
              help="Like --resume, and also run again the case runs of RUN that ended in an agent or "
              "judge error.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where case runs go: this process, or a Ray cluster (pip install 'agenteval[ray]').")
@click.option("--ray_address", "--ray-address", metavar="auto|ray://HOST:PORT",
              help="With --executor ray: the cluster to use. Default: the one `ray start` runs on this "
              "machine, else a new local one.")
@click.option("--replay", metavar="RUN",
              help="Replay the recorded run RUN (a run id, prefix or latest, or a result document): "
              "model replies and tool results come from its traces, each model request is compared "
              "with the recorded one, and the first divergence is reported. No model or tool is called.")
@click.option("--replay_then", "--replay-then", type=click.Choice(["stop", "live"]), default="stop",
              show_default=True, help="With --replay, after a divergence: end the case there with "
              "the divergence as its error (stop), or carry on with the real model and tools (live).")
@opt.mock_tools_options
@report_options
@opt.otlp_endpoint
def eval_(agent_path: str, eval_set_file_or_id: tuple[str, ...], config_file_path: str | None,
          print_detailed_results: bool, output: str | None, num_runs: int, parallelism: int,
          model_parallelism: dict[str, int], agent_model: str | None, judge_model: str | None,
          escalate_judge_model: str | None, judge_rationales: str | None, judge_timeout: float | None,
          judge_attempts: int | None, eval_storage_uri: str | None,
          log_level: str, no_history: bool, no_traces: bool, case_timeout: float | None,
          resume: str | None, retry_errors: str | None, no_cache: bool, junit_xml: str | None,
          html: str | None, markdown: str | None, otlp_endpoint: str | None, executor: str,
          ray_address: str | None, isolation: str | None, until_decided: bool, max_runs: int,
          decide_alpha: float, decide_rate: float, replay: str | None, replay_then: str,
          mock_tools: str | None, mock_tools_strict: bool | None) -> None:
    """Run the agent at AGENT_PATH over eval sets and score what it did.

    Each EVAL_SET_FILE_OR_ID is an eval-set file, optionally followed by `:id1,id2` to select
    cases, or the id of a set stored as <AGENT_PATH>/<id>.evalset.json.
    """
    with teardown.imports_settled():  # (most of eval's start-up: ~700 modules' objects, kept)
        from agenteval.cli.run import EvalArgs, eval_command
        from agenteval.runner.request import RunOutputs, RunRequest

    opt.check_needs({"max_runs": ("--until_decided", until_decided),
                     "decide_alpha": ("--until_decided", until_decided),
                     "decide_rate": ("--until_decided", until_decided),
                     "replay_then": ("--replay", replay is not None),
                     "mock_tools_strict": ("--mock_tools expected", mock_tools != "live")})
    if replay is not None and (mock_tools is not None or mock_tools_strict is not None):  # set aside
        flag = "--mock_tools" if mock_tools is not None else "--mock_tools_strict"
        raise click.UsageError(f"{flag} does not apply with --replay (the recording answers the tool "
                               "calls; the config's mock_tools is set aside)")
    if resume is not None and retry_errors is not None:  # one would silently win over the other
        raise click.UsageError("--resume and --retry_errors both name the run to finish: give one "
                               "(--retry_errors RUN finishes RUN too, running its errors again)")
    request = RunRequest(
        agent_path=agent_path, eval_sets=list(eval_set_file_or_id), config_file=config_file_path,
        num_runs=num_runs, parallelism=parallelism, model_parallelism=model_parallelism,
        agent_model=agent_model, judge_model=judge_model, escalate_judge_model=escalate_judge_model,
        judge_rationales=judge_rationales,
        judge_timeout=judge_timeout, judge_attempts=judge_attempts, no_cache=no_cache,
        traces=not no_traces, case_timeout=case_timeout, isolation=isolation,
        resume=retry_errors or resume, retry_errors=retry_errors is not None,
        executor=executor, ray_address=ray_address, history=not no_history,
        until_decided=until_decided, max_runs=max_runs, decide_alpha=decide_alpha,
        decide_rate=decide_rate, mock_tools=mock_tools, mock_tools_strict=mock_tools_strict,
        outputs=RunOutputs(output=output, junit_xml=junit_xml, html=html, markdown=markdown,
                           otlp_endpoint=opt.otlp_from(otlp_endpoint, dict(os.environ))))
    sys.exit(opt.guard(eval_command, EvalArgs(request, detailed=print_detailed_results,
                                              log_level=log_level, eval_storage_uri=eval_storage_uri,
                                              replay=replay, replay_then=replay_then)))


@cli.command()
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--initial_session_file", "--initial-session-file", type=click.Path(dir_okay=False),
              help="Session file whose app, user and state become the case's session_input.")
@click.option("--force", is_flag=True, help="Replace NEW if it exists (never OLD itself).")
def migrate(old: str, new: str, initial_session_file: str | None, force: bool) -> None:
    """Convert a legacy *.test.json (or old eval-set list) file OLD into an eval set NEW."""
    from agenteval.cli.commands import migrate_command

    sys.exit(opt.guard(migrate_command, old, new, initial_session_file, force))


def main(argv: list[str] | None = None) -> Any:
    """Console-script (and `python -m agenteval`) entry point.

    A command that kept its objects for the end (see `teardown`) ends the process here with its
    exit code, without the interpreter's teardown.
    """
    teardown.arm()
    for stream in (sys.stdout, sys.stderr):
        # A terminal or pipe that cannot show a character (a non-UTF-8 locale) gets an escape
        # instead of ending the command with a UnicodeEncodeError.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    # A reader that stops reading (`| head`) ends what is printed, not the command.
    sys.stdout, sys.stderr = pipe.guard(sys.stdout), pipe.guard(sys.stderr)
    try:
        return cli.main(args=argv, prog_name="agenteval")
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            teardown.exit_fast(e.code or 0)
        raise
