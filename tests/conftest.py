"""Shared test fixtures.

The real sample clips live outside the repository in ``../shared/corpus`` (or ``$CURVEEDITOR_CORPUS``);
tests that need them use the ``corpus_dir`` fixture and skip cleanly when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: The keys of one track in ``inspect --json`` (issue 2), in order: the schema both the engine's
#: ``TrackReport.as_dict`` and the CLI must produce exactly.
INSPECT_TRACK_KEYS = [
    "path",
    "kind",
    "order",
    "keys",
    "start",
    "end",
    "wrap_jumps",
    "euler_flips",
    "hemisphere_flips",
    "gimbal_keys",
    "spikes",
    "max_angular_speed",
    "pops",
]


def with_weights(curve, weight: float = 0.25):
    """``curve`` with every key's weights set to ``weight`` (unweighted still): weights other than
    Unity's default 1/3, so a new ``.anim`` holds this curve as serializedVersion 3 keys, with the
    ``weightedMode``/``inWeight``/``outWeight`` fields the key parser's tests probe."""
    from dataclasses import replace

    import numpy as np

    w = np.full_like(curve.in_weight, weight)
    return replace(curve, in_weight=w, out_weight=w)


def corpus_root() -> Path | None:
    env = os.environ.get("CURVEEDITOR_CORPUS")
    root = Path(env) if env else REPO.parent / "shared" / "corpus"
    return root if root.is_dir() else None


def corpus_files(sub: str, pattern: str) -> list[Path]:
    """Files of ``corpus/sub`` matching ``pattern``, sorted; empty when the corpus is absent."""
    root = corpus_root()
    if root is None or not (root / sub).is_dir():
        return []
    return sorted((root / sub).glob(pattern))


@pytest.fixture
def corpus_dir() -> Path:
    root = corpus_root()
    if root is None:
        pytest.skip("../shared/corpus is not present")
    return root


@pytest.fixture
def samples_dir() -> Path:
    from curveeditor.resources import SAMPLES_DIR

    return SAMPLES_DIR
