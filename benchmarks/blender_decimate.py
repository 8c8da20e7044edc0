"""Blender side of ``benchmarks/reduce.py``'s decimate comparison (run by Blender 3.4:
``blender -b --factory-startup --python benchmarks/blender_decimate.py -- IN.bvh OUT.json 0.25,0.5,1``).

Imports the BVH (``rotate_mode="NATIVE"``: each bone keeps the file's Euler order), evaluates every
bone's ``rotation_euler`` F-curves at every frame (what Blender plays: its Bezier F-curves, in its own
Euler order, as quaternions by ``mathutils``), then for each margin (degrees) restores the imported
keys, runs the Graph Editor's Decimate (``mode="ERROR"``, ``remove_error_margin`` in the F-curves'
unit, radians) on the rotation F-curves only and evaluates again. Writes JSON: frame count, rotation
keys per bone and channel before and after each margin, the decimate's CPU seconds, and the
quaternions ``(w, x, y, z)`` per bone and frame before and after. Pure Python (Debian's Blender has
no numpy). The error figures are computed by ``benchmarks/reduce.py`` (one evaluator for both tools).
"""

import builtins
import json
import math
import sys
import time

_open = builtins.open


def _open_no_u(file, mode="r", *a, **k):
    return _open(file, mode.replace("U", ""), *a, **k)


builtins.open = _open_no_u  # Blender 3.4's BVH importer opens with "rU", removed in Python 3.11

import bpy  # noqa: E402
from mathutils import Euler  # noqa: E402

args = sys.argv[sys.argv.index("--") + 1 :]
src, out = args[0], args[1]
margins = [float(x) for x in args[2].split(",")]
bpy.ops.import_anim.bvh(filepath=src, rotate_mode="NATIVE")
obj = bpy.context.active_object
act = obj.animation_data.action
f0, f1 = (int(round(x)) for x in act.frame_range)
frames = list(range(f0, f1 + 1))


def curves():
    by = {}
    for fc in act.fcurves:
        if fc.data_path.endswith("rotation_euler"):
            by.setdefault(fc.data_path.split('"')[1], {})[fc.array_index] = fc
    return by


def quats():
    res = {}
    for bone, fcs in curves().items():
        mode = obj.pose.bones[bone].rotation_mode
        ev = [fcs[i].evaluate for i in range(3)]
        res[bone] = [tuple(Euler((ev[0](f), ev[1](f), ev[2](f)), mode).to_quaternion()) for f in frames]
    return res


def key_counts():
    return {b: [len(fcs[i].keyframe_points) for i in range(3)] for b, fcs in curves().items()}


before = quats()
result = {"frames": len(frames), "keys_before": key_counts(), "before": before, "runs": []}
saved = {
    (fc.data_path, fc.array_index): [
        (
            tuple(k.co),
            tuple(k.handle_left),
            tuple(k.handle_right),
            k.interpolation,
            k.handle_left_type,
            k.handle_right_type,
        )
        for k in fc.keyframe_points
    ]
    for fc in act.fcurves
}
win = bpy.context.window_manager.windows[0]
area = win.screen.areas[0]
area.type = "GRAPH_EDITOR"
area.spaces.active.dopesheet.show_only_selected = False
area.spaces.active.dopesheet.show_hidden = True
obj.select_set(True)
for m in margins:
    for fc in act.fcurves:  # the imported keys again
        kp = saved[(fc.data_path, fc.array_index)]
        fc.keyframe_points.clear()
        fc.keyframe_points.add(len(kp))
        for k, (co, hl, hr, it, hlt, hrt) in zip(fc.keyframe_points, kp, strict=True):
            k.co, k.interpolation, k.handle_left_type, k.handle_right_type = co, it, hlt, hrt
            k.handle_left, k.handle_right = hl, hr
        fc.update()
        fc.select = fc.data_path.endswith("rotation_euler")
        for k in fc.keyframe_points:
            k.select_control_point = fc.select
    t0 = time.process_time()
    with bpy.context.temp_override(window=win, area=area, region=area.regions[-1]):
        bpy.ops.graph.decimate(mode="ERROR", remove_error_margin=math.radians(m))
    cpu = time.process_time() - t0
    result["runs"].append({"margin_deg": m, "cpu_s": cpu, "keys": key_counts(), "after": quats()})
with _open(out, "w") as f:
    json.dump(result, f)
print("DECIMATE_DONE")
