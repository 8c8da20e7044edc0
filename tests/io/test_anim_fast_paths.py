"""The .anim reader's fast paths pinned against the generic ones, bit for bit, on tricky input.

Each fast path (keys.py: the SWAR decimal parse; lexer.py / document.py: the line facts) must give
exactly what the generic path gives (``float`` / the careful parser / a byte-by-byte count), or hand
the input to it. These tests fail when a fast path changes a value, a sign of zero or a verdict.
"""

from __future__ import annotations

import itertools
import random
import re

import numpy as np
import pytest

from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.rotations import euler_to_quat
from curveeditor.engine.tangents import make_curve
from curveeditor.io.anim import anim_text, keys
from curveeditor.io.anim.document import parse_document
from curveeditor.io.anim.keys import _plain_decimals, parse_key_block
from curveeditor.io.errors import ClipReadError
from tests.conftest import with_weights

PLAIN = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
TRICKY = [
    "0",
    "-0",
    "-0.0",
    "0.000",
    "-0.000000",
    "7",
    "-7",
    "0.33333334",
    "-0.009813714",
    "123456789012345",  # 15 digits: the largest the SWAR parse takes
    "1234567890123456",  # 16: numpy's
    "-12345678901234",
    "0.00000000000001",
    "99999999.999999",
    "3.4028235e+38",
    "1e-05",
    "1.5E-7",
    "5.",
    ".5",
    "-.5",
    "+1",
    "00012.5000",
    "1.2.3",
    "--1",
    "1-",
    "-",
    ".",
    "Infinity",
    "-inf",
]


def _frame(spellings: list[str], before: bytes = b"x: 12.5, y: ") -> tuple[bytes, np.ndarray, np.ndarray]:
    """Runs laid out as in a vector line: digits of another number just left of each run."""
    data = b" " * 16  # (a run ending in the first 16 bytes goes to numpy: no frame before it)
    ends = []
    for s in spellings:
        data += before + s.encode()
        ends.append(len(data))
        data += b"\n"
    return data + b" " * 16, np.array(ends), np.array([len(s) for s in spellings])


def _random_spellings(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        x = np.float32(rng.gauss(0, 1) * 10 ** rng.randint(-9, 6))
        k = rng.random()
        if k < 0.4:
            out.append(format(float(x), ".9g"))
        elif k < 0.7:
            out.append(np.format_float_positional(x, unique=True, trim="-"))
        else:
            out.append("".join(rng.choice("0123456789.-+eE") for _ in range(rng.randint(1, 17))))
    return out


def test_plain_decimals_take_exactly_plain_numbers_with_float_bits():
    spellings = TRICKY + _random_spellings(20000, 5)
    data, ends, lens = _frame(spellings)
    ok, val = _plain_decimals(data, ends, lens)
    for s, o, v in zip(spellings, ok.tolist(), val.tolist(), strict=True):
        plain = PLAIN.fullmatch(s) is not None and len(s) <= 15
        assert o == plain, s
        if o:  # same bits as float(): -0 stays -0.0
            assert np.float64(v).tobytes() == np.float64(float(s)).tobytes(), s
    assert ok.sum() > 10000


def test_plain_decimals_ignore_what_lies_left_of_the_run():
    for before in (b"", b"9", b"99999999999999999", b"-", b".", b": "):
        data, ends, lens = _frame(["1.25", "-3", "0.5"], before=b"  " + before)
        ok, val = _plain_decimals(data, ends, lens)
        assert ok.all() and val.tolist() == [1.25, -3.0, 0.5]


def _text_with(numbers: list[str]) -> str:
    """A Unity .anim whose key times, values and slopes are replaced by ``numbers`` (cycled)."""
    t = np.array([0.0, 0.5, 1.0, 1.5])
    e = np.array([[0.0, 0.0, 0.0], [10.0, 20.0, 30.0], [0.0, 90.0, 0.0], [1.0, 2.0, 3.0]])
    clip = Clip(
        "p",
        30.0,
        [
            RotationTrack("A", "euler", with_weights(make_curve(t, e))),
            RotationTrack("B", "quaternion", with_weights(make_curve(t, euler_to_quat(e)))),
        ],
    )
    text = anim_text(clip)[0]  # (serializedVersion 3 keys: every keyframe field)
    it = itertools.cycle(numbers)

    def sub_vector(m):
        return m.group(1) + re.sub(r"(: )[^,}]+", lambda _: ": " + next(it), m.group(2))

    text = re.sub(r"^( +(?:value|inSlope|outSlope): )(\{.*\})$", sub_vector, text, flags=re.M)
    return re.sub(
        r"^( +(?:value|inSlope|outSlope): )([^{\n]+)$", lambda m: m.group(1) + next(it), text, flags=re.M
    )


def test_fast_key_parse_matches_the_careful_parser_bit_for_bit(tmp_path, monkeypatch):
    """Numbers in every spelling the fast path splits between its parsers (plain, exponent, -0,
    odd zeros, 15/16 digits) in vector and scalar fields: the fast parse of the document gives the
    careful parser's bits, sign of zero included."""
    numbers = [s for s in TRICKY if re.fullmatch(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", s)]
    numbers += ["-0", "0.000", "1e-05"] * 3
    rng = random.Random(2)
    fallbacks = []
    careful = keys.parse_key_block
    monkeypatch.setattr(keys, "parse_key_block", lambda *a, **k: fallbacks.append(a[1]) or careful(*a, **k))
    for trial in range(6):
        rng.shuffle(numbers)
        text = _text_with(numbers)
        p = tmp_path / f"t{trial}.anim"
        p.write_text(text)
        doc = parse_document(p, text.encode())
        assert fallbacks == []  # every block went the fast way
        n = 0
        for lst in doc.entries.values():
            for e in lst:
                if e.keys is None:
                    continue
                slow = parse_key_block(doc.lines, e.extra["m_curve_line"] + 1, e.extra["key_end"], str(p))
                for f in ("time", "value", "in_slope", "out_slope", "in_weight", "out_weight"):
                    a, b = getattr(e.keys, f), getattr(slow, f)
                    assert (a is None) == (b is None)
                    if a is not None:
                        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), (
                            e.path,
                            f,
                        )
                n += 1
        assert n >= 2
        assert "-0" in text and "e-05" in text


@pytest.mark.parametrize(
    "old, new",
    [
        ("        time: 0.5", "        tyme: 0.5"),  # in the name's first 8 bytes (the group's window)
        ("        inSlope: {", "        inSlopz: {"),
        ("        inSlope: {", "        inSlope:{ "),  # the 9th byte (a window of its own)
        ("        outWeight: {", "        outWeighx: {"),
        ("        weightedMode: 0", "        weightedModa: 0"),
        ("        tangentMode: 0", "         tangentMode: 0"),
    ],
)
def test_a_field_name_wrong_in_any_byte_is_refused_as_the_careful_parser_does(tmp_path, old, new):
    text = _text_with(["1.5"])
    i = text.index(old, text.index(old) + 1)  # in a later key of the first block
    bad = text[:i] + new + text[i + len(old) :]
    p = tmp_path / "bad.anim"
    p.write_text(bad)
    with pytest.raises(ClipReadError) as info:
        parse_document(p, bad.encode())
    line = bad.count("\n", 0, i) + 1  # (an over-indented line is a continuation: the key's last)
    assert line <= info.value.line <= line + 8


def test_a_dash_and_carriage_return_before_the_first_field_is_refused(tmp_path):
    """Lines.dash holds "-\\r": the fast path must compare the key's "- " byte for byte."""
    text = _text_with(["1.5"])
    old = "      - serializedVersion: 3\n"
    i = text.index(old, text.index(old) + 1)
    bad = text[:i] + "      -\rserializedVersion: 3\n" + text[i + len(old) :]
    p = tmp_path / "bad.anim"
    p.write_bytes(bad.encode())
    with pytest.raises(ClipReadError):
        parse_document(p, bad.encode())
