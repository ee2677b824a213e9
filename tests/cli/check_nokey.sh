#!/bin/sh
# check --no-key: the structural check that needs no passphrase.  Format 2:
# it counts segments and packs, finds damaged segment headers, segments
# cut inside their head, packs too short for their header, missing
# catalogues, stray files and leftover temporaries.  Format 1 (a copy of
# the frozen fixture tests/fixtures/v1-aes): truncated objects, damaged
# record headers, stray files and temporaries.  It never asks for a
# passphrase.
. tests/cli/lib.sh
init_vault --kem FrodoKEM-640-SHAKE
mkdir -p "$T/src"
head -c 70000 /dev/urandom >"$T/src/a"
echo small >"$T/src/b"
expect_status 0 pq add "$T/src" --name src
expect_status 0 pqn check --no-key
expect_stdout_contains "epoch: 2, segments: 2, packs: 1, bytes: "
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
check_ok "no entry count without the key (entries are sealed)" sh -c '! grep -q entries "$1"' sh "$OUT"
expect_status 2 pqn check --no-key --read-data
# A segment cut inside its head (the header gives the head's length).
seg=$V/segments/0000000000000002
cp "$seg" "$T/seg.orig"
truncate -s 1000 "$seg"
expect_status 4 pqn check --no-key
expect_stderr_contains "segments/0000000000000002: segment is truncated"
truncate -s 50 "$seg"
expect_status 4 pqn check --no-key
expect_stderr_contains "too short for a segment"
cp "$T/seg.orig" "$seg"
expect_status 0 pqn check --no-key
# Damaged header fields: magic, epoch, vault id, version.
for spec in "0:bad magic" "15:holds epoch 3, not its own" "20:belongs to another vault" \
    "4:unknown version"; do
    flip_byte "$seg" "${spec%%:*}"
    expect_status 4 pqn check --no-key
    expect_stderr_contains "${spec#*:}"
    cp "$T/seg.orig" "$seg"
done
# No catalogue at all.
mv "$V/segments" "$T/segments.saved"
expect_status 4 pqn check --no-key
expect_stderr_contains "no catalogue segment"
mv "$T/segments.saved" "$V/segments"
# A pack shorter than its header.
pack=$(first_file "$V/packs")
cp "$pack" "$T/pack.orig"
head -c 5 "$T/pack.orig" >"$pack"
expect_status 4 pqn check --no-key
expect_stderr_contains "too short for a pack"
expect_stderr_contains "$(basename "$pack")"
cp "$T/pack.orig" "$pack"
# A stray file and a leftover temporary.
echo junk >"$V/packs/zz"
expect_status 4 pqn check --no-key
expect_stderr_contains "unexpected file"
rm "$V/packs/zz"
echo tmp >"$V/segments/0000000000000003.tmp-0011223344556677"
expect_status 0 pqn check --no-key
expect_stdout_contains "temporaries: 1"
rm "$V/segments/0000000000000003.tmp-0011223344556677"

# ---- format 1 ----
V=$T/v1
cp -r tests/fixtures/v1-aes "$V" && chmod -R u+w "$V"
expect_status 0 pqn check --no-key
expect_stdout_contains "records: 6, objects: 3"
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
