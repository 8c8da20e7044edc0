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

import re

import numpy as np

from ..errors import ClipReadError

__all__ = ["Lines", "check_bytes", "split_key", "scalar_string", "window"]


class Lines:
    """Per-line facts of ``data`` (bytes). Line ``i`` is ``data[start[i]:start[i+1]]`` (with its newline).

    ``indent`` (leading spaces), ``dash`` (opens a ``- `` list item) and ``blank`` come from 8-byte
    windows read at every line start (:func:`window`), a few gathers per line: the byte-at-a-time
    passes they replace took 1.4 s of a 100 MB file's 5.4 s read (3.6M lines).
    """

    def __init__(self, data: bytes):
        self.data = data
        start = line_starts(data)
        n = start.shape[0] - 1
        self.n = n
        self.start = start
        self.indent, self.dash, self.blank = line_facts(data, start[:n])

    def text(self, i: int) -> str:
        """Line ``i`` (0-based) without its line break."""
        return self.data[self.start[i] : self.start[i + 1]].decode("utf-8", "surrogateescape").rstrip("\r\n")

    def raw(self, a: int, b: int) -> bytes:
        """Bytes of lines ``a`` .. ``b - 1``."""
        return self.data[self.start[a] : self.start[b]]


_SPACES8 = np.uint64(0x2020202020202020)
_LINE_CHUNK = 1 << 20  # lines per slice of the per-line passes
_BYTE_CHUNK = 1 << 22  # bytes per slice of the newline search
_DTYPES = {2: np.dtype("<u2"), 8: np.dtype("<u8")}


def line_starts(data: bytes) -> np.ndarray:
    """``(n + 1,)``: where each of the ``n`` lines of ``data`` starts, then ``len(data)`` (a final
    line break opens no empty last line)."""
    size = len(data)
    start = _line_starts(data)
    n = start.shape[0] - 1
    if start[n - 1] == size:  # final newline: no empty last line
        n -= 1
    start = start[: n + 1]
    start[n] = size
    return start


def line_facts(data: bytes, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indent, dash, blank)`` of the lines of ``data`` that start at ``starts`` (any of them, in
    any order): :class:`Lines`' ``indent``, ``dash`` and ``blank``."""
    size = len(data)
    n = starts.shape[0]
    ind = _leading_spaces(data, starts)
    dash = np.empty(n, dtype=bool)
    blank = np.empty(n, dtype=bool)
    for a in range(0, n, _LINE_CHUNK):  # in slices: bounded temporaries
        b = min(a + _LINE_CHUNK, n)
        first = starts[a:b] + ind[a:b]
        pair = window(data, first, 2)  # the first two bytes after the indentation (first lowest)
        dash[a:b] = (pair == 0x202D) | (pair == 0x0A2D) | (pair == 0x0D2D)  # "- ", "-\n", "-\r"
        c0 = pair & 0xFF
        blank[a:b] = (c0 == 10) | (c0 == 13) | (first >= size)
    return ind, dash, blank


def window(data: bytes, pos: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` (2 or 8) bytes of ``data`` at each position ``pos`` as one little-endian unsigned
    integer (first byte lowest), zero bytes past the end: one gather through an unaligned strided
    view of the bytes (no copy of the file)."""
    dt = _DTYPES[width]
    size = len(data)
    lim = size - width  # last position with a whole window inside the data
    pos = np.asarray(pos, dtype=np.int64)
    if lim >= 0:
        view = np.ndarray((lim + 1,), dtype=dt, buffer=data, strides=(1,))
        if pos.size == 0 or int(pos.max()) <= lim:
            return view[pos]
        out = np.zeros(pos.shape, dtype=dt)
        inside = pos <= lim
        out[inside] = view[pos[inside]]
        far = np.flatnonzero(~inside)
    else:
        out = np.zeros(pos.shape, dtype=dt)
        far = np.arange(pos.shape[0])
    t0 = max(lim + 1, 0)
    pad = data[t0:] + bytes(2 * width)
    tail = np.ndarray((len(pad) - width + 1,), dtype=dt, buffer=pad, strides=(1,))
    out[far] = tail[np.minimum(pos[far] - t0, len(pad) - width)]
    return out


def _line_starts(data: bytes) -> np.ndarray:
    """``(L + 2,)`` int32 (int64 from 2 GB): 0, then one past every ``\\n`` byte (L of them), then a
    spare slot. Found slice by slice (a whole-file bool mask was a second copy of the file), each
    slice's positions kept in the output's dtype until they are joined into it: int64 parts, their
    join and the array shifted from it held the positions three times at once (87 MB on a 100 MB /
    3.6M-line file, which stayed in the process's heap through the rest of the read). ``bytes.count``
    to size the array first cost 0.06-0.13 s on 66 MB (numpy's compare and count: a third)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    # int32 below 2 GB: 4 bytes a line less (14.6 MB of a 100 MB file's 3.6M lines, at the read's peak).
    dtype = np.int32 if len(data) < 2**31 - 1 else np.int64
    parts = []
    for a in range(0, arr.shape[0], _BYTE_CHUNK):
        pos = np.flatnonzero(arr[a : a + _BYTE_CHUNK] == 10)
        pos += a + 1
        parts.append(pos.astype(dtype))
    total = sum(p.shape[0] for p in parts)
    start = np.empty(total + 2, dtype=dtype)
    start[0] = 0
    if parts:
        np.concatenate(parts, out=start[1 : total + 1])
    return start


def _leading_spaces(data: bytes, starts: np.ndarray) -> np.ndarray:
    """Number of leading spaces (int32) of every line (``starts``), 8 bytes a step (:func:`_spaces8`;
    Unity indents by at most ~12: two steps); lines past 64 spaces (fuzzed input) are measured alone."""
    ind = np.empty(starts.shape[0], dtype=np.int32)
    for a in range(0, starts.shape[0], _LINE_CHUNK):
        s = starts[a : a + _LINE_CHUNK]
        i = _spaces8(window(data, s, 8))
        # Key fields sit at indent 8: their ninth byte tells them from the (few) deeper lines.
        eight = np.flatnonzero(i == 8)
        deeper = eight[(window(data, s[eight] + 8, 2) & 0xFF) == 32]
        i[deeper] += _spaces8(window(data, s[deeper] + 8, 8))
        ind[a : a + _LINE_CHUNK] = i
    active = np.flatnonzero(ind == 16)
    for _ in range(6):
        if active.size == 0:
            return ind
        more = _spaces8(window(data, starts[active] + ind[active], 8))
        ind[active] += more
        active = active[more == 8]
    size = len(data)
    for i in active.tolist():
        s0 = int(starts[i])
        e0 = data.find(b"\n", s0)
        seg = data[s0 : size if e0 < 0 else e0]
        ind[i] = len(seg) - len(seg.lstrip(b" "))
    return ind


def _spaces8(w: np.ndarray) -> np.ndarray:
    """Leading spaces (0..8) of 8-byte windows (:func:`window`): trailing zero bits of w XOR spaces,
    counted as the set bits below its lowest set bit (64 when all eight bytes are spaces)."""
    x = np.bitwise_xor(w, _SPACES8, out=w)
    low = np.invert(x)
    low += np.uint64(1)
    low &= x
    low -= np.uint64(1)
    return (np.bitwise_count(low) >> 3).astype(np.int32)


_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TEXT_BYTES = bytes(b for b in range(256) if not _CONTROL.match(bytes([b])))


def check_bytes(path, data: bytes) -> None:
    """Raise :class:`ClipReadError` for invalid UTF-8 or control characters (YAML forbids both).

    One C-speed regex scan and ``bytes.isascii`` (no per-byte numpy masks: those took 4-5 bytes of
    memory per file byte)."""
    m = _CONTROL.search(data) if data.translate(None, _TEXT_BYTES) else None
    if m is not None:
        pos = m.start()
        line = data.count(b"\n", 0, pos) + 1
        raise ClipReadError(path, line, f"control character 0x{data[pos]:02x}: not a text YAML file")
    if data.isascii():
        return
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
        return _double_quoted(s[1:-1])
    if s[0] in "{[" or s.startswith(("&", "*", "!", "|", ">", "%", "@", "`")):
        return None
    if " #" in s:
        s = s.split(" #", 1)[0].rstrip()
    return s


_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX = {"x": 2, "u": 4, "U": 8}


def _double_quoted(body: str) -> str | None:
    """The value of a YAML double-quoted scalar's inside (escapes as YAML 1.1 defines them; Unity
    writes names holding line breaks or quotes this way). None if an escape is malformed or a bare
    double quote appears."""
    if "\\" not in body:
        return None if '"' in body else body
    out = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c == '"':
            return None
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            return None
        e = body[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e in _HEX:
            h = body[i + 2 : i + 2 + _HEX[e]]
            if len(h) != _HEX[e] or any(ch not in "0123456789abcdefABCDEF" for ch in h):
                return None
            cp = int(h, 16)
            if cp > 0x10FFFF:
                return None
            out.append(chr(cp))
            i += 2 + _HEX[e]
        else:
            return None
    return "".join(out)


#: Characters a plain or single-quoted scalar cannot hold on one line: control characters and the
#: line breaks YAML 1.1 knows (NEL, LS, PS), and BOM; names with them are written double-quoted.
_NEEDS_ESCAPE = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029\ufeff]")
_ESCAPE_OUT = {"\n": "\\n", "\t": "\\t", "\r": "\\r", '"': '\\"', "\\": "\\\\", "\0": "\\0"}


def _escape(s: str) -> str:
    out = []
    for ch in s:
        if ch in _ESCAPE_OUT:
            out.append(_ESCAPE_OUT[ch])
        elif _NEEDS_ESCAPE.match(ch):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_PLAIN_UNSAFE = re.compile(r"^[\s\-?:#&*!|>'\"%@`]|[\[\]{},]|: | #|:$|\s$|^$")


def yaml_string(s: str) -> str:
    """A scalar spelling Unity would write for ``s``: plain when safe, double-quoted with escapes when
    it holds line breaks or other control characters (``"A\\nB"``), else single-quoted. Our reader
    reads every spelling back to ``s``."""
    if s == "":
        return ""
    if _NEEDS_ESCAPE.search(s):
        return _escape(s)
    if _PLAIN_UNSAFE.search(s) or s.lower() in ("null", "true", "false", "~", "yes", "no", "on", "off"):
        return "'" + s.replace("'", "''") + "'"
    return s
