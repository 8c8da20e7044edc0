"""The one-line verdict every judging command ends with (issue 25): the file, ``ok`` or
``FAILED``, and why -- tracks with problems, the worst figure against what was asked.

``walk.bvh: ok (31 tracks, none with problems)``
``Biped.anim: FAILED (5 of 99 tracks with problems; worst Bip001/…/Bip001 L Hand: 12 wraps)``

On a terminal the line fits the width: the reason's track path is elided first (its bone name
whole), then the file's folders and the middle of its name, and last the reason's details (the
clauses after its first ``;``).
"""

from __future__ import annotations

from .style import Out
from .tables import elide_file, elide_path

__all__ = ["verdict_line"]


def verdict_line(out: Out, file: str, ok: bool, reason: str, path: str | None = None) -> str:
    """``FILE: ok (REASON)`` or ``FILE: FAILED (REASON)``; ``path`` (a track path inside
    ``reason``, written there as ``{path}``) is elided before the file's name when the line is too
    long for ``out``'s terminal."""
    word = out.paint("ok", "ok") if ok else out.paint("FAILED", "failed")
    plain = "ok" if ok else "FAILED"

    def build(f: str, p: str | None) -> tuple[str, str]:
        r = reason.format(path=p) if path is not None else reason
        return f"{f}: {plain} ({r})", f"{f}: {word} ({r})"

    f, p = file, path
    text, shown = build(f, p)
    if out.width is None or len(text) <= out.width:
        return shown
    over = len(text) - out.width
    if p is not None:
        p = elide_path(p, max(len(p.rpartition("/")[2]), len(p) - over), out.ellipsis)
        text, shown = build(f, p)
        over = len(text) - out.width
    if over > 0:
        f = elide_file(f, max(12, len(f) - over), out.ellipsis)
        text, shown = build(f, p)
    while len(text) > out.width and "; " in reason:
        reason = reason.rsplit("; ", 1)[0]  # the details last: the verdict and its count stay
        text, shown = build(f, p)
    if f != file and len(text) < out.width:  # the room the dropped details leave: the file's again
        f = elide_file(file, max(len(f), out.width - (len(text) - len(f))), out.ellipsis)
        text, shown = build(f, p)
    if len(text) > out.width and path is None:
        # one clause too long (an error message, whole on stderr): its end gives way
        keep = max(8, len(reason) - (len(text) - out.width) - len(out.ellipsis))
        reason = reason[:keep].rstrip() + out.ellipsis
        text, shown = build(f, p)
    return shown
