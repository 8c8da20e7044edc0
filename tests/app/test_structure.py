"""Structure of the app layer (issues 9, 19): no import circle between the document and its undo
commands, the graph view split along drawn vs handled (input handling lives outside GraphPanel), the
editor in packages by what a newcomer looks for (contracts in pyproject.toml keep the layers)."""

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


def test_undo_commands_do_not_import_the_document():
    mods = _imports(APP / "model" / "undo.py")
    assert ".document" not in mods and "curveeditor.app.model.document" not in mods
    assert ".undo" in _imports(APP / "model" / "document.py")


def test_graph_panel_draws_and_the_handler_handles():
    from curveeditor.app.graphs import input as graph_input
    from curveeditor.app.graphs import panel as graphs

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
    from curveeditor.app.keys import commands as key_commands
    from curveeditor.app.recipe import form as recipe_form
    from curveeditor.app.recipe import panel as recipe_panel
    from curveeditor.app.recipe import preview as recipe_preview
    from curveeditor.app.recipe import steps as recipe_steps
    from curveeditor.app.window import actions as window_actions
    from curveeditor.app.window import file_menu as window_files
    from curveeditor.app.window import layout as window_layout
    from curveeditor.app.window import main_window

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
    from curveeditor.app.graphs import input as graph_input
    from curveeditor.app.graphs import marks as graph_marks
    from curveeditor.app.graphs import panel as graphs
    from curveeditor.app.graphs import track_drawer as graph_tracks

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


def test_the_editor_is_in_packages_by_what_they_hold():
    """Issue 19: no flat modules beside the entry point; every package says what it holds."""
    flat = sorted(p.name for p in APP.glob("*.py"))
    assert flat == ["__init__.py", "main.py"], flat
    packages = sorted(p.parent.name for p in APP.glob("*/__init__.py"))
    assert packages == [
        "common",
        "dope_sheet",
        "graphs",
        "keys",
        "model",
        "recipe",
        "tracks",
        "view3d",
        "window",
    ]
    for name in packages:
        doc = ast.get_docstring(ast.parse((APP / name / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 60, name
