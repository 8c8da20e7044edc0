"""The character's joint positions at the clip's frames, computed in blocks and kept across edits.

Motion trails (a bone tip over a window of frames) and onion skins (whole poses a few frames before
and after the cursor) show poses at many frames on every playback tick. :class:`FramePoses` computes
them with the engine's vectorized forward kinematics (``engine.skeleton.pose_points``) a block of
:data:`BLOCK` frames at a time, when first asked, and keeps them: a playback tick then only slices.
An edit replaces tracks; the blocks whose frames lie outside every changed track's changed span
(``curves.changed_span``: where two states of a curve may play differently) are kept, the others are
recomputed when next asked (a gizmo drag recomputes one or two blocks per step, not the clip).

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
        self.computed = 0

    def frame_range(self, clip: Clip) -> tuple[int, int]:
        """First and last frame index (inclusive) inside the clip's key range."""
        fr = float(clip.frame_rate)
        first = int(np.ceil(float(clip.start) * fr - 1e-6))
        last = int(np.floor(float(clip.end) * fr + 1e-6))
        return first, max(first, last)

    def points(self, skeleton: Skeleton, clip: Clip, frames) -> np.ndarray:
        """Positions ``(M, J + K, 3)`` at integer ``frames (M,)`` (clamped to the clip's frames)."""
        self._sync(skeleton, clip)
        lo, hi = self.frame_range(clip)
        f = np.clip(np.asarray(frames, dtype=np.int64).reshape(-1), lo, hi)
        if not f.size:
            return np.zeros((0, skeleton.n_joints + skeleton.tips.shape[0], 3))
        blocks = np.floor_divide(f, BLOCK)
        out = np.empty((f.size, skeleton.n_joints + skeleton.tips.shape[0], 3))
        for b in np.unique(blocks):
            data = self._block(int(b), lo, hi)
            sel = blocks == b
            out[sel] = data[f[sel] - int(b) * BLOCK]
        return out

    def _block(self, b: int, lo: int, hi: int) -> np.ndarray:
        data = self._blocks.get(b)
        if data is None:
            # the whole block's frame grid (frames outside the clip clamp to its ends), one pose call
            frames = np.clip(np.arange(b * BLOCK, (b + 1) * BLOCK), lo, hi)
            data = pose_points(self._skeleton, self._clip, frames / float(self._clip.frame_rate))
            self._blocks[b] = data
            self.computed += 1
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
            return
        fr = float(clip.frame_rate)
        for t0, t1 in spans:
            if not t1 >= t0:
                continue  # (inf, -inf): the same curve
            b0 = int(np.floor(np.floor(t0 * fr - 1e-6) / BLOCK)) if np.isfinite(t0) else -(2**62)
            b1 = int(np.floor(np.ceil(t1 * fr + 1e-6) / BLOCK)) if np.isfinite(t1) else 2**62
            for b in [k for k in self._blocks if b0 <= k <= b1]:
                del self._blocks[b]
