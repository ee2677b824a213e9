"""pqvault on-disk format version 2, read from docs/FORMAT.md alone
(sections 9-17 and the head extensions of sections 11 and 19; the identity,
key file, recovery code, config and hybrid wrap are format 1's, sections
2-6, reused from format1.py).  format3.py builds on these classes: its
hooks are Segment.check_version, Segment._parse_head_tail,
Segment._open_more_blocks, Entry._parse_file, Vault._uses,
Vault._verify_pack and Vault._write_data.

Entry point: Vault(path, seed) -> .verify(), .entries(), .restore(outdir).
Every section number below is docs/FORMAT.md's.
"""

import ctypes
import ctypes.util
import os
import stat
import re

from cryptography.exceptions import InvalidTag

import format1
import history
from common import (AuthError, IntegrityError, NoVault, ReaderError, UnsupportedVersion, UsageError,
                    ct_equal, hkdf, hkdf_expand, hmac_sha256, sha3_256, sha256)
from format1 import SUITES, aead_open, unwrap_key

VERSION = 2
decode_recovery = format1.decode_recovery     # section 5, unchanged (pqvault_reader.py calls it)

SEG_HEADER = 72
SEG_VERSION = 2
PACK_VERSION = 2
HEAD_VERSION = 1
HEAD_VERSION_EXT = 2      # a head that carries extensions (section 11)
EXT_MAX = 64 << 20        # an extension's length (section 11)
EXT_WRITERS, EXT_BATCHES = 1, 2             # extension types (section 19)
WRITER_NAME_MAX = 64
PACK_HEADER = 8
SEGMENT = 65536           # STREAM segment (section 7)
TAG = 16
MAX_EXTENT = 4 << 20      # plaintext of one extent (section 13)
MAX_SIZE = 1 << 50        # a file's size (section 13)
BLOCK_MAX = 65536         # a block is closed once it reaches this size (section 12)
NAME_MAX = 4096

KIND_DELTA, KIND_BASE = 1, 2
E_FILE, E_DIR, E_SYMLINK, E_REMOVED = 1, 2, 3, 4
E_FIFO, E_CHARDEV, E_BLOCKDEV = 5, 6, 7   # segments of version 3 only (section 13)
E_FORMAT2 = (E_FILE, E_DIR, E_SYMLINK, E_REMOVED)
KIND_NAMES = {E_FILE: "file", E_DIR: "dir", E_SYMLINK: "symlink", E_FIFO: "fifo",
              E_CHARDEV: "chardev", E_BLOCKDEV: "blockdev"}
PF_INTRODUCED, PF_FORMAT1 = 1, 2            # pack table flags (section 11)
EF_ORIGIN, EF_LINK, EF_XATTR, EF_CONTENT = 1, 2, 4, 8   # entry flags (section 13)
EF_FORMAT2 = EF_ORIGIN | EF_LINK | EF_XATTR | EF_CONTENT
XF_ZSTD = 1                                 # extent flags (section 13)


# ---- zstd through libzstd (python3-zstandard is not in Debian's python3) --------

class _Zstd:
    def __init__(self):
        name = ctypes.util.find_library("zstd") or "libzstd.so.1"
        try:
            z = ctypes.CDLL(name)
        except OSError:
            z = ctypes.CDLL("libzstd.so.1")
        z.ZSTD_decompress.restype = ctypes.c_size_t
        z.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        z.ZSTD_isError.restype = ctypes.c_uint
        z.ZSTD_isError.argtypes = [ctypes.c_size_t]
        z.ZSTD_getErrorName.restype = ctypes.c_char_p
        z.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
        z.ZSTD_findFrameCompressedSize.restype = ctypes.c_size_t
        z.ZSTD_findFrameCompressedSize.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.z = z

    def decompress_exact(self, src, n):
        """The single zstd frame src decompressed; ValueError unless it is
        one whole frame of exactly n bytes."""
        z = self.z
        fs = z.ZSTD_findFrameCompressedSize(src, len(src))
        if z.ZSTD_isError(fs):
            raise ValueError("not a zstd frame (%s)" % z.ZSTD_getErrorName(fs).decode())
        if fs != len(src):
            raise ValueError("%d bytes after the zstd frame" % (len(src) - fs))
        dst = ctypes.create_string_buffer(n + 1)
        got = z.ZSTD_decompress(dst, n + 1, src, len(src))
        if z.ZSTD_isError(got):
            raise ValueError("zstd: %s" % z.ZSTD_getErrorName(got).decode())
        if got != n:
            raise ValueError("zstd frame decompresses to %d bytes, expected %d" % (got, n))
        return dst.raw[:n]


_zstd = None


def zstd_decompress(src, n):
    global _zstd
    if _zstd is None:
        _zstd = _Zstd()
    return _zstd.decompress_exact(src, n)


# ---- Varints and a bounded reader -------------------------------------------------

class Cursor:
    """Reads fields of a plaintext; any overrun or malformed varint is an
    IntegrityError naming `subject`."""

    def __init__(self, data, subject, what):
        self.data = data
        self.off = 0
        self.subject = subject
        self.what = what

    def fail(self, msg):
        raise IntegrityError(self.subject, "%s: %s" % (self.what, msg))

    def left(self):
        return len(self.data) - self.off

    def take(self, n):
        if n > len(self.data) - self.off:
            self.fail("truncated")
        v = self.data[self.off:self.off + n]
        self.off += n
        return v

    def u8(self):
        return self.take(1)[0]

    def be(self, n, signed=False):
        return int.from_bytes(self.take(n), "big", signed=signed)

    def varint(self):
        """Unsigned LEB128, at most 10 bytes, minimal, < 2^64."""
        v = 0
        for i in range(10):
            b = self.u8()
            v |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                if i > 0 and b == 0:
                    self.fail("non-minimal varint")
                if v >> 64:
                    self.fail("varint beyond 2^64 - 1")
                return v
        self.fail("varint longer than 10 bytes")

    def zigzag(self):
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def count(self, unit):
        """A count of items of at least `unit` bytes each (bounds the work)."""
        n = self.varint()
        if n * unit > self.left():
            self.fail("count %d exceeds the bytes left" % n)
        return n

    def bytes_(self):
        return self.take(self.count(1))

    def end(self):
        if self.off != len(self.data):
            self.fail("%d trailing bytes" % (len(self.data) - self.off))


def name_normal(name):
    """Section 6's rules: 1..4096 bytes, no NUL, components neither empty, '.'
    nor '..' (so no leading, trailing or doubled '/')."""
    return format1.name_ok(name)


# ---- Section 13: entry --------------------------------------------------------------

class Extent:
    __slots__ = ("index", "offset", "length", "pack", "pack_offset", "stored", "flags")

    def __init__(self, index, offset, length, pack, pack_offset, stored, flags):
        self.index, self.offset, self.length = index, offset, length
        self.pack, self.pack_offset, self.stored, self.flags = pack, pack_offset, stored, flags


class Entry:
    """One entry of a segment's block.  Fields: name, kind, seg (its Segment);
    unless removed: mode, uid, gid, user, group (bytes or None), mtime_sec,
    mtime_nsec, ctime_sec, ctime_nsec, dev, ino, origin, link_group, xattrs
    [(name, value)]; file: suite, size, stored_key, extents; symlink: target;
    device (format 3): major, minor."""

    def __init__(self, seg, cur):
        self.seg = seg
        ln = cur.varint()
        body = Cursor(cur.take(ln), cur.subject, "entry")
        self._parse(seg, body)
        body.end()

    def _parse(self, seg, c):
        self.name = c.bytes_()
        if not name_normal(self.name):
            c.fail("invalid name %r" % self.name)
        c.what = "entry %s" % _show(self.name)
        self.kind = c.u8()
        if self.kind not in seg.entry_kinds:
            c.fail("unknown kind %d" % self.kind)
        if self.kind == E_REMOVED:
            return
        self.mode = c.varint()
        if self.mode > 0o7777:
            c.fail("mode %o beyond 07777" % self.mode)
        self.uid = c.varint()
        self.gid = c.varint()
        self.user = self._string(c, seg, c.varint(), "user")
        self.group = self._string(c, seg, c.varint(), "group")
        self.mtime_sec = c.zigzag()
        self.mtime_nsec = c.varint()
        self.ctime_sec = c.zigzag()
        self.ctime_nsec = c.varint()
        for v, what in ((self.mtime_sec, "mtime"), (self.ctime_sec, "ctime")):
            if not -(1 << 63) <= v < (1 << 63):
                c.fail("%s seconds out of range" % what)
        if self.mtime_nsec >= 10 ** 9 or self.ctime_nsec >= 10 ** 9:
            c.fail("nanoseconds >= 10^9")
        self.dev = c.varint()
        self.ino = c.varint()
        flags = c.varint()
        if flags & ~seg.entry_flags:
            c.fail("unknown entry flags %#x" % flags)
        self.flags = flags
        self.origin = c.bytes_() if flags & EF_ORIGIN else None
        self.link_group = 0
        if flags & EF_LINK:
            self.link_group = c.varint()
            if self.link_group == 0:
                c.fail("hard-link group 0")
        self.xattrs = []
        if flags & EF_XATTR:
            for _ in range(c.count(2)):
                idx = c.varint()
                if idx == 0:
                    c.fail("extended attribute without a name")
                xname = self._string(c, seg, idx, "extended attribute name")
                self.xattrs.append((xname, c.bytes_()))
        self.content = None
        if flags & EF_CONTENT:
            if self.kind != E_FILE:
                c.fail("a content hash on an entry that is not a file")
            self.content = c.take(32)
        if self.kind == E_FILE:
            self._parse_file(seg, c, flags)
        elif self.kind == E_SYMLINK:
            self.target = c.bytes_()
        elif self.kind in (E_CHARDEV, E_BLOCKDEV):
            self.major, self.minor = c.varint(), c.varint()
            if self.major >= 1 << 32 or self.minor >= 1 << 32:
                c.fail("device number %d, %d beyond 2^32 - 1" % (self.major, self.minor))

    def _parse_file(self, seg, c, flags):
        """Section 13's file fields: suite, size, stored key, extents."""
        self.chunked = False
        self.suite = c.u8()
        if self.suite not in SUITES:
            c.fail("unknown suite %d" % self.suite)
        self.size = c.varint()
        if self.size > MAX_SIZE:
            c.fail("size %d beyond 2^50" % self.size)
        self.stored_key = c.take(32)
        self.extents = []
        end = 0
        for i in range(c.count(6)):
            off, plen, pidx, poff, slen = (c.varint() for _ in range(5))
            xf = c.u8()
            if xf & ~XF_ZSTD:
                c.fail("extent %d: unknown flags %#x" % (i, xf))
            if pidx >= len(seg.packs):
                c.fail("extent %d: pack index %d beyond the pack table (%d)"
                       % (i, pidx, len(seg.packs)))
            if plen > MAX_EXTENT:
                c.fail("extent %d: plaintext length %d beyond 4 MiB" % (i, plen))
            if off < end:
                c.fail("extent %d: at %d, overlaps or precedes the previous one" % (i, off))
            end = off + plen
            if end > self.size:
                c.fail("extent %d: ends at %d, beyond the size %d" % (i, end, self.size))
            pack = seg.packs[pidx]
            if pack.format1:
                # Section 17: the whole object file (header and STREAM).
                if xf or poff or slen < 8 or stream_plain_len(slen - 8) != plen:
                    c.fail("extent %d: format-1 object with flags %#x, offset %d, %d "
                           "stored bytes for %d plain bytes" % (i, xf, poff, slen, plen))
            elif stream_plain_len(slen) is None:
                c.fail("extent %d: stored length %d is no STREAM length" % (i, slen))
            elif not xf & XF_ZSTD and stream_plain_len(slen) != plen:
                c.fail("extent %d: stored length %d for %d plain bytes" % (i, slen, plen))
            self.extents.append(Extent(i, off, plen, seg.packs[pidx], poff, slen, xf))

    @staticmethod
    def _string(c, seg, idx, what):
        if idx == 0:
            return None
        if idx > len(seg.strings):
            c.fail("%s index %d beyond the string table (%d)" % (what, idx, len(seg.strings)))
        return seg.strings[idx - 1]

    def holes(self):
        return self.size - sum(x.length for x in self.extents) if self.kind == E_FILE else 0

    def listing(self):
        """The dict common.listing_json prints (docs/CLI.md, list --json)."""
        f = self.kind == E_FILE
        return {"name": self.name, "type": KIND_NAMES[self.kind],
                "size": self.size if f else len(self.target) if self.kind == E_SYMLINK else 0,
                "mode": self.mode, "mtime_sec": self.mtime_sec, "mtime_nsec": self.mtime_nsec,
                "aead": SUITES[self.suite] if f else None,
                "objects": len(self.extents) if f else 0,
                "target": self.target if self.kind == E_SYMLINK else None,
                "uid": self.uid, "gid": self.gid, "user": self.user, "group": self.group,
                "link_group": self.link_group, "holes": self.holes()} | (
                    {"rdev_major": self.major, "rdev_minor": self.minor}
                    if self.kind in (E_CHARDEV, E_BLOCKDEV) else {})


def stream_plain_len(slen):
    """The plaintext length of a STREAM ciphertext of slen bytes (section 7:
    max(1, ceil(n / 64 KiB)) segments of 16-byte tags), or None if no
    plaintext has that length."""
    segs = max(1, -(-slen // (SEGMENT + TAG)))
    n = slen - TAG * segs
    if n < 0 or max(1, -(-n // SEGMENT)) != segs:
        return None
    return n


def stream_open(suite, key, data, ad, subject, what):
    """Open a STREAM ciphertext (section 7): segments of 64 KiB, nonce =
    index (11 bytes) || last flag."""
    n = stream_plain_len(len(data))
    if n is None:
        raise IntegrityError(subject, "%s: %d bytes is no STREAM length" % (what, len(data)))
    segs = max(1, -(-n // SEGMENT))
    out, off = [], 0
    for j in range(segs):
        ln = min(SEGMENT, n - j * SEGMENT)
        nonce = j.to_bytes(11, "big") + (b"\x01" if j == segs - 1 else b"\x00")
        try:
            out.append(aead_open(suite, key, nonce, data[off:off + ln + TAG], ad))
        except InvalidTag:
            raise IntegrityError(subject, "%s: segment %d does not authenticate" % (what, j)) from None
        off += ln + TAG
    return b"".join(out)


# ---- Section 11: segment --------------------------------------------------------------

class Segment:
    """A segment file opened and checked: header, head and every block (their
    tags, the entries' order and counts).  The chain is the Vault's job."""

    def __init__(self, vault, rel, data):
        self.rel = rel
        if len(data) < SEG_HEADER:
            raise IntegrityError(rel, "segment shorter than its header")
        h = data[:SEG_HEADER]
        if h[:4] != b"PQVS":
            raise IntegrityError(rel, "bad segment magic")
        self.version = h[4]
        self.check_version()
        self.kind, self.suite = h[5], h[6]
        if self.kind not in (KIND_DELTA, KIND_BASE):
            raise IntegrityError(rel, "unknown segment kind %d" % self.kind)
        if self.suite not in SUITES:
            raise IntegrityError(rel, "unknown segment suite %d" % self.suite)
        if h[7] != 0:
            raise IntegrityError(rel, "segment reserved byte not zero")
        self.epoch = int.from_bytes(h[8:16], "big")
        if os.path.basename(rel) != "%016x" % self.epoch:
            raise IntegrityError(rel, "segment of epoch %d under another name" % self.epoch)
        if not ct_equal(h[16:32], vault.config.vault_id):
            raise IntegrityError(rel, "segment of another vault (vault id)")
        salt = h[32:64]
        head_len = int.from_bytes(h[64:68], "big")
        nblocks = int.from_bytes(h[68:72], "big")
        if head_len < TAG or SEG_HEADER + head_len > len(data):
            raise IntegrityError(rel, "head length %d beyond the file" % head_len)
        self.header = h
        self.head_digest = sha256(data[:SEG_HEADER + head_len])
        key = hkdf(vault.k_segments, salt, b"pqvault/v2/segment" + self.epoch.to_bytes(8, "big"), 32)
        try:
            head = aead_open(self.suite, key, bytes(12), data[SEG_HEADER:SEG_HEADER + head_len], h)
        except InvalidTag:
            raise IntegrityError(rel, "head does not authenticate") from None
        self.nblocks = nblocks
        self.snapshot = self.kept = self.forget = None     # section 26
        self.index = self._parse_head(vault, Cursor(head, rel, "head"), nblocks)
        self.k_cmd = None
        self.entries = []
        self.block_error = None
        layout_ok = False
        try:
            self._check_layout(data, head_len)
            layout_ok = True
            self._open_blocks(vault, data, key, head_len)
        except IntegrityError as e:
            # The head still counts in the chain (section 11: the chain is
            # verified from the heads alone); the entries are lost.
            self.entries = []
            self.block_error = e
        self._open_more_blocks(vault, data, key, head_len, layout_ok)

    def problems(self):
        """What went wrong past the head (the segment still counts)."""
        return [self.block_error] if self.block_error else []

    def _layout(self):
        """(what, offset after the head, sealed length) of every block, in
        file order."""
        return [("block %d" % i, off, slen) for i, (_, off, slen, _) in enumerate(self.index)]

    def _check_layout(self, data, head_len):
        """Blocks one after the other from the end of the head, nothing
        after (section 11): the head gives their offsets and lengths."""
        pos = 0
        for what, off, slen in self._layout():
            if off != pos:
                raise IntegrityError(self.rel, "%s at offset %d, expected %d" % (what, off, pos))
            if slen < TAG:
                raise IntegrityError(self.rel, "%s of %d bytes" % (what, slen))
            pos += slen
        if SEG_HEADER + head_len + pos != len(data):
            raise IntegrityError(self.rel, "%d bytes of blocks after the head, the file has %d"
                                 % (pos, len(data) - SEG_HEADER - head_len))

    def _open_blocks(self, vault, data, key, head_len):
        """The entry blocks (their layout checked)."""
        rel, h, index = self.rel, self.header, self.index
        last_tag = None
        for i, (first_tag, off, slen, count) in enumerate(index):
            pos = SEG_HEADER + head_len + off
            try:
                pt = aead_open(self.suite, key, (i + 1).to_bytes(12, "big"), data[pos:pos + slen], h)
            except InvalidTag:
                raise IntegrityError(rel, "block %d does not authenticate" % i) from None
            c = Cursor(pt, rel, "block %d" % i)
            got = []
            last_start = 0
            while c.left():
                last_start = c.off
                got.append(self.entry_class(self, c))
            if len(got) != count:
                raise IntegrityError(rel, "block %d holds %d entries, the index says %d"
                                     % (i, len(got), count))
            if count == 0:
                raise IntegrityError(rel, "block %d is empty" % i)
            if last_start >= BLOCK_MAX:
                # A block is closed once it reaches 64 KiB: only its last
                # entry may cross that size (section 12).
                raise IntegrityError(rel, "block %d: %d bytes before its last entry"
                                     % (i, last_start))
            for j, e in enumerate(got):
                e.tag = vault.tag(e.name)
                if j == 0 and not ct_equal(e.tag, first_tag):
                    raise IntegrityError(rel, "block %d: first tag is not its first entry's" % i)
                if last_tag is not None and e.tag <= last_tag:
                    raise IntegrityError(rel, "block %d: entries out of tag order" % i)
                last_tag = e.tag
            self.entries += got
        if len(self.entries) != self.entry_count:
            raise IntegrityError(rel, "%d entries, the head says %d"
                                 % (len(self.entries), self.entry_count))

    def _open_more_blocks(self, vault, data, key, head_len, layout_ok):
        """Blocks after the entry blocks (format 2: none)."""

    # Format 2's segments: version 2, heads of version 1 or 2 (section 11).
    entry_flags = EF_FORMAT2
    entry_kinds = E_FORMAT2

    def check_version(self):
        """Section 16: the config's version fixes the segment version byte;
        another one is damage."""
        if self.version != SEG_VERSION:
            raise IntegrityError(self.rel, "segment version %d in a format-2 vault" % self.version)

    def _parse_head(self, vault, c, nblocks):
        v = c.u8()
        self.head_version = v
        if v not in self.head_versions:
            raise UnsupportedVersion(self.rel, "unsupported head version %d" % v)
        self.time = c.be(8, signed=True)
        self.base = c.varint()
        if self.kind == KIND_BASE and self.base != self.epoch:
            c.fail("a base of epoch %d names base %d" % (self.epoch, self.base))
        if self.kind == KIND_DELTA and not 1 <= self.base < self.epoch:
            c.fail("a delta of epoch %d names base %d" % (self.epoch, self.base))
        self.prev_chain = c.take(32)
        if self.epoch == 1 and any(self.prev_chain):
            c.fail("epoch 1 with a previous chain value")
        self.keyfile_hash = c.take(32)
        self.superseded = [c.take(32) for _ in range(c.count(32))]
        self.history = []
        if self.kind == KIND_BASE:
            for _ in range(c.count(33)):
                self.history.append((c.varint(), c.take(32)))
            if [ep for ep, _ in self.history] != list(range(1, self.epoch)):
                c.fail("history is not epochs 1..%d in order" % (self.epoch - 1))
            if self.history and not ct_equal(self.history[-1][1], self.prev_chain):
                c.fail("history's last chain value is not the previous chain value")
        self.wrapped_cmd = c.bytes_()
        self.strings = [c.bytes_() for _ in range(c.count(1))]
        self.packs = []
        for i in range(c.count(17)):
            pid = c.take(16)
            flags = c.u8()
            if flags & ~(PF_INTRODUCED | PF_FORMAT1):
                c.fail("pack %d: unknown flags %#x" % (i, flags))
            size = digest = None
            if flags & PF_INTRODUCED:
                size = c.varint()
                digest = c.take(32)
            self.packs.append(Pack(pid, flags, size, digest))
        index = []
        for _ in range(nblocks):
            index.append((c.take(16), c.varint(), c.varint(), c.varint()))
        self.entry_count = c.varint()
        self._parse_head_tail(vault, c)
        c.end()
        if sum(x[3] for x in index) != self.entry_count:
            c.fail("block entry counts do not add up to %d" % self.entry_count)
        for i in range(1, len(index)):
            if index[i][0] <= index[i - 1][0]:
                c.fail("block index out of tag order")
        return index

    head_versions = (HEAD_VERSION, HEAD_VERSION_EXT)

    def _parse_head_tail(self, vault, c):
        """After the entry count: extensions in a head of version 2."""
        self.extensions = []
        if self.head_version == HEAD_VERSION_EXT:
            self._parse_extensions(c, at_least=1)

    def _parse_extensions(self, c, at_least):
        """Section 11's extensions: count, then (type, flags, length, bytes),
        types strictly ascending, flags bit 0 critical; types 1 and 2 are
        section 19's registry and imported batches (parsed to check them)."""
        n = c.count(3)
        if n < at_least:
            c.fail("a head of version %d without extensions" % self.head_version)
        last = None
        for _ in range(n):
            typ = c.varint()
            flags = c.u8()
            ln = c.varint()
            if ln > EXT_MAX:
                c.fail("extension %d of %d bytes (at most 64 MiB)" % (typ, ln))
            body = c.take(ln)
            if last is not None and typ <= last:
                c.fail("extension %d after %d (types strictly ascending)" % (typ, last))
            last = typ
            if flags & ~1:
                c.fail("extension %d: unknown flags %#x" % (typ, flags))
            if typ == EXT_WRITERS:
                _parse_writers(body, self.rel, self.epoch)
            elif typ == EXT_BATCHES:
                _parse_batches(body, self.rel, self.epoch)
            elif typ in (history.EXT_SNAPSHOT, history.EXT_KEPT, history.EXT_FORGET):
                self._parse_history(c, typ, flags, body)
            elif flags & 1:
                raise UnsupportedVersion(self.rel, "segment of epoch %d needs a newer pqvault "
                                         "(head extension %d)" % (self.epoch, typ))
            self.extensions.append((typ, flags, body))

    def _parse_history(self, c, typ, flags, body):
        """Section 26's extensions, all critical: a snapshot (a delta whose
        command changed names), the kept list (a base), a forget (a
        delta)."""
        if not flags & 1:
            c.fail("extension %d not marked critical" % typ)
        if typ == history.EXT_SNAPSHOT:
            if self.kind != KIND_DELTA:
                c.fail("a snapshot extension in a base (a base is never a snapshot)")
            self.snapshot = history.parse_snapshot(Cursor, body, self)
        elif typ == history.EXT_KEPT:
            if self.kind != KIND_BASE:
                c.fail("a kept list in a delta")
            self.kept = history.parse_kept(Cursor, body, self)
        else:
            if self.kind != KIND_DELTA:
                c.fail("a forget extension in a base")
            self.forget = history.parse_forget(Cursor, body, self)

    def command_key(self, vault):
        """K_cmd (section 10): one decapsulation per segment."""
        if self.k_cmd is None:
            if not self.wrapped_cmd:
                raise IntegrityError(self.rel, "file entries but no command key")
            context = (b"pqvault/v2/command-key" + vault.config.vault_id
                       + self.epoch.to_bytes(8, "big"))
            self.k_cmd = unwrap_key(vault.ident, self.wrapped_cmd, context, self.rel, "command key")
        return self.k_cmd


Segment.entry_class = Entry


def _parse_writers(data, rel, epoch):
    """Section 19's registry: writers in ascending name order, each a name
    (1 to 64 of A-Z a-z 0-9 . _ -, not . or ..), a prefix in normal form,
    generation, since, flags (bit 0 revoked); nothing after."""
    c = Cursor(data, rel, "the writers of epoch %d" % epoch)
    last = None
    for _ in range(c.count(5)):
        name = c.bytes_()
        if not 1 <= len(name) <= WRITER_NAME_MAX or name in (b".", b"..") \
                or not re.fullmatch(rb"[A-Za-z0-9._-]+", name):
            c.fail("invalid writer name %r" % name)
        if last is not None and name <= last:
            c.fail("writers out of order")
        last = name
        prefix = c.bytes_()
        if not name_normal(prefix):
            c.fail("writer %s: invalid prefix" % _show(name))
        c.varint()          # generation
        c.varint()          # since
        if c.u8() & ~1:
            c.fail("writer %s: unknown flags" % _show(name))
    c.end()


def _parse_batches(data, rel, epoch):
    """Section 19's imported batches: ids ascending, epoch, flags (bit 0
    confirmed); nothing after."""
    c = Cursor(data, rel, "the imported batches of epoch %d" % epoch)
    last = None
    for _ in range(c.count(18)):
        b = c.take(16)
        if last is not None and b <= last:
            c.fail("batches out of order")
        last = b
        c.varint()
        if c.u8() & ~1:
            c.fail("batch %s: unknown flags" % b.hex())
    c.end()


class Pack:
    __slots__ = ("id", "flags", "size", "digest")

    def __init__(self, pid, flags, size, digest):
        self.id, self.flags, self.size, self.digest = pid, flags, size, digest

    @property
    def format1(self):
        return bool(self.flags & PF_FORMAT1)

    @property
    def rel(self):
        h = self.id.hex()
        return ("objects/%s/%s" if self.format1 else "packs/%s/%s") % (h[:2], h)


# ---- The vault --------------------------------------------------------------------

_HEX16 = re.compile(r"[0-9a-f]{16}\Z")
_HEX32 = re.compile(r"[0-9a-f]{32}\Z")
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_TMP = re.compile(r".*\.tmp-")


class Vault:
    """A format-2 vault opened with the seed of its recovery code (as
    format1.Vault: the code is the root of trust; list and restore need no
    key file, verify requires it)."""

    version = VERSION
    segment_class = Segment

    def __init__(self, path, seed, keyfile=None, need_keyfile=False):
        self.path = path
        if not os.path.isfile(os.path.join(path, "config")):
            raise NoVault(path, "no vault here (no config)")
        self.config = format1.Config(_read(path, "config"), self.version)
        self.ident = format1.Identity(seed, self.config.kem)
        if not ct_equal(sha3_256(self.ident.pub), self.config.identity):
            raise AuthError("recovery code", "belongs to another vault (its identity is not "
                            "the config's); or the config's identity line is damaged")
        self.config.verify(self.ident)
        kpath = keyfile or os.path.join(path, "keyfile")
        self.keyfile = self.keyfile_hash = None
        if os.path.exists(kpath) or need_keyfile:
            try:
                with open(kpath, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise IntegrityError("keyfile", e.strerror) from None
            self.keyfile = format1.KeyFile(data)
            self.keyfile_hash = sha256(data)
            if self.keyfile.kem_name != self.config.kem:
                raise IntegrityError("keyfile", "KEM %s, config says %s"
                                     % (self.keyfile.kem_name, self.config.kem))
            if not ct_equal(self.ident.pub, self.keyfile.pub):
                raise IntegrityError("keyfile", "its public identity is not the recovery "
                                     "code's (another vault's key file?)")
        self.k_names = self.ident.key("catalogue/names")
        self.k_segments = self.ident.key("catalogue/segments")
        self.k_dedup = self.ident.key("dedup")
        self.temporaries = []
        self.chain = []

    def tag(self, name):
        return hmac_sha256(self.k_names, name)[:16]

    # -- storage walk
    def _walk(self, top, name_re, sharded=True):
        """(rel, name) of every stored file under top/ (top/XX/ if sharded),
        sorted; temporaries noted; anything else a problem."""
        out, problems = [], []
        base = os.path.join(self.path, top)
        if not os.path.isdir(base):
            return out, problems
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            reldir = os.path.relpath(dirpath, self.path).replace(os.sep, "/")
            shard = reldir[len(top) + 1:] if reldir != top else None
            for n in sorted(filenames):
                rel = reldir + "/" + n
                if _TMP.match(n):
                    self.temporaries.append(rel)
                elif not sharded and shard is None and name_re.match(n):
                    out.append((rel, n))
                elif sharded and shard is not None and re.fullmatch(r"[0-9a-f]{2}", shard) \
                        and name_re.match(n) and n[:2] == shard:
                    out.append((rel, n))
                else:
                    problems.append(IntegrityError(rel, "unexpected file in %s/" % top))
        return sorted(out), problems

    def load(self, problems):
        """Open every segment and build the state (section 11).  Returns
        (state, chain, old): state maps name -> Entry; chain is the list of
        Segments B..N; old the segment files before B.  Problems that leave
        a state (unexpected files, a segment whose blocks do not open, a
        chain mismatch) are appended to problems; one that leaves none (the
        newest segment or one of the chain missing or without a head) is
        raised."""
        files, walk_problems = self._walk("segments", _HEX16, sharded=False)
        problems += walk_problems
        segs = {}
        for rel, n in files:
            try:
                segs[int(n, 16)] = self.segment_class(self, rel, _read(self.path, rel))
            except ReaderError as e:
                segs[int(n, 16)] = e
        if not segs:
            raise IntegrityError("segments", "no segment")
        newest = max(segs)
        top = segs[newest]
        if isinstance(top, ReaderError):
            # The newest segment is damaged: the state is not known.
            raise top
        base = top.base
        chain = []
        value = None
        for ep in range(base, newest + 1):
            s = segs.get(ep)
            if s is None:
                raise IntegrityError("segments/%016x" % ep, "segment missing from the chain "
                                     "(base %d to epoch %d)" % (base, newest))
            if isinstance(s, ReaderError):
                raise s         # no head: the chain cannot be verified past it
            problems += s.problems()
            if ep == base:
                if s.kind != KIND_BASE:
                    problems.append(IntegrityError(s.rel, "epoch %d is not a base" % ep))
            else:
                if s.kind != KIND_DELTA:
                    problems.append(IntegrityError(s.rel, "a base above the chain's base %d" % base))
                if s.base != base:
                    problems.append(IntegrityError(s.rel, "names base %d, the chain's is %d"
                                                   % (s.base, base)))
            if value is not None and not ct_equal(s.prev_chain, value):
                problems.append(IntegrityError(s.rel, "chain mismatch: previous chain value is "
                                               "not chain(%d)" % (ep - 1)))
            value = sha256(b"pqvault/v2/chain" + s.prev_chain + s.head_digest) \
                if value is None else sha256(b"pqvault/v2/chain" + value + s.head_digest)
            chain.append(s)
        self.chain_value = value
        self.chain = chain
        self._check_chain(chain, problems)
        self.segs = segs
        needed = self._history(segs, chain)
        old = [rel for rel, n in files if int(n, 16) < base and int(n, 16) not in needed]
        return self._state_of(chain), chain, old

    @staticmethod
    def _state_of(segments):
        """Section 11's rule: a name's newest entry wins; a removed entry
        deletes it."""
        state = {}
        for s in segments:
            for e in s.entries:
                if e.kind == E_REMOVED:
                    state.pop(e.name, None)
                else:
                    state[e.name] = e
        return state

    # -- section 26: history
    def _history(self, segs, chain):
        """The chain's kept snapshots (self.kept: epoch -> history.Snapshot),
        and the segments of their generations before the chain's base,
        each checked against the chain value the chain records for its
        epoch (the base's history).  Returns the epochs before the base
        that kept snapshots need (not leftovers).  A kept snapshot's segment
        missing, without a head, of another chain value or kind, or a
        forget that the kept list refutes, is raised: the state is not
        known (pqvault's check stops there too).  Damaged blocks of such a
        segment are kept in self.history_problems (verify's damage)."""
        base = chain[0]
        values = {ep: v for ep, v in base.history}
        value = None
        for s in chain:
            value = sha256(b"pqvault/v2/chain" + (s.prev_chain if value is None else value)
                           + s.head_digest)
            values[s.epoch] = value
        self.chain_values = values
        self.kept = history.kept_snapshots(chain)
        self.history_problems = []
        needed = set()
        for ep, snap in self.kept.items():
            b = snap.base
            for k in range(b, min(ep, base.epoch - 1) + 1):
                if k in needed:
                    continue
                rel = "segments/%016x" % k
                s = segs.get(k)
                if s is None:
                    raise IntegrityError(rel, "missing: snapshot %d, which the chain keeps, "
                                         "needs it" % ep)
                if isinstance(s, ReaderError):
                    raise s
                prev = values[k - 1] if k > 1 else bytes(32)
                if not ct_equal(s.prev_chain, prev) or not ct_equal(
                        sha256(b"pqvault/v2/chain" + prev + s.head_digest), values[k]):
                    raise IntegrityError(rel, "not the segment of epoch %d that the chain records "
                                         "(chain value; snapshot %d needs it)" % (k, ep))
                if (s.kind, s.base) != ((KIND_BASE if k == b else KIND_DELTA), b):
                    raise IntegrityError(rel, "not of snapshot %d's generation (a %s of base %d, "
                                         "expected base %d)" % (ep, "base" if s.kind == KIND_BASE
                                                                else "delta", s.base, b))
                needed.add(k)
                self.history_problems += s.problems()
            if b != base.epoch and ep >= base.epoch:
                raise IntegrityError(base.rel, "snapshot %d of base %d in the generation of %d"
                                     % (ep, b, base.epoch))
        return needed

    def snapshot(self, spec):
        """The kept snapshot named by spec (an epoch, latest, latest~N)."""
        eps = sorted(self.kept)
        m = re.fullmatch(r"latest(?:~([0-9]+))?", spec)
        if m:
            n = int(m.group(1) or 0)
            if n >= len(eps):
                raise ReaderError(spec, "no such snapshot (%d kept)" % len(eps))
            return eps[-1 - n]
        if not re.fullmatch(r"[0-9]+", spec):
            raise UsageError(spec, "not a snapshot (an epoch, latest or latest~N)")
        ep = int(spec)
        if ep not in self.kept:
            raise ReaderError(spec, "no snapshot of epoch %d is kept" % ep)
        return ep

    def generation(self, ep):
        """Segments b .. E of kept snapshot E (its base up to it)."""
        b = self.kept[ep].base
        return [self.segs[k] for k in range(b, ep + 1)]

    def kept_states(self):
        """epoch -> state of every kept snapshot (section 26)."""
        return {ep: self._state_of(self.generation(ep)) for ep in self.kept}

    def _check_chain(self, chain, problems):
        """What a format adds to the chain's rules (format 2: nothing)."""

    # -- sections 10, 14 and 17: file data
    def file_key(self, e):
        pad = hkdf_expand(e.seg.command_key(self), b"pqvault/v2/file-key" + e.tag, 32)
        return bytes(a ^ b for a, b in zip(e.stored_key, pad))

    def extent_data(self, e, fk, x, blob):
        """The plaintext of extent x of entry e from its stored blob (a pack's
        slice, or a whole format-1 object)."""
        rel = x.pack.rel
        what = "extent %d of %s" % (x.index, _show(e.name))
        if x.pack.format1:
            # Section 17: data as section 7, key from the file key, the object
            # id and the extent's index.
            oid = x.pack.id
            if len(blob) < 8:
                raise IntegrityError(rel, "object shorter than its header (%s)" % what)
            header = blob[:8]
            if header[:4] != b"PQVO" or header[4] != 1 or header[6:8] != b"\0\0":
                raise IntegrityError(rel, "bad object header (%s)" % what)
            if header[5] != e.suite:
                raise IntegrityError(rel, "object suite %d, entry says %d (%s)"
                                     % (header[5], e.suite, what))
            key = hkdf(fk, oid, b"pqvault/v1/object" + x.index.to_bytes(4, "big"), 32)
            stored = stream_open(e.suite, key, blob[8:], header + oid, rel, what)
        else:
            key = hkdf(fk, b"", b"pqvault/v2/extent" + x.index.to_bytes(4, "big"), 32)
            ad = bytes([2, x.flags]) + x.offset.to_bytes(8, "big") + x.length.to_bytes(8, "big")
            stored = stream_open(e.suite, key, blob, ad, rel, what)
        if x.flags & XF_ZSTD:
            try:
                return zstd_decompress(stored, x.length)
            except ValueError as err:
                raise IntegrityError(rel, "%s: %s" % (what, err)) from None
        if len(stored) != x.length:
            raise IntegrityError(rel, "%s: %d bytes, expected %d" % (what, len(stored), x.length))
        return stored

    def blob(self, x, pack_data, e):
        """The stored bytes of extent x in its pack's (or object's) data."""
        rel = x.pack.rel
        if x.pack.format1:
            if x.stored != len(pack_data):
                raise IntegrityError(rel, "extent %d of %s: object of %d bytes, entry says "
                                     "offset %d, %d stored bytes" % (x.index, _show(e.name),
                                                                     len(pack_data), x.pack_offset,
                                                                     x.stored))
            return pack_data
        start = PACK_HEADER + x.pack_offset
        if start + x.stored > len(pack_data):
            raise IntegrityError(rel, "extent %d of %s (offset %d, %d bytes) beyond the pack "
                                 "(%d bytes)" % (x.index, _show(e.name), x.pack_offset, x.stored,
                                                 len(pack_data)))
        return pack_data[start:start + x.stored]

    def check_pack(self, pack, data):
        """Header, and size and SHA-256 where a pack table gives them."""
        rel = pack.rel
        if pack.format1:
            return
        if pack.size is not None and len(data) != pack.size:
            raise IntegrityError(rel, "%d bytes, the segment says %d" % (len(data), pack.size))
        if pack.digest is not None and not ct_equal(sha256(data), pack.digest):
            raise IntegrityError(rel, "SHA-256 mismatch")
        if len(data) < PACK_HEADER or data[:4] != b"PQVP" or data[5:8] != b"\0\0\0":
            raise IntegrityError(rel, "bad pack header")
        if data[4] != PACK_VERSION:
            raise IntegrityError(rel, "pack version %d" % data[4])

    def read_pack(self, pack):
        try:
            data = _read(self.path, pack.rel)
        except FileNotFoundError:
            raise IntegrityError(pack.rel, "missing") from None
        self.check_pack(pack, data)
        return data

    def pack_info(self, chain):
        """Every pack id named by the chain -> Pack with the size and hash of
        the segment that introduced it (when one did)."""
        info = {}
        for s in chain:
            for p in s.packs:
                cur = info.get(p.id)
                if cur is None or (cur.size is None and p.size is not None):
                    info[p.id] = p
                elif p.size is not None and (p.size != cur.size or p.digest != cur.digest):
                    raise IntegrityError(s.rel, "pack %s introduced twice, differently" % p.id.hex())
                if cur is not None and cur.format1 != p.format1:
                    raise IntegrityError(s.rel, "pack %s both a pack and a format-1 object"
                                         % p.id.hex())
        return info

    # -- commands
    def verify(self, say=lambda s: None, at=None):
        """Every check.  Returns (damage, warnings, summary), the summary in
        the shape of pqvault check's format-2 line: epoch (newest), segments
        (of the chain, base to newest), entries (of the state), packs (pack
        files and format-1 objects present), bytes (their sizes), damaged
        (each damaged file once, missing packs included), missing, leftovers
        (segments before the base that no kept snapshot needs, packs,
        objects and records no kept state refers to: section 26),
        temporaries.  The data verified is every kept state's (the newest
        and each kept snapshot's).  With at (a snapshot's name), the
        snapshot's state instead: epoch, segments (its generation up to it)
        and entries are its own, its data alone is read; leftovers are
        still what no kept state needs.  A vault whose state is not known
        (its newest segment, or one its chain or a kept snapshot needs,
        missing or without a head; a kept list the chain refutes) gives
        pqvault check's line of zeros with that one damaged item."""
        damage = []
        try:
            state, chain, old = self.load(damage)
            info = self.pack_info(self._known_segments(chain))
            damage += self.history_problems
        except UnsupportedVersion:
            raise               # a newer format: not damage (pqvault: exit 1)
        except ReaderError as e:
            # No state: pqvault's check stops at this one error.
            summary = dict.fromkeys(("epoch", "segments", "entries", "packs", "bytes", "damaged",
                                     "missing", "leftovers", "temporaries"), 0)
            summary["damaged"] = 1
            return [e], [], summary
        say("base %d, epoch %d, chain(%d) %s" % (chain[0].epoch, chain[-1].epoch,
                                                 chain[-1].epoch, self.chain_value.hex()))
        # Every kept state's entries (one object per entry, whatever the
        # number of states it belongs to); the newest state's first.
        kept_states = self.kept_states()
        live, seen = [], set()
        for st in [state] + [kept_states[ep] for ep in sorted(kept_states, reverse=True)]:
            for name in sorted(st):
                if id(st[name]) not in seen:
                    seen.add(id(st[name]))
                    live.append(st[name])
        epoch, nsegs = chain[-1].epoch, len(chain)
        if at is not None:
            epoch = self.snapshot(at)
            state = kept_states[epoch]
            nsegs = len(self.generation(epoch))
            read = [state[name] for name in sorted(state)]
        else:
            read = live
        # The key file: never one that an epoch superseded (section 11).
        for s in chain:
            if any(ct_equal(self.keyfile_hash, h) for h in s.superseded):
                damage.append(IntegrityError("keyfile", "rollback: superseded in epoch %d "
                                             "(an old key file put back)" % s.epoch))
                break
        pack_files, p1 = self._walk("packs", _HEX32)
        object_files, p2 = self._walk("objects", _HEX32)
        record_files, p3 = self._walk("records", _HEX64)
        damage += p1 + p2 + p3
        for n in sorted(os.listdir(self.path)):
            if _TMP.match(n):
                self.temporaries.append(n)
        present = {rel: os.path.getsize(os.path.join(self.path, rel))
                   for rel, _ in pack_files + object_files}
        # Each segment's command key, once (section 10).
        bad_key = set()
        for s in self._known_segments(chain):
            if any(e.kind == E_FILE and not e.chunked for e in s.entries) and \
                    any(e.seg is s for e in read):
                try:
                    s.command_key(self)
                except ReaderError as err:
                    damage.append(err)
                    bad_key.add(s.epoch)
        users, damaged_files = self._uses(read, info, bad_key, damage)
        used = set(users)
        if read is not live:
            used |= set(self._uses(live, info, set(), [])[0])
        missing = 0
        keys = {}
        for rel in sorted(users):
            p, uses = users[rel]
            if rel not in present:
                missing += 1
                damage.append(IntegrityError(rel, "missing (of %s)" % _show(uses[0][0].name)))
                damaged_files.add(rel)
                continue
            try:
                self._verify_pack(p, self.read_pack(p), uses, keys, bad_key)
            except ReaderError as err:
                damage.append(err)
                damaged_files.add(rel)
        for name in sorted(state):
            e = state[name]
            if e.kind == E_FILE and not (self._entry_packs(e) & damaged_files) \
                    and name not in damaged_files:
                say("ok %s" % _show(name))
        leftovers = [rel for rel in sorted(present) if rel not in used]
        leftovers += old + [rel for rel, _ in record_files]
        warnings = [IntegrityError(rel, "leftover (no kept state refers to it)")
                    for rel in leftovers]
        warnings += [IntegrityError(t, "leftover temporary file") for t in self.temporaries]
        # A file or item damaged in several ways counts once.
        summary = {"epoch": epoch, "segments": nsegs,
                   "entries": len(state), "packs": len(present), "bytes": sum(present.values()),
                   "damaged": len({d.subject for d in damage}), "missing": missing,
                   "leftovers": len(leftovers), "temporaries": len(self.temporaries)}
        return damage, warnings, summary

    def _known_segments(self, chain):
        """The chain's segments and those before its base that kept
        snapshots need, in epoch order."""
        eps = set(s.epoch for s in chain)
        for ep in self.kept:
            eps.update(range(self.kept[ep].base, ep + 1))
        return [self.segs[k] for k in sorted(eps)]

    def _uses(self, entries, info, bad_key, damage):
        """Which packs the entries (of kept states) refer to, and through
        what: rel -> (Pack, [(entry, extent)]); and the set of rels (packs,
        or names) already known damaged (the packs of a segment whose
        command key does not open)."""
        users = {}
        damaged_files = set()
        for e in entries:
            if e.kind != E_FILE:
                continue
            for x in e.extents:
                p = info[x.pack.id]
                x.pack = p
                users.setdefault(p.rel, (p, []))[1].append((e, x))
                if e.seg.epoch in bad_key:
                    damaged_files.add(p.rel)
        return users, damaged_files

    def _entry_packs(self, e):
        """The rels of the packs a file entry's data is in."""
        return {x.pack.rel for x in e.extents}

    def _verify_pack(self, p, data, uses, keys, bad_key):
        """Every extent of the pack p (its bytes: data) that the state uses."""
        rel = p.rel
        for e, x in uses:
            if e.seg.epoch in bad_key:
                continue
            k = (e.seg.epoch, e.name)          # entries of several states
            if k not in keys:
                keys[k] = self.file_key(e)
            plain = self.extent_data(e, keys[k], x, self.blob(x, data, e))
            # Section 13: a file of one extent may carry the keyed hash of
            # its content (equal files share their data).
            if e.content is not None and (len(e.extents) != 1 or
                                          not ct_equal(hmac_sha256(self.k_dedup, plain),
                                                       e.content)):
                raise IntegrityError(rel, "content hash of %s does not match" % _show(e.name))

    def state(self, at=None):
        """The newest state, or with at (a snapshot's name, section 26) the
        state of the kept snapshot's generation up to it: name -> Entry."""
        problems = []
        state, chain, _ = self.load(problems)
        if problems:
            raise problems[0]
        if at is not None:
            gen = self.generation(self.snapshot(at))
            for seg in gen:
                if seg.problems():
                    raise seg.problems()[0]
            state = self._state_of(gen)
        info = self.pack_info(self._known_segments(chain))
        for e in state.values():
            if e.kind == E_FILE:
                for x in e.extents:
                    x.pack = info[x.pack.id]
        return state

    def entries(self, at=None):
        return [e.listing() for e in self.state(at).values()]

    def snapshots(self):
        """The kept snapshots (section 26), oldest first."""
        problems = []
        self.load(problems)
        if problems:
            raise problems[0]
        return list(self.kept.values())

    def restore(self, outdir, prefix=None, at=None):
        """Restore the state (or the names equal to / under prefix) into
        outdir: files with their holes, directories, symbolic links, hard
        links, extended attributes, owners when root, modes and mtimes."""
        state = self.state(at)
        items = sorted(state.values(), key=lambda e: e.name)
        if prefix is not None:
            pre = prefix.encode()
            items = [e for e in items if e.name == pre or e.name.startswith(pre + b"/")]
            if not items:
                raise ReaderError(prefix, "not in the vault")
        outb = os.fsencode(outdir)
        for e in items:
            if e.kind != E_DIR and os.path.lexists(os.path.join(outb, e.name)):
                raise ReaderError(os.fsdecode(os.path.join(outb, e.name)), "already exists")
        os.makedirs(outb, exist_ok=True)
        dirs = [e for e in items if e.kind == E_DIR]
        for e in dirs:
            os.makedirs(os.path.join(outb, e.name), mode=0o700, exist_ok=True)
        packs = {}
        linked = {}
        count = 0
        for e in items:
            if e.kind == E_DIR:
                continue
            dest = os.path.join(outb, e.name)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            if e.kind == E_SYMLINK:
                os.symlink(e.target, dest)
                self._attributes(dest, e, link=True)
                count += 1
                continue
            if e.kind == E_FIFO or e.kind in (E_CHARDEV, E_BLOCKDEV):
                # Section 13: a FIFO, or a device node (only root makes one:
                # skipped otherwise, as pqvault get does).
                if e.kind != E_FIFO and os.geteuid() != 0:
                    continue
                tmp = dest + b".reader-tmp"
                if e.kind == E_FIFO:
                    os.mkfifo(tmp, 0o600)
                else:
                    os.mknod(tmp, 0o600 | (stat.S_IFCHR if e.kind == E_CHARDEV else stat.S_IFBLK),
                             os.makedev(e.major, e.minor))
                self._attributes(tmp, e)
                os.rename(tmp, dest)
                count += 1
                continue
            if e.link_group and e.link_group in linked:
                os.link(linked[e.link_group], dest)
                count += 1
                continue
            tmp = dest + b".reader-tmp"
            try:
                with open(tmp, "wb") as f:
                    self._write_data(f, e, packs)
                    f.truncate(e.size)          # the holes after the last extent
                self._attributes(tmp, e)
                os.rename(tmp, dest)
            finally:
                if os.path.lexists(tmp):
                    os.unlink(tmp)
            if e.link_group:
                linked[e.link_group] = dest
            count += 1
        for e in sorted(dirs, key=lambda e: e.name.count(b"/"), reverse=True):
            self._attributes(os.path.join(outb, e.name), e)
        return count, len(dirs)

    def _write_data(self, f, e, packs):
        """Write file entry e's data at its offsets (the holes left
        unwritten); packs: a cache of one pack's bytes."""
        fk = self.file_key(e)
        for x in e.extents:
            if x.pack.rel not in packs:
                packs.clear()       # keep one pack in memory
                packs[x.pack.rel] = self.read_pack(x.pack)
            data = self.extent_data(e, fk, x, self.blob(x, packs[x.pack.rel], e))
            f.seek(x.offset)
            f.write(data)

    @staticmethod
    def _attributes(path, e, link=False):
        """Owner (root only: numeric ids), extended attributes, mode, mtime."""
        if os.geteuid() == 0:
            os.chown(path, e.uid, e.gid, follow_symlinks=False)
        for name, value in e.xattrs:
            try:
                os.setxattr(path, name, value, follow_symlinks=False)
            except OSError:
                if not link:    # Linux refuses user.* attributes on links
                    raise
        if not link:
            os.chmod(path, e.mode)
        os.utime(path, ns=(e.mtime_sec * 10 ** 9 + e.mtime_nsec,) * 2, follow_symlinks=False)


def _read(base, rel):
    with open(os.path.join(base, rel), "rb") as f:
        return f.read()


def _show(name):
    return name.decode("utf-8", errors="backslashreplace")
