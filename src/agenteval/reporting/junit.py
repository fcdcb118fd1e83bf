"""JUnit XML for CI test reports (GitHub, GitLab, Jenkins).

`testsuites` > one `testsuite` per eval set > one `testcase` per eval id (classname = eval set
id, name = eval id; stable across runs, so CI tracks a case's history). The verdict is the
case's summary over its repeated runs: FAILED gives a `failure` element whose text lists every
reason (failing criteria with score vs threshold, metric errors, inference errors, rationales of
negative judge verdicts); NOT_EVALUATED gives an `error` (type `NotEvaluated`) saying why, and
counts in `errors`: the case reached no verdict, so, as the exit code (1) says, it did not pass;
a `skipped` would show it in CI as not failing (pytest, too, writes a test that could not run
to a verdict as an `error` and exits 1, and a skipped one as `skipped` and exits 0). Nothing is
ever `skipped` (each suite's `skipped="0"`). A case run more than once says so in
the failure message and in `system-out` (mean, 95% CI, pass@k per criterion); `system-out` also
gives the runs' warnings and each judged criterion's calibration certificate. The layout is the
one CI servers validate against (Jenkins' xUnit `junit-10` schema, pytest's xunit2): no
`properties` in a `testcase`, no `skipped` on `testsuites`. `time` is the sum
of the agent's invocation durations over all runs, omitted when nothing was timed. Characters
XML 1.0 forbids (control characters, lone surrogates), and bidi controls, are written as `\\uXXXX`.
"""

from __future__ import annotations

import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Generator, Sequence
from datetime import datetime, timezone
from pathlib import Path

import agenteval.reporting.certificates as certificates
from agenteval.datasets.targets import TargetWriter
from agenteval.reporting.format import BIDI_CONTROLS, format_score
from agenteval.reporting.outcome import NO_GATING_VERDICT, NOT_GATED, ci_text, not_gated, problems
from agenteval.schema import EvalSetResult, EvalStatus
from agenteval.verdicts.outcome import CaseOutcome, outcomes

# What XML 1.0 cannot carry, and the bidi controls, which would reorder the text after them
# where a CI server shows it in a page.
_INVALID_XML = re.compile(f"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[{BIDI_CONTROLS}]")
_MESSAGE_LIMIT = 500


def xml_safe(text: str) -> str:
    """Text with characters XML 1.0 cannot carry, and bidi controls, replaced by a visible
    `\\uXXXX`."""
    return _INVALID_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _time(seconds: float | None) -> str | None:
    return None if seconds is None else f"{seconds:.3f}"


def _set(el: ET.Element, **attrs: str | None) -> None:
    for key, value in attrs.items():
        if value is not None:
            el.set(key, xml_safe(value))


def _runs_text(case: CaseOutcome) -> str:
    lines = [f"{case.num_runs} runs (gating: {case.gating})"]
    for m in case.summary.metrics:
        if m.eval_status == EvalStatus.INFORMATIONAL:
            continue
        lines.append(f"{m.metric_name}: {m.eval_status.name} mean {format_score(m.mean)} "
                     f"std {format_score(m.std)} 95% CI {ci_text(m)} passed {m.passed_runs}/{m.runs} "
                     f"pass@k {format_score(m.pass_at_k)} pass^k {format_score(m.pass_pow_k)}")
    return "\n".join(lines)


def _testcase(parent: ET.Element, case: CaseOutcome) -> None:
    el = ET.SubElement(parent, "testcase")
    _set(el, classname=case.eval_set_id, name=case.eval_id, time=_time(case.duration()))
    runs = f" over {case.num_runs} runs" if case.num_runs > 1 else ""
    certs = certificates.notes(case.runs)
    if case.status == EvalStatus.FAILED:
        lines = problems(case)
        message = f"failed{runs}: " + ("; ".join(lines) or "no reason recorded")
        if len(message) > _MESSAGE_LIMIT:
            message = message[:_MESSAGE_LIMIT - 1] + "…"
        failure = ET.SubElement(el, "failure")
        _set(failure, message=message, type="EvalFailure")
        failure.text = xml_safe("\n".join([*lines, *map(certificates.line, certs.values())]))
    elif case.status == EvalStatus.NOT_EVALUATED:
        # Why, as a failure says it: the criteria's errors were left out (the Markdown, HTML
        # and console reports give them).
        lines = problems(case)
        head = (not_gated(case).replace("not evaluated", f"not evaluated{runs}", 1)
                if not case.failing_metrics() else f"not evaluated{runs}: {NO_GATING_VERDICT}")
        rest = [line for line in lines if not line.startswith(NOT_GATED)]
        message = head + (": " + "; ".join(rest) if rest else "")
        if len(message) > _MESSAGE_LIMIT:
            message = message[:_MESSAGE_LIMIT - 1] + "…"
        error = ET.SubElement(el, "error")
        _set(error, message=message, type="NotEvaluated")
        error.text = xml_safe("\n".join(lines)) if rest else None
    # The runs' warnings (a conversation the simulator's turn limit ended...) and each judged
    # criterion's certificate (or that it has none), passed or not: in `system-out`, since the
    # schema CI servers validate against allows no `properties` in a `testcase`.
    out = ([_runs_text(case)] if case.num_runs > 1 else []) + [
        f"{f'run {run.run_index}: ' if case.num_runs > 1 else ''}warning: {w}"
        for run in case.runs for w in run.warnings] + [
        f"judge certificate, {certificates.line(note)}" for note in certs.values()]
    if out:
        ET.SubElement(el, "system-out").text = xml_safe("\n".join(out))


def _suite_head(parent: ET.Element, result: EvalSetResult, tests: int, failures: int, errors: int,
                total_time: float | None) -> ET.Element:
    """A `testsuite` element with its counts and properties, its test cases not yet in it."""
    suite = ET.SubElement(parent, "testsuite")
    stamp = (datetime.fromtimestamp(result.creation_timestamp, timezone.utc)
             .strftime("%Y-%m-%dT%H:%M:%S") if result.creation_timestamp else None)
    _set(suite, name=result.eval_set_id, tests=str(tests), failures=str(failures), errors=str(errors),
         skipped="0", time=_time(total_time), timestamp=stamp)
    props = ET.SubElement(suite, "properties")
    for name, value in (("eval_set_result_id", result.eval_set_result_id), ("gating", result.gating)):
        _set(ET.SubElement(props, "property"), name=name, value=value)
    return suite


def _suite(parent: ET.Element, result: EvalSetResult) -> tuple[int, int, int, float | None]:
    cases = outcomes(result)
    failures = sum(1 for c in cases if c.status == EvalStatus.FAILED)
    errors = sum(1 for c in cases if c.status == EvalStatus.NOT_EVALUATED)
    times = [t for c in cases if (t := c.duration()) is not None]
    total_time = sum(times) if times else None
    suite = _suite_head(parent, result, len(cases), failures, errors, total_time)
    for case in cases:
        _testcase(suite, case)
    return len(cases), failures, errors, total_time


def _root(tests: int, failures: int, errors: int, times: Sequence[float]) -> ET.Element:
    # No `skipped` here: the schema allows it on a `testsuite` only.
    root = ET.Element("testsuites")
    _set(root, name="agenteval", tests=str(tests), failures=str(failures), errors=str(errors),
         time=_time(sum(times)) if times else None)
    return root


_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'


def junit_xml(results: Sequence[EvalSetResult]) -> str:
    """The JUnit XML document (UTF-8 declaration included) for one or more eval-set results."""
    suites = ET.Element("suites")
    tests = failures = errors = 0
    times: list[float] = []
    for result in results:
        n, f, e, t = _suite(suites, result)
        tests, failures, errors = tests + n, failures + f, errors + e
        if t is not None:
            times.append(t)
    root = _root(tests, failures, errors, times)
    root.extend(suites)
    ET.indent(root, space=" ")
    return _DECLARATION + ET.tostring(root, encoding="unicode") + "\n"


class JUnitStream:
    """The JUnit XML of one eval set's run written as its cases are decided, holding none of
    them: each `add`ed case's `testcase` goes to a spool; `commit` writes the document (the
    counts, known only at the end, come first) to `path` in one atomic write, with the bytes
    `junit_xml` gives for the same run (without a path, `blocks` gives those bytes). `abort`
    writes nothing."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._target = None if path is None else TargetWriter(path)
        self._spool = tempfile.TemporaryFile()  # noqa: SIM115 (closed by commit or abort)
        self.tests = self.failures = self.errors = 0
        self._time: float | None = None

    def add(self, case: CaseOutcome) -> None:
        holder = ET.Element("suite")
        _testcase(holder, case)
        el = holder[0]
        ET.indent(el, space=" ", level=2)
        self._spool.write((("\n  " if self.tests else "") + ET.tostring(el, encoding="unicode"))
                          .encode("utf-8"))
        self.tests += 1
        self.failures += case.status == EvalStatus.FAILED
        self.errors += case.status == EvalStatus.NOT_EVALUATED
        if (t := case.duration()) is not None:
            self._time = (self._time or 0.0) + t

    def blocks(self, result: EvalSetResult) -> Generator[bytes, None, None]:
        """The document of `result` (its id, eval set, time and gating; its cases are those
        added), UTF-8, a block at a time; the spool is closed once they are all given."""
        root = _root(self.tests, self.failures, self.errors, [] if self._time is None else [self._time])
        suite = _suite_head(root, result, self.tests, self.failures, self.errors, self._time)
        ET.SubElement(suite, "placeholder")
        ET.indent(root, space=" ")
        before, _, after = ET.tostring(root, encoding="unicode").partition("<placeholder />")
        try:
            yield (_DECLARATION + before).encode("utf-8")
            self._spool.seek(0)
            while block := self._spool.read(1 << 20):
                yield block
            yield (after + "\n").encode("utf-8")
        finally:
            self._spool.close()

    def commit(self, result: EvalSetResult) -> None:
        """Writes the document of `result` (see `blocks`) to the stream's path."""
        if self._target is None:
            raise ValueError("a JUnitStream without a path is read by its blocks")
        blocks = self.blocks(result)
        try:
            for block in blocks:
                self._target.write(block)
            self._target.commit()
        except BaseException:
            self._target.abort()
            raise
        finally:
            blocks.close()  # (the spool with it)

    def abort(self) -> None:
        self._spool.close()
        if self._target is not None:
            self._target.abort()


__all__ = ["JUnitStream", "junit_xml", "xml_safe"]
