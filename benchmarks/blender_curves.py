"""Blender side of ``benchmarks/reduce.py``'s decimate comparison on ``.anim`` clips (run by Blender
3.4: ``blender -b --factory-startup --python benchmarks/blender_curves.py -- IN.json OUT.json 0.25,0.5,1``).

``IN.json`` (written by ``reduce.py``): the clip's frame rate and frames, and per rotation track its
kind, order (extrinsic, lower case) and keys (seconds, values, in/out slopes per second: Unity's
unweighted Hermite curves). Each track becomes an Empty whose ``rotation_euler`` (Blender's mode of
the same extrinsic order, radians) or ``rotation_quaternion`` (w, x, y, z) F-curves hold the keys as
Bezier keys with free handles a third of the neighbouring interval away along the slopes (the same
cubic as Unity's Hermite). Then as ``blender_decimate.py``: evaluate at every frame, decimate the
rotation F-curves at each margin (radians for Euler curves; quaternion components are unitless: the
same number, ``rad(margin)``), evaluate again; JSON out in the same layout.
"""

import json
import math
import sys
import time

import bpy  # noqa: E402
from mathutils import Euler, Quaternion  # noqa: E402

args = sys.argv[sys.argv.index("--") + 1 :]
src, out = args[0], args[1]
margins = [float(x) for x in args[2].split(",")]
with open(src) as f:
    clip = json.load(f)
fps = float(clip["fps"])
frames = [float(f) for f in clip["frames"]]
scene = bpy.context.scene
for o in list(scene.objects):
    bpy.data.objects.remove(o)
objs = {}
for tr in clip["tracks"]:
    ob = bpy.data.objects.new(tr["name"], None)
    scene.collection.objects.link(ob)
    euler = tr["kind"] == "euler"
    ob.rotation_mode = tr["order"].upper() if euler else "QUATERNION"
    ob.animation_data_create()
    ob.animation_data.action = bpy.data.actions.new(tr["name"])
    path = "rotation_euler" if euler else "rotation_quaternion"
    # component order of the F-curves: Euler x, y, z; quaternion w, x, y, z (ours: x, y, z, w)
    comps = [0, 1, 2] if euler else [3, 0, 1, 2]
    scale = math.pi / 180.0 if euler else 1.0
    t = tr["t"]
    for idx, c in enumerate(comps):
        fc = ob.animation_data.action.fcurves.new(path, index=idx)
        fc.keyframe_points.add(len(t))
        for k, kp in enumerate(fc.keyframe_points):
            f = t[k] * fps
            v = tr["v"][k][c] * scale
            kp.co = (f, v)
            kp.interpolation = "BEZIER"
            kp.handle_left_type = "FREE"
            kp.handle_right_type = "FREE"
            dl = (t[k] - t[k - 1]) * fps / 3.0 if k > 0 else 1.0 / 3.0
            dr = (t[k + 1] - t[k]) * fps / 3.0 if k + 1 < len(t) else 1.0 / 3.0
            ml = tr["in"][k][c] * scale / fps
            mr = tr["out"][k][c] * scale / fps
            kp.handle_left = (f - dl, v - ml * dl)
            kp.handle_right = (f + dr, v + mr * dr)
        fc.update()
    objs[tr["name"]] = ob


def curves(ob):
    return sorted(ob.animation_data.action.fcurves, key=lambda fc: fc.array_index)


def quats():
    res = {}
    for name, ob in objs.items():
        fcs = curves(ob)
        ev = [fc.evaluate for fc in fcs]
        if ob.rotation_mode == "QUATERNION":
            res[name] = [tuple(Quaternion([e(f) for e in ev]).normalized()) for f in frames]
        else:
            res[name] = [tuple(Euler([e(f) for e in ev], ob.rotation_mode).to_quaternion()) for f in frames]
    return res


def key_counts():
    return {name: [len(fc.keyframe_points) for fc in curves(ob)] for name, ob in objs.items()}


def union_counts():
    """Per track, the distinct key frames of its F-curves: the keys a curve that holds every
    channel in one key (a Unity runtime curve without editor curves) needs for Blender's result."""
    return {
        name: len({round(k.co[0], 6) for fc in curves(ob) for k in fc.keyframe_points})
        for name, ob in objs.items()
    }


saved = {
    (name, fc.array_index): [
        (tuple(k.co), tuple(k.handle_left), tuple(k.handle_right)) for k in fc.keyframe_points
    ]
    for name, ob in objs.items()
    for fc in curves(ob)
}
before = quats()
result = {"frames": len(frames), "keys_before": key_counts(), "before": before, "runs": []}
win = bpy.context.window_manager.windows[0]
area = win.screen.areas[0]
area.type = "GRAPH_EDITOR"
area.spaces.active.dopesheet.show_only_selected = False
area.spaces.active.dopesheet.show_hidden = True
for m in margins:
    for name, ob in objs.items():
        ob.select_set(True)
        for fc in curves(ob):
            kp = saved[(name, fc.array_index)]
            fc.keyframe_points.clear()
            fc.keyframe_points.add(len(kp))
            for k, (co, hl, hr) in zip(fc.keyframe_points, kp, strict=True):
                k.co, k.interpolation = co, "BEZIER"
                k.handle_left_type = k.handle_right_type = "FREE"
                k.handle_left, k.handle_right = hl, hr
                k.select_control_point = True
            fc.select = True
            fc.update()
    t0 = time.process_time()
    with bpy.context.temp_override(window=win, area=area, region=area.regions[-1]):
        bpy.ops.graph.decimate(mode="ERROR", remove_error_margin=math.radians(m))
    cpu = time.process_time() - t0
    result["runs"].append(
        {"margin_deg": m, "cpu_s": cpu, "keys": key_counts(), "union": union_counts(), "after": quats()}
    )
with open(out, "w") as f:
    json.dump(result, f)
print("DECIMATE_DONE")
