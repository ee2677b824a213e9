#!/usr/bin/env python3
"""Section 26's head extensions as history.py parses them: well-formed ones
read back, and every malformation docs/FORMAT.md names refused; the kept
snapshots of a chain through forgets (pins, unpins, the rules a forget
must keep).  Prints ok/FAIL lines; exit 1 on any failure."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history  # noqa: E402
from common import IntegrityError  # noqa: E402
from format2 import KIND_BASE, KIND_DELTA, Cursor  # noqa: E402

FAILS = 0


def check(ok, what):
    global FAILS
    print("%s - %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        FAILS += 1


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def string(b):
    return varint(len(b)) + b


def command(time=1700000000, flags=0, host=b"host", user=b"user", cmd=b"add",
            operands=(b"docs",), counts=(1, 2, 3, 4)):
    return (time.to_bytes(8, "big", signed=True) + varint(flags) + string(host) + string(user)
            + string(cmd) + varint(len(operands)) + b"".join(string(o) for o in operands)
            + b"".join(varint(c) for c in counts))


class Seg:
    def __init__(self, epoch, kind, base, snapshot=None, kept=None, forget=None):
        self.epoch, self.kind, self.base = epoch, kind, base
        self.rel = "segments/%016x" % epoch
        self.snapshot, self.kept, self.forget = snapshot, kept, forget


def refused(fn, *args):
    try:
        fn(*args)
    except IntegrityError:
        return True
    return False


delta = Seg(9, KIND_DELTA, 5)
base = Seg(9, KIND_BASE, 9)

# Snapshot (type 3).
s = history.parse_snapshot(Cursor, command(time=-5, operands=(b"a", b"", b"\xff")), delta)
check((s.epoch, s.base, s.time, s.command, s.operands, s.added, s.bytes_new) ==
      (9, 5, -5, b"add", [b"a", b"", b"\xff"], 1, 4),
      "snapshot: epoch and base the segment's, negative time, empty and non-UTF-8 operands")
check(history.parse_snapshot(Cursor, command(flags=1), delta).pinned is True,
      "snapshot: flag bit 0 is pinned")
for what, data in [
        ("a flag beyond bit 0", command(flags=2)),
        ("a host of 4097 bytes", command(host=b"h" * 4097)),
        ("a NUL in the user", command(user=b"ro\0ot")),
        ("1025 operands", command(operands=[b"x"] * 1025)),
        ("a byte after it", command() + b"\0"),
        ("a truncated count", command()[:-1]),
        ("a non-minimal varint", command()[:8] + b"\x80\x00" + command()[9:]),
        ("an operand running past the end", command()[:-5] + b"\x7f")]:
    check(refused(history.parse_snapshot, Cursor, data, delta), "snapshot refused: " + what)
check(not refused(history.parse_snapshot, Cursor, command(host=b"h" * 4096,
                                                          operands=[b""] * 1024), delta),
      "snapshot: a host of 4096 bytes and 1024 operands accepted")


# Kept (type 4).
def kept(*items):
    return varint(len(items)) + b"".join(varint(e) + varint(b) + command() for e, b in items)


got = history.parse_kept(Cursor, kept((2, 1), (5, 1), (8, 6)), base)
check([(k.epoch, k.base) for k in got] == [(2, 1), (5, 1), (8, 6)], "kept: read back")
check(history.parse_kept(Cursor, kept(), base) == [], "kept: an empty list")
for what, data in [
        ("epochs not ascending", kept((5, 1), (2, 1))),
        ("an epoch twice", kept((5, 1), (5, 1))),
        ("an epoch at the base", kept((9, 1))),
        ("an epoch after the base", kept((10, 1))),
        ("base 0", kept((3, 0))),
        ("a base after its epoch", kept((3, 4))),
        ("epoch 0", kept((0, 0))),
        ("a byte after it", kept((2, 1)) + b"\0"),
        ("a count beyond the bytes", varint(2) + kept((2, 1))[1:])]:
    check(refused(history.parse_kept, Cursor, data, base), "kept refused: " + what)


# Forget (type 5).
def forget(f=(), p=(), u=()):
    return b"".join(varint(len(x)) + b"".join(varint(e) for e in x) for x in (f, p, u))


check(history.parse_forget(Cursor, forget((3, 2), (5,), ()), delta) == ([3, 2], [5], []),
      "forget: read back (epochs in any order)")
for what, data in [("a byte after it", forget() + b"\0"), ("a list missing", forget()[:2]),
                   ("a count beyond the bytes", b"\x05\x01")]:
    check(refused(history.parse_forget, Cursor, data, delta), "forget refused: " + what)


# The kept snapshots of a chain.
def snap(e, b, pinned=False):
    s = history.parse_snapshot(Cursor, command(flags=int(pinned)), Seg(e, KIND_DELTA, b))
    s.base = b
    return s


def chain(*forgets):
    """Base 5 keeping 2 and 3 (of base 1, 3 pinned), deltas 6 and 7
    snapshots, then one delta per forget."""
    segs = [Seg(5, KIND_BASE, 5, kept=[snap(2, 1), snap(3, 1, True)]),
            Seg(6, KIND_DELTA, 5, snapshot=snap(6, 5)), Seg(7, KIND_DELTA, 5, snapshot=snap(7, 5))]
    for i, f in enumerate(forgets):
        segs.append(Seg(8 + i, KIND_DELTA, 5, forget=f))
    return segs


k = history.kept_snapshots(chain())
check([(e, s.base, s.pinned) for e, s in k.items()] == [(2, 1, False), (3, 1, True), (6, 5, False),
                                                       (7, 5, False)],
      "kept snapshots: the base's list then the deltas' snapshots, pins kept")
k = history.kept_snapshots(chain(([6, 2], [7], [3])))
check([(e, s.pinned) for e, s in k.items()] == [(3, False), (7, True)],
      "kept snapshots: a forget removes, pins and unpins")
k = history.kept_snapshots(chain(([2, 2], [], [])))
check(list(k) == [3, 6, 7], "kept snapshots: an epoch forgotten twice in one forget is no error")
k = history.kept_snapshots(chain(([6], [6], [])))
check(list(k) == [2, 3, 7], "kept snapshots: pinned and forgotten in one forget: forgotten")
for what, c in [("forgetting a pinned one", chain(([3], [], []))),
                ("forgetting a pinned one unpinned by the same forget", chain(([3], [], [3]))),
                ("forgetting one not kept", chain(([4], [], []))),
                ("pinning one not kept", chain(([], [4], []))),
                ("unpinning one forgotten before", chain(([2], [], []), ([], [], [2])))]:
    check(refused(history.kept_snapshots, c), "kept snapshots refused: " + what)
sys.exit(1 if FAILS else 0)
