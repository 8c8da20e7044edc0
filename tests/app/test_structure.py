"""Structure of the app layer (issue 9): no import circle between document.py and commands.py, and
the graph view split along drawn vs handled (input handling lives outside GraphPanel)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "curveeditor" / "app"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_commands_does_not_import_document():
    mods = _imports(APP / "commands.py")
    assert ".document" not in mods and "curveeditor.app.document" not in mods
    assert ".commands" in _imports(APP / "document.py")


def test_graph_panel_draws_and_the_handler_handles():
    from curveeditor.app import graph_input, graphs

    src = inspect.getsource(graphs.GraphPanel)
    # hit testing, drags and hover are GraphInput's; GraphPanel only delegates to it
    for name in ("key_hit", "handle_hit", "curve_hit", "begin_drag", "drag_handle", "hover"):
        assert hasattr(graph_input.GraphInput, name)
    assert "mapSceneToView(scene_pos)" not in src.split("def _on_mouse_moved")[0]
    # graph_input draws nothing of the curves
    assert "setData" not in inspect.getsource(graph_input)


def _class_lines(cls) -> int:
    return len(inspect.getsource(cls).splitlines())


def test_main_window_and_recipe_panel_split_along_drawn_and_handled():
    """MainWindow (940 lines) and RecipePanel (620) each read in one sitting: the window builds the
    views and wires them; layout, actions/menus, files and key commands are mixins of their own; the
    recipe panel's step model, parameter form and preview runs live apart."""
    from curveeditor.app import (
        key_commands,
        main_window,
        recipe_form,
        recipe_panel,
        recipe_preview,
        recipe_steps,
        window_actions,
        window_files,
        window_layout,
    )

    mw = main_window.MainWindow
    for mixin in (
        window_layout.DockLayout,
        window_actions.WindowActions,
        window_files.WindowFiles,
        key_commands.KeyCommands,
    ):
        assert issubclass(mw, mixin)
    assert issubclass(recipe_panel.RecipePanel, recipe_preview.RecipePreview)
    sizes = {
        c.__name__: _class_lines(c)
        for c in (
            mw,
            window_layout.DockLayout,
            window_actions.WindowActions,
            window_files.WindowFiles,
            key_commands.KeyCommands,
            recipe_panel.RecipePanel,
            recipe_preview.RecipePreview,
            recipe_form.ParamForm,
            recipe_steps.StepState,
        )
    }
    assert all(n <= 400 for n in sizes.values()), sizes
    # the window's own class holds no menus, file dialogs or key edits
    own = set(vars(mw))
    assert not own & {"_build_menus", "open_dialog", "delete_keys", "limit_dock_widths"}
    # the document's signals reach the window's displays in one place
    src = inspect.getsource(mw)
    body = src.split("def _connect_document")[1].split("\n    def ")[0]
    outside = src.replace(body, "")
    assert "doc.clipChanged.connect" in body and ".connect(" not in outside.replace(
        "def _connect_document", ""
    ), "signal wiring outside MainWindow._connect_document"


def test_graph_view_classes_read_in_one_sitting_and_the_panel_draws_no_items():
    """Issue 9: GraphPanel was ~900 lines; what is drawn (tracks, marks), what is handled (input) and
    the layout / document mapping (panel) are separate classes of at most ~450 lines each."""
    from curveeditor.app import graph_input, graph_marks, graph_tracks, graphs

    classes = (graphs.GraphPanel, graph_tracks.TrackDrawer, graph_marks.Marks, graph_input.GraphInput)
    for cls in classes:
        n = len(inspect.getsource(cls).splitlines())
        assert n <= 450, f"{cls.__name__}: {n} lines"
    panel = inspect.getsource(graphs.GraphPanel)
    for drawing in ("addItem(", "removeItem(", "setData(", "curve_item(", "KeyMarkers("):
        assert drawing not in panel, drawing
    # the one place mapping document signals to view updates
    assert panel.count(".connect(") - panel.count("sigRangeChanged.connect") - panel.count("sigDragged") <= 8
    assert "self.doc.clipChanged.connect" in inspect.getsource(graphs.GraphPanel._connect_document)
