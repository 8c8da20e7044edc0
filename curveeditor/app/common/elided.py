"""A label that never forces its layout wider: text that does not fit is elided in the middle
(``Bip001/Bip001 Pelvis/…/Bip001 L Clavicle``) and the full text is the tooltip.

Rich text is kept as long as it fits; a line that does not fit is shown as elided plain text (line
by line, split at ``<br>``), so the end of a line (its units, the bone name) stays visible.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QTextDocumentFragment
from PySide6.QtWidgets import QLabel, QSizePolicy, QStyledItemDelegate

__all__ = ["ElidedLabel", "PathDelegate", "plain_text", "elide_path", "elide_name", "name_prefix"]

#: ``elide`` value of :class:`ElidedLabel` for bone paths (see :func:`elide_path`)
ELIDE_PATH = "path"


def plain_text(text: str) -> str:
    """``text`` without markup (rich text) -- what a user reads."""
    if "<" not in text and "&" not in text:
        return text
    return QTextDocumentFragment.fromHtml(text).toPlainText()


def elide_path(text: str, fm, width: int) -> str:
    """A ``/`` path fitted to ``width`` pixels keeping the bone's own name whole when it can:
    the whole path, else ``root/…/Bone``, else ``…/Bone``, else the name elided on its left."""
    if fm.horizontalAdvance(text) <= width:
        return text
    parts = text.split("/")
    if len(parts) > 1:
        # drop middle parts first: root/a/…/y/Bone, then fewer, then root/…/Bone
        for keep in range(len(parts) - 2, 0, -1):
            for head in (1,):
                tail = keep - head + 1
                if tail < 1 or head + tail >= len(parts):
                    continue
                cand = "/".join(parts[:head]) + "/…/" + "/".join(parts[-tail:])
                if fm.horizontalAdvance(cand) <= width:
                    return cand
        cand = "…/" + parts[-1]
        if fm.horizontalAdvance(cand) <= width:
            return cand
    return fm.elidedText(text, Qt.TextElideMode.ElideLeft, width)


def name_prefix(names) -> str:
    """The rig's name prefix most bone names share (``"Bip001 "``, ``"mixamorig:"``): the first
    token up to ``:`` or a space, when at least half the names start with it; else ""."""
    counts: dict[str, int] = {}
    names = list(names)
    for n in names:
        cut = n.find(":")
        cut = n.find(" ") if cut < 0 else cut
        if cut > 0:
            tok = n[: cut + 1]
            counts[tok] = counts.get(tok, 0) + 1
    if not counts:
        return ""
    tok, k = max(counts.items(), key=lambda kv: kv[1])
    return tok if 2 * k >= len(names) else ""


def elide_name(name: str, prefix: str, fm, width: int) -> str:
    """A bone name fitted to ``width`` pixels: whole if it fits, else without the rig's ``prefix``
    (``"…L Finger0Nub"`` for ``"Bip001 L Finger0Nub"``: the part every bone repeats goes first),
    else elided on its left (its end tells bones apart)."""
    if fm.horizontalAdvance(name) <= width:
        return name
    if prefix and name.startswith(prefix) and len(name) > len(prefix):
        cand = "…" + name[len(prefix) :]
        if fm.horizontalAdvance(cand) <= width:
            return cand
        name = cand
    return fm.elidedText(name, Qt.TextElideMode.ElideLeft, width)


class PathDelegate(QStyledItemDelegate):
    """Item delegate showing a bone path with :func:`elide_path` (``root/…/Bone``: the bone's
    name stays whole) instead of Qt's character elision; the full path is the tooltip."""

    def initStyleOption(self, option, index):  # noqa: N802 - Qt API
        super().initStyleOption(option, index)
        text = option.text
        if text:
            width = option.rect.width() - 8
            shown = elide_path(text, option.fontMetrics, width)
            if shown != text:
                option.text = shown


class ElidedLabel(QLabel):
    """QLabel eliding its text (middle) to its width; ``full_text()`` is the whole text.
    ``elide=ELIDE_PATH`` elides a bone path by whole parts (:func:`elide_path`)."""

    def __init__(self, text: str = "", parent=None, elide=Qt.TextElideMode.ElideMiddle):
        super().__init__(parent)
        self._full = ""
        self._lines: list[tuple[str, str]] = []
        self._mode = elide
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(0)
        self.setText(text)

    def full_text(self) -> str:
        return self._full

    def shown_text(self) -> str:
        """The plain text as displayed (elided lines contain "…")."""
        return plain_text(super().text())

    def text(self) -> str:  # noqa: D102 - QLabel API: the full (rich) text, as set
        return self._full

    def setText(self, text: str) -> None:  # noqa: N802 - Qt API
        self._full = text or ""
        # plain text of each line, once: sizeHint/resize run often and must not build Qt documents
        self._lines = [(line, plain_text(line)) for line in self._full.split("<br>")]
        tip = "\n".join(p for _l, p in self._lines)
        self.setToolTip(tip)
        self._relayout()
        self.updateGeometry()  # the size hint follows the full text, even when the shown one is equal

    def is_elided(self) -> bool:
        return self.shown_text() != "\n".join(p for _l, p in self._lines)

    def _relayout(self) -> None:
        m = self.contentsMargins()
        width = self.width() - m.left() - m.right() - 2
        fm_plain = self.fontMetrics()
        bold = QFont(self.font())
        bold.setBold(True)
        fm_bold = QFontMetrics(bold)
        out = []
        for line, plain in self._lines:
            # a line with bold markup is measured bold (conservative), as it is drawn
            fm = fm_bold if "<b>" in line else fm_plain
            if width <= 0 or fm.horizontalAdvance(plain) <= width:
                out.append(line)
            elif self._mode == ELIDE_PATH:
                out.append(html.escape(elide_path(plain, fm, width)))
            else:
                out.append(html.escape(fm.elidedText(plain, self._mode, width)))
        shown = "<br>".join(out)
        if shown != super().text():  # an unchanged text must not re-run the layout
            super().setText(shown)

    def resizeEvent(self, ev):  # noqa: N802 - Qt API
        super().resizeEvent(ev)
        self._relayout()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        s = super().minimumSizeHint()
        return QSize(0, s.height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        """The whole text's width (capped by the maximum width): layouts that honour size hints
        (a status bar) give the label what it needs, and it elides when they give less."""
        s = super().sizeHint()
        m = self.contentsMargins()
        lines = [p for _l, p in self._lines] or [""]
        w = max(self.fontMetrics().horizontalAdvance(line) for line in lines) + m.left() + m.right() + 4
        return QSize(min(w, self.maximumWidth()), s.height())
