"""FrodoKEM (the standard, salted variant of the ISO proposal) in numpy.

Written from the FrodoKEM specification (round-3 / ISO proposal), not from
pqvault's C code.  Deterministic API: the caller supplies the coins, so the
pqvault identity (whose FrodoKEM key is generated from HKDF output) and the
known-answer vectors can both be checked.

  keypair(params, coins)   coins = s || seedSE || z            -> (pk, sk)
  encaps(params, pk, coins) coins = u || salt                   -> (ct, ss)
  decaps(params, sk, ct)                                         -> ss

Not constant time: this is a test reader, never used on live secrets of
anyone but the test.
"""

import hashlib

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


class Params:
    def __init__(self, name, n, logq, b, lensec, table, shake):
        self.name = name
        self.n = n
        self.nbar = 8
        self.logq = logq
        self.q = 1 << logq
        self.b = b                      # extracted bits per entry
        self.lensec = lensec            # bytes: len_s, len_k, len_pkh, len_ss, len_mu
        self.lenseedse = 2 * lensec
        self.lensalt = 2 * lensec
        self.lenseeda = 16
        self.lenz = 16
        self.table = np.array(table, dtype=np.int32)
        self.aes = name.endswith("-AES")
        self._shake = hashlib.shake_128 if shake == 128 else hashlib.shake_256
        nn = n * self.nbar
        self.pk_bytes = self.lenseeda + logq * nn // 8
        self.c1_bytes = logq * nn // 8
        self.c2_bytes = logq * self.nbar * self.nbar // 8
        self.ct_bytes = self.c1_bytes + self.c2_bytes + self.lensalt
        self.sk_bytes = lensec + self.pk_bytes + 2 * nn + lensec
        self.ss_bytes = lensec
        self.keygen_coin_bytes = lensec + self.lenseedse + self.lenz
        self.encaps_coin_bytes = lensec + self.lensalt

    def shake(self, data, n):
        return self._shake(data).digest(n)


_T640 = (4643, 13363, 20579, 25843, 29227, 31145, 32103, 32525, 32689, 32745,
         32762, 32766, 32767)
_T976 = (5638, 15915, 23689, 28571, 31116, 32217, 32613, 32731, 32760, 32766,
         32767)
_T1344 = (9142, 23462, 30338, 32361, 32725, 32765, 32767)

PARAMS = {}
for _n, _logq, _b, _sec, _t, _sh in ((640, 15, 2, 16, _T640, 128),
                                     (976, 16, 3, 24, _T976, 256),
                                     (1344, 16, 4, 32, _T1344, 256)):
    for _v in ("AES", "SHAKE"):
        _name = "FrodoKEM-%d-%s" % (_n, _v)
        PARAMS[_name] = Params(_name, _n, _logq, _b, _sec, _t, _sh)


# ---- Matrix A ---------------------------------------------------------------

def gen_a(p, seed_a):
    """The n x n matrix A (int64 entries in [0, q)) from seedA."""
    n = p.n
    if p.aes:
        # Block (i, j) for j = 0, 8, ...: i (u16 LE) || j (u16 LE) || 0^12,
        # AES-128(seedA) gives A[i][j..j+7] as eight u16 LE.
        blocks = np.zeros((n, n // 8, 8), dtype="<u2")
        blocks[:, :, 0] = np.arange(n, dtype=np.uint16)[:, None]
        blocks[:, :, 1] = (np.arange(n // 8, dtype=np.uint16) * 8)[None, :]
        enc = Cipher(algorithms.AES(seed_a), modes.ECB()).encryptor()
        out = enc.update(blocks.tobytes()) + enc.finalize()
        a = np.frombuffer(out, dtype="<u2").reshape(n, n)
    else:
        # Row i = SHAKE128(i (u16 LE) || seedA, 2n bytes) as n u16 LE.
        rows = b"".join(
            hashlib.shake_128(i.to_bytes(2, "little") + seed_a).digest(2 * n)
            for i in range(n))
        a = np.frombuffer(rows, dtype="<u2").reshape(n, n)
    return a.astype(np.int64) & (p.q - 1)


# ---- Sampling, packing, encoding ---------------------------------------------

def sample(p, r):
    """CDF sampling of an array of 16-bit values (any shape): signed int64."""
    r = r.astype(np.int32)
    t = r >> 1
    e = (t[..., None] > p.table[None, :-1]).sum(axis=-1)
    return np.where(r & 1, -e, e).astype(np.int64)


def pack(p, m):
    """Entries (mod q) of m, row-major, logq bits each, most significant first."""
    v = np.asarray(m, dtype=np.int64).ravel() & (p.q - 1)
    if p.logq == 16:
        return v.astype(">u2").tobytes()
    shifts = np.arange(p.logq - 1, -1, -1)
    bits = ((v[:, None] >> shifts[None, :]) & 1).astype(np.uint8)
    return np.packbits(bits.ravel()).tobytes()


def unpack(p, data, rows, cols):
    if p.logq == 16:
        return np.frombuffer(data, dtype=">u2").astype(np.int64).reshape(rows, cols)
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8))
    bits = bits[:rows * cols * p.logq].reshape(rows * cols, p.logq).astype(np.int64)
    weights = 1 << np.arange(p.logq - 1, -1, -1, dtype=np.int64)
    return (bits @ weights).reshape(rows, cols)


def encode(p, mu):
    """len_sec bytes -> nbar x nbar matrix: b bits per entry, little-endian bit stream."""
    bits = np.unpackbits(np.frombuffer(mu, dtype=np.uint8), bitorder="little")
    bits = bits.reshape(p.nbar * p.nbar, p.b).astype(np.int64)
    vals = bits @ (1 << np.arange(p.b, dtype=np.int64))
    return (vals << (p.logq - p.b)).reshape(p.nbar, p.nbar)


def decode(p, m):
    m = np.asarray(m, dtype=np.int64).ravel() & (p.q - 1)
    vals = ((m + (1 << (p.logq - p.b - 1))) >> (p.logq - p.b)) & ((1 << p.b) - 1)
    bits = ((vals[:, None] >> np.arange(p.b)[None, :]) & 1).astype(np.uint8)
    return np.packbits(bits.ravel(), bitorder="little").tobytes()


def _mul(x, y, q):
    """(x @ y) mod q, exact: |entries| < 2^16 times small noise, summed n <= 1344
    times, stays far below 2^53, so float64 BLAS is exact."""
    r = np.asarray(x, dtype=np.float64) @ np.asarray(y, dtype=np.float64)
    return np.rint(r).astype(np.int64) & (q - 1)


# ---- KEM ----------------------------------------------------------------------

def keypair(p, coins):
    if len(coins) != p.keygen_coin_bytes:
        raise ValueError("FrodoKEM keygen coins: %d bytes, want %d" % (len(coins), p.keygen_coin_bytes))
    s = coins[:p.lensec]
    seed_se = coins[p.lensec:p.lensec + p.lenseedse]
    z = coins[p.lensec + p.lenseedse:]
    n, nbar = p.n, p.nbar
    seed_a = p.shake(z, p.lenseeda)
    a = gen_a(p, seed_a)
    r = np.frombuffer(p.shake(b"\x5f" + seed_se, 2 * 2 * n * nbar), dtype="<u2")
    st = sample(p, r[:n * nbar]).reshape(nbar, n)          # S^T
    e = sample(p, r[n * nbar:]).reshape(n, nbar)
    bmat = (_mul(a, st.T, p.q) + e) & (p.q - 1)
    pk = seed_a + pack(p, bmat)
    pkh = p.shake(pk, p.lensec)
    sk = s + pk + st.astype("<i2").tobytes() + pkh
    return pk, sk


def _encrypt(p, pk, seed_se, mu):
    """(c1, c2) for message mu under pk with the noise from seedSE."""
    n, nbar = p.n, p.nbar
    seed_a, b = pk[:p.lenseeda], pk[p.lenseeda:]
    r = np.frombuffer(p.shake(b"\x96" + seed_se, 2 * (2 * nbar * n + nbar * nbar)),
                      dtype="<u2")
    sp = sample(p, r[:nbar * n]).reshape(nbar, n)
    ep = sample(p, r[nbar * n:2 * nbar * n]).reshape(nbar, n)
    epp = sample(p, r[2 * nbar * n:]).reshape(nbar, nbar)
    a = gen_a(p, seed_a)
    bp = (_mul(sp, a, p.q) + ep) & (p.q - 1)
    bmat = unpack(p, b, n, nbar)
    v = (_mul(sp, bmat, p.q) + epp) & (p.q - 1)
    c = (v + encode(p, mu)) & (p.q - 1)
    return pack(p, bp), pack(p, c)


def encaps(p, pk, coins):
    if len(pk) != p.pk_bytes or len(coins) != p.encaps_coin_bytes:
        raise ValueError("FrodoKEM encaps: bad public key or coins length")
    mu, salt = coins[:p.lensec], coins[p.lensec:]
    pkh = p.shake(pk, p.lensec)
    t = p.shake(pkh + mu + salt, p.lenseedse + p.lensec)
    seed_se, k = t[:p.lenseedse], t[p.lenseedse:]
    c1, c2 = _encrypt(p, pk, seed_se, mu)
    ct = c1 + c2 + salt
    return ct, p.shake(c1 + c2 + salt + k, p.ss_bytes)


def decaps(p, sk, ct):
    if len(sk) != p.sk_bytes or len(ct) != p.ct_bytes:
        raise ValueError("FrodoKEM decaps: bad secret key or ciphertext length")
    n, nbar = p.n, p.nbar
    s = sk[:p.lensec]
    pk = sk[p.lensec:p.lensec + p.pk_bytes]
    off = p.lensec + p.pk_bytes
    st = np.frombuffer(sk[off:off + 2 * n * nbar], dtype="<i2").astype(np.int64).reshape(nbar, n)
    pkh = sk[off + 2 * n * nbar:]
    c1 = ct[:p.c1_bytes]
    c2 = ct[p.c1_bytes:p.c1_bytes + p.c2_bytes]
    salt = ct[p.c1_bytes + p.c2_bytes:]
    bp = unpack(p, c1, nbar, n)
    c = unpack(p, c2, nbar, nbar)
    m = (c - _mul(bp, st.T, p.q)) & (p.q - 1)
    mu = decode(p, m)
    t = p.shake(pkh + mu + salt, p.lenseedse + p.lensec)
    seed_se, k = t[:p.lenseedse], t[p.lenseedse:]
    c1b, c2b = _encrypt(p, pk, seed_se, mu)
    # Re-encryption check (compares the packed forms, i.e. the matrices mod q).
    ok = c1b == c1 and c2b == c2
    return p.shake(c1 + c2 + salt + (k if ok else s), p.ss_bytes)
