"""Reading a large ``.anim`` in parts: the write check's read-back without the whole file in memory
(issue 26).

:func:`~curveeditor.io.anim.read_anim` holds the file's bytes and a table of every line: at its peak
about twice the file (730 MB for the 350 MB that ``clean --unwrap --reduce 0.5`` writes of a 10-minute
120 fps take; 5 GB for the 2.4 GB its ``convert`` writes), on top of the clip being written. Nearly
all of those bytes are key lines. :func:`read_in_parts` reads the file in slices and keeps

* a *skeleton*: the file with every long key block cut down to its first key, every other line (the
  header, the entries' paths and wrap modes, bindings, events, settings) as it is, parsed by the same
  :func:`~.document.parse_document`;
* where the skeleton's parse reaches a cut block, that block's bytes read again and parsed alone by
  the same key parser (:func:`~.keys.parse_key_blocks`, with the layout the document asks for).

So the keys are the whole-file parse's, bit for bit (the tests compare every array on the corpus),
with at most one block's bytes and lines in memory at a time. Where the process may fork (the CLI,
``io.beside.may_fork``), a child parses each block as soon as the scan has found its end, while the
scan reads on (:class:`~curveeditor.io.beside.ForkStream`): the 2.4 GB that ``convert`` writes of a
10-minute take read back in 20.3 s in one process, 13.3 s so. Equal arrays of different blocks (their
times, weights, modes, and the editor curves' copies of the played curves' columns) are held once
(:class:`_Interner`): that read-back's clip went from 1.2 GB to 184 MB of arrays, its peak from 1.3 GB
to 430 MB. The clip has no source document: the
skeleton's lines are not the file's, and a writer must not splice them into a new file; reading a
file to look at what it plays (the write check) needs none. Any error -> the whole file is parsed
as :func:`~curveeditor.io.anim.read_anim` does, which names the line and reason of the fault.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import struct
from dataclasses import dataclass

import numpy as np

from ..errors import ClipReadError
from .document import parse_document
from .keys import parse_key_blocks
from .lexer import Lines, check_bytes, line_facts, line_starts, window

__all__ = ["read_in_parts", "PARTS_MIN_BYTES"]

#: Files from this size are read in parts when no source document is wanted; below, whole (the
#: skeleton costs a second read of the cut bytes, which a small file does not repay).
PARTS_MIN_BYTES = 32 << 20
#: Parse the cut blocks in a child beside the scan: None = where ``io.beside.may_fork`` (the CLI, batch
#: worker processes), True = whenever ``os.fork`` exists (tests), False = never.
FORK: bool | None = None
#: Bytes read per slice of the scan (cut at the last line break).
_SLICE = 32 << 20
#: Key blocks of fewer lines stay in the skeleton.
_CUT_MIN_LINES = 4096
#: Bytes after a cut block read with it: the fast key parser wants 64 past a block's end.
_PAD = 256
#: A key line at Unity's indentation: the first line of a key of an entry's m_Curve list.
_KEY_DASH = b"      - "
_TAB_INDENT = re.compile(rb"(?m)^ *\t")


class _WholeFile(Exception):
    """The file is not one the parts reader handles as the whole-file reader would: read it whole."""


@dataclass(frozen=True)
class _Cut:
    """One key block's lines ``k0 .. k1 - 1`` (file lines, 0-based) at bytes ``b0 .. b1``; its first
    key (``head_lines`` lines, to byte ``head_end``) stays in the skeleton."""

    k0: int
    k1: int
    b0: int
    b1: int
    head_lines: int
    head_end: int

    @property
    def removed(self) -> int:
        return self.k1 - self.k0 - self.head_lines


def read_in_parts(path: str | os.PathLike):
    """The clip of the ``.anim`` at ``path`` (module docstring), without its source document."""
    path = os.fspath(path)
    stream = None
    try:
        with open(path, "rb") as f:
            intern = _Interner()
            stream = _block_stream(path, intern)
            cuts, parsed = _scan(path, f, stream, intern)
            if stream is not None:
                parsed.update((c.k0, _read_only(ka)) for c, ka in zip(cuts, stream.results(), strict=True))
            parsed = intern.settled(parsed)
            skeleton = _skeleton(f, cuts)
            parse = _BlockParser(path, f, cuts, parsed, intern)
            doc = parse_document(path, skeleton, parse_blocks=parse)
            del skeleton
    except OSError as exc:
        raise ClipReadError(path, None, exc.strerror or str(exc)) from exc
    except Exception:  # noqa: BLE001 - any fault: the whole read is the reference, it names the line
        from . import read_anim

        return read_anim(path)
    finally:
        if stream is not None:
            stream.close()
    from .reader import build_clip

    return dataclasses.replace(build_clip(doc), source=None)  # (the skeleton is not the file)


#: A cut as :class:`~curveeditor.io.beside.ForkStream` queues it (its six ints).
_CUT_RECORD = struct.Struct("<6q")


def _block_stream(path: str, intern: _Interner):
    """A :class:`~curveeditor.io.beside.ForkStream` parsing cuts in a child, or None where the
    process may not fork (the editor, a Dask worker's threads: the scan parses them itself)."""
    from ..beside import ForkStream, may_fork

    if not (may_fork() if FORK is None else FORK):
        return None
    stream = ForkStream(
        functools.partial(_interned_cut, intern, path), _CUT_RECORD, fork=True, loaded=intern.adopt
    )
    return stream if stream.pid is not None else None


def _interned_cut(intern: _Interner, path: str, fields: tuple):
    """:func:`_parse_cut` through the interner: in the caller the keys, in a forked child what
    :meth:`_Interner.adopt` takes (:meth:`_Interner.sent`)."""
    ka = _parse_cut(path, fields)
    return intern(ka) if os.getpid() == intern.pid else intern.sent(fields[0], ka)


class _Again:
    """In a forked child's result, an array the child has already sent: the array ``field`` of the
    cut at line ``k0``, or its ``column`` as an ``(N, 1)`` view (:meth:`_Interner.sent`)."""

    __slots__ = ("k0", "field", "column")

    def __init__(self, k0: int, field: str, column: int | None = None):
        self.k0, self.field, self.column = k0, field, column

    def __reduce__(self):
        return (_Again, (self.k0, self.field, self.column))


class _Interner:
    """One copy of each distinct key array of a read.

    A dense file's key blocks repeat most of their arrays: in the 2.4 GB that ``convert`` writes of a
    10-minute take (128 blocks of 72,000 keys, 922 MB of arrays) every block has the same times, the
    weights and modes take 1 to 3 distinct values, and each editor curve (``localEulerAnglesRaw.x``)
    holds a column of its runtime curve's values and slopes: one copy of each is about 185 MB.

    An array is keyed by its dtype, shape and the SHA-256 of its bytes (:func:`_digest`, 1.8 GB/s
    here), each column of a vector one as an ``(N, 1)`` array too. In the caller (the process that
    made the interner) an array seen before is that array, a column a view of it (:meth:`__call__`).
    A forked child (:func:`_block_stream`) keys what it parses the same way and sends an
    :class:`_Again` for an array it sent before, with the digests of the rest (:meth:`sent`); the
    caller adopts each result as it arrives (:meth:`adopt`), so the blocks either process parsed
    share one copy, and the references take a few bytes of the spill file instead of the arrays."""

    #: Arrays smaller than this (bytes) are kept as they are: not worth a digest.
    MIN_BYTES = 1 << 14

    def __init__(self):
        self.pid = os.getpid()
        self.arrays: dict[tuple, np.ndarray] = {}  # digest -> the caller's one copy (or column view)
        self.refs: dict[tuple, _Again] = {}  # in a forked child: digest -> where the child sent it
        self.placed: dict[tuple, tuple] = {}  # in the caller: a child's (k0, field, column) -> digest
        self.late: dict[int, tuple] = {}  # id of an (N, 1) array -> (it, the column view replacing it)
        self.views: set[int] = set()  # ids of the column views in ``arrays``

    def __call__(self, ka):
        """``ka`` (parsed by the caller) with each array seen before as the one copy of it."""
        again = {}
        for name, a, key, cols in self._keyed(ka):
            first = self.arrays.setdefault(key, a)
            if first is not a:
                again[name] = first
            else:
                for c, kc in cols:
                    self._column(kc, a[:, c : c + 1])
        return dataclasses.replace(ka, **again) if again else ka

    def sent(self, k0: int, ka) -> tuple:
        """In a forked child: ``(k0, ka, digests)``, each array the child sent before an
        :class:`_Again`, ``digests`` those of the others ``{digest: (field, column)}``."""
        again, firsts = {}, {}
        for name, _, key, cols in self._keyed(ka):
            hit = self.refs.get(key)
            if hit is not None:
                again[name] = hit
                continue
            self.refs[key] = _Again(k0, name)
            firsts[key] = (name, None)
            for c, kc in cols:
                if kc not in self.refs:
                    self.refs[kc] = _Again(k0, name, c)
                    firsts[kc] = (name, c)
        return k0, (dataclasses.replace(ka, **again) if again else ka), firsts

    def adopt(self, result):
        """The keys of a child's result (:meth:`sent`, loaded in the order the child sent them),
        each array the caller's one copy of it."""
        k0, ka, firsts = result
        own = {}
        for key, (name, col) in firsts.items():
            self.placed[(k0, name, col)] = key
            a = getattr(ka, name)
            if col is None:
                own[name] = key
                self.arrays.setdefault(key, a)
            else:
                self._column(key, a[:, col : col + 1])
        new = {}
        for name, a in vars(ka).items():
            if isinstance(a, _Again):
                key = self.placed[(a.k0, a.field, a.column)]
            elif name in own:
                key = own[name]
            else:
                continue
            if self.arrays[key] is not a:
                new[name] = self.arrays[key]
        return dataclasses.replace(ka, **new) if new else ka

    def _column(self, key: tuple, view: np.ndarray) -> None:
        """Register ``view``, a column of a vector array, under ``key``. If an ``(N, 1)`` array of
        its own came first (the caller parsed an editor block before the child's runtime block
        arrived), the blocks holding it are given the view in :meth:`settled`. The view is made
        read-only here: one made of a child's array before :func:`_read_only` froze that array stays
        writeable, and a ``Curve`` copies a writeable array."""
        view.flags.writeable = False
        first = self.arrays.setdefault(key, view)
        if first is view:
            self.views.add(id(view))
        elif id(first) not in self.views:
            self.arrays[key] = view
            self.views.add(id(view))
            self.late[id(first)] = (first, view)

    def settled(self, parsed: dict) -> dict:
        """``parsed`` (cut line -> keys) with the arrays that a column view replaced
        (:meth:`_column`) as that view: one copy, whichever process parsed which block first."""
        if not self.late:
            return parsed
        out = {}
        for k0, ka in parsed.items():
            new = {n: self.late[id(a)][1] for n, a in vars(ka).items() if id(a) in self.late}
            out[k0] = dataclasses.replace(ka, **new) if new else ka
        self.late.clear()
        return out

    def _keyed(self, ka):
        """``(field, array, digest, [(column, digest)])`` of the arrays of ``ka`` worth sharing (the
        columns of a vector array, for the editor curves that copy them)."""
        ka.modern_tangent_mode()  # (computed here, it is shared too: the tracks' modes are its columns)
        for name, a in vars(ka).items():
            if name == "key_lines" or not isinstance(a, np.ndarray) or a.nbytes < self.MIN_BYTES:
                continue  # (the key lines of two blocks never meet)
            cols = []
            if a.ndim == 2 and a.shape[1] > 1:
                cols = [(c, _digest(a[:, c : c + 1])) for c in range(a.shape[1])]
            yield name, a, _digest(a), cols


def _digest(a: np.ndarray) -> tuple:
    """What two arrays share when they hold the same numbers bit for bit."""
    return (a.dtype.str, a.shape, hashlib.sha256(memoryview(np.ascontiguousarray(a)).cast("B")).digest())


def _parse_cut(path: str, fields: tuple):
    """The keys of the cut ``_Cut(*fields)``, read from ``path`` by its own handle (a forked child
    must not move the caller's file offset)."""
    with open(path, "rb") as f:
        return _read_cut_keys(f, _Cut(*fields), path)


def _read_only(ka):
    """``ka`` (unpickled from the child) with its arrays read-only, as the parser leaves them: curves
    then share them instead of copying (``engine.curves``)."""
    for a in vars(ka).values():
        if isinstance(a, np.ndarray):
            a.flags.writeable = False
    return ka


def _read_cut_keys(f, cut: _Cut, path: str):
    """The keys of ``cut``, its bytes read again from ``f``."""
    f.seek(cut.b0)
    data = f.read(cut.b1 - cut.b0 + _PAD)
    return _block_keys(Lines(data), 0, cut.k1 - cut.k0, cut.k0, path)


def _scan(path: str, f, stream, intern: _Interner) -> tuple[list[_Cut], dict]:
    """The key blocks of at least :data:`_CUT_MIN_LINES` lines right after an ``m_Curve:`` line, found
    slice by slice: a block runs from that line to the next line at indentation 6 or less that is
    not a key's ``- `` (what :func:`~.document.parse_document` reads as the curve's next field).
    Every slice passes the whole-file reader's byte checks. Returns the cuts and the keys of those
    whose lines (and the 64 bytes the fast parser reads past them) lie in one slice, parsed from its
    lines (``{k0: KeyArrays}``): a second read and line table of those bytes was 0.4 s of 3 s on
    the 350 MB that ``clean`` writes of a 10-minute take; the others are read again later. With a
    ``stream`` (:func:`_block_stream`) every cut is put to it instead, and ``parsed`` is empty.
    ``intern`` keeps one copy of each distinct array parsed."""
    cuts: list[_Cut] = []
    parsed: dict = {}
    line0 = 0  # file line of the slice's first line
    prev: tuple[int, int, bool] | None = None  # (file line, end byte, is "m_Curve:") of the last field line
    size = _SLICE
    while True:
        byte0 = f.tell()
        data = f.read(size)
        if not data:
            break
        if len(data) == size:  # (more may follow: end the slice at its last line break)
            nl = data.rfind(b"\n")
            if nl < 0:
                f.seek(byte0)
                size *= 2  # (a line longer than a slice)
                continue
            if nl + 1 < len(data):
                f.seek(byte0 + nl + 1)
                data = data[: nl + 1]
        size = _SLICE
        check_bytes(path, data)
        if b"\t" in data and _TAB_INDENT.search(data):
            raise _WholeFile
        lines = Lines(data) if stream is None else None  # (what the in-slice parse reads)
        starts = line_starts(data) if lines is None else lines.start
        n = starts.shape[0] - 1
        for i in _field_lines(data, starts[:n]).tolist():
            k = line0 + i
            if prev is not None and prev[2] and k - prev[0] - 1 >= _CUT_MIN_LINES:
                cut = _head(f, prev[0] + 1, k, prev[1], byte0 + int(starts[i]))
                if cut is not None:
                    cuts.append(cut)
                    if stream is not None:
                        stream.put(dataclasses.astuple(cut))
                    elif cut.k0 >= line0 and int(starts[i]) + _PAD <= len(data):
                        ka = _block_keys(lines, cut.k0 - line0, i, line0, path)
                        parsed[cut.k0] = intern(ka)
            line = data[starts[i] : starts[i + 1]].decode("utf-8", "surrogateescape")  # (as Lines.text)
            prev = (k, byte0 + int(starts[i + 1]), line.rstrip("\r\n").strip() == "m_Curve:")
        line0 += n
        del lines, data
        if stream is not None:
            stream.poll()
    return cuts, parsed  # (a block running to the end of the file is not cut: the whole parse says so)


#: The first 8 bytes of a key's first line and of its fields' lines, at Unity's indentation.
_KEY8 = int.from_bytes(_KEY_DASH, "little")
_FIELD8 = int.from_bytes(b" " * 8, "little")


def _field_lines(data: bytes, starts: np.ndarray) -> np.ndarray:
    """The lines of ``data`` (indices of ``starts``) that end a key block: at indentation 6 or less,
    not blank, not a key's ``- `` at 6. The lines that open with a key's or a key field's indentation
    at Unity's spacing (nearly all of a dense file) are not; the others (a few an entry) are tested
    as :func:`~.lexer.line_facts` has them. All of every line's facts were 3.3 s of the 6 s scan of
    the 2.4 GB that ``convert`` writes of a 10-minute take."""
    w = window(data, starts, 8)
    cand = np.flatnonzero((w != _KEY8) & (w != _FIELD8))
    ind, dash, blank = line_facts(data, starts[cand])
    return cand[~blank & (ind <= 6) & ~(dash & (ind == 6))]


def _block_keys(lines: Lines, a: int, b: int, line0: int, path: str):
    """The keys of ``lines`` ``a .. b - 1`` (its trailing blank lines dropped, as the document parser
    drops them), numbered from file line ``line0``; parsed for any component count (the document's
    own need is checked when it asks, :class:`_BlockParser`)."""
    while b > a and lines.blank[b - 1]:
        b -= 1
    ka = parse_key_blocks(lines, [(a, b, None)], path)[0]
    return dataclasses.replace(ka, key_lines=ka.key_lines + line0)


def _head(f, k0: int, k1: int, b0: int, b1: int) -> _Cut | None:
    """The :class:`_Cut` of block lines ``k0 .. k1 - 1`` (bytes ``b0 .. b1``), its first key found in
    the bytes at ``b0``; None when they do not start with Unity's key indentation."""
    here = f.tell()
    f.seek(b0)
    window = f.read(min(1 << 16, b1 - b0))
    f.seek(here)
    if not window.startswith(_KEY_DASH):
        return None
    nxt = window.find(b"\n" + _KEY_DASH)
    if nxt < 0:
        return None
    head = window[: nxt + 1]
    return _Cut(k0, k1, b0, b1, head.count(b"\n"), b0 + nxt + 1)


def _skeleton(f, cuts: list[_Cut]) -> bytes:
    """The file's bytes without each cut's keys after its first."""
    pieces = []
    pos = 0
    for c in cuts:
        f.seek(pos)
        pieces.append(f.read(c.head_end - pos))
        pos = c.b1
    f.seek(pos)
    pieces.append(f.read())
    return b"".join(pieces)


class _BlockParser:
    """``parse_blocks`` for :func:`~.document.parse_document` of the skeleton: a block where a cut
    begins is parsed from the file's bytes of the whole block; the others from the skeleton. Key
    lines are numbered as in the file."""

    def __init__(self, path: str, f, cuts: list[_Cut], parsed: dict, intern: _Interner):
        self.path = path
        self.f = f
        self.intern = intern
        self.parsed = parsed  # cut k0 -> the keys the scan parsed
        removed = np.cumsum([0] + [c.removed for c in cuts])
        #: skeleton line of each cut's first key -> the cut
        self.at = {c.k0 - int(removed[j]): c for j, c in enumerate(cuts)}
        self.skel_k0 = np.array([c.k0 - int(removed[j]) for j, c in enumerate(cuts)], dtype=np.int64)
        self.removed = removed

    def __call__(self, lines: Lines, blocks, path) -> list:
        out: list = [None] * len(blocks)
        rest = [j for j, (k0, _, _) in enumerate(blocks) if k0 not in self.at]
        for j, ka in zip(rest, parse_key_blocks(lines, [blocks[j] for j in rest], path), strict=True):
            out[j] = self._renumbered(ka)
        for j, (k0, k1, want) in enumerate(blocks):
            cut = self.at.get(k0)
            if cut is not None:
                if k1 - k0 != cut.head_lines:
                    raise _WholeFile  # (the skeleton's block is not the cut's first key)
                ka = self.parsed.pop(cut.k0, None)
                if ka is None:  # (a block across two slices: its bytes read again)
                    ka = self._cut_keys(cut)
                if ka.n_components not in (want or (1, 3, 4)):
                    raise _WholeFile  # (the careful parser names the list's need)
                out[j] = ka
        return out

    def _renumbered(self, ka):
        """``ka`` (parsed from the skeleton) with its key lines numbered as in the file."""
        if not self.skel_k0.size or not ka.n:
            return ka
        before = np.searchsorted(self.skel_k0, ka.key_lines, side="right")
        return dataclasses.replace(ka, key_lines=ka.key_lines + self.removed[before])

    def _cut_keys(self, cut: _Cut):
        ka = _read_cut_keys(self.f, cut, self.path)
        return self.intern(ka)
