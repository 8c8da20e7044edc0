"""The character's joint positions at the clip's frames, computed in blocks and kept across edits.

Motion trails (a bone tip over a window of frames) and onion skins (whole poses a few frames before
and after the cursor) show poses at many frames on every playback tick. :class:`FramePoses` computes
them with the engine's vectorized forward kinematics (``engine.skeleton.pose_points``) a block of
:data:`BLOCK` frames at a time, when first asked, and keeps them: a playback tick then only slices.
An edit replaces tracks; frames outside every changed track's changed span (``curves.changed_span``:
where two states of a curve may play differently) are kept, the others are posed again when next
asked (a gizmo drag step on a BVH joint: the keyed frame and its neighbours, about 5 frames).

Frame ``k`` is at ``k / frame_rate`` seconds (Unity's and BVH's frame grid); positions are in Unity's
frame and the clip's length unit, joints then tips as ``pose_points`` returns them.
"""

from __future__ import annotations

import numpy as np

from curveeditor.engine.clip import Clip
from curveeditor.engine.curves import changed_span
from curveeditor.engine.skeleton import Skeleton, pose_points

__all__ = ["FramePoses", "BLOCK"]

#: Frames per computed block (one vectorized pose call each: ~2-4 ms on a 67-joint BVH).
BLOCK = 64


class FramePoses:
    """Joint and tip positions of one skeleton at the frames of the current clip (module docstring).

    Attributes:
        computed: how many blocks were computed so far (tests, benchmarks).
    """

    def __init__(self) -> None:
        self._skeleton: Skeleton | None = None
        self._clip: Clip | None = None
        self._blocks: dict[int, np.ndarray] = {}
        self._dirty: dict[int, list[tuple[int, int]]] = {}  # block -> frame ranges to pose again
        self.computed = 0
        self.recomputed_frames = 0
        self._range_memo = None

    def frame_range(self, clip: Clip) -> tuple[int, int]:
        """First and last frame index (inclusive) inside the clip's key range (kept per clip object:
        ``clip.start`` / ``clip.end`` visit every track, ~0.1 ms each on a 67-track BVH)."""
        memo = self._range_memo
        if memo is not None and memo[0] is clip:
            return memo[1]
        fr = float(clip.frame_rate)
        first = int(np.ceil(float(clip.start) * fr - 1e-6))
        last = int(np.floor(float(clip.end) * fr + 1e-6))
        out = (first, max(first, last))
        self._range_memo = (clip, out)
        return out

    def points(self, skeleton: Skeleton, clip: Clip, frames, columns=None) -> np.ndarray:
        """Positions ``(M, P, 3)`` at integer ``frames (M,)`` (clamped to the clip's frames), of the
        points ``columns`` (indices into joints then tips; None = all)."""
        self._sync(skeleton, clip)
        lo, hi = self.frame_range(clip)
        f = np.clip(np.asarray(frames, dtype=np.int64).reshape(-1), lo, hi)
        width = skeleton.n_joints + skeleton.tips.shape[0] if columns is None else len(columns)
        out = np.empty((f.size, width, 3))
        if not f.size:
            return out
        blocks = f // BLOCK
        first, last = int(blocks[0]), int(blocks[-1])
        if first == last and np.all(blocks == first):  # the usual case: one block
            data = self._block(first, lo, hi)
            rows = f - first * BLOCK
            return data[rows] if columns is None else data[rows[:, None], np.asarray(columns)[None, :]]
        for b in np.unique(blocks):
            data = self._block(int(b), lo, hi)
            sel = blocks == b
            rows = f[sel] - int(b) * BLOCK
            out[sel] = data[rows] if columns is None else data[rows[:, None], np.asarray(columns)[None, :]]
        return out

    def _block(self, b: int, lo: int, hi: int) -> np.ndarray:
        data = self._blocks.get(b)
        fr = float(self._clip.frame_rate)
        if data is None:
            # the whole block's frame grid (frames outside the clip clamp to its ends), one pose call
            frames = np.clip(np.arange(b * BLOCK, (b + 1) * BLOCK), lo, hi)
            data = pose_points(self._skeleton, self._clip, frames / fr)
            self._blocks[b] = data
            self.computed += 1
            return data
        dirty = self._dirty.pop(b, None)
        if dirty:
            # an edit changed a few frames of this block (a drag step: the keyed frame and its
            # neighbours): only those are posed again
            rows = np.unique(np.concatenate([np.arange(f0, f1 + 1) for f0, f1 in dirty]) - b * BLOCK)
            rows = rows[(rows >= 0) & (rows < BLOCK)]
            frames = np.clip(b * BLOCK + rows, lo, hi)
            data[rows] = pose_points(self._skeleton, self._clip, frames / fr)
            self.recomputed_frames += len(rows)
        return data

    def _sync(self, skeleton: Skeleton, clip: Clip) -> None:
        if skeleton is self._skeleton and clip is self._clip:
            return
        old = self._clip
        keep = skeleton is self._skeleton and old is not None and self._blocks
        if keep and (old.frame_rate != clip.frame_rate or len(old.tracks) != len(clip.tracks)):
            keep = False
        if keep and old.other_tracks is not clip.other_tracks:  # position curves: never edited here
            same = len(old.other_tracks) == len(clip.other_tracks)
            keep = same and all(a is b for a, b in zip(old.other_tracks, clip.other_tracks, strict=True))
        spans = []
        if keep:
            for a, b in zip(old.tracks, clip.tracks, strict=True):
                if a is b:
                    continue
                if a.path != b.path or a.kind != b.kind or a.order != b.order:
                    keep = False
                    break
                span = changed_span(a.curve, b.curve)
                if span is None:
                    keep = False
                    break
                spans.append(span)
        self._skeleton, self._clip = skeleton, clip
        if not keep:
            self._blocks = {}
            self._dirty = {}
            return
        fr = float(clip.frame_rate)
        for t0, t1 in spans:
            if not t1 >= t0:
                continue  # (inf, -inf): the same curve
            f0 = int(np.floor(t0 * fr - 1e-6)) if np.isfinite(t0) else -(2**62)
            f1 = int(np.ceil(t1 * fr + 1e-6)) if np.isfinite(t1) else 2**62
            for b in [k for k in self._blocks if f0 <= (k + 1) * BLOCK - 1 and f1 >= k * BLOCK]:
                a, z = max(f0, b * BLOCK), min(f1, (b + 1) * BLOCK - 1)
                if z - a + 1 > BLOCK // 2:  # most of the block: pose it whole when asked
                    del self._blocks[b]
                    self._dirty.pop(b, None)
                else:
                    self._dirty.setdefault(b, []).append((a, z))
