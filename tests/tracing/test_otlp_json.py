"""OTLP/JSON documents of the wrong shape at any level are refused naming the file and the
field's path (a DataError: `score --actual` exits 2 with it, the collector answers 400), never
an AttributeError or ValueError from inside the reader."""

import json
from pathlib import Path
from typing import Any

import pytest

from agenteval.errors import DataError
from agenteval.tracing.otlp_json import read_otlp_json

TRACE, SPAN = "0123456789abcdef0123456789abcdef", "0123456789abcdef"


def _doc(span: Any = None, scope: Any = None, resource: Any = None) -> dict[str, Any]:
    """A one-span export with `span`'s keys over a valid span's (or `scope` / `resource` whole)."""
    good = {"traceId": TRACE, "spanId": SPAN, "name": "s", "startTimeUnixNano": "1",
            "endTimeUnixNano": "2"}
    if scope is None:
        scope = {"spans": [{**good, **(span or {})}]}
    if resource is None:
        resource = {"scopeSpans": [scope]}
    return {"resourceSpans": [resource]}


BROKEN = {
    "resource spans entry is a number": ({"resourceSpans": [1]}, "resourceSpans[0]"),
    "resource is a number": (_doc(resource={"resource": 5, "scopeSpans": []}), "resourceSpans[0].resource"),
    "scopeSpans is an object": (_doc(resource={"scopeSpans": {"spans": []}}), "resourceSpans[0].scopeSpans"),
    "scope spans entry is a number": (_doc(scope=7), "resourceSpans[0].scopeSpans[0]"),
    "spans is an object": (_doc(scope={"spans": {"a": 1}}), "resourceSpans[0].scopeSpans[0].spans"),
    "status is a string": (_doc({"status": "ok"}), "spans[0].status"),
    "status code is a list": (_doc({"status": {"code": []}}), "spans[0].status.code"),
    "status message is a number": (_doc({"status": {"code": 2, "message": 5}}), "spans[0].status.message"),
    "doubleValue is not a number": (
        _doc({"attributes": [{"key": "k", "value": {"doubleValue": "x"}}]}), "attributes[0].value"),
    "arrayValue is a list": (
        _doc({"attributes": [{"key": "k", "value": {"arrayValue": [1]}}]}), "attributes[0].value"),
    "kvlistValue entry is a number": (
        _doc({"attributes": [{"key": "k", "value": {"kvlistValue": {"values": [3]}}}]}),
        "attributes[0].value.kvlistValue.values[0]"),
}


@pytest.mark.parametrize("document,where", BROKEN.values(), ids=list(BROKEN))
def test_a_document_of_the_wrong_shape_is_refused_naming_the_field(
        tmp_path: Path, document: dict[str, Any], where: str) -> None:
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps(document))
    with pytest.raises(DataError) as e:
        read_otlp_json(path)
    assert "t.otlp.json" in str(e.value) and where in str(e.value)


def test_json_lines_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps(_doc()) + "\n\n" + json.dumps({"resourceSpans": [1]}) + "\n")
    with pytest.raises(DataError, match=r"line 3: resourceSpans\[0\]"):
        read_otlp_json(path)
    path.write_text(json.dumps(_doc()) + "\n[1]\n")  # a line that is no export at all
    with pytest.raises(DataError) as e:
        read_otlp_json(path)
    assert str(e.value).endswith("t.otlp.json: line 2: not an OTLP trace export: expected an object "
                                 "with a `resourceSpans` list"), str(e.value)


def test_a_valid_document_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps(_doc({"status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
                                     "attributes": [{"key": "k", "value": {"doubleValue": 1.5}}]})))
    (span,) = read_otlp_json(path)
    assert (span.status, span.error, span.attributes) == ("error", "boom", {"k": 1.5})


def test_the_protobuf_field_names_read_as_the_camel_case_ones(tmp_path: Path) -> None:
    """What protobuf's JSON printer writes with `preserving_proto_field_name=True` (proto3's JSON
    mapping accepts both forms), its ids in base64: it was refused as "not an OTLP trace export"."""
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.parent_span_id, span.name = b"\x01" * 16, b"\x02" * 8, b"\x03" * 8, "s"
    span.start_time_unix_nano, span.end_time_unix_nano = 2_000_000_000, 3_000_000_000
    attribute = span.attributes.add()
    attribute.key, attribute.value.int_value = "user_count", 7
    path = tmp_path / "t.otlp.json"
    text = MessageToJson(request, preserving_proto_field_name=True)
    assert '"resource_spans"' in text
    assert '"AQEBAQEBAQEBAQEBAQEBAQ=="' in text  # its ids in base64, where OTLP/JSON's are hex
    path.write_text(text)
    (read,) = read_otlp_json(path)
    assert (read.trace_id, read.span_id, read.parent_id) == ("01" * 16, "02" * 8, "03" * 8)
    assert (read.start, read.end, read.attributes) == (2.0, 3.0, {"user_count": 7})


def test_camel_case_names_with_base64_ids_read_and_a_bad_id_is_still_named(tmp_path: Path) -> None:
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name, span.start_time_unix_nano = b"\x0a" * 16, b"\x0b" * 8, "s", 1
    path = tmp_path / "t.otlp.json"
    path.write_text(MessageToJson(request))
    (read,) = read_otlp_json(path)
    assert (read.trace_id, read.span_id) == ("0a" * 16, "0b" * 8)
    path.write_text(MessageToJson(request).replace('"CwsLCwsLCws="', '"CwsLCwsLCw=="'))  # 7 bytes
    with pytest.raises(DataError, match=r"spans\[0\]\.spanId: must be 16 hex digits, got 'CwsLCwsLCw=='"):
        read_otlp_json(path)


def test_an_empty_object_is_an_export_of_no_spans(tmp_path: Path) -> None:
    path = tmp_path / "t.otlp.json"  # proto3's JSON leaves the empty resourceSpans list out
    path.write_text("{}")
    assert read_otlp_json(path) == []
    path.write_text('{"eval_cases": []}')  # any other object is still no trace export
    with pytest.raises(DataError, match="not an OTLP trace export"):
        read_otlp_json(path)
