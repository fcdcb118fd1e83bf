"""OTLP over gRPC (`opentelemetry.proto.collector.trace.v1.TraceService/Export`, port 4317 by
default), feeding the same `Assembler` as the HTTP receiver. Needs `grpcio` (the `grpc` extra:
pip install 'agenteval[grpc]'); `available()` says whether it is installed.

A request that is no protobuf, or whose spans are malformed, is refused with INVALID_ARGUMENT
and the reason; a message over `max_message_bytes` with RESOURCE_EXHAUSTED. Each refusal is
logged and counted (`counters.rejected`). A call that ends before its message arrived (the
client cancelled the upload part-way, or its deadline passed) is no refusal: it is logged and
counted as cancelled (`counters.cancelled`).

gRPC's core refuses a message over its receive limit itself, and the handler then sees what it
sees of a cancelled call: the two cannot be told apart. So the core's limit is twice
`max_message_bytes` and the handler refuses what is over `max_message_bytes` (a size it then
knows); only a message over the core's limit is still told as "cancelled, or over N bytes".
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

from agenteval.collector.assembler import Assembler, Closed
from agenteval.collector.receiver import MAX_BODY_BYTES, Counters, Log
from agenteval.errors import AgentEvalError
from agenteval.tracing.otlp_proto import read_otlp_proto


def available() -> bool:
    """Whether grpcio is installed."""
    return importlib.util.find_spec("grpc") is not None


class GrpcReceiver:
    """An OTLP/gRPC server on (host, port) (port 0: a free one, see `port`), feeding `assembler`."""

    def __init__(self, assembler: Assembler, host: str = "127.0.0.1", port: int = 4317, *,
                 log: Log = lambda message: None, max_message_bytes: int = MAX_BODY_BYTES,
                 clock: Callable[[], float] = time.monotonic, workers: int = 4) -> None:
        # untyped modules (no stubs): held as Any
        grpc: Any = importlib.import_module("grpc")
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        self.assembler, self.log, self.clock = assembler, log, clock
        self.counters = Counters()
        receiver = self

        core_limit = 2 * max_message_bytes  # see the module: over it, the core refuses unseen

        def export(requests: Iterator[bytes], context: Any) -> Any:
            # Served as client-streaming (the wire is the same for one message): this runs before
            # the message is read, so a call ended before it (which a unary handler never sees)
            # is logged and counted here too.
            # A call ended with no message is one the client cancelled (an exporter's unary call
            # always sends one, if empty): gRPC tells it as an error or as the stream's end.
            try:
                body = next(requests)
            except (grpc.RpcError, StopIteration) as e:
                receiver.counters.cancelled += 1
                receiver.log(f"a gRPC request from {context.peer()} ended before its message arrived: "
                             f"cancelled by the client part-way (or its message was over {core_limit} "
                             "bytes, which gRPC refuses before agenteval sees it): nothing of it kept")
                if isinstance(e, grpc.RpcError):
                    raise
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the request has no message")
            if len(body) > max_message_bytes:
                receiver.counters.rejected += 1
                message = f"the message is {len(body)} bytes, over {max_message_bytes}"
                receiver.log(f"rejected a gRPC request from {context.peer()}: RESOURCE_EXHAUSTED, {message}")
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, message)
            # the request comes as its bytes, read here: gRPC's own deserializer refused a body
            # that is no protobuf INTERNAL, before any code of ours ran (nothing logged or counted)
            try:
                spans = read_otlp_proto(body, "gRPC request")
            except AgentEvalError as e:
                receiver.counters.rejected += 1
                receiver.log(f"rejected a gRPC request from {context.peer()}: {e}")
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
            try:
                receiver.assembler.add(spans, receiver.clock())
            except Closed:  # stopping: UNAVAILABLE, which exporters send again
                receiver.counters.rejected += 1
                context.abort(grpc.StatusCode.UNAVAILABLE, "the receiver is stopping")
            receiver.counters.spans += len(spans)
            receiver.counters.requests += 1
            return trace_service_pb2.ExportTraceServiceResponse()

        handler = grpc.stream_unary_rpc_method_handler(
            export, request_deserializer=None,
            response_serializer=trace_service_pb2.ExportTraceServiceResponse.SerializeToString)
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers),
                                   options=[("grpc.max_receive_message_length", core_limit)])
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            "opentelemetry.proto.collector.trace.v1.TraceService", {"Export": handler}),))
        try:
            self.port = int(self._server.add_insecure_port(f"{host}:{port}"))
        except RuntimeError as e:  # grpcio raises it for a port in use
            raise OSError(str(e)) from None
        if self.port == 0:
            raise OSError(f"cannot listen on {host}:{port}")

    def start(self) -> None:
        """Serves on gRPC's own threads."""
        self._server.start()

    def stop(self) -> None:
        """Stops serving (requests in flight get a second to finish)."""
        self._server.stop(grace=1).wait()


__all__ = ["GrpcReceiver", "available"]
