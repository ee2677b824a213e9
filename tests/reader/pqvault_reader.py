#!/usr/bin/env python3
"""An independent reader of pqvault vaults, written from docs/FORMAT.md
alone (not from the C sources), to catch drift between the document and
the code.  It never uses a passphrase: the recovery code gives the seed.

  pqvault_reader.py verify    VAULT --recovery-code CODE [--verbose] [--chunking] [--at SNAP]
  pqvault_reader.py list      VAULT --recovery-code CODE [--json] [--at SNAP]
  pqvault_reader.py restore   VAULT [NAME] --recovery-code CODE -o OUTDIR [--at SNAP]
  pqvault_reader.py snapshots VAULT --recovery-code CODE [--json]

CODE may also come from $PQVAULT_RECOVERY_CODE or --recovery-file FILE.
Exit status: 0 success, 1 error (also: unsupported format version), 2 usage,
3 wrong recovery code (or another vault's), 4 integrity failure, 5 no vault.
list and restore need no key file; verify checks it.  verify prints
pqvault check's summary line (format 1: records, objects, bytes, damaged,
missing, orphans, temporaries; format 2: epoch, segments, entries, packs,
bytes, damaged, missing, leftovers, temporaries) and one stderr line per
problem naming the file; orphans, leftovers and temporaries are reported
but are not damage.  --verbose adds the files that verified and, for
format 2 and 3, the chain value of the newest epoch.  --chunking (format 3)
also cuts every chunked file again with section 21's chunker under the
vault's key and compares (slow: small vaults only); its problems follow the
summary line.

History (format 2 and 3, section 26): snapshots lists the kept snapshots
(--json: the array of `pqvault log --json`, newest first; else one line
each, oldest first); --at SNAP (an epoch, latest or latest~N) lists,
restores or verifies a kept snapshot's state, read from its generation's
segments (its base up to it), each checked against the chain value the
newest base's history records, its chunks placed by the current chain's
records.  verify without --at reads the data of every kept state; its
leftovers are what no kept state needs.

The format version is read from the config's first line and dispatched to
formatN.py (format1.py, format2.py, format3.py).
"""

import argparse
import importlib
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (EXIT_INTEGRITY, EXIT_USAGE, IntegrityError, NoVault,  # noqa: E402
                    ReaderError, UnsupportedVersion, listing_json)
from history import snapshot_line, snapshots_json  # noqa: E402

PROG = "pqvault-reader"
FORMATS = {1: "format1", 2: "format2", 3: "format3"}


def format_module(vault):
    try:
        with open(os.path.join(vault, "config"), "rb") as f:
            first = f.readline(64)
    except FileNotFoundError:
        raise NoVault(vault, "no vault here (no config)") from None
    except OSError as e:
        raise ReaderError(vault, e.strerror) from None
    m = re.fullmatch(rb"pqvault-config ([1-9])\n", first)
    if not m:
        raise IntegrityError("config", "bad format version line")
    v = int(m.group(1))
    if v not in FORMATS:
        raise UnsupportedVersion("config", "unsupported version %d" % v)
    return importlib.import_module(FORMATS[v])


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("verify", "list", "restore", "snapshots"):
        sp = sub.add_parser(name)
        sp.add_argument("vault")
        if name == "restore":
            sp.add_argument("name", nargs="?", help="only this name and what is under it")
        sp.add_argument("--recovery-code")
        sp.add_argument("--recovery-file")
        sp.add_argument("--keyfile", help="key file (default VAULT/keyfile)")
        if name in ("list", "snapshots"):
            sp.add_argument("--json", action="store_true")
        if name != "snapshots":
            sp.add_argument("--at", metavar="SNAP", help="a kept snapshot (section 26): "
                            "an epoch, latest or latest~N")
        if name == "restore":
            sp.add_argument("-o", "--output", required=True, metavar="OUTDIR")
        if name == "verify":
            sp.add_argument("--verbose", action="store_true")
            sp.add_argument("--chunking", action="store_true")
    args = ap.parse_args(argv)

    code = args.recovery_code
    if code is None and args.recovery_file:
        with open(args.recovery_file) as f:
            code = f.read()
    if code is None:
        code = os.environ.get("PQVAULT_RECOVERY_CODE")
    if code is None:
        print("%s: %s: a recovery code is required (--recovery-code, --recovery-file "
              "or PQVAULT_RECOVERY_CODE)" % (PROG, args.cmd), file=sys.stderr)
        return EXIT_USAGE

    try:
        fmt = format_module(args.vault)
        seed = fmt.decode_recovery(code)
        t0 = time.perf_counter()
        vault = fmt.Vault(args.vault, seed, keyfile=args.keyfile,
                          need_keyfile=args.cmd == "verify")
        at = getattr(args, "at", None)
        if at is not None and not hasattr(vault, "snapshots"):
            print("%s: %s: --at: format %d has no history" % (PROG, args.cmd, fmt.VERSION),
                  file=sys.stderr)
            return EXIT_USAGE
        if args.cmd == "snapshots":
            if not hasattr(vault, "snapshots"):
                print("%s: snapshots: format %d has no history" % (PROG, fmt.VERSION),
                      file=sys.stderr)
                return EXIT_USAGE
            snaps = vault.snapshots()
            if args.json:
                sys.stdout.write(snapshots_json(snaps))
            else:
                for sn in snaps:
                    sys.stdout.buffer.write(snapshot_line(sn) + b"\n")
        elif args.cmd == "list":
            entries = vault.entries(at) if at is not None else vault.entries()
            if args.json:
                sys.stdout.write(listing_json(entries))
            else:
                for e in entries:
                    sys.stdout.buffer.write(e["name"] + b"\n")
        elif args.cmd == "restore":
            files, dirs = (vault.restore(args.output, args.name, at=at) if at is not None
                           else vault.restore(args.output, args.name))
            print("restored: %d files, %d directories" % (files, dirs))
        else:
            say = (lambda s: print("# " + s, file=sys.stderr)) if args.verbose else (lambda s: None)
            damage, warnings, summary = (vault.verify(say, at=at) if at is not None
                                         else vault.verify(say))
            for e in damage + warnings:
                print("%s: verify: %s" % (PROG, e), file=sys.stderr)
            say("format %d, fingerprint %s, %.2f s" % (fmt.VERSION, vault.ident.fingerprint(),
                                                       time.perf_counter() - t0))
            print(", ".join("%s: %d" % kv for kv in summary.items()))
            if damage:
                print("%s: verify: vault damaged: %d damaged, %d missing"
                      % (PROG, summary["damaged"], summary["missing"]), file=sys.stderr)
                return EXIT_INTEGRITY
            if args.chunking:
                if not hasattr(vault, "check_chunking"):
                    print("%s: verify: --chunking: format %d has no chunks" % (PROG, fmt.VERSION),
                          file=sys.stderr)
                    return EXIT_USAGE
                problems = vault.check_chunking(say)
                for e in problems:
                    print("%s: verify: chunking: %s" % (PROG, e), file=sys.stderr)
                if problems:
                    return EXIT_INTEGRITY
        return 0
    except ReaderError as e:
        print("%s: %s: %s" % (PROG, args.cmd, e), file=sys.stderr)
        return e.status
    except OSError as e:
        print("%s: %s: %s: %s" % (PROG, args.cmd, e.filename or "", e.strerror), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
