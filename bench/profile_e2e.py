"""Where `agenteval score` spends its time: wall time per phase, optionally a cProfile dump.

    /work/adkvenv/bin/python bench/profile_e2e.py [--cprofile bench/out/score.prof] [--gc-freeze]

Runs the `agenteval score` console entry point in-process on the bench corpus (default criteria)
with timers wrapped around the phases of `agenteval.cli.commands.score_command`: imports, config,
loading each eval set, scoring (`asyncio.run`: the coroutine, and what asyncio.run costs after it
returns), writing the result file and printing the report. `--gc-freeze` disables the cyclic
GC while running (to measure what the collector costs on a heap of ~10^6 model objects).

`--what-if FIX [FIX ...]` prototypes candidate fixes by monkeypatching this process only (src/ is
not touched), to measure what each would save; `--what-if all` applies every one:

* `porter`: import `nltk.stem.porter` alone instead of the `nltk` package (which imports scipy);
* `gc`: no cyclic GC during the command (the loaded sets and results are trees, not cycles);
* `load-json`: `EvalSet.model_validate_json(bytes)` instead of `json.loads` + `model_validate`;
* `asyncio`: keep the EvalSetResult out of the task that `asyncio.run` returns from;
* `write-bytes`: serialize to bytes and write them, no `str` round trip;
* `table`: a case table of at most 50 rows (failures first) plus a count of the rest;
* `construct`: build EvalMetricResult objects without `model_construct`'s Python-level loop;
* `rouge-chunks`: memoise ROUGE tokens per whitespace-separated chunk, not per ASCII word only;
* `hard-exit`: keep the loaded sets and the result alive to the end and leave with `os._exit`
  (as mypy does), instead of freeing ~10^7 objects one by one before the process ends;
* `write-compact` (not in `all`: it changes the file's layout, not its content): no indentation.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import gc
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from gen_corpus import DEFAULT_OUT, ensure_corpus  # noqa: E402

PHASES: list[tuple[str, float]] = []
FIXES = ("porter", "gc", "load-json", "asyncio", "write-bytes", "table", "construct",
         "rouge-chunks", "hard-exit")
KEEP_ALIVE: list[Any] = []
EXTRA_FIXES = ("write-compact",)
TABLE_ROWS = 50


def import_porter_only() -> None:
    """Makes `from nltk.stem import porter` skip nltk/__init__ (scipy, numpy, ...)."""
    import importlib.util
    import types

    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations or "nltk" in sys.modules:
        return
    root = next(iter(spec.submodule_search_locations))
    for name, path in (("nltk", root), ("nltk.stem", f"{root}/stem")):
        pkg = types.ModuleType(name)
        pkg.__path__ = [path]
        sys.modules[name] = pkg
    from nltk.stem import porter  # noqa: F401


def holder(commands: Any, name: str) -> Any:
    """The module whose global `name` the score command looks up: the command module itself in
    older src; the store's output module (write_model) or the console report (case_table) since
    the command went through the runner."""
    import importlib

    for module in (commands, "agenteval.store.output", "agenteval.reporting.console"):
        mod = importlib.import_module(module) if isinstance(module, str) else module
        if hasattr(mod, name):
            return mod
    raise AttributeError(name)


def apply_fixes(fixes: set[str], commands: Any) -> None:
    from agenteval.runner import scoring
    from agenteval.schema import EvalSet, EvalStatus

    if "load-json" in fixes:
        from pydantic import ValidationError

        def via_json(fallback: Callable[..., Any]) -> Callable[..., Any]:
            def load(path: Any, *args: Any, **kwargs: Any) -> Any:
                if args or kwargs:
                    return fallback(path, *args, **kwargs)
                try:  # the common case: a current-format eval set, parsed straight from bytes
                    return EvalSet.model_validate_json(Path(path).read_bytes())
                except ValidationError:  # legacy formats, result documents, located errors
                    return fallback(path)

            return load

        commands.load_eval_set = via_json(commands.load_eval_set)
        if hasattr(commands, "load_actual"):
            commands.load_actual = via_json(commands.load_actual)
    if "write-bytes" in fixes or "write-compact" in fixes:
        indent = None if "write-compact" in fixes else 2

        def write_model(path: Any, model: Any, *, exclude_none: bool = True) -> None:
            data = type(model).__pydantic_serializer__.to_json(model, indent=indent,
                                                               exclude_none=exclude_none)
            tmp = Path(f"{path}.tmp")
            with open(tmp, "wb") as f:
                f.write(data)
                f.write(b"\n")
            tmp.replace(path)

        holder(commands, "write_model").write_model = write_model
    if "table" in fixes:
        real_table = holder(commands, "case_table").case_table

        def case_table(results: Any) -> Any:
            from rich.console import Group
            from rich.text import Text

            cases = list(results)
            if len(cases) <= TABLE_ROWS:
                return real_table(cases)
            passed = EvalStatus.PASSED
            failed = [c for c in cases if c.final_eval_status != passed]
            shown = (failed + [c for c in cases if c.final_eval_status == passed])[:TABLE_ROWS]
            note = Text(f"... {len(cases) - len(shown)} more cases ({len(failed)} failed in "
                        "all); see the result file")
            return Group(real_table(shown), note)

        holder(commands, "case_table").case_table = case_table
    if "construct" in fixes:
        from agenteval.schema import EvalMetricResult, EvalMetricResultDetails

        fields = frozenset(EvalMetricResult.model_fields)
        empty_fields: set[str] = set()

        def fast(cls: Any, values: dict[str, Any], fields_set: Any) -> Any:
            obj = cls.__new__(cls)
            object.__setattr__(obj, "__dict__", values)
            object.__setattr__(obj, "__pydantic_fields_set__", fields_set)
            object.__setattr__(obj, "__pydantic_extra__", None)
            object.__setattr__(obj, "__pydantic_private__", None)
            return obj

        def details() -> Any:
            return fast(EvalMetricResultDetails, {"rubric_scores": None,
                                                  "token_usage_details": None,
                                                  "duration_details": None}, empty_fields)

        def metric_result(wire: dict[str, Any], status: Any, score: Any, det: Any) -> Any:
            return fast(EvalMetricResult, {**wire, "score": score, "eval_status": status,
                                           "details": det if det is not None else details()},
                        set(fields))

        scoring._metric_result = metric_result
    if "hard-exit" in fixes:
        def keep(fn: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(fn)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                KEEP_ALIVE.append(args)
                out = fn(*args, **kwargs)
                KEEP_ALIVE.append(out)
                # What stays alive must not be rescanned when the command re-enables the GC.
                gc.freeze()
                return out

            return wrapper

        for name in ("load_eval_set", "load_actual", "report"):
            if hasattr(commands, name):
                setattr(commands, name, keep(getattr(commands, name)))
    if "rouge-chunks" in fixes:
        import unicodedata
        from functools import lru_cache

        from agenteval.criteria import rouge

        @lru_cache(maxsize=1 << 16)
        def chunk_tokens(chunk: str) -> tuple[str, ...]:
            out: list[str] = []
            for word in rouge._words(chunk):
                if word.isascii():
                    out.extend(rouge._ascii_word_tokens(word))
                else:
                    out.append(word)
            return tuple(out)

        def tokenize(text: str) -> list[str]:
            # Whitespace is a separator in ADK's tokenizer whatever surrounds it, so the tokens of
            # a text are the tokens of its whitespace-separated chunks, which repeat a lot.
            text = text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).lower()
            tokens: list[str] = []
            for chunk in text.split():
                tokens.extend(chunk_tokens(chunk))
            return tokens

        rouge.tokenize = tokenize


def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            PHASES.append((label, time.perf_counter() - t0))

    return wrapper


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--cprofile", type=Path, help="write a cProfile dump here")
    ap.add_argument("--result", type=Path, help="result file (default OUT/profile_agenteval.json)")
    ap.add_argument("--gc-freeze", action="store_true", help="run with the cyclic GC disabled")
    ap.add_argument("--what-if", nargs="+", default=[], choices=[*FIXES, *EXTRA_FIXES, "all"],
                    help="prototype candidate fixes (monkeypatched in this process only)")
    args = ap.parse_args()
    fixes = set(args.what_if) | (set(FIXES) if "all" in args.what_if else set())
    fixes.discard("all")
    exp, act = ensure_corpus(args.out, args.n, args.seed)
    cfg = args.out / "config_default.json"

    if args.gc_freeze or "gc" in fixes:
        gc.disable()
    t_start = time.perf_counter()
    if "porter" in fixes:
        import_porter_only()
    from agenteval.cli import commands
    from agenteval.cli.main import cli

    try:  # newer src: the console script keeps the command's objects and skips teardown
        from agenteval.cli import teardown

        teardown.arm()  # kept as in the console script; this process still returns normally
    except ImportError:
        pass

    def cli_main(argv: list[str]) -> None:  # `main()` itself would leave with os._exit
        cli.main(args=argv, prog_name="agenteval")

    apply_fixes(fixes, commands)

    PHASES.append(("import agenteval.cli.commands (rouge_score -> nltk -> scipy)",
                   time.perf_counter() - t_start))
    commands.load_eval_set = timed("load expected eval set", commands.load_eval_set)
    if hasattr(commands, "load_actual"):  # actual runs may also be result documents
        commands.load_actual = timed("load actual eval set", commands.load_actual)
    out_module = holder(commands, "write_model")
    out_module.write_model = timed("write result JSON", out_module.write_model)
    commands.report = timed("print report (rich tables)", commands.report)
    # Scoring runs through `run_sync` (newer src) or `asyncio.run` (older src).
    uses_run_sync = hasattr(commands, "run_sync")
    real_run: Callable[..., Any] = commands.run_sync if uses_run_sync else asyncio.run
    score_coro_seconds: list[float] = []

    def run(coro: Any, **kwargs: Any) -> Any:
        async def inner() -> Any:
            t0 = time.perf_counter()
            try:
                return await coro
            finally:
                score_coro_seconds.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        try:
            if "asyncio" not in fixes or uses_run_sync:  # run_sync already boxes the result
                return real_run(inner(), **kwargs)
            box: list[Any] = []

            async def boxed() -> None:
                box.append(await inner())

            real_run(boxed(), **kwargs)
            return box[0]
        finally:
            total = time.perf_counter() - t0
            PHASES.append(("scoring (score_recorded coroutine)", score_coro_seconds[-1]))
            PHASES.append((f"{'run_sync' if uses_run_sync else 'asyncio.run'} overhead after "
                           "the coroutine returned", total - score_coro_seconds[-1]))

    if uses_run_sync:
        commands.run_sync = run
    else:
        commands.asyncio.run = run  # type: ignore[attr-defined]
    argv = ["score", str(exp), "--actual", str(act), "--config_file_path", str(cfg),
            "--output", str(args.result or args.out / "profile_agenteval.json")]
    profiler = cProfile.Profile() if args.cprofile else None
    stdout = sys.stdout
    sys.stdout = open(args.out / "profile_agenteval.stdout", "w")  # noqa: SIM115
    try:
        if profiler:
            profiler.enable()
        try:
            cli_main(argv)
        except SystemExit:
            pass
        finally:
            if profiler:
                profiler.disable()
    finally:
        sys.stdout.close()
        sys.stdout = stdout
    total = time.perf_counter() - t_start
    if profiler and args.cprofile:
        profiler.dump_stats(str(args.cprofile))
    accounted = sum(s for _, s in PHASES)
    print(f"what-if fixes: {', '.join(sorted(fixes)) or 'none'}")
    print(f"{'phase':<60} {'seconds':>8}")
    for label, seconds in PHASES:
        print(f"{label:<60} {seconds:>8.2f}")
    print(f"{'other (click, config, registry, ...)':<60} {total - accounted:>8.2f}")
    print(f"{'total in-process (interpreter start-up not included)':<60} {total:>8.2f}")
    if "hard-exit" in fixes:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
