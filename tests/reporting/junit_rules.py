"""The JUnit XML layout CI servers validate against (Jenkins' xUnit `junit-10` schema, the one
pytest's `junit_family=xunit2` targets), stated as rules: which attributes and children each
element may have, and which attributes it must have. A report that breaks one is refused by a
validating CI step, or read in part."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

_RESULT = {"attrs": {"type", "message"}, "required": set(), "children": set()}
_RULES: dict[str, dict[str, set[str]]] = {
    "testsuites": {"attrs": {"name", "time", "tests", "failures", "errors"}, "required": set(),
                   "children": {"testsuite"}},
    "testsuite": {"attrs": {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp",
                            "hostname", "id", "package", "file", "log", "url"},
                  "required": {"name", "tests", "failures", "errors"},
                  "children": {"testsuite", "properties", "testcase", "system-out", "system-err"}},
    "testcase": {"attrs": {"name", "time", "classname", "group"}, "required": {"name"},
                 "children": {"skipped", "error", "failure", "rerunFailure", "rerunError", "flakyFailure",
                              "flakyError", "system-out", "system-err"}},
    "properties": {"attrs": set(), "required": set(), "children": {"property"}},
    "property": {"attrs": {"name", "value"}, "required": {"name", "value"}, "children": set()},
    "failure": _RESULT, "error": _RESULT, "skipped": _RESULT,
    "system-out": {"attrs": set(), "required": set(), "children": set()},
    "system-err": {"attrs": set(), "required": set(), "children": set()},
}
# A suite's time is a plain decimal (`1.250`, digits maybe comma-grouped), never `1e-05` or `-1`.
_TIME = re.compile(r"[0-9,]*(\.[0-9]*)?")


def violations(document: str) -> list[str]:
    """Every way `document` breaks the layout, as `path: what` lines (none: it validates)."""
    root = ET.fromstring(document.encode("utf-8"))
    out: list[str] = []
    if root.tag not in ("testsuites", "testsuite"):
        out.append(f"/{root.tag}: not a JUnit root")

    def walk(el: ET.Element, path: str) -> None:
        rule = _RULES.get(el.tag)
        if rule is None:
            out.append(f"{path}: unknown element")
            return
        out.extend(f"{path}: attribute {a!r} not allowed" for a in sorted(set(el.attrib) - rule["attrs"]))
        out.extend(f"{path}: attribute {a!r} missing" for a in sorted(rule["required"] - set(el.attrib)))
        time = el.get("time")
        if el.tag in ("testsuites", "testsuite") and time is not None and not _TIME.fullmatch(time):
            out.append(f"{path}: time {time!r} is not a decimal")
        for i, child in enumerate(el):
            if child.tag not in rule["children"]:
                out.append(f"{path}/{child.tag}[{i}]: not allowed in {el.tag}")
            else:
                walk(child, f"{path}/{child.tag}[{i}]")

    walk(root, f"/{root.tag}")
    return out
