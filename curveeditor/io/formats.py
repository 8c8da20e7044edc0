"""The file formats this package reads and writes, by extension, and the loader of their modules.

Format modules are imported on first use (:func:`load_format`) so importing :mod:`curveeditor.io`
stays cheap. :mod:`curveeditor.io` (``read_clip``) and :mod:`.verify` (the checked write and its
read-back) both choose readers and writers here.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from .errors import ClipError

__all__ = [
    "READ_FORMATS",
    "WRITE_FORMATS",
    "SAMPLE_FORMATS",
    "GLTF_FORMATS",
    "TAKE_FORMATS",
    "TAKE_NAMES",
    "extension",
    "load_format",
]

#: extension -> (module, reader function)
READ_FORMATS = {
    ".csv": ("curveeditor.io.csv_io", "read_csv"),
    ".anim": ("curveeditor.io.anim", "read_anim"),
    ".bvh": ("curveeditor.io.bvh", "read_bvh"),
    ".fbx": ("curveeditor.io.fbx", "read_fbx"),
    ".gltf": ("curveeditor.io.gltf", "read_gltf"),
    ".glb": ("curveeditor.io.gltf", "read_gltf"),
}
#: extension -> (module, writer function)
WRITE_FORMATS = {
    ".csv": ("curveeditor.io.csv_io", "write_csv"),
    ".anim": ("curveeditor.io.anim", "write_anim"),
    ".bvh": ("curveeditor.io.bvh_writer", "write_bvh"),
    ".gltf": ("curveeditor.io.gltf", "write_gltf"),
    ".glb": ("curveeditor.io.gltf", "write_gltf"),
}
#: Formats that hold poses at frames only (no curves between them): the written file is checked
#: against the clip at its frames (``io.verify``; :mod:`.bvh_writer` explains why that suffices).
SAMPLE_FORMATS = frozenset({".bvh"})
#: glTF files: the read-back check plays them as a glTF viewer does (``io.gltf.viewer_played``), and
#: per-frame tracks are written as they are (a LINEAR sampler at the frames: the Slerp between them).
GLTF_FORMATS = frozenset({".gltf", ".glb"})
#: Files holding several clips (FBX animation stacks, glTF animations): their readers take ``take=``
#: (index or name; default the first), and these functions list the takes' names.
TAKE_NAMES = {
    ".fbx": ("curveeditor.io.fbx", "take_names"),
    ".gltf": ("curveeditor.io.gltf", "take_names"),
    ".glb": ("curveeditor.io.gltf", "take_names"),
}
TAKE_FORMATS = frozenset(TAKE_NAMES)


def extension(path: str | os.PathLike) -> str:
    """The file extension of ``path``, lower case with its dot (``".anim"``); ``""`` for none."""
    return Path(path).suffix.lower()


def load_format(path: str, table: dict, what: str, error: type[ClipError]):
    """The reader or writer function of ``path``'s extension in ``table`` (:data:`READ_FORMATS` or
    :data:`WRITE_FORMATS`); ``error`` (one line naming the supported formats) when there is none or
    its module cannot be imported. ``what`` is "read" or "write", for the message."""
    ext = extension(path)
    if ext not in table:
        known = ", ".join(sorted(table))
        shown = f"'{ext}'" if ext else "no extension"
        raise error(path, None, f"cannot {what} {shown} files (supported: {known})")
    module_name, func_name = table[ext]
    try:
        module = importlib.import_module(module_name)
        return getattr(module, func_name)
    except (ImportError, AttributeError) as exc:
        raise error(path, None, f"{what}ing {ext} files is not available in this build ({exc})") from exc
