"""The bundled demo clip: small, built in code, and full of the problems the editor exists to fix.

``python -m curveeditor.samples`` regenerates ``curveeditor/resources/samples/demo.csv`` and ``demo.anim``,
the package data that ``pip install .`` ships (``resources/samples`` at the repository root is a symlink
to that folder, for the README's commands); the editor opens ``demo.anim`` when started without a file.
Everything is deterministic (no random numbers), so the files only change when this module does.

The clip "demo" runs 4 s at 30 fps (121 keys per track unless noted). Rotations follow Unity's
conventions (Euler ZXY extrinsic, degrees, columns x, y, z; quaternions x, y, z, w):

* ``Character`` (Euler): a character turning left and right around yaw 175 deg, written the way a naive
  exporter writes it, every angle wrapped into (-180, 180]: yaw crosses +-180 several times, and each
  crossing is a ~358 deg jump between two frames (a *wrap jump*: Unity plays a full spin there).
* ``Character/Spine`` (Euler): a gentle sway where the keys from 1.5 s to 2.5 s are written with the
  equivalent triple ``(180 - x, y + 180, z + 180)`` (wrapped): the same poses, but every channel jumps at
  both ends of the stretch (an *Euler flip*).
* ``Character/Spine/Neck`` (Euler): a nod up to x = 88.5 deg while turning, passing within 5 deg of the
  gimbal lock of ZXY (x = +-90) for about a third of a second (*gimbal keys*).
* ``Character/Spine/Neck/Head`` (Euler): small smooth motion with one frame (2.0 s) knocked 60 deg off
  in yaw, which comes straight back the next frame (a *spike*, 1800 deg/s).
* ``Character/RightHand`` (quaternion): a wrist swinging through 180 deg about a tilted axis, written
  with ``w >= 0`` forced (a common exporter habit): the sign flips each time the angle crosses 180 deg
  (*hemisphere flips*: Unity plays those segments the long way round).
* ``Prop`` (Euler): a deliberate spin keyed once a second: 0 -> 360 deg yaw in the first second, a hold,
  a half turn back and another half. Its 360 deg step is real motion (360 deg/s), so ``unwrap`` must
  keep it (the inspector still counts it as a wrap jump: by definition a >180 deg channel step).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .engine.clip import EULER, QUATERNION, Clip, RotationTrack
from .engine.rotations import UNITY_ORDER, equivalent_euler
from .engine.tangents import make_curve
from .resources import SAMPLES_DIR

__all__ = ["FRAME_RATE", "DURATION", "demo_clip", "write_samples", "SAMPLES_DIR", "main"]

FRAME_RATE = 30.0
DURATION = 4.0


def _wrap180(a: np.ndarray) -> np.ndarray:
    """Angles mapped into (-180, 180], as a naive exporter writes them."""
    return 180.0 - np.mod(180.0 - np.asarray(a, dtype=np.float64), 360.0)


def _frames() -> np.ndarray:
    n = int(round(DURATION * FRAME_RATE)) + 1
    return np.arange(n) / FRAME_RATE


def _euler_track(path: str, t: np.ndarray, x, y, z) -> RotationTrack:
    values = np.column_stack([np.broadcast_to(np.asarray(c, dtype=np.float64), t.shape) for c in (x, y, z)])
    return RotationTrack(path, EULER, make_curve(t, values, mode="clamped_auto"), order=UNITY_ORDER)


def _character(t: np.ndarray) -> RotationTrack:
    yaw = 175.0 + 40.0 * np.sin(2.0 * np.pi * t / 2.5)
    lean = 4.0 * np.sin(2.0 * np.pi * t / 1.25)
    return _euler_track("Character", t, lean, _wrap180(yaw), 2.0 * np.sin(np.pi * t))


def _spine(t: np.ndarray) -> RotationTrack:
    e = np.column_stack(
        [
            25.0 + 10.0 * np.sin(np.pi * t / 2.0),
            15.0 * np.sin(np.pi * t / 1.5),
            5.0 * np.cos(np.pi * t / 2.0),
        ]
    )
    flip = (t >= 1.5) & (t < 2.5)
    e[flip] = _wrap180(equivalent_euler(e[flip], UNITY_ORDER))
    return _euler_track("Character/Spine", t, e[:, 0], e[:, 1], e[:, 2])


def _neck(t: np.ndarray) -> RotationTrack:
    nod = 88.5 * np.sin(np.pi * t / DURATION) ** 2
    turn = 30.0 * np.sin(np.pi * t / 2.0)
    return _euler_track("Character/Spine/Neck", t, nod, turn, 3.0 * np.sin(np.pi * t))


def _head(t: np.ndarray) -> RotationTrack:
    y = 10.0 * np.sin(np.pi * t / 2.0)
    spike = int(round(2.0 * FRAME_RATE))
    y = y.copy()
    y[spike] += 60.0
    return _euler_track("Character/Spine/Neck/Head", t, 5.0 * np.sin(np.pi * t), y, 0.0)


def _right_hand(t: np.ndarray) -> RotationTrack:
    axis = np.array([0.3, 0.2, 0.93])
    axis /= np.linalg.norm(axis)
    angle = np.deg2rad(180.0 + 110.0 * np.sin(2.0 * np.pi * t / 3.0))
    half = 0.5 * angle
    q = np.column_stack([np.outer(np.sin(half), axis), np.cos(half)])
    q = np.where(q[:, 3:4] < 0.0, -q, q)  # the exporter's "w >= 0" habit: flips at every 180 crossing
    return RotationTrack("Character/RightHand", QUATERNION, make_curve(t, q, mode="auto"))


def _prop() -> RotationTrack:
    t = np.arange(5, dtype=np.float64)
    yaw = np.array([0.0, 360.0, 360.0, 180.0, 0.0])
    return _euler_track("Prop", t, 0.0, yaw, 0.0)


def demo_clip() -> Clip:
    """The demo clip (see the module docstring for what each track contains)."""
    t = _frames()
    tracks = [_character(t), _spine(t), _neck(t), _head(t), _right_hand(t), _prop()]
    return Clip(name="demo", frame_rate=FRAME_RATE, tracks=tracks, meta={"format": "generated"})


def write_samples(folder: str | Path = SAMPLES_DIR) -> list[Path]:
    """Write ``demo.csv`` (and ``demo.anim`` when the ``.anim`` writer is available) into ``folder``.

    The CSV is written key for key in each track's own kind (Euler tracks ``x,y,z``, the quaternion
    track ``qx..qw`` with its flips), so reading it back gives the same clip. The ``.anim`` has every
    problem except the hemisphere flips, which are resolved (``export_checks.fix_hemisphere``, what
    ``clean --unflip`` does) before the ``.anim`` is written. Returns the files written.
    """
    from .io import write_clip
    from .io.csv_io import write_csv

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    clip = demo_clip()
    written = [folder / "demo.csv"]
    write_csv(clip, written[0], keys_only=True)
    try:
        from .io.anim import write_anim  # noqa: F401  (only asks whether the writer exists yet)
    except ImportError:
        return written
    # RightHand's flips live in demo.csv only: the .anim gets them resolved by the engine's unflip
    # (the writer itself never changes the played motion, so it would keep them as keyed).
    from .engine.export_checks import fix_hemisphere

    unflipped = clip.with_tracks([fix_hemisphere(t)[0] for t in clip.tracks])
    write_clip(unflipped, folder / "demo.anim")
    written.append(folder / "demo.anim")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m curveeditor.samples", description="Regenerate the bundled demo clip files."
    )
    parser.add_argument("--out", default=str(SAMPLES_DIR), help="folder to write into (default: %(default)s)")
    args = parser.parse_args(argv)
    for path in write_samples(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
