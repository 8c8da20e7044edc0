"""Build a :class:`~curveeditor.engine.clip.Clip` from a parsed :class:`AnimDocument`.

Rotation tracks:

* ``m_EulerCurves`` entries -> Euler tracks (order from ``m_RotationOrder`` via
  ``rotations.UNITY_ROTATION_ORDERS``; absent = 4 = ``"zxy"``);
* ``m_RotationCurves`` entries -> quaternion tracks;
* humanoid quartets in ``m_FloatCurves`` (``RootQ.x/y/z/w``, ``LeftHandQ.*``, ... classID 95) ->
  quaternion tracks named by the attribute prefix (``RootQ``; ``PATH:RootQ`` when the path is not
  empty). The four curves may have different key times: the track then has the union of the times,
  the missing values and slopes taken from each curve's own Hermite segment (which is exact: a cubic
  split at a point with its value and derivative is the same cubic).

Per-component ``tangent_mode`` (an editing hint) comes from the mirrored editor curves
(``localEulerAnglesRaw.*`` / ``m_LocalRotation.*``) when their key times match, else from the runtime
key, converted to the modern encoding (old 2-bit layouts, garbage -> Free).

Everything else becomes a read-only :class:`~curveeditor.engine.clip.OtherTrack`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace

import numpy as np

from ...engine.clip import Clip, OtherTrack, RotationTrack
from ...engine.curves import DEFAULT_WEIGHT, Curve
from ...engine.rotations import UNITY_ROTATION_ORDERS
from ..errors import ClipReadError
from .document import AnimDocument, Entry

__all__ = ["TrackSource", "build_clip", "entry_curve", "HUMANOID_Q"]

HUMANOID_Q = re.compile(r"^(\w*Q)\.([xyzw])$")
_OTHER_KIND = {
    "m_PositionCurves": ("position", "m_LocalPosition"),
    "m_ScaleCurves": ("scale", "m_LocalScale"),
    "m_FloatCurves": ("float", None),
    "m_EditorCurves": ("editor", None),
    "m_EulerEditorCurves": ("editor", None),
    "m_RotationCurves": ("rotation", "m_LocalRotation"),
    "m_EulerCurves": ("euler", "localEulerAnglesRaw"),
}
EULER_EDITOR = "localEulerAnglesRaw"
QUAT_EDITOR = "m_LocalRotation"
DISPLAY_ATTRS = ("localEulerAngles", "localEulerAnglesBaked", "m_LocalEulerAngles")


@dataclass
class TrackSource:
    """Where a rotation track lives in the document."""

    kind: str  # "euler" | "quaternion" | "humanoid" | "compressed"
    runtime: list[Entry]  # 1 entry (vector curve) or 4 (humanoid x, y, z, w)
    editor: list[Entry] = field(default_factory=list)  # mirrored scalar editor curves
    display: list[Entry] = field(default_factory=list)  # m_EulerEditorCurves of this path
    attribute_prefix: str | None = None  # humanoid: "RootQ"
    path: str = ""


_DEFAULT_W = np.array(DEFAULT_WEIGHT)
_DEFAULT_W.flags.writeable = False  # (the one array every weightless key's weights are a view of)


def entry_curve(e: Entry) -> Curve:
    """The keys of an AnimationCurve entry as a :class:`Curve` (tangent modes in modern encoding)."""
    k = e.keys
    c = 1
    if k is None:
        comps = {"m_RotationCurves": 4, "m_EulerCurves": 3, "m_PositionCurves": 3, "m_ScaleCurves": 3}
        return _empty_curve(comps.get(e.list_name, 1), e.pre_infinity, e.post_infinity)
    c = k.n_components
    # Keys without weight fields (serializedVersion 2 and older) hold Unity's default weight, the
    # float32 1/3 a serializedVersion 3 key spells 0.33333334: one value, as a broadcast view.
    default_w = (
        None
        if k.in_weight is not None and k.out_weight is not None
        else np.broadcast_to(_DEFAULT_W, (k.n, c))
    )
    # Arrays handed over read-only: Curve keeps them as they are (no second copy).
    return Curve(
        k.time,
        k.value,
        k.in_slope,
        k.out_slope,
        k.in_weight if k.in_weight is not None else default_w,
        k.out_weight if k.out_weight is not None else default_w,
        _columns(k.weighted_mode, c),
        _columns(k.modern_tangent_mode(), c),
        e.pre_infinity,
        e.post_infinity,
    )


@functools.lru_cache(maxsize=64)
def _empty_curve(c: int, pre: int, post: int) -> Curve:
    """The keyless curve of ``c`` components (immutable, so shared: the 465 ``m_Curve: []`` entries
    of the 100 MB CMU .anim took 0.05 s of ``Curve.make``)."""
    return Curve.make(np.zeros(0), np.zeros((0, c)), pre_infinity=pre, post_infinity=post)


def _columns(a: np.ndarray, c: int) -> np.ndarray:
    """``a`` ``(N,)`` as ``(N, c)`` read-only columns: a broadcast view, no copy (as ``Curve.make``
    keeps a default weight or mode). Their repeated copies were 214 MB of the clip that the write check
    reads back of a 10-minute take."""
    return np.broadcast_to(a[:, None], (a.shape[0], c))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _mirror_modes(curve: Curve, editors: list[Entry]) -> Curve:
    """Per-component tangent modes from editor curves with identical key times."""
    if len(editors) != curve.n_components or curve.n_keys == 0:
        return curve
    for e in editors:
        if e.keys is None or e.keys.n != curve.n_keys or not np.array_equal(e.keys.time, curve.time):
            return curve
    modes = [e.keys.modern_tangent_mode() for e in editors]
    if all(np.array_equal(m, curve.tangent_mode[:, c]) for c, m in enumerate(modes)):
        return curve  # (the runtime's own modes: its arrays kept, no copy per track)
    if all(m is modes[0] for m in modes):
        tm = _columns(modes[0], len(modes))  # (one array of a read in parts: shared, no copy per track)
    else:
        tm = np.stack(modes, axis=1)
    return Curve(
        curve.time,
        curve.value,
        curve.in_slope,
        curve.out_slope,
        curve.in_weight,
        curve.out_weight,
        curve.weighted_mode,
        tm,
        curve.pre_infinity,
        curve.post_infinity,
    )


def _channel_keys(curve: Curve, editors: list[Entry]) -> Curve:
    """A rotation track whose editor curves (``localEulerAnglesRaw.x/y/z`` of an Euler track,
    ``m_LocalRotation.x/y/z/w`` of a quaternion one) key the channels at different times, each a
    subset of the runtime curve's (issue 23: channels keyed independently): the runtime curve with
    ``channel_keys`` (and the editor curves' tangent modes at their own keys)."""
    n = curve.n_keys
    width = curve.n_components
    if len(editors) != width or n == 0:
        return curve
    own = np.zeros((n, width), dtype=bool)
    tm = np.array(curve.tangent_mode)
    for c, e in enumerate(editors):
        if e.keys is None or e.keys.n == 0:
            return curve
        pos = np.searchsorted(curve.time, e.keys.time)
        if pos.max() >= n or not np.array_equal(curve.time[pos], e.keys.time):
            return curve
        own[pos, c] = True
        tm[pos, c] = e.keys.modern_tangent_mode()
    if own.all():
        return curve
    own.flags.writeable = False
    tm.flags.writeable = False
    return replace(curve, tangent_mode=tm, channel_keys=own)


def editor_curves_addable(doc: AnimDocument) -> bool:
    """True when a clip has no editor curves at all and its layout has the list for them (not a
    Unity 4 compressed clip): the writer can give it a whole set (``writer._add_editor_curves``), so
    its tracks' channels can be keyed independently."""
    E = doc.entries
    return (
        not E.get("m_EditorCurves")
        and doc.field_span("m_EditorCurves") is not None
        and not E.get("m_CompressedRotationCurves")
    )


def _rotation_meta(list_name: str, editors: list[Entry], width: int, addable: bool) -> dict:
    """A rotation track's meta: its list, and ``separate_channel_keys: False`` when it has no editor
    curve per channel in a clip that has others (``addable`` False; a clip with none at all gets a
    whole set when it is written with independent channel keys): the runtime curve alone keys every
    channel at the same times, so the reducer's ``per_channel`` leaves it shared."""
    meta = {"format": "anim", "list": list_name}
    if len(editors) != width and not addable:
        meta["separate_channel_keys"] = False
    return meta


def _hermite_at(e: Entry, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value and derivative of a scalar entry's curve at ``t`` (unweighted Hermite; stepped holds)."""
    k = e.keys
    kt = k.time
    v = k.value[:, 0]
    if k.n == 1:
        return np.full(t.shape, v[0]), np.zeros(t.shape)
    seg = np.clip(np.searchsorted(kt, t, side="right") - 1, 0, k.n - 2)
    t0 = kt[seg]
    dt = kt[seg + 1] - t0
    s = np.clip((t - t0) / dt, 0.0, 1.0)
    m0 = k.out_slope[seg, 0]
    m1 = k.in_slope[seg + 1, 0]
    stepped = ~np.isfinite(m0) | ~np.isfinite(m1)
    m0 = np.where(stepped, 0.0, m0)
    m1 = np.where(stepped, 0.0, m1)
    v0, v1 = v[seg], v[seg + 1]
    h00 = 2 * s**3 - 3 * s**2 + 1
    h10 = s**3 - 2 * s**2 + s
    h01 = -2 * s**3 + 3 * s**2
    h11 = s**3 - s**2
    val = h00 * v0 + h10 * dt * m0 + h01 * v1 + h11 * dt * m1
    d = (
        (6 * s**2 - 6 * s) * v0
        + (3 * s**2 - 4 * s + 1) * dt * m0
        + (-6 * s**2 + 6 * s) * v1
        + (3 * s**2 - 2 * s) * dt * m1
    ) / dt
    val = np.where(stepped, v0, val)
    d = np.where(stepped, np.inf, d)
    before = t < kt[0]
    after = t > kt[-1]
    val = np.where(before, v[0], np.where(after, v[-1], val))
    d = np.where(before | after, 0.0, d)
    return val, d


def _humanoid_curve(parts: list[Entry]) -> Curve:
    """One ``(N, 4)`` curve from the four scalar curves x, y, z, w of a humanoid quartet."""
    times = [p.keys.time if p.keys is not None else np.zeros(0) for p in parts]
    same = all(t.shape == times[0].shape and np.array_equal(t, times[0]) for t in times)
    if same:
        t = times[0]
        n = t.shape[0]
        if n == 0:
            return Curve.make(np.zeros(0), np.zeros((0, 4)))

        def stack(attr, default=DEFAULT_WEIGHT):
            cols = []
            for p in parts:
                a = getattr(p.keys, attr)
                cols.append(np.full(n, default) if a is None else a[:, 0])
            return np.stack(cols, axis=1)

        return Curve(
            t,
            stack("value"),
            stack("in_slope"),
            stack("out_slope"),
            stack("in_weight"),
            stack("out_weight"),
            np.stack([p.keys.weighted_mode for p in parts], axis=1),
            np.stack([p.keys.modern_tangent_mode() for p in parts], axis=1),
            parts[0].pre_infinity,
            parts[0].post_infinity,
        )
    t = np.unique(np.concatenate(times))
    n = t.shape[0]
    val = np.zeros((n, 4))
    ins = np.zeros((n, 4))
    outs = np.zeros((n, 4))
    tm = np.zeros((n, 4), dtype=np.int64)
    for c, p in enumerate(parts):
        if p.keys is None:
            continue
        v, d = _hermite_at(p, t)
        val[:, c] = v
        ins[:, c] = d
        outs[:, c] = d
        idx = np.searchsorted(t, p.keys.time)
        val[idx, c] = p.keys.value[:, 0]
        ins[idx, c] = p.keys.in_slope[:, 0]
        outs[idx, c] = p.keys.out_slope[:, 0]
        tm[idx, c] = p.keys.modern_tangent_mode()
        # A stepped segment split in two stays stepped on both halves.
        step = ~np.isfinite(d)
        ins[step, c] = np.inf
        outs[step, c] = np.inf
    return Curve.make(
        t,
        val,
        ins,
        outs,
        tangent_mode=tm,
        pre_infinity=parts[0].pre_infinity,
        post_infinity=parts[0].post_infinity,
    )


def _compressed_curve(e: Entry) -> Curve:
    """The decoded keys of an ``m_CompressedRotationCurves`` item (float32, as Unity holds them)."""
    t, v, ins, outs = (np.asarray(x, dtype=np.float32).astype(np.float64) for x in e.extra["decoded"])
    return Curve.make(t, v, ins, outs, pre_infinity=e.pre_infinity, post_infinity=e.post_infinity)


def _mark_float_mirrors(doc: AnimDocument, others: list[OtherTrack], E) -> None:
    """Editable float curves: each ``m_FloatCurves`` entry's ``m_EditorCurves`` twin (same path,
    attribute and class, identical keys: Unity's editor copy) is marked ``mirror_of`` the float's
    name, so that an edit changes both (``engine.float_curves.with_float_curve``) and the writer
    writes both (``doc.original_floats``: name -> (track, entry, mirror entries))."""
    floats: dict[tuple, tuple[int, Entry]] = {}
    for k, o in enumerate(others):
        if o.kind == "float" and o.curve is not None and o.meta["list"] == "m_FloatCurves":
            e = E["m_FloatCurves"][o.meta["index"]]
            floats.setdefault((o.path, o.attribute, o.meta["class_id"]), (k, e))
    mirrors: dict[int, list[Entry]] = {}
    for o in others:
        if o.kind != "editor" or o.meta["list"] != "m_EditorCurves" or o.curve is None:
            continue
        hit = floats.get((o.path, o.attribute, o.meta["class_id"]))
        if hit is None or hit[0] in mirrors or not others[hit[0]].curve.equals(o.curve):
            continue
        o.meta["mirror_of"] = others[hit[0]].name
        mirrors[hit[0]] = [E["m_EditorCurves"][o.meta["index"]]]
    doc.original_floats = {others[k].name: (others[k], e, mirrors.get(k, [])) for k, e in floats.values()}


def build_clip(doc: AnimDocument) -> Clip:
    """The clip of a parsed document; sets ``doc.original_tracks``."""
    path = doc.path
    E = doc.entries
    tracks: list[RotationTrack] = []
    sources: dict[str, TrackSource] = {}
    used: set[int] = set()

    addable = editor_curves_addable(doc)
    editors: dict[tuple[str, str], Entry] = {}
    for e in E["m_EditorCurves"]:
        if e.class_id == 4 and e.attribute:
            editors.setdefault((e.path, e.attribute), e)
    displays: dict[str, list[Entry]] = {}
    for e in E["m_EulerEditorCurves"]:
        if e.attribute and e.attribute.rsplit(".", 1)[0] in DISPLAY_ATTRS:
            displays.setdefault(e.path, []).append(e)

    def add(track: RotationTrack, src: TrackSource) -> None:
        if track.path in sources:
            return  # duplicate path: keep the first as the rotation track, the rest read-only
        tracks.append(track)
        sources[track.path] = src
        for e in src.runtime:
            used.add(id(e))

    for e in E["m_EulerCurves"]:
        order_i = 4 if e.rotation_order is None else e.rotation_order
        if order_i > 5:
            raise ClipReadError(path, e.start + 1, f"m_RotationOrder {order_i} is not a Euler order (0..5)")
        ed = [editors.get((e.path, f"{EULER_EDITOR}.{c}")) for c in "xyz"]
        ed = [x for x in ed if x is not None]
        curve = _channel_keys(_mirror_modes(entry_curve(e), ed), ed)
        src = TrackSource("euler", [e], ed, displays.get(e.path, []), path=e.path)
        add(
            RotationTrack(
                e.path,
                "euler",
                curve,
                order=UNITY_ROTATION_ORDERS[order_i],
                meta=_rotation_meta("m_EulerCurves", ed, 3, addable),
            ),
            src,
        )
    for e in E["m_RotationCurves"]:
        ed = [editors.get((e.path, f"{QUAT_EDITOR}.{c}")) for c in "xyzw"]
        ed = [x for x in ed if x is not None]
        curve = _channel_keys(_mirror_modes(entry_curve(e), ed), ed)
        src = TrackSource("quaternion", [e], ed, displays.get(e.path, []), path=e.path)
        add(
            RotationTrack(
                e.path, "quaternion", curve, meta=_rotation_meta("m_RotationCurves", ed, 4, addable)
            ),
            src,
        )

    for e in E["m_CompressedRotationCurves"]:
        # Legacy m_Compressed: 1 clips: decoded into ordinary quaternion tracks (written back as
        # m_RotationCurves, see writer).
        add(
            RotationTrack(
                e.path,
                "quaternion",
                _compressed_curve(e),
                meta={"format": "anim", "list": "m_CompressedRotationCurves", "compressed": True},
            ),
            TrackSource("compressed", [e], [], displays.get(e.path, []), path=e.path),
        )

    quartets: dict[tuple[str, str], dict[str, Entry]] = {}
    for e in E["m_FloatCurves"]:
        if e.class_id == 95 and e.attribute:
            m = HUMANOID_Q.match(e.attribute)
            if m:
                quartets.setdefault((e.path, m.group(1)), {}).setdefault(m.group(2), e)
    float_editors: dict[tuple[str, str], Entry] = {}
    for e in E["m_EditorCurves"]:
        if e.class_id == 95 and e.attribute:
            float_editors.setdefault((e.path, e.attribute), e)
    for (p, prefix), comps in quartets.items():
        if len(comps) != 4:
            continue
        parts = [comps[c] for c in "xyzw"]
        name = f"{p}:{prefix}" if p else prefix
        ed = [float_editors.get((p, f"{prefix}.{c}")) for c in "xyzw"]
        ed = [x for x in ed if x is not None]
        src = TrackSource("humanoid", parts, ed, [], attribute_prefix=prefix, path=p)
        add(
            RotationTrack(
                name,
                "quaternion",
                _humanoid_curve(parts),
                meta={"format": "anim", "list": "m_FloatCurves", "humanoid": prefix},
            ),
            src,
        )

    others: list[OtherTrack] = []
    for lname in (
        "m_RotationCurves",
        "m_EulerCurves",
        "m_PositionCurves",
        "m_ScaleCurves",
        "m_FloatCurves",
        "m_EditorCurves",
        "m_EulerEditorCurves",
    ):
        kind, attr = _OTHER_KIND[lname]
        for e in E[lname]:
            if id(e) in used:
                continue
            curve = entry_curve(e)
            others.append(
                OtherTrack(
                    e.path,
                    e.attribute or attr,
                    kind,
                    curve,
                    curve.time,
                    {"list": lname, "index": e.index, "class_id": e.class_id},
                )
            )
    _mark_float_mirrors(doc, others, E)
    for e in E["m_PPtrCurves"]:
        others.append(
            OtherTrack(
                e.path,
                e.attribute or "",
                "pptr",
                None,
                e.times,
                {
                    "list": "m_PPtrCurves",
                    "index": e.index,
                    "class_id": e.class_id,
                    "values": e.extra.get("values", []),
                },
            )
        )
    if doc.events:
        others.append(
            OtherTrack(
                "",
                "m_Events",
                "events",
                None,
                np.array([ev["time"] for ev in doc.events]),
                {"events": doc.events},
            )
        )
    if doc.settings:
        others.append(
            OtherTrack(
                "", "m_AnimationClipSettings", "settings", None, np.zeros(0), {"fields": dict(doc.settings)}
            )
        )

    doc.original_tracks = {t.path: (t, sources[t.path]) for t in tracks}
    meta = {
        "format": "anim",
        "clip_version": doc.clip_version,
        "legacy": doc.legacy,
        "name": doc.name,
        "settings": dict(doc.settings),
    }
    return Clip(doc.name, doc.sample_rate, tracks, others, source=doc, meta=meta)
