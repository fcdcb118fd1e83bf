"""Values, tool calls and scores as short text: the one way every report writes them (console,
HTML, JUnit, Markdown, comparisons, the outcome of a case)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from agenteval.schema import FunctionCall, Invocation

if TYPE_CHECKING:
    from rich.text import Text


def format_value(value: Any) -> str:
    """A compact, readable value: JSON for containers and strings, repr otherwise."""
    if isinstance(value, (dict, list, str)):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def format_call(call: FunctionCall) -> str:
    """`name(arg=value, ...)`."""
    args = ", ".join(f"{k}={format_value(v)}" for k, v in (call.args or {}).items())
    return f"{call.name}({args})"


def format_calls(inv: Invocation | None) -> str:
    """An invocation's tool calls, one `format_call` a line ("" for none)."""
    return "\n".join(format_call(c) for c in inv.tool_calls()) if inv else ""


# The invisible bidi controls that reorder the text after them in a browser (embeddings and
# overrides U+202A-U+202E, isolates U+2066-U+2069): an agent's RIGHT-TO-LEFT OVERRIDE showed its
# reply, and the rest of the line, reversed. Marks (U+200E, U+200F) reorder nothing and stay.
BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
# What an HTML document may not hold as text (a parse error, NUL replaced by the browser): C0
# controls but tab, newline, form feed and carriage return; DEL and the C1 controls; surrogates;
# the noncharacters (U+FDD0-U+FDEF and the last two code points of every plane).
_PLANE_ENDS = "".join(chr(plane + 0xFFFE) + chr(plane + 0xFFFF) for plane in range(0, 0x110000, 0x10000))
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
_NOT_IN_HTML = re.compile(
    f"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef{_PLANE_ENDS}{BIDI_CONTROLS}]")


def _escape(char: str) -> str:
    return f"\\u{ord(char):04x}" if char < "\U00010000" else f"\\U{ord(char):08x}"


def html_visible(text: str) -> str:
    """HTML (or Markdown) text with each character HTML forbids, and each bidi control, written
    as a visible `\\uXXXX`, as JUnit writes those; the report's own markup holds none."""
    return _NOT_IN_HTML.sub(lambda m: _escape(m.group()), text)


# A terminal acts on C0 controls (ESC starts a sequence that can recolour, move the cursor and
# overwrite what was printed) and on C1 ones; rich removes only BEL, BS, VT, FF and CR. Each is
# shown as its control picture (U+2400 + code, DEL U+2421; C1 as U+FFFD): one character for
# one, so a rich Text's styles stay where they were. A terminal that lays out bidirectional text
# reorders what follows a bidi control as a browser does: those are written as `\\u202e`, as the
# HTML, Markdown and JUnit reports write them.
_TERMINAL = {**{c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}, 0x7F: 0x2421,
             **dict.fromkeys(range(0x80, 0xA0), 0xFFFD)}


def terminal_visible(text: str) -> str:
    """`text` with each control character a terminal would act on shown as a visible one of
    the same length (tab and newline kept), and each bidi control as `\\uXXXX`."""
    return _BIDI.sub(lambda m: _escape(m.group()), text.translate(_TERMINAL))


def terminal_visible_text(text: Text) -> Text:
    """`terminal_visible` for a rich Text, its styles kept: in place when no bidi control makes
    the text longer, else a new Text whose escapes carry the style of the control they stand for."""
    plain = text.plain
    cuts = sorted({o for m in _BIDI.finditer(plain) for o in (m.start(), m.end())})
    if not cuts:
        text.plain = plain.translate(_TERMINAL)
        return text
    out = text.blank_copy()
    for piece in text.divide(cuts):
        if _BIDI.fullmatch(piece.plain):
            escape = piece.blank_copy(_escape(piece.plain))
            for span in piece.spans:
                escape.stylize(span.style, 0, len(escape))
            piece = escape
        else:
            piece.plain = piece.plain.translate(_TERMINAL)
        out.append_text(piece)
    return out


def format_score(score: float | None) -> str:
    """A score to four significant digits; "-" for none."""
    if score is None:
        return "-"
    return f"{score:.4g}"


__all__ = ["BIDI_CONTROLS", "format_call", "format_calls", "format_score", "format_value", "html_visible",
           "terminal_visible", "terminal_visible_text"]
