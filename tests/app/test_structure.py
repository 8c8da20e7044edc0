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
