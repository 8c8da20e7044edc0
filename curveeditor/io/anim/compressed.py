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

__all__ = ["bits_of", "unpack_uints", "decode_compressed_curve"]


def bits_of(hex_data: str) -> np.ndarray:
    """The bit stream of a hex ``m_Data`` string, least significant bit of each byte first."""
    raw = np.frombuffer(bytes.fromhex(hex_data.strip()), dtype=np.uint8)
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


def _unpack_quats(hex_data: str, count: int) -> np.ndarray:
    bits = bits_of(hex_data)
    if bits.shape[0] < 32 * count:
        raise ValueError(f"packed quaternions hold {bits.shape[0]} bits, {32 * count} needed")
    out = np.zeros((count, 4))
    for i in range(count):
        pos = 32 * i
        flags = int(unpack_uints(bits, 1, 3, pos)[0])
        pos += 3
        omitted = flags & 3
        total = 0.0
        for j in range(4):
            if j == omitted:
                continue
            size = 9 if (omitted + 1) % 4 == j else 10
            x = int(unpack_uints(bits, 1, size, pos)[0])
            pos += size
            out[i, j] = x / (0.5 * ((1 << size) - 1)) - 1.0
            total += out[i, j] ** 2
        out[i, omitted] = np.sqrt(max(0.0, 1.0 - total)) * (-1.0 if flags & 4 else 1.0)
    return out


def decode_compressed_curve(fields: dict[str, dict[str, str]]):
    """``(times (N,), values (N, 4), in_slopes (N, 4), out_slopes (N, 4))`` from an entry's
    ``m_Times`` / ``m_Values`` / ``m_Slopes`` sub-fields (strings as in the file).

    Raises ``ValueError`` when the data is inconsistent (short bit streams, count mismatches).
    """
    t = fields["m_Times"]
    n_t = int(t["m_NumItems"])
    deltas = unpack_uints(bits_of(t.get("m_Data", "")), n_t, int(t.get("m_BitSize", "0") or 0))
    times = 0.01 * np.cumsum(deltas).astype(np.float64)
    v = fields["m_Values"]
    n = int(v["m_NumItems"])
    if n != n_t:
        raise ValueError(f"{n_t} times but {n} values")
    values = _unpack_quats(v.get("m_Data", ""), n)
    s = fields["m_Slopes"]
    n_s = int(s["m_NumItems"])
    size = int(s.get("m_BitSize", "0") or 0)
    rng = float(s.get("m_Range", "0") or 0)
    start = float(s.get("m_Start", "0") or 0)
    raw = unpack_uints(bits_of(s.get("m_Data", "")), n_s, size).astype(np.float64)
    denom = float((1 << size) - 1) if size else 1.0
    slopes = raw * (rng / denom) + start if rng else np.full(n_s, start)
    if n_s == 4 * n:
        ins = outs = slopes.reshape(n, 4)
    elif n_s == 8 * n:
        ins = slopes[: 4 * n].reshape(n, 4)
        outs = slopes[4 * n :].reshape(n, 4)
    else:
        raise ValueError(f"{n_s} slope values for {n} keys (expected {4 * n} or {8 * n})")
    return times, values, ins, outs
