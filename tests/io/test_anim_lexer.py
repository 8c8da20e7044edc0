""".anim line facts (lexer.Lines) from 8-byte windows agree with a byte-by-byte count."""

from __future__ import annotations

import random

import numpy as np

from curveeditor.io.anim.lexer import Lines, window


def plain_facts(data: bytes):
    """(start, indent, dash, blank) of every line, one byte at a time."""
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 10]
    if starts[-1] == len(data):
        starts = starts[:-1]
    ind, dash, blank = [], [], []
    for s in starts:
        i = s
        while i < len(data) and data[i] == 32:
            i += 1
        ind.append(i - s)
        c0 = data[i] if i < len(data) else 0
        c1 = data[i + 1] if i + 1 < len(data) else 0
        dash.append(c0 == 45 and c1 in (32, 10, 13))
        blank.append(c0 in (10, 13) or i >= len(data))
    return starts + [len(data)], ind, dash, blank


def test_lines_match_a_byte_by_byte_count_on_random_texts():
    rng = random.Random(5)
    for _ in range(1500):
        parts = []
        for _ in range(rng.randint(0, 8)):
            depth = rng.choice([0, 1, 2, 6, 7, 8, 9, 15, 16, 17, 40, 70, 200])
            parts.append(" " * depth + rng.choice(["", "-", "- ", "-x", "a: 1", "\r", "- b:"]))
        data = "\n".join(parts).encode() + (b"\n" if rng.random() < 0.5 else b"")
        lines = Lines(data)
        start, ind, dash, blank = plain_facts(data)
        assert lines.n == len(start) - 1
        assert lines.start.tolist() == start
        assert lines.indent.tolist() == ind, data
        assert lines.dash.tolist() == dash, data
        assert lines.blank.tolist() == blank, data


def test_window_reads_zeros_past_the_end():
    data = b"abcdefghij"
    got = window(data, np.array([0, 2, 3, 9, 10, 30]), 8)
    want = [int.from_bytes((data[p : p + 8] + bytes(8))[:8], "little") for p in (0, 2, 3, 9, 10, 30)]
    assert got.tolist() == want
    assert window(b"a", np.array([0, 1]), 2).tolist() == [ord("a"), 0]
