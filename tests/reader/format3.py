"""pqvault on-disk format version 3, read from docs/FORMAT.md alone
(sections 20-25: format 2 with content-defined chunks; everything else is
format 2's, format2.py, whose classes these extend).

A format-3 vault's chain may start with segments of version 2 (written
before its upgrade, section 24) and go on with segments of version 3; its
state mixes format-2 file entries (extents in packs of version 2, file keys
under a segment's command key) and chunked ones (entry flag bit 4: chunk
identities, found through the chain's chunk records in packs of version 3).

Entry point: Vault(path, seed) -> .verify(), .entries(), .restore(outdir),
.check_chunking().  Every section number below is docs/FORMAT.md's.
"""

from cryptography.exceptions import InvalidTag

import format2
from common import IntegrityError, ct_equal, hkdf, hkdf_expand, hmac_sha256
from format1 import SUITES, aead_open
from format2 import (E_FILE, EF_CONTENT, EF_FORMAT2, PACK_HEADER, TAG, BLOCK_MAX, SEG_HEADER,
                     Cursor, _show, stream_open, stream_plain_len, zstd_decompress)

VERSION = 3
decode_recovery = format2.decode_recovery

SEG_VERSION2, SEG_VERSION3 = 2, 3
HEAD_VERSION3 = 3
PACK_VERSION2, PACK_VERSION3 = 2, 3
EF_CHUNKED = 16                     # entry flag bit 4 (section 23)
CHUNK_MAX = 2 << 20                 # a chunk's plaintext (sections 21, 23)
SALT = 16                           # a blob's salt (section 22)
LOCATOR = 32                        # a pack's locator: 16 bytes sealed (section 22)
BF_ZSTD = 1                         # blob flags: bit 0 zstd, bits 1-2 the suite
BF_SUITE_SHIFT, BF_SUITE_MASK = 1, 0x06


def stream_size(n):
    """The STREAM ciphertext length of n plaintext bytes (section 7)."""
    return n + TAG * max(1, -(-n // format2.SEGMENT))


def padme(length):
    """Section 22: L rounded up to a multiple of 2^(E-S), E = floor(log2 L),
    S = floor(log2 E) + 1."""
    if length < 2:
        return length
    e = length.bit_length() - 1
    s = e.bit_length()                  # floor(log2 E) + 1
    bits = max(e - s, 0)
    mask = (1 << bits) - 1
    return (length + mask) & ~mask


FULL_PACK = 8 << 20          # section 22: a full pack
FULL_ALIGN = 64 << 10


def padded(length):
    """Section 22: the length a pack of `length` bytes before padding is
    padded to: its Padme length, or for a full pack (at least 8 MiB) the
    next multiple of 64 KiB."""
    if length >= FULL_PACK:
        return -(-length // FULL_ALIGN) * FULL_ALIGN
    return padme(length)


def blob_flags_ok(flags, suite=None):
    """Bit 0 zstd, bits 1-2 a suite (1 or 2, and the pack's when given),
    other bits 0."""
    bsuite = (flags & BF_SUITE_MASK) >> BF_SUITE_SHIFT
    return not flags & ~(BF_ZSTD | BF_SUITE_MASK) and bsuite in SUITES and \
        (suite is None or bsuite == suite)


def zstd_bound(n):
    """zstd's ZSTD_compressBound(n) (section 22: the blob maximum)."""
    return n + (n >> 8) + (((128 << 10) - n) >> 11 if n < (128 << 10) else 0)


def stored_ok(stored, plen, flags):
    """A blob's length for its plaintext length (sections 22, 23): exactly
    16 + STREAM size uncompressed; a zstd blob is a salt and a STREAM of at
    least a tag, at most the blob maximum 16 + STREAM size of
    ZSTD_compressBound(plaintext length)."""
    if not flags & BF_ZSTD:
        return stored == SALT + stream_size(plen)
    return SALT + TAG <= stored <= SALT + stream_size(zstd_bound(plen)) and \
        stream_plain_len(stored - SALT) is not None


# ---- Section 23: chunked entries ------------------------------------------------------

class Chunk:
    __slots__ = ("index", "offset", "length", "id")

    def __init__(self, index, offset, length, cid):
        self.index, self.offset, self.length, self.id = index, offset, length, cid


class Entry(format2.Entry):
    """Format 2's entry, and in a segment of version 3 a chunked file (flag
    bit 4): size, then its chunks (file offset, plaintext length, identity);
    no suite, file key or content hash."""

    def _parse(self, seg, c):
        super()._parse(seg, c)
        if self.kind not in (E_FILE, format2.E_REMOVED) and self.flags & EF_CHUNKED:
            c.fail("the chunked flag on an entry that is not a file")

    def _parse_file(self, seg, c, flags):
        if not flags & EF_CHUNKED:
            return super()._parse_file(seg, c, flags)
        if flags & EF_CONTENT:
            c.fail("a chunked file with a content hash")
        self.chunked = True
        self.suite = None
        self.stored_key = None
        self.extents = []
        self.size = c.varint()
        if self.size > format2.MAX_SIZE:
            c.fail("size %d beyond 2^50" % self.size)
        self.chunks = []
        end = 0
        for i in range(c.count(34)):
            off, plen = c.varint(), c.varint()
            cid = c.take(32)
            if not 1 <= plen <= CHUNK_MAX:
                c.fail("chunk %d: plaintext length %d (1 to 2 MiB)" % (i, plen))
            if off < end:
                c.fail("chunk %d: at %d, overlaps or precedes the previous one" % (i, off))
            end = off + plen
            if end > self.size:
                c.fail("chunk %d: ends at %d, beyond the size %d" % (i, end, self.size))
            self.chunks.append(Chunk(i, off, plen, cid))

    def holes(self):
        if self.kind == E_FILE and self.chunked:
            return self.size - sum(ch.length for ch in self.chunks)
        return super().holes()

    def listing(self):
        if not (self.kind == E_FILE and self.chunked):
            return super().listing()
        # docs/CLI.md's list --json: a chunked file has no suite of its own
        # (its blobs carry theirs): aead null; "objects" counts its chunks.
        suite, self.suite = self.suite, 1
        try:
            d = super().listing()
        finally:
            self.suite = suite
        d["aead"] = None
        d["objects"] = len(self.chunks)
        return d


# ---- Section 23: chunk records and segments of version 3 ----------------------------------

class Record:
    """A chunk record: where the blob of identity `id` is."""
    __slots__ = ("id", "pack", "offset", "stored", "plen", "flags", "seg")

    def __init__(self, cid, pack, offset, stored, plen, flags, seg):
        self.id, self.pack, self.offset, self.stored = cid, pack, offset, stored
        self.plen, self.flags, self.seg = plen, flags, seg

    def fields(self):
        return (self.offset, self.stored, self.plen, self.flags)


class Segment(format2.Segment):
    """A segment of a format-3 vault: version 2 (before the upgrade: heads
    of version 1 or 2, entries of format 2) or 3 (head version 3 with a
    chunk block index and extensions, chunked entries allowed, chunk blocks
    after the entry blocks)."""

    entry_class = Entry

    def check_version(self):
        if self.version == SEG_VERSION3:
            self.entry_flags = EF_FORMAT2 | EF_CHUNKED
            # Section 13: FIFOs and device nodes, in segments of version 3 only.
            self.entry_kinds = format2.E_FORMAT2 + (format2.E_FIFO, format2.E_CHARDEV,
                                                    format2.E_BLOCKDEV)
            self.head_versions = (HEAD_VERSION3,)
        elif self.version == SEG_VERSION2:
            self.entry_flags = EF_FORMAT2
            self.entry_kinds = format2.E_FORMAT2
            self.head_versions = (format2.HEAD_VERSION, format2.HEAD_VERSION_EXT)
        else:
            raise IntegrityError(self.rel, "segment version %d in a format-3 vault" % self.version)

    def _parse_head_tail(self, vault, c):
        self.chunk_index = []
        self.records = []
        if self.head_version != HEAD_VERSION3:
            return super()._parse_head_tail(vault, c)
        for _ in range(c.count(3)):
            self.chunk_index.append((c.varint(), c.varint(), c.varint()))
        self.extensions = []
        self._parse_extensions(c, at_least=0)

    def _layout(self):
        return super()._layout() + [("chunk block %d" % j, off, slen)
                                    for j, (off, slen, _) in enumerate(self.chunk_index)]

    def problems(self):
        return super().problems() + self.chunk_errors

    def _open_more_blocks(self, vault, data, key, head_len, layout_ok):
        """Chunk blocks (section 23): after the entry blocks, chunk block j
        sealed with nonce B + 1 + j; records in strictly ascending identity
        order across the segment.  A chunk block that does not open (or
        parse) makes its own records unknown (the segment's entries and
        other records stand)."""
        self.chunk_errors = []
        if not layout_ok:
            if self.chunk_index:
                self.chunk_errors.append(IntegrityError(self.rel, "chunk blocks not read (the "
                                                        "blocks' layout is wrong)"))
            return
        last = None
        for j, (off, slen, count) in enumerate(self.chunk_index):
            try:
                got = self._chunk_block(data, key, head_len, j, off, slen, count, last)
            except IntegrityError as e:
                self.chunk_errors.append(e)
                continue
            if got:
                last = got[-1].id
            self.records += got

    def _chunk_block(self, data, key, head_len, j, off, slen, count, last):
        rel = self.rel
        pos = SEG_HEADER + head_len + off
        nonce = (self.nblocks + 1 + j).to_bytes(12, "big")
        try:
            pt = aead_open(self.suite, key, nonce, data[pos:pos + slen], self.header)
        except InvalidTag:
            raise IntegrityError(rel, "chunk block %d does not authenticate" % j) from None
        c = Cursor(pt, rel, "chunk block %d" % j)
        got = []
        last_start = 0
        while c.left():
            last_start = c.off
            r = self._record(c)
            if last is not None and r.id <= last:
                c.fail("records out of identity order")
            last = r.id
            got.append(r)
        if len(got) != count:
            raise IntegrityError(rel, "chunk block %d holds %d records, the index says %d"
                                 % (j, len(got), count))
        if last_start >= BLOCK_MAX:
            raise IntegrityError(rel, "chunk block %d: %d bytes before its last record"
                                 % (j, last_start))
        return got

    def _record(self, c):
        cid = c.take(32)
        c.what = "record %s" % cid.hex()
        pidx, off, stored, plen = c.varint(), c.varint(), c.varint(), c.varint()
        flags = c.u8()
        if pidx >= len(self.packs):
            c.fail("pack index %d beyond the pack table (%d)" % (pidx, len(self.packs)))
        pack = self.packs[pidx]
        if pack.format1:
            c.fail("names a format-1 object")
        if pack.size is None:
            c.fail("names pack %s, which this segment does not introduce (no size and hash)"
                   % pack.id.hex())
        if not 1 <= plen <= CHUNK_MAX:
            c.fail("plaintext length %d (1 to 2 MiB)" % plen)
        if not blob_flags_ok(flags):
            c.fail("blob flags %#x" % flags)
        if not stored_ok(stored, plen, flags):
            c.fail("stored length %d for %d plain bytes (flags %#x)" % (stored, plen, flags))
        return Record(cid, pack, off, stored, plen, flags, self)


# ---- The vault ----------------------------------------------------------------------------

class Vault(format2.Vault):
    version = VERSION
    segment_class = Segment

    def __init__(self, path, seed, keyfile=None, need_keyfile=False):
        super().__init__(path, seed, keyfile=keyfile, need_keyfile=need_keyfile)
        self.k_chunk_id = self.ident.key("chunks/id")
        self.k_chunk_data = self.ident.key("chunks/data")
        self.k_packs = self.ident.key("packs")
        self.index = {}
        self.records_by_pack = {}

    def _check_chain(self, chain, problems):
        """Section 20: in a chain, a segment of version 2 never follows one
        of version 3."""
        seen3 = None
        for s in chain:
            if s.version == SEG_VERSION3:
                seen3 = s
            elif seen3 is not None:
                problems.append(IntegrityError(s.rel, "a segment of version 2 after epoch %d "
                                               "of version 3" % seen3.epoch))

    def _build_index(self, chain, info):
        """Section 23: every segment's records from the base to the newest, a
        later record of an identity replacing an earlier one."""
        self.index = {}
        self.records_by_pack = {}
        for s in chain:
            for r in s.records:
                r.pack = info[r.pack.id]
                self.index[r.id] = r
                self.records_by_pack.setdefault(r.pack.id, []).append(r)

    def state(self, at=None):
        st = super().state(at)
        self._build_index(self.chain, self.pack_info(self.chain))
        return st

    # -- verify's hooks
    def _uses(self, entries, info, bad_key, damage):
        users, damaged = super()._uses(entries, info, bad_key, damage)
        self._build_index(self.chain, info)
        for e in entries:
            name = e.name
            if e.kind != E_FILE or not e.chunked:
                continue
            for ch in e.chunks:
                r = self.index.get(ch.id)
                if r is None:
                    damage.append(IntegrityError(_show(name), "chunk %d (%s) has no record: "
                                                 "its data is lost" % (ch.index, ch.id.hex())))
                    damaged.add(name)
                elif r.plen != ch.length:
                    damage.append(IntegrityError(_show(name), "chunk %d (%s): %d bytes, its "
                                                 "record says %d" % (ch.index, ch.id.hex(),
                                                                     ch.length, r.plen)))
                    damaged.add(name)
                else:
                    users.setdefault(r.pack.rel, (r.pack, []))[1].append((e, ch))
        return users, damaged

    def _entry_packs(self, e):
        if e.chunked:
            return {self.index[ch.id].pack.rel for ch in e.chunks if ch.id in self.index}
        return super()._entry_packs(e)

    def _verify_pack(self, p, data, uses, keys, bad_key):
        extents = [u for u in uses if isinstance(u[1], format2.Extent)]
        chunks = [u for u in uses if isinstance(u[1], Chunk)]
        if extents:
            if not p.format1:       # (a format-1 object: section 7's header)
                self._pack_version(p, data, PACK_VERSION2, extents[0][0])
            super()._verify_pack(p, data, extents, keys, bad_key)
        if chunks:
            self._pack_version(p, data, PACK_VERSION3, chunks[0][0])
            table = self.pack_table(p, data)
            # The pack's own account of its blobs agrees with every record of
            # the chain that names it (section 22: what check --read-data
            # compares).
            for r in self.records_by_pack.get(p.id, []):
                if r.fields() not in table.get(r.id, ()):
                    raise IntegrityError(p.rel, "the record of chunk %s (epoch %d: offset %d, "
                                         "%d stored, %d plain, flags %#x) is not in the pack's "
                                         "table" % ((r.id.hex(), r.seg.epoch) + r.fields()))
            done = set()
            for e, ch in chunks:
                if ch.id in done:
                    continue
                done.add(ch.id)
                self.chunk_data(self.index[ch.id], data)

    def check_pack(self, pack, data):
        """Size and SHA-256 as the pack table gives them; the header of
        version 2 (section 14) or 3 (section 22)."""
        rel = pack.rel
        if pack.format1:
            return
        if pack.size is not None and len(data) != pack.size:
            raise IntegrityError(rel, "%d bytes, the segment says %d" % (len(data), pack.size))
        if pack.digest is not None and not ct_equal(format2.sha256(data), pack.digest):
            raise IntegrityError(rel, "SHA-256 mismatch")
        if len(data) < PACK_HEADER or data[:4] != b"PQVP":
            raise IntegrityError(rel, "bad pack header")
        if data[4] == PACK_VERSION2:
            if data[5:8] != b"\0\0\0":
                raise IntegrityError(rel, "bad pack header")
        elif data[4] == PACK_VERSION3:
            if data[5] not in SUITES or data[6:8] != b"\0\0":
                raise IntegrityError(rel, "bad pack header (version 3)")
        else:
            raise IntegrityError(rel, "pack version %d" % data[4])

    @staticmethod
    def _pack_version(p, data, want, e):
        if data[4] != want:
            raise IntegrityError(p.rel, "a pack of version %d holds data of %s, which needs "
                                 "version %d" % (data[4], _show(e.name), want))

    def pack_table(self, p, data):
        """Section 22: open the locator (the last 32 bytes) and the table
        before it; check the blobs lie back to back from byte 8 to the table,
        the records' suites are the pack's, and the padding gives the Padme
        length.  Returns identity -> [(offset, stored, plen, flags)]."""
        rel = p.rel
        n = len(data)
        if n < PACK_HEADER + TAG + LOCATOR:
            raise IntegrityError(rel, "pack of %d bytes: no room for a table and locator" % n)
        k = hkdf_expand(self.k_packs, b"pqvault/v3/pack" + p.id, 32)
        ad = data[:8] + p.id
        try:
            loc = aead_open(data[5], k, bytes(12), data[n - LOCATOR:], ad)
        except InvalidTag:
            raise IntegrityError(rel, "locator does not authenticate") from None
        tlen = int.from_bytes(loc[:8], "big")
        if len(loc) != 16 or any(loc[8:]):
            raise IntegrityError(rel, "locator: non-zero reserved bytes")
        start = n - LOCATOR - tlen
        if tlen < TAG or start < PACK_HEADER:
            raise IntegrityError(rel, "locator: a table of %d bytes does not fit" % tlen)
        try:
            pt = aead_open(data[5], k, (1).to_bytes(12, "big"), data[start:n - LOCATOR], ad)
        except InvalidTag:
            raise IntegrityError(rel, "table does not authenticate") from None
        c = Cursor(pt, rel, "pack table")
        table = {}
        pos = 0
        for i in range(c.count(36)):
            cid = c.take(32)
            off, stored, plen = c.varint(), c.varint(), c.varint()
            flags = c.u8()
            if off != pos:
                c.fail("record %d at offset %d, expected %d (blobs back to back)" % (i, off, pos))
            if not 1 <= plen <= CHUNK_MAX or not blob_flags_ok(flags, data[5]) \
                    or not stored_ok(stored, plen, flags):
                c.fail("record %d: %d stored, %d plain bytes, flags %#x (pack suite %d)"
                       % (i, stored, plen, flags, data[5]))
            pos += stored
            table.setdefault(cid, []).append((off, stored, plen, flags))
        pad = c.left()
        if any(c.take(pad)):
            c.fail("non-zero bytes after the records")
        if PACK_HEADER + pos != start:
            raise IntegrityError(rel, "blobs end at %d, the table starts at %d"
                                 % (PACK_HEADER + pos, start))
        if padded(n - pad) != n:
            raise IntegrityError(rel, "%d bytes with %d of padding: not the padded length of %d "
                                 "(%d)" % (n, pad, n - pad, padded(n - pad)))
        return table

    def chunk_data(self, r, data):
        """The plaintext of chunk record r's blob in its pack's bytes
        (section 22), its identity checked."""
        rel = r.pack.rel
        what = "chunk %s" % r.id.hex()
        start = PACK_HEADER + r.offset
        if start + r.stored > len(data):
            raise IntegrityError(rel, "%s (offset %d, %d bytes) beyond the pack (%d bytes)"
                                 % (what, r.offset, r.stored, len(data)))
        blob = data[start:start + r.stored]
        suite = (r.flags & BF_SUITE_MASK) >> BF_SUITE_SHIFT
        if suite != data[5]:
            raise IntegrityError(rel, "%s: blob suite %d, the pack's is %d" % (what, suite, data[5]))
        key = hkdf(self.k_chunk_data, blob[:SALT], b"pqvault/v3/chunk" + r.id, 32)
        ad = bytes([3, r.flags]) + r.plen.to_bytes(8, "big")
        stored = stream_open(suite, key, blob[SALT:], ad, rel, what)
        if r.flags & BF_ZSTD:
            try:
                plain = zstd_decompress(stored, r.plen)
            except ValueError as err:
                raise IntegrityError(rel, "%s: %s" % (what, err)) from None
        elif len(stored) != r.plen:
            raise IntegrityError(rel, "%s: %d bytes, expected %d" % (what, len(stored), r.plen))
        else:
            plain = stored
        if not ct_equal(hmac_sha256(self.k_chunk_id, plain), r.id):
            raise IntegrityError(rel, "%s: its plaintext is not its identity's" % what)
        return plain

    # -- restore's hook
    def _write_data(self, f, e, packs):
        if not e.chunked:
            return super()._write_data(f, e, packs)
        for ch in e.chunks:
            r = self.index.get(ch.id)
            if r is None or r.plen != ch.length:
                raise IntegrityError(_show(e.name), "chunk %d (%s) has no record of its length: "
                                     "its data is lost" % (ch.index, ch.id.hex()))
            rel = r.pack.rel
            if rel not in packs:
                packs.clear()       # keep one pack in memory
                packs[rel] = self.read_pack(r.pack)
                self._pack_version(r.pack, packs[rel], PACK_VERSION3, e)
            f.seek(ch.offset)
            f.write(self.chunk_data(r, packs[rel]))

    # -- section 21 against the vault's own key
    def check_chunking(self, say=lambda s: None):
        """Cut every chunked file of the state again with the chunker under
        key("chunks/boundaries") and compare with its entry's chunks: each
        run of adjacent chunks is one data region.  Returns the problems.
        Slow (Python): for small vaults."""
        import chunker
        ch = chunker.Chunker(self.ident.key("chunks/boundaries"))
        problems = []
        state = self.state()
        packs = {}
        for name in sorted(state):
            e = state[name]
            if e.kind != E_FILE or not e.chunked:
                continue
            regions = []
            for c in e.chunks:
                if regions and regions[-1][-1].offset + regions[-1][-1].length == c.offset:
                    regions[-1].append(c)
                else:
                    regions.append([c])
            for reg in regions:
                parts = []
                for c in reg:
                    r = self.index[c.id]
                    if r.pack.rel not in packs:
                        packs.clear()
                        packs[r.pack.rel] = self.read_pack(r.pack)
                    parts.append(self.chunk_data(r, packs[r.pack.rel]))
                want = ch.cut(b"".join(parts))
                got = [c.length for c in reg]
                if want != got:
                    problems.append(IntegrityError(_show(name), "the region at %d is cut into %s, "
                                                   "section 21 gives %s"
                                                   % (reg[0].offset, got, want)))
            say("chunking ok %s" % _show(name))
        return problems
