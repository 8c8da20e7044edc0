"""The PySide6 + pyqtgraph editor (entry point :func:`.main.main`; the window :mod:`.window.main_window`).

Packages, by what they hold (the layers, top to bottom; a package imports only those below it, and
the view packages in the middle never import each other; contracts in ``pyproject.toml``):

* :mod:`.window` -- the main window: docks and layout, actions and menus, files (open, save, export,
  autosave), settings, shortcuts, the timeline bar and the editing tools it wires together.
* the views, side by side:
  :mod:`.graphs` (the curve graphs: strips, drawn items, input, sampling, marks, overlay layers),
  :mod:`.dope_sheet` (key ticks per track, retiming), :mod:`.view3d` (the GL gizmo and skeleton),
  :mod:`.recipe` (the recipe panel, its preview, the Diff dock and the A/B compare dialog),
  :mod:`.keys` (the key table, key commands, S-scale and nudges), :mod:`.tracks` (the track tree and
  the Problems dock).
* :mod:`.model` -- the Qt models every view shares: the document (clip, time, selection, preview,
  undo stack), its undo commands, the problem index and table model, the pose sampled at the cursor.
* :mod:`.common` -- what every layer uses and that knows no document: themes, elided labels, worker
  threads.
"""
