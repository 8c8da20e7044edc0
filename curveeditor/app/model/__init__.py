"""The Qt models the views share (napari's ``components``): :mod:`.document` (``ClipDocument``: the
clip, current time, selection, preview, undo stack and their signals), :mod:`.undo` (its undo
commands), :mod:`.problems` (the problem index and the Problems table model), :mod:`.time_samples`
(the primary track's pose at the cursor, sampled once per time). No widgets here."""
