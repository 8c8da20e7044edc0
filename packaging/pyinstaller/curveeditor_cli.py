"""Frozen entry point of the bundled ``curveeditor-cli`` (headless: no Qt is imported)."""

import sys

from curveeditor.cli import main

if __name__ == "__main__":
    sys.exit(main())
