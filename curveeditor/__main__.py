"""``python -m curveeditor [FILE]`` starts the editor."""

import sys

from curveeditor.app.main import main

sys.exit(main())
