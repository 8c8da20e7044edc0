#!/usr/bin/env bash
# Build the one-folder desktop bundle dist/curveeditor/ (executables: curveeditor, curveeditor-cli).
# Usage: bash packaging/build-bundle.sh        (from any directory; uses the repo's .venv)
# Env:   PYTHON=/path/to/python to use another environment that has curveeditor installed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
PYI_SPEC='pyinstaller>=6,<7'

if [[ ! -x "$PY" ]]; then
    echo "build-bundle: no Python at $PY (create the venv first: bash packaging/bootstrap.sh)" >&2
    exit 1
fi
if ! "$PY" -c 'import PyInstaller, sys; sys.exit(int(PyInstaller.__version__.split(".")[0]) != 6)' 2>/dev/null; then
    echo "build-bundle: installing $PYI_SPEC into $("$PY" -c 'import sys; print(sys.prefix)')"
    "$PY" -m pip install --quiet "$PYI_SPEC"
fi
"$PY" -c 'import curveeditor' || { echo "build-bundle: curveeditor is not installed in $PY" >&2; exit 1; }

cd "$ROOT"
start=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean \
    --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" \
    "$ROOT/packaging/pyinstaller/curveeditor.spec"
end=$(date +%s)

BUNDLE="$ROOT/dist/curveeditor"
for f in "$BUNDLE/curveeditor" "$BUNDLE/curveeditor-cli" "$BUNDLE/_internal/curveeditor/resources/samples/demo.anim"; do
    [[ -e "$f" ]] || { echo "build-bundle: missing $f" >&2; exit 1; }
done
echo "build-bundle: $BUNDLE ($(du -sh "$BUNDLE" | cut -f1)) built in $((end - start)) s"
echo "build-bundle: run $BUNDLE/curveeditor [FILE]   or   $BUNDLE/curveeditor-cli --help"
