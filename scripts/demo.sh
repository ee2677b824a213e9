#!/bin/sh
# The main job in one go: create a vault, store a directory of files, list
# it, restore it and compare byte for byte, then check every tag.
set -eu
PQ=${1:-build/pqvault}
case $PQ in /*) ;; *) PQ=$PWD/$PQ ;; esac
W=$(mktemp -d "${TMPDIR:-/tmp}/pqvault-demo.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
# Demo only: the passphrase comes from the environment; never do this with
# a real passphrase on a shared machine.
export PQVAULT_PASSPHRASE="demo passphrase"
mkdir -p docs/letters
printf 'Dear reader,\nthis file is kept by pqvault.\n' >docs/letters/hello.txt
head -c 6000000 /dev/urandom >docs/photo.raw
: >docs/empty
echo "== pqvault init"
"$PQ" -v vault init
echo "== pqvault add docs"
export PQVAULT_PASSPHRASE="demo passphrase"
"$PQ" -v vault add docs
echo "== pqvault list -l"
PQVAULT_PASSPHRASE="demo passphrase" "$PQ" -v vault list -l
echo "== pqvault get docs -o restored"
PQVAULT_PASSPHRASE="demo passphrase" "$PQ" -v vault get docs -o restored
diff -r docs restored/docs
echo "== pqvault check --read-data"
PQVAULT_PASSPHRASE="demo passphrase" "$PQ" -v vault check --read-data
echo "== pqvault info"
"$PQ" -v vault info
echo "demo: round trip OK (restored tree is byte-identical)"
