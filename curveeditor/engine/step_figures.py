"""What each recipe step did to each track, in degrees: the intended change apart from the error.

A recipe mixes two kinds of change (issue 20). The *lossless* steps (``unwrap``, ``unflip``) change
the motion between keys on purpose (the 358 deg spin Unity played across a wrap jump is gone) while
every keyed pose stays as it was: their figures say what was removed (wrap jumps, Euler flips,
hemisphere flips: how many, where, the largest change of the played motion) and how far the poses
at the keys moved (0.000 deg). The *bounded* steps promise a tolerance: ``reduce``'s ``max_error``
(the played motion everywhere), ``resample``'s ``pose_error`` (the keys it writes against the poses
its interpolation gives there), the conversions ``to_order``/``to_kind`` (the same motion within the
conversion tolerance); each is measured against the track as it was just before the step, next to
its tolerance, with a pass/fail. The other steps (``smooth``, ``despike``, ``max_speed``, ``limit``)
change the motion on purpose and have no angle tolerance: their figure is how much they changed it.

:func:`step_figures` computes one :class:`StepFigure` per track for one step; ``recipe.run_recipe``
calls it after every step and returns them (``RecipeResult.figures``). The CLI table, ``clean``'s
JSON, ``batch``'s report and the editor's recipe panel and Diff dock all show these records (the
views only format them: :meth:`StepFigure.cell`, :meth:`StepFigure.text`, :func:`step_summary`).

Figures (geodesic degrees, times in seconds):

* lossless steps: ``max_error`` is ``diff.diff_tracks``'s certified maximum (only the key intervals
  the step changed are compared, so it costs little); ``key_error`` at the track's keys.
* every other step: ``max_error`` is read at every key of both versions and :data:`READ_POINTS`
  points inside each interval between them (cheap: ~0.1 s for 31 tracks x 2,752 keys, where pinning
  a reduction's maximum to 1e-6 deg took 1.4 s, a quarter of the whole ``clean``). A ``reduce``
  step's bound is proven by the reduction itself (``reduce``: every kept segment certified with the
  diff's per-interval bound); the reading is the figure shown against it.

``notes`` explain large figures: at the worst instant, what Unity played between the two keys of the
track before the step (a spin across a wrap jump, a long-way swing, a pop) against the poses there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .clip import RotationTrack, key_quaternions, played
from .curves import _segment_index
from .resample import EXACT_POSE_DEG
from .rotations import geodesic_angle

__all__ = [
    "StepFigure",
    "step_figures",
    "step_label",
    "step_summary",
    "LOSSLESS_OPS",
    "CONVERSION_OPS",
    "BOUNDED_OPS",
    "EXACT_POSE_DEG",
    "READ_POINTS",
    "NOTE_MIN_DEG",
]

#: Steps that keep every keyed pose and change the motion between keys on purpose.
LOSSLESS_OPS = ("unwrap", "unflip")
#: Steps that keep the motion within the engine's conversion tolerance.
CONVERSION_OPS = ("to_order", "to_kind")
#: Steps with an angle tolerance the user asked for.
BOUNDED_OPS = ("reduce", "resample")
#: Points read inside each interval between the union of both versions' key times.
READ_POINTS = 3
#: Changes of the played motion above this many degrees get an explaining note.
NOTE_MIN_DEG = 1.0
#: Samples per key interval for the played path length in a note.
_PATH_SAMPLES = 48


@dataclass(frozen=True)
class StepFigure:
    """What step ``number`` (``op``) did to track ``path``, measured against the track just before it.

    Attributes:
        number, op, label: the step (``label`` e.g. ``"reduce 2 deg"``).
        path: the track.
        role: ``"lossless"`` (unwrap, unflip), ``"conversion"`` (to_order, to_kind), ``"bounded"``
            (reduce, resample) or ``"change"`` (smooth, despike, max_speed, limit: on purpose).
        changed: the step changed the track.
        keys_before, keys_after: key counts.
        max_error: largest geodesic change of the played motion (degrees; see the module docstring
            for how it is measured), at ``worst_time`` (seconds).
        certified: ``max_error`` is a certified maximum (else a reading at keys and between).
        key_error: largest change of the pose at the track's keys before the step (degrees).
        tolerance: the angle tolerance the step promises (degrees), or None; ``tolerance_of`` says
            what it bounds (``"played motion"``, ``"poses at the keys"``, ``"poses at the samples"``).
        measured: the figure held against ``tolerance`` (degrees; None without a tolerance).
        passed: ``measured <= tolerance`` (None without a tolerance).
        removed: lossless steps: ``{"wrap": n, "flip": n, "hemisphere": n}`` steps removed.
        removed_times: the times (seconds) of the key steps removed (the key each lands on).
        notes: sentences explaining the largest change (where, what Unity played there).
        detail: the step's own words (``"frames 12, 13 replaced"``), or ``""``.
    """

    number: int
    op: str
    label: str
    path: str
    role: str
    changed: bool
    keys_before: int
    keys_after: int
    max_error: float = 0.0
    worst_time: float = 0.0
    certified: bool = False
    key_error: float = 0.0
    tolerance: float | None = None
    tolerance_of: str = ""
    measured: float | None = None
    passed: bool | None = None
    removed: dict = field(default_factory=dict)
    removed_times: tuple[float, ...] = ()
    notes: tuple[str, ...] = ()
    detail: str = ""

    @property
    def verdict(self) -> str:
        """``"ok"``, ``"FAIL"``, ``"intended"`` (a lossless or on-purpose change), ``"no change"``."""
        if self.passed is False:
            return "FAIL"
        if not self.changed:
            return "no change"
        if self.role in ("lossless", "change"):
            return "intended"
        return "ok"

    @property
    def n_removed(self) -> int:
        return int(sum(self.removed.values()))

    def cell(self) -> str:
        """A short table cell: ``"4 wraps"``, ``"1.93 ok"``, ``"3.21 intended"``, ``"-"``."""
        if not self.changed:
            return "-"
        if self.role == "lossless":
            parts = [_count(n, _KIND_WORDS[k]) for k, n in self.removed.items() if n]
            moved = "" if self.key_error <= EXACT_POSE_DEG else f" keys {self.key_error:.3f}!"
            return (", ".join(parts) or "tangents") + moved
        if self.op == "resample":  # the shape between keys changes on purpose; the poses are held
            return f"{self.max_error:.2f}, poses {self.verdict}"
        if self.tolerance is not None:
            return f"{self.measured:.3f} {self.verdict}"
        return f"{self.max_error:.2f}"

    def text(self) -> str:
        """One sentence: ``"reduce 2 deg: max 1.93 deg (ok)"``, ``"unwrap: 4 wrap jumps removed at 0.500,
        1.500 s (intended), largest change 180.0 deg; poses at keys moved 0.000 deg"``."""
        name = self.path or "(root)"
        if not self.changed:
            return f"{name}: {self.label}: no change"
        if self.role == "lossless":
            what = ", ".join(_count(n, _KIND_LONG[k]) for k, n in self.removed.items() if n)
            where = _times(self.removed_times)
            head = f"{what} removed{where} (intended)" if what else "tangents recomputed (intended)"
            return (
                f"{name}: {self.label}: {head}, largest change of the played motion {self.max_error:.1f} deg "
                f"at {self.worst_time:.3f} s; poses at keys moved {self.key_error:.3f} deg"
                f"{'' if self.passed else ' (FAIL: a lossless step must keep them)'}"
            )
        if self.role == "change":
            return (
                f"{name}: {self.label}: changed the played motion by up to {self.max_error:.2f} deg at "
                f"{self.worst_time:.3f} s (on purpose{': ' + self.detail if self.detail else ''})"
            )
        held = (
            f"{self.tolerance_of} max {self.measured:.4g} deg (tolerance {self.tolerance:g} deg: "
            f"{self.verdict})"
        )
        if self.op == "resample":
            return (
                f"{name}: {self.label}: {held}; the played motion changed by up to {self.max_error:.2f} deg "
                f"at {self.worst_time:.3f} s (the method's interpolation replaces the source's)"
            )
        return f"{name}: {self.label}: {held}"

    def as_dict(self) -> dict:
        """JSON-ready (``clean --json``/``--report``, ``batch`` reports)."""
        return {
            "step": self.number,
            "op": self.op,
            "label": self.label,
            "role": self.role,
            "changed": self.changed,
            "verdict": self.verdict,
            "keys_before": self.keys_before,
            "keys_after": self.keys_after,
            "max_error": self.max_error,
            "worst_time": self.worst_time,
            "certified": self.certified,
            "key_error": self.key_error,
            "tolerance": self.tolerance,
            "tolerance_of": self.tolerance_of or None,
            "measured": self.measured,
            "passed": self.passed,
            "removed": dict(self.removed),
            "removed_times": list(self.removed_times),
            "notes": list(self.notes),
            "detail": self.detail,
        }


_KIND_WORDS = {"wrap": "wrap", "flip": "flip", "hemisphere": "hemi flip"}
_KIND_LONG = {"wrap": "wrap jump", "flip": "Euler flip", "hemisphere": "hemisphere flip"}


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _times(times, most: int = 6) -> str:
    if not times:
        return ""
    shown = ", ".join(f"{t:.3f}" for t in times[:most])
    more = f" and {len(times) - most} more" if len(times) > most else ""
    return f" at {shown}{more} s"


def _num(v: float) -> str:
    return f"{v:g}"


def step_label(op: str, params: dict) -> str:
    """A step in a few words with its parameters and units: ``"reduce 2 deg"``,
    ``"resample 60 Hz slerp"``, ``"smooth gaussian 0.05 s"``."""
    p = params
    if op == "reduce":
        return f"reduce {_num(p['max_error'])} deg"
    if op == "resample":
        hz = "clip rate" if p.get("hz") is None else f"{_num(p['hz'])} Hz"
        extra = f", pose_error {_num(p['pose_error'])} deg" if p.get("pose_error") else ""
        return f"resample {hz} {p.get('method', 'slerp')}{extra}"
    if op == "smooth":
        if p.get("method") == "butterworth":
            return f"smooth butterworth {_num(p['cutoff'])} Hz"
        return f"smooth gaussian {_num(p['sigma'])} s"
    if op == "despike":
        return "despike" + (f" {_num(p['speed'])} deg/s" if p.get("speed") is not None else "")
    if op == "max_speed":
        return f"max_speed {_num(p['speed'])} deg/s"
    if op == "limit":
        (y0, y1), (p0, p1) = p["yaw"], p["pitch"]
        return f"limit yaw {_num(y0)}..{_num(y1)} pitch {_num(p0)}..{_num(p1)} deg"
    if op == "to_order":
        return f"to_order {p['order']}"
    if op == "to_kind":
        return f"to_kind {p['kind']}"
    return op


def _role(op: str) -> str:
    if op in LOSSLESS_OPS:
        return "lossless"
    if op in CONVERSION_OPS:
        return "conversion"
    if op in BOUNDED_OPS:
        return "bounded"
    return "change"


def _same(before: RotationTrack, after: RotationTrack) -> bool:
    return after is before or (
        after.kind == before.kind and after.order == before.order and after.curve.equals(before.curve)
    )


def _reading(before: RotationTrack, after: RotationTrack) -> tuple[float, float]:
    """``(max error, time)``: the geodesic error (degrees) at every key of both versions and
    :data:`READ_POINTS` points inside each interval between them."""
    keys = np.union1d(before.times, after.times)
    if keys.size > 1:
        u = np.arange(1, READ_POINTS + 1) / (READ_POINTS + 1)
        inner = (keys[:-1, None] + np.diff(keys)[:, None] * u[None, :]).ravel()
        t = np.concatenate([keys, inner])
    else:
        t = keys
    err = geodesic_angle(played(before, t), played(after, t))
    i = int(np.argmax(err))
    return float(err[i]), float(t[i])


def _key_error(before: RotationTrack, after: RotationTrack) -> float:
    """Largest geodesic change (degrees) of the pose at ``before``'s key times."""
    if before.n_keys == 0:
        return 0.0
    want = key_quaternions(before)
    got = key_quaternions(after) if np.array_equal(after.times, before.times) else played(after, before.times)
    return float(geodesic_angle(want, got).max())


def _path_length(track: RotationTrack, t0: float, t1: float) -> float:
    """Degrees Unity's played rotation travels over ``[t0, t1]`` (a sum of geodesic steps)."""
    t = np.linspace(t0, t1, _PATH_SAMPLES + 1)
    q = played(track, t)
    return float(geodesic_angle(q[:-1], q[1:]).sum())


def explain(before: RotationTrack, after: RotationTrack, t: float) -> str:
    """Why the played motion changed at ``t`` (seconds): between the two keys of ``before`` around
    ``t``, how far apart their poses are and what Unity played there before and after the step, and
    the reason that fits: a spin or long-way swing removed, a pop (the poses do not say what plays
    between them), a longer way taken, keys further apart than the source's (detail not kept), or
    another curve through the same poses (a method's interpolation instead of the source's)."""
    from .analysis import pop_mask

    times = before.times
    if before.n_keys < 2:
        return f"at {t:.3f} s"
    k = int(np.clip(_segment_index(times, np.array([t]))[0], 0, before.n_keys - 2))
    t0, t1 = float(times[k]), float(times[k + 1])
    kq = key_quaternions(before)
    apart = float(geodesic_angle(kq[k : k + 1], kq[k + 1 : k + 2])[0])
    dt = t1 - t0
    rate = apart / dt if dt > 0 else float("inf")
    was = _path_length(before, t0, t1)
    now = _path_length(after, t0, t1)
    text = (
        f"at {t:.3f} s: between the keys at {t0:.3f} and {t1:.3f} s ({apart:.1f} deg apart, "
        f"{rate:,.0f} deg/s the short way) Unity played {was:.1f} deg before this step, {now:.1f} deg after"
    )
    if bool(pop_mask(times, kq)[k]):
        return text + (
            "; a pop (inspect): a step far faster than the rest of the track that does not come back, "
            "so the poses do not say what plays between those keys"
        )
    if was > apart + 1.0 and was - now > 1.0:
        return text + " (a spin or long-way swing the keys do not need: removed)"
    if now > apart + 1.0 and now - was > 1.0:
        return text + " (the step plays a longer way between these keys)"
    if after.n_keys >= 2:
        ka = int(np.clip(_segment_index(after.times, np.array([t]))[0], 0, after.n_keys - 2))
        gap = float(after.times[ka + 1] - after.times[ka])
        if gap > 1.5 * dt:
            return text + (
                f" (its keys there are {gap:.4g} s apart where the source's are {dt:.4g} s: the motion "
                "between them is not kept)"
            )
    return text + (
        " (another curve through the same poses: the source's interpolation between these keys, channel "
        "by channel for Euler keys, differs from the step's)"
    )


def step_figures(
    op: str,
    number: int,
    params: dict,
    befores: list[RotationTrack],
    afters: list[RotationTrack],
    extras: list[dict | None] | None = None,
    details: list[str | None] | None = None,
    map_chunks=None,
) -> list[StepFigure]:
    """One :class:`StepFigure` per track for step ``number`` (``op`` with validated ``params``),
    from each track before the step to after it (``befores[i]`` -> ``afters[i]``, same paths).

    ``extras[i]``: what the step measured itself (``resample``: ``{"pose_error": deg}``, the largest
    error of its keys against its interpolation); ``details[i]``: its own words for the change log.
    Lossless steps' removed wraps and flips come from one joined analysis pass over all the tracks
    (``analysis``'s per-kind batching), before and after.

    ``map_chunks(fn, items)``, as for ``reduce.reduce_tracks``: the tracks' figures are independent,
    so from :data:`SPREAD_MIN_KEYS` keys they are computed in chunks through it (the CLI's ``clean``
    on both cores: a 10-minute 120 fps take's ``reduce`` figures took 3 s on one)."""
    n = len(befores)
    extras = extras or [None] * n
    details = details or [None] * n
    label = step_label(op, params)
    role = _role(op)
    changed = [not _same(b, a) for b, a in zip(befores, afters, strict=True)]
    removed = _removed(befores, afters, changed) if role == "lossless" else [({}, ())] * n

    def figures(indices) -> list[StepFigure]:
        out = []
        for i in indices:
            b, a = befores[i], afters[i]
            base = dict(
                number=number,
                op=op,
                label=label,
                path=b.path,
                role=role,
                changed=changed[i],
                keys_before=b.n_keys,
                keys_after=a.n_keys,
                detail=details[i] or "",
            )
            if not changed[i] or b.n_keys == 0 or a.n_keys == 0:
                out.append(_figure_unchanged(base, role, op, params))
            else:
                out.append(_figure(base, b, a, role, op, params, extras[i] or {}, removed[i]))
        return out

    keys = [b.n_keys + a.n_keys for b, a in zip(befores, afters, strict=True)]
    if map_chunks is None or sum(keys) < SPREAD_MIN_KEYS or n < 2:
        return figures(range(n))
    return [f for part in map_chunks(figures, _balanced(keys, SPREAD_CHUNKS)) for f in part]


#: Keys (before and after, all tracks) from which :func:`step_figures` spreads its work over
#: ``map_chunks``; below, a forked child costs more than it saves.
SPREAD_MIN_KEYS = 200_000
#: Chunks of tracks :func:`step_figures` hands to ``map_chunks`` (the two cores take every other one).
SPREAD_CHUNKS = 8


def _balanced(keys: list[int], parts: int) -> list[list[int]]:
    """Track indices in up to ``parts`` consecutive runs of about equal key counts (order kept)."""
    total = max(sum(keys), 1)
    out: list[list[int]] = [[]]
    acc = 0
    for i, k in enumerate(keys):
        if out[-1] and acc >= total * len(out) / parts:
            out.append([])
        out[-1].append(i)
        acc += k
    return out


def _tolerance(op: str, params: dict) -> tuple[float | None, str]:
    if op == "reduce":
        return float(params["max_error"]), "played motion"
    if op == "resample":
        return max(float(params.get("pose_error") or 0.0), EXACT_POSE_DEG), "poses at the samples"
    if op in CONVERSION_OPS:
        from .reorder import DEFAULT_MAX_ERROR_DEG

        return DEFAULT_MAX_ERROR_DEG, "played motion"
    if op in LOSSLESS_OPS:
        return EXACT_POSE_DEG, "poses at the keys"
    return None, ""


def _frame_samples(track) -> bool:
    from .reorder import is_frame_samples

    return bool(is_frame_samples(track))


def _figure_unchanged(base: dict, role: str, op: str, params: dict) -> StepFigure:
    tol, of = _tolerance(op, params)
    return StepFigure(
        **base,
        tolerance=tol,
        tolerance_of=of,
        measured=0.0 if tol is not None else None,
        passed=True if tol is not None else None,
        removed={},
    )


def _figure(base, b, a, role, op, params, extra, removed) -> StepFigure:
    tol, of = _tolerance(op, params)
    key_error = _key_error(b, a)
    certified = False
    if role == "lossless":
        from .diff import diff_tracks

        d = diff_tracks(b, a)
        worst, when = d.max_error, float(d.times[int(np.argmax(d.errors))])
        certified = np.isfinite(d.bound)
        measured = key_error
    else:
        worst, when = _reading(b, a)
        measured = None
        if op == "resample":
            measured = float(extra.get("pose_error", 0.0))
        elif op in CONVERSION_OPS and _frame_samples(b):
            # per-frame samples (a BVH) play their frames and the Slerp between them whatever the
            # curves through them do: a conversion keeps the poses at the frames
            measured, of = key_error, "poses at the frames"
        elif tol is not None:
            measured = worst
    passed = None if tol is None else bool(measured <= tol)
    notes: tuple[str, ...] = ()
    if worst > NOTE_MIN_DEG and (role != "bounded" or op == "resample" or passed is False):
        notes = (explain(b, a, when),)
    counts, times = removed
    return StepFigure(
        **base,
        max_error=worst,
        worst_time=when,
        certified=bool(certified),
        key_error=key_error,
        tolerance=tol,
        tolerance_of=of,
        measured=measured,
        passed=passed,
        removed=counts,
        removed_times=times,
        notes=notes,
    )


def _removed(befores, afters, changed) -> list[tuple[dict, tuple]]:
    """Per track: ``({"wrap": n, "flip": n, "hemisphere": n}, times)`` of the key steps whose wrap
    jump, Euler flip or hemisphere flip (as ``inspect`` counts them) the step removed."""
    from .analysis import _clip_findings

    idx = [i for i, c in enumerate(changed) if c and befores[i].n_keys >= 2]
    out: list[tuple[dict, tuple]] = [({}, ())] * len(befores)
    if not idx:
        return out
    fb = _clip_findings([befores[i] for i in idx], None)
    fa = _clip_findings([afters[i] for i in idx], None)
    for i, b, a in zip(idx, fb, fa, strict=True):
        counts = {}
        gone = np.zeros(b.wrap.shape, dtype=bool)
        same_keys = a.wrap.shape == b.wrap.shape
        for kind, attr in (("wrap", "wrap"), ("flip", "flip"), ("hemisphere", "hemi")):
            was = getattr(b, attr)
            now = getattr(a, attr)
            if same_keys:
                lost = was & ~now
                counts[kind] = int(lost.sum())
                gone |= lost
            else:
                counts[kind] = max(int(was.sum()) - int(now.sum()), 0)
        times = tuple(float(x) for x in b.t[1:][gone]) if same_keys else ()
        out[i] = (counts, times)
    return out


def step_summary(figures: list[StepFigure]) -> str:
    """One line for one step over every track (``figures`` all of the same step): what it removed or
    how far it went, against its tolerance, with the worst track."""
    if not figures:
        return ""
    f0 = figures[0]
    head = f"step {f0.number} {f0.label}"
    live = [f for f in figures if f.changed]
    if not live:
        return f"{head}: no change on any of {len(figures)} track(s)"
    worst = max(live, key=lambda f: f.max_error)
    where = f"{worst.path or '(root)'} at {worst.worst_time:.3f} s"
    if f0.role == "lossless":
        totals: dict[str, int] = {}
        for f in live:
            for k, v in f.removed.items():
                totals[k] = totals.get(k, 0) + v
        what = ", ".join(_count(v, _KIND_LONG[k]) for k, v in totals.items() if v) or "no wrap or flip"
        moved = max(f.key_error for f in live)
        ok = all(f.passed is not False for f in live)
        return (
            f"{head} (lossless, intended): {what} removed on {len(live)} of {len(figures)} track(s); the "
            f"played motion changed by up to {worst.max_error:.1f} deg there ({where}); poses at keys moved "
            f"{moved:.3f} deg ({'ok' if ok else 'FAIL'})"
        )
    if f0.role == "change":
        return (
            f"{head} (changes the motion on purpose, no angle tolerance): up to {worst.max_error:.2f} deg "
            f"({where}) on {len(live)} of {len(figures)} track(s)"
        )
    failed = [f for f in figures if f.passed is False]
    top = max(figures, key=lambda f: f.measured or 0.0)
    verdict = "ok" if not failed else f"FAILED on {len(failed)} track(s)"
    held = (
        f"{f0.tolerance_of} max {top.measured:.4g} deg ({top.path or '(root)'}), tolerance "
        f"{f0.tolerance:g} deg: {verdict}"
    )
    if f0.op == "resample":
        return (
            f"{head}: {held}; the played motion changed by up to {worst.max_error:.2f} deg ({where}): "
            "the method's interpolation replaces the source's (see the notes)"
        )
    return f"{head}: {held}"
