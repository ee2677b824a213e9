"""The keyed content-defined chunker of format 3, from docs/FORMAT.md
section 21 alone.

The reader restores files from their entries' chunk lists and never needs
to chunk; this module is here to check section 21 itself: its test vector
(test_chunker.py) and, on a vault, that the chunks pqvault cut are the ones
the construction gives (format3.Vault.verify(chunking=True)).

A boundary decision at a position depends only on the 64 bytes before it,
not on where the chunk started, so the decisions of every position of a
region are computed at once (numpy; the fingerprint is linear over GF(2),
one table per window byte) and one AES-ECB call; only the cut loop is in
Python.
"""

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from common import hkdf_expand

WINDOW = 64
CHUNK_MIN = 128 << 10        # 131072
CHUNK_NORMAL = 512 << 10     # 524288
CHUNK_MAX = 2 << 20          # 2 MiB
MASK_SMALL = (1 << 21) - 1   # while L < CHUNK_NORMAL
MASK_LARGE = (1 << 17) - 1   # from CHUNK_NORMAL on
CANDIDATES = 768             # 8-byte candidates per HKDF output


# ---- GF(2)[x] on Python integers (bit i: the coefficient of x^i) -------------

def _clmul(a, b):
    r = 0
    while b:
        if b & 1:
            r ^= a
        a <<= 1
        b >>= 1
    return r


def _mod(a, f):
    df = f.bit_length() - 1
    while a.bit_length() - 1 >= df:
        a ^= f << (a.bit_length() - 1 - df)
    return a


def _x_pow_2k(k, f):
    """x^(2^k) mod f, by k squarings of x."""
    r = 2
    for _ in range(k):
        r = _mod(_clmul(r, r), f)
    return r


def irreducible64(p):
    """Whether x^64 + p is irreducible: x^(2^64) = x and x^(2^32) != x
    modulo it (section 21: Rabin's test for degree 2^6)."""
    f = (1 << 64) | p
    return _x_pow_2k(64, f) == 2 and _x_pow_2k(32, f) != 2


def polynomial(k_boundaries):
    """p: the first candidate, in order, for which x^64 + p is irreducible;
    candidates are the 768 big-endian 8-byte words of HKDF-Expand(key,
    "pqvault/v3/chunker/polynomial" || r (4), 8 * 768) for r = 0, 1, ...,
    each with its lowest bit set (forced to 1: constant term 1)."""
    r = 0
    while True:
        out = hkdf_expand(k_boundaries, b"pqvault/v3/chunker/polynomial" + r.to_bytes(4, "big"),
                          8 * CANDIDATES)
        for i in range(CANDIDATES):
            p = int.from_bytes(out[8 * i:8 * i + 8], "big") | 1
            if irreducible64(p):
                return p
        r += 1


class Chunker:
    def __init__(self, k_boundaries):
        self.p = polynomial(k_boundaries)
        self.aes_key = hkdf_expand(k_boundaries, b"pqvault/v3/chunker/aes", 16)
        f = (1 << 64) | self.p
        # F(w) = sum over j of w[j] * x^(8 * (63 - j)) mod P: a table per
        # window byte j, indexed by the byte's value.
        tables = np.zeros((WINDOW, 256), dtype=np.uint64)
        for j in range(WINDOW):
            shift = 8 * (WINDOW - 1 - j)
            basis = [_mod(1 << (shift + bit), f) for bit in range(8)]
            for b in range(256):
                v = 0
                for bit in range(8):
                    if b >> bit & 1:
                        v ^= basis[bit]
                tables[j, b] = v
        self.tables = tables

    def fingerprint(self, window):
        """F of one 64-byte window, straight from its definition (F = 0; for
        each byte b: F = (F * x^8 + b) mod P)."""
        f = (1 << 64) | self.p
        v = 0
        for b in window:
            v = _mod((v << 8) | b, f)
        return v

    def decisions(self, data):
        """d for every end position e of data (window data[e-64, e)),
        indexed by e; positions before 64 are left 0 (never candidates)."""
        n = len(data)
        out = np.zeros(n + 1, dtype=np.uint64)
        if n < WINDOW:
            return out
        buf = np.frombuffer(data, dtype=np.uint8)
        m = n - WINDOW + 1                      # windows starting at 0 .. n-64
        fp = np.zeros(m, dtype=np.uint64)
        for j in range(WINDOW):
            fp ^= self.tables[j][buf[j:j + m]]
        blocks = np.zeros((m, 2), dtype="<u8")
        blocks[:, 0] = fp
        enc = Cipher(algorithms.AES(self.aes_key), modes.ECB()).encryptor()
        ct = enc.update(blocks.tobytes()) + enc.finalize()
        d = np.frombuffer(ct, dtype="<u8").reshape(m, 2)[:, 0]
        out[WINDOW:] = d
        return out

    def cut(self, data):
        """The chunk lengths of one region (section 21)."""
        n = len(data)
        d = self.decisions(data)
        small = (d & np.uint64(MASK_SMALL)) == 0
        large = (d & np.uint64(MASK_LARGE)) == 0
        lengths = []
        start = 0
        while start < n:
            left = n - start
            top = min(left, CHUNK_MAX)
            length = top
            if left > CHUNK_MIN:
                # L in [CHUNK_MIN, CHUNK_NORMAL): the strict mask; from
                # CHUNK_NORMAL on: the loose one.
                a, b = start + CHUNK_MIN, start + min(top, CHUNK_NORMAL - 1)
                hit = np.flatnonzero(small[a:b + 1]) if b >= a else []
                if len(hit):
                    length = CHUNK_MIN + int(hit[0])
                elif top >= CHUNK_NORMAL:
                    a = start + CHUNK_NORMAL
                    hit = np.flatnonzero(large[a:start + top + 1])
                    if len(hit):
                        length = CHUNK_NORMAL + int(hit[0])
            lengths.append(length)
            start += length
        return lengths
