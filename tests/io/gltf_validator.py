"""Khronos glTF-Validator (npm ``gltf-validator``, run by Node.js) for the glTF tests.

``packaging/bootstrap.sh test`` installs it into ``.venv/node`` (CI has it); elsewhere the tests that
need it skip. ``$CURVEEDITOR_GLTF_VALIDATOR`` may name another ``node_modules/gltf-validator`` folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_SCRIPT = r"""
const fs = require('fs');
const validator = require(process.argv[1]);
const file = process.argv[2];
validator.validateBytes(new Uint8Array(fs.readFileSync(file)), {uri: file, maxIssues: 100})
  .then((r) => { console.log(JSON.stringify(r.issues)); })
  .catch((e) => { console.error(String(e)); process.exit(3); });
"""


def validator_dir() -> Path | None:
    env = os.environ.get("CURVEEDITOR_GLTF_VALIDATOR")
    path = Path(env) if env else REPO / ".venv" / "node" / "node_modules" / "gltf-validator"
    return path if (path / "package.json").is_file() else None


def available() -> bool:
    return shutil.which("node") is not None and validator_dir() is not None


def validate(path) -> dict:
    """The validator's ``issues`` report of ``path`` (``numErrors``, ``numWarnings``, ``messages``);
    skips the test when Node.js or the validator is not installed."""
    node = shutil.which("node")
    where = validator_dir()
    if node is None or where is None:
        pytest.skip("Node.js / gltf-validator not installed (bash packaging/bootstrap.sh test installs them)")
    out = subprocess.run(
        [node, "-e", _SCRIPT, str(where), str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def assert_valid(path, required: bool = False) -> dict | None:
    """0 errors and 0 warnings (information-level notes such as NODE_EMPTY for leaf joints are fine).

    Without Node.js / the validator: ``required`` skips the test, else nothing is checked (None), so a
    round-trip test keeps its own assertions (``test_gltf.py::test_validator_installed_in_ci`` is the
    one that needs it)."""
    if not required and not available():
        return None
    report = validate(path)
    bad = [m for m in report["messages"] if m["severity"] <= 1]
    assert report["numErrors"] == 0 and report["numWarnings"] == 0, bad
    return report
