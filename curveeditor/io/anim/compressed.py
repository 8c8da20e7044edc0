"""Decoding ``m_CompressedRotationCurves`` (clips saved with ``m_Compressed: 1``, Unity 4 era).

Each entry packs one quaternion curve into three bit vectors, stored as hex strings (``m_Data``),
bits taken least-significant first from each byte, items back to back:

* ``m_Times`` (PackedIntVector, ``m_BitSize`` bits per item): time *deltas* in hundredths of a second;
  key ``i`` is at ``0.01 * sum(deltas[:i + 1])`` seconds.
* ``m_Values`` (PackedQuatVector, 32 bits per key): 3 flag bits (bits 0-1: index of the largest
  component, which is not stored; bit 2: its sign), then the other three components in x, y, z, w
  order, each quantized over [-1, 1] with 9 bits for the component right after the omitted one (cyclic)
  and 10 bits for the other two; the omitted one is ``sqrt(1 - sum of squares)``.
* ``m_Slopes`` (PackedFloatVector, ``m_BitSize`` bits, ``m_Start``/``m_Range``): ``4 N`` values
  (in = out slopes) or ``8 N`` (all in-slopes, then all out-slopes), x, y, z, w per key.

The layout is the one open-source Unity asset tools (AssetStudio, AssetRipper) implement; the
writer never produces it (it copies such entries verbatim).
"""

from __future__ import annotations

import numpy as np

__all__ = ["PackedDataError", "bits_of", "unpack_uints", "decode_compressed_curve"]


class PackedDataError(ValueError):
    """Inconsistent packed data; ``field`` names the sub-field (``"m_Times.m_Data"``) for the line."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field


def bits_of(hex_data: str, field: str = "m_Data") -> np.ndarray:
    """The bit stream of a hex ``m_Data`` string, least significant bit of each byte first."""
    h = hex_data.strip()
    if len(h) % 2 or any(c not in "0123456789abcdefABCDEF" for c in h):
        raise PackedDataError(field, f"is not a hex byte string ({len(h)} characters)")
    raw = np.frombuffer(bytes.fromhex(h), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")


def unpack_uints(bits: np.ndarray, count: int, bit_size: int, start_bit: int = 0) -> np.ndarray:
    """``count`` unsigned integers of ``bit_size`` bits each from ``bits`` (vectorized)."""
    if count == 0 or bit_size == 0:
        return np.zeros(count, dtype=np.int64)
    need = start_bit + count * bit_size
    if need > bits.shape[0]:
        raise ValueError(f"packed data holds {bits.shape[0]} bits, {need} needed")
    idx = start_bit + np.arange(count)[:, None] * bit_size + np.arange(bit_size)[None, :]
    weights = (1 << np.arange(bit_size, dtype=np.int64))[None, :]
    return (bits[idx].astype(np.int64) * weights).sum(axis=1)


def _int_field(group: dict, name: str, key: str, lo: int, hi: int) -> int:
    txt = (group.get(key) or "").strip()
    if not txt.lstrip("-").isdigit():
        raise PackedDataError(f"{name}.{key}", f"must be an integer, got {txt!r}")
    v = int(txt)
    if not lo <= v <= hi:
        raise PackedDataError(f"{name}.{key}", f"must be {lo}..{hi}, got {v}")
    return v


def _vector(group: dict, name: str, count: int, bit_size: int) -> np.ndarray:
    """The ``count`` items of a PackedIntVector/PackedFloatVector, checking the data length Unity
    writes (``ceil(count * bits / 8)`` bytes)."""
    bits = bits_of(group.get("m_Data", ""), f"{name}.m_Data")
    want = (count * bit_size + 7) // 8
    if bits.shape[0] // 8 != want:
        raise PackedDataError(
            f"{name}.m_Data",
            f"holds {bits.shape[0] // 8} bytes; {count} items of {bit_size} bits need {want}",
        )
    return unpack_uints(bits, count, bit_size)


def _unpack_quats(hex_data: str, count: int) -> np.ndarray:
    """PackedQuatVector: 32 bits per quaternion (3 flag bits, three components of 9/10/10 bits),
    decoded for all keys at once."""
    bits = bits_of(hex_data, "m_Values.m_Data")
    if bits.shape[0] != 32 * count:
        raise PackedDataError(
            "m_Values.m_Data", f"holds {bits.shape[0] // 8} bytes; {count} quaternions need {4 * count}"
        )
    out = np.zeros((count, 4))
    if count == 0:
        return out
    words = bits.reshape(count, 32).astype(np.int64)
    flags = words[:, 0] | (words[:, 1] << 1) | (words[:, 2] << 2)
    omitted = flags & 3
    for om in range(4):  # the bit layout depends only on which component is omitted
        rows = np.flatnonzero(omitted == om)
        if rows.size == 0:
            continue
        pos = 3
        total = np.zeros(rows.size)
        for j in range(4):
            if j == om:
                continue
            size = 9 if (om + 1) % 4 == j else 10
            w = 1 << np.arange(size, dtype=np.int64)
            x = (words[rows, pos : pos + size] * w).sum(axis=1)
            pos += size
            out[rows, j] = x / (0.5 * ((1 << size) - 1)) - 1.0
            total += out[rows, j] ** 2
        sign = np.where(flags[rows] & 4, -1.0, 1.0)
        out[rows, om] = np.sqrt(np.maximum(0.0, 1.0 - total)) * sign
    return out


def decode_compressed_curve(fields: dict[str, dict[str, str]]):
    """``(times (N,), values (N, 4), in_slopes (N, 4), out_slopes (N, 4))`` from an entry's
    ``m_Times`` / ``m_Values`` / ``m_Slopes`` sub-fields (strings as in the file), as Unity's
    ``CompressedAnimationCurve::DecompressQuatCurve`` does.

    Raises :class:`PackedDataError` (a ``ValueError``) when the data is inconsistent: counts that do
    not match, a data length that does not match the bit count, bad hex, bit sizes out of range,
    two keys at the same time.
    """
    for g in ("m_Times", "m_Values", "m_Slopes"):
        if g not in fields:
            raise PackedDataError(g, "is missing")
    t = fields["m_Times"]
    n_t = _int_field(t, "m_Times", "m_NumItems", 0, 1 << 24)
    t_bits = _int_field(t, "m_Times", "m_BitSize", 0, 32)
    deltas = _vector(t, "m_Times", n_t, t_bits)
    if n_t > 1 and np.any(deltas[1:] == 0):
        i = int(np.argmax(deltas[1:] == 0)) + 1
        raise PackedDataError("m_Times.m_Data", f"keys {i - 1} and {i} are at the same time")
    times = 0.01 * np.cumsum(deltas).astype(np.float64)
    v = fields["m_Values"]
    n = _int_field(v, "m_Values", "m_NumItems", 0, 1 << 24)
    if n != n_t:
        raise PackedDataError("m_Values.m_NumItems", f"{n} quaternions for {n_t} key times")
    values = _unpack_quats(v.get("m_Data", ""), n)
    s = fields["m_Slopes"]
    n_s = _int_field(s, "m_Slopes", "m_NumItems", 0, 1 << 27)
    size = _int_field(s, "m_Slopes", "m_BitSize", 0, 32)
    try:
        rng = float(s.get("m_Range", "0") or 0)
        start = float(s.get("m_Start", "0") or 0)
    except ValueError:
        raise PackedDataError("m_Slopes.m_Range", "m_Range and m_Start must be numbers") from None
    if not (np.isfinite(rng) and np.isfinite(start)):
        raise PackedDataError("m_Slopes.m_Range", "m_Range and m_Start must be finite")
    if n_s not in (4 * n, 8 * n):
        raise PackedDataError(
            "m_Slopes.m_NumItems", f"{n_s} slope values for {n} keys (expected {4 * n} or {8 * n})"
        )
    raw = _vector(s, "m_Slopes", n_s, size).astype(np.float64)
    denom = float((1 << size) - 1) if size else 1.0
    slopes = raw * (rng / denom) + start if rng else np.full(n_s, start)
    if n_s == 4 * n:
        ins = outs = slopes.reshape(n, 4)
    else:
        ins = slopes[: 4 * n].reshape(n, 4)
        outs = slopes[4 * n :].reshape(n, 4)
    return times, values, ins, outs
