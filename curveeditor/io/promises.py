"""What a recipe promises about the file it writes, and the margin the format needs inside it (issue 20).

A bound asked for is a bound kept: ``clean --reduce 0.1 -o x.anim`` must give a file whose poses at
the input's keys are within 0.1 deg of the input *as read back*, not just in memory. The file format
moves a pose a little on its own (``.anim`` stores float32 times and values, and its writer may
re-key a track within :data:`~.verify.WRITER_TOLERANCE_DEG` for a conversion: 0.1006 deg came out of
a 0.0970 deg reduction that way), so the recipe runs each ``reduce`` with :func:`write_margin` taken
out of its bound (``recipe.run_recipe(..., reserve_deg=)``) and the write check holds the file to the
bound asked for at the keys (:func:`recipe_promise`: ``Promise.key_bound_deg``); a miss writes
nothing. Between keys the promise is the bound plus the writer's tolerance, as before.

Margins (degrees), by the output's extension:

* ``.anim``: float32: the larger of :data:`~.verify.FLOAT32_SLACK_DEG` and what float32 key *times*
  cost the clip's fastest track at its last key (a time is good to ``|t| * 2**-24`` s; long fast takes
  need more than the fixed slack); plus the writer's conversion tolerance when it may re-key a track
  (:func:`anim_may_rekey`: an Euler track not in Unity's ZXY order, which the ``.anim`` writer
  converts, or a quaternion track, whose opposite-hemisphere keys and segments over 180 deg it
  re-keys). The margin costs keys: ``--reduce 0.1`` kept 16% more keys of the generated 31 x 2,752
  ZYX clip with the conversion tolerance reserved, 0.8% more at 0.5.
* ``.csv``: :data:`CSV_MARGIN_DEG` (values are written at full precision; the margin covers the
  Euler/quaternion conversions of the writer).
* ``.bvh``: :data:`BVH_MARGIN_DEG` (6 decimals per channel).
"""

from __future__ import annotations

import os

import numpy as np

from .formats import extension
from .verify import FLOAT32_SLACK_DEG, FLOAT32_TIME_REL, WRITER_TOLERANCE_DEG, Promise, recipe_bound

__all__ = [
    "write_margin",
    "anim_may_rekey",
    "recipe_key_bound",
    "recipe_promise",
    "CSV_MARGIN_DEG",
    "BVH_MARGIN_DEG",
    "FLOAT32_TIME_REL",
    "MEASURE_SLACK_DEG",
]

#: Margin for CSV outputs (full-precision decimal values).
CSV_MARGIN_DEG = 1e-6
#: Margin for BVH outputs (channels written with 6 decimals: each within 5e-7 deg).
BVH_MARGIN_DEG = 1e-5
#: What measuring a geodesic angle in float64 may add (degrees): the key bound's only slack.
MEASURE_SLACK_DEG = 1e-6


def write_margin(clip, path: str | os.PathLike) -> float:
    """Degrees the writer of ``path``'s format may move a pose of ``clip`` at its keys (module
    docstring); 0 for an unknown extension."""
    ext = extension(path)
    if ext == ".csv":
        return CSV_MARGIN_DEG
    if ext == ".bvh":
        return BVH_MARGIN_DEG
    if ext != ".anim":
        return 0.0
    rekey = WRITER_TOLERANCE_DEG if anim_may_rekey(clip) else 0.0
    return rekey + max(FLOAT32_SLACK_DEG, _float32_time_slack(clip))


def anim_may_rekey(clip) -> bool:
    """True when the ``.anim`` writer may re-key a track of ``clip`` within its conversion tolerance
    (an Euler track not in Unity's ``zxy``, converted; a quaternion track, whose hemisphere flips and
    segments over 180 deg are re-keyed along the played path)."""
    from ..engine.clip import EULER
    from ..engine.rotations import UNITY_ORDER

    return any(t.kind != EULER or t.order != UNITY_ORDER for t in clip.tracks if t.n_keys)


def _float32_time_slack(clip) -> float:
    """Degrees a float32 key time can cost: the fastest key step of each track times the rounding
    of its latest key time."""
    from ..engine.clip import key_quaternions
    from ..engine.rotations import geodesic_angle

    worst = 0.0
    for t in clip.tracks:
        if t.n_keys < 2:
            continue
        q = key_quaternions(t)
        dt = np.diff(t.times)
        with np.errstate(divide="ignore", invalid="ignore"):
            speed = np.where(dt > 0, geodesic_angle(q[:-1], q[1:]) / dt, 0.0)
        fast = float(np.max(speed[np.isfinite(speed)], initial=0.0))
        worst = max(worst, fast * float(np.abs(t.times).max()) * FLOAT32_TIME_REL)
    return worst


#: Ops whose figure at the input's keys is bounded (degrees): lossless steps keep the poses,
#: conversions keep them within the conversion tolerance, ``reduce`` within its ``max_error``.
_KEY_BOUNDS = {
    "unwrap": 0.0,
    "unflip": 0.0,
    "to_order": WRITER_TOLERANCE_DEG,
    "to_kind": WRITER_TOLERANCE_DEG,
}


def recipe_key_bound(recipe) -> float | None:
    """The bound (degrees) a recipe promises for the poses at the input's keys in the file written:
    the sum of its ``reduce`` bounds and conversion tolerances (lossless steps keep the poses), or
    None when a step changes the poses on purpose (smoothing, resampling, limits, ...)."""
    total = 0.0
    for step in recipe.steps:
        if step.op == "reduce":
            total += float(step.params["max_error"])
        elif step.op in _KEY_BOUNDS:
            total += _KEY_BOUNDS[step.op]
        else:
            return None
    return total


def recipe_promise(source, recipe, margin_deg: float = 0.0) -> Promise:
    """The :class:`~.verify.Promise` of running ``recipe`` on ``source`` and writing the result: the
    played motion within :func:`~.verify.recipe_bound` when the recipe has one, and, when the
    recipe ran with ``margin_deg`` reserved inside its ``reduce`` bounds (:func:`write_margin`), the
    poses at the input's keys within the bound asked for (:func:`recipe_key_bound`: an unwrap before
    the reduce keeps them, so ``--unwrap --reduce 2`` promises 2 deg at the keys even though the unwrap
    changes the motion between them on purpose; plus
    :data:`MEASURE_SLACK_DEG` for the arithmetic of the measurement itself)."""
    between = recipe_bound(recipe)
    key = None
    if margin_deg > 0.0 and any(s.op == "reduce" for s in recipe.steps):
        asked = recipe_key_bound(recipe)
        if asked is not None:
            key = asked + MEASURE_SLACK_DEG
    return Promise(
        reference=source,
        bound_deg=between,
        what="the input",
        clip_what="the recipe's result",
        key_bound_deg=key,
    )


def track_entries(source, result, check) -> list[dict]:
    """Per processed track, the report entry ``clean --report``/``--json`` and ``batch``'s report
    share (keys documented in the README): key counts (input, recipe result, written file); the
    written file read back against the input (``max_error``/``rms_error`` on the played curves or,
    for a BVH input, the Slerp of its frames; ``max_key_error`` at the input's keys, ``key_bound``
    the bound it is held to), against the recipe's result (``writer_max_error``/``writer_key_error``:
    the format's own error); what the writer did; the change log; and ``steps``: each step's
    :class:`~curveeditor.engine.step_figures.StepFigure` (``as_dict``), measured against the track
    just before it."""
    checks = {t.path: t for t in check.tracks} if check is not None else {}
    out = []
    for path, log in result.changes.items():
        before, after = source.track(path), result.clip.track(path)
        c = checks.get(path)
        fig = c.figures if c is not None else None
        out.append(
            {
                "path": path,
                "keys_before": before.n_keys,
                "keys_after": after.n_keys,
                "keys_written": c.keys_written if c is not None else after.n_keys,
                "max_error": fig.max_error if fig is not None else 0.0,
                "rms_error": fig.rms_error if fig is not None else 0.0,
                "max_key_error": fig.key_error if fig is not None else 0.0,
                "bound": fig.bound if fig is not None else None,
                "key_bound": fig.key_bound if fig is not None else None,
                "writer_keys_added": c.keys_added if c is not None else 0,
                "writer_reasons": list(c.reasons) if c is not None else [],
                "writer_max_error": c.writer.max_error if c is not None else 0.0,
                "writer_key_error": c.writer.key_error if c is not None else 0.0,
                "changes": list(log),
                "steps": [f.as_dict() for f in result.figures.get(path, ())],
            }
        )
    return out
