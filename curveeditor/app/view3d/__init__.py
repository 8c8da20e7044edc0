"""The 3D view: the orientation at the cursor as a GL gizmo (:mod:`.gizmo`) and the whole character as
a skeleton layer on it (:mod:`.skeleton`); Unity's left-handed data mirrored into right-handed GL."""
