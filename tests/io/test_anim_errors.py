"""Bad .anim input: every corruption raises ClipReadError naming the file, the line and the reason."""

from __future__ import annotations

import random
import re

import pytest

from curveeditor.io.anim import read_anim
from curveeditor.io.errors import ClipReadError
from tests.conftest import corpus_files

ANIMS = corpus_files("anim", "*.anim")
corpus = pytest.mark.skipif(not ANIMS, reason="../shared/corpus/anim is not present")
SMALL = [p for p in ANIMS if p.stat().st_size < 40000]


def expect_error(tmp_path, data: bytes | str, name="bad.anim", line=True) -> ClipReadError:
    p = tmp_path / name
    p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    with pytest.raises(ClipReadError) as info:
        read_anim(p)
    err = info.value
    assert err.path == str(p)
    assert str(err).startswith(f"{p}:")
    assert "\n" not in str(err)
    if line:
        assert err.line is not None and err.line >= 1
        n_lines = (data.count("\n") if isinstance(data, str) else data.count(b"\n")) + 1
        assert err.line <= n_lines
    return err


def test_missing_file(tmp_path):
    with pytest.raises(ClipReadError) as info:
        read_anim(tmp_path / "nope.anim")
    assert "nope.anim" in str(info.value)


def test_not_yaml_not_clip(tmp_path):
    assert "not a Unity" in expect_error(tmp_path, "hello world\n").reason
    assert "empty" in expect_error(tmp_path, "").reason
    prefab = "%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!1 &100\nGameObject:\n  m_Name: x\n"
    assert "not an AnimationClip" in expect_error(tmp_path, prefab).reason
    assert "control character" in expect_error(tmp_path, b"\x00\x01\x02garbage").reason
    assert "UTF-8" in expect_error(tmp_path, b"%YAML 1.1\n\xff\xfe\n").reason


@corpus
@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.name[:60])
def test_truncations(path, tmp_path):
    data = path.read_bytes()
    rng = random.Random(path.name)
    stripped = data.rstrip()
    offsets = sorted({rng.randrange(0, len(stripped)) for _ in range(25)} | {0, len(stripped) // 2})
    for off in offsets:
        expect_error(tmp_path, data[:off], line=off > 0)


@corpus
@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.name[:60])
def test_random_bytes(path, tmp_path):
    data = bytearray(path.read_bytes())
    rng = random.Random(path.name + "bytes")
    for _ in range(10):
        d = bytearray(data)
        pos = rng.randrange(0, len(d) - 16)
        d[pos : pos + 16] = bytes(rng.randrange(0, 256) for _ in range(16))
        if all(32 <= b < 127 or b in (9, 10, 13) for b in d[pos : pos + 16]):
            continue  # printable garbage may be valid text; control bytes never are
        expect_error(tmp_path, bytes(d))


def _variants(text: str):
    """(name, corrupted text) pairs for one clip text."""
    yield "nan value", re.sub(r"(\n +value: )[-\d.]+\n", r"\1nan\n", text, count=1)
    yield "NaN time", re.sub(r"(\n +time: )[-\d.]+\n", r"\1.NaN\n", text, count=1)
    yield "word value", re.sub(r"(\n +inSlope: )[-\d.]+\n", r"\1abc\n", text, count=1)
    yield "mapping for scalar", re.sub(r"(\n +outSlope: )[-\d.]+\n", r"\1{x: 1, y: 2}\n", text, count=1)
    yield "scalar for mapping", re.sub(r"(\n +value: )\{[^}\n]*\}\n", r"\g<1>1\n", text, count=1)
    yield "short vector", re.sub(r"(\n +inSlope: \{x: [^,]+), y: [^}\n]*\}\n", r"\1}\n", text, count=1)
    yield "deleted inSlope", re.sub(r"\n +inSlope: [^\n]*(?=\n)", "", text, count=1)
    yield "deleted time", re.sub(r"\n +time: [^\n]*(?=\n)", "", text, count=1)
    yield "deleted path", re.sub(r"\n    path:[^\n]*(?=\n)", "", text, count=1)
    yield "deleted sample rate", re.sub(r"\n  m_SampleRate: [^\n]*(?=\n)", "", text, count=1)
    yield "bad sample rate", re.sub(r"(\n  m_SampleRate: )[^\n]*", r"\1sixty", text, count=1)
    yield "zero sample rate", re.sub(r"(\n  m_SampleRate: )[^\n]*", r"\g<1>0", text, count=1)
    yield "list is scalar", re.sub(r"\n  m_Events: \[\]", "\n  m_Events: 5", text, count=1)
    yield "stray line", text.replace("\n  m_WrapMode:", "\nxyzzy\n  m_WrapMode:", 1)
    yield "unsorted times", _unsorted(text)
    yield "bad order", text.replace("m_RotationOrder: 4", "m_RotationOrder: 9", 1)
    yield "tangentMode float", re.sub(r"(\n +tangentMode: )\d+", r"\g<1>1.5", text, count=1)
    yield "second document", text + "--- !u!74 &7400001\nAnimationClip:\n  m_Name: b\n"


def _unsorted(text: str) -> str:
    """Swap the order of the first two key times of the first curve with two keys."""
    lines = text.splitlines(keepends=True)
    prev = None
    for i, ln in enumerate(lines):
        if "m_Curve" in ln or "m_PreInfinity" in ln or ln.startswith("  - "):
            prev = None
        elif re.match(r" +(- )?time: ", ln):
            if prev is not None:
                lines[prev] = re.sub(r"time: .*", "time: 5", lines[prev])
                lines[i] = re.sub(r"time: .*", "time: 1", lines[i])
                return "".join(lines)
            prev = i
    return text


@corpus
@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.name[:60])
def test_corrupted_variants(path, tmp_path):
    text = path.read_text(encoding="utf-8")
    tried = 0
    for name, bad in _variants(text):
        if bad == text:
            continue
        tried += 1
        try:
            err = expect_error(tmp_path, bad)
        except BaseException as exc:
            raise AssertionError(f"variant {name!r}: {exc}") from exc
        assert err.reason, name
    assert tried >= 6


@corpus
def test_error_names_the_exact_line(tmp_path):
    path = next(p for p in ANIMS if "Camera_Rot" in p.name)
    lines = path.read_text().splitlines(keepends=True)
    i = next(k for k, ln in enumerate(lines) if ln.strip().startswith("value: {x: 0, y: -30"))
    lines[i] = lines[i].replace("y: -30", "y: nan")
    err = expect_error(tmp_path, "".join(lines))
    assert err.line == i + 1 and "NaN" in err.reason
    lines = path.read_text().splitlines(keepends=True)
    j = next(k for k, ln in enumerate(lines) if ln.strip() == "tangentMode: 34")
    del lines[j]
    err = expect_error(tmp_path, "".join(lines))
    assert abs(err.line - (j + 1)) <= 5 and "tangentMode" in err.reason


@corpus
def test_rotation_order_out_of_range_on_any_curve(tmp_path):
    """m_RotationOrder is Unity's RotationOrder enum 0..5 on every curve (scalar ones too): 6 is refused
    at its own line, not only on Euler curves."""
    path = next(p for p in ANIMS if "Camera_Rot" in p.name)
    lines = path.read_text().splitlines(keepends=True)
    i = max(k for k, ln in enumerate(lines) if ln.strip() == "m_RotationOrder: 4")
    lines[i] = lines[i].replace("m_RotationOrder: 4", "m_RotationOrder: 6")
    err = expect_error(tmp_path, "".join(lines))
    assert err.line == i + 1 and "0..5" in err.reason and "got 6" in err.reason


def test_value_past_float32_range_is_one_typed_error_without_numpy_warnings(tmp_path):
    import warnings
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "resources" / "samples" / "demo.anim"
    lines = demo.read_text().splitlines(keepends=True)
    i = next(k for k, ln in enumerate(lines) if ln.strip().startswith("value: {x: "))
    lines[i] = re.sub(r"x: [^,]+,", "x: 1e39,", lines[i], count=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's 'overflow encountered in cast' used to leak to stderr
        err = expect_error(tmp_path, "".join(lines))
    assert err.line == i + 1 and "float32" in err.reason


def test_writing_a_value_past_float32_range_is_refused(tmp_path):
    # 1e39 deg read from a CSV was written as 'Infinity' (exit 0), a file our reader then rejects.
    import os
    import warnings

    from curveeditor.io import read_clip, write_clip
    from curveeditor.io.errors import ClipReadError, ClipWriteError

    src = tmp_path / "big.csv"
    src.write_text("time,x,y,z\n0,0,0,0\n1,1e39,0,0\n")
    with pytest.raises(ClipReadError, match="beyond"):  # the CSV reader now refuses it (io/csv_io.py)
        read_clip(src)
    import numpy as np

    from curveeditor.engine.clip import Clip, RotationTrack
    from curveeditor.engine.tangents import make_curve

    values = np.array([[0.0, 0.0, 0.0], [1e39, 0.0, 0.0]])
    clip = Clip("big", 30.0, [RotationTrack("", "euler", make_curve(np.array([0.0, 1.0]), values))])
    with warnings.catch_warnings(), pytest.raises(ClipWriteError, match="float32"):
        warnings.simplefilter("error")
        write_clip(clip, tmp_path / "big.anim")
    assert os.listdir(tmp_path) == ["big.csv"]
