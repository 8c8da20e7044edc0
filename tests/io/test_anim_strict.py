"""Strict where it matters, lenient where Unity is (docs/architecture.md, the .anim field table).

The fast keyframe parser accepts exactly what the careful one accepts (issue 11): every probe here
used to be read silently (or crashed later with a ValueError) and must now be a one-line
ClipReadError naming the file and the line.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys

import numpy as np
import pytest

from curveeditor.engine.clip import Clip, RotationTrack
from curveeditor.engine.rotations import euler_to_quat
from curveeditor.engine.tangents import make_curve
from curveeditor.io import read_clip, write_clip
from curveeditor.io.anim import anim_text, read_anim
from curveeditor.io.anim.document import parse_document
from curveeditor.io.anim.keys import parse_key_block
from curveeditor.io.errors import ClipReadError, ClipWriteError
from tests.conftest import corpus_files, with_weights

ANIMS = corpus_files("anim", "*.anim")
T = np.array([0.0, 0.5, 1.0])
E = np.array([[0.0, 0.0, 0.0], [10.0, 20.0, 30.0], [0.0, 90.0, 0.0]])


def base_text() -> str:
    """A new clip's text with every keyframe field (serializedVersion 3 keys: the curves have
    weights)."""
    clip = Clip(
        "p",
        30.0,
        [
            RotationTrack("A", "euler", with_weights(make_curve(T, E))),
            RotationTrack("B", "quaternion", with_weights(make_curve(T, euler_to_quat(E)))),
        ],
    )
    return anim_text(clip)[0]


def mutate(pattern: str, repl: str, count: int = 1) -> tuple[str, int]:
    """The base text with ``pattern`` replaced, and the 1-based line of the first replacement."""
    text = base_text()
    m = re.search(pattern, text, flags=re.M)
    assert m is not None, pattern
    line = text.count("\n", 0, m.start()) + 1
    return re.sub(pattern, repl, text, count=count, flags=re.M), line


def read_error(tmp_path, text: str) -> ClipReadError:
    p = tmp_path / "bad.anim"
    p.write_text(text)
    with pytest.raises(ClipReadError) as info:
        read_anim(p)
    err = info.value
    assert str(err).startswith(f"{p}:") and "\n" not in str(err)
    return err


PROBES = [
    ("time then garbage", r"(^ +time: 0\.5)$", r"\1 garbage", "time must be a number"),
    (
        "duplicate key in a flow mapping",
        r"value: \{x: 10, y: 20, z: 30\}",
        "value: {x: 0, x: 90, z: 0}",
        "twice",
    ),
    ("wrong component names", r"value: \{x: 10, y: 20, z: 30\}", "value: {q: 90, r: 0, s: 45}", "components"),
    (
        "junk after a component",
        r"value: \{x: 10, y: 20, z: 30\}",
        "value: {x: 360 junk, y: 20, z: 30}",
        "number",
    ),
    ("tangentMode as a mapping", r"tangentMode: 0", "tangentMode: {x: 1}", "tangentMode must be a number"),
    ("empty key serializedVersion", r"(- serializedVersion: )3", r"\1", "empty"),
    ("duplicated field line", r"(^ +time: 0\.5\n)", r"\1\1", "appears twice"),
    (
        "duplicated component in a wrapped mapping",
        r"^ +value: \{x: 10, y: 20, z: 30\}",
        "        value: {x: 10, y: 20,\n          z: 30, z: 30}",
        "twice",
    ),
    ("weightedMode past Unity's enum", r"weightedMode: 0", "weightedMode: 7", "weightedMode must be 0..3"),
    ("value past float32", r"value: \{x: 10,", "value: {x: -1e300,", "float32"),
    ("slope past float32", r"inSlope: \{x: [^,]+,", "inSlope: {x: 1e300,", "float32"),
    ("NaN", r"(^ +time: )0\.5$", r"\1.nan", "NaN"),
    ("underscore digits", r"(^ +time: )0\.5$", r"\g<1>0_5", "number"),
    ("unicode digits", r"(^ +time: )0\.5$", "\\g<1>\u0661", "number"),
    ("no space after a component colon", r"value: \{x: 10,", "value: {x:10,", "number"),
]


@pytest.mark.parametrize("name,pattern,repl,reason", PROBES, ids=[p[0] for p in PROBES])
def test_fast_parser_rejects_what_the_careful_one_rejects(tmp_path, name, pattern, repl, reason):
    text, line = mutate(pattern, repl)
    err = read_error(tmp_path, text)
    assert reason in err.reason, err.reason
    assert abs(err.line - line) <= 1, (err.line, line)


INDENTS = [
    ("one space deeper", r"^( +)(inSlope: \{x: )", r"\1 \2", "keyframe fields"),
    ("one space less", r"^( +) (inSlope: \{x: )", r"\1\2", "unexpected indentation"),
    ("a tab", r"^ +(tangentMode: 0)", "       \t\\1", "tab in indentation"),
]


@pytest.mark.parametrize("name,pattern,repl,reason", INDENTS, ids=[p[0] for p in INDENTS])
def test_a_key_field_indented_otherwise_is_refused(tmp_path, name, pattern, repl, reason):
    """The fast parser checks key lines' indentation from Lines.indent, not their bytes: a field line
    indented otherwise falls to the careful parser, which names the key."""
    text, line = mutate(pattern, repl)
    err = read_error(tmp_path, text)
    assert reason in err.reason, err.reason
    assert line - 4 <= err.line <= line, (err.line, line)


def test_zero_quaternion_key_is_a_typed_error_with_its_line(tmp_path):
    text, line = mutate(r"value: \{x: [^}]*, w: [^}]*\}", "value: {x: 0, y: 0, z: 0, w: 0}")
    err = read_error(tmp_path, text)
    assert err.line == line and "zero length" in err.reason


def test_clean_of_a_zero_quaternion_clip_fails_before_writing(tmp_path):
    # It used to crash with a traceback *after* writing its -o file.
    text, _ = mutate(r"value: \{x: [^}]*, w: [^}]*\}", "value: {x: 0, y: 0, z: 0, w: 0}")
    src = tmp_path / "zero.anim"
    src.write_text(text)
    out = tmp_path / "out.anim"
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    r = subprocess.run(
        [sys.executable, "-m", "curveeditor.cli", "clean", str(src), "--unwrap", "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 2
    assert r.stderr.strip().startswith("curveeditor-cli: error:") and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize(
    "pattern,repl,what",
    [
        (r"^(      serializedVersion: )2$", r"\1", "AnimationCurve serializedVersion is empty"),
        (r"^(  serializedVersion: )6$", r"\1", "clip serializedVersion is empty"),
        (r"^(    serializedVersion: )2$", r"\1", "serializedVersion is empty"),  # settings or binding
        (r"^(      serializedVersion: )2$", r"\1x", "must be a non-negative integer"),
    ],
)
def test_empty_version_fields_are_errors(tmp_path, pattern, repl, what):
    text, line = mutate(pattern, repl)
    err = read_error(tmp_path, text)
    assert what in err.reason and err.line == line


def test_duplicated_key_in_an_entry_mapping(tmp_path):
    text, _ = mutate(r"^(      m_PreInfinity: 2\n)", r"\1\1")
    assert "appears twice" in read_error(tmp_path, text).reason


def test_unknown_tangent_bits_are_read_as_free_and_kept(tmp_path):
    """Lenient where Unity is: tangentMode is an editor hint (the corpus has 0xCDCDCDCD garbage)."""
    text, _ = mutate(r"tangentMode: \d+", "tangentMode: 1023", count=0)
    p = tmp_path / "bits.anim"
    p.write_text(text)
    clip = read_anim(p)
    assert all(np.all(t.curve.tangent_mode == 0) for t in clip.tracks)
    out = tmp_path / "same.anim"
    write_clip(clip, out)
    assert out.read_bytes() == p.read_bytes()


def _blocks(doc):
    for lst in doc.entries.values():
        for e in lst:
            if e.keys is not None:
                yield e


@pytest.mark.skipif(not ANIMS, reason="../shared/corpus/anim is not present")
@pytest.mark.parametrize("path", ANIMS, ids=lambda p: p.name[:50])
def test_fast_and_careful_parsers_agree_on_the_corpus(path):
    doc = parse_document(path, path.read_bytes())
    for e in _blocks(doc):
        k0 = e.extra["m_curve_line"] + 1
        slow = parse_key_block(doc.lines, k0, e.extra["key_end"], str(path))
        fast = e.keys
        for f in ("time", "value", "in_slope", "out_slope", "tangent_mode", "weighted_mode", "key_lines"):
            assert np.array_equal(getattr(fast, f), getattr(slow, f)), (e.path, f)
        assert fast.version == slow.version and fast.n_components == slow.n_components


ALPHABET = "0123456789.+-eEIinfty :,x"


def test_fast_parser_accepts_exactly_what_the_careful_one_accepts(tmp_path):
    """Random number spellings in one key: the whole-document parse either fails with a ClipReadError
    or gives the careful parser's values (which is what float() gives for a valid Unity number)."""
    text = base_text()
    m = re.search(r"^( +time: )0\.5$", text, flags=re.M)
    rng = random.Random(11)
    spellings = [
        ".25",
        "+.75",
        "5e-1",
        "2.5E-1",
        "0.5e0",
        "5.e-1",
        "Infinity",
        "inf",
        ".inf",
        "1e",
        "1-2",
        "--1",
        ".",
    ]
    spellings += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 6))) for _ in range(150)]
    accepted = 0
    for s in spellings:
        bad = text[: m.start()] + m.group(1) + s + text[m.end() :]
        p = tmp_path / "r.anim"
        p.write_text(bad)
        try:
            doc = parse_document(p, bad.encode())
        except ClipReadError:
            continue
        for e in _blocks(doc):
            slow = parse_key_block(doc.lines, e.extra["m_curve_line"] + 1, e.extra["key_end"], str(p))
            assert np.array_equal(e.keys.time, slow.time) and np.array_equal(e.keys.value, slow.value)
        first = next(_blocks(doc))
        assert first.keys.time[1] == np.float32(float(s.replace(".inf", "inf")))
        accepted += 1
    assert accepted >= 3


NAMES = [
    "A\nB",
    'q"uote',
    "it's",
    "Armature/Hips 100%",
    "Bone%r",
    "A%%B",
    "a: b",
    "x:",
    "%x",
    "#c",
    " lead",
    "tab\tname",
    "ü nicode/mixamorig:Hips",
    "[x]",
    "back\\slash",
    "cr\r\nlf",
    "null",
]


def test_track_names_are_escaped_as_unity_does_and_read_back(tmp_path):
    tracks = [RotationTrack(n, "euler", make_curve(T, E + i)) for i, n in enumerate(NAMES)]
    clip = Clip("clip: 'x'\n", 30.0, tracks)
    out = tmp_path / "names.anim"
    write_clip(clip, out)
    text = out.read_text()
    assert '    path: "A\\nB"\n' in text  # double-quoted with escapes, as Unity writes line breaks
    back = read_clip(out)
    assert [t.path for t in back.tracks] == NAMES
    assert back.name == "clip: 'x'\n"
    for a, b in zip(tracks, back.tracks, strict=True):
        assert np.allclose(a.curve.value, b.curve.value, atol=1e-4)


def test_values_past_float32_are_a_typed_write_error_everywhere(tmp_path):
    # Built in memory: the CSV reader itself now refuses -1e300 deg (beyond its +-1e7 deg limit), so
    # only an edit can bring such a value to the writer.
    values = np.array([[0.0, 0.0, 0.0], [-1e300, 0.0, 0.0]])
    clip = Clip("big", 30.0, [RotationTrack("A", "euler", make_curve(np.array([0.0, 1.0]), values))])
    with pytest.raises(ClipWriteError, match="float32"):
        anim_text(clip, path=tmp_path / "big.anim")  # the editor's export check
    with pytest.raises(ClipWriteError, match="float32"):
        write_clip(clip, tmp_path / "big.anim")
    assert os.listdir(tmp_path) == []


def test_keys_closer_than_float32_time_resolution_are_a_typed_write_error(tmp_path):
    t = np.array([0.0, 1.0, 1.0 + 1e-9])
    clip = Clip("c", 30.0, [RotationTrack("A", "euler", make_curve(t, np.zeros((3, 3))))])
    with pytest.raises(ClipWriteError, match="float32"):
        anim_text(clip)


def test_a_run_of_two_numbers_cannot_make_up_for_an_empty_one(tmp_path):
    """'time:  ' (a blank run) in one key and 'x: 1 2' in another would give the right number count
    to a whitespace-splitting parse: both are errors."""
    text, line = mutate(r"(^ +time: )0\.5$", r"\1 ")
    text = re.sub(r"value: \{x: 10,", "value: {x: 1 2,", text, count=1)
    err = read_error(tmp_path, text)
    assert err.line == line and "time must be a number" in err.reason


def _nth_line(text: str, pattern: str, n: int) -> int:
    """1-based line of the ``n``-th (0-based) match of ``pattern``."""
    m = list(re.finditer(pattern, text, flags=re.M))[n]
    return text.count("\n", 0, m.start()) + 1


@pytest.mark.parametrize("spelling", ["73", "07", "0", "+3", "3.0"])
def test_a_later_keys_serialized_version_other_than_2_or_3_is_an_error(tmp_path, spelling):
    """The careful parser takes '2' or '3' in every key; the fast one used to take any integer in the
    keys after the first (it only read the first key's version)."""
    text = base_text()
    line = _nth_line(text, r"^      - serializedVersion: 3$", 1)
    lines = text.split("\n")
    lines[line - 1] = "      - serializedVersion: " + spelling
    err = read_error(tmp_path, "\n".join(lines))
    assert err.line == line and "serializedVersion must be 2 or 3" in err.reason


def test_a_version_2_first_key_with_version_3_fields_is_an_error(tmp_path):
    text, line = mutate(r"^(      - serializedVersion: )3$", r"\g<1>2")
    err = read_error(tmp_path, text)
    assert err.line == line and "do not match any Unity key layout" in err.reason


def test_a_version_3_first_key_without_weight_fields_is_an_error(tmp_path):
    """The other way round, in a new clip's unweighted (serializedVersion 2) keys."""
    clip = Clip("p", 30.0, [RotationTrack("A", "euler", make_curve(T, E))])
    text = anim_text(clip)[0]
    m = re.search(r"^(      - serializedVersion: )2$", text, flags=re.M)
    line = text.count("\n", 0, m.start()) + 1
    err = read_error(tmp_path, text[: m.start()] + m.group(1) + "3" + text[m.end() :])
    assert err.line == line and "do not match any Unity key layout" in err.reason


@pytest.mark.parametrize("spelling", ["infInity", "INFINITY", "Infinit"])
def test_infinity_spellings_numpy_reads_but_unity_does_not_write_are_errors(tmp_path, spelling):
    # numpy.fromstring reads "infInity" as inf; the fast path let it through.
    text, line = mutate(r"(^ +inSlope: \{x: )[^,]+,", rf"\g<1>{spelling},")
    err = read_error(tmp_path, text)
    assert err.line == line and "inSlope must be a number" in err.reason


def test_an_error_deep_in_a_long_curve_names_its_line(tmp_path):
    """A 30,000-key track (several fast-path groups of blocks) with one bad number near its end: the
    error names that line, as the careful parser counts it."""
    n = 30000
    t = np.arange(n) / 30.0
    e = np.stack([np.sin(t), np.cos(t), t % 7], axis=1) * 40.0
    clip = Clip("long", 30.0, [RotationTrack("A", "euler", make_curve(t, e))])
    text = anim_text(clip)[0]
    bad_key = 27_000
    line = _nth_line(text, r"^        time: ", bad_key)
    lines = text.split("\n")
    assert lines[line - 1].startswith("        time: ")
    lines[line - 1] = "        time: 9e9x"
    err = read_error(tmp_path, "\n".join(lines))
    assert err.line == line and "time must be a number" in err.reason
    ok = tmp_path / "ok.anim"
    ok.write_text(text)
    back = read_anim(ok).tracks[0].curve
    assert back.n_keys == n and np.array_equal(back.time, t.astype(np.float32).astype(np.float64))
