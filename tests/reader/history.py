"""Section 26 of docs/FORMAT.md, read from the document alone: history.

Three critical head extensions (section 11's typed byte strings):
  3 snapshot  in the snapshot's own segment: what the command was
  4 kept      in a base: the kept snapshots before it (epoch, its base,
              what the command was)
  5 forget    in a delta: three lists of epochs (forgotten, pinned, unpinned)

The kept snapshots of a chain are its base's kept list, then per delta in
epoch order its forget (removes, pins, unpins) and its snapshot (adds its
epoch, of the chain's base).  A kept snapshot E of base b is the state of
segments b .. E (its generation up to it).

format2.py parses the extensions with parse_snapshot, parse_kept and
parse_forget; its Vault computes the kept list with kept_snapshots and
prints it with snapshots_json (the shape of `pqvault log --json`).
"""

from common import IntegrityError, _iso_utc, _json_string

EXT_SNAPSHOT, EXT_KEPT, EXT_FORGET = 3, 4, 5
STRING_MAX = 4096           # host, user, command, each operand
OPERANDS_MAX = 1024
SF_PINNED = 1               # what the command was: flags bit 0


class Snapshot:
    """What the command of a snapshot was, and (in a kept list) its epoch
    and the base of its generation."""
    __slots__ = ("epoch", "base", "time", "flags", "host", "user", "command", "operands",
                 "added", "changed", "removed", "bytes_new")

    @property
    def pinned(self):
        return bool(self.flags & SF_PINNED)

    def copy(self):
        s = Snapshot()
        for k in self.__slots__:
            setattr(s, k, getattr(self, k))
        s.operands = list(self.operands)
        return s


def _string(c, what):
    n = c.varint()
    if n > STRING_MAX:
        c.fail("%s of %d bytes (at most %d)" % (what, n, STRING_MAX))
    v = c.take(n)
    if b"\0" in v:
        c.fail("%s with a NUL byte" % what)
    return v


def _command(c, s):
    """Section 26's 'what the command was', into Snapshot s."""
    s.time = c.be(8, signed=True)
    s.flags = c.varint()
    if s.flags & ~SF_PINNED:
        c.fail("unknown snapshot flags %#x" % s.flags)
    s.host = _string(c, "host")
    s.user = _string(c, "user")
    s.command = _string(c, "command")
    n = c.varint()
    if n > OPERANDS_MAX:
        c.fail("%d operands (at most %d)" % (n, OPERANDS_MAX))
    if n > c.left():
        c.fail("count %d exceeds the bytes left" % n)
    s.operands = [_string(c, "operand") for _ in range(n)]
    s.added, s.changed, s.removed, s.bytes_new = (c.varint() for _ in range(4))
    return s


def parse_snapshot(cursor_class, data, seg):
    """Extension 3: the segment's own snapshot (its epoch the segment's,
    its base the chain's: the segment's base field)."""
    c = cursor_class(data, seg.rel, "the snapshot extension of epoch %d" % seg.epoch)
    s = _command(c, Snapshot())
    c.end()
    s.epoch, s.base = seg.epoch, seg.base
    return s


def parse_kept(cursor_class, data, seg):
    """Extension 4 (a base's): the kept snapshots before it, epochs strictly
    ascending, each before the base, 1 <= its base <= its epoch."""
    c = cursor_class(data, seg.rel, "the kept list of epoch %d" % seg.epoch)
    out = []
    for _ in range(c.count(13)):
        s = Snapshot()
        s.epoch, s.base = c.varint(), c.varint()
        if out and s.epoch <= out[-1].epoch:
            c.fail("kept epochs not strictly ascending (%d after %d)" % (s.epoch, out[-1].epoch))
        if not 1 <= s.epoch < seg.epoch:
            c.fail("kept epoch %d not before the base %d" % (s.epoch, seg.epoch))
        if not 1 <= s.base <= s.epoch:
            c.fail("kept epoch %d of base %d" % (s.epoch, s.base))
        out.append(_command(c, s))
    c.end()
    return out


def parse_forget(cursor_class, data, seg):
    """Extension 5 (a delta's): forgotten, pinned, unpinned: each a count
    then epochs (in no particular order: pqvault writes the forgotten ones
    newest first).  What they must name is kept_snapshots' check."""
    c = cursor_class(data, seg.rel, "the forget extension of epoch %d" % seg.epoch)
    lists = tuple([c.varint() for _ in range(c.count(1))] for _ in range(3))
    c.end()
    return lists


def kept_snapshots(chain):
    """The kept snapshots of a verified chain (base first), epoch -> Snapshot
    in ascending order; a forget that names an epoch not kept at that point,
    or forgets a pinned one, is an IntegrityError naming its segment."""
    kept = {}
    for i, s in enumerate(chain):
        if i == 0:
            for k in s.kept or ():
                kept[k.epoch] = k.copy()
            continue
        if s.forget is not None:
            # Every epoch named (in any of the lists) must be kept before
            # this forget applies, and a forgotten one not pinned then; the
            # pins and unpins apply, then the forgotten ones go.
            forgotten, pinned, unpinned = s.forget
            for what, eps in (("forgets", forgotten), ("pins", pinned), ("unpins", unpinned)):
                for e in eps:
                    if e not in kept:
                        raise IntegrityError(s.rel, "%s epoch %d, which is not a kept snapshot"
                                             % (what, e))
            for e in forgotten:
                if kept[e].pinned:
                    raise IntegrityError(s.rel, "forgets epoch %d, which is pinned" % e)
            for e in pinned:
                kept[e].flags |= SF_PINNED
            for e in unpinned:
                kept[e].flags &= ~SF_PINNED
            for e in forgotten:
                kept.pop(e, None)
        if s.snapshot is not None:
            kept[s.epoch] = s.snapshot.copy()
    return dict(sorted(kept.items()))


def snapshots_json(snaps):
    """The kept snapshots newest first, as `pqvault log --json` prints them:
    one array, the first object after '[', the others on lines of their own
    starting with a space."""
    objs = []
    for s in sorted(snaps, key=lambda s: s.epoch, reverse=True):
        objs.append(
            '{"epoch": %d, "time": "%s", "host": %s, "user": %s, "command": %s, '
            '"operands": [%s], "added": %d, "changed": %d, "removed": %d, '
            '"bytes_new": %d, "pinned": %s}'
            % (s.epoch, _iso_utc(s.time, 0), _json_string(s.host), _json_string(s.user),
               _json_string(s.command), ", ".join(_json_string(o) for o in s.operands),
               s.added, s.changed, s.removed, s.bytes_new, "true" if s.pinned else "false"))
    return "[" + ",\n ".join(objs) + "]\n"


def snapshot_line(s):
    """One plain line (bytes): epoch, base, time (UTC), user@host, command
    and operands, counts, pinned."""
    return b"%d  base %d  %s  %s@%s  %s  +%d ~%d -%d, %d B new%s" % (
        s.epoch, s.base, _iso_utc(s.time, 0)[:19].replace("T", " ").encode(), s.user, s.host,
        b" ".join([s.command] + s.operands), s.added, s.changed, s.removed, s.bytes_new,
        b"  pinned" if s.pinned else b"")
