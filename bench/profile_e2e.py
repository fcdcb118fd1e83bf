"""Where `agenteval score` spends its time: wall time per phase, optionally a cProfile dump.

    /work/adkvenv/bin/python bench/profile_e2e.py [--cprofile bench/out/score.prof] [--gc-freeze]

Runs the `agenteval score` console entry point in-process on the bench corpus (default criteria)
with timers wrapped around what a run does. `score` streams (`runner.streamed`): reading a case,
scoring it and writing it alternate, so each phase's time is summed over its calls and counted
once, in the innermost phase (exclusive time, wall and this process's CPU): opening the eval
sets (their nesting scan), reading and validating cases, pairing them, scoring (the criteria and
the result objects), summarising cases, serialising and writing the document (and committing
it), the rest of the streamed run (the driver, sinks, progress), waiting on worker processes
(`runner.sharded`, whose own CPU is printed from this process's children), printing the report
and everything else. `--parallelism N` is passed on (default 1: one process, every phase in
view). `--gc-freeze` disables the cyclic GC while running (`score` pauses it itself now).

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
import contextlib
import cProfile
import functools
import gc
import inspect
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
# This checkout's src/ first unless PYTHONPATH names one (a before/after): the `agenteval`
# installed here was an editable install of another copy in session 14, which runs would time.
if not os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = str(BENCH_DIR.parent / "src")
    sys.path.insert(0, os.environ["PYTHONPATH"])

from gen_corpus import DEFAULT_OUT, ensure_corpus  # noqa: E402

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


class Phases:
    """Exclusive time per phase: a phase's calls summed, less the phases nested inside them."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.order: list[str] = []
        self._stack: list[list[Any]] = []  # [label, wall start, cpu start, nested wall, nested cpu]

    def enter(self, label: str) -> None:
        self._stack.append([label, time.perf_counter(), time.process_time(), 0.0, 0.0])

    def leave(self) -> None:
        label, wall0, cpu0, nested_wall, nested_cpu = self._stack.pop()
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        if label not in self.wall:
            self.order.append(label)
        self.wall[label] = self.wall.get(label, 0.0) + wall - nested_wall
        self.cpu[label] = self.cpu.get(label, 0.0) + cpu - nested_cpu
        self.calls[label] = self.calls.get(label, 0) + 1
        if self._stack:
            self._stack[-1][3] += wall
            self._stack[-1][4] += cpu


PH = Phases()


def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` (a function, a coroutine function or a generator function) timed as `label`."""
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def run(*args: Any, **kwargs: Any) -> Any:
            PH.enter(label)  # (the scoring coroutine of deterministic criteria never waits)
            try:
                return await fn(*args, **kwargs)
            finally:
                PH.leave()

        return run
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def items(*args: Any, **kwargs: Any) -> Any:
            it = fn(*args, **kwargs)
            while True:  # only the time inside the generator, not its consumer's
                PH.enter(label)
                try:
                    item = next(it)
                except StopIteration:
                    return
                finally:
                    PH.leave()
                yield item

        return items

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        PH.enter(label)
        try:
            return fn(*args, **kwargs)
        finally:
            PH.leave()

    return call


def wrap(modules: list[Any], name: str, label: str) -> None:
    """Times `name` as `label` in each module (or class) that has it: a function imported by
    name is looked up in the importing module."""
    for module in modules:
        if hasattr(module, name):
            setattr(module, name, timed(label, getattr(module, name)))


def time_streamed_phases(commands: Any) -> None:
    """Timers around the phases of a streamed `score` (see the module's docstring)."""
    import importlib

    def mods(*names: str) -> list[Any]:
        found = []
        for n in names:
            with contextlib.suppress(ImportError):  # an older src: that phase is not there
                found.append(importlib.import_module(n))
        return found

    streamed, driver = mods("agenteval.runner.streamed"), mods("agenteval.runner.driver")
    wrap([commands, *streamed], "open_eval_set", "open eval sets (nesting scan, header)")
    wrap(mods("agenteval.datasets.stream"), "raw_items", "read + parse cases (ijson)")
    for cls_name in ("CaseStream",):
        for module in mods("agenteval.datasets.stream"):
            cls = getattr(module, cls_name)
            cls.__iter__ = timed("validate cases (pydantic)", cls.__iter__)
    wrap([*streamed, *mods("agenteval.runner.recorded", "agenteval.runner.result_stream")],
         "paired_case", "pair cases")
    wrap(driver, "score_case", "score (criteria, result objects)")
    wrap(driver, "summarise_case", "summarise cases")
    for module in mods("agenteval.store.output"):
        for name in ("add", "add_summary", "add_placed", "add_summary_placed", "commit"):
            wrap([module.DocumentWriter], name, "serialise + write the document")
    wrap(streamed, "rescore_sharded", "worker processes (this process: waiting, telling)")
    wrap([commands, *streamed], "rescore_files", "streamed run: the rest (driver, sinks, progress)")
    wrap([commands], "finish", "print report")
    wrap([commands], "prepare", "config, criteria, judges")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--cprofile", type=Path, help="write a cProfile dump here")
    ap.add_argument("--parallelism", type=int, default=1,
                    help="passed to `agenteval score` (1: one process, every phase in view)")
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

    imported = time.perf_counter() - t_start
    time_streamed_phases(commands)
    # Scoring runs through `run_sync` (newer src) or `asyncio.run` (older src): the streamed
    # run's own phases are inside it; what is left is the event loop's.
    if hasattr(commands, "run_sync"):
        commands.run_sync = timed("event loop (run_sync)", commands.run_sync)
    argv = ["score", str(exp), "--actual", str(act), "--config_file_path", str(cfg),
            "--output", str(args.result or args.out / "profile_agenteval.json"),
            "--parallelism", str(args.parallelism)]
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
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"what-if fixes: {', '.join(sorted(fixes)) or 'none'}; --parallelism {args.parallelism}")
    print(f"{'phase (exclusive time)':<56} {'calls':>7} {'wall s':>7} {'CPU s':>7}")
    print(f"{'import agenteval.cli.commands':<56} {1:>7} {imported:>7.2f} {'':>7}")
    for label in PH.order:
        print(f"{label:<56} {PH.calls[label]:>7} {PH.wall[label]:>7.2f} {PH.cpu[label]:>7.2f}")
    rest = total - imported - sum(PH.wall.values())
    print(f"{'other (click, output checks, ...)':<56} {'':>7} {rest:>7.2f} {'':>7}")
    print(f"{'total in-process (interpreter start-up not included)':<56} {'':>7} {total:>7.2f} "
          f"{time.process_time():>7.2f}")
    print(f"{'worker processes (their CPU, reaped children)':<56} {'':>7} {'':>7} "
          f"{children.ru_utime + children.ru_stime:>7.2f}")
    if "hard-exit" in fixes:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
