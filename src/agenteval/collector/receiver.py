"""The live OTLP/HTTP receiver: `POST /v1/traces` with an `ExportTraceServiceRequest` as
protobuf (`application/x-protobuf`) or JSON (`application/json`), optionally gzip-compressed
(`Content-Encoding: gzip`, every member of it), as every OpenTelemetry OTLP/HTTP exporter sends it, with a
Content-Length or chunked (`Transfer-Encoding: chunked`, a body streamed as it is made).

**Bad traffic.** A request is read whole or refused whole: a body that is not a trace export,
an unknown content type, a malformed span, gzip that does not inflate, is answered `400` with
an OTLP `Status` body (`code` 3, INVALID_ARGUMENT, and the message naming what is wrong, as
protobuf or JSON like the request) and logged; a body over `max_body_bytes` (before or after
inflating) is `413`, another path `404` (any method), another method on it `405`; each refusal is
counted (`rejected`). A client that disconnects before its body ended (an upload cancelled
part-way) is no refusal: it is logged as cancelled and counted so (`cancelled`), nothing of its
request kept; a request after
`stop` (on a connection kept open) is `503`, which exporters send again. Nothing a
client sends stops the receiver: each request is handled on its own thread and every error is caught there.
A success is `200` with an empty `ExportTraceServiceResponse`.

`Collector` ties it together: the receiver feeds the `Assembler`, and one worker thread takes
the done conversations and scores them (`ConversationScorer`), `parallelism` at a time.
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agenteval.collector.assembler import Assembler, Closed, Conversation
from agenteval.collector.scoring import ConversationScorer, Outcome
from agenteval.errors import AgentEvalError
from agenteval.tracing.otlp_json import OtlpSpan, spans_of
from agenteval.tracing.otlp_proto import read_otlp_proto

TRACES_PATH = "/v1/traces"
MAX_BODY_BYTES = 32 << 20
INVALID_ARGUMENT = 3
Log = Callable[[str], None]


class BadRequest(Exception):
    """A request refused with `status` and `message`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Disconnected(BadRequest):
    """The client went away before its body ended: nothing of it is kept, and no answer is sent
    (there is nobody to read it; its exporter sends the batch again)."""

    def __init__(self, got: int, wanted: int) -> None:  # wanted -1: a chunked body, length unknown
        super().__init__(400, f"the client disconnected after {got}"
                         + ("" if wanted < 0 else f" of {wanted}") + " bytes: nothing of the request kept")


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def status_body(message: str, protobuf: bool) -> bytes:
    """A `google.rpc.Status` {code: INVALID_ARGUMENT, message}, as protobuf or JSON."""
    if not protobuf:
        return json.dumps({"code": INVALID_ARGUMENT, "message": message}).encode()
    text = message.encode("utf-8", "replace")
    return b"\x08" + _varint(INVALID_ARGUMENT) + b"\x12" + _varint(len(text)) + text


def _inflate(body: bytes, limit: int) -> bytes:
    """gzip `body` inflated, refusing more than `limit` bytes (a small bomb stays small). Every
    member is inflated (gzip allows several, one after the other); a body cut short or with
    other bytes after its members is refused, not read as far as it goes."""
    out, rest = bytearray(), body
    while rest.strip(b"\0"):  # (zero bytes after the last member are padding, as gzip reads them)
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        try:
            out += inflater.decompress(rest, limit + 1 - len(out))
        except zlib.error as e:
            what = "bytes after its gzip data" if out else "the body does not inflate"
            raise BadRequest(400, f"Content-Encoding gzip, but {what}: {e}") from None
        if len(out) > limit:
            raise BadRequest(413, f"the inflated body is over {limit} bytes")
        if not inflater.eof:
            raise BadRequest(400, f"Content-Encoding gzip, but the gzip data ends early (a body of "
                             f"{len(body)} bytes cut short)")
        rest = inflater.unused_data
    return bytes(out)


def read_chunked(stream: io.BufferedIOBase, limit: int) -> bytes:
    """A `Transfer-Encoding: chunked` body read from `stream` (an exporter that streams its body,
    e.g. gzip-compressing as it sends, gives no Content-Length); BadRequest when a chunk's size
    line is no hex number or the body passes `limit` bytes, Disconnected when it ends early."""
    body = bytearray()
    while True:
        line = stream.readline(1026)
        try:
            size = int(line.split(b";")[0].strip(), 16)  # (a chunk extension after ';' is ignored)
        except ValueError:
            if not line.endswith(b"\n") and len(line) < 1026:  # the stream ended
                raise Disconnected(len(body), -1) from None
            raise BadRequest(400, f"chunked body: a chunk size is no hex number: {line[:40]!r}") from None
        if size < 0:
            raise BadRequest(400, f"chunked body: a negative chunk size: {line[:40]!r}")
        if len(body) + size > limit:
            raise BadRequest(413, f"the body is over {limit} bytes")
        if size == 0:
            while stream.readline(65537) not in (b"\r\n", b"\n", b""):
                pass  # trailer fields: none is used
            return bytes(body)
        chunk = stream.read(size)
        body += chunk
        if len(chunk) < size or stream.readline(3) not in (b"\r\n", b"\n"):
            raise Disconnected(len(body), -1)


def decode(body: bytes, content_type: str, encoding: str, limit: int = MAX_BODY_BYTES) -> list[OtlpSpan]:
    """The spans of one request body; BadRequest saying what is wrong otherwise."""
    if encoding == "gzip":
        body = _inflate(body, limit)
    elif encoding not in ("", "identity"):
        raise BadRequest(400, f"unsupported Content-Encoding {encoding!r} (gzip or none)")
    kind = content_type.split(";")[0].strip().lower()
    try:
        if kind == "application/x-protobuf":
            return read_otlp_proto(body, "request body")
        if kind == "application/json":
            try:
                document = json.loads(body)
            except (ValueError, RecursionError) as e:
                raise BadRequest(400, f"request body: malformed JSON: {e}") from None
            return spans_of(document, "request body")
    except AgentEvalError as e:
        raise BadRequest(400, str(e)) from None
    except RecursionError:
        raise BadRequest(400, "request body: nested too deeply") from None
    raise BadRequest(400, f"unsupported Content-Type {content_type!r}: send application/x-protobuf "
                     "or application/json")


@dataclass
class Counters:
    """What the receiver has seen (read without a lock: each is one int, for reporting)."""

    requests: int = 0  # accepted
    spans: int = 0
    rejected: int = 0  # refused: malformed, too large, another path or method, stopping
    cancelled: int = 0  # ended by the client before its body (message) did: nothing kept

    def add(self, other: Counters) -> None:
        """Adds `other`'s counts to these (one total for the HTTP and gRPC receivers)."""
        self.requests += other.requests
        self.spans += other.spans
        self.rejected += other.rejected
        self.cancelled += other.cancelled


class Receiver:
    """An OTLP/HTTP server on (host, port) (port 0: a free one, see `port`), feeding `assembler`."""

    def __init__(self, assembler: Assembler, host: str = "127.0.0.1", port: int = 4318, *,
                 log: Log = lambda message: None, max_body_bytes: int = MAX_BODY_BYTES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.assembler, self.log, self.max_body_bytes, self.clock = assembler, log, max_body_bytes, clock
        self.counters = Counters()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._server.server_address[1])

    def start(self) -> None:
        """Serves on a thread of its own."""
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops serving and closes the socket. A request after it, on a connection the client
        keeps open, is answered 503 (OTLP's "send it again later"), its spans not taken."""
        self.assembler.close()
        self._server.shutdown()
        self._server.server_close()

    def receive(self, body: bytes, content_type: str, encoding: str) -> int:
        """Decodes one request body and holds its spans; returns how many (BadRequest otherwise)."""
        spans = decode(body, content_type, encoding, self.max_body_bytes)
        try:
            self.assembler.add(spans, self.clock())
        except Closed:
            raise BadRequest(503, "the receiver is stopping: nothing of the request kept (send it "
                             "again to the next collector)") from None
        return len(spans)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # requests are counted, errors logged by the receiver

            def _reply(self, status: int, body: bytes, content_type: str) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client left before its answer: what it sent is handled
                    self.close_connection = True

            def _refuse(self, error: BadRequest, protobuf: bool) -> None:
                self.close_connection = True  # its body may be unread: the connection cannot be reused
                if isinstance(error, Disconnected):  # no refusal: nobody is there to answer
                    receiver.counters.cancelled += 1
                    receiver.log(f"a request from {self.client_address[0]} was cancelled part-way: {error}")
                    return
                receiver.counters.rejected += 1
                receiver.log(f"rejected a request from {self.client_address[0]}: {error.status} {error}")
                self._reply(error.status, status_body(str(error), protobuf),
                            "application/x-protobuf" if protobuf else "application/json")

            def do_POST(self) -> None:
                content_type = self.headers.get("Content-Type", "")
                protobuf = "protobuf" in content_type
                try:
                    if self.path.split("?")[0] != TRACES_PATH:
                        raise BadRequest(404, f"no such path {self.path!r}: traces go to {TRACES_PATH}")
                    body = self._body()
                    receiver.counters.spans += receiver.receive(
                        body, content_type, self.headers.get("Content-Encoding", "").strip().lower())
                    receiver.counters.requests += 1
                except BadRequest as e:
                    self._refuse(e, protobuf)
                    return
                except Exception as e:  # never let one request take the receiver down
                    self._refuse(BadRequest(500, f"internal error: {type(e).__name__}: {e}"), protobuf)
                    return
                self._reply(200, b"" if protobuf else b"{}",
                            "application/x-protobuf" if protobuf else "application/json")

            def _body(self) -> bytes:
                """The request's body, by its Content-Length or chunked."""
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    return read_chunked(self.rfile, receiver.max_body_bytes)
                length = self.headers.get("Content-Length")
                if length is None or not length.isdigit():
                    raise BadRequest(411, "a Content-Length (or Transfer-Encoding: chunked) is required")
                if int(length) > receiver.max_body_bytes:
                    raise BadRequest(413, f"the body is over {receiver.max_body_bytes} bytes")
                body: bytes = self.rfile.read(int(length))
                if len(body) < int(length):  # (read as far as it went, it might decode)
                    raise Disconnected(len(body), int(length))
                return body

            def _not_post(self) -> None:
                if self.path.split("?")[0] != TRACES_PATH:
                    self._refuse(BadRequest(404, f"no such path {self.path!r}: traces go to "
                                            f"POST {TRACES_PATH}"), False)
                else:
                    self._refuse(BadRequest(405, f"use POST {TRACES_PATH}"), False)

            do_GET = do_PUT = do_PATCH = do_DELETE = _not_post

        return Handler


OnOutcome = Callable[[Outcome, float], None]  # an outcome, seconds from its last span to it


class Collector:
    """The receiver, the assembler and a scoring worker, started and stopped together."""

    def __init__(self, receiver: Receiver, scorer: ConversationScorer, *, parallelism: int = 1,
                 on_outcome: OnOutcome = lambda outcome, seconds: None, log: Log = lambda message: None,
                 tick: float = 0.1) -> None:
        self.receiver, self.scorer, self.parallelism = receiver, scorer, max(1, parallelism)
        self.on_outcome, self.log, self.tick = on_outcome, log, tick
        self._stopping = threading.Event()
        self._drain = True
        self._worker: threading.Thread | None = None

    def start(self) -> None:
        """Starts receiving and scoring."""
        self.receiver.start()
        self._worker = threading.Thread(target=lambda: asyncio.run(self._work()), name="otlp-scorer",
                                        daemon=True)
        self._worker.start()

    def stop(self, drain: bool = True, timeout: float | None = None) -> None:
        """Stops receiving; with `drain`, scores every conversation still held first."""
        self.receiver.stop()
        self._drain = drain
        self._stopping.set()
        if self._worker is not None:
            self._worker.join(timeout)

    async def _work(self) -> None:
        assembler, clock = self.receiver.assembler, self.receiver.clock
        while True:
            stopping = self._stopping.is_set()
            done = assembler.done(clock(), self.parallelism, everything=stopping and self._drain)
            if not done:
                if stopping:
                    return
                await asyncio.sleep(self.tick)
                continue
            await asyncio.gather(*(self._score(c) for c in done))

    async def _score(self, conversation: Conversation) -> None:
        try:
            outcome = await self.scorer.score(conversation)
        except Exception as e:  # one conversation's failure never stops the others
            self.log(f"conversation {conversation.key!r} could not be scored: {type(e).__name__}: {e}")
            outcome = Outcome(conversation.key, "skipped", reason=f"{type(e).__name__}: {e}")
        try:
            self.on_outcome(outcome, self.receiver.clock() - conversation.last_span_at)
        except Exception as e:
            self.log(f"reporting conversation {conversation.key!r} failed: {e}")


__all__ = ["BadRequest", "Collector", "Counters", "Disconnected", "Receiver", "decode", "read_chunked",
           "status_body"]
