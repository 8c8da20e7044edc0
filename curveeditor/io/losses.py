"""What a format cannot hold of a clip, said before anything is written (issue 20).

``write_losses(clip, path)`` gives one line per kind of loss of writing ``clip`` to ``path``'s
format, computed from the clip alone (nothing is written): the CLI prints them before it writes
(``convert``, ``clean -o``), the editor's export dialog lists them with the export checks. The
writers return the same lines among their warnings; callers that print both drop the repeats.

* ``.csv`` (:func:`~.csv_io.csv_losses`): non-rotation curves, quaternion tracks (written as Euler
  keys). Euler tracks keep keys, tangents, weights and infinity; the clip keeps its frame rate.
* ``.anim`` and ``.bvh``: their writers' own warnings (conversions, re-keying) are computed while
  the file is rendered; nothing is lost that they do not name there.
"""

from __future__ import annotations

import os

from .formats import extension

__all__ = ["write_losses"]


def write_losses(clip, path: str | os.PathLike) -> list[str]:
    """Lines naming what writing ``clip`` to ``path`` cannot keep (module docstring)."""
    if extension(path) == ".csv":
        from .csv_io import csv_losses

        return csv_losses(clip)
    return []
