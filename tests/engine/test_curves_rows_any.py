"""``engine.curves.rows_any``: the drag path's row reduction gives what ``np.any(axis=1)`` gives."""

from __future__ import annotations

import numpy as np
import pytest

from curveeditor.engine.curves import rows_any


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (7, 3), (742, 4), (72_000, 3)])
def test_rows_any_is_any_along_the_rows(shape):
    rng = np.random.default_rng(shape[0])
    for density in (0.0, 0.001, 0.5, 1.0):
        m = rng.random(shape) < density
        got = rows_any(m)
        assert got.dtype == bool and got.shape == (shape[0],)
        np.testing.assert_array_equal(got, np.any(m, axis=1))
    one = rng.random(shape[0]) < 0.5
    np.testing.assert_array_equal(rows_any(one), one)  # a (N,) mask as it is
