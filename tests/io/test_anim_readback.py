"""A written .anim always reads back (issue 11): every text the writer produces parses with our own
reader (the careful path and the fast path alike) to the same tracks, for every corpus clip written
unchanged, with every rotation track edited, as a new clip, and in each storage mode."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from curveeditor.engine.clip import played
from curveeditor.engine.rotations import geodesic_angle, quat_mul
from curveeditor.io.anim import anim_text, read_anim
from curveeditor.io.anim.document import parse_document
from curveeditor.io.anim.keys import parse_key_block
from curveeditor.io.anim.reader import build_clip
from tests.conftest import corpus_files

ANIMS = corpus_files("anim", "*.anim")
corpus = pytest.mark.skipif(not ANIMS, reason="../shared/corpus/anim is not present")


def reread(text: str, name="written.anim"):
    """Our reader on ``text``; also checks that the fast parser and the careful one agree on it."""
    doc = parse_document(name, text.encode("utf-8", "surrogateescape"))
    for lst in doc.entries.values():
        for e in lst:
            if e.keys is not None:
                slow = parse_key_block(doc.lines, e.extra["m_curve_line"] + 1, e.extra["key_end"], name)
                assert np.array_equal(slow.value, e.keys.value) and np.array_equal(slow.time, e.keys.time)
    return build_clip(doc)


def same_tracks(a, b, tol_deg=1e-3):
    assert [t.path for t in a.tracks] == [t.path for t in b.tracks]
    for x, y in zip(a.tracks, b.tracks, strict=True):
        if x.n_keys == 0:
            assert y.n_keys == 0
            continue
        f32 = np.asarray(x.times, dtype=np.float32).astype(np.float64)
        assert np.array_equal(y.times, f32), x.path
        grid = np.linspace(x.times[0], x.times[-1], 4 * x.n_keys + 1)
        err = geodesic_angle(played(x, grid), played(y, grid)).max()
        assert err < tol_deg, (x.path, err)


def edited(clip):
    """Every rotation track turned by 2.5 deg about Y (quaternions) or shifted (Euler)."""
    out = clip
    r = np.array([0.0, np.sin(np.deg2rad(1.25)), 0.0, np.cos(np.deg2rad(1.25))])
    for t in clip.tracks:
        c = t.curve
        if t.n_keys == 0:
            continue
        if t.kind == "quaternion":
            v = quat_mul(np.broadcast_to(r, c.value.shape), c.value)
        else:
            v = c.value + np.array([0.0, 2.5, 0.0])
        out = out.with_track(replace(t, curve=c.with_keys(value=v)))
    return out


@corpus
@pytest.mark.parametrize("path", ANIMS, ids=lambda p: p.name[:60])
def test_every_written_text_reads_back_to_the_same_tracks(path):
    clip = read_anim(path)
    text, _ = anim_text(clip)
    assert text == path.read_text(encoding="utf-8", errors="surrogateescape")
    same_tracks(clip, reread(text))
    ed = edited(clip)
    text, _ = anim_text(ed)
    back = reread(text)
    same_tracks(ed, back)
    fresh = replace(clip, source=None)
    # Storage conversions re-key every track (engine work): on the smaller clips only, to stay fast.
    modes = (None, "quaternion", "euler") if path.stat().st_size < 100_000 else (None,)
    for mode in modes:
        text, _ = anim_text(fresh, mode=mode)
        back = reread(text)
        assert [t.path for t in back.tracks] == [t.path for t in clip.tracks]
        for x, y in zip(clip.tracks, back.tracks, strict=True):
            if x.n_keys:
                k = np.asarray(x.times, dtype=np.float32).astype(np.float64)
                assert geodesic_angle(played(x, k), played(y, k)).max() < 0.02, (path.name, mode, x.path)
