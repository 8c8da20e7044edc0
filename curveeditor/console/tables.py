"""Tables that fit the terminal (issue 25).

In a pipe or a file (``Out.width`` None, or ``--wide``) a table is printed whole: every cell in
full, one header line, columns as wide as their widest cell, so scripts see stable rows. On a
terminal the same table fits the width (80 columns and up):

1. headers fold onto two lines where that narrows a column (``keys`` over ``before``; units stay in
   the headers, ``max err`` over ``(deg)``), so numbers keep narrow columns;
2. the track column elides the middle of each path and keeps the bone name (the last part) whole,
   as the editor's track tree does: ``Bip001/Bip001 Pel…/Bip001 L ForeTwist7``;
3. the gap between columns narrows from two spaces to one.

The bone names are never cut: if even they do not fit (a terminal far below 80 columns), the line is
wider than the terminal rather than wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .style import Out

__all__ = ["Column", "render_table", "elide_path", "elide_file", "file_lines", "wrap_text"]


@dataclass(frozen=True)
class Column:
    """One column: its header (units in parentheses, e.g. ``"max err (deg)"``), alignment, whether it
    holds track paths, and an optional ``style(cell) -> "warn" | "ok" | "failed" | None`` for colour."""

    header: str
    align: str = "right"
    path: bool = False
    style: Callable[[str], str | None] | None = None


def elide_path(path: str, width: int, ellipsis: str = "\u2026") -> str:
    """``path`` in at most ``width`` characters: the middle elided, the last part (the bone name)
    always whole, as much of the start kept as fits (``Bip001/Bip001 Pel…/Bip001 L Hand``)."""
    if len(path) <= width:
        return path
    head, sep, last = path.rpartition("/")
    if not sep:
        return path  # a root bone: its name is whole, however long
    tail = f"{ellipsis}/{last}"
    room = width - len(tail)
    if room <= 0:
        return tail if len(tail) <= width or len(last) >= width else last
    return head[:room] + tail


def elide_file(path: str, width: int, ellipsis: str = "\u2026") -> str:
    """A file path in at most ``width`` characters: folders elided first (:func:`elide_path`), then,
    if the name alone is too long, the middle of the name (its start, and its end with the
    extension, kept)."""
    short = elide_path(path, width, ellipsis)
    if len(short) <= width:
        return short
    name = path.rpartition("/")[2]
    if len(name) <= width or width < 8:
        return name if len(name) <= width else name[: max(width, 1)]
    keep = width - len(ellipsis)  # two thirds of the room for the start, the rest for the end
    return name[: keep - keep // 3] + ellipsis + name[len(name) - keep // 3 :]


def file_lines(out: Out, file: str, rest: str) -> list[str]:
    """``FILE: REST`` as one line, fitted to ``out``'s terminal: the file elided (name kept as long as
    it fits), or, when even that leaves too little room, the file on a line of its own and ``REST``
    indented below it."""
    line = f"{file}: {rest}"
    if out.width is None or len(line) <= out.width:
        return [line]
    room = out.width - len(rest) - 2
    if room >= min(len(file), 24):
        return [f"{elide_file(file, room, out.ellipsis)}: {rest}"]
    return [elide_file(file, out.width - 1, out.ellipsis) + ":", *wrap_text(out, rest, "  ")]


def wrap_text(out: Out, text: str, indent: str = "", keep: Sequence[str] = ()) -> list[str]:
    """``text`` as lines of at most ``out``'s width (one line in a pipe), continuation lines indented
    two more spaces; the strings in ``keep`` (track paths, whose bone names hold spaces) never break."""
    if out.width is None or len(indent) + len(text) <= out.width:
        return [indent + text]
    import textwrap

    nbsp = "\u00a0"
    for k in keep:
        if k:
            text = text.replace(k, k.replace(" ", nbsp))
    lines = textwrap.wrap(
        text,
        out.width,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace(nbsp, " ") for line in lines]


def _header_lines(header: str, fold: bool) -> list[str]:
    """The header on one line, or folded at the space that makes its widest line shortest."""
    if not fold or " " not in header:
        return [header]
    best = [header]
    for i, ch in enumerate(header):
        if ch == " ":
            cand = [header[:i], header[i + 1 :]]
            if max(map(len, cand)) < max(map(len, best)):
                best = cand
    return best


def _layout(columns, rows, fold: bool, gap: int, width: int | None, ell: str):
    heads = [_header_lines(c.header, fold) for c in columns]
    natural = [max([len(h) for h in hl] + [len(r[i]) for r in rows]) for i, hl in enumerate(heads)]
    widths = list(natural)
    total = sum(widths) + gap * (len(widths) - 1)
    if width is not None and total > width:
        for i, c in enumerate(columns):
            if not c.path:
                continue
            bones = [len(r[i].rpartition("/")[2]) + len(ell) + 1 for r in rows]
            floor = max([len(h) for h in heads[i]] + bones)
            widths[i] = max(min(natural[i], floor), natural[i] - (total - width))
            total = sum(widths) + gap * (len(widths) - 1)
    return heads, widths, total


def render_table(columns: Sequence[Column], rows: Sequence[Sequence[str]], out: Out) -> list[str]:
    """The lines of a table of ``rows`` (cells as text) under ``columns`` for ``out`` (module doc)."""
    rows = [list(r) for r in rows]
    width, ell = out.width, out.ellipsis
    if width is None:
        heads, widths, _ = _layout(columns, rows, False, 2, None, ell)
        gap = 2
    else:
        # The layout that elides the paths least: whole rows if they fit, else folded headers (the
        # numbers' columns narrow, the paths get the room), then a one-space gap.
        best = None
        for fold, gap in ((False, 2), (True, 2), (True, 1)):
            heads, widths, total = _layout(columns, rows, fold, gap, width, ell)
            room = sum(w for w, c in zip(widths, columns, strict=True) if c.path)
            whole = all(len(r[i]) <= widths[i] for r in rows for i, c in enumerate(columns) if c.path)
            key = (total <= width, whole, gap, room if not whole else -fold)
            if best is None or key > best[0]:
                best = (key, heads, widths, gap)
        _, heads, widths, gap = best
    depth = max(len(h) for h in heads)
    sep = " " * gap

    def cell(i: int, text: str, styled: bool) -> str:
        c = columns[i]
        if c.path and len(text) > widths[i]:
            text = elide_path(text, widths[i], ell)
        padded = text.ljust(widths[i]) if c.align == "left" else text.rjust(widths[i])
        if styled and c.style is not None:
            style = c.style(text)
            if style:
                # colour the text only, so the padding (and the columns) stay as measured
                stripped = padded.strip()
                return padded.replace(stripped, out.paint(stripped, style), 1) if stripped else padded
        return padded

    lines = []
    for k in range(depth):
        parts = []
        for i, hl in enumerate(heads):
            text = hl[k - (depth - len(hl))] if k >= depth - len(hl) else ""  # headers sit on the rule
            parts.append(text.ljust(widths[i]) if columns[i].align == "left" else text.rjust(widths[i]))
        lines.append(sep.join(parts).rstrip())
    lines.append(sep.join("-" * w for w in widths))
    for r in rows:
        lines.append(sep.join(cell(i, t, True) for i, t in enumerate(r)).rstrip())
    return lines
