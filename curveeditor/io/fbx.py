"""FBX takes in (read only), through ufbx's ``pufbx`` binding (the optional ``fbx`` extra).

Each animation stack is a clip (``take``: index or name, default the first; ``clip.meta["takes"]``
lists the stacks, ``clip.meta["take"]`` names the one read). What comes out is what Unity's FBX importer
gives with *Resample Curves* off (``shared/domain/rotations.md`` section 1):

* Paths: node names joined with ``/`` from the top of the scene (``Armature/Hips/Spine``), as Unity
  names the imported GameObjects (namespaces such as ``mixamorig:`` kept). A name repeated among
  siblings gets `` (<n>)``.
* Frames: FBX is right-handed; Unity mirrors every node through X (positions ``(x, y, z) -> (-x, y,
  z)``, quaternions ``(x, y, z, w) -> (x, -y, -z, w)``), so an Euler curve keeps its order with its Y
  and Z channels negated (each factor of the Euler product mirrors on its own, as in :mod:`.bvh`).
  A file whose up axis is Z (``GlobalSettings``) has Unity's axis conversion, -90 deg about X, on its
  top-level nodes. Positions are converted to metres (``UnitScaleFactor`` / 100), as Unity's *Convert
  Units* does.
* Rotations: a node whose rotation is its Euler curves alone (no PreRotation / PostRotation, not a
  top-level node needing the axis conversion) keeps its per-channel keys as an Euler
  :class:`RotationTrack` in the node's ``RotationOrder`` (FBX ``eEulerXYZ`` = ``R = Rz Ry Rx`` =
  ``"xyz"`` here), values and tangents as stored (cubic Bezier tangents become Unity slopes, weights
  where the handles are not a third of the interval; constant keys stepped; channels keyed at
  different times are merged on the union of their times, the cubic split exactly), as Unity keeps
  FBX curves in their own order. Every other node is what Unity resamples: the node's local rotation
  with pre/post rotations and pivots resolved by ufbx (``bake_anim``) at every frame, as quaternion
  keys that are poses at frames (``meta["frame_poses"]``, the Slerp between them).
  ``clip.meta["resampled"]`` lists those nodes and why.
* Each Euler track is checked against ufbx's own evaluation of the node at every baked time (within
  :data:`MATCH_TOLERANCE_DEG`); a node that does not match is resampled (never a wrong curve).
* Translations and scales that move become read-only :class:`OtherTrack`\\ s (``m_LocalPosition`` /
  ``m_LocalScale``, ufbx's baked values with pivots resolved, Linear tangents).
* Key times are relative to the stack's start; times on the file's frame grid are put on the frame
  grid of the clip's rate (the file's rate snapped to a whole number within 0.01 %, like BVH).
* ``clip.meta["joints"]``: every node's path, parent and rest local translation / rotation in Unity's
  frame for the skeleton view.

Why this binding (``benchmarks/fbx_io.py``, issue 21): ``pufbx`` 0.1.0 hands each curve's keys over as
one numpy array (a 454,716-key take in 5 ms); the official ``ufbx`` 0.0.5 wheel makes a Python object
per key (1.8 s for the same take) and crashed the interpreter (iterating a list, then at exit);
``pyufbx`` 0.0.7 has no keyframe access. ``pufbx`` exposes no scene settings and no link from a curve
node to the node it animates, so the settings are read from the file's ``GlobalSettings`` here and
curves are matched to nodes by ufbx's baked evaluation (above). It builds from source (about 3 min,
15 MB): the optional extra ``fbx``.

Bad input (not FBX, truncated, no animation stack, an unknown take) raises
:class:`~curveeditor.io.errors.ClipReadError` (one line); a missing binding says how to install it.
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import numpy as np

from ..engine.clip import EULER, QUATERNION, Clip, OtherTrack, RotationTrack
from ..engine.curves import Curve, TangentMode, evaluate, tangent_mode_bits
from ..engine.rotations import euler_to_quat, geodesic_angle, hemisphere_continuous, quat_mul
from .errors import ClipReadError

__all__ = ["read_fbx", "take_names", "MATCH_TOLERANCE_DEG", "FBX_ORDERS", "INSTALL_HINT"]

#: ufbx rotation orders (``UFBX_ROTATION_ORDER_XYZ`` ...) as engine orders: FBX ``eEulerXYZ`` applies X
#: first, then Y, then Z about the parent's axes (``R = Rz Ry Rx``): extrinsic ``"xyz"``.
FBX_ORDERS = ("xyz", "xzy", "yzx", "yxz", "zxy", "zyx")
#: Largest difference (degrees) between a node's Euler curves and ufbx's evaluation of the node for the
#: curves to be kept as the node's rotation (float32 key values: ~1e-5 deg).
MATCH_TOLERANCE_DEG = 1e-3
#: Relative change below which a baked translation / scale is constant (float32 noise of exporters
#: that bake a decomposed matrix per frame: ~1e-6).
CONSTANT_TOLERANCE = 1e-5
INSTALL_HINT = "reading .fbx files needs the 'fbx' extra: pip install 'curveeditor[fbx]' (the pufbx binding)"

_ROTATION_MIRROR = np.array([1.0, -1.0, -1.0, 1.0])
_EULER_MIRROR = np.array([1.0, -1.0, -1.0])
_POSITION_MIRROR = np.array([-1.0, 1.0, 1.0])
_BINARY_MAGIC = b"Kaydara FBX Binary  \x00"
#: FBX ``TimeMode`` -> frames per second (14 = custom: ``CustomFrameRate``).
_TIME_MODES = {
    1: 120.0,
    2: 100.0,
    3: 60.0,
    4: 50.0,
    5: 48.0,
    6: 30.0,
    7: 30.0,
    8: 29.97,
    9: 29.97,
    10: 25.0,
    11: 24.0,
    12: 1000.0,
    13: 23.976,
    15: 96.0,
    16: 72.0,
    17: 59.94,
    18: 119.88,
}
_INTERP_CONSTANT_PREV, _INTERP_CONSTANT_NEXT, _INTERP_LINEAR, _INTERP_CUBIC = 0, 1, 2, 3


# ------------------------------------------------------------------------------------ file settings


def _setting(raw: bytes, name: str):
    """A ``GlobalSettings`` property value from the file bytes (binary or ASCII FBX), or None.

    pufbx does not expose ufbx's scene settings; these property names occur only there."""
    key = name.encode()
    if raw.startswith(_BINARY_MAGIC):
        i = raw.find(b"S" + struct.pack("<I", len(key)) + key)
        if i < 0:
            return None
        pos = i + 5 + len(key)
        try:
            for _ in range(3):  # type name, label, flags: three strings
                if raw[pos : pos + 1] != b"S":
                    return None
                (n,) = struct.unpack_from("<I", raw, pos + 1)
                pos += 5 + n
            kind = raw[pos : pos + 1]
            if kind == b"I":
                return struct.unpack_from("<i", raw, pos + 1)[0]
            if kind == b"D":
                return struct.unpack_from("<d", raw, pos + 1)[0]
            if kind == b"F":
                return struct.unpack_from("<f", raw, pos + 1)[0]
            if kind == b"L":
                return struct.unpack_from("<q", raw, pos + 1)[0]
        except struct.error:
            return None
        return None
    m = re.search(
        rb'P:\s*"' + re.escape(key) + rb'"\s*,\s*"[^"]*"\s*,\s*"[^"]*"\s*,\s*"[^"]*"\s*,\s*([-+0-9.eE]+)', raw
    )
    if m is None:
        return None
    try:
        return float(m.group(1))
    except ValueError:
        return None


def _file_rate(raw: bytes) -> float | None:
    mode = _setting(raw, "TimeMode")
    if mode is not None and int(mode) == 14:
        rate = _setting(raw, "CustomFrameRate")
        return float(rate) if rate and rate > 0 else None
    return _TIME_MODES.get(int(mode)) if mode is not None else None


def _axis_conversion(raw: bytes) -> np.ndarray | None:
    """The rotation (quaternion, file frame) Unity applies to top-level nodes, None when the file is Y up."""
    up = _setting(raw, "UpAxis")
    sign = _setting(raw, "UpAxisSign")
    if up is None or int(up) == 1:
        return None
    s = -1.0 if sign is not None and sign < 0 else 1.0
    if int(up) == 2:  # Z up: +Z -> +Y is -90 deg about X
        h = np.sqrt(0.5)
        return np.array([-h * s, 0.0, 0.0, h])
    h = np.sqrt(0.5)  # X up: +X -> +Y is +90 deg about Z
    return np.array([0.0, 0.0, h * s, h])


# ------------------------------------------------------------------------------------------ curves


def _channel_curve(kf: np.ndarray, t0: float) -> tuple[Curve | None, str]:
    """One FBX channel (ufbx keyframes) as a scalar Unity curve, times relative to ``t0``; ``(None,
    reason)`` when Unity's curve model cannot hold it."""
    n = kf.shape[0]
    t = kf["time"].astype(np.float64) - t0
    v = kf["value"].astype(np.float64)
    if n == 0:
        return None, "a channel without keys"
    if n > 1 and not np.all(np.diff(t) > 0):
        return None, "key times not increasing"
    interp = kf["interpolation"].astype(np.int64)
    ldx = kf["left"]["dx"].astype(np.float64)
    ldy = kf["left"]["dy"].astype(np.float64)
    rdx = kf["right"]["dx"].astype(np.float64)
    rdy = kf["right"]["dy"].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ins = np.where(ldx > 0, ldy / ldx, 0.0)
        outs = np.where(rdx > 0, rdy / rdx, 0.0)
    inw = np.full(n, 1.0 / 3.0)
    outw = np.full(n, 1.0 / 3.0)
    wmode = np.zeros(n, dtype=np.int64)
    if n > 1:
        seg = interp[:-1]
        if np.any(seg == _INTERP_CONSTANT_NEXT):
            return None, "constant-next keys"
        dt = np.diff(t)
        lin = seg == _INTERP_LINEAR
        slope = np.diff(v) / dt
        outs[:-1] = np.where(lin, slope, outs[:-1])
        ins[1:] = np.where(lin, slope, ins[1:])
        const = seg == _INTERP_CONSTANT_PREV
        outs[:-1][const] = np.inf
        ins[1:][const] = np.inf
        cubic = seg == _INTERP_CUBIC
        w_out = rdx[:-1] / dt
        w_in = ldx[1:] / dt
        heavy_out = cubic & (np.abs(w_out - 1.0 / 3.0) > 1e-4)
        heavy_in = cubic & (np.abs(w_in - 1.0 / 3.0) > 1e-4)
        outw[:-1] = np.where(heavy_out, w_out, outw[:-1])
        inw[1:] = np.where(heavy_in, w_in, inw[1:])
        wmode[:-1] |= np.where(heavy_out, 2, 0)
        wmode[1:] |= np.where(heavy_in, 1, 0)
    free = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, True)
    try:
        curve = Curve.make(
            t, v, ins, outs, in_weight=inw, out_weight=outw, weighted_mode=wmode, tangent_mode=free
        )
    except ValueError as exc:
        return None, str(exc)
    return curve, ""


def _slopes_at(curve: Curve, times: np.ndarray) -> np.ndarray:
    """Derivative ``(M,)`` of an unweighted scalar curve at ``times`` inside its key range (inf inside a
    stepped interval)."""
    t = curve.time
    k = np.clip(np.searchsorted(t, times, side="right") - 1, 0, max(len(t) - 2, 0))
    if len(t) < 2:
        return np.zeros(times.shape[0])
    dt = t[k + 1] - t[k]
    s = (times - t[k]) / dt
    v0, v1 = curve.value[k, 0], curve.value[k + 1, 0]
    m0, m1 = curve.out_slope[k, 0], curve.in_slope[k + 1, 0]
    with np.errstate(invalid="ignore"):
        d = (
            (6 * s * s - 6 * s) * v0 + (3 * s * s - 4 * s + 1) * dt * m0 + (-6 * s * s + 6 * s) * v1
        ) / dt + (3 * s * s - 2 * s) * m1
    stepped = ~(np.isfinite(m0) & np.isfinite(m1))
    return np.where(stepped, np.inf, d)


def _euler_curve(channels: list[Curve | None], defaults: np.ndarray) -> tuple[Curve | None, str]:
    """Three scalar channels (None = constant ``defaults[c]``) as one 3-component curve on the union of
    their key times (an unweighted cubic is split exactly: value and slope from the curve itself)."""
    present = [c for c in channels if c is not None]
    if not present:
        return None, "no rotation keys"
    times = present[0].time
    same = all(c.time.shape == times.shape and np.array_equal(c.time, times) for c in present)
    if not same:
        times = np.unique(np.concatenate([c.time for c in present]))
        if any(np.any(c.weighted_mode) for c in present):
            return None, "weighted channels keyed at different times"
    n = times.shape[0]
    cols = {f: np.empty((n, 3)) for f in ("value", "in_slope", "out_slope", "in_weight", "out_weight")}
    wmode = np.zeros((n, 3), dtype=np.int64)
    for c in range(3):
        ch = channels[c]
        if ch is None:
            cols["value"][:, c] = defaults[c]
            cols["in_slope"][:, c] = cols["out_slope"][:, c] = 0.0
            cols["in_weight"][:, c] = cols["out_weight"][:, c] = 1.0 / 3.0
            continue
        if same:
            for f in cols:
                cols[f][:, c] = getattr(ch, f)[:, 0]
            wmode[:, c] = ch.weighted_mode[:, 0]
            continue
        own = np.isin(times, ch.time)
        value = evaluate(ch, times)[:, 0]
        slope = _slopes_at(ch, times)
        ins, outs = slope.copy(), slope.copy()
        idx = np.searchsorted(ch.time, times[own])
        ins[own] = ch.in_slope[idx, 0]
        outs[own] = ch.out_slope[idx, 0]
        # Outside the channel's keys Unity clamps: flat.
        outside = (times < ch.time[0]) | (times > ch.time[-1])
        ins[outside] = outs[outside] = 0.0
        value[own] = ch.value[idx, 0]
        cols["value"][:, c] = value
        cols["in_slope"][:, c] = ins
        cols["out_slope"][:, c] = outs
        cols["in_weight"][:, c] = cols["out_weight"][:, c] = 1.0 / 3.0
    free = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, True)
    try:
        curve = Curve.make(
            times,
            cols["value"],
            cols["in_slope"],
            cols["out_slope"],
            in_weight=cols["in_weight"],
            out_weight=cols["out_weight"],
            weighted_mode=wmode,
            tangent_mode=free,
        )
    except ValueError as exc:
        return None, str(exc)
    return curve, ""


# --------------------------------------------------------------------------------------------- read


def _import_binding():
    try:
        import pufbx
    except ImportError:
        return None
    return pufbx


def _check_bytes(path: str, raw: bytes) -> None:
    if not raw.strip():
        raise ClipReadError(path, None, "empty file")
    if raw.startswith(_BINARY_MAGIC):
        if len(raw) < 160:
            raise ClipReadError(path, None, "truncated FBX file")
        return
    head = raw[:4096]
    if b"\x00" in head or not (b"FBXHeaderExtension" in raw[:65536] or head.lstrip().startswith(b";")):
        raise ClipReadError(path, None, "not an FBX file")


def _node_paths(nodes) -> tuple[list[str], list[int]]:
    """Path and parent index (into ``nodes``, -1 at the top) of each scene node but the root (index 0)."""
    index = {n.typed_id: i for i, n in enumerate(nodes)}
    paths: list[str] = []
    parents: list[int] = []
    seen: set = set()
    for n in nodes:
        parent = n.parent
        pi = -1 if parent is None or parent.is_root else index.get(parent.typed_id, -1)
        name = (n.name or f"node{n.typed_id}").replace("/", "_")
        base = paths[pi] if pi >= 0 else ""
        p = f"{base}/{name}" if base else name
        if p in seen:
            p = f"{p} ({n.typed_id})"
        seen.add(p)
        paths.append(p)
        parents.append(pi)
    return paths, parents


def _choose_stack(path: str, stacks, take):
    if not stacks:
        raise ClipReadError(path, None, "no animation stacks (no takes) in this FBX file")
    names = [s.name or f"take{i}" for i, s in enumerate(stacks)]
    if take is None:
        return 0, names
    if isinstance(take, int) or (isinstance(take, str) and take.isdigit() and take not in names):
        i = int(take)
        if not 0 <= i < len(stacks):
            raise ClipReadError(path, None, f"no take {i} (the file has {len(stacks)}: {', '.join(names)})")
        return i, names
    if take not in names:
        raise ClipReadError(path, None, f"no take named {take!r} (takes: {', '.join(names)})")
    return names.index(take), names


def _snap_times(times: np.ndarray, file_rate: float | None, rate: float) -> np.ndarray:
    """Times on the file's frame grid ``k / file_rate`` (FBX ticks: ~1e-10 s) put at ``k / rate``."""
    if file_rate is None or times.size == 0:
        return times
    k = np.round(times * file_rate)
    if np.all(np.abs(times - k / file_rate) <= 1e-6) and (times.size < 2 or np.all(np.diff(k) > 0)):
        return k / rate
    return times


def _load_scene(fname: str):
    """``(file bytes, ufbx scene)`` of ``fname``; :class:`ClipReadError` for anything unreadable."""
    try:
        raw = Path(fname).read_bytes()
    except OSError as exc:
        raise ClipReadError(fname, None, f"cannot read file: {exc.strerror or exc}") from None
    _check_bytes(fname, raw)
    pufbx = _import_binding()
    if pufbx is None:
        raise ClipReadError(fname, None, INSTALL_HINT)
    try:
        return raw, pufbx.load_fbx(fname)
    except Exception as exc:  # the binding's own error types: all the file's fault
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ClipReadError(fname, None, f"not a readable FBX file ({reason})") from None


def take_names(path: str | os.PathLike) -> list[str]:
    """The file's takes (animation stacks) as ``take=`` and ``clip.meta["takes"]`` name them, none
    evaluated (``batch`` plans one output per take). Raises :class:`ClipReadError`."""
    fname = os.fspath(path)
    _raw, scene = _load_scene(fname)
    return _choose_stack(fname, list(scene.anim_stacks), None)[1]


def read_fbx(path: str | os.PathLike, take: str | int | None = None) -> Clip:
    """Read one animation stack of an ``.fbx`` file into a :class:`Clip` in Unity's frame (module
    docstring). ``take``: the stack's index or name (default the first). Raises :class:`ClipReadError`."""
    from .bvh import FRAME_RATE_RANGE, frame_rate_from_frame_time

    fname = os.fspath(path)
    raw, scene = _load_scene(fname)
    pufbx = _import_binding()
    stacks = list(scene.anim_stacks)
    index, names = _choose_stack(fname, stacks, take)
    stack = stacks[index]
    anim = stack.anim
    t0 = float(stack.time_begin)
    file_rate = _file_rate(raw)
    lo, hi = FRAME_RATE_RANGE
    rate = frame_rate_from_frame_time(1.0 / file_rate) if file_rate else 30.0
    if not lo <= rate <= hi:
        rate = 30.0
    unit = _setting(raw, "UnitScaleFactor")
    to_metres = (float(unit) if unit and unit > 0 else 1.0) / 100.0
    conversion = _axis_conversion(raw)
    try:
        baked = pufbx.bake_anim(
            scene, anim, resample_rate=float(file_rate or rate), key_reduction_enabled=False
        )
    except Exception as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ClipReadError(fname, None, f"take {names[index]!r} cannot be evaluated ({reason})") from None
    nodes = [n for n in scene.nodes if not n.is_root]
    paths, parents = _node_paths(nodes)
    by_id = {n.typed_id: i for i, n in enumerate(nodes)}
    layers = list(anim.layers)
    candidates = _Candidates(layers if len(layers) == 1 else [], t0)
    tracks: list[RotationTrack] = []
    others: list[OtherTrack] = []
    resampled: list[str] = []
    for bn in baked.modified_nodes:
        i = by_id.get(bn.typed_id)
        if i is None:
            continue
        node = nodes[i]
        top = parents[i] < 0
        rk = bn.rotation_keys
        times = rk["time"].astype(np.float64) - t0
        q = np.stack([rk["value"][c] for c in "xyzw"], axis=1).astype(np.float64)
        if times.size == 0:
            continue
        track, why = None, ""
        order = _node_order(node)
        if len(layers) != 1:
            why = f"{len(layers)} animation layers (blended)"
        elif order is None:
            why = "spheric rotation order"
        elif _has_pre_post(node):
            why = "PreRotation/PostRotation"
        elif top and conversion is not None:
            why = "the axis conversion of a top-level node"
        else:
            track, why = _euler_track(paths[i], candidates, times, q, order, rate, file_rate)
        if track is None:
            if conversion is not None and top:
                q = quat_mul(np.broadcast_to(conversion, q.shape), q)
            resampled.append(f"{paths[i]}: {why}")
            st = _snap_times(times, file_rate, rate)
            qu = hemisphere_continuous(q * _ROTATION_MIRROR)
            from ..engine.tangents import make_curve

            curve = make_curve(st, qu, mode="linear")
            track = RotationTrack(
                paths[i], QUATERNION, curve, meta={"frame_poses": True, "fbx_node": node.name}
            )
        tracks.append(track)
        others += _vector_tracks(bn, paths[i], t0, file_rate, rate, to_metres, conversion if top else None)
    if not tracks:
        raise ClipReadError(fname, None, f"take {names[index]!r} animates no node")
    meta = {
        "format": "fbx",
        "path": fname,
        "take": names[index],
        "takes": names,
        "mirror": "x",
        "resampled": resampled,
        "file_frame_rate": file_rate,
        "unit_to_metres": to_metres,
        "joints": _joints(nodes, paths, parents, to_metres, conversion),
    }
    return Clip(
        name=names[index],
        frame_rate=rate,
        tracks=tuple(tracks),
        other_tracks=tuple(others),
        meta=meta,
    )


def _node_order(node) -> str | None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pufbx warns that its enum class is not importable
        o = node.rotation_order
    value = getattr(o, "value", o)
    try:
        value = int(value)
    except (TypeError, ValueError):
        name = str(o).rsplit("_", 1)[-1].upper()
        return name.lower() if name in ("XYZ", "XZY", "YZX", "YXZ", "ZXY", "ZYX") else None
    return FBX_ORDERS[value] if 0 <= value < len(FBX_ORDERS) else None


def _props(node) -> dict:
    out = {}
    for p in node.properties:
        out[p.name] = p.value
    return out


def _vec(value) -> np.ndarray:
    try:
        return np.array(list(value), dtype=np.float64)[:3]
    except TypeError:
        return np.zeros(3)


def _has_pre_post(node) -> bool:
    props = _props(node)
    for name in ("PreRotation", "PostRotation"):
        if name in props and np.any(np.abs(_vec(props[name])) > 1e-9):
            return True
    return False


def _build_candidate(av, t0: float) -> Curve | None:
    """One animation value's channels as a 3-component curve (file frame; degrees for rotations), or
    None when Unity's curve model cannot hold them."""
    chans = []
    for c in av.curves:
        if c is None:
            chans.append(None)
            continue
        curve, _why = _channel_curve(c.get_keyframes(), t0)
        if curve is None:
            return None
        chans.append(curve)
    if all(c is None for c in chans):
        return None
    curve, _why = _euler_curve(chans, _vec(av.default_value))
    return curve


class _Candidates:
    """Every animation value of the layer that has curves, by its first key time and values and its
    last key time (arrays: a node's candidates are found in one vectorized pass); the curve itself is
    built only for a candidate that passes that test (:meth:`curve`), so a long take holds one curve
    set per node, not one per animation value."""

    def __init__(self, layers, t0: float):
        self.values, first_t, last_t, first_v = [], [], [], []
        self.t0 = t0
        for av in layers[0].anim_values if layers else ():
            starts, ends, vals, any_keys = [], [], [], False
            default = _vec(av.default_value)
            for c, d in zip(av.curves, default, strict=False):
                kf = None if c is None else c.get_keyframes()
                if kf is None or len(kf) == 0:
                    vals.append(d)
                    continue
                any_keys = True
                starts.append(float(kf["time"][0]) - t0)
                ends.append(float(kf["time"][-1]) - t0)
                vals.append(float(kf["value"][0]))
            if not any_keys or len(vals) != 3:
                continue
            self.values.append(av)
            first_t.append(min(starts))
            last_t.append(max(ends))
            first_v.append(vals)
        self.first_t = np.array(first_t)
        self.last_t = np.array(last_t)
        self.first_v = np.array(first_v, dtype=np.float64).reshape(-1, 3)
        self.free = np.ones(len(self.values), dtype=bool)

    def curve(self, k: int) -> Curve | None:
        return _build_candidate(self.values[k], self.t0)


def _euler_track(path, cands: _Candidates, times, q, order, rate, file_rate):
    """The node's own Euler curves as a track (Unity's frame), matched to ufbx's evaluation ``q`` at
    ``times``; ``(None, reason)`` when no curve set plays the node."""
    if not cands.values:
        return None, "no Euler curves of the node play its rotation (resampled)"
    j = np.clip(np.searchsorted(times, cands.first_t), 0, times.size - 1)
    ok = cands.free & (np.abs(times[j] - cands.first_t) <= 1e-7) & (cands.last_t <= times[-1] + 1e-7)
    idx = np.nonzero(ok)[0]
    if idx.size:
        err0 = geodesic_angle(euler_to_quat(cands.first_v[idx], order), q[j[idx]])
        idx = idx[err0 <= MATCH_TOLERANCE_DEG]
    best = None
    for k in idx:
        curve = cands.curve(int(k))
        if curve is None:
            continue
        err = geodesic_angle(euler_to_quat(evaluate(curve, times), order), q)
        if float(err.max()) > MATCH_TOLERANCE_DEG:
            continue
        exact = curve.n_keys == times.size
        if best is None or (exact and not best[2]) or (exact == best[2] and curve.n_keys > best[1].n_keys):
            best = (k, curve, exact)
        if exact:
            break
    if best is None:
        return None, "no Euler curves of the node play its rotation (resampled)"
    cands.free[best[0]] = False
    c = best[1]
    st = _snap_times(c.time, file_rate, rate)
    mirrored = c.with_keys(
        time=st,
        value=c.value * _EULER_MIRROR,
        in_slope=c.in_slope * _EULER_MIRROR,
        out_slope=c.out_slope * _EULER_MIRROR,
    )
    return RotationTrack(path, EULER, mirrored, order=order, meta={"fbx_curves": True}), ""


def _vector_tracks(bn, path, t0, file_rate, rate, to_metres, conversion) -> list[OtherTrack]:
    from ..engine.skeleton import quat_rotate
    from ..engine.tangents import make_curve

    out = []
    for keys, attr, kind in (
        (bn.translation_keys, "m_LocalPosition", "position"),
        (bn.scale_keys, "m_LocalScale", "scale"),
    ):
        if keys is None or len(keys) == 0:
            continue
        v = np.stack([keys["value"][c] for c in "xyz"], axis=1).astype(np.float64)
        if len(keys) < 2 or np.all(np.abs(v - v[0]) <= CONSTANT_TOLERANCE * (1.0 + np.abs(v[0]).max())):
            continue  # constant: no curve (the rest transform is in meta["joints"])
        t = _snap_times(keys["time"].astype(np.float64) - t0, file_rate, rate)
        if kind == "position":
            if conversion is not None:
                v = quat_rotate(np.broadcast_to(conversion, (len(v), 4)), v)
            v = v * to_metres * _POSITION_MIRROR
        try:
            curve = make_curve(t, v, mode="linear")
        except ValueError:
            continue
        out.append(OtherTrack(path, attr, kind, curve, t, meta={"fbx_baked": True}))
    return out


def _joints(nodes, paths, parents, to_metres, conversion) -> dict:
    from ..engine.skeleton import quat_rotate

    offsets = np.zeros((len(nodes), 3))
    rotations = np.zeros((len(nodes), 4))
    rotations[:, 3] = 1.0
    for i, n in enumerate(nodes):
        lt = n.local_transform
        try:
            offsets[i] = _vec(lt.translation)
            r = np.array(list(lt.rotation), dtype=np.float64)[:4]
            if r.shape == (4,) and np.all(np.isfinite(r)) and np.linalg.norm(r) > 1e-9:
                rotations[i] = r / np.linalg.norm(r)
        except (TypeError, ValueError):
            pass
        if conversion is not None and parents[i] < 0:
            offsets[i] = quat_rotate(conversion, offsets[i])
            rotations[i] = quat_mul(conversion, rotations[i])
    offsets = np.where(np.isfinite(offsets), offsets, 0.0)
    return {
        "paths": list(paths),
        "parents": list(parents),
        "offsets": (offsets * to_metres * _POSITION_MIRROR).tolist(),
        "rotations": (rotations * _ROTATION_MIRROR).tolist(),
    }
