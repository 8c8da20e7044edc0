"""Frozen entry point of the desktop bundle: the same ``main()`` as the ``curveeditor`` gui-script.

``curveeditor.app.main.main`` sets ``Qt.AA_ShareOpenGLContexts`` before the QApplication exists, so
the bundle keeps the shared-GL-context semantics. The sample clip needs no help here:
``files.sample_path()`` looks in ``curveeditor.resources.SAMPLES_DIR`` (next to the package's modules),
which in a one-folder bundle is ``sys._MEIPASS/curveeditor/resources/samples`` (the spec puts them there).
"""

import sys

from curveeditor.app.main import main

if __name__ == "__main__":
    sys.exit(main())
