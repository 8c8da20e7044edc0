"""Timeline readout: the Euler triple and its equivalent shown for the current pose."""

from __future__ import annotations

import re

import numpy as np
import pytest

from curveeditor.app.document import ClipDocument
from curveeditor.app.timeline import readout_text
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
