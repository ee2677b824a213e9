# tests/cli/corruption.sh: the corruption and tampering matrix, driving the
# real binary.  Format 2 (docs/FORMAT.md sections 9-17): for every file kind
# (config, key file, catalogue segment, pack) and every region of each
# (header fields, head, blocks, blobs, tags, trailing bytes) a damaged copy
# is made by bit flips, truncation, extension and zeroing, plus segments and
# packs swapped, copied, moved and deleted; then format 1 (records and
# objects) on a copy of the frozen fixture tests/fixtures/v1-aes, which is
# still read, checked and upgraded.  Each case asserts:
#   check --read-data   exits 4 and names the damaged file on stderr;
#   get                 exits 4 with one error line and writes nothing (no
#                       file, no temporary);
#   another file        restores byte for byte.
# Two kinds of damage differ by design in format 2:
#   - a segment's header or head (or its size) is the catalogue's chain:
#     when it does not verify nothing is served, so every get exits 4
#     (the other file is refused as well, nothing written);
#   - a pack's header and bytes after its last blob are outside every
#     extent: get reads exactly an extent's authenticated bytes and serves
#     the file intact, while check --read-data (the pack's size and
#     SHA-256 from its segment) reports the damage.
# Key file cases follow src/keys/keyfile.c: its trailing SHA-256 catches
# accidental damage (exit 4); a forger who fixes the checksum is stopped by
# the slot tags and looks like a wrong passphrase (exit 3), except where the
# parser can still tell (out-of-range slot parameters: exit 4).
. "$(dirname "$0")/lib.sh"

MUT="python3 $(dirname "$0")/../vectors/mutate.py"
FX=$(cd "$(dirname "$0")/../fixtures" && pwd)
init_vault --kem FrodoKEM-640-SHAKE --aead AES-256-GCM || finish

# Epoch 2: m/, 1500 empty files (a segment of two blocks).  Epochs 3-7: a,
# b, c, d, e, one add each.  a and d have the same size (one extent, one
# blob each), b and e are tiny, c is 4 MiB + 70000 bytes: two extents in two
# packs, the second blob of two STREAM segments (65536 + 4464 bytes).  A
# name is looked up from the newest segment down, and a damaged block on
# the way may hold its newest entry: damage to an older segment's block
# never stands in the way of a newer file (a's segment damaged, b restores;
# d's damaged, e restores).
mkdir -p "$T/m"
i=0
while [ $i -lt 1500 ]; do
    i=$((i + 1))
    : >"$T/m/f$i"
done
head -c 3000 /dev/urandom >"$T/a"
head -c 3000 /dev/urandom >"$T/d"
head -c 100 /dev/urandom >"$T/b"
head -c 50 /dev/urandom >"$T/e"
head -c $((4194304 + 70000)) /dev/urandom >"$T/c"
packs() { (cd "$V" && find packs -type f 2>/dev/null | sort); }
packs >"$T/p0"
for f in m a b c d e; do
    pq -q add "$T/$f" || fail "add $f"
    packs >"$T/p1"
    comm -13 "$T/p0" "$T/p1" >"$T/new-$f"
    mv "$T/p1" "$T/p0"
done
seg() { printf 'segments/%016x' "$1"; }
seg_m=$(seg 2) seg_a=$(seg 3) seg_b=$(seg 4) seg_c=$(seg 5) seg_d=$(seg 6)
pack_a=$(cat "$T/new-a") pack_b=$(cat "$T/new-b") pack_d=$(cat "$T/new-d")
# c's packs: the larger holds extent 0.
pack_c0=$(cd "$V" && ls -S $(cat "$T/new-c") | head -n 1)
pack_c1=$(cd "$V" && ls -S $(cat "$T/new-c") | tail -n 1)
check_ok "learned the vault layout" test -e "$V/$(seg 7)" -a ! -e "$V/$(seg 8)" -a -n "$pack_a" \
    -a -n "$pack_b" -a -n "$pack_d" -a "$pack_c0" != "$pack_c1" -a ! -s "$T/new-m"
expect_status 0 pq check --read-data
expect_stdout_contains "epoch: 7, segments: 7, entries: 1506, packs: 6"
cp -a "$V" "$T/pristine"
cp -a "$XDG_STATE_HOME" "$T/pristine-state"
PRISTINE=$T/pristine
PRISTINE_STATE=$T/pristine-state
SRC=$T
restore() {
    rm -rf "$V" "$XDG_STATE_HOME" && cp -a "$PRISTINE" "$V" && cp -a "$PRISTINE_STATE" "$XDG_STATE_HOME"
}
# head_end FILE: where a segment's head ends (72 + its head length).
head_end() { echo $((72 + $(od -An -tu4 --endian=big -j64 -N4 "$1"))); }

CASES=0
# verify SUBJECT NAME WANT OTHER OTHER_WANT DESC: the vault is damaged;
# check names SUBJECT; get NAME exits WANT (4: one error line, nothing
# written; 0: restored intact); so does get OTHER with OTHER_WANT.
verify() {
    subject=$1 name=$2 want=$3 other=$4 owant=$5 what=$6
    CASES=$((CASES + 1))
    st=0
    pq check --read-data >"$OUT" 2>"$ERR" || st=$?
    if [ "$st" -eq 4 ] && grep -qF -- "$subject" "$ERR"; then
        ok "$what: check --read-data exits 4 naming $subject"
    else
        fail "$what: check --read-data exit $st (want 4), stderr naming '$subject'"
    fi
    for pair in "$name:$want" "$other:$owant"; do
        nm=${pair%:*} w=${pair##*:}
        [ -n "$nm" ] || continue
        rm -rf "$T/out" && mkdir "$T/out"
        st=0
        pq get "$nm" -o "$T/out/got" >/dev/null 2>"$ERR" || st=$?
        left=$(ls -A "$T/out")
        if [ "$w" -eq 4 ]; then
            if [ "$st" -eq 4 ] && [ -z "$left" ] && [ "$(wc -l <"$ERR")" -eq 1 ]; then
                ok "$what: get $nm exits 4, one error line, nothing written"
            else
                fail "$what: get $nm exit $st (want 4), left '$left'"
            fi
        elif [ "$st" -eq 0 ] && same_file "$T/out/got" "$SRC/$nm"; then
            ok "$what: $nm restores intact"
        else
            fail "$what: get $nm exit $st or content differs"
        fi
    done
    restore
}
# damaged: one file's entry or data is lost, the rest is served.
damaged() { verify "$1" "$2" 4 "$3" 0 "$4"; }
# refused: the catalogue does not verify: nothing is served.
refused() { verify "$1" "$2" 4 "$3" 4 "$4"; }
# outside: damage outside every extent: files are served intact.
outside() { verify "$1" "$2" 0 "$3" 0 "$4"; }

# ---- segments: a's (one block, one entry) ----
S="$V/$seg_a"
H=$(head_end "$S")
for spec in \
    "flip 0:magic" "flip 3:magic" "flip 4:version" "flip 4 02:version" "flip 5:kind" \
    "flip 5 03:kind-delta-to-base" "flip 6:suite" "flip 6 03:suite-AES-to-ChaCha" "flip 7:reserved" \
    "flip 7 80:reserved" "flip 8:epoch-high-byte" "flip 15:epoch-low-byte" "flip 16:vault-id" \
    "flip 31:vault-id" "flip 32:salt" "flip 63:salt" "flip 67:head-length" \
    "be32 64 0:head-length-zero" "be32 64 0xffffffff:head-length-huge" "flip 71:block-count" \
    "be32 68 0:block-count-zero" "flip 72:head-start" "flip 2000:head" "flip $((H - 17)):head-end" \
    "flip $((H - 16)):head-tag" "flip $((H - 1)):head-tag" "zero 72 64:zeroed-head" \
    "truncate 0:empty" "truncate 7:short-header" "truncate 71:header-short" \
    "truncate 72:header-only" "truncate $((H - 1)):head-short" "truncate $H:block-missing" \
    "truncate -1:one-byte-short" "truncate -16:block-tag-missing" "append 00:one-trailing-byte" \
    "append 00000000000000000000000000000000:16-trailing-bytes" "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$S" $ops
    refused "$seg_a" a b "segment $region ($ops)"
done
# A block is sealed on its own (its index as nonce): its damage loses its
# entries only.
for spec in \
    "flip $H:block-start" "flip $((H + 20)):block" "flip -17:block-end" "flip -16:block-tag" \
    "flip -1:block-tag" "zero $H 32:zeroed-block" "zero -16 16:zeroed-block-tag"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$S" $ops
    damaged "$seg_a" a b "segment block $region ($ops)"
done
# A block of another segment (d's: the same file size, sealed under
# another key) in place of a's, both ways.
n=$(($(stat -c %s "$S") - H))
tail -c "$n" "$V/$seg_d" >"$T/x" && tail -c "$n" "$S" >"$T/y"
$MUT "$S" truncate "$H" append "$(od -An -tx1 -v "$T/x" | tr -d ' \n')"
damaged "$seg_a" a b "segment block: d's block in a's segment"
# (Entries of a and d differ only in their values; should a's block be
# longer than d's, it would reach into d's head.)
nd=$(($(stat -c %s "$V/$seg_d") - $(head_end "$V/$seg_d")))
$MUT "$V/$seg_d" truncate $(($(stat -c %s "$V/$seg_d") - n)) append "$(od -An -tx1 -v "$T/y" | tr -d ' \n')"
if [ "$n" -le "$nd" ]; then
    damaged "$seg_d" d e "segment block: a's block in d's segment"
else
    refused "$seg_d" d e "segment block: a's block in d's segment (reaching into its head)"
fi

# Whole segments swapped, copied, replayed, deleted, or from another vault.
mv "$V/$seg_a" "$T/x" && mv "$V/$seg_b" "$V/$seg_a" && mv "$T/x" "$V/$seg_b"
refused "$seg_b" a b "segments of a and b swapped"
cp "$V/$seg_b" "$V/$seg_a"
refused "$seg_a" a b "segment of b copied over a's"
cp "$V/$seg_a" "$V/$(seg 8)"
refused "$(seg 8)" a b "segment of a replayed as epoch 8"
rm "$V/$seg_a"
refused "$seg_a" a b "segment of a missing"
OV=$T/other
"$PQV" -v "$OV" --passphrase-file "$PF" -q init --kdf "$KDF" --kem FrodoKEM-640-SHAKE >/dev/null
"$PQV" -v "$OV" --passphrase-file "$PF" -q add "$T/b" && "$PQV" -v "$OV" --passphrase-file "$PF" -q add "$T/a"
cp "$OV/$seg_a" "$V/$seg_a"
refused "$seg_a" a b "segment 3 of another vault"

# ---- segments: m's (two blocks of about 64 KiB) ----
S="$V/$seg_m"
H=$(head_end "$S")
size=$(stat -c %s "$S")
# which_block OFF: the block a flip at OFF damages (list names it).
which_block() {
    $MUT "$S" flip "$1"
    pq list m >/dev/null 2>"$ERR"
    $MUT "$S" flip "$1"
    sed -n 's/.*segment block \([0-9]*\) failed authentication.*/\1/p' "$ERR" | head -n 1
}
check_ok "m's segment has two blocks" [ "$(which_block "$H")$(which_block $((size - 1)))" = 01 ]
# Where block 1 begins: the first offset whose flip damages it.
lo=$H hi=$((size - 1))
while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2))
    if [ "$(which_block "$mid")" = 1 ]; then hi=$mid; else lo=$mid; fi
done
B1=$hi
check_ok "block 1 begins after 64 KiB of block 0 ($((B1 - H)) bytes)" [ $((B1 - H)) -gt 65536 ]
pq list m >"$T/m-all" 2>/dev/null
# damaged_m OPS DESC: m's segment damaged by OPS: list shows the names of
# the intact block only; a name it lost is refused, one it shows restores.
damaged_m() {
    $MUT "$S" $1
    st=0
    pq list m >"$T/m-now" 2>"$ERR" || st=$?
    lost=$(comm -23 "$T/m-all" "$T/m-now" | grep / | head -n 1)
    kept=$(grep / "$T/m-now" | head -n 1)
    nlost=$(comm -23 "$T/m-all" "$T/m-now" | wc -l)
    good=0
    [ "$st" -eq 4 ] && [ "$nlost" -gt 0 ] && { [ -n "$kept" ] || [ "${3:-}" = both ]; } && good=1
    check_ok "$2: list exits 4 and shows the other block's names ($nlost of 1501 lost)" [ "$good" -eq 1 ]
    damaged "$seg_m" "${lost:-m/f1}" "${kept:-a}" "$2"
}
damaged_m "flip $H" "segment m block 0 start"
damaged_m "flip $((B1 - 1))" "segment m block 0 tag"
damaged_m "flip $B1" "segment m block 1 start"
damaged_m "zero $(((B1 + size) / 2)) 64" "segment m block 1 zeroed in the middle"
damaged_m "flip -1" "segment m block 1 tag"
# The two blocks swapped: neither opens under the other's index.
head -c "$B1" "$S" | tail -c $((B1 - H)) >"$T/blk0"
tail -c $((size - B1)) "$S" >"$T/blk1"
{ head -c "$H" "$S" && cat "$T/blk1" "$T/blk0"; } >"$T/x" && cat "$T/x" >"$S"
damaged_m "" "segment m blocks 0 and 1 swapped" both
# Block 0's bytes over block 1's start (a copy within the segment).
{ head -c "$B1" "$S" && head -c $((size - B1)) "$T/blk0"; } >"$T/x" && cat "$T/x" >"$S"
damaged_m "" "segment m block 0 copied over block 1"

# ---- packs: a's (one blob) ----
P="$V/$pack_a"
for spec in \
    "flip 8:first-blob-byte" "flip 1500:blob" "flip -17:last-ciphertext-byte" "flip -16:tag" \
    "flip -1:tag" "truncate 0:empty" "truncate 7:short-header" "truncate 8:header-only" \
    "truncate -1:one-byte-short" "truncate -16:tag-missing" "zero 8 32:zeroed-ciphertext" \
    "zero -16 16:zeroed-tag" "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$P" $ops
    damaged "$pack_a" a b "pack $region ($ops)"
done
for spec in \
    "flip 0:magic" "flip 3:magic" "flip 4:version" "flip 4 02:version" "flip 5:reserved" \
    "flip 7 80:reserved" "append 00:one-trailing-byte" \
    "append 0000000000000000000000000000000000:17-trailing-bytes"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$P" $ops
    outside "$pack_a" a b "pack $region ($ops), outside the extent"
done

# c's second pack: one blob of two STREAM segments (65536 + 4464 bytes of
# plaintext, each with its 16-byte tag), after the 8-byte header.
P="$V/$pack_c1"
for spec in "flip 100:stream-segment-0" "flip 65551:stream-segment-0-tag" \
    "flip 65560:stream-segment-1" "flip -1:stream-segment-1-tag" \
    "truncate 65560:final-stream-segment-missing" "truncate 65576:final-stream-segment-short"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$P" $ops
    damaged "$pack_c1" c a "pack 1 of c: $region ($ops)"
done
# The two packs of c swapped.
mv "$V/$pack_c0" "$T/x" && mv "$V/$pack_c1" "$V/$pack_c0" && mv "$T/x" "$V/$pack_c1"
damaged "$pack_c0" c a "packs of c swapped"
# a's pack moved under d's name (same size: only the SHA-256 and the tags
# can tell).
mv "$V/$pack_a" "$V/$pack_d"
damaged "$pack_d" d b "pack of a moved under d's name"
mv "$V/$pack_a" "$V/$pack_d"
damaged "$pack_a" a b "pack of a moved under d's name (a's side)"
# a's pack copied over b's (sizes differ).
cp "$V/$pack_a" "$V/$pack_b"
damaged "$pack_b" b a "pack of a copied over b's"
# A pack missing.
rm -f "$V/$pack_b"
damaged "$pack_b" b a "pack of b missing"

# ---- config: any damage is found at open (parse) or by the MAC ----
C="$V/config"
# config_expect STATUS SUBSTRING DESC: check and get both end with STATUS.
config_expect() {
    want=$1 substr=$2 what=$3
    CASES=$((CASES + 1))
    for cmd in "check --read-data" "get a"; do
        rm -rf "$T/out" && mkdir "$T/out"
        st=0
        (cd "$T/out" && pq $cmd) >/dev/null 2>"$ERR" || st=$?
        if [ "$st" -eq "$want" ] && grep -qF -- "$substr" "$ERR" && [ -z "$(ls -A "$T/out")" ] &&
            [ "$(wc -l <"$ERR")" -eq 1 ]; then
            ok "config $what: $cmd exits $want naming the config"
        else
            fail "config $what: $cmd exit $st (want $want, naming the config)"
        fi
    done
    restore
}
for spec in \
    "flip 0:first-line" "flip 15 02:format-version-0" "flip 15 03:format-version-downgraded-to-1" \
    "flip 30:vault-id" "flip 70:kem-name" "flip 90:aead-name" "flip 120:identity" \
    "flip -80:created" "flip -68:mac-key-word" "flip -5:mac" "flip -1:final-newline" \
    "truncate 0:empty" "truncate 100:truncated" "truncate -1:no-final-newline" \
    "truncate -69:mac-line-missing" "appendtext x:trailing-text" "append 0a:trailing-newline" \
    "append 00:trailing-NUL" "zeroall:all-zero" \
    "replace AES-256-GCM ChaCha20-Poly1305:aead-changed" \
    "replace FrodoKEM-640-SHAKE FrodoKEM-976-SHAKE:kem-changed"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$C" $ops
    config_expect 4 config "$region ($ops)"
done
# A version byte one higher is a newer format, not damage: refused as
# unsupported (exit 1), nothing read.
$MUT "$C" flip 15
config_expect 1 "config: format version 3 is not supported" "future-version (flip 15)"

# ---- key file ----
K="$V/keyfile"
ksize=$(stat -c %s "$K")
S0=$((ksize - 32 - 2 * 92))   # slot 0: t, m, p (12), salt (32), sealed seed (48)
S1=$((S0 + 92))
# keyfile_expect STATUS SUBSTRING DESC: check and get both end with STATUS.
keyfile_expect() {
    want=$1 substr=$2 what=$3
    CASES=$((CASES + 1))
    for cmd in "check --read-data" "get a"; do
        rm -rf "$T/out" && mkdir "$T/out"
        st=0
        (cd "$T/out" && pq $cmd) >/dev/null 2>"$ERR" || st=$?
        if [ "$st" -eq "$want" ] && grep -qF -- "$substr" "$ERR" && [ -z "$(ls -A "$T/out")" ] &&
            [ "$(wc -l <"$ERR")" -eq 1 ]; then
            ok "key file $what: $cmd exits $want ($substr)"
        else
            fail "key file $what: $cmd exit $st (want $want, '$substr')"
        fi
    done
    restore
}
# Accidental damage anywhere: exit 4 naming the key file.
for spec in \
    "flip 0:magic" "flip 4:version" "flip 4 02:version" "flip 5:reserved" "flip 8:identity-version" \
    "flip 9:kem-id" "flip 20:x25519-key" "flip 5000:frodo-key" "flip $((S0 + 1)):slot0-t" \
    "flip $((S0 + 6)):slot0-m" "flip $((S0 + 20)):slot0-salt" "flip $((S0 + 50)):slot0-seed" \
    "flip $((S0 + 90)):slot0-tag" "flip $((S1 + 11)):slot1-p" "flip $((S1 + 70)):slot1-sealed" \
    "flip -32:checksum" "flip -1:checksum" "truncate 0:empty" "truncate 7:short-header" \
    "truncate 100:truncated" "truncate -1:one-byte-short" "truncate -33:checksum-missing" \
    "append 00:one-trailing-byte" "append 0000000000000000:8-trailing-bytes" \
    "zero $S0 92:zeroed-slot" "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$K" $ops
    keyfile_expect 4 "keyfile" "$region ($ops)"
done
# Deliberate changes with the checksum fixed: the slot tags stop them and
# look like a wrong passphrase (3); parameters out of range are still
# refused by the parser (4); slot 1 is unused here, so changing it is
# harmless (its bytes are random anyway).
for spec in \
    "3:wrong passphrase:flip 5000 fixsum:frodo-key" \
    "3:wrong passphrase:flip 20 fixsum:x25519-key" \
    "3:wrong passphrase:flip $((S0 + 50)) fixsum:slot0-seed" \
    "3:wrong passphrase:flip $((S0 + 20)) fixsum:slot0-salt" \
    "3:wrong passphrase:flip $((S0 + 3)) 02 fixsum:slot0-t" \
    "4:out-of-range Argon2id:be32 $((S0 + 4)) 0xffffffff fixsum:slot0-m-huge" \
    "4:out-of-range Argon2id:be32 $S0 0 fixsum:slot0-t-zero" \
    "4:out-of-range Argon2id:be32 $((S1 + 8)) 1000 fixsum:slot1-p-huge" \
    "4:unknown KEM:set 9 63 fixsum:kem-id" \
    "4:reserved:set 5 01 fixsum:reserved" \
    "1:version 2 is not supported:set 4 02 fixsum:future-version" \
    "0::flip $((S1 + 70)) fixsum:slot1-sealed"; do
    want=${spec%%:*} rest=${spec#*:}
    substr=${rest%%:*} rest=${rest#*:}
    ops=${rest%%:*} region=${rest#*:}
    $MUT "$K" $ops
    if [ "$want" -eq 0 ]; then
        CASES=$((CASES + 1))
        expect_status 0 pq get a -o "$T/ka"
        check_ok "key file forged $region: a intact" same_file "$T/ka" "$T/a"
        rm -f "$T/ka"
        restore
    else
        keyfile_expect "$want" "$substr" "forged $region ($ops)"
    fi
done
expect_status 0 pq check --read-data
CASES2=$CASES

# ---- format 1: records and objects, on a copy of the frozen fixture ----
# tests/fixtures/v1-aes: docs/readme.txt (25 bytes: a 49-byte object, a
# 15998-byte record), docs/with space ü.txt (17 bytes: 41, 16005) and
# docs/nested/segments.bin (70000 bytes: one object of two STREAM
# segments, 70040 bytes).  Besides the assertions above, a damaged record
# stops an upgrade (exit 4, the vault left in format 1); a damaged object
# does not (the upgrade refers to objects where they lie) and is found in
# the upgraded vault as before.
V=$T/v1
cp -r "$FX/v1-aes" "$V" && chmod -R u+w "$V"
PF=$FX/v1.pass
SRC=$FX/v1-files
rm -rf "$XDG_STATE_HOME"
expect_status 0 pq check --read-data
cp -a "$V" "$T/v1-pristine"
mkdir -p "$XDG_STATE_HOME" && cp -a "$XDG_STATE_HOME" "$T/v1-pristine-state"
PRISTINE=$T/v1-pristine
PRISTINE_STATE=$T/v1-pristine-state
R1=$(cd "$V" && find records -type f -size 15998c) R2=$(cd "$V" && find records -type f -size 16005c)
O1=$(cd "$V" && find objects -type f -size 49c) O2=$(cd "$V" && find objects -type f -size 41c)
O3=$(cd "$V" && find objects -type f -size 70040c)
check_ok "format 1: learned the fixture's layout" test -n "$R1" -a -n "$R2" -a -n "$O1" -a -n "$O2" -a -n "$O3"
N1=readme.txt N2="with space ü.txt" N3=nested/segments.bin
# upgrade_expect STATUS FORMAT DESC: upgrade exits STATUS and leaves the
# config at FORMAT; then the vault is restored.
upgrade_expect() {
    st=0
    pq upgrade >/dev/null 2>"$ERR" || st=$?
    check_ok "format 1 $3: upgrade exits $1, config of format $2" \
        [ "$st:$(head -n 1 "$V/config")" = "$1:pqvault-config $2" ]
}
R="$V/$R1"
for spec in \
    "flip 0:magic" "flip 4:version" "flip 5:suite" "flip 6:reserved" "flip 8:salt" \
    "flip 40:body-start" "flip 2000:body" "flip -16:tag" "truncate 0:empty" \
    "truncate 40:header-only" "truncate -1:one-byte-short" "append 00:one-trailing-byte" \
    "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$R" $ops
    upgrade_expect 4 1 "record $region ($ops)"
    damaged "$R1" "docs/$N1" "docs/$N2" "format 1 record $region ($ops)"
done
mv "$V/$R1" "$T/x" && mv "$V/$R2" "$V/$R1" && mv "$T/x" "$V/$R2"
upgrade_expect 4 1 "records swapped"
damaged "$R1" "docs/$N1" "docs/$N3" "format 1 records of readme.txt and with space ü.txt swapped"
cp "$V/$R2" "$V/$R1"
damaged "$R1" "docs/$N1" "docs/$N3" "format 1 record of with space ü.txt copied over readme.txt's"
O="$V/$O1"
for spec in \
    "flip 0:magic" "flip 4:version" "flip 8:ciphertext" "flip -1:tag" "truncate 8:header-only" \
    "truncate -1:one-byte-short" "append 00:one-trailing-byte" "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$O" $ops
    damaged "$O1" "docs/$N1" "docs/$N2" "format 1 object $region ($ops)"
done
for spec in "flip 65560:segment-1" "truncate 65560:final-segment-missing"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$V/$O3" $ops
    damaged "$O3" "docs/$N3" "docs/$N1" "format 1 object of segments.bin: $region ($ops)"
done
mv "$V/$O1" "$T/x" && mv "$V/$O2" "$V/$O1" && mv "$T/x" "$V/$O2"
damaged "$O1" "docs/$N1" "docs/$N3" "format 1 objects of readme.txt and with space ü.txt swapped"
rm -f "$V/$O1"
damaged "$O1" "docs/$N1" "docs/$N2" "format 1 object of readme.txt missing"
# Damage carried into format 2 by an upgrade is still found.
$MUT "$V/$O1" flip 20
upgrade_expect 0 2 "object damaged"
damaged "$O1" "docs/$N1" "docs/$N2" "format 1 object damaged, then upgraded"

echo "# corruption matrix: $CASES2 cases of format 2, $((CASES - CASES2)) of format 1"
expect_status 0 pq check --read-data
finish
