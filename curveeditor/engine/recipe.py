"""Recipes: an ordered list of clean-up operations with their parameters, saved as versioned JSON.

A recipe is ``{"version": 1, "steps": [{"op": NAME, ...params}, ...]}`` (optionally with ``"name"``
and ``"description"`` strings). Ops, parameters and units (``docs/architecture.md``)::

    unwrap      spin_speed=1800.0 (deg/s)
    unflip      (no parameters: quaternion tracks -> hemisphere continuity, Euler -> unwrap defaults)
    resample    hz=None (Hz; None = the clip's frame rate), method="slerp", spin_speed=1800.0 (deg/s),
                pose_error=0.0 (degrees a key may leave the interpolated pose for smoother Euler
                channels near gimbal lock; 0 = exact poses)
    reduce      max_error (degrees, geodesic)
    smooth      method="gaussian", sigma (seconds) | method="butterworth", cutoff (Hz), order=2
    despike     speed=None (deg/s; None = automatic)
    max_speed   speed (deg/s)
    limit       yaw=[-70, 70], pitch=[-60, 60] (degrees), smooth=0.0 (seconds),
                turnback=false, lerp_speed=5.0 (per second; only with turnback: the head-tracking
                article's per-frame turn back to neutral, at the clip's frame rate; smooth only without)
    to_order    order="zxy"
    to_kind     kind ("euler" | "quaternion")

:data:`OPS` is the registry: each :class:`OpSpec` lists :class:`ParamSpec` entries (name, kind,
default, unit, bounds, choices, doc, and ``when`` for parameters that only apply to one method) that
the GUI uses to build its widgets and that validation enforces. Validation is strict and every
message names the step: ``RecipeError("step 2 (smooth): unknown parameter 'sigmaa' (did you mean
'sigma'?)")``.

The runner imports the engine op modules lazily, so importing this module is cheap and tolerates
ops that are not installed (running such a step raises ``RecipeError("... op X is not available")``).
"""

from __future__ import annotations

import importlib
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .clip import Clip, RotationTrack

__all__ = [
    "RECIPE_VERSION",
    "REQUIRED",
    "ParamSpec",
    "OpSpec",
    "OPS",
    "Step",
    "Recipe",
    "RecipeError",
    "RecipeCancelled",
    "RecipeResult",
    "run_recipe",
    "write_options",
    "run_recipe_on_track",
]

RECIPE_VERSION = 1


class RecipeError(ValueError):
    """A recipe is invalid, or a step could not be applied. The message names the step."""


class RecipeCancelled(Exception):
    """``cancel()`` returned True while a recipe was running; nothing was returned."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: Default of a parameter that must be given.
REQUIRED: Any = _Required()

#: Parameter kinds: ``float`` (finite number), ``int``, ``choice`` (one of ``choices``),
#: ``float_or_none`` (a number or null), ``range`` (``[min, max]`` numbers, min <= max),
#: ``bool`` (JSON true / false).
PARAM_KINDS = ("float", "int", "choice", "float_or_none", "range", "bool")


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of an op.

    Attributes:
        name: key in the step's JSON object.
        kind: one of :data:`PARAM_KINDS`.
        default: value used when absent; :data:`REQUIRED` when it must be given.
        unit: display unit (``"deg"``, ``"deg/s"``, ``"s"``, ``"Hz"`` or ``""``).
        minimum, maximum: bounds (for ``range`` they apply to both ends); ``None`` = unbounded.
        exclusive_minimum: the minimum itself is not allowed (e.g. a speed must be > 0).
        choices: allowed values for ``choice``.
        doc: one-line help text.
        when: ``(other_param, value)``: the parameter only applies when ``other_param`` has that
            value (e.g. ``sigma`` only with ``method="gaussian"``); giving it otherwise is an error.
    """

    name: str
    kind: str
    default: Any = REQUIRED
    unit: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] | None = None
    doc: str = ""
    exclusive_minimum: bool = False
    when: tuple[str, Any] | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class OpSpec:
    """An op: its name, help text, parameters, and the engine function that applies it."""

    name: str
    doc: str
    params: tuple[ParamSpec, ...]
    module: str  # engine module (imported lazily)
    function: str

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


ORDERS = ("zxy", "xyz", "xzy", "yzx", "yxz", "zyx", "ZXY", "XYZ", "XZY", "YZX", "YXZ", "ZYX")
RESAMPLE_METHODS = ("slerp", "squad", "catmull-rom", "spline", "unity")

P = ParamSpec
_SPECS = (
    OpSpec(
        "unwrap",
        "Remove 360-degree wraps and Euler flips without changing any pose; keep deliberate spins.",
        (
            P(
                "spin_speed",
                "float",
                1800.0,
                "deg/s",
                minimum=0.0,
                exclusive_minimum=True,
                doc="steps slower than this are authored motion (spins) and are kept",
            ),
        ),
        "unwrap",
        "unwrap_track",
    ),
    OpSpec(
        "unflip",
        "Quaternion tracks: put every key on its predecessor's hemisphere. Euler tracks: unwrap.",
        (),
        "unwrap",
        "unwrap_track",
    ),
    OpSpec(
        "resample",
        "Re-key the track on a uniform grid, interpolating in rotation space.",
        (
            P(
                "hz",
                "float_or_none",
                None,
                "Hz",
                minimum=0.0,
                maximum=10000.0,
                exclusive_minimum=True,
                doc="keys per second (empty = the clip's frame rate)",
            ),
            P("method", "choice", "slerp", choices=RESAMPLE_METHODS, doc="interpolation between keys"),
            P(
                "spin_speed",
                "float",
                1800.0,
                "deg/s",
                minimum=0.0,
                exclusive_minimum=True,
                doc="key steps slower than this are deliberate spins and keep their winding; faster "
                "ones are wraps and go the short way (not for method unity)",
            ),
            P(
                "pose_error",
                "float",
                0.0,
                "deg",
                minimum=0.0,
                maximum=1.0,
                doc="Euler tracks near gimbal lock: pose error allowed per key for smoother channels "
                "(0 = every key exactly the interpolated pose); the report prints the figure",
            ),
        ),
        "resample",
        "resample_track",
    ),
    OpSpec(
        "reduce",
        "Remove keys while what Unity plays stays within the error bound of the source.",
        (
            P(
                "max_error",
                "float",
                REQUIRED,
                "deg",
                minimum=0.0,
                maximum=180.0,
                exclusive_minimum=True,
                doc="largest allowed geodesic error at any instant",
            ),
            P(
                "tip_error",
                "float_or_none",
                None,
                "mm",
                minimum=0.0,
                exclusive_minimum=True,
                doc="also keep every joint's world position (along the chain, tips included) within this "
                "distance, on clips with a skeleton (BVH: centimetres; .anim: metres)",
            ),
            P(
                "per_channel",
                "bool",
                False,
                doc="key the channels of Euler tracks (and the components of quaternion tracks) "
                "independently where that keeps fewer keys per channel (the .anim editor curves hold each "
                "channel's own keys; a track without editor curves keeps one key list), and refit near "
                "misses for the smallest largest error: the fewest keys, slower",
            ),
        ),
        "reduce",
        "reduce_track",
    ),
    OpSpec(
        "smooth",
        "Zero-phase low-pass filter in rotation space (never per Euler channel).",
        (
            P("method", "choice", "gaussian", choices=("gaussian", "butterworth"), doc="filter"),
            P(
                "sigma",
                "float",
                REQUIRED,
                "s",
                minimum=0.0,
                maximum=60.0,
                exclusive_minimum=True,
                doc="Gaussian standard deviation",
                when=("method", "gaussian"),
            ),
            P(
                "cutoff",
                "float",
                REQUIRED,
                "Hz",
                minimum=0.0,
                maximum=10000.0,
                exclusive_minimum=True,
                doc="Butterworth cutoff frequency",
                when=("method", "butterworth"),
            ),
            P(
                "order",
                "int",
                2,
                minimum=1,
                maximum=8,
                doc="Butterworth filter order",
                when=("method", "butterworth"),
            ),
        ),
        "smooth",
        "smooth_track",
    ),
    OpSpec(
        "despike",
        "Replace single-frame spikes by Slerp between the neighbouring good frames.",
        (
            P(
                "speed",
                "float_or_none",
                None,
                "deg/s",
                minimum=0.0,
                exclusive_minimum=True,
                doc="spike speed threshold (empty = automatic)",
            ),
        ),
        "despike",
        "despike_track",
    ),
    OpSpec(
        "max_speed",
        "Cap the angular speed like RotateTowards, keeping the direction of motion.",
        (
            P(
                "speed",
                "float",
                REQUIRED,
                "deg/s",
                minimum=0.0,
                exclusive_minimum=True,
                doc="largest angular speed",
            ),
        ),
        "speed_limit",
        "limit_speed",
    ),
    OpSpec(
        "limit",
        "Clamp local yaw (Y) and pitch (X) like a head look-at, with optional smoothing.",
        (
            P("yaw", "range", (-70.0, 70.0), "deg", minimum=-180.0, maximum=180.0, doc="allowed yaw range"),
            P(
                "pitch",
                "range",
                (-60.0, 60.0),
                "deg",
                minimum=-180.0,
                maximum=180.0,
                doc="allowed pitch range",
            ),
            P(
                "smooth",
                "float",
                0.0,
                "s",
                minimum=0.0,
                maximum=60.0,
                doc="exponential smoothing time",
                when=("turnback", False),
            ),
            P(
                "turnback",
                "bool",
                False,
                doc="turn back to neutral while the target is out of range (per frame, as the article)",
            ),
            P(
                "lerp_speed",
                "float",
                5.0,
                "1/s",
                minimum=0.0,
                maximum=1000.0,
                doc="per-frame lerp factor per second: angle = lerp(angle, target, dt * lerp_speed)",
                when=("turnback", True),
            ),
        ),
        "limits",
        "limit_look",
    ),
    OpSpec(
        "to_order",
        "Same poses in another rotation order (Euler tracks), then unwrapped.",
        (P("order", "choice", "zxy", choices=ORDERS, doc="rotation order (lower case = extrinsic)"),),
        "reorder",
        "convert_order",
    ),
    OpSpec(
        "to_kind",
        "Switch between Euler and quaternion keys, keeping the played motion and winding.",
        (P("kind", "choice", REQUIRED, choices=("euler", "quaternion"), doc="key kind"),),
        "reorder",
        "convert_kind",
    ),
)
del P

#: The op registry: name -> :class:`OpSpec`, in the order the GUI lists them.
OPS: dict[str, OpSpec] = {s.name: s for s in _SPECS}


# ------------------------------------------------------------------------------------------ validation


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _fmt(v: Any) -> str:
    return json.dumps(v) if isinstance(v, (str, type(None))) else repr(v)


def _check_bounds(spec: ParamSpec, v: float, fail: Callable[[str], None]) -> None:
    lo, hi = spec.minimum, spec.maximum
    unit = f" {spec.unit}" if spec.unit else ""
    if lo is not None and (v <= lo if spec.exclusive_minimum else v < lo):
        cmp = ">" if spec.exclusive_minimum else ">="
        fail(f"parameter '{spec.name}' must be {cmp} {lo:g}{unit}, got {v:g}")
    if hi is not None and v > hi:
        fail(f"parameter '{spec.name}' must be <= {hi:g}{unit}, got {v:g}")


def _coerce(spec: ParamSpec, v: Any, fail: Callable[[str], None]) -> Any:
    """The canonical value of parameter ``spec`` (floats as float, ranges as tuples), or ``fail``."""
    if spec.kind == "float_or_none" and v is None:
        return None
    if spec.kind in ("float", "float_or_none"):
        if not _is_number(v):
            fail(f"parameter '{spec.name}' must be a number, got {_fmt(v)}")
        v = float(v)
        if not math.isfinite(v):
            fail(f"parameter '{spec.name}' must be finite, got {v}")
        _check_bounds(spec, v, fail)
        return v
    if spec.kind == "int":
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if not _is_number(v) or not float(v).is_integer():
            fail(f"parameter '{spec.name}' must be an integer, got {_fmt(v)}")
        v = int(v)
        _check_bounds(spec, v, fail)
        return v
    if spec.kind == "choice":
        if v not in spec.choices or not isinstance(v, type(spec.choices[0])):
            fail(f"parameter '{spec.name}' must be one of {', '.join(map(str, spec.choices))}, got {_fmt(v)}")
        return v
    if spec.kind == "bool":
        if not isinstance(v, (bool, np.bool_)):
            fail(f"parameter '{spec.name}' must be true or false, got {_fmt(v)}")
        return bool(v)
    if spec.kind == "range":
        if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(_is_number(x) for x in v):
            fail(f"parameter '{spec.name}' must be [min, max] (two numbers), got {_fmt(v)}")
        lo, hi = float(v[0]), float(v[1])
        if not (math.isfinite(lo) and math.isfinite(hi)):
            fail(f"parameter '{spec.name}' must be finite, got [{lo}, {hi}]")
        if lo > hi:
            fail(f"parameter '{spec.name}': min {lo:g} is greater than max {hi:g}")
        _check_bounds(spec, lo, fail)
        _check_bounds(spec, hi, fail)
        return (lo, hi)
    raise AssertionError(f"unknown parameter kind {spec.kind!r}")


def _applies(spec: ParamSpec, params: Mapping[str, Any]) -> bool:
    return spec.when is None or params.get(spec.when[0]) == spec.when[1]


def _validate_step(number: int, raw: Any) -> Step:
    if not isinstance(raw, Mapping):
        raise RecipeError(f"step {number}: must be an object with an 'op', got {_fmt(raw)}")
    op = raw.get("op")
    if "op" not in raw:
        raise RecipeError(f"step {number}: missing 'op' (one of {', '.join(OPS)})")
    if not isinstance(op, str) or op not in OPS:
        import difflib  # only for an error hint (3-4 ms of every CLI start-up on top)

        hint = difflib.get_close_matches(str(op), OPS, n=1)
        extra = f" (did you mean '{hint[0]}'?)" if hint else f"; ops: {', '.join(OPS)}"
        raise RecipeError(f"step {number} ({op}): unknown op {_fmt(op)}{extra}")
    spec = OPS[op]

    def fail(msg: str) -> None:
        raise RecipeError(f"step {number} ({op}): {msg}")

    names = [p.name for p in spec.params]
    for key in raw:
        if key == "op":
            continue
        if key not in names:
            import difflib

            hint = difflib.get_close_matches(str(key), names, n=1)
            if hint:
                fail(f"unknown parameter '{key}' (did you mean '{hint[0]}'?)")
            fail(f"unknown parameter '{key}'" + (f"; parameters: {', '.join(names)}" if names else ""))

    params: dict[str, Any] = {}
    # Unconditional parameters first: conditional ones depend on them (sigma on method).
    for p in sorted(spec.params, key=lambda p: p.when is not None):
        if not _applies(p, params):
            if p.name in raw:
                fail(f"parameter '{p.name}' only applies when {p.when[0]} is {_fmt(p.when[1])}")
            continue
        if p.name in raw:
            params[p.name] = _coerce(p, raw[p.name], fail)
        elif p.required:
            unit = f" ({p.unit})" if p.unit else ""
            fail(f"missing parameter '{p.name}'{unit}")
        else:
            params[p.name] = p.default
    return Step(op, {n: params[n] for n in names if n in params})


@dataclass(frozen=True)
class Step:
    """One validated step: ``op`` and its complete parameters (defaults filled in)."""

    op: str
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def make(cls, op: str, **params: Any) -> Step:
        """A validated step (``RecipeError`` naming it as step 1 otherwise)."""
        return _validate_step(1, {"op": op, **params})

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op}
        for k, v in self.params.items():
            out[k] = list(v) if isinstance(v, tuple) else v
        return out


@dataclass(frozen=True)
class Recipe:
    """A validated, immutable recipe. Build with :meth:`from_dict`, :meth:`load` or :meth:`of`."""

    steps: tuple[Step, ...] = ()
    version: int = RECIPE_VERSION
    name: str = ""
    description: str = ""

    @classmethod
    def of(cls, *steps: Step | Mapping[str, Any], name: str = "", description: str = "") -> Recipe:
        """A recipe from steps or step dicts (validated)."""
        return cls.from_dict(
            {
                "version": RECIPE_VERSION,
                "name": name,
                "description": description,
                "steps": [s.to_dict() if isinstance(s, Step) else dict(s) for s in steps],
            }
        )

    @classmethod
    def from_dict(cls, d: Any) -> Recipe:
        """Validate a recipe object (as parsed from JSON). Raises :class:`RecipeError`."""
        if not isinstance(d, Mapping):
            raise RecipeError(f"recipe must be a JSON object, got {type(d).__name__}")
        unknown = [k for k in d if k not in ("version", "steps", "name", "description")]
        if unknown:
            raise RecipeError(f"recipe: unknown key '{unknown[0]}' (expected version, steps)")
        if "version" not in d:
            raise RecipeError(f"recipe: missing 'version' (this program reads version {RECIPE_VERSION})")
        version = d["version"]
        if not _is_number(version) or version != RECIPE_VERSION:
            raise RecipeError(
                f"recipe: unsupported version {_fmt(version)} (this program reads version {RECIPE_VERSION})"
            )
        if "steps" not in d:
            raise RecipeError("recipe: missing 'steps' (a list of {\"op\": ...} objects)")
        steps = d["steps"]
        if not isinstance(steps, list):
            raise RecipeError(f"recipe: 'steps' must be a list, got {type(steps).__name__}")
        for key in ("name", "description"):
            if not isinstance(d.get(key, ""), str):
                raise RecipeError(f"recipe: '{key}' must be a string")
        return cls(
            steps=tuple(_validate_step(i + 1, s) for i, s in enumerate(steps)),
            version=RECIPE_VERSION,
            name=d.get("name", ""),
            description=d.get("description", ""),
        )

    @classmethod
    def from_json(cls, text: str, source: str = "recipe") -> Recipe:
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise RecipeError(f"{source}:{e.lineno}: not valid JSON: {e.msg}") from None
        try:
            return cls.from_dict(d)
        except RecipeError as e:
            raise RecipeError(f"{source}: {e}") from None

    @classmethod
    def load(cls, path: str | os.PathLike) -> Recipe:
        """Read and validate a recipe file; errors name the file (``RecipeError``)."""
        p = os.fspath(path)
        try:
            text = Path(p).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise RecipeError(f"{p}: cannot read recipe: {getattr(e, 'strerror', None) or e}") from None
        return cls.from_json(text, source=p)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version}
        if self.name:
            out["name"] = self.name
        if self.description:
            out["description"] = self.description
        out["steps"] = [s.to_dict() for s in self.steps]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def save(self, path: str | os.PathLike) -> None:
        """Write the recipe as JSON, atomically (temp file in the same folder, then rename).

        An existing file keeps its permissions and a new one gets the umask's (not ``mkstemp``'s
        0600, which made saved recipes unreadable to anyone else), as ``io.atomic`` does; the engine
        may not import ``curveeditor.io``. Raises :class:`RecipeError` naming ``path`` on OS errors.
        """
        p = Path(path)
        tmp = None
        try:
            import tempfile

            fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(self.to_json())
                f.flush()
                os.fsync(f.fileno())
            if p.exists():
                os.chmod(tmp, p.stat().st_mode & 0o7777)
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, p)
            tmp = None
        except OSError as e:
            raise RecipeError(f"{p}: cannot write recipe: {e.strerror or e}") from None
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)

    def with_steps(self, steps: Iterable[Step]) -> Recipe:
        return replace(self, steps=tuple(steps))


# -------------------------------------------------------------------------------------------- runner


def _function(op: str) -> Callable:
    spec = OPS[op]
    try:
        module = importlib.import_module(f"curveeditor.engine.{spec.module}")
        return getattr(module, spec.function)
    except ImportError as e:
        raise RecipeError(f"op {op} is not available ({e})") from None
    except AttributeError:
        raise RecipeError(f"op {op} is not available (engine.{spec.module} has no {spec.function})") from None


def _apply(step: Step, track: RotationTrack, frame_rate: float) -> tuple[RotationTrack, str | None]:
    """Apply one step to one track; returns the new track and an optional detail for the change log."""
    new, detail, _extra = _apply_measured(step, track, frame_rate)
    return new, detail


def _apply_measured(step: Step, track: RotationTrack, frame_rate: float):
    """:func:`_apply` and what the step measured itself (``resample``: ``{"pose_error": deg}``, its
    keys against the interpolated rotations), or None: ``(track, detail, extra)``."""
    if step.op == "resample":
        from .resample import resample_track_measured

        p = step.params
        hz = p["hz"] if p["hz"] is not None else frame_rate
        new, pose = resample_track_measured(
            track, hz, p["method"], spin_speed=p["spin_speed"], pose_error=p["pose_error"]
        )
        return new, None, {"pose_error": pose}
    return (*_apply_plain(step, track, frame_rate), None)


def _apply_plain(step: Step, track: RotationTrack, frame_rate: float) -> tuple[RotationTrack, str | None]:
    fn = _function(step.op)
    p = step.params
    op = step.op
    if op == "unwrap":
        return fn(track, spin_speed=p["spin_speed"]), None
    if op == "unflip":
        return fn(track), None
    if op == "reduce":
        if p.get("tip_error") is not None:
            raise RecipeError("tip_error needs the whole clip (its skeleton): run the recipe on the clip")
        return fn(track, p["max_error"], channels=bool(p.get("per_channel"))), None
    if op == "smooth":
        if p["method"] == "gaussian":
            return fn(track, "gaussian", sigma_s=p["sigma"]), None
        return fn(track, "butterworth", cutoff_hz=p["cutoff"], order=p["order"]), None
    if op == "despike":
        new, changed = fn(track, speed_deg_s=p["speed"])
        changed = [int(i) for i in np.asarray(changed).reshape(-1)]
        detail = f"frames {', '.join(map(str, changed))} replaced" if changed else "no spikes"
        return new, detail
    if op == "max_speed":
        return fn(track, p["speed"]), None
    if op == "limit":
        if p["turnback"]:
            from .limits import limit_turnback

            return limit_turnback(
                track, frame_rate, yaw=p["yaw"], pitch=p["pitch"], lerp_speed=p["lerp_speed"]
            ), None
        return fn(track, yaw=tuple(p["yaw"]), pitch=tuple(p["pitch"]), smooth_s=p["smooth"]), None
    if op == "to_order":
        return fn(track, p["order"]), None
    if op == "to_kind":
        return fn(track, p["kind"]), None
    raise AssertionError(op)


def _describe(before: RotationTrack, after: RotationTrack) -> str:
    """What a step did to a track, in one short phrase."""
    if after is before:
        return "no change"
    parts = []
    if before.kind != after.kind:
        parts.append(f"{before.kind} -> {after.kind}")
    elif before.kind == "euler" and before.order != after.order:
        parts.append(f"order {before.order} -> {after.order}")
    nb, na = before.n_keys, after.n_keys
    if nb != na:
        parts.append(f"{nb} -> {na} keys")
    elif before.kind == after.kind and not parts:
        cb, ca = before.curve, after.curve
        moved = np.any(cb.value != ca.value, axis=1) | (cb.time != ca.time)
        if moved.any():
            parts.append(f"{int(moved.sum())} of {nb} keys changed")
        elif not cb.equals(ca):
            parts.append("tangents changed")
    return ", ".join(parts) if parts else "no change"


def _check(cancel: Callable[[], bool] | None) -> None:
    if cancel is not None and cancel():
        raise RecipeCancelled()


def _run_track(
    track: RotationTrack,
    recipe: Recipe,
    frame_rate: float,
    cancel: Callable[[], bool] | None = None,
) -> tuple[RotationTrack, list[str]]:
    tick = _Progress(None, 1, len(recipe.steps))
    done, logs, _figs = _run_tracks([track], recipe, frame_rate, cancel, tick)
    return done[0], logs[0]


def run_recipe_on_track(
    track: RotationTrack,
    recipe: Recipe,
    frame_rate: float,
    cancel: Callable[[], bool] | None = None,
) -> RotationTrack:
    """Apply every step of ``recipe`` to one rotation track (``frame_rate`` in Hz: the default
    ``resample`` rate). Tracks with fewer than 2 keys are returned unchanged."""
    return _run_track(track, recipe, frame_rate, cancel)[0]


@dataclass(frozen=True)
class RecipeResult:
    """The output clip, one :class:`~curveeditor.engine.diff.TrackDiff` per processed track (input
    vs output, geodesic degrees; tracks without keys have none), per processed track path the list
    of what each step did (``"step 2 (reduce): 300 -> 41 keys"``), and ``figures``: per processed
    track path, one :class:`~curveeditor.engine.step_figures.StepFigure` per step (what the step
    changed, measured against the track just before it, next to its tolerance: the intended change
    of a lossless step apart from the error of a lossy one; empty with ``figures=False``).
    ``reserve_deg``: the degrees each ``reduce`` step kept free inside its tolerance for the writer."""

    clip: Clip
    diffs: list = field(default_factory=list)
    changes: dict[str, list[str]] = field(default_factory=dict)
    figures: dict[str, list] = field(default_factory=dict)
    reserve_deg: float = 0.0

    def step_lines(self) -> list[str]:
        """One summary line per step over every processed track (``step_figures.step_summary``)."""
        from .step_figures import step_summary

        per_step: dict[int, list] = {}
        for figs in self.figures.values():
            for f in figs:
                per_step.setdefault(f.number, []).append(f)
        return [step_summary(per_step[k]) for k in sorted(per_step)]


def run_recipe(
    clip: Clip,
    recipe: Recipe,
    paths: Sequence[str] | None = None,
    cancel: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
    diffs: bool = True,
    figures: bool = True,
    reserve_deg: float = 0.0,
    step_progress: Callable[[str, float], None] | None = None,
    map_chunks: Callable | None = None,
) -> RecipeResult:
    """Apply ``recipe`` to the rotation tracks named in ``paths`` (all when ``None``), in clip order.

    Other tracks and read-only tracks are untouched. ``cancel`` (returns True to stop) is checked
    before every step of every track and before each diff; it raises :class:`RecipeCancelled`.
    ``progress(done, total)`` is called after each processed track (for progress bars);
    ``step_progress(op, fraction)`` at the start of every step and as it goes, with the fraction of
    that step done over all tracks (the CLI's progress line names the step running).
    ``diffs=False`` leaves :attr:`RecipeResult.diffs` empty: the CLI and batch print the written
    file's figures (``io.verify``), so the in-memory diff was computed and thrown away (0.1-0.3 s of
    ``clean X.bvh --unwrap`` on the 165-joint CMU clip).
    ``figures`` computes :attr:`RecipeResult.figures` (``step_figures``: each step against the track
    just before it). ``reserve_deg`` (degrees, from the writer: ``io.verify.write_margin``): what
    the file format may still move a pose (float32 values, a writer's conversion); every ``reduce``
    step reduces to ``max_error - reserve_deg`` (at least half its ``max_error``) so that the file
    written and read back keeps the ``max_error`` asked for; its figure is still held against the
    ``max_error`` asked for. ``map_chunks``: how ``reduce`` runs its independent chunks of work
    (``reduce.reduce_tracks(map_chunks=)``; the CLI passes ``io.beside.fork_map``), and the step
    figures theirs (``step_figures.step_figures(map_chunks=)``).
    Raises :class:`RecipeError` for unknown paths, unavailable ops and ops that fail (the message
    names the step and the track).
    """
    if not isinstance(recipe, Recipe):
        raise RecipeError(f"run_recipe needs a Recipe, got {type(recipe).__name__}")
    available = [t.path for t in clip.tracks]
    if paths is None:
        selected = set(available)
    else:
        selected = set(paths)
        missing = [p for p in paths if p not in available]
        if missing:
            raise RecipeError(f"no rotation track {missing[0]!r} in clip {clip.name!r}")
    for step in recipe.steps:  # fail before any work when an op is missing
        _function(step.op)
    _check_resample_budget(clip, recipe, selected)
    diff_tracks = _diff_function() if selected and diffs else None

    work = [t for t in clip.tracks if t.path in selected]
    tick = _Progress(progress, len(work), len(recipe.steps) + 1, step_progress)
    done, logs, figs = _run_tracks(
        work,
        recipe,
        clip.frame_rate,
        cancel,
        tick,
        tip_bounds(clip, recipe, selected),
        figures=figures,
        reserve_deg=float(reserve_deg),
        map_chunks=map_chunks,
    )
    found = []
    for before, after in zip(work, done, strict=True):
        _check(cancel)
        if diff_tracks is not None and before.n_keys and after.n_keys:
            found.append(diff_tracks(before, after))
        tick(1)
    by_path = {t.path: t for t in done}
    new_tracks = [by_path.get(t.path, t) for t in clip.tracks]
    changes = {t.path: log for t, log in zip(work, logs, strict=True)}
    figure_map = {t.path: f for t, f in zip(work, figs, strict=True)} if figures else {}
    return RecipeResult(clip.with_tracks(new_tracks), found, changes, figure_map, float(reserve_deg))


class _Progress:
    """``progress(done, total)`` in whole tracks for a run of ``units_per_track`` units per track
    (each step, then the diff), called only when the whole-track count changes."""

    def __init__(self, progress, total: int, units_per_track: int, step_progress=None):
        self.progress, self.total = progress, total
        self.units, self.all = 0, max(1, total * units_per_track)
        self.shown = 0
        self.step_progress, self.op, self.op_start = step_progress, "", 0

    def start_step(self, op: str) -> None:
        self.op, self.op_start = op, self.units
        self(0)

    def __call__(self, units: int) -> None:
        self.units += units
        if self.step_progress is not None and self.op:
            self.step_progress(self.op, min(1.0, (self.units - self.op_start) / max(1, self.total)))
        done = self.units * self.total // self.all
        if self.progress is not None and done != self.shown:
            self.shown = done
            self.progress(done, self.total)


def tip_bounds(clip: Clip, recipe: Recipe, selected: set[str] | None = None) -> dict[int, dict[str, float]]:
    """For each ``reduce`` step (by index) with a ``tip_error``: path -> angle bound (degrees) per
    rotated joint that keeps every joint and tip within ``tip_error`` mm (:mod:`.tip_error`). Raises
    :class:`RecipeError` when the clip has no skeleton."""
    out: dict[int, dict[str, float]] = {}
    for k, step in enumerate(recipe.steps):
        if step.op != "reduce" or step.params.get("tip_error") is None:
            continue
        from .skeleton import skeleton_from_clip
        from .tip_error import joint_bounds, length_unit_mm

        skeleton, why = skeleton_from_clip(clip)
        if skeleton is None:
            raise RecipeError(f"step {k + 1} (reduce): tip_error needs a skeleton ({why})")
        rotated = {t.path for t in clip.tracks} if selected is None else set(selected)
        tip = float(step.params["tip_error"]) / length_unit_mm(clip, skeleton)
        out[k] = joint_bounds(skeleton, clip, tip, rotated)
    return out


def _run_tracks(
    tracks: list[RotationTrack],
    recipe: Recipe,
    frame_rate: float,
    cancel,
    tick,
    tips: dict[int, dict[str, float]] | None = None,
    figures: bool = False,
    reserve_deg: float = 0.0,
    map_chunks=None,
) -> tuple[list[RotationTrack], list[list[str]], list[list]]:
    """Every step of ``recipe`` on every track, step after step (the same tracks and logs as
    :func:`_run_track` per track): a ``reduce`` step then reduces all the tracks together
    (``reduce.reduce_tracks``: one lockstep fit for every track, 4.6x faster than one track at a time
    on a 31-joint x 2,752-frame clip). ``tick(units)`` counts finished (track, step) pairs.
    ``tips``: per reduce step index, the per-joint angle bounds of its ``tip_error``
    (:func:`tip_bounds`); each track is held to the smaller of that and ``max_error``.
    With ``figures``, each step's :class:`~.step_figures.StepFigure` per track (tracks under 2 keys
    get none); ``reserve_deg`` as for :func:`run_recipe`."""
    cur = list(tracks)
    logs: list[list[str]] = [[] for _ in tracks]
    figs: list[list] = [[] for _ in tracks]
    live = [i for i, t in enumerate(tracks) if t.n_keys >= 2]
    for i, t in enumerate(tracks):
        if t.n_keys < 2:
            logs[i].append(f"skipped: {t.n_keys} key{'s' if t.n_keys != 1 else ''}")
            tick(len(recipe.steps))
    for number, step in enumerate(recipe.steps, start=1):
        label = f"step {number} ({step.op})"
        run = _reserved(step, reserve_deg)
        tick.start_step(step.op)
        results = None
        if step.op == "reduce":
            tip = (tips or {}).get(number - 1)
            results = _reduce_together(
                run, label, [cur[i] for i in live], frame_rate, cancel, tick, tip, map_chunks
            )
        elif step.op == "unwrap" and cancel is None:
            results = _unwrap_together(step, [cur[i] for i in live], tick)
        if results is None:
            results = []
            for i in live:
                results.append(_apply_named(run, label, cur[i], frame_rate, cancel))
                tick(1)
        if figures and live:
            from .step_figures import step_figures

            _check(cancel)
            found = step_figures(
                step.op,
                number,
                step.params,
                [cur[i] for i in live],
                [r[0] for r in results],
                extras=[r[2] for r in results],
                details=[r[1] for r in results],
                map_chunks=map_chunks,
            )
            for i, f in zip(live, found, strict=True):
                figs[i].append(f)
        for i, (new, detail, _extra) in zip(live, results, strict=True):
            logs[i].append(f"{label}: {detail or _describe(cur[i], new)}")
            cur[i] = new
    return cur, logs, figs


def _reserved(step: Step, reserve_deg: float) -> Step:
    """``step`` as run: a ``reduce`` with ``reserve_deg`` taken out of its ``max_error`` (never below
    half of it), so the format's own error fits inside the bound asked for."""
    if step.op != "reduce" or reserve_deg <= 0.0:
        return step
    bound = float(step.params["max_error"])
    return Step("reduce", dict(step.params, max_error=max(bound - reserve_deg, 0.5 * bound)))


#: With a ``cancel`` callback (the editor's runs), ``reduce`` runs its lockstep fit over groups of
#: tracks of about this many keys, so progress and Cancel come every group: one call over 40 noisy
#: tracks x 3,000 keys gave the recipe panel no progress and no cancel for 12-17 s (about 0.45 s per
#: track). Groups of 5-6 mocap tracks cost ~25% more than one call on 31 x 2,752 (8 tracks: 1.70 s,
#: 31: 1.30 s), so headless runs (no cancel) keep one call. Same tracks either way: each track's
#: reduction is its own.
REDUCE_GROUP_KEYS = 16_000


def _reduce_together(
    step: Step,
    label: str,
    tracks: list[RotationTrack],
    frame_rate: float,
    cancel,
    tick,
    tip=None,
    map_chunks=None,
):
    """``reduce`` of ``tracks`` in lockstep runs (one, or groups of :data:`REDUCE_GROUP_KEYS` when
    ``cancel`` is given), ticking each finished group; None to run them one by one (one track, or an
    error: the per-track run then names the track that fails). ``tip``: path -> angle bound from the
    step's ``tip_error`` (the tighter of it and ``max_error`` holds)."""
    from .reduce import reduce_tracks

    if tip is not None:
        _check(cancel)
        top = float(step.params["max_error"])
        bounds = [min(top, tip.get(t.path, top)) for t in tracks]
        try:
            news = reduce_tracks(tracks, bounds, *_channels_arg(step), map_chunks=map_chunks)
        except Exception as e:
            raise RecipeError(f"{label}: {e}") from e
        tick(len(tracks))
        return [(n, None, None) for n in news]
    if len(tracks) < 2:
        return None

    groups = [tracks]
    if cancel is not None:
        groups, size = [[]], 0
        for t in tracks:
            if groups[-1] and size + t.n_keys > REDUCE_GROUP_KEYS:
                groups.append([])
                size = 0
            groups[-1].append(t)
            size += t.n_keys
    out = []
    for group in groups:
        _check(cancel)
        try:
            news = (
                reduce_tracks(group, step.params["max_error"], *_channels_arg(step), map_chunks=map_chunks)
                if len(group) > 1
                else None
            )
        except Exception:
            news = None
        if news is None:  # one track, or an error the per-track run names
            news = [_apply_named(step, label, t, frame_rate, cancel)[0] for t in group]
        out += [(n, None, None) for n in news]
        tick(len(group))
    return out


def _channels_arg(step: Step) -> tuple:
    """``reduce_tracks``' optional ``channels`` argument of a reduce step (none when shared keys)."""
    return (True,) if step.params.get("per_channel") else ()


def _unwrap_together(step: Step, tracks: list[RotationTrack], tick):
    """``unwrap`` of ``tracks`` in one pass per rotation order (``unwrap.unwrap_tracks``: the same
    tracks as one call each; 165 per-track calls were 40% of ``clean X.bvh --unwrap``'s engine time
    on a 165-joint clip), for headless runs (no ``cancel``: the editor keeps per-track progress);
    None to run them one by one (an error: the per-track run then names the track)."""
    if len(tracks) < 2:
        return None
    from .unwrap import unwrap_tracks

    try:
        news = unwrap_tracks(tracks, spin_speed=step.params["spin_speed"])
    except Exception:
        return None
    tick(len(tracks))
    return [(n, None, None) for n in news]


def _apply_named(step: Step, label: str, track: RotationTrack, frame_rate: float, cancel):
    """:func:`_apply_measured` (``(track, detail, extra)``), its errors naming the step and the track."""
    _check(cancel)
    try:
        new, detail, extra = _apply_measured(step, track, frame_rate)
    except (RecipeError, RecipeCancelled):
        raise
    except Exception as e:  # name the step and track; keep the engine's reason
        raise RecipeError(f"{label} on track '{track.path}': {e}") from e
    if not isinstance(new, RotationTrack):
        raise RecipeError(f"{label} on track '{track.path}': op returned {type(new).__name__}")
    return new, detail, extra


#: Most keys (all processed tracks together) one resample step may create: each key costs about
#: 200 bytes across a curve's arrays, so this keeps a step under about 1 GB. A CSV with a key at
#: 1e5 s resampled at 60 Hz asked for 6 million keys per track and ended in numpy's MemoryError.
MAX_RESAMPLE_KEYS = 4_000_000


def _check_resample_budget(clip: Clip, recipe: Recipe, selected: set[str]) -> None:
    """Refuse, before any work, a resample step whose output would exceed :data:`MAX_RESAMPLE_KEYS`."""
    tracks = [t for t in clip.tracks if t.path in selected and t.n_keys >= 2]
    if not tracks:
        return
    span = sum(float(t.curve.end - t.curve.start) for t in tracks)
    for number, step in enumerate(recipe.steps, 1):
        if step.op != "resample":
            continue
        hz = step.params["hz"] if step.params["hz"] is not None else clip.frame_rate
        keys = span * float(hz) + 2 * len(tracks)
        if keys > MAX_RESAMPLE_KEYS:
            raise RecipeError(
                f"step {number} (resample): {hz:g} Hz over {span:.6g} s of {len(tracks)} track(s) gives "
                f"{keys:.3g} keys (at most {MAX_RESAMPLE_KEYS:,})"
            )


def _diff_function() -> Callable:
    try:
        from .diff import diff_tracks
    except ImportError as e:
        raise RecipeError(f"diff is not available ({e})") from None
    return diff_tracks


def write_options(
    recipe, output: str, paths=None, result: RecipeResult | None = None, editor_curves: bool = True
) -> dict:
    """Writer options a recipe implies for ``output``: an unwrap (or unflip) also rewrites the Euler
    display curves of a ``.anim`` (``m_EulerEditorCurves``, what Unity's Animation window shows) of
    the tracks it changed, so the editor stops showing the old wraps. With ``result`` (the run's
    :class:`RecipeResult` with figures) only the tracks an unwrap or unflip step changed: a track it
    left as it was keeps its display curves byte for byte (issue 20: 16 "display curves made
    continuous" warnings on a clip with no wrap to remove); without it, the tracks it ran on
    (``paths``; None = all). ``editor_curves=False`` (a ``.anim`` of only the curves Unity plays)
    is handed on as the writer's option."""
    anim = str(output).lower().endswith(".anim")
    opts = {} if editor_curves or not anim else {"editor_curves": False}
    if not (anim and editor_curves and any(s.op in ("unwrap", "unflip") for s in recipe.steps)):
        return opts
    if result is not None and result.figures:
        changed = {
            p for p, figs in result.figures.items() if any(f.changed and f.role == "lossless" for f in figs)
        }
        return {"refresh_display": changed} if changed else {}
    return {"refresh_display": True if paths is None else set(paths)}
