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

__all__ = ["STYLES", "format_floats", "format_float", "format_bytes", "format_matrix", "detect_style"]

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

    Raises ``ValueError`` on NaN (Unity never writes one and our reader rejects it) and on finite
    values past float32's range.
    """
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    if a.shape[0] < _SMALL:
        return _format_small(a, style)
    buf, lengths = format_bytes(a, style)
    text = buf.tobytes().decode("ascii")
    ends = np.cumsum(lengths).tolist()
    out = []
    a = 0
    for e in ends:
        out.append(text[a:e])
        a = e
    return out


_SMALL = 64  # below this many values numpy's own Dragon4 per value beats the vectorized passes' overhead


def _format_small(a: np.ndarray, style: str) -> list[str]:
    """Few values: numpy's float32 Dragon4 spelling per value, fixed up to the style (the per-call
    cost of the vectorized path was ~2 ms, which 37,000 one-key curves of a deep BVH paid)."""
    f32 = _check(a)
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


def _check(a: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        f32 = a.astype(np.float32)
    if np.isfinite(f32).all():  # the common case in one test; infinities (stepped slopes) go on
        return f32
    if np.any(np.isnan(a)):
        raise ValueError("cannot write NaN")
    with np.errstate(over="ignore"):
        f32 = a.astype(np.float32)
    over = np.isinf(f32) & np.isfinite(a)
    if np.any(over):
        # Infinity is a real slope (stepped keys), but a finite number past float32's range would be
        # written as Infinity: a file the reader (and Unity) takes for something else.
        raise ValueError(f"value {a[over][0]:g} is outside float32's range (Unity stores float32)")
    return f32


_POW10 = 10.0 ** np.arange(0, 23)


_P10I = 10 ** np.arange(19, dtype=np.int64)
_DIGITS3 = np.frombuffer(b"".join(b"%03d" % i for i in range(1000)), dtype=np.uint8).reshape(1000, 3)


def _scale(a: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``a * 10**s`` in float64 (``s`` int array, any sign, |s| <= 66): up to three correctly rounded
    steps with table powers (``np.power`` per element was 10x slower)."""
    pos = s >= 0
    t = np.abs(s)
    k1 = np.minimum(t, 22)
    t = t - k1
    k2 = np.minimum(t, 22)
    k3 = t - k2
    f = _POW10[k1]
    out = np.where(pos, a * f, a / f)
    f = _POW10[k2] * _POW10[np.minimum(k3, 22)]
    return np.where(pos, out * f, out / f)


def _decimal_exponent(x: np.ndarray) -> np.ndarray:
    """``floor(log10(x))`` exactly (x > 0 float64), corrected where log10 rounds across a power."""
    e = np.floor(np.log10(x)).astype(np.int64)
    ones = np.ones(x.shape[0])
    e -= (_scale(ones, e) > x).astype(np.int64)
    e += (_scale(ones, e + 1) <= x).astype(np.int64)
    return e


def shortest_digits(f32: np.ndarray):
    """``(m, p, e, exact)`` for finite non-zero float32 values: the shortest decimal ``m`` (``p``
    digits, int64) with ``x = m.ddd * 10**e`` that reads back as the same float32 and, of those,
    the closest (what numpy's Dragon4 prints). ``exact`` is False where float64 arithmetic cannot
    decide (ties, interval edges, powers of two): the caller spells those with Dragon4 itself.

    Vectorized: every value is scaled once to nine integer digits (``y``), with its float32 rounding
    interval ``(lo, hi)`` in the same units; the candidates of 1..9 digits are ``y`` rounded to
    multiples of ``10**(9-p)``, all tested at once. numpy's ``astype(str)`` took 1.2 us and 128 bytes
    per value (7 s and 770 MB for 6M numbers).
    """
    x = np.abs(f32.astype(np.float64))
    e = _decimal_exponent(x)
    x32 = np.abs(f32)
    with np.errstate(over="ignore"):
        lo = (x + np.nextafter(x32, np.float32(0)).astype(np.float64)) / 2
        hi = (x + np.nextafter(x32, np.float32(np.inf)).astype(np.float64)) / 2
    y = _scale(x, 8 - e)  # in [1e8, 1e9)
    lo_s = _scale(lo, 8 - e)
    hi_s = _scale(hi, 8 - e)
    # The closest p-digit decimal fits the (symmetric) interval => so does the closest (p+1)-digit
    # one: "fits" is monotone in p, so a binary search over p = 1..9 needs 4 tests (9 always fits).
    n = x.shape[0]
    plo = np.ones(n, dtype=np.int64)
    phi = np.full(n, 9, dtype=np.int64)
    exact = np.ones(n, dtype=bool)
    for _ in range(4):
        mid = (plo + phi) // 2
        q = _POW10[9 - mid]
        r = y / q
        c = np.rint(r)
        cs = c * q
        eps = 1e-4 * np.maximum(1.0, 1e-9 * y)
        exact &= ~(
            (np.abs(np.abs(r - c) - 0.5) < 1e-6) | (np.abs(cs - lo_s) < eps) | (np.abs(cs - hi_s) < eps)
        )
        fits = (cs > lo_s) & (cs < hi_s)
        phi = np.where(fits, mid, phi)
        plo = np.where(fits, plo, mid + 1)
    p = phi
    q = _POW10[9 - p]
    r = y / q
    c = np.rint(r)
    cs = c * q
    eps = 1e-4 * np.maximum(1.0, 1e-9 * y)
    exact &= ~((np.abs(np.abs(r - c) - 0.5) < 1e-6) | (np.abs(cs - lo_s) < eps) | (np.abs(cs - hi_s) < eps))
    exact &= (cs > lo_s) & (cs < hi_s)
    # A power of two has a narrower interval below it: the closest candidate may miss while a
    # farther one above fits. Rare; left to Dragon4.
    exact &= ((f32.view(np.uint32) & 0x7FFFFF) != 0) & np.isfinite(hi)
    m = c.astype(np.int64)
    over = m >= _P10I[p]
    m = np.where(over, m // 10, m)
    e = e + over
    return m, p.astype(np.int64), e, exact


def _dragon4(v: np.float32) -> tuple[int, int, int]:
    """``(m, p, e)`` from numpy's own shortest spelling of one float32."""
    s = np.format_float_scientific(np.abs(v), unique=True, trim="-", exp_digits=1)
    mant, _, ex = s.partition("e")
    digits = mant.replace(".", "")
    return int(digits), len(digits), int(ex)


def _g9_digits(f32: np.ndarray):
    """``(m, p, e, exact)`` of ``'%.9g'``: nine significant digits, trailing zeros stripped."""
    x = np.abs(f32.astype(np.float64))
    n = x.shape[0]
    e = _decimal_exponent(x)
    y = _scale(x, 8 - e)
    m = np.rint(y)
    exact = np.abs(np.abs(y - m) - 0.5) > 1e-6
    over = m >= 1e9
    m = np.where(over, np.rint(m / 10), m).astype(np.int64)
    e = e + over
    p = np.full(n, 9, dtype=np.int64)
    for _ in range(8):  # strip trailing zeros
        z = (m % 10 == 0) & (p > 1)
        if not z.any():
            break
        m = np.where(z, m // 10, m)
        p -= z
    return m, p, e, exact


_CHUNK = 8192  # values per pass: the temporaries stay in cache (3x faster than whole arrays)


def format_bytes(values, style: str = "modern") -> tuple[np.ndarray, np.ndarray]:
    """Every value spelled as in :func:`format_floats`, as one ``uint8`` buffer of the spellings
    back to back and their lengths ``(N,)`` (vectorized; no Python object per number)."""
    mat, lengths = format_matrix(values, style)
    keep = np.arange(mat.shape[1])[None, :] < lengths[:, None]
    return mat[keep], lengths


def format_matrix(values, style: str = "modern") -> tuple[np.ndarray, np.ndarray]:
    """Every value spelled as in :func:`format_floats`, one per row of a ``uint8`` matrix ``(N, W)``
    (left-aligned, ``W`` the longest spelling, padding unspecified) and the lengths ``(N,)``: the
    form the ``.anim`` writer splices key lines from (one boolean compress per block of keys)."""
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    if a.shape[0] < _SMALL:
        texts = [t.encode("ascii") for t in _format_small(a, style)]
        lengths = np.array([len(t) for t in texts], dtype=np.int64)
        w = int(lengths.max()) if texts else 1
        mat = np.zeros((len(texts), w), dtype=np.uint8)
        for i, t in enumerate(texts):
            mat[i, : len(t)] = np.frombuffer(t, dtype=np.uint8)
        return mat, lengths
    f32 = _check(a)
    if a.shape[0] <= _CHUNK:
        return _format_chunk(f32, style)
    parts = [_format_chunk(f32[i : i + _CHUNK], style) for i in range(0, a.shape[0], _CHUNK)]
    w = max(m.shape[1] for m, _ in parts)
    mat = np.zeros((a.shape[0], w), dtype=np.uint8)
    row = 0
    for m, _ in parts:
        mat[row : row + m.shape[0], : m.shape[1]] = m
        row += m.shape[0]
    return mat, np.concatenate([n for _, n in parts])


def _format_chunk(f32: np.ndarray, style: str) -> tuple[np.ndarray, np.ndarray]:
    """``(matrix (n, W), lengths (n,))`` of one chunk (see :func:`format_matrix`)."""
    n = f32.shape[0]
    neg = np.signbit(f32)
    fin = np.isfinite(f32)
    zero = f32 == 0
    reg = np.flatnonzero(fin & ~zero)
    W = 32
    mat = np.full((n, W), 48, dtype=np.uint8)  # '0'
    length = np.zeros(n, dtype=np.int64)
    # Sign.
    sgn = neg.astype(np.int64)
    mat[neg, 0] = 45
    # Zeros: "0" / "-0".
    length[zero] = 1 + sgn[zero]
    # Infinities.
    for sign, txt in ((False, b"Infinity"), (True, b"-Infinity")):
        sel = ~fin & (neg == sign)
        if np.any(sel):
            mat[np.ix_(np.flatnonzero(sel), np.arange(len(txt)))] = np.frombuffer(txt, dtype=np.uint8)
            length[sel] = len(txt)
    if reg.size:
        fr = f32[reg]
        if style == "g9":
            m, p, e, exact = _g9_digits(fr)
        else:
            m, p, e, exact = shortest_digits(fr)
        for j in np.flatnonzero(~exact).tolist():
            if style == "g9":
                txt = f"{abs(float(fr[j])):.9g}"
                mant, _, ex = txt.partition("e")
                if ex:
                    e_j = int(ex)
                    dig = mant.replace(".", "")
                else:
                    e_j = int(np.floor(np.log10(abs(float(fr[j])))))
                    dig = mant.replace(".", "").lstrip("0")
                    e_j = len(mant.split(".")[0]) - 1 if abs(float(fr[j])) >= 1 else e_j
                dig = dig.rstrip("0") or "0"
                m[j], p[j], e[j] = int(dig), len(dig), e_j
            else:
                m[j], p[j], e[j] = _dragon4(fr[j])
        _spell(mat, length, reg, sgn[reg], m, p, e, style)
    return mat[:, : max(1, int(length.max()))], length


def _spell(mat, length, rows, s0, m, p, e, style) -> None:
    """Write the characters of ``m * 10**(e - p + 1)`` (sign ``s0`` = 1 for negatives) into
    ``mat[rows]`` and their lengths into ``length[rows]``.

    A gather, not a scatter: each row gets a small table of the bytes it can hold (its nine digits,
    '0', '.', the exponent letter, sign and digits, '-'), and every output column picks its table
    entry. Which entry depends only on (sign, exponent, digit count): those patterns are computed
    once per style (:func:`_patterns`) and looked up. The scatter of one digit at a time this
    replaces (fancy-indexed writes) took 1.5 us per number; this takes ~0.15 us."""
    R = rows.shape[0]
    m9 = m * _P10I[9 - p]  # nine digits, zero-padded on the right
    hi3, rest = np.divmod(m9, 1000000)
    mid3, lo3 = np.divmod(rest, 1000)
    letter, pad = _EXP_STYLE[style]
    table = np.empty((R, _T_SIZE), dtype=np.uint8)
    table[:, 0:3] = _DIGITS3[hi3]
    table[:, 3:6] = _DIGITS3[mid3]
    table[:, 6:9] = _DIGITS3[lo3]
    table[:, _T_ZERO] = 48
    table[:, _T_DOT] = 46
    table[:, _T_LETTER] = letter
    table[:, _T_MINUS] = 45
    sci = np.flatnonzero(_scientific(e, style))
    if sci.size:
        # Exponent sign and digits (left-aligned: nd of them from 10**(nd-1) down); positional
        # numbers never read these entries.
        es = e[sci]
        ae = np.abs(es)
        nd = np.where(ae >= 100, 3, np.maximum(np.where(ae >= 10, 2, 1), pad))
        table[sci, _T_ESIGN] = np.where(es < 0, 45, 43)
        for j in range(3):
            place = _P10I[np.maximum(nd - 1 - j, 0)]
            table[sci, _T_EXP + j] = (ae // place) % 10 + 48
    pat_idx, pat_len = _patterns(style, s0, e, p)
    cid = _pattern_id(s0, e, p)
    total = pat_len[cid]
    w = int(total.max())
    idx = pat_idx[cid, :w]
    got = np.take_along_axis(table, idx.astype(np.intp), axis=1)
    if R == mat.shape[0]:  # every number regular (no zeros or infinities): rows is arange(R)
        mat[:, :w] = got
    else:
        mat[rows, :w] = got
    length[rows] = total


_T_ZERO, _T_DOT, _T_LETTER, _T_ESIGN, _T_EXP, _T_MINUS = 9, 10, 11, 12, 13, 16
_T_SIZE = 17
_EXP_STYLE = {"g9": (101, 2), "net": (69, 2), "modern": (101, 1)}  # exponent letter, min digits
_W = 32  # longest spelling (a sign and 21 positional digits, or a scientific form)
#: style -> (table index per (pattern, column) (4096, 32) int8, length (4096,), computed (4096,)).
_PATTERNS: dict = {}


def _scientific(e: np.ndarray, style: str) -> np.ndarray:
    """True where a number of decimal exponent ``e`` is spelled in scientific notation."""
    if style == "g9":
        return (e < -4) | (e >= 9)
    if style == "net":
        return (e < -4) | (e >= 15)
    return (e < -9) | (e >= 21)


def _pattern_id(s0: np.ndarray, e: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Pattern number of (sign, decimal exponent, digit count): float32 exponents are -45..38."""
    return (s0 * 128 + (e + 64)) * 16 + p


def _patterns(style: str, s0: np.ndarray, e: np.ndarray, p: np.ndarray):
    """The per-style pattern tables with every (sign, exponent, digit count) of these numbers filled."""
    got = _PATTERNS.get(style)
    if got is None:
        got = (np.zeros((4096, _W), dtype=np.int8), np.zeros(4096, dtype=np.int64), np.zeros(4096, bool))
        _PATTERNS[style] = got
    pat_idx, pat_len, known = got
    cid = _pattern_id(s0, e, p)
    if not known[cid].all():
        cid = np.unique(cid)
        new = cid[~known[cid]]
        ns0, rest = np.divmod(new, 128 * 16)
        ne, np_ = np.divmod(rest, 16)
        idx, ln = _pattern_rows(style, ns0, ne - 64, np_)
        pat_idx[new] = idx
        pat_len[new] = ln
        known[new] = True
    return pat_idx, pat_len


def _pattern_rows(style: str, s0: np.ndarray, e: np.ndarray, p: np.ndarray):
    """Table index of every output column (``(U, 32)``) and the length of the spelling, for numbers
    with sign ``s0`` (1 = negative), decimal exponent ``e`` and ``p`` significant digits."""
    sci = _scientific(e, style)
    pad = _EXP_STYLE[style][1]
    ae = np.abs(e)
    nd = np.where(ae >= 100, 3, np.maximum(np.where(ae >= 10, 2, 1), pad))
    mant_len = np.where(p > 1, p + 1, 1)
    lead = style == "g9"  # Unity's g9 drops the leading zero of 0.5 (".5")
    frac = e + 1 < p
    neg_e = e < 0
    ln = np.where(
        sci,
        mant_len + 2 + nd,
        np.where(neg_e, p - e + 1 - int(lead), np.where(frac, p + 1, e + 1)),
    )
    total = s0 + ln
    J = np.arange(_W)[None, :] - s0[:, None]  # position after the sign
    minus = J < 0
    if lead:
        J = J + (neg_e & ~sci)[:, None]  # skip the '0' of "0.xxx"
    e_ = e[:, None]
    p_ = p[:, None]
    # Positional, e >= 0: digits 0..e, then '.' and the rest; digits past p are zeros.
    k = J - (J > e_)
    pos_ge = np.where(J == e_ + 1, _T_DOT, np.where((k >= 0) & (k < p_), k, _T_ZERO))
    # Positional, e < 0: "0." then -e-1 zeros, then the digits from position 1 - e.
    z = J - (1 - e_)
    pos_lt = np.where(J == 1, _T_DOT, np.where((z >= 0) & (z < p_), z, _T_ZERO))
    # Scientific: d0 ['.' d1..d(p-1)] letter sign exponent-digits.
    ml = mant_len[:, None]
    after = J - ml
    pos_sci = np.where(
        J < ml,
        np.where(J == 0, 0, np.where(J == 1, _T_DOT, J - 1)),
        np.where(after == 0, _T_LETTER, np.where(after == 1, _T_ESIGN, _T_EXP + np.clip(after - 2, 0, 2))),
    )
    idx = np.where(sci[:, None], pos_sci, np.where(neg_e[:, None], pos_lt, pos_ge))
    idx = np.where(minus, _T_MINUS, np.clip(idx, 0, _T_SIZE - 1))
    return idx.astype(np.int8), total


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
