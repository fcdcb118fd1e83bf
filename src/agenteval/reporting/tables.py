"""Tables fitted to the width they are printed at: `ByWidth` builds a renderable when rich knows
the width, `fit_table` lays columns out so that at 80 columns a table changes layout rather than
break names mid-word or squeeze columns to nothing (the console report and `agenteval runs`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from agenteval.reporting.format import terminal_visible, terminal_visible_text

# Long ids fold to no narrower than this before a table switches to a narrower layout: a
# 20-column id folded once or twice still reads; a 6-column one does not.
ID_FLOOR = 20


class ByWidth:
    """A renderable built for the width it is printed at: `build(width)` runs when rich renders
    (or measures) it, so one report reads well on an 80-column terminal and a 200-column one."""

    def __init__(self, build: Callable[[int], RenderableType]) -> None:
        self.build = build

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.build(options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.build(options.max_width))


@dataclass(frozen=True)
class Col:
    """A column for `fit_table`. `floor`: the narrowest it may wrap (at spaces) or fold to; None
    means its widest line, so it never wraps. Its header wraps only at spaces."""

    header: str
    justify: JustifyMethod = "left"
    floor: int | None = None
    style: str = ""


def text_width(cell: str | Text) -> int:
    """The width of the widest line of `cell`."""
    plain = cell.plain if isinstance(cell, Text) else cell
    return max(cell_len(line) for line in plain.split("\n"))


def fit_widths(naturals: Sequence[int], floors: Sequence[int], room: int) -> list[int] | None:
    """Column widths summing to at most `room`: each column at its natural width where room
    allows, else the widest of those above their floor narrowed first (so one long message
    gives way before short columns do); None when the floors alone exceed `room`."""
    floors = [min(f, n) for f, n in zip(floors, naturals, strict=True)]
    if sum(floors) > room:
        return None
    widths = list(naturals)
    excess = sum(widths) - room
    while excess > 0:
        shrinkable = [j for j in range(len(widths)) if widths[j] > floors[j]]
        i = max(shrinkable, key=widths.__getitem__)
        if any(widths[j] == widths[i] for j in shrinkable if j != i):
            step = 1  # tied widest columns take turns, so they end up even
        else:  # down to the next widest shrinkable column, or to the floor, in one step
            step = widths[i] - max([floors[i], *(widths[j] for j in shrinkable if j != i)])
        step = min(step, excess)
        widths[i] -= step
        excess -= step
    return widths


@overload
def fit_table(cols: Sequence[Col], rows: Sequence[Sequence[str | Text]], width: int, *,
              force: Literal[True], **kwargs: Any) -> Table: ...


@overload
def fit_table(cols: Sequence[Col], rows: Sequence[Sequence[str | Text]], width: int, *,
              force: bool = False, **kwargs: Any) -> Table | None: ...


def fit_table(cols: Sequence[Col], rows: Sequence[Sequence[str | Text]], width: int, *,
              force: bool = False, **kwargs: Any) -> Table | None:
    """`rows` under `cols` as a table (Table keyword arguments in `kwargs`) no wider than
    `width`, at the widths `fit_widths` gives. When even the floors do not fit: None; or, with
    `force` (the last resort of a narrowest layout), the columns that may wrap narrowed past
    their floors (down to their headers' longest word) while the others stay whole, and when
    that fails too, the table left to rich to squeeze."""
    naturals = [max([cell_len(c.header), *(text_width(r[i]) for r in rows)]) for i, c in enumerate(cols)]
    words = [max(cell_len(w) for w in c.header.split() or [""]) for c in cols]
    floors = [max(words[i], naturals[i] if c.floor is None else c.floor) for i, c in enumerate(cols)]
    # A boxed table with one space of padding each side spends 3 columns per column, plus 1.
    room = width - 3 * len(cols) - 1
    widths = fit_widths(naturals, floors, room)
    if widths is None and not force:
        return None
    if widths is None:
        widths = fit_widths(naturals, [naturals[i] if c.floor is None else words[i]
                                       for i, c in enumerate(cols)], room)
    table = Table(**kwargs)
    for i, c in enumerate(cols):
        table.add_column(c.header, justify=c.justify, style=c.style, overflow="fold",
                         width=None if widths is None else widths[i])
    for row in rows:  # a str cell as plain Text: ids and reasons are data, never rich markup
        cells = [_visible(c) if isinstance(c, (str, Text)) else c for c in row]
        if widths is not None:
            cells = [_word_broken(c, widths[i]) if isinstance(c, Text) else c for i, c in enumerate(cells)]
        table.add_row(*cells)
    return table


def _word_broken(cell: Text, width: int) -> Text:
    """A cell that is one word too wide for its column (an id, a path) broken after a `_`, `/`,
    `.` or `-` (`break_long`) rather than folded mid-word; a cell of several words or styles,
    or one that fits, as it is (rich wraps those at their spaces)."""
    plain = cell.plain
    if cell.spans or cell_len(plain) <= width or any(ch.isspace() for ch in plain):
        return cell
    return Text(break_long(plain, width), style=cell.style, justify=cell.justify)


def _visible(cell: str | Text) -> Text:
    """A cell's text with the controls a terminal acts on (an agent's ESC) made visible; a
    Text's styles kept."""
    if isinstance(cell, str):
        return Text(terminal_visible(cell))
    return terminal_visible_text(cell)


def pack(pieces: Iterable[str], width: int, sep: str = "") -> str:
    """`pieces` joined by `sep` into lines of at most `width` where possible, breaking only
    between pieces: dotted keys at their dots, labelled statistics between labels."""
    lines: list[str] = []
    for piece in pieces:
        if lines and cell_len(lines[-1] + sep + piece) <= width:
            lines[-1] += sep + piece
        else:
            lines.append(piece)
    return "\n".join(lines)


def break_long(text: str, width: int) -> str:
    """`text` with each line wider than `width` broken where a reader expects a break: at
    spaces and after `/`, else (a piece still too wide) also after `_ . - , : = ;`. What is
    left wider (a hash) folds where the table puts it. Only breaks are added: the characters
    are the same, in order."""
    lines: list[str] = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            lines.append(line)
            continue
        for part in _broken(line, width, r"[^ /]*(?:[ /]|$)"):
            if cell_len(part) <= width:
                lines.append(part)
            else:
                lines.extend(_broken(part, width, r"[^ /_.,:=;-]*(?:[ /_.,:=;-]|$)"))
    return "\n".join(lines)


def _broken(line: str, width: int, piece: str) -> list[str]:
    """`line` packed into lines of at most `width` between the pieces `piece` matches; the
    spaces a line ends at dropped (the break stands for them)."""
    import re

    packed = pack([p for p in re.findall(piece, line) if p], width).split("\n")
    return [p.rstrip(" ") or p for p in packed]


__all__ = ["ID_FLOOR", "ByWidth", "Col", "break_long", "fit_table", "fit_widths", "pack", "text_width"]
