#!/bin/sh
# check --no-key: the structural check that needs no passphrase finds
# truncated or extended objects, damaged record headers and stray files,
# and never asks for a passphrase.
. tests/cli/lib.sh
init_vault --kem FrodoKEM-640-SHAKE
mkdir -p "$T/src"
head -c 70000 /dev/urandom >"$T/src/a"
echo small >"$T/src/b"
expect_status 0 pq add "$T/src" --name src
expect_status 0 pqn check --no-key
expect_stdout_contains "records: 3, objects: 2"
expect_status 2 pqn check --no-key --read-data
# An object cut 5 bytes into its second segment has no valid STREAM size.
obj=$(find "$V/objects" -type f -size +60k | head -n 1)
cp "$obj" "$T/obj.orig"
truncate -s $((8 + 65552 + 5)) "$obj"
expect_status 4 pqn check --no-key
expect_stderr_contains "impossible size"
expect_stderr_contains "$(basename "$obj")"
cp "$T/obj.orig" "$obj"
expect_status 0 pqn check --no-key
# A record whose header is damaged.
rec=$(first_file "$V/records")
flip_byte "$rec" 0
expect_status 4 pqn check --no-key
expect_stderr_contains "bad magic"
flip_byte "$rec" 0
# A stray file and a leftover temporary.
echo junk >"$V/objects/zz"
expect_status 4 pqn check --no-key
expect_stderr_contains "unexpected file"
rm "$V/objects/zz"
echo tmp >"$V/records/tmpfile.tmp-0011223344556677"
expect_status 0 pqn check --no-key
expect_stdout_contains "temporaries: 1"
finish
