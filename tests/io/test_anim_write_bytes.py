"""The .anim writer's bytes are pinned: a refactor of the renderer (streaming, spelling reuse, the
splice) must write exactly what it wrote before (issue 8 section 2). The hashes were taken from the
writer before the streaming render (commit 2966d6b, the same clip rendered there); a change of
output format must update them on purpose, with the reason in the commit."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from benchmarks.anim_io import as_version_3
from curveeditor.engine.clip import Clip, OtherTrack, RotationTrack
from curveeditor.engine.rotations import euler_to_quat
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip, write_clip
from curveeditor.io.anim.writer import render
from curveeditor.io.verify import prepare_samples


def small_clip() -> Clip:
    """Every kind of entry the new-clip path writes: Euler (ZXY and a converted ZYX), quaternion,
    per-frame (BVH-like) samples, weighted keys, short and long curves, position, scale and float
    curves, negative zeros and tiny values."""
    rng = np.random.default_rng(8)
    t = np.arange(40) / 30.0
    e = 80 * np.sin(t[:, None] * rng.uniform(1, 4, 3) + rng.uniform(0, 6, 3))
    e[3] = [-0.0, 1e-12, 360.0]
    q = euler_to_quat(e[::-1] * 1.5, "zxy")
    weighted = make_curve(t, e, "clamped_auto")
    wm = np.zeros_like(weighted.weighted_mode)
    wm[5:9] = 3
    iw = np.full_like(weighted.in_weight, 1 / 3)
    iw[5:9] = 0.25
    from dataclasses import replace

    weighted = replace(weighted, weighted_mode=wm, in_weight=iw, out_weight=iw * 1.5)
    frames = RotationTrack(
        "Hips/Frames", "euler", make_curve(t, e * 0.7, "linear"), order="ZYX", meta={"frame_samples": True}
    )
    # Zero in-slopes beside -0 out-slopes (flat keys): equal by value, spelled "0" and "-0".
    flat = make_curve(t, e * 0.25, "flat")
    zo = flat.out_slope.copy()
    zo[::3] = -0.0
    flat = replace(flat, out_slope=zo)
    tracks = [
        RotationTrack("Hips", "euler", make_curve(t, e, "clamped_auto")),
        RotationTrack("Hips/Flat", "euler", flat),
        RotationTrack("Hips/Spine", "euler", make_curve(t, e * 0.5, "auto"), order="ZYX"),
        RotationTrack("Hips/Spine/Neck", "quaternion", make_curve(t, q, "clamped_auto")),
        RotationTrack("Hips/Spine/Head", "euler", weighted),
        RotationTrack("Hips/Short", "euler", make_curve(t[:3], e[:3], "linear")),
        RotationTrack("", "quaternion", make_curve(t[:1], q[:1], "clamped_auto")),
        frames,
    ]
    pos = make_curve(t, rng.normal(0, 0.3, (40, 3)), "clamped_auto")
    scl = make_curve(t[:5], 1 + 0.01 * rng.normal(size=(5, 3)), "clamped_auto")
    flt = make_curve(t, rng.normal(size=(40, 1)), "linear")
    others = [
        OtherTrack("Hips", "m_LocalPosition", "position", pos, t, {}),
        OtherTrack("Hips/Spine", "m_LocalScale", "scale", scl, t[:5], {}),
        OtherTrack("Hips", "blendShape.Blink", "float", flt, t, {"class_id": 137}),
    ]
    return Clip("pinned", 30.0, tracks, others)


def digest(clip, **kw) -> str:
    text, _ = render(clip, **kw)
    return _sha(text)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:20]


#: The bytes as serializedVersion 3 keys (:func:`as_version_3`): new clips are written with
#: serializedVersion 2 keys since issue 21's compaction; the same numbers, spelled the same.
PINNED = {
    # Own order by default (issue 21): the old keep_order bytes with the editor curves of the ZYX
    # tracks carrying m_RotationOrder 0 as their runtime curve does.
    "default": "954bbec8e3357b7b5b27",
    "quaternion": "e52a182a13a5f232144b",
    "euler": "9bb3b8c7e8ffc8cd1527",
    # keep_order=False: the former default (ZXY conversion), bytes unchanged.
    "to_zxy": "ef09f261eb228c3d82e7",
    "euler_to_zxy": "5df0eceb5a53c9f46189",
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_new_clip_bytes_are_pinned(name):
    kw = {
        "default": {},
        "to_zxy": {"keep_order": False},
        "euler_to_zxy": {"mode": "euler", "keep_order": False},
    }.get(name, {"mode": name})
    text, _ = render(small_clip(), **kw)
    assert "      - serializedVersion: 2\n        time: " in text  # (its curves with weights: 3)
    assert _sha(as_version_3(text)) == PINNED[name]


def test_written_file_is_the_rendered_text(tmp_path):
    """write_clip streams the render into the temp file: the file holds exactly render()'s text."""
    clip = small_clip()
    out = tmp_path / "c.anim"
    write_clip(clip, out)
    want, _ = render(prepare_samples(clip, ".anim"))
    assert out.read_bytes() == want.encode("utf-8")


EDITED = {
    "Malmaars__3Dto2DTool__Assets_Resources_LoadedAnimationanim.anim": "ce2b51f6dd59a8b7bcac",
    "Tiotao__PlastAR__Assets_mixamo.com.anim": "b432eb7ceafd90c7f650",
}


@pytest.mark.parametrize("name", sorted(EDITED))
def test_edited_document_bytes_are_pinned(corpus_dir, name):
    """An edited corpus document (every rotation track's values and slopes changed) rewrites its
    entries exactly as before."""
    from dataclasses import replace

    src = corpus_dir / "anim" / name
    if not src.exists():
        pytest.skip(f"{name} not in the corpus")
    clip = read_clip(src)
    tracks = []
    for t in clip.tracks:
        c = t.curve
        c = replace(
            c, value=c.value * 1.0001 + 1e-4, in_slope=c.in_slope * 1.0001, out_slope=c.out_slope * 0.9999
        )
        tracks.append(replace(t, curve=c))
    assert digest(clip.with_tracks(tracks)) == EDITED[name]


def test_write_streams_entry_by_entry(tmp_path, monkeypatch):
    """The writer hands the temp file one entry at a time: no chunk near the file's size (the old
    writer built the whole text as one str, then its encoding: 3.4x the file in memory)."""
    from curveeditor.io.anim import writer

    sizes = []
    real = writer.atomic_write_chunks

    def spy(path, chunks, protect=None):
        def counted():
            for c in chunks:
                sizes.append(len(c))
                yield c

        real(path, counted(), protect=protect)

    monkeypatch.setattr(writer, "atomic_write_chunks", spy)
    out = tmp_path / "c.anim"
    write_clip(small_clip(), out)
    total = out.stat().st_size
    assert sum(sizes) == total
    assert len(sizes) > 20 and max(sizes) < total / 5


def test_a_value_unity_cannot_store_is_one_line_and_nothing_is_written(tmp_path):
    """A NaN found while streaming (spelled mid-file) fails the write as before: one ClipWriteError,
    no file, no temp file."""
    from dataclasses import replace

    from curveeditor.io import ClipWriteError

    clip = small_clip()
    t = clip.tracks[0]
    v = t.curve.value.copy()
    v[20, 1] = np.nan
    bad = clip.with_tracks([replace(t, curve=replace(t.curve, value=v))] + list(clip.tracks[1:]))
    with pytest.raises(ClipWriteError, match="NaN"):
        write_clip(bad, tmp_path / "bad.anim")
    assert list(tmp_path.iterdir()) == []
