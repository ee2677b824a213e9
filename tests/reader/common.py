"""Shared pieces of the independent pqvault reader: errors, exit statuses,
HKDF/HMAC helpers and the listing JSON of docs/CLI.md.  Format modules
(format1.py, a later format2.py) build on these."""

import hashlib
import hmac

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand

# Exit statuses, as pqvault's (docs/CLI.md): 3 wrong recovery code,
# 4 integrity failure, 5 no vault, 2 usage, 1 anything else.
EXIT_ERROR, EXIT_USAGE, EXIT_AUTH, EXIT_INTEGRITY, EXIT_NOVAULT = 1, 2, 3, 4, 5


class ReaderError(Exception):
    """A failure with the exit status it maps to; `subject` names the file
    or item concerned (a path relative to the vault when there is one)."""

    status = EXIT_ERROR

    def __init__(self, subject, message):
        super().__init__("%s: %s" % (subject, message) if subject else message)
        self.subject = subject
        self.message = message


class IntegrityError(ReaderError):
    status = EXIT_INTEGRITY


class UnsupportedVersion(ReaderError):
    """A newer format than this reader knows (pqvault: exit 1, not 4)."""


class AuthError(ReaderError):
    status = EXIT_AUTH


class UsageError(ReaderError):
    status = EXIT_USAGE


class NoVault(ReaderError):
    status = EXIT_NOVAULT


def hkdf(ikm, salt, info, length=32):
    """HKDF-SHA-256 extract-and-expand (RFC 5869)."""
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def hkdf_expand(prk, info, length):
    return HKDFExpand(algorithm=hashes.SHA256(), length=length, info=info).derive(prk)


def hmac_sha256(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()


def sha3_256(data):
    return hashlib.sha3_256(data).digest()


def sha256(data):
    return hashlib.sha256(data).digest()


def ct_equal(a, b):
    return hmac.compare_digest(a, b)


# ---- Listing JSON (docs/CLI.md, "--json") -----------------------------------

def _json_string(raw):
    """Escape a name (bytes) the way pqvault's list --json does: '"' and '\\'
    escaped, \\n \\r \\t \\b \\f by name, other C0 controls and DEL as \\u00XX,
    valid UTF-8 passed through, every other byte b as \\udcXX."""
    named = {0x22: '\\"', 0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t",
             0x08: "\\b", 0x0C: "\\f"}
    text = raw.decode("utf-8", errors="surrogateescape")
    out = []
    for ch in text:
        c = ord(ch)
        if c in named:
            out.append(named[c])
        elif c < 0x20 or c == 0x7F:
            out.append("\\u%04x" % c)
        elif 0xDC80 <= c <= 0xDCFF:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _iso_utc(sec, nsec):
    # Civil date from days (proleptic Gregorian), any year.
    days, rem = divmod(sec, 86400)
    hh, rem = divmod(rem, 3600)
    mm, ss = divmod(rem, 60)
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    if m <= 2:
        y += 1
    return "%04d-%02d-%02dT%02d:%02d:%02d.%09dZ" % (y, m, d, hh, mm, ss, nsec)


def listing_json(entries):
    """entries: dicts with name (bytes), type ('file'|'dir'|'symlink'|'fifo'|
    'chardev'|'blockdev'), size,
    mode, mtime_sec, mtime_nsec, aead (str or None), objects; format 2's also
    target, user, group (bytes or None), uid, gid, link_group, holes.  Sorted
    by name bytes."""
    lines = []
    for e in sorted(entries, key=lambda e: e["name"]):
        aead = "null" if e["aead"] is None else '"%s"' % e["aead"]
        lines.append(
            '  {"name": %s, "type": "%s", "size": %d, "mode": "%04o", '
            '"mtime": "%s", "mtime_unix": %d, "aead": %s, "objects": %d}'
            % (_json_string(e["name"]), e["type"], e["size"], e["mode"],
               _iso_utc(e["mtime_sec"], e["mtime_nsec"]), e["mtime_sec"], aead,
               e["objects"]))
        if "uid" in e:
            # Format 2's keys, after format 1's.
            def opt(v):
                return "null" if v is None else _json_string(v)
            lines[-1] = lines[-1][:-1] + (
                ', "target": %s, "uid": %d, "gid": %d, "user": %s, "group": %s, '
                '"link_group": %d, "holes": %d}'
                % (opt(e["target"]), e["uid"], e["gid"], opt(e["user"]), opt(e["group"]),
                   e["link_group"], e["holes"]))
        if "rdev_major" in e:
            # A device node's number (format 3).
            lines[-1] = lines[-1][:-1] + (', "rdev_major": %d, "rdev_minor": %d}'
                                          % (e["rdev_major"], e["rdev_minor"]))
    if not lines:
        return "[]\n"
    return "[\n" + ",\n".join(lines) + "\n]\n"
