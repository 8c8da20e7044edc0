"""Blender side of ``make_fbx.py`` (run by it: ``blender -b --factory-startup --python blender_fbx.py --
IN.bvh OUT.fbx MODE``); not a test. Debian's Blender 3.4 runs on the system Python 3.11.

MODE ``empties``: every BVH joint becomes an empty parented to its parent's, keyed at every frame with
the BVH's own local rotation (in the joint's own order) and offset, so each FBX node's local rotation
is the BVH joint's rotation itself (the root is pre-rotated by +90 deg about X so Blender's default
export axis conversion, -90 deg about X to Y up, gives back the BVH's Y-up root).
MODE ``zup``: the same empties exported Z up (``axis_up="Z"``, ``axis_forward="Y"``: Blender's own
axes, no conversion; the file says ``UpAxis`` 2), so the root node keeps the +90 deg about X that
Unity's importer takes off again (-90 deg about X from Z up to Y up).
MODE ``takes``: one empty with two actions exported as two animation stacks (IN.bvh unused).
MODE ``static``: the same empties at the first frame, no animation (a file without takes).
MODE ``armature``: Blender's own BVH importer (an armature; bones with rest orientations) and its FBX
exporter, as a DCC user would make a take.
Both export with Blender's FBX exporter: baked animation, one key per frame on every channel
(``bake_anim_simplify_factor=0``), no leaf bones, scale applied (``FBX_SCALE_ALL``: no scale 100 on the
root; ``UnitScaleFactor`` 100).
"""

import builtins
import math
import sys

import bpy
from mathutils import Euler, Matrix, Vector

_open = builtins.open


def _open_no_u(f, mode="r", *a, **k):
    # Blender 3.4's BVH importer opens with mode "rU", which Python 3.11 refuses.
    return _open(f, mode.replace("U", ""), *a, **k)


builtins.open = _open_no_u


def parse_bvh(path):
    tokens = open(path).read().split()
    joints, stack, i = [], [], 0
    while tokens[i] != "MOTION":
        t = tokens[i]
        if t in ("ROOT", "JOINT"):
            joints.append({"name": tokens[i + 1], "parent": stack[-1] if stack else None, "channels": []})
            i += 2
        elif t == "End":
            joints.append({"name": None, "parent": stack[-1], "channels": []})
            i += 2
        elif t == "{":
            stack.append(len(joints) - 1)
            i += 1
        elif t == "}":
            stack.pop()
            i += 1
        elif t == "OFFSET":
            joints[stack[-1]]["offset"] = [float(v) for v in tokens[i + 1 : i + 4]]
            i += 4
        elif t == "CHANNELS":
            n = int(tokens[i + 1])
            joints[stack[-1]]["channels"] = tokens[i + 2 : i + 2 + n]
            i += 2 + n
        else:
            i += 1
    frames = int(tokens[i + 2])
    frame_time = float(tokens[i + 5])
    values = [float(v) for v in tokens[i + 6 :]]
    return [j for j in joints if j["name"]], joints, frames, frame_time, values


def empties(src, keyed=True):
    good, alljoints, frames, frame_time, values = parse_bvh(src)
    scene = bpy.context.scene
    scene.render.fps = round(1.0 / frame_time)
    scene.render.fps_base = scene.render.fps * frame_time
    scene.frame_start, scene.frame_end = 1, frames
    objs = {}
    col = 0
    for k, j in enumerate(alljoints):
        j["first"] = col
        col += len(j["channels"])
        if not j["name"]:
            continue
        ob = bpy.data.objects.new(j["name"], None)
        scene.collection.objects.link(ob)
        if j["parent"] is not None:
            ob.parent = objs[j["parent"]]
        rot = [c[0].upper() for c in j["channels"] if c.lower().endswith("rotation")]
        ob.rotation_mode = "".join(reversed(rot)) if rot else "XYZ"  # intrinsic ABC = extrinsic CBA
        objs[k] = ob
    fix = Matrix.Rotation(math.radians(90.0), 4, "X")
    width = col
    for f in range(frames if keyed else 1):
        row = values[f * width : (f + 1) * width]
        for k, j in enumerate(alljoints):
            if not j["name"]:
                continue
            ob = objs[k]
            loc = Vector(j.get("offset", [0.0, 0.0, 0.0]))
            ang = {}
            for c, name in enumerate(j["channels"]):
                v = row[j["first"] + c]
                if name.lower().endswith("position"):
                    loc["XYZ".index(name[0].upper())] = v
                else:
                    ang[name[0].upper()] = math.radians(v)
            rot = Euler((ang.get("X", 0.0), ang.get("Y", 0.0), ang.get("Z", 0.0)), ob.rotation_mode)
            m = Matrix.Translation(loc) @ rot.to_matrix().to_4x4()
            if j["parent"] is None:
                m = fix @ m
            ob.matrix_basis = m
            if keyed:
                ob.keyframe_insert("location", frame=f + 1)
                ob.keyframe_insert("rotation_euler", frame=f + 1)


def takes(dst):
    """One empty with two actions, each an animation stack of its own: "Turn" (0 to 90 deg about Z over
    frames 1-31) and "Nod" (0 to 45 deg about X over frames 1-21)."""
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 30, 1.0
    ob = bpy.data.objects.new("Head", None)
    scene.collection.objects.link(ob)
    ob.animation_data_create()
    for name, axis, deg, last in (("Turn", 2, 90.0, 31), ("Nod", 0, 45.0, 21)):
        act = bpy.data.actions.new(name)
        act.use_fake_user = True
        ob.animation_data.action = act
        for f, v in ((1, 0.0), (last, deg)):
            ob.rotation_euler = (0.0, 0.0, 0.0)
            ob.rotation_euler[axis] = math.radians(v)
            ob.keyframe_insert("rotation_euler", frame=f)
    ob.animation_data.action = bpy.data.actions["Turn"]
    bpy.ops.export_scene.fbx(
        filepath=dst,
        bake_anim=True,
        bake_anim_simplify_factor=0.0,
        bake_anim_use_nla_strips=False,
        bake_anim_use_all_actions=True,
        bake_anim_force_startend_keying=True,
        apply_scale_options="FBX_SCALE_ALL",
    )


def main():
    argv = sys.argv[sys.argv.index("--") + 1 :]
    src, dst, mode = argv
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if mode == "takes":
        takes(dst)
        return
    if mode in ("empties", "static", "zup"):
        empties(src, keyed=mode != "static")
    else:
        frames = parse_bvh(src)[2]
        bpy.ops.import_anim.bvh(
            filepath=src, rotate_mode="NATIVE", update_scene_fps=True, update_scene_duration=True
        )
        bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, frames
    bpy.ops.export_scene.fbx(
        filepath=dst,
        bake_anim=mode != "static",
        bake_anim_simplify_factor=0.0,
        bake_anim_use_nla_strips=False,
        bake_anim_use_all_actions=False,
        add_leaf_bones=False,
        apply_scale_options="FBX_SCALE_ALL",
        **({"axis_up": "Z", "axis_forward": "Y"} if mode == "zup" else {}),
    )


main()
