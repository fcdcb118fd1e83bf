"""`agenteval collect`: a live OTLP/HTTP receiver that scores an agent's conversations as its
spans arrive and records each in the run history (`agenteval.collector`)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

import click

from agenteval.cli import options as opt

# Reference-free by default: one verdict per turn on the embedded judge (no key, no network).
DEFAULT_FREE_CRITERIA: dict[str, Any] = {"safety_v1": 0.8}


def _collect(eval_sets: tuple[str, ...], config_file_path: str | None, host: str, port: int,
             grpc_port: int | None, quiet_seconds: float, sample_rate: float,
             max_judge_calls_per_minute: float | None,
             judge_model: str | None, max_spans: int, max_traces: int, parallelism: int,
             no_cache: bool, at_stop: str = "hold") -> int:
    from pathlib import Path

    from agenteval.collector import Assembler, Collector, ConversationScorer, JudgeBudget, Limits, Receiver
    from agenteval.collector import held as held_file
    from agenteval.collector.grpc_receiver import GrpcReceiver, available
    from agenteval.collector.scoring import Outcome, Target
    from agenteval.datasets import load_eval_set
    from agenteval.datasets.config import load_eval_config
    from agenteval.errors import DataError
    from agenteval.runner import Services, resolve_config
    from agenteval.schema import Concurrency, EvalConfig
    from agenteval.store import RunStore

    if not 0.0 <= sample_rate <= 1.0:
        raise DataError(None, "--sample_rate", f"must be between 0 and 1, got {sample_rate}")
    targets = []
    for path in eval_sets:
        eval_set = load_eval_set(path)
        config, source = resolve_config(None, path)
        targets.append(Target(Path(path), eval_set, config, source))
    free = load_eval_config(config_file_path) if config_file_path else \
        EvalConfig.model_validate({"criteria": DEFAULT_FREE_CRITERIA})
    RunStore(".").check()
    # read before anything listens: a file that is not one stops here, naming it
    held_at, held = held_file.held_path("."), held_file.load(held_file.held_path("."))
    services = Services.create(dict(os.environ), Concurrency(cases=parallelism), store_root=".",
                               no_cache=no_cache)
    budget = JudgeBudget(max_judge_calls_per_minute) if max_judge_calls_per_minute else None
    scorer = ConversationScorer(".", services, targets, free, free_source=config_file_path,
                                judge_model=judge_model, sample_rate=sample_rate, budget=budget,
                                argv=sys.argv[1:])

    def log(message: str) -> None:
        click.echo(f"collect: {message}", err=True)

    def said(outcome: Outcome, seconds: float) -> None:
        if outcome.status == "sampled_out":
            return
        if outcome.status == "skipped":
            log(f"skipped {outcome.key!r}: {outcome.reason}")
            return
        verdict = click.style("passed", fg="green") if outcome.passed else click.style("failed", fg="red")
        where = f"{outcome.eval_set_id}/{outcome.eval_id}"
        note = f" ({outcome.reason})" if outcome.reason else ""
        click.echo(f"{verdict} {where}: {outcome.turns} turn(s), run {outcome.result_id}, "
                   f"recorded {seconds:.1f} s after its last span{note}")

    try:
        limits = Limits(quiet_seconds, max_spans=max_spans, max_traces=max_traces)
    except ValueError as e:
        raise DataError(None, "--quiet_seconds", str(e)) from None
    try:
        receiver = Receiver(Assembler(limits), host, port, log=log)
    except OSError as e:  # an address that resolves to no host is --host's fault, not --port's
        import socket

        flag = "--host" if isinstance(e, socket.gaierror) else "--port"
        raise DataError(None, flag, f"cannot listen on {host}:{port}: {e}") from None
    grpc = None
    if grpc_port is not None and available():
        try:
            grpc = GrpcReceiver(receiver.assembler, host, grpc_port, log=log)
        except OSError as e:
            receiver.stop()
            raise DataError(None, "--grpc_port", f"cannot listen on {host}:{grpc_port}: {e}") from None
    if held is not None:
        receiver.assembler.restore(held, receiver.clock())
        held_at.unlink()
        if held.conversations:
            click.echo(f"Going on with {len(held.conversations)} conversation(s) ({held.spans} spans) still "
                       f"open when collect last stopped here (kept in {held_at}).")
    collector = Collector(receiver, scorer, parallelism=parallelism, on_outcome=said, log=log)
    collector.start()
    if grpc is not None:
        grpc.start()
    names = ", ".join(m.name for m in scorer.free_metrics())
    click.echo(f"Receiving OTLP/HTTP traces on http://{host}:{receiver.port}/v1/traces (protobuf or JSON); "
               f"a conversation is scored {quiet_seconds:g} s after its last span. Unmatched conversations: "
               f"{names}. Ctrl-C to stop.")
    if grpc is not None:
        click.echo(f"Receiving OTLP/gRPC traces on {host}:{grpc.port}.")
    elif grpc_port is not None:
        click.echo("OTLP/gRPC is off: pip install 'agenteval[grpc]' to receive it (or use OTLP/HTTP).")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    doing = "scoring the conversations still held" if at_stop == "score" else \
        "finishing the conversations being scored"
    click.echo(f"Stopping: {doing} (Ctrl-C again to quit now).")
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if grpc is not None:
        grpc.stop()
    collector.stop(drain=at_stop == "score")
    # the conversations still open, kept for the next start here: a restart mid-conversation
    # scores it once, whole (and the traces scored, so their late spans are still dropped)
    kept = receiver.assembler.hold()
    held_file.save(held_at, kept)
    if kept.conversations:
        click.echo(f"Kept {len(kept.conversations)} conversation(s) still open ({kept.spans} spans) in "
                   f"{held_at}: the next `agenteval collect` in this directory goes on with them "
                   "(--at_stop score scores them at stop instead).")
    c = receiver.counters
    if grpc is not None:
        c.add(grpc.counters)
    a = receiver.assembler
    click.echo(f"Received {c.spans} spans in {c.requests} requests ({c.rejected} rejected"
               + (f", {c.cancelled} cancelled by the client part-way" if c.cancelled else "") + "); "
               f"evicted {a.evicted_traces} traces ({a.evicted_spans} spans) and dropped "
               f"{a.dropped_spans} spans over the limits"
               + (f"; {a.duplicate_spans} spans sent again (exporter retries) were held once"
                  if a.duplicate_spans else "")
               + (f"; {a.late_spans} spans arriving after their conversation was scored were dropped"
                  if a.late_spans else "") + ".")
    return 0


@click.command()
@click.option("--eval_set", "--eval-set", "eval_sets", multiple=True, type=click.Path(dir_okay=False),
              help="An eval set whose cases conversations are matched against (by session id = eval "
              "id, or by the first user message) and scored with its criteria. Repeatable.")
@click.option("--config_file_path", "--config-file-path", "config_file_path",
              type=click.Path(dir_okay=False),
              help="Eval config of the reference-free criteria for conversations that match no case "
              "(default: safety_v1 0.8 on the embedded judge).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=4318, show_default=True, type=click.IntRange(0, 65535),
              help="Port for OTLP/HTTP (0: any free port).")
@click.option("--grpc_port", "--grpc-port", default=4317, show_default=True, type=click.IntRange(0, 65535),
              help="Port for OTLP/gRPC, when grpcio is installed (pip install 'agenteval[grpc]'; 0: any "
              "free port).")
@click.option("--no_grpc", "--no-grpc", is_flag=True, help="Do not serve OTLP/gRPC.")
@click.option("--quiet_seconds", "--quiet-seconds", default=5.0, show_default=True,
              type=opt.FloatRange(min=0),
              help="A conversation is done when none of its traces got a span for this long (a trace "
              "without a session id: also as soon as its root span has ended).")
@click.option("--sample_rate", "--sample-rate", default=1.0, show_default=True,
              type=opt.FloatRange(0, 1),
              help="Share of conversations scored (by a hash of the session id).")
@click.option("--max_judge_calls_per_minute", "--max-judge-calls-per-minute", type=opt.FloatRange(min=0,
              min_open=True), help="Judge budget: beyond it, conversations are scored without their "
              "judged criteria. Default: no limit.")
@opt.judge_model
@click.option("--max_spans", "--max-spans", default=100_000, show_default=True, type=click.IntRange(min=1),
              help="Spans held at most; past it the least recently fed trace is evicted.")
@click.option("--max_traces", "--max-traces", default=10_000, show_default=True, type=click.IntRange(min=1),
              help="Open traces held at most; past it the least recently fed trace is evicted.")
@click.option("--parallelism", default=1, show_default=True, type=click.IntRange(min=1),
              help="Conversations scored at once.")
@click.option("--at_stop", "--at-stop", type=click.Choice(["hold", "score"]), default="hold",
              show_default=True, help="The conversations still open when it stops (Ctrl-C, SIGTERM): "
              "hold them in .agenteval/collect.held.json for the next collect in this directory to go on "
              "with (a restart mid-conversation scores it once, whole), or score them as they are.")
@opt.no_cache
def collect(eval_sets: tuple[str, ...], config_file_path: str | None, host: str, port: int,
            grpc_port: int, no_grpc: bool, quiet_seconds: float, sample_rate: float,
            max_judge_calls_per_minute: float | None,
            judge_model: str | None, max_spans: int, max_traces: int, parallelism: int,
            at_stop: str, no_cache: bool) -> None:
    """Receive an agent's OpenTelemetry traces live (OTLP/HTTP on /v1/traces), score each
    conversation when it is done and record it in ./.agenteval (see `agenteval runs`, `agenteval web`)."""
    sys.exit(opt.guard(_collect, eval_sets, config_file_path, host, port, None if no_grpc else grpc_port,
                       quiet_seconds, sample_rate, max_judge_calls_per_minute, judge_model, max_spans,
                       max_traces, parallelism, no_cache, at_stop))
