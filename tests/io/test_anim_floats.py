"""The vectorized float32 spelling (floats.format_bytes) against numpy's own Dragon4 shortest
spelling, the reference the .anim writer used before (one Python string per number)."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.io.anim.floats import _fix_numpy, _g9, format_floats


def reference(values, style):
    f32 = np.asarray(values, dtype=np.float64).astype(np.float32)
    if style == "g9":
        return [_g9(float(x)) for x in f32]
    out = []
    for s in f32.astype(str).tolist():
        if "e" in s or "n" in s:
            out.append(_fix_numpy(s, style))
        elif s.endswith(".0"):
            out.append(s[:-2])
        else:
            out.append(s)
    return out


def sample_values(seed: int, n: int = 20000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    bits = bits[np.isfinite(bits)].astype(np.float64)
    special = [0.0, -0.0, np.inf, -np.inf, 16777216.0, 16777217.0, 2.0**-149, 3.4028235e38, 1e21, 1e-9]
    special += [0.5, 1.0, 2.0, 1 / 3, 0.1, 1e-10, 1e20, 1e15, 1e-5, 1e-4, 123456789.0, 1e9, 1e8, 1 / 60]
    frames = np.arange(-3000, 3000) / 30.0
    return np.concatenate([bits, rng.normal(0, 90, n), rng.uniform(-1, 1, n), frames, special])


@pytest.mark.parametrize("style", ["modern", "g9", "net"])
def test_spellings_match_numpy_dragon4(style):
    vals = sample_values(3)
    got = format_floats(vals, style)
    want = reference(vals, style)
    bad = [(v, a, b) for v, a, b in zip(vals, got, want, strict=True) if a != b]
    assert not bad, bad[:5]


def test_every_spelling_reads_back_as_the_same_float32():
    vals = sample_values(4).astype(np.float32)
    got = format_floats(vals)
    back = np.array([float(s) for s in got]).astype(np.float32)
    assert np.array_equal(back, vals)
