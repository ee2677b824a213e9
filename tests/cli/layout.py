#!/usr/bin/env python3
"""layout.py: what is sealed in a vault's segments and packs of format 3
(or 2), for the tamper tests.  With the vault's recovery code (what `init`
printed) it opens what it must, from docs/FORMAT.md alone (sections 2, 5,
10, 11, 22, 23): it shows where a segment's blocks and chunk records, and a
pack's blobs, table and locator lie, and crafts a segment whose chunk
records lie, sealed again under the segment's own key (what no storage
attacker can do, but a writer's bug could).  tests/cli/corruption.sh uses
records, setrec and swapplace; segment and pack are for looking (when
writing new cases).  Needs python3-cryptography.

  layout.py segment VAULT RECOVERY EPOCH
      shell assignments: seg_version seg_kind seg_size seg_head_end (72 +
      head length) seg_wrap (the command key's length, 0: none) seg_packs
      (pack table entries) seg_blocks ("start:end" of each entry block,
      absolute, end exclusive) seg_cblocks ("start:end:records" of each
      chunk block) seg_nrecs (chunk records in all)
  layout.py records VAULT RECOVERY EPOCH
      one line per chunk record, in order: index pack-id offset stored
      plain flags identity (hex)
  layout.py pack VAULT RECOVERY PACK
      PACK its storage name (packs/XX/<32 hex>); shell assignments:
      pack_version pack_size pack_table ("start:end", sealed) pack_locator
      ("start:end") pack_nblobs pack_blobs ("start:end" of each blob, in
      the table's order) pack_pad (zero bytes padding the table)
  layout.py setrec VAULT RECOVERY EPOCH INDEX FIELD=VALUE...
      rewrite chunk record INDEX (pack: index in the pack table, off,
      stored, plain, flags) and seal its block again; refused (exit 1) if
      the block's length would change (the head gives it: the chain would
      change too).
  layout.py swapplace VAULT RECOVERY EPOCH I J
      records I and J (one block) exchange their pack, offset and stored
      length: each chunk's record points at the other's blob.
Exit 1 with a message on anything unexpected.
"""
import hashlib
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
TAG = 16


def die(msg):
    sys.stderr.write("layout.py: %s\n" % msg)
    sys.exit(1)


def seed_of(path):
    """Section 5: the seed from a recovery code."""
    text = open(path).read()
    v, n = 0, 0
    for ch in text.upper():
        if ch in "- \t\r\n":
            continue
        ch = {"O": "0", "I": "1", "L": "1"}.get(ch, ch)
        if ch not in CROCKFORD:
            die("%s: not a recovery code" % path)
        v = (v << 5) | CROCKFORD.index(ch)
        n += 1
    if n != 56:
        die("%s: %d symbols, expected 56" % (path, n))
    raw = v.to_bytes(35, "big")
    if hashlib.sha256(b"pqvault/v1/recovery" + raw[:32]).digest()[:3] != raw[32:]:
        die("%s: recovery code checksum mismatch" % path)
    return raw[:32]


class Keys:
    def __init__(self, seed):
        self.prk = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"pqvault/v1/identity",
                        info=b"").derive(seed)

    def key(self, label):
        return HKDFExpand(algorithm=hashes.SHA256(), length=32,
                          info=b"key/" + label.encode()).derive(self.prk)


def aead(suite, key):
    if suite == 1:
        return AESGCM(key)
    if suite == 2:
        return ChaCha20Poly1305(key)
    die("unknown suite %d" % suite)


def nonce(n):
    return bytes(4) + n.to_bytes(8, "big")


class Cursor:
    def __init__(self, data):
        self.data, self.off = data, 0

    def take(self, n):
        if self.off + n > len(self.data):
            die("truncated plaintext")
        v = self.data[self.off:self.off + n]
        self.off += n
        return v

    def u8(self):
        return self.take(1)[0]

    def varint(self):
        v = 0
        for i in range(10):
            b = self.u8()
            v |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                return v
        die("bad varint")


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class Segment:
    """Section 11 (format 2) and 23 (format 3): header, head, block index."""

    def __init__(self, keys, vault, epoch):
        self.path = "%s/segments/%016x" % (vault, epoch)
        self.data = bytearray(open(self.path, "rb").read())
        d = self.data
        if len(d) < 72 or d[:4] != b"PQVS":
            die("%s: not a segment" % self.path)
        self.version, self.kind, self.suite = d[4], d[5], d[6]
        self.epoch = int.from_bytes(d[8:16], "big")
        salt = bytes(d[32:64])
        headlen = int.from_bytes(d[64:68], "big")
        self.nblocks = int.from_bytes(d[68:72], "big")
        self.head_end = 72 + headlen
        s = keys.key("catalogue/segments")
        self.key = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt,
                        info=b"pqvault/v2/segment" + epoch.to_bytes(8, "big")).derive(s)
        self.ad = bytes(d[:72])
        head = aead(self.suite, self.key).decrypt(nonce(0), bytes(d[72:self.head_end]), self.ad)
        c = Cursor(head)
        hv = c.u8()
        c.take(8)                      # time
        c.varint()                     # base
        c.take(64)                     # previous chain value, key file hash
        for _ in range(c.varint()):    # superseded key files
            c.take(32)
        if self.kind == 2:             # a base: history
            for _ in range(c.varint()):
                c.varint()
                c.take(32)
        self.wrap = c.varint()
        c.take(self.wrap)
        for _ in range(c.varint()):    # string table
            c.take(c.varint())
        self.packs = []
        for _ in range(c.varint()):
            pid = c.take(16).hex()
            flags = c.u8()
            if flags & 1:
                c.varint()
                c.take(32)
            self.packs.append(pid)
        self.blocks = []
        for _ in range(self.nblocks):
            c.take(16)
            off, ln = c.varint(), c.varint()
            c.varint()
            self.blocks.append((self.head_end + off, self.head_end + off + ln))
        c.varint()                     # entries
        self.cblocks = []
        if hv == 3:
            for _ in range(c.varint()):
                off, ln, n = c.varint(), c.varint(), c.varint()
                self.cblocks.append((self.head_end + off, self.head_end + off + ln, n))

    def chunk_block(self, j):
        start, end, n = self.cblocks[j]
        plain = aead(self.suite, self.key).decrypt(nonce(self.nblocks + 1 + j),
                                                   bytes(self.data[start:end]), self.ad)
        c = Cursor(plain)
        recs = []
        for _ in range(n):
            r = {"id": c.take(32), "pack": c.varint(), "off": c.varint(), "stored": c.varint(),
                 "plain": c.varint(), "flags": c.u8()}
            recs.append(r)
        return recs

    def records(self):
        out = []
        for j in range(len(self.cblocks)):
            for r in self.chunk_block(j):
                r["block"] = j
                out.append(r)
        return out

    def seal_chunk_block(self, j, recs):
        start, end, n = self.cblocks[j]
        plain = b"".join(r["id"] + varint(r["pack"]) + varint(r["off"]) + varint(r["stored"]) +
                         varint(r["plain"]) + bytes([r["flags"]]) for r in recs)
        sealed = aead(self.suite, self.key).encrypt(nonce(self.nblocks + 1 + j), plain, self.ad)
        if len(sealed) != end - start:
            die("chunk block %d would be %d bytes, not %d" % (j, len(sealed), end - start))
        self.data[start:end] = sealed

    def save(self):
        with open(self.path, "r+b") as f:
            f.write(self.data)


def pack_layout(keys, vault, name):
    d = open("%s/%s" % (vault, name), "rb").read()
    pid = bytes.fromhex(name.rsplit("/", 1)[1])
    if len(d) < 8 + TAG + 32 or d[:4] != b"PQVP":
        die("%s: not a pack" % name)
    if d[4] == 2:
        return {"pack_version": 2, "pack_size": len(d)}
    key = HKDFExpand(algorithm=hashes.SHA256(), length=32,
                     info=b"pqvault/v3/pack" + pid).derive(keys.key("packs"))
    a = aead(d[5], key)
    ad = d[:8] + pid
    loc = a.decrypt(nonce(0), d[-32:], ad)
    tlen = int.from_bytes(loc[:8], "big")
    tstart = len(d) - 32 - tlen
    table = a.decrypt(nonce(1), d[tstart:len(d) - 32], ad)
    c = Cursor(table)
    blobs = []
    for _ in range(c.varint()):
        c.take(32)
        off, stored = c.varint(), c.varint()
        c.varint()
        c.u8()
        blobs.append("%d:%d" % (8 + off, 8 + off + stored))
    return {"pack_version": 3, "pack_size": len(d), "pack_table": "%d:%d" % (tstart, len(d) - 32),
            "pack_locator": "%d:%d" % (len(d) - 32, len(d)), "pack_nblobs": len(blobs),
            "pack_blobs": " ".join(blobs), "pack_pad": len(table) - c.off}


def show(assign):
    for k, v in assign.items():
        print("%s='%s'" % (k, v))


def main(argv):
    if len(argv) < 5:
        die("usage: layout.py segment|records|pack|setrec|swapplace VAULT RECOVERY ...")
    cmd, vault, keys = argv[1], argv[2], Keys(seed_of(argv[3]))
    if cmd == "pack":
        show(pack_layout(keys, vault, argv[4]))
        return
    s = Segment(keys, vault, int(argv[4], 0))
    if cmd == "segment":
        show({"seg_version": s.version, "seg_kind": s.kind, "seg_size": len(s.data),
              "seg_head_end": s.head_end, "seg_wrap": s.wrap, "seg_packs": len(s.packs),
              "seg_blocks": " ".join("%d:%d" % b for b in s.blocks),
              "seg_cblocks": " ".join("%d:%d:%d" % b for b in s.cblocks),
              "seg_nrecs": sum(b[2] for b in s.cblocks)})
    elif cmd == "records":
        for i, r in enumerate(s.records()):
            print(i, s.packs[r["pack"]], r["off"], r["stored"], r["plain"], r["flags"], r["id"].hex())
    elif cmd in ("setrec", "swapplace"):
        recs = s.records()
        i = int(argv[5])
        if cmd == "setrec":
            for kv in argv[6:]:
                k, v = kv.split("=", 1)
                if k not in ("pack", "off", "stored", "plain", "flags"):
                    die("unknown field %s" % k)
                recs[i][k] = int(v, 0)
        else:
            j = int(argv[6])
            if recs[i]["block"] != recs[j]["block"]:
                die("records %d and %d are in different blocks" % (i, j))
            for k in ("pack", "off", "stored"):
                recs[i][k], recs[j][k] = recs[j][k], recs[i][k]
        b = recs[i]["block"]
        s.seal_chunk_block(b, [r for r in recs if r["block"] == b])
        s.save()
    else:
        die("unknown command %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)
