"""Blender side of ``benchmarks/formats_io.py``'s second-implementation check (run by it:
``blender -b --factory-startup --python blender_gltf.py -- IN.glb OUT.json FPS``).

Imports a glTF file with Blender's own glTF importer and writes, for every object the file animates,
its local rotation quaternion (Blender's ``(w, x, y, z)``, after the importer's Y-up to Z-up
conversion) at every frame of the scene as JSON ``{"start": first frame, "objects": {name: [[w, x, y,
z], ...]}}``."""

import json
import sys

import bpy

argv = sys.argv[sys.argv.index("--") + 1 :]
src, dst, fps = argv[0], argv[1], float(argv[2])
bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps = int(round(fps))
scene.render.fps_base = scene.render.fps / fps
bpy.ops.import_scene.gltf(filepath=src)
animated = [ob for ob in bpy.data.objects if ob.animation_data and ob.animation_data.action]
start = min(int(ob.animation_data.action.frame_range[0]) for ob in animated)
end = max(int(round(ob.animation_data.action.frame_range[1])) for ob in animated)
out = {ob.name: [] for ob in animated}
for f in range(start, end + 1):
    scene.frame_set(f)
    for ob in animated:
        ob.rotation_mode = "QUATERNION" if ob.rotation_mode == "QUATERNION" else ob.rotation_mode
        q = ob.matrix_basis.to_quaternion()
        out[ob.name].append([q.w, q.x, q.y, q.z])
with open(dst, "w") as fh:
    json.dump({"start": start, "objects": out}, fh)
