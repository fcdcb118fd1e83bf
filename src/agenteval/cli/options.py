"""Shared CLI options (ADK's snake_case spellings and kebab-case aliases) and error handling."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

# `schema.criterion.Rationales`, spelt out: the console script starts without importing pydantic
# (a test checks the two agree).
RATIONALES = ("negative", "always", "never")
F = TypeVar("F", bound=Callable[..., Any])


class FloatRange(click.FloatRange):
    """click's FloatRange, refusing NaN: it would pass every bound, as no comparison with it
    is true, and fail later with a traceback, or not at all (a NaN margin passes everything)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail(f"{value!r} is not a number", param, ctx)
        return number

config_file_path = click.option(
    "--config_file_path", "--config-file-path", "config_file_path",
    type=click.Path(dir_okay=False),
    help="Eval config (criteria). Default: test_config.json beside the eval set, else "
    "tool_trajectory_avg_score 1.0 and response_match_score 0.8.",
)
output = click.option(
    "--output", "-o", type=click.Path(dir_okay=False),
    help="Write the result document (ADK EvalSetResult layout) to this file.",
)
print_detailed_results = click.option(
    "--print_detailed_results", "--print-detailed-results", is_flag=True,
    help="Print per-invocation details: prompts, responses, tool calls and scores.",
)

no_cache = click.option(
    "--no_cache", "--no-cache", is_flag=True,
    help="Ask the judge again instead of reusing cached verdicts (.agenteval/judge_cache.sqlite).",
)
def _model_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A model option's value; an empty one is refused: read as no option it would silently leave
    the config's model in use (`--judge_model "$JUDGE"` with JUDGE unset)."""
    if value is not None and not value.strip():
        raise click.BadParameter("an empty model name: give one (e.g. local, openai:gpt-4o-mini) "
                                 "or leave the option out")
    return value


judge_model = click.option(
    "--judge_model", "--judge-model", callback=_model_name,
    help="Judge model for every LLM-judged criterion (e.g. local, openai:gpt-4o-mini, "
    "openai-compat:M@http://127.0.0.1:8080/v1).",
)


parallelism = click.option(
    "--parallelism", default=4, show_default=True, type=click.IntRange(min=1),
    help="Case runs in flight at once.",
)


def _model_limit(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, int]:
    out: dict[str, int] = {}
    for value in values:
        name, sep, count = value.rpartition("=")
        if not sep or not name or not count.isdigit() or int(count) < 1:
            raise click.BadParameter(f"{value!r}: write MODEL=N with N >= 1, e.g. local=2 or "
                                     "openai:gpt-4o-mini=16")
        out[name] = int(count)
    return out


model_parallelism = click.option(
    "--model_parallelism", "--model-parallelism", "model_parallelism", multiple=True,
    callback=_model_limit, metavar="MODEL=N",
    help="Calls in flight at once to one model endpoint (repeatable), shared by the agent, the "
    "judges and the user simulator. Default: the embedded model's slots; for HTTP endpoints "
    "the larger of 4 and --parallelism.",
)


escalate_judge_model = click.option(
    "--escalate_judge_model", "--escalate-judge-model", metavar="MODEL", callback=_model_name,
    help="Ask this (stronger) judge again whenever a verdict's confidence is below its criterion's "
    "judge_model_options.min_confidence; only those items are escalated.",
)


judge_rationales = click.option(
    "--judge_rationales", "--judge-rationales", type=click.Choice(RATIONALES),
    help="Which judge verdicts get a written rationale: failing ones (negative, the default), all, "
    "or none (never: the verdict alone, the fastest; reasons then give the verdict and its "
    "confidence). Laid over every judged criterion's judge_model_options.rationales.",
)


def judge_endpoint_options(fn: F) -> F:
    """`--judge_timeout S` and `--judge_attempts N`: how long to wait for a judge and how often to try."""
    fn = click.option("--judge_attempts", "--judge-attempts", type=click.IntRange(min=1),
                      help="Tries of one judge call, the first included, for transient failures "
                      "(timeouts, 429, 5xx). Default 3.")(fn)
    return click.option("--judge_timeout", "--judge-timeout", type=FloatRange(min=0, min_open=True),
                        metavar="S", help="Seconds to wait for one judge reply. Default 60.")(fn)


# Runs per case at most (--num_runs, --max_runs): far beyond any use, and a count of case runs
# that stays an index (a bigger one was an OverflowError deep in the run).
MAX_RUNS = 1_000_000


def until_decided_options(fn: F) -> F:
    """`--until_decided` with `--max_runs`, `--decide_alpha` and `--decide_rate`
    (agenteval.verdicts.sequential)."""
    fn = click.option("--decide_rate", "--decide-rate", type=FloatRange(0, 1, min_open=True,
                      max_open=True), default=0.5, show_default=True, metavar="P",
                      help="With --until_decided: a case is decided passed when its pass chance is "
                      "above P, failed when below.")(fn)
    fn = click.option("--decide_alpha", "--decide-alpha", type=FloatRange(0, 1, min_open=True,
                      max_open=True), default=0.05, show_default=True,
                      help="With --until_decided: the chance that a case's decision is wrong, at "
                      "most.")(fn)
    fn = click.option("--max_runs", "--max-runs", type=click.IntRange(min=1, max=MAX_RUNS), default=10,
                      show_default=True, help="With --until_decided: runs per case at most.")(fn)
    return click.option("--until_decided", "--until-decided", is_flag=True,
                        help="After the first --num_runs, run again only the cases whose pass / "
                        "fail is not decided yet (an anytime-valid sequential rule), until each is "
                        "decided or has had --max_runs runs.")(fn)


def mock_tools_options(fn: F) -> F:
    """`--mock_tools expected|live` and `--mock_tools_strict` (agenteval.agents.mock_tools)."""
    fn = click.option("--mock_tools_strict", "--mock-tools-strict", is_flag=True, default=None,
                      help="With --mock_tools expected: a tool call matching no expected call fails "
                      "the case, naming the call, instead of running the tool.")(fn)
    return click.option("--mock_tools", "--mock-tools", type=click.Choice(["expected", "live"]),
                        help="expected: a tool call matching an expected call of the same invocation "
                        "(name and arguments) gets that call's recorded response and the tool does "
                        "not run; live: every tool runs. Default: the config's mock_tools (a mode per "
                        "tool there), else live.")(fn)


otlp_endpoint = click.option(
    "--otlp_endpoint", "--otlp-endpoint", metavar="URL",
    help="Export the run's traces over OTLP/HTTP to this collector (base URL, e.g. "
    "http://localhost:4318; default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or "
    "$OTEL_EXPORTER_OTLP_ENDPOINT when set). A collector that refuses them is a warning, not a "
    "failed run. Needs pip install 'agenteval[otel]'.",
)


def otlp_from(flag: str | None, env: dict[str, str]) -> str | None:
    """The OTLP endpoint: the flag, else the standard OpenTelemetry variables (the traces URL as
    it is, or the base URL), else None (nothing is exported). One that is no http(s) URL is a
    usage error naming the flag or variable: it would fail only once the run is over."""
    from urllib.parse import urlsplit

    for name in ("--otlp_endpoint", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        value = flag if name == "--otlp_endpoint" else env.get(name)
        if not value:
            continue
        url = urlsplit(value)
        if url.scheme not in ("http", "https") or not url.netloc:
            raise click.BadParameter(f"{value!r}: expected an http:// or https:// URL (OTLP/HTTP)",
                                     param_hint=name)
        return value
    return None


def report_options(fn: F) -> F:
    """The report-file options: `junit_xml`, `html`, `markdown` (each a path or None)."""
    fn = click.option("--markdown", type=click.Path(dir_okay=False),
                      help="Write a Markdown summary (e.g. to $GITHUB_STEP_SUMMARY).")(fn)
    fn = click.option("--html", type=click.Path(dir_okay=False),
                      help="Write a self-contained HTML report.")(fn)
    return click.option("--junit_xml", "--junit-xml", "junit_xml", type=click.Path(dir_okay=False),
                        help="Write a JUnit XML report (one testcase per eval case).")(fn)


def check_needs(needs: dict[str, tuple[str, bool]]) -> None:
    """A usage error when an option given on the command line applies only with another that is
    not given (`needs`: option name → (the other, as said, and whether it is there)): it would
    be silently ignored."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    for name, (other, there) in needs.items():
        if not there and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE:
            flag = next(p.opts[0] for p in ctx.command.params if p.name == name)
            raise click.UsageError(f"{flag} applies only with {other}")


def run_inputs(what: str, ref: str, root: str) -> dict[str, str | Path | None]:
    """What a command reading RUN `ref` reads, which none of its outputs may name
    (`check_targets`): the file itself, or a stored run's documents. Nothing for a stored run
    that cannot be found (the command says so when it reads it)."""
    from agenteval.errors import DataError
    from agenteval.store import RunStore
    from agenteval.store.lookup import is_path

    if is_path(ref):
        return {what: ref}
    store = RunStore(root)
    try:
        documents = store.run_documents(ref) or [store.resolve(ref)]
    except DataError:
        return {}
    return {f"{what}'s document {d.run_id}": d.result_path for d in documents}


def stores_hint(database: str | Path | None) -> str:
    """When the run database `database` does not exist: where runs are recorded instead (`eval`
    records an agent's under its folder, so `agenteval runs` run beside it finds none), as a
    sentence to add to the message; else ''."""
    if database is None or Path(database).exists():
        return ""
    root = Path(database).parent.parent
    found = sorted(p.parent.parent.name for p in root.glob("*/.agenteval/history.sqlite"))
    if not found and any((root / name).exists() for name in ("agent.py", "__init__.py")):
        # --root names the agent's folder already: its runs are yet to be recorded
        return (f"; no run of the agent in {root} is recorded yet: `agenteval eval {root} EVAL_SET` "
                "records one")
    if not found:
        return "; `eval` records an agent's runs under its folder: give --root AGENT_PATH"
    return (f"; `eval` records an agent's runs under its folder: give --root {found[0]}"
            + (f" (runs are also under {', '.join(found[1:4])}{', ...' if len(found) > 4 else ''})"
               if len(found) > 1 else ""))


def _hint(e: Exception) -> str:
    """`stores_hint` for a run the run history does not know."""
    db = sys.modules.get("agenteval.store.db")  # (not imported: the error is not one of its)
    return stores_hint(e.file) if db is not None and isinstance(e, db.UnknownRun) else ""


def guard(fn: Callable[..., int], *args: Any) -> int:
    """Runs a command; bad input prints one line naming file and key and returns 2."""
    from agenteval.errors import AgentEvalError, unwrap

    try:
        return fn(*args)
    except AgentEvalError as e:
        click.echo(f"error: {e}{_hint(e)}", err=True)
        return 2
    except Exception as e:
        # A task group wraps what its task raised: a refusal from inside the run (a full disk
        # under the journal, say) is still one line and exit 2, not a group's traceback.
        inner = unwrap(e)
        if not isinstance(inner, AgentEvalError):
            raise
        click.echo(f"error: {inner}", err=True)
        return 2
