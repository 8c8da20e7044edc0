"""Numbers as Unity writes them in ``.anim`` YAML: float32, in one of three historical spellings.

Styles (measured on every number of the corpus, ``tests/io/test_anim_roundtrip.py`` checks them):

* ``"modern"`` (Unity 5.3 and later): the shortest decimal that reads back as the same float32
  (``0.033333335``, ``0.33333334``); positional for ``1e-9 <= |x| < 1e21`` (``0.0000000021619235``),
  scientific below with a lower-case ``e`` and no zero padding (``1.341595e-10``, ``3e-45``);
  ``-0`` for negative zero; ``Infinity`` / ``-Infinity``.
* ``"g9"`` (Unity 4.3 to 5.2): nine significant digits (``%.9g``) with the leading zero dropped
  (``.0166666675``, ``-.998090386``, ``57.1351318``).
* ``"net"`` (Unity 4.0 to 4.2, clip serializedVersion 3): shortest float32 digits, scientific below
  1e-4 with a .NET-style exponent (``3.8146973E-06``, ``-4.9461807E-05``).

The upper positional bound of the modern style (1e21) is inferred (no corpus value is that large).
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["STYLES", "format_floats", "format_float", "detect_style"]

STYLES = ("modern", "g9", "net")

_SCI = re.compile(r"^(-?)(\d)(?:\.(\d+))?e([-+])(\d+)$")


def _digits_to_positional(sign: str, d0: str, frac: str, exp: int) -> str:
    digits = d0 + frac
    point = 1 + exp  # position of the decimal point in ``digits``
    if point <= 0:
        s = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        s = digits + "0" * (point - len(digits))
    else:
        s = digits[:point] + "." + digits[point:]
    return sign + s


def _fix_numpy(s: str, style: str) -> str:
    """Turn numpy's float32 shortest spelling into the style's spelling (rare cases only)."""
    if s == "inf":
        return "Infinity"
    if s == "-inf":
        return "-Infinity"
    if s.endswith(".0"):
        s = s[:-2]
    m = _SCI.match(s)
    if m is None:
        return s
    sign, d0, frac, esign, edig = m.groups()
    frac = frac or ""
    exp = int(edig) * (-1 if esign == "-" else 1)
    if style == "net":
        if exp < -4 or exp >= 15:
            mant = d0 + ("." + frac if frac else "")
            return f"{sign}{mant}E{'-' if exp < 0 else '+'}{abs(exp):02d}"
        return _digits_to_positional(sign, d0, frac, exp)
    if -9 <= exp < 21:
        return _digits_to_positional(sign, d0, frac, exp)
    mant = d0 + ("." + frac if frac else "")
    return f"{sign}{mant}e{'-' if exp < 0 else '+'}{abs(exp)}"


def _g9(x: float) -> str:
    if np.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    s = f"{x:.9g}"
    if s.startswith("0."):
        return s[1:]
    if s.startswith("-0."):
        return "-" + s[2:]
    return s


def format_floats(values, style: str = "modern") -> list[str]:
    """Spell every value (any shape; flattened, C order) as Unity writes float32 in ``style``.

    Raises ``ValueError`` on NaN (Unity never writes one and our reader rejects it).
    """
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    if np.any(np.isnan(a)):
        raise ValueError("cannot write NaN")
    with np.errstate(over="ignore"):
        f32 = a.astype(np.float32)
    over = np.isinf(f32) & np.isfinite(a)
    if np.any(over):
        # Infinity is a real slope (stepped keys), but a finite number past float32's range would be
        # written as Infinity: a file the reader (and Unity) takes for something else.
        raise ValueError(f"value {a[over][0]:g} is outside float32's range (Unity stores float32)")
    if style == "g9":
        return [_g9(float(x)) for x in f32]
    # numpy's float32 -> str is the shortest round-trip spelling (Dragon4), done in C; only the
    # spellings that differ from Unity's (x.0, exponents, inf) are fixed up in Python.
    raw = f32.astype(str).tolist()
    out = []
    for s in raw:
        if "e" in s or "n" in s:
            out.append(_fix_numpy(s, style))
        elif s.endswith(".0"):
            out.append(s[:-2])
        else:
            out.append(s)
    return out


def format_float(x: float, style: str = "modern") -> str:
    return format_floats([x], style)[0]


_LEADING_DOT = re.compile(r"[ :{,-]\.\d")
_NET_EXP = re.compile(r"\dE[-+]\d\d")


def detect_style(text: str, clip_version: int | None = None) -> str:
    """The number style a file was written with: ``g9`` when leading-dot numbers or nine-digit
    non-shortest spellings occur, ``net`` for .NET exponents / clip serializedVersion 3, else modern."""
    if _LEADING_DOT.search(text):
        return "g9"
    if _NET_EXP.search(text):
        return "net"
    sample = re.findall(r"(?<=value: )-?\d+\.\d{6,}(?=\n)", text[:200000])[:200]
    if sample:
        vals = np.array([float(s) for s in sample])
        if any(a != b for a, b in zip(format_floats(vals, "modern"), sample, strict=True)):
            return "g9" if clip_version is None or clip_version >= 4 else "net"
    if clip_version is not None and clip_version <= 3:
        return "net"
    return "modern"
