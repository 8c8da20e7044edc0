"""What every key edit must leave alone (issue 20, "no silent side effects in the editor"), as one
check shared by the engine's and the editor's tests, and the clips they run it on.

:func:`check_track_edit` compares a track before and after an edit, key by key and component by
component, given what the edit names (the keys it was asked to change, the keys it added or removed):

* every key the edit did not name keeps its tangent mode and weights, bit for bit;
* a key component whose neighbourhood (its own and its neighbours' times and values on that
  component, and who its neighbours are) is unchanged keeps its slopes bit for bit;
* one whose neighbourhood changed (it moved, or a neighbour did): its Auto / ClampedAuto / Linear /
  Constant sides hold what its mode computes on the new curve (``recompute_tangents``; a key moved
  together with both neighbours, same intervals, may also keep its slopes), its Free sides keep
  their slopes (or, for the keys a time or value scale acts on, ``scaled_free``, may scale them).

:func:`mixed_mode_clip` is a generated clip with every tangent mode the editor knows (and a garbage
one), slopes that no rule gives (so any recomputation shows), Euler and quaternion tracks.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import Curve, TangentMode, tangent_mode_bits
from curveeditor.engine.tangents import recompute_tangents, ruled_sides

__all__ = ["check_track_edit", "check_clip_edit", "mixed_mode_clip", "MIXED_MODES", "key_map"]

#: The modes of :func:`mixed_mode_clip`'s keys, in turn.
MIXED_MODES = (
    tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False),  # 136
    tangent_mode_bits(TangentMode.AUTO, TangentMode.AUTO, False),  # 34
    tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False),  # 0 Free Smooth
    tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, True),  # 1 Broken Free | Free
    tangent_mode_bits(TangentMode.LINEAR, TangentMode.LINEAR, True),  # 69
    tangent_mode_bits(TangentMode.FREE, TangentMode.CONSTANT, True),  # Broken Free | Constant
    tangent_mode_bits(TangentMode.CLAMPED_AUTO, TangentMode.CLAMPED_AUTO, False),
    0xCDCDCDCD,  # garbage seen in real files: read as Free
    tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, False),  # weighted Free Smooth (below)
)


def mixed_mode_clip(rate: float = 30.0, n: int = 30, step: int = 3) -> Clip:
    """Three tracks (two Euler, one quaternion), a key every ``step`` frames, modes cycling through
    :data:`MIXED_MODES` (shifted per track and component), random slopes, one weighted key in nine."""
    rng = np.random.default_rng(20)
    t = np.arange(n) * step / rate
    tracks = []
    for k, (path, kind) in enumerate(
        (("Hips", "euler"), ("Hips/Spine", "euler"), ("Hips/Spine/Q", "quaternion"))
    ):
        if kind == "euler":
            v = np.cumsum(rng.normal(0, 12, (n, 3)), axis=0)
        else:
            v = rng.normal(0, 1, (n, 4))
            v[:, 3] += 4
            v /= np.linalg.norm(v, axis=1, keepdims=True)
        c_n = v.shape[1]
        modes = np.array(MIXED_MODES, dtype=np.int64)
        tm = modes[(np.arange(n)[:, None] + k + np.arange(c_n)[None, :]) % len(modes)]
        ins = rng.normal(0, 30 if kind == "euler" else 0.5, (n, c_n))
        outs = np.where(tm & 1, rng.normal(0, 30 if kind == "euler" else 0.5, (n, c_n)), ins)
        outs = np.where(tm == MIXED_MODES[5], np.inf, outs)
        wm = np.where(np.arange(n)[:, None] % len(modes) == len(modes) - 1 - k, 3, 0) * np.ones((1, c_n), int)
        curve = Curve.make(t, v, ins, outs, in_weight=0.2, out_weight=0.45, weighted_mode=wm, tangent_mode=tm)
        tracks.append(RotationTrack(path, kind, curve))
    return Clip("mixed", rate, tuple(tracks))


def key_map(
    n_before: int, n_after: int, removed: Iterable[int] = (), added: Iterable[int] = ()
) -> np.ndarray:
    """``(n_after,)`` before-index of each key after an edit that removed ``removed`` (before indices)
    and added ``added`` (after indices) and kept the others in order; -1 for added keys."""
    kept_before = np.setdiff1d(np.arange(n_before), np.asarray(list(removed), dtype=np.int64))
    out = np.full(n_after, -1, dtype=np.int64)
    slots = np.setdiff1d(np.arange(n_after), np.asarray(list(added), dtype=np.int64))
    assert slots.shape == kept_before.shape, "removed / added do not match the key counts"
    out[slots] = kept_before
    return out


def _contexts(b: Curve, a: Curve, kmap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(same, relative)``, each ``(M, C)`` bool, for key component j of ``a`` against its before key:
    ``same``: its own and its neighbours' times and values are bit for bit the same, and so are who
    its neighbours are; ``relative``: the same neighbours and values, and the intervals to them the
    same durations up to float rounding (a block of keys moved together: its inside keys' rules give
    the same slopes, so a retime may keep or recompute them)."""
    m, c = a.n_keys, a.n_components
    same = np.zeros((m, c), dtype=bool)
    rel = np.zeros((m, c), dtype=bool)
    for j in range(m):
        k = kmap[j]
        if k < 0:
            continue
        ok = np.ones(c, dtype=bool)
        exact = True
        for d in (-1, 0, 1):
            ja, kb = j + d, k + d
            ina, inb = 0 <= ja < m, 0 <= kb < b.n_keys
            if ina != inb or (ina and kmap[ja] != kb):
                ok[:] = False
                break
            if not ina:
                continue
            exact &= bool(a.time[ja] == b.time[kb])
            if d:
                da, db = a.time[ja] - a.time[j], b.time[kb] - b.time[k]
                ok &= abs(da - db) <= 1e-9 * abs(db)
            ok &= a.value[ja] == b.value[kb]
        rel[j] = ok
        same[j] = ok & exact
    return same, rel


def check_track_edit(
    before: RotationTrack,
    after: RotationTrack,
    *,
    named: Iterable[int] = (),
    removed: Iterable[int] = (),
    added: Iterable[int] = (),
    kmap: np.ndarray | None = None,
    kept: Iterable[int] = (),
    scaled_free: bool | Iterable[int] = False,
    what: str = "",
) -> None:
    """Assert the module docstring's rules for one edited track. ``named``: after-indices of keys the
    edit was asked to change (mode and slopes free to change); ``removed`` / ``added`` as in
    :func:`key_map` (added keys are named too), or ``kmap`` directly; ``kept``: after-indices of keys
    whose slopes must stay bit for bit although a neighbour changed; ``scaled_free``: after-indices of keys
    (True: any) whose Free slopes may scale with the edit (a time or value scale of the selection),
    a stepped (infinite) side staying stepped."""
    b, a = before.curve, after.curve
    label = f"{what} {before.path}".strip()
    if kmap is None:
        kmap = key_map(b.n_keys, a.n_keys, removed, added)
    named_mask = np.zeros(a.n_keys, dtype=bool)
    named_mask[np.asarray(list(named), dtype=np.int64)] = True
    named_mask |= kmap < 0
    rows = np.nonzero(~named_mask)[0]
    src = kmap[rows]
    for f in ("tangent_mode", "weighted_mode", "in_weight", "out_weight"):
        bad = np.nonzero(np.any(getattr(a, f)[rows] != getattr(b, f)[src], axis=1))[0]
        if bad.size:
            j = rows[bad[0]]
            raise AssertionError(
                f"{label}: {f} of key {j} changed ({getattr(b, f)[src[bad[0]]]} -> {getattr(a, f)[j]})"
            )
    same, rel = _contexts(b, a, kmap)
    scaling = np.zeros(a.n_keys, dtype=bool)
    if scaled_free is True:
        scaling[:] = True
    elif scaled_free is not False:
        scaling[np.asarray(list(scaled_free), dtype=np.int64)] = True
    kept_mask = np.zeros(a.n_keys, dtype=bool)
    kept_mask[np.asarray(list(kept), dtype=np.int64)] = True
    rule = recompute_tangents(a)
    in_ruled, out_ruled = ruled_sides(a.tangent_mode)
    for side, ruled, rule_s in (("in", in_ruled, rule.in_slope), ("out", out_ruled, rule.out_slope)):
        got = getattr(a, f"{side}_slope")[rows]
        old = getattr(b, f"{side}_slope")[src]
        kept_bits = (got == old) | (np.isnan(got) & np.isnan(old))

        def fail(bad, why, old=old, got=got, side=side):
            j, comp = rows[bad[0][0]], bad[0][1]
            o, g = old[tuple(bad[0])], got[tuple(bad[0])]
            mode = a.tangent_mode[j, comp]
            return f"{label}: key {j} comp {comp} (mode {mode}) {side} slope {o} -> {g}: {why}"

        # untouched neighbourhood (or a key the edit promises to keep): bit for bit
        must_keep = same[rows] | kept_mask[rows][:, None]
        bad = np.argwhere(must_keep & ~kept_bits)
        assert bad.size == 0, fail(bad, "an untouched key's slope changed")
        # changed neighbourhood: ruled sides follow the rule (or, moved along with both neighbours,
        # may keep theirs), Free sides keep theirs (or scale with time)
        want = rule_s[rows]
        follows = (got == want) | (np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want)))
        bad = np.argwhere(~must_keep & ruled[rows] & ~follows & ~(rel[rows] & kept_bits))
        assert bad.size == 0, fail(bad, f"not its mode's rule {want[tuple(bad[0])] if bad.size else ''}")
        free_ok = kept_bits | (scaling[rows][:, None] & (np.isfinite(got) == np.isfinite(old)))
        bad = np.argwhere(~must_keep & ~ruled[rows] & ~free_ok)
        assert bad.size == 0, fail(bad, "a Free slope changed")


def check_clip_edit(before: Clip, after: Clip, edited: dict | None = None, **kw) -> None:
    """:func:`check_track_edit` for the tracks ``edited`` (path -> keyword arguments, merged over
    ``kw``), and every other track of the clip the same object or bit-identical."""
    edited = edited or {}
    for tr in before.tracks:
        new = after.track(tr.path)
        if tr.path in edited:
            check_track_edit(tr, new, **{**kw, **edited[tr.path]})
        else:
            assert new is tr or new.curve.equals(tr.curve), (
                f"{tr.path}: a track the edit did not touch changed"
            )
