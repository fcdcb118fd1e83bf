"""Reading OTLP/JSON trace files: what OTLP/HTTP JSON, the OpenTelemetry Collector's file
exporter and the SDKs' JSON encoders write (`{"resourceSpans": [...]}`), one document per file
or one per line (JSON lines).

Spans come back as `OtlpSpan`: hex ids, times in epoch seconds, attribute values decoded from
their typed wrappers (`stringValue`, `intValue` as a decimal string, `doubleValue`, `boolValue`,
`arrayValue`, `kvlistValue`). A malformed file or span is a DataError naming the file and the
JSON path of the span.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.errors import DataError


@dataclass
class OtlpSpan:
    """One span as exported (`where` is its JSON path in the file, for error messages)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float
    end: float | None
    attributes: dict[str, Any]
    status: str  # "ok", "error" or "unset"
    error: str | None
    resource: dict[str, Any] = field(default_factory=dict)
    where: str = ""


def same_span(a: OtlpSpan, b: OtlpSpan) -> bool:
    """Whether `b` is `a` sent again (an exporter's retry): equal in everything but where it was
    read."""
    return (a.trace_id, a.span_id, a.parent_id, a.name, a.start, a.end, a.status, a.error,
            a.attributes, a.resource) == (b.trace_id, b.span_id, b.parent_id, b.name, b.start,
                                          b.end, b.status, b.error, b.attributes, b.resource)


def _value(v: Any, where: str, source: str | Path) -> Any:
    if not isinstance(v, dict) or len(v) > 1:
        raise DataError(source, where, "an attribute value must be an object with one typed key "
                        "(stringValue, intValue, doubleValue, boolValue, arrayValue, kvlistValue)")
    if not v:
        return None
    ((kind, raw),) = v.items()
    if kind == "stringValue":
        return str(raw)
    if kind == "intValue":
        try:
            number = int(raw)
        except (TypeError, ValueError):
            raise DataError(source, where, f"intValue {raw!r} is not an integer") from None
        if not -2**63 <= number < 2**63:
            raise DataError(source, where, f"intValue {raw!r} is outside OTLP's int64")
        return number
    if kind == "doubleValue":
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise DataError(source, where, f"doubleValue {raw!r} is not a number") from None
    if kind == "boolValue":
        return bool(raw)
    if kind == "bytesValue":
        return str(raw)
    if kind == "arrayValue":
        values = _list(_object(raw, f"{where}.arrayValue", source).get("values"),
                       f"{where}.arrayValue.values", source)
        return [_value(x, f"{where}.arrayValue.values[{i}]", source) for i, x in enumerate(values)]
    if kind == "kvlistValue":
        values = _list(_object(raw, f"{where}.kvlistValue", source).get("values"),
                       f"{where}.kvlistValue.values", source)
        return _attributes(values, f"{where}.kvlistValue.values", source)
    raise DataError(source, where, f"unknown attribute value type {kind!r}")


def _object(raw: Any, where: str, source: str | Path) -> dict[str, Any]:
    """`raw` when it is an object; absent (None) is an empty one."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise DataError(source, where, f"must be an object, got {type(raw).__name__}")
    return raw


def _list(raw: Any, where: str, source: str | Path) -> list[Any]:
    """`raw` when it is a list; absent (None) is an empty one."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise DataError(source, where, f"must be a list, got {type(raw).__name__}")
    return raw


def _attributes(items: Any, where: str, source: str | Path) -> dict[str, Any]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise DataError(source, where, "attributes must be a list of {key, value}")
    out = {}
    for i, kv in enumerate(items):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise DataError(source, f"{where}[{i}]", "an attribute needs a string `key`")
        out[kv["key"]] = _value(kv.get("value", {}), f"{where}[{i}].value", source)
    return out


_HEX = {n: re.compile(f"[0-9a-f]{{{n}}}") for n in (16, 32)}  # span ids, trace ids


def _from_base64(raw: Any, size: int) -> str | None:
    """`raw` as hex when it is the base64 of `size` bytes: protobuf's own JSON printer writes ids
    so (`MessageToJson`), where OTLP/JSON writes hex; the lengths differ (24 or 12 characters
    against 32 or 16), so neither is taken for the other."""
    if not isinstance(raw, str) or len(raw) != 4 * -(-size // 3):
        return None
    try:
        data = base64.b64decode(raw, validate=True)
    except ValueError:
        return None
    return data.hex() if len(data) == size else None


def _hex_id(raw: Any, digits: int, where: str, source: str | Path, required: bool = True) -> str | None:
    if raw in (None, "") and not required:
        return None
    text = _from_base64(raw, digits // 2) or str(raw or "").lower()
    if _HEX[digits].fullmatch(text) is None or text.count("0") == digits:
        if not required and set(text) <= {"0"}:
            return None
        raise DataError(source, where, f"must be {digits} hex digits, got {raw!r}")
    return text


def _seconds(raw: Any, where: str, source: str | Path, name: str, required: bool = True) -> float | None:
    """Span `name`'s time `raw` (nanoseconds since the epoch, OTLP's fixed64) in seconds."""
    if raw in (None, "", "0", 0) and not required:
        return None
    try:
        nanoseconds = int(raw)
    except (TypeError, ValueError):
        raise DataError(source, where, f"must be nanoseconds since the epoch, got {raw!r}") from None
    if not 0 <= nanoseconds < 2**64:
        raise DataError(source, where, f"span {name!r}: {nanoseconds} nanoseconds do not fit OTLP's fixed64 "
                        "(0 to 2^64 - 1)")
    return nanoseconds / 1e9


def check_times(start: float, end: float | None, where: str, source: str | Path, name: str) -> None:
    """Refuses a span that ends before it starts: its negative duration would be summed into the
    turn's model or tool time (a clock cannot go back inside one span; the exporter is wrong)."""
    if end is not None and end < start:
        raise DataError(source, where, f"span {name!r} ends before it starts ({round(end * 1e9)} < "
                        f"startTimeUnixNano {round(start * 1e9)})")


def _camel(value: Any) -> Any:
    """`value` with every object key from snake_case to camelCase (OTLP/JSON keys are field names
    only: attribute keys are values of `key`)."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def spans_of(document: Any, source: str | Path, prefix: str = "") -> list[OtlpSpan]:
    """The spans of one ExportTraceServiceRequest document."""
    if isinstance(document, dict) and "resource_spans" in document and "resourceSpans" not in document:
        # the protobuf field names (`MessageToJson(..., preserving_proto_field_name=True)`), which
        # proto3's JSON mapping accepts beside OTLP's camelCase ones: read under the camelCase names
        document = _camel(document)
    if document == {}:  # proto3's JSON leaves an empty list out: an export of no spans
        return []
    if not isinstance(document, dict) or not isinstance(document.get("resourceSpans"), list):
        raise DataError(source, prefix.removesuffix(": ") or "resourceSpans",  # (a line's: "line N")
                        "not an OTLP trace export: expected an object with a `resourceSpans` list")
    out = []
    for r, raw_rs in enumerate(document["resourceSpans"]):
        rwhere = f"{prefix}resourceSpans[{r}]"
        rs = _object(raw_rs, rwhere, source)
        resource = _attributes(_object(rs.get("resource"), f"{rwhere}.resource", source).get("attributes"),
                               f"{rwhere}.resource.attributes", source)
        # OTLP's name, or the pre-1.0 one older exporters still write
        old = not rs.get("scopeSpans") and "instrumentationLibrarySpans" in rs
        scopes = "instrumentationLibrarySpans" if old else "scopeSpans"
        for s, raw_ss in enumerate(_list(rs.get(scopes), f"{rwhere}.{scopes}", source)):
            ss = _object(raw_ss, f"{rwhere}.{scopes}[{s}]", source)
            for k, raw in enumerate(_list(ss.get("spans"), f"{rwhere}.{scopes}[{s}].spans", source)):
                where = f"{rwhere}.scopeSpans[{s}].spans[{k}]"
                if not isinstance(raw, dict):
                    raise DataError(source, where, "a span must be an object")
                status = _object(raw.get("status"), f"{where}.status", source)
                code = status.get("code", 0)
                if not isinstance(code, (int, float, str)) or isinstance(code, bool):
                    raise DataError(source, f"{where}.status.code", f"must be a status code, got {code!r}")
                code = {"STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(str(code), code)
                message = status.get("message")
                if message is not None and not isinstance(message, str):
                    raise DataError(source, f"{where}.status.message", f"must be text, got {message!r}")
                # As the protobuf reader reads them (`otlp_proto`): proto3's JSON leaves a default
                # value out, so an absent name is the empty one (OTLP: an unknown name), and an
                # absent or zero start is unset (refused).
                name = raw.get("name", "")
                if not isinstance(name, str):
                    raise DataError(source, f"{where}.name", f"must be text, got {name!r}")
                start = _seconds(raw.get("startTimeUnixNano"), f"{where}.startTimeUnixNano", source, name,
                                 required=False)
                if start is None:
                    raise DataError(source, f"{where}.startTimeUnixNano", "field required")
                end = _seconds(raw.get("endTimeUnixNano"), f"{where}.endTimeUnixNano", source, name, False)
                check_times(start, end, f"{where}.endTimeUnixNano", source, name)
                out.append(OtlpSpan(
                    trace_id=str(_hex_id(raw.get("traceId"), 32, f"{where}.traceId", source)),
                    span_id=str(_hex_id(raw.get("spanId"), 16, f"{where}.spanId", source)),
                    parent_id=_hex_id(raw.get("parentSpanId"), 16, f"{where}.parentSpanId", source,
                                      required=False),
                    name=name, start=start,
                    end=end,
                    attributes=_attributes(raw.get("attributes"), f"{where}.attributes", source),
                    status={1: "ok", 2: "error"}.get(code, "unset"),
                    error=message if code == 2 else None,
                    resource=resource, where=where))
    return out


def read_otlp_json(path: str | Path, text: str | None = None) -> list[OtlpSpan]:
    """Every span of an OTLP/JSON file (one document, or JSON lines of documents)."""
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as e:
            raise DataError(path, "", f"cannot read: {e}") from None
    try:
        return spans_of(json.loads(text), path)
    except json.JSONDecodeError:
        pass
    out: list[OtlpSpan] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            document = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(path, f"line {n}", f"malformed JSON: {e.msg}") from None
        out += spans_of(document, path, f"line {n}: ")
    return out


OTLP_SUFFIXES = (".otlp.json", ".otlp.jsonl")


def looks_like_otlp(head: bytes, path: str | Path | None = None) -> bool:
    """Whether a file is an OTLP/JSON trace export: its first bytes name `resourceSpans`, or
    its name ends in `.otlp.json(l)` (an export of no spans is `{}`, proto3's JSON leaving
    empty lists out: read as a trace export, it is refused as one holding no spans, not as an
    eval set missing its cases)."""
    if b'"resourceSpans"' in head or b'"resource_spans"' in head:
        return True
    return path is not None and Path(path).name.lower().endswith(OTLP_SUFFIXES)


__all__ = ["OtlpSpan", "check_times", "looks_like_otlp", "read_otlp_json", "same_span", "spans_of"]
