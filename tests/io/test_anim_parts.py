"""The ``.anim`` reader in parts (io.anim.parts, issue 26): the same clip as the whole-file reader, bit
for bit, with its long key blocks read one at a time; the same error as the whole-file reader for a
fault anywhere; and the write check's read-back of a large file goes through it."""

from __future__ import annotations

import re

import numpy as np
import pytest

from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack
from curveeditor.engine.tangents import make_curve
from curveeditor.io.anim import parts, read_anim, write_anim
from curveeditor.io.anim.document import parse_document
from curveeditor.io.errors import ClipReadError
from tests.conftest import corpus_files, with_weights

ANIMS = corpus_files("anim", "*.anim")
TWO_KEYS = re.compile(rb"m_Curve:\r?\n      - [^\n]*\n(?:        [^\n]*\n){7,}      - ")


def assert_same_clip(a: Clip, b: Clip) -> None:
    """Every track and other curve of ``a`` holds exactly ``b``'s numbers."""
    assert [(t.path, t.kind, t.order) for t in a.tracks] == [(t.path, t.kind, t.order) for t in b.tracks]
    assert [(o.path, o.attribute, o.kind) for o in a.other_tracks] == [
        (o.path, o.attribute, o.kind) for o in b.other_tracks
    ]
    assert (a.name, a.frame_rate) == (b.name, b.frame_rate)
    pairs = [(x.curve, y.curve) for x, y in zip(a.tracks, b.tracks, strict=True)]
    pairs += [(x.curve, y.curve) for x, y in zip(a.other_tracks, b.other_tracks, strict=True)]
    for x, y in pairs:
        assert (x is None and y is None) or x.equals(y)  # (every array bit for bit, wrap modes)
    for x, y in zip(a.other_tracks, b.other_tracks, strict=True):
        np.testing.assert_array_equal(x.times, y.times)
        assert x.meta.get("values") == y.meta.get("values") and x.meta.get("events") == y.meta.get("events")


@pytest.fixture(autouse=True, params=[False, True], ids=["one process", "blocks parsed beside"])
def parse_beside(request, monkeypatch):
    """Every test in both ways: the scan parsing the cut blocks itself, and a forked child parsing
    them as the scan finds them (``parts.FORK``, ``beside.ForkStream``)."""
    monkeypatch.setattr(parts, "FORK", request.param)
    return request.param


@pytest.fixture
def cuts_seen(monkeypatch):
    """The cuts of every :func:`parts.read_in_parts` call, in call order (a list of lists)."""
    seen: list = []
    scan = parts._scan

    def spy(*args):
        cuts, parsed = scan(*args)
        seen.append(cuts)
        return cuts, parsed

    monkeypatch.setattr(parts, "_scan", spy)
    return seen


@pytest.fixture
def no_whole_read(monkeypatch):
    """Fail if the parts reader falls back to the whole-file read."""
    import curveeditor.io.anim as anim

    def whole(path, keep_source=True):
        raise AssertionError(f"read in parts fell back to the whole-file read of {path}")

    monkeypatch.setattr(anim, "read_anim", whole)


#: The two key layouts a new clip is written in: serializedVersion 2 (no weight fields: 6 lines a
#: key) for unweighted curves, 3 (9 lines) for curves with weights.
LAYOUTS = {"sv2": (2, 6), "sv3": (3, 9)}


def long_clip(n=3000, tracks=3, weights=False) -> Clip:
    """Euler tracks of ``n`` keys at 60 fps (blocks of ``6 n`` lines, ``9 n`` with ``weights``), a
    float curve of ``n`` keys."""
    t = np.arange(n) / 60.0
    rng = np.random.default_rng(3)
    tr = []
    dress = with_weights if weights else (lambda c: c)
    for j in range(tracks):
        e = np.cumsum(rng.normal(0, 2.0, (n, 3)), axis=0)
        tr.append(RotationTrack(f"Root/Bone{j}", "euler", dress(make_curve(t, e)), order="zxy"))
    blend = OtherTrack(
        "Face", "blendShape.smile", "float", dress(make_curve(t, np.sin(t)[:, None])), t, {"class_id": 137}
    )
    return Clip("long", 60.0, tr, [blend])


@pytest.fixture(params=list(LAYOUTS))
def layout(request):
    """``(key serializedVersion, lines a key)`` of :func:`long_anim`'s keys."""
    return LAYOUTS[request.param]


@pytest.fixture
def long_anim(tmp_path, layout):
    path = tmp_path / "long.anim"
    write_anim(long_clip(weights=layout[0] == 3), path)
    assert f"      - serializedVersion: {layout[0]}\n".encode() in path.read_bytes()
    return path


@pytest.mark.skipif(not ANIMS, reason="../shared/corpus/anim is not present")
@pytest.mark.parametrize("path", ANIMS, ids=lambda p: p.name[:40])
def test_corpus_in_parts_is_the_whole_read(path, monkeypatch, cuts_seen, no_whole_read):
    from curveeditor.io.anim import reader

    monkeypatch.setattr(parts, "_CUT_MIN_LINES", 8)  # (cut every block of a corpus file)
    got = parts.read_in_parts(path)
    data = path.read_bytes()
    want = reader.build_clip(parse_document(str(path), data))
    assert_same_clip(got, want)
    assert got.source is None
    if TWO_KEYS.search(data):  # (a block of two keys or more at Unity's indentation is cut)
        assert cuts_seen[0], "no block was cut"


def test_long_blocks_are_cut_and_read_back_exactly(long_anim, layout, cuts_seen, no_whole_read):
    got = parts.read_in_parts(long_anim)
    assert_same_clip(got, read_anim(long_anim))
    # Cut: the 3 tracks' m_EulerCurves and 9 m_EditorCurves blocks and the float curve's 2 (runtime and
    # editor), each of 3000 keys.
    assert len(cuts_seen[0]) == 14
    assert all(c.k1 - c.k0 == 3000 * layout[1] for c in cuts_seen[0])


def test_key_lines_are_the_files_lines(long_anim, monkeypatch, no_whole_read):
    docs = []
    real = parts.parse_document

    def capture(*a, **k):
        docs.append(real(*a, **k))
        return docs[-1]

    monkeypatch.setattr(parts, "parse_document", capture)
    parts.read_in_parts(long_anim)
    data = long_anim.read_bytes()
    whole = parse_document(str(long_anim), data)
    for lname, entries in whole.entries.items():
        for e, p in zip(entries, docs[0].entries[lname], strict=True):
            if e.keys is not None:
                np.testing.assert_array_equal(p.keys.key_lines, e.keys.key_lines)


def test_crlf_file(tmp_path, long_anim, cuts_seen, no_whole_read):
    crlf = tmp_path / "crlf.anim"
    crlf.write_bytes(long_anim.read_bytes().replace(b"\n", b"\r\n"))
    assert_same_clip(parts.read_in_parts(crlf), read_anim(crlf))
    assert len(cuts_seen[0]) == 14


def test_small_slices(long_anim, monkeypatch, cuts_seen, no_whole_read):
    """Blocks and lines that straddle the scan's slices."""
    monkeypatch.setattr(parts, "_SLICE", 4099)
    assert_same_clip(parts.read_in_parts(long_anim), read_anim(long_anim))
    assert len(cuts_seen[0]) == 14


def _corrupt(data: bytes, nth_key: int, old: bytes, new: bytes) -> bytes:
    """``data`` with ``old`` replaced by ``new`` in the ``nth_key``-th key line holding ``old``."""
    pos = -1
    for _ in range(nth_key):
        pos = data.index(old, pos + 1)
    return data[:pos] + new + data[pos + len(old) :]


@pytest.mark.parametrize(
    "fault",
    [
        (2500, b"inSlope: {x: ", b"inSlope: {x: abc"),  # a bad number deep in a cut block
        (7000, b"value: {x: ", b"value: {x: nan, q: "),  # in the second track's block
        (1500, b"tangentMode: ", b"tangentMode: 1.5"),
        (2000, b"      - serializedVersion: {v}", b"      - serializedVersion: 9"),
        (400, b"time: ", b"time: \x01"),  # a control character
        (900, b"time: ", "time: \u00e9".encode("latin-1")),  # invalid UTF-8
        (1200, b"        outSlope", b"\toutSlope"),  # a tab in the indentation
        (1, b"m_PreInfinity: 2", b"m_PreInfinity: 7"),  # a skeleton line after a cut block
    ],
)
def test_a_fault_is_named_as_the_whole_read_names_it(tmp_path, long_anim, layout, fault):
    bad = tmp_path / "bad.anim"
    nth, old, new = fault
    bad.write_bytes(_corrupt(long_anim.read_bytes(), nth, old.replace(b"{v}", b"%d" % layout[0]), new))
    with pytest.raises(ClipReadError) as whole:
        read_anim(bad)
    with pytest.raises(ClipReadError) as inparts:
        parts.read_in_parts(bad)
    assert str(inparts.value) == str(whole.value)
    assert inparts.value.line == whole.value.line


def test_truncated_in_a_cut_block(tmp_path, long_anim):
    data = long_anim.read_bytes()
    bad = tmp_path / "cut.anim"
    bad.write_bytes(data[: data.index(b"      m_Curve:\n") + 300_000])
    with pytest.raises(ClipReadError) as whole:
        read_anim(bad)
    with pytest.raises(ClipReadError) as inparts:
        parts.read_in_parts(bad)
    assert str(inparts.value) == str(whole.value)


def test_keep_source_false_reads_large_files_in_parts(long_anim, monkeypatch, cuts_seen):
    assert read_anim(long_anim, keep_source=False).source is not None  # (below PARTS_MIN_BYTES: whole)
    assert not cuts_seen
    monkeypatch.setattr(parts, "PARTS_MIN_BYTES", 1 << 16)
    assert read_anim(long_anim, keep_source=False).source is None
    assert len(cuts_seen) == 1
    assert read_anim(long_anim).source is not None  # (the default keeps the document)


def test_the_write_check_reads_a_large_file_back_in_parts(tmp_path, monkeypatch, cuts_seen):
    from curveeditor.io import write_checked

    clip = long_clip()
    whole = write_checked(clip, tmp_path / "whole.anim")
    assert not cuts_seen
    monkeypatch.setattr(parts, "PARTS_MIN_BYTES", 1 << 16)
    check = write_checked(clip, tmp_path / "parts.anim")
    assert len(cuts_seen) == 1 and len(cuts_seen[0]) == 14
    assert check.clip.source is None
    assert (tmp_path / "parts.anim").read_bytes() == (tmp_path / "whole.anim").read_bytes()
    assert [c.as_dict() for c in check.tracks] == [c.as_dict() for c in whole.tracks]
    assert_same_clip(check.clip, whole.clip)


@pytest.fixture
def slow_scan(monkeypatch):
    """The scan pauses after each cut it finds, so that a child parsing beside it takes some."""
    import time

    real = parts._head

    def head(*a):
        cut = real(*a)
        time.sleep(0.05)
        return cut

    monkeypatch.setattr(parts, "_head", head)


def _parsed_by(monkeypatch, log, fail_in_child=False):
    """``parts._parse_cut`` logging the pid that parses each cut to ``log`` (a child's memory is its
    own); with ``fail_in_child`` a child raises instead."""
    import os

    real = parts._parse_cut
    me = os.getpid()

    def parse(path, fields):
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        if fail_in_child and os.getpid() != me:
            raise RuntimeError("a child that fails")
        return real(path, fields)

    monkeypatch.setattr(parts, "_parse_cut", parse)
    return me


def test_blocks_parsed_beside_come_from_the_child(long_anim, tmp_path, monkeypatch, slow_scan, no_whole_read):
    monkeypatch.setattr(parts, "FORK", True)
    log = tmp_path / "pids"
    me = _parsed_by(monkeypatch, log)
    got = parts.read_in_parts(long_anim)
    assert_same_clip(got, read_anim(long_anim))
    pids = log.read_text().split()
    # The child parsed some (under load it may parse all: the scan pauses after each cut).
    assert len(pids) == 14 and any(p != str(me) for p in pids)


def test_a_child_that_fails_is_made_up_for(long_anim, tmp_path, monkeypatch, slow_scan, no_whole_read):
    monkeypatch.setattr(parts, "FORK", True)
    log = tmp_path / "pids"
    me = _parsed_by(monkeypatch, log, fail_in_child=True)
    got = parts.read_in_parts(long_anim)
    assert_same_clip(got, read_anim(long_anim))
    pids = log.read_text().split()
    assert pids.count(str(me)) == 14 and len(set(pids)) == 2  # (the child tried one, and died)


def _arrays_by_content(clip: Clip, field: str) -> dict[bytes, set[int]]:
    """Content (dtype, shape, bytes) -> ids of the memory holding it (the array a view is of), over
    the ``field`` of every curve of ``clip``."""
    out: dict = {}
    curves = [t.curve for t in clip.tracks] + [o.curve for o in clip.other_tracks if o.curve is not None]
    for c in curves:
        a = owner = getattr(c, field)
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        out.setdefault((a.dtype.str, a.shape, a.tobytes()), set()).add(id(owner))
    return out


@pytest.mark.parametrize("field", ["time", "in_weight", "weighted_mode", "tangent_mode"])
def test_equal_arrays_of_the_blocks_are_one_array(long_anim, field, no_whole_read):
    """A dense file's blocks repeat their times, weights and modes: read in parts, each distinct
    array is held once (``parts._Interner``), whether the child or the scan parsed the block."""
    got = parts.read_in_parts(long_anim)
    assert_same_clip(got, read_anim(long_anim))
    by_content = _arrays_by_content(got, field)
    assert all(len(ids) == 1 for ids in by_content.values())
    assert len(by_content) < len(got.tracks) + len(got.other_tracks)  # (some curves share one)


def test_blocks_parsed_by_both_processes_share_their_arrays(
    long_anim, tmp_path, monkeypatch, slow_scan, no_whole_read
):
    """The cuts the caller parsed itself (the child's queue left over, or a child that died) share
    the arrays the child sent: one copy of each, not one per process."""
    monkeypatch.setattr(parts, "FORK", True)
    me = _parsed_by(monkeypatch, tmp_path / "pids", fail_in_child=True)
    got = parts.read_in_parts(long_anim)
    assert_same_clip(got, read_anim(long_anim))
    assert str(me) in (tmp_path / "pids").read_text().split()
    assert all(len(ids) == 1 for ids in _arrays_by_content(got, "time").values())


def test_sharing_is_bit_for_bit():
    """Arrays equal as numbers but not as bits (0.0 and -0.0) are not shared: the keys read are the
    file's own numbers."""
    import os

    intern = parts._Interner()
    n = 4096
    pos, neg = np.zeros(n), np.zeros(n)
    neg[7] = -0.0
    a = _keys(pos)
    b = _keys(neg)
    assert intern(a).time is a.time
    got = intern(b)
    assert got.time is b.time and np.signbit(got.time[7])
    c = intern(_keys(pos.copy()))
    assert c.time is a.time  # (equal bits: the first block's array)
    assert os.getpid() == intern.pid


def _keys(time: np.ndarray):
    """KeyArrays of one component whose every array but ``time`` is zeros."""
    from curveeditor.io.anim.keys import KeyArrays

    n = time.shape[0]
    z = np.zeros((n, 1))
    return KeyArrays(3, 1, time, z, z, z, np.zeros(n, np.int64), np.zeros(n, np.int64), z, z, np.arange(n))


def _owner(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def test_editor_curves_are_views_of_their_runtime_columns(long_anim, no_whole_read):
    """An editor curve (``localEulerAnglesRaw.x``) copies a column of its runtime curve: read in parts,
    its values and slopes are that column, not a copy, and hold the same numbers."""
    got = parts.read_in_parts(long_anim)
    assert_same_clip(got, read_anim(long_anim))
    editors = {(o.path, o.attribute): o for o in got.other_tracks if o.kind == "editor"}
    for t in got.tracks:
        for c, axis in enumerate("xyz"):
            ed = editors[(t.path, f"localEulerAnglesRaw.{axis}")].curve
            for f in ("value", "in_slope", "out_slope"):
                run, mine = getattr(t.curve, f), getattr(ed, f)
                assert _owner(mine) is _owner(run)
                np.testing.assert_array_equal(mine[:, 0], run[:, c])


def test_an_editor_block_parsed_before_its_runtime_block_arrived_is_settled_to_a_view():
    """The caller may parse an editor block (``localEulerAnglesRaw.y``) before the child's runtime
    block holding that column is loaded: once it is, the editor block's array gives way to the view
    of the runtime column (:meth:`parts._Interner.settled`), so one copy remains either way."""
    from curveeditor.io.anim.keys import KeyArrays

    n = 4096
    rng = np.random.default_rng(5)
    vec = rng.normal(size=(n, 3))
    time = np.arange(n) / 60.0
    z3, z1, zi = np.zeros((n, 3)), np.zeros((n, 1)), np.zeros(n, np.int64)
    runtime = KeyArrays(3, 3, time, vec, vec, vec, zi, zi, z3, z3, np.arange(n))
    col = vec[:, 1:2].copy()
    editor = KeyArrays(3, 1, time.copy(), col, col, col, zi.copy(), zi.copy(), z1, z1, np.arange(n))

    caller = parts._Interner()
    mine = caller(editor)  # (the caller's own parse, first)
    from_child = parts._Interner().sent(10, runtime)  # (what a child sends; no fork needed to make it)
    got = caller.adopt(from_child)
    settled = caller.settled({900: mine, 10: got})
    ed = settled[900]
    assert ed.value.base is settled[10].value  # (a view of the runtime's values)
    assert not ed.value.flags.writeable  # (else a Curve copies it: the child's arrays arrive writeable)
    np.testing.assert_array_equal(ed.value[:, 0], vec[:, 1])
    assert ed.time is settled[10].time
