"""pqvault on-disk format version 1, read from docs/FORMAT.md alone.

Entry point: Vault(path, seed) -> .verify(), .entries(), .restore(outdir).
Every section number below is docs/FORMAT.md's.
"""

import os
import re

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import (X25519PrivateKey,
                                                              X25519PublicKey)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

import frodokem
from common import (AuthError, IntegrityError, NoVault, ReaderError, UnsupportedVersion,
                    ct_equal, hkdf, hkdf_expand, hmac_sha256, sha3_256, sha256)

VERSION = 1

# KEM ids (section 2).
KEM_IDS = {1: "FrodoKEM-640-AES", 2: "FrodoKEM-640-SHAKE", 3: "FrodoKEM-976-AES",
           4: "FrodoKEM-976-SHAKE", 5: "FrodoKEM-1344-AES", 6: "FrodoKEM-1344-SHAKE"}
KEM_BY_NAME = {v: k for k, v in KEM_IDS.items()}
# AEAD suites.
SUITES = {1: "AES-256-GCM", 2: "ChaCha20-Poly1305"}
SUITE_BY_NAME = {v: k for k, v in SUITES.items()}

OBJECT_SIZE = 4 << 20
MAX_RECORD = 64 << 20
BODY_FIXED = 1 + 1 + 2 + 4 + 8 + 4 + 8 + 1 + 4 + 4   # record body without name, ids, key
SEGMENT = 65536
TAG = 16
NAME_MAX = 4096


def aead_open(suite, key, nonce, ct, ad):
    cls = AESGCM if suite == 1 else ChaCha20Poly1305
    return cls(key).decrypt(nonce, ct, ad)


# ---- Section 5: recovery code ---------------------------------------------------

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def decode_recovery(code):
    """The 32-byte seed from a recovery code; AuthError on a bad checksum."""
    clean = []
    for ch in code:
        if ch in "- \t\r\n":
            continue
        ch = ch.upper()
        ch = {"O": "0", "I": "1", "L": "1"}.get(ch, ch)
        if ch not in CROCKFORD:
            raise AuthError("recovery code", "invalid character %r" % ch)
        clean.append(CROCKFORD.index(ch))
    if len(clean) != 56:
        raise AuthError("recovery code", "%d symbols, expected 56" % len(clean))
    v = 0
    for d in clean:
        v = (v << 5) | d
    raw = v.to_bytes(35, "big")
    seed, check = raw[:32], raw[32:]
    if not ct_equal(sha256(b"pqvault/v1/recovery" + seed)[:3], check):
        raise AuthError("recovery code", "checksum mismatch (mistyped code?)")
    return seed


# ---- Section 2: identity --------------------------------------------------------

class Identity:
    def __init__(self, seed, kem_name):
        self.kem_name = kem_name
        self.kem_id = KEM_BY_NAME[kem_name]
        self.kem = frodokem.PARAMS[kem_name]
        # PRK = HKDF(salt, seed, info = "", 32): extract then expand with an
        # empty info (not the bare extract).
        self.prk = hkdf(seed, b"pqvault/v1/identity", b"", 32)
        xsec = hkdf_expand(self.prk, b"x25519", 32)
        self.x25519 = X25519PrivateKey.from_private_bytes(xsec)
        xpub = self.x25519.public_key().public_bytes(serialization.Encoding.Raw,
                                                     serialization.PublicFormat.Raw)
        p = self.kem
        coins = hkdf_expand(self.prk, b"frodokem/" + kem_name.encode(), p.keygen_coin_bytes)
        self.frodo_pk, self.frodo_sk = frodokem.keypair(p, coins)
        self.pub = bytes([1, self.kem_id]) + xpub + self.frodo_pk

    def key(self, label):
        return hkdf_expand(self.prk, b"key/" + label.encode(), 32)

    def fingerprint(self):
        h = sha3_256(self.pub)[:20].hex()
        return "pqv1-" + "-".join(h[i:i + 8] for i in range(0, 40, 8))


# ---- Section 6: the hybrid wrap (pqv_wrap) ------------------------------------------

def unwrap_key(ident, w, context, subject, what="wrapped key"):
    """Open a section-6 hybrid wrap of a 32-byte key to the identity, under
    `context`.  IntegrityError (naming subject) if it does not open."""
    p = ident.kem
    if len(w) != 2 + 32 + p.ct_bytes + 48:
        raise IntegrityError(subject, "%s of %d bytes, expected %d"
                             % (what, len(w), 2 + 32 + p.ct_bytes + 48))
    if w[0] != 1:
        raise IntegrityError(subject, "unknown %s version %d" % (what, w[0]))
    if w[1] != ident.kem_id:
        raise IntegrityError(subject, "%s for KEM id %d, identity is %d" % (what, w[1], ident.kem_id))
    e = w[2:34]
    c = w[34:34 + p.ct_bytes]
    sealed = w[34 + p.ct_bytes:]
    try:
        ss_x = ident.x25519.exchange(X25519PublicKey.from_public_bytes(e))
    except ValueError:      # the library refuses an all-zero result
        ss_x = bytes(32)
    if not any(ss_x):
        raise IntegrityError(subject, "X25519 shared secret is zero")
    ss_f = frodokem.decaps(p, ident.frodo_sk, c)
    kid = bytes([ident.kem_id])
    wk = sha3_256(b"pqvault/v1/hybrid-wrap" + kid + ss_f + ss_x + e + sha3_256(c)
                  + sha3_256(ident.pub))
    try:
        return ChaCha20Poly1305(wk).decrypt(bytes(12), sealed, b"\x01" + kid + context)
    except InvalidTag:
        raise IntegrityError(subject, "%s does not open" % what) from None


# ---- Section 3: config ----------------------------------------------------------

def _config_re(version):
    return re.compile(
        b"pqvault-config %d\n" % version +
        rb"vault-id ([0-9a-f]{32})\n"
        rb"kem (FrodoKEM-(?:640|976|1344)-(?:AES|SHAKE))\n"
        rb"aead (AES-256-GCM|ChaCha20-Poly1305)\n"
        rb"identity ([0-9a-f]{64})\n"
        rb"created (0|[1-9][0-9]{0,18})\n"
        rb"mac ([0-9a-f]{64})\n\Z")


class Config:
    """The config of section 3; format 2 keeps it with its first line
    `pqvault-config 2` (version)."""

    def __init__(self, data, version=VERSION):
        if len(data) > 4096:
            raise IntegrityError("config", "longer than 4096 bytes")
        if b"\0" in data:
            raise IntegrityError("config", "contains a NUL byte")
        m = re.match(rb"pqvault-config ([1-9])\n", data)
        if m and int(m.group(1)) != version:
            raise UnsupportedVersion("config", "unsupported version %s" % m.group(1).decode())
        m = _config_re(version).match(data)
        if not m:
            raise IntegrityError("config", "malformed (section 3 layout)")
        self.vault_id = bytes.fromhex(m.group(1).decode())
        self.kem = m.group(2).decode()
        self.aead = m.group(3).decode()
        self.identity = bytes.fromhex(m.group(4).decode())
        self.created = int(m.group(5))
        if self.created > (1 << 63) - 1:
            raise IntegrityError("config", "created beyond INT64_MAX")
        self.mac = bytes.fromhex(m.group(6).decode())
        self.mac_input = data[:data.rindex(b"mac ")]

    def verify(self, ident):
        if not ct_equal(sha3_256(ident.pub), self.identity):
            raise IntegrityError("config", "identity is not SHA3-256 of the seed's public identity")
        if not ct_equal(hmac_sha256(ident.key("config"), self.mac_input), self.mac):
            raise IntegrityError("config", "mac mismatch")


# ---- Section 4: key file --------------------------------------------------------

SLOT_BYTES = 92


class KeyFile:
    def __init__(self, data):
        if len(data) < 10 or data[:4] != b"PQVK":
            raise IntegrityError("keyfile", "bad magic")
        if data[4] != VERSION:
            # A damaged version byte in a file of this version's layout is
            # corruption (the trailer tells); anything else is a newer file.
            kem = KEM_IDS.get(data[9])
            if data[8] == 1 and kem and len(data) == 8 + 34 + frodokem.PARAMS[kem].pk_bytes \
                    + 2 * SLOT_BYTES + 32 and not ct_equal(sha256(data[:-32]), data[-32:]):
                raise IntegrityError("keyfile", "trailer (SHA-256) mismatch")
            raise UnsupportedVersion("keyfile", "unsupported version %d" % data[4])
        if data[5:8] != b"\0\0\0":
            raise IntegrityError("keyfile", "reserved bytes not zero")
        if data[8] != 1:
            raise IntegrityError("keyfile", "unknown public identity version %d" % data[8])
        kem_id = data[9]
        if kem_id not in KEM_IDS:
            raise IntegrityError("keyfile", "unknown KEM id %d" % kem_id)
        self.kem_name = KEM_IDS[kem_id]
        publen = 2 + 32 + frodokem.PARAMS[self.kem_name].pk_bytes
        hlen = 8 + publen
        want = hlen + 2 * SLOT_BYTES + 32
        if len(data) != want:
            raise IntegrityError("keyfile", "%d bytes, expected %d" % (len(data), want))
        if not ct_equal(sha256(data[:-32]), data[-32:]):
            raise IntegrityError("keyfile", "trailer (SHA-256) mismatch")
        self.header = data[:hlen]
        self.pub = data[8:hlen]
        self.slots = []
        for i in range(2):
            s = data[hlen + i * SLOT_BYTES:hlen + (i + 1) * SLOT_BYTES]
            t, m_kib, lanes = (int.from_bytes(s[k:k + 4], "big") for k in (0, 4, 8))
            if not 1 <= t <= 64:
                raise IntegrityError("keyfile", "slot %d: t=%d outside 1..64" % (i, t))
            if not 1 <= lanes <= 64:
                raise IntegrityError("keyfile", "slot %d: lanes=%d outside 1..64" % (i, lanes))
            if not 8 * lanes <= m_kib <= 4 << 20:
                raise IntegrityError("keyfile", "slot %d: m_kib=%d outside 8*lanes..4 GiB" % (i, m_kib))
            self.slots.append({"t": t, "m_kib": m_kib, "lanes": lanes,
                               "salt": s[12:44], "sealed": s[44:92]})


# ---- Section 6: records ---------------------------------------------------------

def name_ok(name):
    if not 1 <= len(name) <= NAME_MAX or b"\0" in name:
        return False
    return all(c not in (b"", b".", b"..") for c in name.split(b"/"))


class Record:
    """An opened record.  Fields: name, type ('file'|'dir'), mode, mtime_sec,
    mtime_nsec, size, suite, ids, wrapped, h_raw, path."""

    def __init__(self, vault, rel, data):
        self.path = rel
        h_hex = os.path.basename(rel)
        self.h_raw = bytes.fromhex(h_hex)
        if len(data) < 40 + 16 + BODY_FIXED:
            raise IntegrityError(rel, "record too short")
        if len(data) > MAX_RECORD:
            raise IntegrityError(rel, "record larger than 64 MiB")
        header = data[:40]
        if header[:4] != b"PQVR":
            raise IntegrityError(rel, "bad record magic")
        if header[4] != VERSION:     # the config's version fixes it: damage
            raise IntegrityError(rel, "unknown record version %d" % header[4])
        suite = header[5]
        if suite not in SUITES:
            raise IntegrityError(rel, "unknown record suite %d" % suite)
        if header[6:8] != b"\0\0":
            raise IntegrityError(rel, "record reserved bytes not zero")
        salt = header[8:40]
        key = hkdf(vault.k_records, salt, b"pqvault/v1/record", 32)
        try:
            pt = aead_open(suite, key, bytes(12), data[40:], header + self.h_raw + vault.config.vault_id)
        except InvalidTag:
            raise IntegrityError(rel, "record authentication failed") from None
        self._parse(vault, rel, pt)
        if not ct_equal(hmac_sha256(vault.k_names, self.name), self.h_raw):
            raise IntegrityError(rel, "record does not sit at its name's HMAC (moved?)")

    def _parse(self, vault, rel, pt):
        def take(n):
            nonlocal off
            if off + n > len(pt):
                raise IntegrityError(rel, "record body truncated")
            v = pt[off:off + n]
            off += n
            return v

        def u(n):
            return int.from_bytes(take(n), "big")
        off = 0
        bv = u(1)
        if bv != VERSION:
            raise UnsupportedVersion(rel, "unsupported record body version %d" % bv)
        typ = u(1)
        if typ not in (1, 2):
            raise IntegrityError(rel, "unknown record type %d" % typ)
        self.type = "file" if typ == 1 else "dir"
        self.name = take(u(2))
        if not name_ok(self.name):
            raise IntegrityError(rel, "invalid stored name %r" % self.name)
        self.mode = u(4)
        if self.mode > 0o7777:
            raise IntegrityError(rel, "mode %o beyond 07777" % self.mode)
        self.mtime_sec = int.from_bytes(take(8), "big", signed=True)
        self.mtime_nsec = u(4)
        if self.mtime_nsec >= 10 ** 9:
            raise IntegrityError(rel, "mtime nanoseconds %d >= 10^9" % self.mtime_nsec)
        self.size = u(8)
        self.suite = u(1)
        k = u(4)
        self.ids = [take(16) for _ in range(k)] if k <= len(pt) // 16 else None
        if self.ids is None:
            raise IntegrityError(rel, "record body truncated")
        w = u(4)
        self.wrapped = take(w)
        if off != len(pt):
            raise IntegrityError(rel, "%d trailing bytes in record body" % (len(pt) - off))
        if self.type == "dir":
            if self.size or self.suite or k or w:
                raise IntegrityError(rel, "directory record with size, suite, objects or key")
        else:
            if self.suite not in SUITES:
                raise IntegrityError(rel, "unknown object suite %d" % self.suite)
            if k != -(-self.size // OBJECT_SIZE):
                raise IntegrityError(rel, "%d objects for %d bytes" % (k, self.size))
            if w != vault.wrap_size:
                raise IntegrityError(rel, "wrapped key of %d bytes, expected %d" % (w, vault.wrap_size))
            if len(set(self.ids)) != k:
                raise IntegrityError(rel, "an object id repeats")

    def entry(self):
        return {"name": self.name, "type": self.type, "size": self.size, "mode": self.mode,
                "mtime_sec": self.mtime_sec, "mtime_nsec": self.mtime_nsec,
                "aead": SUITES.get(self.suite) if self.type == "file" else None,
                "objects": len(self.ids)}


# ---- The vault --------------------------------------------------------------------

_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_HEX32 = re.compile(r"[0-9a-f]{32}\Z")
_TMP = re.compile(r".*\.tmp-")     # pqvault writes NAME.tmp-<16 hex>; any .tmp- counts


class Vault:
    """A format-1 vault opened with the seed of its recovery code.

    The recovery code is the root of trust: its identity must hash to the
    config's `identity` (else the code is another vault's: AuthError), the
    config's MAC must verify under it, and the key file, when there is one,
    must carry the same public identity.  list and restore work without a
    key file (the case recovery is for); verify requires it."""

    def __init__(self, path, seed, keyfile=None, need_keyfile=False):
        self.path = path
        cpath = os.path.join(path, "config")
        if not os.path.isfile(cpath):
            raise NoVault(path, "no vault here (no config)")
        self.config = Config(_read(path, "config"))
        self.ident = Identity(seed, self.config.kem)
        if not ct_equal(sha3_256(self.ident.pub), self.config.identity):
            raise AuthError("recovery code", "belongs to another vault (its identity is not "
                            "the config's); or the config's identity line is damaged")
        self.config.verify(self.ident)
        kpath = keyfile or os.path.join(path, "keyfile")
        self.keyfile = None
        if os.path.exists(kpath) or need_keyfile:
            try:
                with open(kpath, "rb") as f:
                    self.keyfile = KeyFile(f.read())
            except OSError as e:
                raise IntegrityError("keyfile", e.strerror) from None
            if self.keyfile.kem_name != self.config.kem:
                raise IntegrityError("keyfile", "KEM %s, config says %s"
                                     % (self.keyfile.kem_name, self.config.kem))
            if not ct_equal(self.ident.pub, self.keyfile.pub):
                raise IntegrityError("keyfile", "its public identity is not the recovery "
                                     "code's (another vault's key file?)")
        self.k_names = self.ident.key("catalogue/names")
        self.k_records = self.ident.key("catalogue/records")
        self.wrap_size = 2 + 32 + self.ident.kem.ct_bytes + 48
        self.temporaries = []

    # -- storage walk
    def _walk(self, top, name_re):
        """(rel path, name) of every stored file under top/XX/, sorted.
        Temporaries (names containing ".tmp-") are noted in self.temporaries; any
        other entry is an IntegrityError in the returned problems."""
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
                elif shard is not None and re.fullmatch(r"[0-9a-f]{2}", shard) \
                        and name_re.match(n) and n[:2] == shard:
                    out.append((rel, n))
                else:
                    problems.append(IntegrityError(rel, "unexpected file in %s/" % top))
        return sorted(out), problems

    def load_records(self):
        """(records, problems): every record that opens, and an error for every
        one that does not."""
        files, problems = self._walk("records", _HEX64)
        records = []
        for rel, _ in files:
            try:
                records.append(Record(self, rel, _read(self.path, rel)))
            except ReaderError as e:
                problems.append(e)
        return sorted(records, key=lambda r: r.name), problems

    # -- section 6: wrapped file key
    def unwrap(self, rec):
        context = b"pqvault/v1/file-key" + self.config.vault_id + rec.h_raw
        return unwrap_key(self.ident, rec.wrapped, context, rec.path, "wrapped file key")

    # -- section 7: objects
    def object_rel(self, oid):
        h = oid.hex()
        return "objects/%s/%s" % (h[:2], h)

    @staticmethod
    def object_file_size(rec, i):
        n = min(rec.size, (i + 1) * OBJECT_SIZE) - i * OBJECT_SIZE
        return 8 + n + TAG * max(1, -(-n // SEGMENT))

    def open_object(self, rec, file_key, i):
        oid = rec.ids[i]
        rel = self.object_rel(oid)
        n = min(rec.size, (i + 1) * OBJECT_SIZE) - i * OBJECT_SIZE
        segs = max(1, -(-n // SEGMENT))
        try:
            data = _read(self.path, rel)
        except FileNotFoundError:
            raise IntegrityError(rel, "object missing (of %s)" % _show(rec.name)) from None
        if len(data) != 8 + n + TAG * segs:
            raise IntegrityError(rel, "%d bytes, expected %d (of %s)"
                                 % (len(data), 8 + n + TAG * segs, _show(rec.name)))
        header = data[:8]
        if header[:4] != b"PQVO":
            raise IntegrityError(rel, "bad object magic")
        if header[4] != VERSION:
            raise IntegrityError(rel, "unknown object version %d" % header[4])
        if header[5] != rec.suite:
            raise IntegrityError(rel, "object suite %d, record says %d" % (header[5], rec.suite))
        if header[6:8] != b"\0\0":
            raise IntegrityError(rel, "object reserved bytes not zero")
        key = hkdf(file_key, oid, b"pqvault/v1/object" + i.to_bytes(4, "big"), 32)
        ad = header + oid
        out = []
        off = 8
        for j in range(segs):
            ln = min(SEGMENT, n - j * SEGMENT)
            nonce = j.to_bytes(11, "big") + (b"\x01" if j == segs - 1 else b"\x00")
            try:
                out.append(aead_open(rec.suite, key, nonce, data[off:off + ln + TAG], ad))
            except InvalidTag:
                raise IntegrityError(rel, "segment %d does not authenticate (of %s)"
                                     % (j, _show(rec.name))) from None
            off += ln + TAG
        return b"".join(out)

    def file_data(self, rec):
        """Yields the plaintext of each object of a file record, verified."""
        if not rec.ids:
            return
        fk = self.unwrap(rec)
        for i in range(len(rec.ids)):
            yield self.open_object(rec, fk, i)

    # -- commands
    def verify(self, say=lambda s: None):
        """Every check.  Returns (damage, warnings, summary): damage and
        warnings are lists of ReaderError; summary counts, in the shape of
        pqvault's `check` line: records (that open), objects (object files
        present), bytes (their sizes), damaged (records, objects and
        unexpected files that fail, missing objects included; a file's
        objects are opened up to the first that fails), missing, orphans
        (objects no record names), temporaries (here and beside the config).
        Orphans and temporaries are leftovers of interrupted writes, not
        damage."""
        records, damage = self.load_records()
        object_files, objproblems = self._walk("objects", _HEX32)
        damage += objproblems
        for n in sorted(os.listdir(self.path)):
            if _TMP.match(n):
                self.temporaries.append(n)
        sizes = {n: os.path.getsize(os.path.join(self.path, rel)) for rel, n in object_files}
        names = {}
        referenced = {}
        missing = 0
        good_size = set()
        # Structural pass: every named object present with its exact size.
        for rec in records:
            if rec.name in names:
                damage.append(IntegrityError(rec.path, "name %s also stored at %s"
                                             % (_show(rec.name), names[rec.name])))
            names[rec.name] = rec.path
            for i, oid in enumerate(rec.ids):
                h = oid.hex()
                if h in referenced:
                    damage.append(IntegrityError(rec.path, "object %s also named by %s"
                                                 % (h, referenced[h])))
                    continue
                referenced[h] = rec.path
                if h not in sizes:
                    missing += 1
                    damage.append(IntegrityError(self.object_rel(oid), "object %d of %s is missing"
                                                 % (i, _show(rec.name))))
                elif sizes[h] != self.object_file_size(rec, i):
                    damage.append(IntegrityError(self.object_rel(oid), "%d bytes, expected %d (of %s)"
                                                 % (sizes[h], self.object_file_size(rec, i),
                                                    _show(rec.name))))
                else:
                    good_size.add(h)
        # Data pass: unwrap each file key and open its objects.
        for rec in records:
            if rec.type != "file" or not rec.ids:
                continue
            try:
                fk = self.unwrap(rec)
                for i, oid in enumerate(rec.ids):
                    if oid.hex() in good_size:
                        self.open_object(rec, fk, i)
                if all(oid.hex() in good_size for oid in rec.ids):
                    say("ok %s" % _show(rec.name))
            except ReaderError as e:
                damage.append(e)
        warnings = [IntegrityError(self.object_rel(bytes.fromhex(h)),
                                   "orphaned object (no record names it)")
                    for h in sorted(set(sizes) - set(referenced))]
        warnings += [IntegrityError(t, "leftover temporary file") for t in self.temporaries]
        summary = {"records": len(records), "objects": len(object_files),
                   "bytes": sum(sizes.values()), "damaged": len(damage), "missing": missing,
                   "orphans": len(set(sizes) - set(referenced)),
                   "temporaries": len(self.temporaries)}
        return damage, warnings, summary

    def entries(self):
        records, problems = self.load_records()
        if problems:
            raise problems[0]
        return [r.entry() for r in records]

    def restore(self, outdir, prefix=None):
        """Restore every record (or those equal to / under prefix) into outdir.
        Files are written whole and verified before they are renamed into
        place; then directory modes and mtimes, deepest first."""
        records, problems = self.load_records()
        if problems:
            raise problems[0]
        if prefix is not None:
            pre = prefix.encode()
            records = [r for r in records if r.name == pre or r.name.startswith(pre + b"/")]
            if not records:
                raise ReaderError(prefix, "not in the vault")
        outb = os.fsencode(outdir)
        for r in records:
            if os.path.lexists(os.path.join(outb, r.name)) and r.type == "file":
                raise ReaderError(os.fsdecode(os.path.join(outb, r.name)), "already exists")
        os.makedirs(outb, exist_ok=True)
        dirs = [r for r in records if r.type == "dir"]
        for r in dirs:
            os.makedirs(os.path.join(outb, r.name), mode=0o700, exist_ok=True)
        count = 0
        for r in records:
            if r.type != "file":
                continue
            dest = os.path.join(outb, r.name)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            tmp = dest + b".reader-tmp"
            try:
                with open(tmp, "wb") as f:
                    got = 0
                    for chunk in self.file_data(r):
                        f.write(chunk)
                        got += len(chunk)
                if got != r.size:
                    raise IntegrityError(r.path, "%d bytes of data, record says %d" % (got, r.size))
                os.chmod(tmp, r.mode)
                os.utime(tmp, ns=(r.mtime_sec * 10 ** 9 + r.mtime_nsec,) * 2)
                os.rename(tmp, dest)
            finally:
                if os.path.lexists(tmp):
                    os.unlink(tmp)
            count += 1
        for r in sorted(dirs, key=lambda r: r.name.count(b"/"), reverse=True):
            d = os.path.join(outb, r.name)
            os.chmod(d, r.mode)
            os.utime(d, ns=(r.mtime_sec * 10 ** 9 + r.mtime_nsec,) * 2)
        return count, len(dirs)


def _read(base, rel):
    with open(os.path.join(base, rel), "rb") as f:
        return f.read()


def _show(name):
    return name.decode("utf-8", errors="backslashreplace")

