"""Package data: the bundled sample clips in ``samples/`` (``demo.anim``, ``demo.csv``).

They ship with the package (``[tool.setuptools.package-data]`` in pyproject.toml), so ``pip install .``
alone gives the editor its start-up clip. ``python -m curveeditor.samples`` regenerates them from
:func:`curveeditor.samples.demo_clip`, and ``tests/test_samples.py`` fails when they are stale. This
module imports nothing heavy: the editor asks for the path before its first paint.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SAMPLES_DIR"]

#: Folder of the bundled sample clips (inside the installed package).
SAMPLES_DIR = Path(__file__).resolve().parent / "samples"
