"""Line structure of a Unity ``.anim`` file, without a generic YAML load.

Unity writes a fixed block layout (2-space indentation, one ``key: value`` per line, flow mappings for
small structs). :class:`Lines` computes, vectorized with numpy over the raw bytes, where every line
starts, its indentation and whether it opens a list item (``- ``). Parsers then only touch the few
structural lines in Python and scan keyframe blocks as whole byte ranges.

Also here: YAML scalar reading (plain, single- and double-quoted strings, continuation lines) and
the checks every byte of the stream must pass (valid UTF-8, no control characters: YAML forbids
them, and this turns random binary garbage into a clean error on the right line).
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..errors import ClipReadError

__all__ = ["Lines", "check_bytes", "split_key", "scalar_string", "key3"]


def key3(name: str) -> int:
    """The first three bytes of ``name`` as :attr:`Lines.key3` stores them."""
    b = (name.encode() + b"\0\0\0")[:3]
    return b[0] << 16 | b[1] << 8 | b[2]


class Lines:
    """Per-line facts of ``data`` (bytes). Line ``i`` is ``data[start[i]:start[i+1]]`` (with its newline)."""

    def __init__(self, data: bytes):
        self.data = data
        arr = np.frombuffer(data, dtype=np.uint8)
        nl = np.flatnonzero(arr == 10)
        starts = np.concatenate([[0], nl + 1]).astype(np.int64)
        if starts[-1] == len(data):  # final newline: no empty last line
            starts = starts[:-1]
        self.n = int(starts.shape[0])
        self.start = np.concatenate([starts, [len(data)]])
        # Indentation = distance from each line start to the first non-space byte at or after it
        # (one searchsorted over the non-space positions; no per-line work).
        nonspace = np.flatnonzero(arr != 32)
        nonspace = np.concatenate([nonspace, [len(data)]])
        first = nonspace[np.searchsorted(nonspace, starts)]
        ind = first - starts
        self.indent = ind
        padded = np.concatenate([arr, np.zeros(8, dtype=np.uint8)])
        at = padded[first]
        nxt = padded[first + 1]
        self.dash = (at == 45) & ((nxt == 32) | (nxt == 10) | (nxt == 13))
        self.blank = (at == 10) | (at == 13) | (first >= len(data))
        # The first three bytes of each line's key (after "- " on list items), as one int, for
        # checking whole keyframe blocks against a layout with one vectorized comparison.
        k = first + np.where(self.dash, 2, 0)
        self.key3 = (
            padded[k].astype(np.int32) << 16
            | padded[k + 1].astype(np.int32) << 8
            | padded[k + 2].astype(np.int32)
        )

    def text(self, i: int) -> str:
        """Line ``i`` (0-based) without its line break."""
        return self.data[self.start[i] : self.start[i + 1]].decode("utf-8", "surrogateescape").rstrip("\r\n")

    def raw(self, a: int, b: int) -> bytes:
        """Bytes of lines ``a`` .. ``b - 1``."""
        return self.data[self.start[a] : self.start[b]]


def check_bytes(path, data: bytes) -> None:
    """Raise :class:`ClipReadError` for invalid UTF-8 or control characters (YAML forbids both)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    bad = (arr < 32) & (arr != 10) & (arr != 13) & (arr != 9)
    bad |= arr == 127
    if np.any(bad):
        pos = int(np.argmax(bad))
        line = data.count(b"\n", 0, pos) + 1
        raise ClipReadError(path, line, f"control character 0x{arr[pos]:02x}: not a text YAML file")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ClipReadError(path, line, "invalid UTF-8: not a text YAML file") from None


_KEY = re.compile(r"^(\s*)(- )?([^\s:'\"{}\[\],#][^:]*?|'[^']*'|\"[^\"]*\"):(?: (.*)|)$")


def split_key(line: str) -> tuple[str, str] | None:
    """``(key, rest)`` of a ``key: value`` / ``- key: value`` line, or ``None`` if it is not one.

    ``rest`` is stripped of surrounding whitespace ('' for ``key:``).
    """
    m = _KEY.match(line.rstrip("\r"))
    if m is None:
        return None
    return m.group(3), (m.group(4) or "").strip()


def scalar_string(rest: str) -> str | None:
    """The string value of a YAML scalar (plain, 'single' or "double" quoted); ``None`` if malformed.

    An empty plain scalar (``path:``) is ``''`` (Unity's empty path).
    """
    s = rest.strip()
    if not s:
        return ""
    if s[0] == "'":
        if len(s) < 2 or s[-1] != "'":
            return None
        return s[1:-1].replace("''", "'")
    if s[0] == '"':
        if len(s) < 2 or s[-1] != '"':
            return None
        try:
            return json.loads(s)
        except ValueError:
            return None
    if s[0] in "{[" or s.startswith(("&", "*", "!", "|", ">", "%", "@", "`")):
        return None
    if " #" in s:
        s = s.split(" #", 1)[0].rstrip()
    return s


_PLAIN_UNSAFE = re.compile(r"^[\s\-?:#&*!|>'\"%@`]|[\[\]{},]|: | #|:$|\s$|^$")


def yaml_string(s: str) -> str:
    """A scalar spelling Unity would write for ``s``: plain when safe, else single-quoted."""
    if s == "":
        return ""
    if _PLAIN_UNSAFE.search(s) or s.lower() in ("null", "true", "false", "~", "yes", "no", "on", "off"):
        return "'" + s.replace("'", "''") + "'"
    return s
