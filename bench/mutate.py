#!/usr/bin/env python3
"""bench/mutate.py: turn a tree into its next version, in place, deterministically.

Usage: python3 bench/mutate.py [--profile version|daily] [--seed N] DIR

The same tree (names and contents) and the same seed give the same changes:
every choice comes from random.Random(seed), over the regular files of DIR
listed in sorted order (os.walk, names sorted, symbolic links neither
followed nor changed).  Let N be the number of regular files and
k(p) = max(1, round(p * N)).  The changes, in this order:

  edit     k(E) files, each given one edit at an offset drawn uniformly from
           0 .. size: with probability 1/2 a replacement (the bytes there are
           overwritten; a file grows when the edit runs past its end), else
           an insertion (the rest of the file moves up).  The edit's length
           is log-uniform between 4 bytes and 4 KiB; its bytes are random
           text (letters, digits, spaces, newlines).
  rename   k(R) other files: the even-numbered ones (in the order drawn)
           renamed in their directory (NAME -> NAME.rSEED-I), the odd ones
           moved, under the same name, to a directory drawn uniformly from
           the tree's directories (NAME.mSEED-I there when the name is
           taken or the directory is their own).
  delete   k(D) other files removed.
  new      k(C) new files: the even-numbered ones copies of a file drawn
           from those not deleted (the original's directory, named
           NAME.cSEED-I), each given one edit as above; the odd ones random
           text of a log-uniform size between 1 KiB and 64 KiB, named
           newSEED-I.txt in a directory drawn uniformly.
  append   (profile "version" only) the largest regular file (the first in
           sorted order among equals; it is never edited, renamed or deleted)
           gets 1 MiB of random text appended.

The edited, renamed and deleted files are distinct.  Profiles:

  version  E = 2%, R = 1%, D = 1%, C = 1%, append: the version series of
           bench/versions.sh (versions 2, 3, 4: seeds 2, 3, 4 by default).
  daily    E = 0.7%, R = 0.1%, D = 0.1%, C = 0.1%, no append: about 1% of
           the files change a day (bench/history.sh: one seed a day).

Prints one summary line on stdout (the counts and bytes written).
"""
import argparse
import math
import os
import random
import sys

PROFILES = {
    "version": dict(edit=0.02, rename=0.01, delete=0.01, new=0.01, append=1 << 20),
    "daily": dict(edit=0.007, rename=0.001, delete=0.001, new=0.001, append=0),
}
TEXT = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789      \n"


def text(rnd, n):
    return bytes(rnd.choices(TEXT, k=n))


def log_uniform(rnd, lo, hi):
    return int(round(math.exp(rnd.uniform(math.log(lo), math.log(hi)))))


def edit(rnd, path):
    """One edit of PATH; returns the bytes written."""
    size = os.path.getsize(path)
    off = rnd.randint(0, size)
    n = log_uniform(rnd, 4, 4096)
    data = text(rnd, n)
    if rnd.random() < 0.5:
        with open(path, "r+b") as f:
            f.seek(off)
            f.write(data)
    else:
        with open(path, "rb") as f:
            old = f.read()
        with open(path, "wb") as f:
            f.write(old[:off] + data + old[off:])
    return n


def free_name(directory, name, alt):
    p = os.path.join(directory, name)
    return p if not os.path.lexists(p) else os.path.join(directory, alt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", choices=sorted(PROFILES), default="version")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("dir")
    a = ap.parse_args()
    prof = PROFILES[a.profile]
    rnd = random.Random(a.seed)
    root = a.dir

    files, dirs = [], []
    for d, dn, fn in os.walk(root):
        dn.sort()
        dirs.append(os.path.relpath(d, root))
        for f in sorted(fn):
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                files.append(os.path.relpath(p, root))
    n = len(files)
    if n == 0:
        sys.exit("mutate.py: no regular files in %s" % root)

    def k(p):
        return max(1, int(round(p * n)))

    largest = None
    if prof["append"]:
        best = -1
        for f in files:
            s = os.path.getsize(os.path.join(root, f))
            if s > best:
                largest, best = f, s
    pool = [f for f in files if f != largest]
    ne, nr, nd, nc = k(prof["edit"]), k(prof["rename"]), k(prof["delete"]), k(prof["new"])
    if ne + nr + nd > len(pool):
        sys.exit("mutate.py: tree too small (%d files)" % n)
    chosen = rnd.sample(pool, ne + nr + nd)
    to_edit, to_move, to_del = chosen[:ne], chosen[ne:ne + nr], chosen[ne + nr:]

    edited = 0
    for f in to_edit:
        edited += edit(rnd, os.path.join(root, f))

    renamed = moved = 0
    for i, f in enumerate(to_move):
        src = os.path.join(root, f)
        d, name = os.path.split(src)
        alt = "%s.m%d-%d" % (name, a.seed, i)
        if i % 2 == 0:
            dst = os.path.join(d, "%s.r%d-%d" % (name, a.seed, i))
            renamed += 1
        else:
            td = os.path.join(root, rnd.choice(dirs))
            dst = os.path.join(td, alt) if os.path.normpath(td) == os.path.normpath(d) else free_name(td, name, alt)
            moved += 1
        os.rename(src, dst)

    for f in to_del:
        os.unlink(os.path.join(root, f))

    gone = set(to_del)
    sources = [f for f in files if f not in gone and f not in to_move]
    copies = texts = new_bytes = 0
    for i in range(nc):
        if i % 2 == 0:
            f = rnd.choice(sources)
            src = os.path.join(root, f)
            dst = src + ".c%d-%d" % (a.seed, i)
            with open(src, "rb") as s, open(dst, "wb") as o:
                o.write(s.read())
            edit(rnd, dst)
            copies += 1
        else:
            td = os.path.join(root, rnd.choice(dirs))
            dst = os.path.join(td, "new%d-%d.txt" % (a.seed, i))
            with open(dst, "wb") as o:
                o.write(text(rnd, log_uniform(rnd, 1024, 65536)))
            texts += 1
        new_bytes += os.path.getsize(dst)

    app = ""
    if largest is not None:
        with open(os.path.join(root, largest), "ab") as o:
            o.write(text(rnd, prof["append"]))
        app = "; largest file %s appended %d bytes" % (largest, prof["append"])

    print("mutate.py --profile %s --seed %d: of %d files, %d edited (%d bytes), %d renamed, "
          "%d moved, %d deleted, %d new (%d copies with an edit, %d random text; %d bytes)%s"
          % (a.profile, a.seed, n, ne, edited, renamed, moved, nd, nc, copies, texts, new_bytes, app))


if __name__ == "__main__":
    main()
