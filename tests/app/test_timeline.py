"""Timeline readout: the Euler triple and its equivalent shown for the current pose."""

from __future__ import annotations

import re

import numpy as np
import pytest

from curveeditor.app.model.document import ClipDocument
from curveeditor.app.window.timeline import readout_text
from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.curves import Curve
from curveeditor.engine.rotations import euler_to_quat, geodesic_angle


@pytest.mark.parametrize("kind", ["euler", "quaternion"])
def test_readout_equivalent_triple_is_the_same_pose_in_the_tracks_order(qtbot, kind):
    """Both triples are in the track's order (display.sample_track decomposes quaternion tracks in
    it), so the equivalent triple must be the same rotation in that order, for both kinds."""
    e = np.array([[10.0, 30.0, 20.0], [15.0, 40.0, 25.0]])
    values = e if kind == "euler" else euler_to_quat(e, "XYZ")
    track = RotationTrack("Head", kind, Curve.make(np.array([0.0, 1.0]), values), order="XYZ")
    doc = ClipDocument()
    doc.load(Clip("c", 30.0, [track]), None)
    doc.select_paths(["Head"])
    text = readout_text(doc)
    m = re.search(r"Euler \(([-\d., ]+)\)° ≡ \(([-\d., ]+)\)°", text)
    assert m, text
    shown = np.array([[float(v) for v in g.split(",")] for g in m.groups()])
    assert shown[0] == pytest.approx(e[0], abs=0.01)
    # The readout rounds to 0.01 deg: the two triples agree as rotations in XYZ within that.
    q = euler_to_quat(shown, "XYZ")
    assert geodesic_angle(q[0], q[1]) < 0.05


def test_readout_follows_a_drag_at_most_every_interval_and_exactly_at_the_release(qtbot):
    """Mid-drag the readout is refreshed by a READOUT_LIVE_MS timer, not on every step (sampling the
    pose at the cursor per step); the release shows the dragged pose at once."""
    from curveeditor.app.window import timeline as tl
    from curveeditor.engine import edit as ed

    t = np.array([0.0, 1.0, 2.0])
    e = np.array([[10.0, 0.0, 0.0], [20.0, 5.0, 0.0], [30.0, 0.0, 0.0]])
    track = RotationTrack("Head", "euler", Curve.make(t, e))
    doc = ClipDocument()
    doc.load(Clip("c", 30.0, [track]), None)
    doc.select_paths(["Head"])
    doc.set_time(1.0)
    bar = tl.Timeline(doc)
    qtbot.addWidget(bar)
    before = bar.readout.text()
    assert before == readout_text(doc)

    def step(dv):
        moved = ed.move_keys(doc.clip.track("Head"), [1], 0.0, 0, dv)
        doc.update_live(doc.clip.with_track(moved), ["Head"])

    doc.begin_live_edit()
    for _ in range(3):
        step(10.0)
        assert bar.readout.text() == before  # not recomputed per step
    assert bar._readout_timer.isActive()
    qtbot.waitUntil(lambda: bar.readout.text() == readout_text(doc), timeout=2 * tl.READOUT_LIVE_MS + 500)
    step(10.0)
    doc.end_live_edit("drag")
    assert bar.readout.text() == readout_text(doc) != before
    assert "Euler (60.00, 5.00, 0.00)" in bar.readout.text()  # 20 + 4 steps of 10
