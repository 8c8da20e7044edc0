"""glTF 2.0 (``.gltf`` / ``.glb``) node animations in and out, through pygltflib.

Reading (:func:`read_gltf`): one animation of the file becomes a clip (``take``: index or name,
default the first; ``clip.meta["takes"]`` lists them, ``clip.meta["take"]`` names the one read).

* Paths: every node's path from its scene root, names joined with ``/`` (``Hips/Spine``), as Unity's
  glTF importers (UniGLTF, glTFast) name the GameObjects under the imported root. An unnamed node is
  ``node<index>``; a name repeated among siblings gets `` (<index>)`` so paths stay unique.
* Frames: glTF is right-handed, Y up, +Z forward; Unity is left-handed. Like those importers (and
  :mod:`.bvh`) everything is mirrored through X: positions ``(x, y, z) -> (-x, y, z)``, quaternions
  ``(x, y, z, w) -> (x, -y, -z, w)`` (:data:`ROTATION_MIRROR`; linear, so CUBICSPLINE tangents map the
  same way). The writer applies the same mirror back (it is its own inverse).
* ``rotation`` channels become quaternion :class:`RotationTrack`\\ s: LINEAR samplers (Slerp between
  keys) keep their keys made hemisphere-continuous with Linear tangents and ``meta["frame_poses"]``
  (evenly spaced keys are then poses at frames with the Slerp between them, as BVH frames are:
  ``engine.reorder.is_frame_samples``); STEP samplers hold each key (infinite slopes); CUBICSPLINE
  samplers are Unity's own quaternion curve model (per-component cubic Hermite, then normalized), so
  their in/out tangents become the keys' slopes exactly. ``track.meta["gltf_interpolation"]`` keeps
  the sampler's interpolation.
* ``translation`` / ``scale`` channels become read-only :class:`OtherTrack`\\ s (``m_LocalPosition``,
  ``m_LocalScale``) with the same three interpolations. Morph-target ``weights`` are not read.
* Frame rate: the writer's ``extras.curveeditor.frame_rate`` when present, else the key spacing when
  the keys are evenly spaced (snapped like BVH frame times), else 30 fps.
* ``clip.meta["joints"]``: every node's path, parent and rest translation / rotation in Unity's frame,
  so the skeleton view draws the character (``engine.skeleton``).

Writing (:func:`write_gltf`): one animation holding the clip. A node per track path and per parent
path (rest translations from ``meta["joints"]`` or a BVH hierarchy when the clip has one). Rotation
samplers, chosen per track so a viewer plays what Unity plays of the clip:

* per-frame tracks (BVH or glTF frames): LINEAR at the frames, hemisphere-continuous (the Slerp
  between frames is what such a track means);
* every interval stepped: STEP;
* quaternion curves with finite, unweighted tangents: CUBICSPLINE, the keys and tangents as the
  engine holds them (the same curve a viewer plays);
* Euler tracks (and weighted quaternion keys): converted by the engine's one conversion
  (``export_checks.to_quaternion_track``: ``reorder.rekey``, Free tangents along the played path,
  within 0.01 deg) and written as CUBICSPLINE. A track mixing stepped and smooth intervals has no
  sampler (one interpolation per track): refused with a one-line error.

The read-back check (``io.verify``) plays the written file as a viewer does (:func:`viewer_played`:
Slerp for LINEAR) against what Unity plays of the clip. Lost: float and object-reference curves,
tangent modes, pre/post infinity (glTF clamps), the Euler representation (quaternions only); each is
named in a warning. ``.gltf`` files embed their buffer as a data URI (one file, written atomically).
Bad input raises :class:`~curveeditor.io.errors.ClipReadError` (one line).
"""

from __future__ import annotations

import base64
import json
import os
import struct
import warnings
from pathlib import Path

import numpy as np

from ..engine.clip import QUATERNION, Clip, OtherTrack, RotationTrack, key_quaternions, played
from ..engine.curves import Curve, TangentMode, stepped_intervals, tangent_mode_bits
from ..engine.rotations import hemisphere_continuous, quat_normalize
from .errors import ClipReadError, ClipWriteError

__all__ = [
    "read_gltf",
    "take_names",
    "write_gltf",
    "gltf_bytes",
    "viewer_played",
    "ROTATION_MIRROR",
    "POSITION_MIRROR",
    "DEFAULT_FRAME_RATE",
]

#: glTF (right-handed) <-> Unity (left-handed): the X mirror on quaternions and on positions.
ROTATION_MIRROR = np.array([1.0, -1.0, -1.0, 1.0])
POSITION_MIRROR = np.array([-1.0, 1.0, 1.0])
#: Frame rate of a clip whose keys say none (uneven keys, no ``extras``): Unity's default.
DEFAULT_FRAME_RATE = 30.0

_COMPONENTS = {5120: "<i1", 5121: "<u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
_NORMALIZE = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}
_INTERPOLATIONS = ("LINEAR", "STEP", "CUBICSPLINE")
_GLB_MAGIC = b"glTF"
_JSON_CHUNK = 0x4E4F534A
_BIN_CHUNK = 0x004E4942
#: Marker (node ``extras``) of the node standing for the clip's root (track path ``''``).
_ROOT_MARK = {"curveeditor": {"root": True}}


# ------------------------------------------------------------------------------------------- reading


def _load_document(path: str, raw: bytes):
    """``(GLTF2, glb_bin or None)`` from the file bytes; ClipReadError on anything that is not glTF."""
    import pygltflib

    blob = None
    if raw[:4] == _GLB_MAGIC:
        if len(raw) < 20:
            raise ClipReadError(path, None, "truncated GLB file (no JSON chunk)")
        _magic, version, length = struct.unpack_from("<4sII", raw, 0)
        if version != 2:
            raise ClipReadError(path, None, f"GLB version {version} (only glTF 2.0 is read)")
        if length > len(raw):
            raise ClipReadError(path, None, f"truncated GLB file ({len(raw)} of {length} bytes)")
        pos, text = 12, None
        while pos + 8 <= length:
            size, kind = struct.unpack_from("<II", raw, pos)
            body = raw[pos + 8 : pos + 8 + size]
            if len(body) < size:
                raise ClipReadError(path, None, "truncated GLB chunk")
            if kind == _JSON_CHUNK and text is None:
                text = body
            elif kind == _BIN_CHUNK and blob is None:
                blob = body
            pos += 8 + size + (-size % 4)
        if text is None:
            raise ClipReadError(path, None, "GLB file has no JSON chunk")
    else:
        text = raw
    try:
        data = json.loads(text.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ClipReadError(path, None, f"not a glTF file ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("asset"), dict):
        raise ClipReadError(path, None, "not a glTF file (no 'asset' object)")
    version = str(data["asset"].get("version", ""))
    if not version.startswith("2."):
        raise ClipReadError(path, None, f"glTF version {version or '?'} (only glTF 2.0 is read)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dataclasses_json warns of optional fields left out
            doc = pygltflib.GLTF2.from_dict(data)
    except Exception as exc:  # pygltflib's schema mapping: any failure is the file's
        raise ClipReadError(path, None, f"invalid glTF document ({type(exc).__name__}: {exc})") from None
    return doc, blob


def _buffers(path: str, doc, blob: bytes | None) -> list[bytes]:
    out = []
    folder = Path(path).parent
    for i, b in enumerate(doc.buffers or []):
        uri = b.uri
        if uri is None:
            if i != 0 or blob is None:
                raise ClipReadError(path, None, f"buffer {i} has no data (no uri and no GLB binary chunk)")
            data = blob
        elif uri.startswith("data:"):
            head, _, payload = uri.partition(",")
            if not head.endswith(";base64"):
                raise ClipReadError(path, None, f"buffer {i}: data URI is not base64")
            try:
                data = base64.b64decode(payload, validate=True)
            except ValueError:
                raise ClipReadError(path, None, f"buffer {i}: bad base64 data") from None
        else:
            from urllib.parse import unquote

            target = folder / unquote(uri)
            try:
                data = target.read_bytes()
            except OSError as exc:
                raise ClipReadError(
                    path, None, f"buffer {i}: cannot read {uri!r} ({exc.strerror or exc})"
                ) from None
        length = int(b.byteLength or 0)
        if len(data) < length:
            raise ClipReadError(path, None, f"buffer {i} holds {len(data)} bytes, byteLength says {length}")
        out.append(data)
    return out


def _accessor(path: str, doc, buffers: list[bytes], index, what: str, types: tuple[str, ...]) -> np.ndarray:
    """Accessor ``index`` as a float64 ``(count, width)`` array (normalized integers scaled to [-1, 1])."""
    accessors = doc.accessors or []
    if not isinstance(index, int) or not 0 <= index < len(accessors):
        raise ClipReadError(path, None, f"{what}: no accessor {index!r}")
    acc = accessors[index]
    if acc.type not in types:
        raise ClipReadError(path, None, f"{what}: accessor {index} is {acc.type}, expected {'/'.join(types)}")
    dtype = _COMPONENTS.get(acc.componentType)
    if dtype is None:
        raise ClipReadError(path, None, f"{what}: accessor {index} has component type {acc.componentType}")
    if acc.sparse is not None:
        raise ClipReadError(path, None, f"{what}: accessor {index} is sparse (not supported)")
    width, count = _WIDTH[acc.type], int(acc.count or 0)
    if count < 0:
        raise ClipReadError(path, None, f"{what}: accessor {index} has a negative count")
    if acc.bufferView is None:
        values = np.zeros((count, width))
    else:
        views = doc.bufferViews or []
        if not 0 <= acc.bufferView < len(views):
            raise ClipReadError(path, None, f"{what}: accessor {index} names no buffer view {acc.bufferView}")
        view = views[acc.bufferView]
        if not 0 <= (view.buffer or 0) < len(buffers):
            raise ClipReadError(path, None, f"{what}: buffer view {acc.bufferView} names no buffer")
        data = buffers[view.buffer or 0]
        item = np.dtype(dtype).itemsize
        stride = int(view.byteStride or item * width)
        start = int(view.byteOffset or 0) + int(acc.byteOffset or 0)
        view_end = int(view.byteOffset or 0) + int(view.byteLength or 0)
        need = start + (stride * (count - 1) + item * width if count else 0)
        if start < 0 or stride < item * width or need > min(view_end, len(data)):
            raise ClipReadError(path, None, f"{what}: accessor {index} reads past the end of its buffer")
        raw = np.ndarray((count, width), dtype=dtype, buffer=data, offset=start, strides=(stride, item))
        values = raw.astype(np.float64)
        if acc.componentType in _NORMALIZE:
            if not acc.normalized:
                raise ClipReadError(path, None, f"{what}: accessor {index} holds integers not normalized")
            values = np.maximum(values / _NORMALIZE[acc.componentType], -1.0)
    if not np.all(np.isfinite(values)):
        raise ClipReadError(path, None, f"{what}: accessor {index} holds non-finite values")
    return values


def _node_paths(path: str, doc) -> tuple[list[str], list[int]]:
    """Each node's path (``''`` for the writer's root marker) and parent index (-1 for roots)."""
    nodes = doc.nodes or []
    n = len(nodes)
    parent = [-1] * n
    for i, node in enumerate(nodes):
        for c in node.children or []:
            if not isinstance(c, int) or not 0 <= c < n:
                raise ClipReadError(path, None, f"node {i} has a child {c!r} that is not a node")
            if parent[c] != -1 or c == i:
                raise ClipReadError(path, None, f"node {c} has more than one parent")
            parent[c] = i
    paths: list[str | None] = [None] * n
    for start in range(n):
        chain, j = [], start
        while j != -1 and paths[j] is None:
            chain.append(j)
            if len(chain) > n:
                raise ClipReadError(path, None, "the node hierarchy has a cycle")
            j = parent[j]
        base = "" if j == -1 else paths[j]
        for k in reversed(chain):
            node = nodes[k]
            if parent[k] == -1 and node.extras == _ROOT_MARK:
                paths[k] = ""
            else:
                name = node.name if isinstance(node.name, str) and node.name else f"node{k}"
                name = name.replace("/", "_")
                paths[k] = f"{base}/{name}" if base else name
            base = paths[k]
    seen: dict[str, int] = {}
    for k, p in enumerate(paths):
        if p in seen:
            paths[k] = f"{p} ({k})"
        seen[paths[k]] = k
    return [p or "" for p in paths], parent


def _choose_animation(path: str, doc, take):
    anims = doc.animations or []
    if not anims:
        raise ClipReadError(path, None, "no animations in this glTF file")
    names = [a.name if isinstance(a.name, str) and a.name else f"animation{i}" for i, a in enumerate(anims)]
    if take is None:
        return 0, names
    if isinstance(take, int) or (isinstance(take, str) and take.isdigit() and take not in names):
        i = int(take)
        if not 0 <= i < len(anims):
            raise ClipReadError(
                path, None, f"no animation {i} (the file has {len(anims)}: {', '.join(names)})"
            )
        return i, names
    if take not in names:
        raise ClipReadError(path, None, f"no animation named {take!r} (animations: {', '.join(names)})")
    return names.index(take), names


def _keyed_curve(times: np.ndarray, out: np.ndarray, interp: str, width: int) -> tuple[Curve, np.ndarray]:
    """The Unity curve of one sampler and its key values ``(N, width)``."""
    from ..engine.tangents import make_curve

    if interp == "CUBICSPLINE":
        trip = out.reshape(times.shape[0], 3, width)
        ins, value, outs = trip[:, 0], trip[:, 1], trip[:, 2]
        free = tangent_mode_bits(TangentMode.FREE, TangentMode.FREE, True)
        return Curve.make(times, value, ins, outs, tangent_mode=free), value
    if interp == "STEP":
        return make_curve(times, out, mode="constant"), out
    return make_curve(times, out, mode="linear"), out


def _read_document(fname: str):
    """``(document, binary chunk)`` of the file ``fname``; :class:`ClipReadError` when unreadable."""
    try:
        raw = Path(fname).read_bytes()
    except OSError as exc:
        raise ClipReadError(fname, None, f"cannot read file: {exc.strerror or exc}") from None
    if not raw.strip():
        raise ClipReadError(fname, None, "empty file")
    return _load_document(fname, raw)


def take_names(path: str | os.PathLike) -> list[str]:
    """The file's animations as ``take=`` and ``clip.meta["takes"]`` name them, none read
    (``batch`` plans one output per animation). Raises :class:`ClipReadError`."""
    fname = os.fspath(path)
    doc, _blob = _read_document(fname)
    return _choose_animation(fname, doc, None)[1]


def read_gltf(path: str | os.PathLike, take: str | int | None = None) -> Clip:
    """Read one animation of a ``.gltf`` / ``.glb`` file into a :class:`Clip` in Unity's frame
    (module docstring). ``take``: the animation's index or name (default the first).

    Raises :class:`ClipReadError` for unreadable or invalid files and files without animations."""
    fname = os.fspath(path)
    doc, blob = _read_document(fname)
    index, names = _choose_animation(fname, doc, take)
    anim = doc.animations[index]
    buffers = _buffers(fname, doc, blob)
    paths, parents = _node_paths(fname, doc)
    samplers = anim.samplers or []
    rot: dict[int, RotationTrack] = {}
    others: list[OtherTrack] = []
    seen: set = set()
    spacing: list[np.ndarray] = []
    entries: list[tuple] = []
    for ci, ch in enumerate(anim.channels or []):
        what = f"animation {names[index]!r} channel {ci}"
        target = ch.target
        node = getattr(target, "node", None)
        prop = getattr(target, "path", None)
        if prop == "weights" or node is None:
            continue  # morph weights / extension targets: not node transforms
        if not isinstance(node, int) or not 0 <= node < len(paths):
            raise ClipReadError(fname, None, f"{what}: targets no node {node!r}")
        if prop not in ("rotation", "translation", "scale"):
            raise ClipReadError(fname, None, f"{what}: unknown target path {prop!r}")
        if (node, prop) in seen:
            raise ClipReadError(fname, None, f"{what}: node {node} {prop} is animated twice")
        seen.add((node, prop))
        if not isinstance(ch.sampler, int) or not 0 <= ch.sampler < len(samplers):
            raise ClipReadError(fname, None, f"{what}: no sampler {ch.sampler!r}")
        sampler = samplers[ch.sampler]
        interp = sampler.interpolation or "LINEAR"
        if interp not in _INTERPOLATIONS:
            raise ClipReadError(fname, None, f"{what}: unknown interpolation {interp!r}")
        times = _accessor(fname, doc, buffers, sampler.input, what + " input", ("SCALAR",))[:, 0]
        width = 4 if prop == "rotation" else 3
        out = _accessor(
            fname, doc, buffers, sampler.output, what + " output", ("VEC4" if width == 4 else "VEC3",)
        )
        n = times.shape[0]
        if n == 0:
            continue
        if n > 1 and not np.all(np.diff(times) > 0):
            raise ClipReadError(fname, None, f"{what}: key times are not strictly increasing")
        if out.shape[0] != n * (3 if interp == "CUBICSPLINE" else 1):
            raise ClipReadError(fname, None, f"{what}: {out.shape[0]} output values for {n} keys ({interp})")
        mirror = ROTATION_MIRROR if width == 4 else POSITION_MIRROR if prop == "translation" else 1.0
        out = out * mirror
        if prop == "rotation" and interp == "LINEAR":
            norm = np.linalg.norm(out, axis=1)
            if np.any(norm < 1e-6):
                raise ClipReadError(fname, None, f"{what}: a rotation key is a zero quaternion")
            out = hemisphere_continuous(out / norm[:, None])
            if n > 2:
                spacing.append(np.diff(times))
        entries.append((node, prop, interp, times, out))
    if not entries:
        raise ClipReadError(fname, None, f"animation {names[index]!r} animates no node transforms")
    rate = _frame_rate(anim, spacing)
    for node, prop, interp, times, out in entries:
        times = _on_frames(times, rate)
        if prop == "rotation":
            curve, _ = _keyed_curve(times, out, interp, 4)
            meta = {"gltf_interpolation": interp, "gltf_node": node}
            if interp == "LINEAR":
                meta["frame_poses"] = True
            rot[node] = RotationTrack(paths[node], QUATERNION, curve, meta=meta)
        else:
            curve, _ = _keyed_curve(times, out, interp, 3)
            attr, kind = (
                ("m_LocalPosition", "position") if prop == "translation" else ("m_LocalScale", "scale")
            )
            others.append(
                OtherTrack(paths[node], attr, kind, curve, times, meta={"gltf_interpolation": interp})
            )
    tracks = [rot[k] for k in sorted(rot)]
    meta = {
        "format": "gltf",
        "path": fname,
        "take": names[index],
        "takes": names,
        "mirror": "x",
        "joints": _joints(doc, paths, parents),
    }
    return Clip(
        name=names[index], frame_rate=rate, tracks=tuple(tracks), other_tracks=tuple(others), meta=meta
    )


def _on_frames(times: np.ndarray, rate: float) -> np.ndarray:
    """Key times on the frame grid ``i / rate`` exactly when every one is there up to float32 rounding
    (glTF stores times as float32: frame 740 at 60 fps is 12.333333015 s), else as stored."""
    snapped = np.round(times * rate) / rate
    if np.all(np.abs(snapped - times) <= 2e-7 * np.abs(times) + 1e-9) and np.all(np.diff(snapped) > 0):
        return snapped
    return times


def _frame_rate(anim, spacing: list[np.ndarray]) -> float:
    from .bvh import FRAME_RATE_RANGE, frame_rate_from_frame_time

    extras = anim.extras if isinstance(anim.extras, dict) else {}
    stated = (
        extras.get("curveeditor", {}).get("frame_rate")
        if isinstance(extras.get("curveeditor"), dict)
        else None
    )
    lo, hi = FRAME_RATE_RANGE
    if isinstance(stated, (int, float)) and lo <= float(stated) <= hi:
        return float(stated)
    if spacing:
        dt = np.concatenate(spacing)
        med = float(np.median(dt))
        if med > 0 and np.all(np.abs(dt - med) <= 1e-4 * med + 2e-6):
            rate = frame_rate_from_frame_time(med)
            if lo <= rate <= hi and float(rate).is_integer():
                return float(rate)
    return DEFAULT_FRAME_RATE


def _joints(doc, paths: list[str], parents: list[int]) -> dict:
    """Rest transforms of every node in Unity's frame (module docstring)."""
    nodes = doc.nodes or []
    offsets = np.zeros((len(nodes), 3))
    rotations = np.zeros((len(nodes), 4))
    rotations[:, 3] = 1.0
    for i, node in enumerate(nodes):
        if node.matrix is not None and len(node.matrix) == 16:
            m = np.asarray(node.matrix, dtype=np.float64).reshape(4, 4).T  # column-major
            offsets[i] = m[:3, 3]
            from scipy.spatial.transform import Rotation

            try:
                rotations[i] = Rotation.from_matrix(m[:3, :3]).as_quat()
            except ValueError:
                pass
        else:
            if node.translation is not None and len(node.translation) == 3:
                offsets[i] = node.translation
            if node.rotation is not None and len(node.rotation) == 4:
                rotations[i] = node.rotation
    ok = np.all(np.isfinite(offsets), axis=1) & np.all(np.isfinite(rotations), axis=1)
    offsets[~ok] = 0.0
    rotations[~ok] = (0.0, 0.0, 0.0, 1.0)
    norm = np.linalg.norm(rotations, axis=1)
    rotations[norm < 1e-9] = (0.0, 0.0, 0.0, 1.0)
    rotations = quat_normalize(rotations) * ROTATION_MIRROR
    return {
        "paths": list(paths),
        "parents": list(parents),
        "offsets": (offsets * POSITION_MIRROR).tolist(),
        "rotations": rotations.tolist(),
    }


def viewer_played(track: RotationTrack, times) -> np.ndarray:
    """What a glTF viewer plays of a rotation track read from a glTF file: ``(M, 4)`` unit quaternions
    at ``times`` (seconds): the Slerp between keys for a LINEAR sampler, else the curve as Unity plays
    it (STEP holds each key; CUBICSPLINE is Unity's normalized per-component Hermite)."""
    if track.meta.get("gltf_interpolation") == "LINEAR" and track.n_keys > 1:
        from ..engine.resample import slerp

        return slerp(track.times, key_quaternions(track), np.asarray(times, dtype=np.float64))
    return played(track, times)


# ------------------------------------------------------------------------------------------- writing


class _Buffer:
    """The binary buffer being built: float32 blocks, each its own buffer view and accessor."""

    def __init__(self):
        self.chunks: list[bytes] = []
        self.size = 0
        self.views: list[dict] = []
        self.accessors: list[dict] = []

    def add(self, values: np.ndarray, kind: str, bounds: bool = False) -> int:
        data = np.ascontiguousarray(values, dtype="<f4")
        raw = data.tobytes()
        self.views.append({"buffer": 0, "byteOffset": self.size, "byteLength": len(raw)})
        self.chunks.append(raw)
        self.size += len(raw)
        acc = {
            "bufferView": len(self.views) - 1,
            "componentType": 5126,
            "count": int(data.shape[0]),
            "type": kind,
        }
        if bounds:
            flat = data.reshape(data.shape[0], -1).astype(np.float64)
            acc["min"] = flat.min(axis=0).tolist()
            acc["max"] = flat.max(axis=0).tolist()
        self.accessors.append(acc)
        return len(self.accessors) - 1


def _rest_offsets(clip: Clip) -> dict[str, np.ndarray]:
    """Path -> rest translation in glTF's frame (from ``meta["joints"]`` or a BVH hierarchy)."""
    out: dict[str, np.ndarray] = {}
    joints = clip.meta.get("joints")
    if isinstance(joints, dict):
        for p, off in zip(joints.get("paths", []), joints.get("offsets", []), strict=False):
            out[p] = np.asarray(off, dtype=np.float64) * POSITION_MIRROR
    for j in clip.meta.get("hierarchy") or []:
        # BVH offsets are in the file's right-handed Y-up frame: glTF's frame already.
        out.setdefault(j["path"], np.asarray(j["offset"], dtype=np.float64))
    return out


def _rest_rotations(clip: Clip) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    joints = clip.meta.get("joints")
    if isinstance(joints, dict) and joints.get("rotations"):
        for p, q in zip(joints["paths"], joints["rotations"], strict=False):
            out[p] = np.asarray(q, dtype=np.float64) * ROTATION_MIRROR
    return out


def _rotation_sampler(track: RotationTrack) -> tuple[str, np.ndarray, np.ndarray, list[str]]:
    """``(interpolation, times (N,), output (N or 3N, 4) in Unity's frame, notes)`` for one track
    (module docstring). Raises ``ValueError`` for a track no sampler can hold."""
    from ..engine.export_checks import to_quaternion_track
    from ..engine.reorder import is_frame_samples

    notes: list[str] = []
    if is_frame_samples(track):
        return "LINEAR", track.times, hemisphere_continuous(key_quaternions(track)), notes
    if track.n_keys < 2:
        return "LINEAR", track.times, key_quaternions(track), notes
    stepped = stepped_intervals(track.curve)
    if np.all(stepped):
        return "STEP", track.times, key_quaternions(track), notes
    if np.any(stepped):
        raise ValueError(
            f"track {track.path or '(root)'!r} mixes stepped and smooth key intervals: a glTF sampler has "
            "one interpolation per track (make every key Constant, or none)"
        )
    src = track
    if not _cubic_ok(track):
        src, added, _long = to_quaternion_track(track)
        if track.kind != QUATERNION:
            notes.append(
                f"Euler ({track.order}) keys written as quaternion keys"
                + (f", {added} key(s) added to keep the motion" if added else "")
            )
        else:
            notes.append(f"weighted tangents re-keyed as cubic quaternion keys ({added:+d} keys)")
    c = src.curve
    trip = np.stack([c.in_slope, c.value, c.out_slope], axis=1).reshape(-1, 4)
    return "CUBICSPLINE", c.time, trip, notes


def _cubic_ok(track: RotationTrack) -> bool:
    """A quaternion curve a CUBICSPLINE sampler holds as it is: unweighted, finite slopes, unit keys."""
    c = track.curve
    return bool(
        track.kind == QUATERNION
        and not np.any(c.weighted_mode)
        and np.all(np.isfinite(c.in_slope))
        and np.all(np.isfinite(c.out_slope))
        and np.all(np.abs(np.linalg.norm(c.value, axis=1) - 1.0) <= 1e-6)
    )


def _vector_sampler(curve: Curve) -> tuple[str, np.ndarray, np.ndarray] | None:
    """A translation / scale curve as a sampler (exact), or None when no sampler holds it."""
    if curve.n_keys == 0 or np.any(curve.weighted_mode):
        return None
    if curve.n_keys == 1:
        return "LINEAR", curve.time, curve.value
    stepped = stepped_intervals(curve)
    if np.all(stepped):
        return "STEP", curve.time, curve.value
    if np.any(stepped):
        return None
    trip = np.stack([curve.in_slope, curve.value, curve.out_slope], axis=1).reshape(-1, 3)
    return "CUBICSPLINE", curve.time, trip


def gltf_document(clip: Clip) -> tuple[dict, bytes, list[str]]:
    """The glTF JSON (a dict), its binary buffer and the warnings (what the file cannot hold)."""
    warnings: list[str] = []
    start = min([t.curve.start for t in clip.tracks if t.n_keys] + [0.0])
    if start < 0:
        raise ClipWriteError("", None, f"glTF key times cannot be negative (the clip starts at {start:g} s)")
    # Nodes: every track path and every parent path.
    animated = [t.path for t in clip.tracks if t.n_keys]
    moved = [o.path for o in clip.other_tracks if o.kind in ("position", "scale") and o.curve is not None]
    joints = clip.meta.get("joints") if isinstance(clip.meta.get("joints"), dict) else {}
    listed = list(joints.get("paths", [])) + [j["path"] for j in clip.meta.get("hierarchy") or []]
    every: dict[str, None] = {}
    for p in listed + animated + moved:
        parts = p.split("/") if p else []
        for k in range(1, len(parts) + 1):
            every.setdefault("/".join(parts[:k]), None)
    has_root = "" in animated or "" in moved
    paths = ([""] if has_root else []) + [p for p in every if p != ""]
    index = {p: i for i, p in enumerate(paths)}
    offsets = _rest_offsets(clip)
    rests = _rest_rotations(clip)
    nodes: list[dict] = []
    for p in paths:
        node: dict = {"name": p.rpartition("/")[2] if p else clip.name or "root"}
        if p == "":
            node["extras"] = _ROOT_MARK
        off = offsets.get(p)
        if off is not None and np.any(off != 0):
            node["translation"] = [float(v) for v in off]
        q = rests.get(p)
        if q is not None and not np.allclose(q, (0, 0, 0, 1)):
            node["rotation"] = [float(v) for v in quat_normalize(q)]
        nodes.append(node)
    roots = []
    for p in paths:
        if p == "":
            continue
        parent = p.rpartition("/")[0] if "/" in p else ("" if has_root else None)
        if parent is None:
            roots.append(index[p])
        else:
            nodes[index[parent]].setdefault("children", []).append(index[p])
    if has_root:
        roots.insert(0, index[""])

    buf = _Buffer()
    samplers: list[dict] = []
    channels: list[dict] = []

    def add(node: int, prop: str, interp: str, times: np.ndarray, out: np.ndarray, kind: str) -> None:
        inp = buf.add(times.reshape(-1, 1), "SCALAR", bounds=True)
        outp = buf.add(out, kind)
        samplers.append({"input": inp, "output": outp, "interpolation": interp})
        channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": prop}})

    euler_notes = 0
    for t in clip.tracks:
        if t.n_keys == 0:
            continue
        try:
            interp, times, out, notes = _rotation_sampler(t)
        except ValueError as exc:
            raise ClipWriteError("", None, str(exc)) from None
        out = out * ROTATION_MIRROR
        if interp != "CUBICSPLINE":
            out = quat_normalize(out)
        add(index[t.path], "rotation", interp, times, out, "VEC4")
        for n in notes:
            if n.startswith("Euler"):
                euler_notes += 1
            else:
                warnings.append(f"{t.path or '(root)'}: {n}")
    if euler_notes:
        warnings.append(
            f"{euler_notes} Euler track(s) written as quaternion keys (glTF holds quaternions; the "
            "Euler channels, their order and tangent modes are not kept)"
        )
    dropped = 0
    done: set = set()
    for o in clip.other_tracks:
        if o.kind not in ("position", "scale") or o.curve is None or o.curve.value.shape[1] != 3:
            dropped += 1
            continue
        prop = "translation" if o.kind == "position" else "scale"
        if (o.path, prop) in done:
            dropped += 1
            continue
        sampler = _vector_sampler(o.curve)
        if sampler is None:
            warnings.append(
                f"{o.name}: weighted or partly stepped keys cannot be a glTF sampler; not written"
            )
            continue
        interp, times, out = sampler
        if times[0] < 0:
            continue
        if prop == "translation":
            out = out * POSITION_MIRROR
        add(index[o.path], prop, interp, times, out, "VEC3")
        done.add((o.path, prop))
    if dropped:
        warnings.append(
            f"{dropped} float / object-reference curve(s) not written (glTF animates node transforms)"
        )
    if any(t.curve.pre_infinity not in (2, 3) or t.curve.post_infinity not in (2, 3) for t in clip.tracks):
        warnings.append("pre/post infinity (Loop, PingPong) not kept: glTF holds the end keys")
    doc = {
        "asset": {"version": "2.0", "generator": "curveeditor"},
        "scene": 0,
        "scenes": [{"nodes": roots}],
        "nodes": nodes,
    }
    if channels:
        doc["animations"] = [
            {
                "name": clip.name or "clip",
                "channels": channels,
                "samplers": samplers,
                "extras": {"curveeditor": {"frame_rate": float(clip.frame_rate)}},
            }
        ]
    blob = b"".join(buf.chunks)
    if buf.accessors:
        doc["accessors"] = buf.accessors
        doc["bufferViews"] = buf.views
        doc["buffers"] = [{"byteLength": len(blob)}]
    return doc, blob, warnings


def gltf_bytes(clip: Clip, binary: bool) -> tuple[bytes, list[str]]:
    """The file bytes (GLB when ``binary``, else glTF JSON with the buffer as a data URI) and the
    warnings. The document goes through pygltflib's model (so it is one pygltflib reads back)."""
    import pygltflib

    doc, blob, warnings = gltf_document(clip)
    if not binary and blob:
        doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
    model = pygltflib.GLTF2.from_dict(doc)
    text = json.dumps(_clean(model.to_dict()), separators=(",", ":"), allow_nan=False).encode("utf-8")
    if not binary:
        return text, warnings
    text += b" " * (-len(text) % 4)
    body = blob + b"\x00" * (-len(blob) % 4)
    chunks = struct.pack("<II", len(text), _JSON_CHUNK) + text
    if blob:
        chunks += struct.pack("<II", len(body), _BIN_CHUNK) + body
    return struct.pack("<4sII", _GLB_MAGIC, 2, 12 + len(chunks)) + chunks, warnings


def _clean(value):
    """pygltflib's dict with its empty defaults dropped (``[]``, ``{}``, ``None``): the validator warns
    about empty arrays and objects."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _clean(v)
            if v is None or (isinstance(v, (list, dict)) and not v and k != "nodes"):
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def write_gltf(clip: Clip, path: str | os.PathLike, protect=None, **_opts) -> list[str]:
    """Write ``clip`` as ``.glb`` (binary) or ``.gltf`` (JSON, embedded buffer) atomically; returns the
    warnings (what glTF cannot hold). Raises :class:`ClipWriteError`."""
    from .atomic import atomic_write_bytes

    fname = os.fspath(path)
    try:
        data, warnings = gltf_bytes(clip, binary=fname.lower().endswith(".glb"))
    except ClipWriteError as exc:
        raise ClipWriteError(fname, None, exc.reason) from None
    atomic_write_bytes(fname, data, protect=protect)
    return warnings
