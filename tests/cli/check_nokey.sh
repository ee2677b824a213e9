#!/bin/sh
# check --no-key: the structural check that needs no passphrase.  Format 3
# (the format of new vaults): it counts segments and packs, finds damaged
# segment headers (magic, epoch, vault id, an unknown version, a segment of
# format 2 after one of format 3), segments cut inside their head, packs
# too short for their header, missing catalogues, stray files and leftover
# temporaries.  Format 2, on a copy of the frozen fixture
# tests/fixtures/v2-aes: a segment of format 3 in a vault of format 2; then
# the same vault upgraded by an add (format-2 segments, then one of format
# 3: accepted), and a format-3 header before its format-2 segments.  Format
# 1 (a copy of tests/fixtures/v1-aes): truncated objects, damaged record
# headers, stray files and temporaries.  It never asks for a passphrase.
. "$(dirname "$0")/lib.sh"
FX=$(cd "$(dirname "$0")/../fixtures" && pwd)
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
check_ok "segment 2 is of format 3" test "$(od -An -tu1 -j4 -N1 "$seg" | tr -d ' ')" -eq 3
head_end=$((72 + $(od -An -tu4 --endian=big -j64 -N4 "$seg")))
truncate -s $((head_end - 1)) "$seg"
expect_status 4 pqn check --no-key
expect_stderr_contains "segments/0000000000000002: segment is truncated ($((head_end - 1)) bytes, its head alone needs $head_end)"
truncate -s 50 "$seg"
expect_status 4 pqn check --no-key
expect_stderr_contains "too short for a segment"
cp "$T/seg.orig" "$seg"
expect_status 0 pqn check --no-key
# Damaged header fields: magic, epoch, vault id, version (3 to 7: unknown;
# 3 to 2: a segment of format 2 after the base of format 3).
for spec in "0 01:segment has a bad magic number" "15 01:segment holds epoch 3, not its own" \
    "20 01:segment belongs to another vault" "4 04:segment has an unknown version (7)" \
    "4 01:a segment of format 2 after one of format 3 (epoch 1)"; do
    python3 "$(dirname "$0")/../vectors/mutate.py" "$seg" flip ${spec%%:*}
    expect_status 4 pqn check --no-key
    expect_stderr_contains "segments/0000000000000002: ${spec#*:}"
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
# A pack of format 3 one byte short: not a Padmé length (its header says
# format 3, the key is not needed to see it).
head -c $(( $(stat -c %s "$T/pack.orig") - 1 )) "$T/pack.orig" >"$pack"
expect_status 4 pqn check --no-key
expect_stderr_contains "not the length of a pack of format 3"
cp "$T/pack.orig" "$pack"
expect_status 0 pqn check --no-key
# A stray file and a leftover temporary.
echo junk >"$V/packs/zz"
expect_status 4 pqn check --no-key
expect_stderr_contains "unexpected file"
rm "$V/packs/zz"
echo tmp >"$V/segments/0000000000000003.tmp-0011223344556677"
expect_status 0 pqn check --no-key
expect_stdout_contains "temporaries: 1"
rm "$V/segments/0000000000000003.tmp-0011223344556677"

# ---- format 2: the frozen fixture, then upgraded ----
V=$T/v2
cp -r "$FX/v2-aes" "$V" && chmod -R u+w "$V"
expect_status 0 pqn check --no-key
expect_stdout_contains "epoch: 5, segments: 5, packs: 3, bytes: 2021, damaged: 0"
seg=$V/segments/0000000000000004
cp "$seg" "$T/seg.orig"
python3 "$(dirname "$0")/../vectors/mutate.py" "$seg" flip 4 01
expect_status 4 pqn check --no-key
expect_stderr_contains "segments/0000000000000004: a segment of format 3 in a vault of format 2"
cp "$T/seg.orig" "$seg"
# Any writing command upgrades it to format 3: format-2 segments may
# precede format-3 ones in a chain.
printf 'upgraded\n' >"$T/up.txt"
expect_status 0 "$PQV" -v "$V" --passphrase-file "$FX/v2.pass" -q add "$T/up.txt"
check_ok "the add upgraded the fixture to format 3" test "$(head -n 1 "$V/config")" = "pqvault-config 3"
expect_status 0 pqn check --no-key
expect_stdout_contains "epoch: 6, segments: 6, packs: 4"
expect_stdout_contains "damaged: 0, missing: 0"
check_ok "segment 6 is of format 3, 5 of format 2" \
    test "$(od -An -tu1 -j4 -N1 "$V/segments/0000000000000006" | tr -d ' ')$(od -An -tu1 -j4 -N1 "$V/segments/0000000000000005" | tr -d ' ')" = 32
# Segment 1's header made format 3: the format-2 segments after it are out
# of place (the newest of them is named).
python3 "$(dirname "$0")/../vectors/mutate.py" "$V/segments/0000000000000001" flip 4 01
expect_status 4 pqn check --no-key
expect_stderr_contains "segments/0000000000000005: a segment of format 2 after one of format 3 (epoch 1)"

# ---- format 1 ----
V=$T/v1
cp -r "$FX/v1-aes" "$V" && chmod -R u+w "$V"
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
