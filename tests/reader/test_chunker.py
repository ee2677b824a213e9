#!/usr/bin/env python3
"""The chunker of format 3 (chunker.py, docs/FORMAT.md section 21) against
the section's test vector: with key("chunks/boundaries") = 00 01 .. 1f, the
polynomial p and the cut of 4 MiB of xorshift64 output.  Also a few small
properties (a short region is one chunk; a fingerprint computed by the
tables equals the definition's; cuts lie within the bounds).  Prints
ok/FAIL lines; exit 1 on any failure."""

import os
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chunker  # noqa: E402

VECTOR_P = 0x7a17a4ec3b52adcf
VECTOR_CUTS = [827876, 592349, 548052, 743226, 581203, 561796, 339802]
fails = 0


def check(cond, what):
    global fails
    print("%s - chunker: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        fails += 1


def xorshift_bytes(n, s=1):
    """Section 21: for each byte, s ^= s << 13; s ^= s >> 7; s ^= s << 17 on
    64 bits, the byte (s >> 24) & 0xff."""
    out = bytearray(n)
    m = (1 << 64) - 1
    for i in range(n):
        s ^= (s << 13) & m
        s ^= s >> 7
        s ^= (s << 17) & m
        out[i] = (s >> 24) & 0xFF
    return bytes(out)


def main():
    key = bytes(range(32))
    c = chunker.Chunker(key)
    check(c.p == VECTOR_P, "the test vector's polynomial (p = %#x)" % c.p)
    check(chunker.irreducible64(VECTOR_P), "x^64 + p is irreducible")
    # Section 21's second vector: each candidate's lowest bit is set, not
    # tested (the zero key's first irreducible is an even HKDF word's).
    p0 = chunker.polynomial(bytes(32))
    check(p0 == 0x0e27c9824d2c7c5d, "the zero key's polynomial (p = %#x): candidates' lowest "
          "bit forced to 1" % p0)
    check(not chunker.irreducible64(0x3), "x^64 + x + 1 is reducible (x^2 + x + 1 divides it)")
    check(chunker.irreducible64(0x1b), "x^64 + x^4 + x^3 + x + 1 is irreducible")
    data = xorshift_bytes(4 << 20)
    cuts = c.cut(data)
    check(cuts == VECTOR_CUTS, "the test vector's 4 MiB cut into %s" % cuts)
    # The tables give the definition's fingerprint.
    d = c.decisions(data[:4096])
    fp_ok = True
    for e in (64, 100, 4096):
        w = data[e - 64:e]
        f = c.fingerprint(w)
        blk = f.to_bytes(8, "little") + bytes(8)
        enc = Cipher(algorithms.AES(c.aes_key), modes.ECB()).encryptor()
        want = int.from_bytes((enc.update(blk) + enc.finalize())[:8], "little")
        fp_ok = fp_ok and int(d[e]) == want
    check(fp_ok, "decisions by the tables equal F's definition and AES-128-ECB")
    check(c.cut(data[:131072]) == [131072] and c.cut(data[:100]) == [100],
          "a region of at most 128 KiB is one chunk")
    cuts = c.cut(data[:3 << 20])
    check(sum(cuts) == 3 << 20 and all(131072 <= x <= 2 << 20 for x in cuts[:-1])
          and cuts[-1] <= 2 << 20, "cuts cover the region, each within 128 KiB .. 2 MiB")
    rep = bytes(1 << 20) * 3
    check(c.cut(rep) == [2 << 20, 1 << 20], "zeros under this key: no boundary, chunks of 2 MiB")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
