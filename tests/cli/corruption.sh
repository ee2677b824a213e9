# tests/cli/corruption.sh: the corruption and tampering matrix, driving the
# real binary.  Format 3, the format of new vaults (docs/FORMAT.md sections
# 20-25 on 9-19): for every file kind (config, key file, segment, pack) and
# every region of each (header fields, head, entry blocks, chunk blocks,
# blobs and their STREAM segments and tags, a pack's table and locator,
# trailing bytes) a damaged copy is made by bit flips, truncation, extension
# and zeroing, plus segments, blocks, packs and blobs swapped, copied, moved,
# replayed, deleted or taken from another vault, and (with
# python3-cryptography, tests/cli/layout.py) segments whose chunk records
# lie, sealed again under the segment's key.  Then format 2 on a copy of
# the frozen fixture tests/fixtures/v2-aes (read only: a writing command
# would upgrade it): its segment with a command key, its blocks, and its
# packs of extents; then format 1 (records and objects) on a copy of
# tests/fixtures/v1-aes, which is still read, checked and upgraded.  Each
# case asserts:
#   check --read-data   exits 4 and names the damaged file on stderr;
#   get                 exits 4 with one error line and writes nothing (no
#                       file, no temporary);
#   another file        restores byte for byte.
# Two kinds of damage differ by design:
#   - a segment's header or head (or its size) is the catalogue's chain:
#     when it does not verify nothing is served, so every get exits 4
#     (the other file is refused as well, nothing written);
#   - a pack's header, and in format 3 its table and locator (and bytes
#     after them) lie outside every blob: get reads exactly a blob's
#     authenticated bytes (where the chain's chunk record puts it) and
#     serves the file intact, while check --read-data (the pack's size and
#     SHA-256 from the segment that wrote it) reports the damage.
# A replaced file whose newer entry, chunk records or blob are damaged is
# refused, never served with its older content.
# Key file cases follow src/keys/keyfile.c: its trailing SHA-256 catches
# accidental damage (exit 4); a forger who fixes the checksum is stopped by
# the slot tags and looks like a wrong passphrase (exit 3), except where the
# parser can still tell (out-of-range slot parameters: exit 4).
. "$(dirname "$0")/lib.sh"

MUT="python3 $(dirname "$0")/../vectors/mutate.py"
# mut FILE OP ARGS...: mutate.py's operations, a single flip, zero or
# truncate done here (python's start-up would be most of a case's time).
mut() {
    _mf=$1
    shift
    case "${1:-}:$#:${3:-00}" in
    flip:2:* | flip:3:[0-9a-fA-F][0-9a-fA-F])
        _mo=$2
        [ "$_mo" -lt 0 ] && _mo=$(($(stat -c %s "$_mf") + _mo))
        _mb=$(od -An -tu1 -j "$_mo" -N1 "$_mf" | tr -d ' ')
        printf "$(printf '\\%03o' $((_mb ^ 0x${3:-01})))" |
            dd of="$_mf" bs=1 seek="$_mo" conv=notrunc status=none
        ;;
    zero:3:*)
        _mo=$2
        [ "$_mo" -lt 0 ] && _mo=$(($(stat -c %s "$_mf") + _mo))
        head -c "$3" /dev/zero | dd of="$_mf" bs=1 seek="$_mo" conv=notrunc status=none
        ;;
    truncate:2:*)
        _mn=$2
        [ "$_mn" -lt 0 ] && _mn=$(($(stat -c %s "$_mf") + _mn))
        [ "$_mn" -lt "$(stat -c %s "$_mf")" ] && truncate -s "$_mn" "$_mf"
        ;;
    *) $MUT "$_mf" "$@" ;;
    esac
}
LAYOUT=$(dirname "$0")/layout.py
FX=$(cd "$(dirname "$0")/../fixtures" && pwd)
HAVE_CRYPTO=0
python3 -c 'import cryptography.hazmat.primitives.ciphers.aead' 2>/dev/null && HAVE_CRYPTO=1
init_vault --kem FrodoKEM-640-SHAKE --aead AES-256-GCM || finish
RECOVERY=$T/recovery

# Epoch 2: m/, 2000 empty files (a segment of two entry blocks and no chunk
# block: an entry's varints, and so its bytes, depend on the file system's
# inode numbers and times; 1500 entries came within 600 bytes of filling
# only one 64 KiB block in one run, and the test failed).  Epochs 3 and 4: r, then r replaced by other bytes of the same
# size.  Epochs 5-9: a, b, c, d, e, one add each: a and d have the same
# size (one chunk, one blob each, in packs of the same size), b and e are
# tiny, c is 4 MiB + 70000 bytes: several content-defined chunks (128 KiB
# to 2 MiB), their blobs in one pack.  Epoch 10: p/x and p/y, 3000 bytes
# each, in one add: one pack of two blobs of the same length.  Epoch 11:
# s, 70000 bytes: one chunk (a region of at most 128 KiB is one chunk)
# whose blob has two STREAM segments (65536 + 4464 bytes).  Random bytes do
# not compress: a blob of n bytes is its salt (16), then n bytes and a
# 16-byte tag per STREAM segment (FORMAT.md section 22), and the pack's
# blobs start at byte 8.  A name is looked up from the newest segment down,
# and a damaged entry block on the way may hold its newest entry: damage to
# an older segment's entry block never stands in the way of a newer file
# (r's segment damaged, a restores; a's, b restores; d's, e restores; p's,
# s restores).
mkdir -p "$T/m" "$T/p"
i=0
while [ $i -lt 2000 ]; do
    i=$((i + 1))
    : >"$T/m/f$i"
done
head -c 3000 /dev/urandom >"$T/r.old"
head -c 3000 /dev/urandom >"$T/a"
head -c 3000 /dev/urandom >"$T/d"
head -c 100 /dev/urandom >"$T/b"
head -c 50 /dev/urandom >"$T/e"
head -c $((4194304 + 70000)) /dev/urandom >"$T/c"
head -c 3000 /dev/urandom >"$T/p/x"
head -c 3000 /dev/urandom >"$T/p/y"
head -c 70000 /dev/urandom >"$T/s"
packs() { (cd "$V" && find packs -type f 2>/dev/null | sort); }
packs >"$T/p0"
for f in m r.old r a b c d e p s; do
    if [ "$f" = r.old ]; then
        cp "$T/r.old" "$T/r" && pq -q add "$T/r" || fail "add r"
    elif [ "$f" = r ]; then
        # A new file (a new inode): changed whatever the clock's granularity.
        head -c 3000 /dev/urandom >"$T/r.new" && mv "$T/r.new" "$T/r" && pq -q add "$T/r" ||
            fail "add r again"
    else
        pq -q add "$T/$f" || fail "add $f"
    fi
    packs >"$T/p1"
    comm -13 "$T/p0" "$T/p1" >"$T/new-$f"
    mv "$T/p1" "$T/p0"
done
seg() { printf 'segments/%016x' "$1"; }
seg_m=$(seg 2) seg_r0=$(seg 3) seg_r=$(seg 4) seg_a=$(seg 5) seg_b=$(seg 6) seg_c=$(seg 7)
seg_d=$(seg 8) seg_p=$(seg 10)
pack_r0=$(cat "$T/new-r.old") pack_r=$(cat "$T/new-r") pack_a=$(cat "$T/new-a")
pack_b=$(cat "$T/new-b") pack_c=$(cat "$T/new-c") pack_d=$(cat "$T/new-d")
pack_p=$(cat "$T/new-p") pack_s=$(cat "$T/new-s")
check_ok "learned the vault layout" test -e "$V/$(seg 11)" -a ! -e "$V/$(seg 12)" -a -n "$pack_a" \
    -a -n "$pack_b" -a -n "$pack_d" -a -n "$pack_r0" -a -n "$pack_r" -a -n "$pack_s" \
    -a "$(echo "$pack_c" | wc -w)" -eq 1 -a "$(echo "$pack_p" | wc -w)" -eq 1 -a ! -s "$T/new-m" \
    -a "$(stat -c %s "$V/$pack_a")" -eq "$(stat -c %s "$V/$pack_d")" \
    -a "$(stat -c %s "$V/$pack_r0")" -eq "$(stat -c %s "$V/$pack_r")"
check_ok "segment 5 is of format 3" test "$(od -An -tu1 -j4 -N1 "$V/$seg_a" | tr -d ' ')" -eq 3
expect_status 0 pq check --read-data
expect_stdout_contains "epoch: 11, segments: 11, entries: 2011, packs: 9"
# (The replaced version of r stays: the snapshots before keep it.)
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
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
# which_unit FILE OFF: the block a flip at OFF of segment FILE damages, as
# list names it ("block N" or "chunk block N"); the file is left as it was.
which_unit() {
    mut "$1" flip "$2"
    pq list >/dev/null 2>"$ERR"
    mut "$1" flip "$2"
    sed -n 's/.*segment \(block [0-9]*\|chunk block [0-9]*\) failed authentication.*/\1/p' "$ERR" |
        head -n 1
}

CASES=0
# verify SUBJECT DESC NAME:WANT...: the vault is damaged; check names
# SUBJECT; get of each NAME exits WANT (4: one error line, nothing written;
# 0: restored intact).
verify() {
    subject=$1 what=$2
    shift 2
    CASES=$((CASES + 1))
    st=0
    pq check --read-data >"$OUT" 2>"$ERR" || st=$?
    if [ "$st" -eq 4 ] && grep -qF -- "$subject" "$ERR"; then
        ok "$what: check --read-data exits 4 naming $subject"
    else
        fail "$what: check --read-data exit $st (want 4), stderr naming '$subject'"
    fi
    for pair in "$@"; do
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
damaged() { verify "$1" "$4" "$2:4" "$3:0"; }
# refused: the catalogue does not verify: nothing is served.
refused() { verify "$1" "$4" "$2:4" "$3:4"; }
# outside: damage outside every blob: files are served intact.
outside() { verify "$1" "$4" "$2:0" "$3:0"; }

# ---- segments: a's (one entry block, then one chunk block of one record) ----
# The chunk block holds one record: identity (32), pack index, offset,
# stored length 3032, plaintext length 3000 (varints: 1, 1, 2, 2 bytes),
# flags (1), and its tag: the segment's last 55 bytes.
S="$V/$seg_a"
H=$(head_end "$S")
C=$(($(stat -c %s "$S") - 55))
check_ok "a's segment: entry block 0 from byte $H, chunk block 0 from $C" \
    [ "$(which_unit "$S" "$H"):$(which_unit "$S" $((C - 1))):$(which_unit "$S" "$C")" = \
    "block 0:block 0:chunk block 0" ]
for spec in \
    "flip 0:magic" "flip 4:version-3-to-2" "flip 4 04:version-unknown" \
    "flip 5:kind" "flip 5 03:kind-delta-to-base" "flip 6:suite" "flip 6 03:suite-AES-to-ChaCha" \
    "flip 7:reserved" "flip 7 80:reserved" "flip 8:epoch-high-byte" "flip 15:epoch-low-byte" \
    "flip 16:vault-id" "flip 32:salt" "flip 67:head-length" \
    "be32 64 0:head-length-zero" "be32 64 0xffffffff:head-length-huge" "flip 71:block-count" \
    "be32 68 0:block-count-zero" "flip 72:head-start" \
    "flip $(((72 + H) / 2)):head" "flip $((H - 17)):head-end" "flip $((H - 16)):head-tag" \
    "flip $((H - 1)):head-tag" "zero 72 64:zeroed-head" "truncate 0:empty" "truncate 7:short-header" \
    "truncate 71:header-short" "truncate 72:header-only" "truncate $((H - 1)):head-short" \
    "truncate $H:blocks-missing" "truncate $C:chunk-block-missing" "truncate -1:one-byte-short" \
    "truncate -16:chunk-block-tag-missing" "append 00:one-trailing-byte" "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$S" $ops
    refused "$seg_a" a b "segment $region ($ops)"
done
# A block is sealed on its own (its index as nonce): its damage loses its
# entries only; a chunk block's damage loses its records (a's chunk has no
# place: a is refused, every other file is served).
for spec in \
    "flip $H:entry-block-start" "flip $((H + 20)):entry-block" "flip $((C - 17)):entry-block-end" \
    "flip $((C - 16)):entry-block-tag" "flip $((C - 1)):entry-block-tag" \
    "zero $H 32:zeroed-entry-block" "zero $((C - 16)) 16:zeroed-entry-block-tag"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$S" $ops
    damaged "$seg_a" a b "segment $region ($ops)"
done
for spec in \
    "flip $C:chunk-block-start" "flip $((C + 10)):chunk-block-identity" \
    "flip $((C + 34)):chunk-block-offset" "flip -17:chunk-block-end" "flip -1:chunk-block-tag" "zero $C 39:zeroed-chunk-record" "zero -16 16:zeroed-chunk-block-tag"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$S" $ops
    damaged "$seg_a" a b "segment $region ($ops)"
done
# The entry and chunk blocks exchanged: neither opens under the other's
# index (nor has the other's length).
sz=$(stat -c %s "$S")
{ head -c "$H" "$S" && tail -c 55 "$S" && head -c "$C" "$S" | tail -c $((C - H)); } >"$T/x"
cat "$T/x" >"$S"
damaged "$seg_a" a b "segment a's entry and chunk blocks exchanged"
# Blocks of another segment (d's: the same file size, sealed under another
# key) in place of a's, both ways; then d's chunk block alone.
n=$((sz - H))
tail -c "$n" "$V/$seg_d" >"$T/x" && tail -c "$n" "$S" >"$T/y"
mut "$S" truncate "$H" append "$(od -An -tx1 -v "$T/x" | tr -d ' \n')"
damaged "$seg_a" a b "segment blocks: d's blocks in a's segment"
# (Entries of a and d differ only in their values; should a's blocks be
# longer than d's, they would reach into d's head.)
nd=$(($(stat -c %s "$V/$seg_d") - $(head_end "$V/$seg_d")))
mut "$V/$seg_d" truncate $(($(stat -c %s "$V/$seg_d") - n)) append "$(od -An -tx1 -v "$T/y" | tr -d ' \n')"
if [ "$n" -le "$nd" ]; then
    damaged "$seg_d" d e "segment blocks: a's blocks in d's segment"
else
    refused "$seg_d" d e "segment blocks: a's blocks in d's segment (reaching into its head)"
fi
mut "$S" truncate "$C" append "$(tail -c 55 "$V/$seg_d" | od -An -tx1 -v | tr -d ' \n')"
damaged "$seg_a" a b "segment chunk block: d's in a's segment"

# Whole segments swapped, copied, replayed, deleted, or from another vault.
mv "$V/$seg_a" "$T/x" && mv "$V/$seg_b" "$V/$seg_a" && mv "$T/x" "$V/$seg_b"
refused "$seg_b" a b "segments of a and b swapped"
cp "$V/$seg_b" "$V/$seg_a"
refused "$seg_a" a b "segment of b copied over a's"
cp "$V/$seg_a" "$V/$(seg 12)"
refused "$(seg 12)" a b "segment of a replayed as epoch 12"
rm "$V/$seg_a"
refused "$seg_a" a b "segment of a missing"
# The other vault: epochs 2-5 add b, a, d and e.
OV=$T/other
"$PQV" -v "$OV" --passphrase-file "$PF" -q init --kdf "$KDF" --kem FrodoKEM-640-SHAKE >/dev/null
for f in b a d e; do
    (cd "$OV" && find packs -type f 2>/dev/null | sort) >"$T/op0"
    "$PQV" -v "$OV" --passphrase-file "$PF" -q add "$T/$f" || fail "add $f to another vault"
    [ "$f" = a ] && pack_oa=$(cd "$OV" && find packs -type f | sort | comm -13 "$T/op0" -)
done
cp "$OV/$seg_a" "$V/$seg_a"
refused "$seg_a" a b "segment 5 of another vault"

# ---- segments: r's newer one (epoch 4; r of epoch 3 has other bytes) ----
# Its entry, or its chunk's record, lost: r is refused, never served with
# its older content.
S="$V/$seg_r"
H=$(head_end "$S")
for spec in "flip $H:entry-block" "flip -1:chunk-block-tag"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$S" $ops
    damaged "$seg_r" r a "segment of r's newer content: $region ($ops)"
done

# ---- segments: m's (two entry blocks of about 64 KiB) ----
S="$V/$seg_m"
H=$(head_end "$S")
size=$(stat -c %s "$S")
# which_block OFF: the block a flip at OFF damages (list names it).
which_block() {
    mut "$S" flip "$1"
    pq list m >/dev/null 2>"$ERR"
    mut "$S" flip "$1"
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
    mut "$S" $1
    st=0
    pq list m >"$T/m-now" 2>"$ERR" || st=$?
    lost=$(comm -23 "$T/m-all" "$T/m-now" | grep / | head -n 1)
    kept=$(grep / "$T/m-now" | head -n 1)
    nlost=$(comm -23 "$T/m-all" "$T/m-now" | wc -l)
    good=0
    [ "$st" -eq 4 ] && [ "$nlost" -gt 0 ] && { [ -n "$kept" ] || [ "${3:-}" = both ]; } && good=1
    check_ok "$2: list exits 4 and shows the other block's names ($nlost of 2001 lost)" [ "$good" -eq 1 ]
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

# ---- packs: a's (one blob of 3032 bytes: [8, 3040); its table, then
# its locator, the last 32 bytes) ----
P="$V/$pack_a"
for spec in \
    "flip 8:blob-salt" "flip 24:first-ciphertext-byte" "flip 1500:blob" \
    "flip 3023:last-ciphertext-byte" "flip 3024:blob-tag" "flip 3039:blob-tag" \
    "zero 8 16:zeroed-salt" "zero 3024 16:zeroed-blob-tag" \
    "truncate 0:empty" "truncate 7:short-header" "truncate 8:header-only" \
    "truncate 3039:blob-one-byte-short" "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$P" $ops
    damaged "$pack_a" a b "pack $region ($ops)"
done
for spec in \
    "flip 0:magic" "flip 4:version-3-to-2" "flip 4 04:version-unknown" "flip 5:suite" \
    "flip 7 80:reserved" "flip 3040:table-start" "flip -33:table-tag" \
    "zero 3040 16:zeroed-table" "flip -32:locator-start" "flip -1:locator-end" \
    "zero -32 32:zeroed-locator" "truncate -1:locator-one-byte-short" "truncate -32:locator-missing" \
    "truncate 3040:table-and-locator-missing" "append 00:one-trailing-byte" \
    "append 0000000000000000000000000000000000:17-trailing-bytes"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$P" $ops
    outside "$pack_a" a b "pack $region ($ops), outside the blob"
done

# s's pack: one blob of two STREAM segments (65536 + 4464 bytes of
# plaintext, each with its 16-byte tag) after the salt: [8, 70056).
P="$V/$pack_s"
for spec in "flip 100:stream-segment-0" "flip 65575:stream-segment-0-tag" \
    "flip 65580:stream-segment-1" "flip 70055:stream-segment-1-tag" \
    "truncate 65576:final-stream-segment-missing" "truncate 65590:final-stream-segment-short"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$P" $ops
    damaged "$pack_s" s a "pack of s: $region ($ops)"
done
# The two STREAM segments of s's blob swapped (as whole segments would be
# in a blob of equal segments: each one's nonce holds its index).
{ head -c 24 "$P" && tail -c +65577 "$P" | head -c 4480 && tail -c +25 "$P" | head -c 65552 &&
    tail -c +70057 "$P"; } >"$T/x" && cat "$T/x" >"$P"
damaged "$pack_s" s a "pack of s: its STREAM segments exchanged"

# c's pack: its blobs back to back from byte 8; a flip in the middle of the
# pack is in one of them.
P="$V/$pack_c"
mut "$P" flip $(($(stat -c %s "$P") / 2))
damaged "$pack_c" c a "pack of c: a blob's middle"
mut "$P" flip 8
damaged "$pack_c" c a "pack of c: the first blob's salt"

# p's pack: two blobs of 3032 bytes, [8, 3040) and [3040, 6072), p/x's and
# p/y's in the order the add wrote them (found here from which one a
# flipped salt damages).
P="$V/$pack_p"
mut "$P" flip 8
sx=0 sy=0
pq get p/x -o - >/dev/null 2>&1 || sx=$?
pq get p/y -o - >/dev/null 2>&1 || sy=$?
mut "$P" flip 8
if [ "$sx" -eq 4 ]; then p1=p/x p2=p/y; else p1=p/y p2=p/x; fi
check_ok "p's pack: a flipped first salt damages one of p/x, p/y ($sx, $sy)" \
    [ "$sx:$sy" = 4:0 -o "$sx:$sy" = 0:4 ]
blob() { tail -c +$((9 + 3032 * $1)) "$P" | head -c 3032; }
mut "$P" flip 3100
verify "$pack_p" "pack of p: the second blob" "$p2:4" "$p1:0"
# The two blobs exchanged (same length: only their tags can tell).
{ head -c 8 "$P" && blob 1 && blob 0 && tail -c +6073 "$P"; } >"$T/x" && cat "$T/x" >"$P"
verify "$pack_p" "pack of p: its two blobs exchanged" "$p1:4" "$p2:4" "a:0"
# The first blob copied over the second.
{ head -c 8 "$P" && blob 0 && blob 0 && tail -c +6073 "$P"; } >"$T/x" && cat "$T/x" >"$P"
verify "$pack_p" "pack of p: its first blob copied over the second" "$p2:4" "$p1:0"

# Whole packs moved, copied, replayed, deleted, or from another vault.
# a's pack moved under d's name (the same size: only the SHA-256 and the
# tags can tell).
mv "$V/$pack_a" "$V/$pack_d"
damaged "$pack_d" d b "pack of a moved under d's name"
mv "$V/$pack_a" "$V/$pack_d"
damaged "$pack_a" a b "pack of a moved under d's name (a's side)"
# a's pack copied over b's (sizes differ).
cp "$V/$pack_a" "$V/$pack_b"
damaged "$pack_b" b a "pack of a copied over b's"
# The pack of r's older content in place of its newer one (the same size):
# r is refused, never served with its older content.
cp "$V/$pack_r0" "$V/$pack_r"
damaged "$pack_r" r a "pack of r's older content over its newer one"
# The pack of a in the other vault (the same plaintext and size, sealed
# under that vault's keys) in place of a's.
check_ok "a's pack in the other vault has the size of ours" \
    test "$(stat -c %s "$OV/$pack_oa")" -eq "$(stat -c %s "$V/$pack_a")"
cp "$OV/$pack_oa" "$V/$pack_a"
damaged "$pack_a" a b "pack of a from another vault"
# A pack missing.
rm -f "$V/$pack_b"
damaged "$pack_b" b a "pack of b missing"
rm -f "$V/$pack_r"
damaged "$pack_r" r a "pack of r's newer content missing"

# ---- chunk records that lie (FORMAT.md section 23), sealed again under
# their segment's key (tests/cli/layout.py; what no storage attacker can
# do, but a writer's bug could): whatever a record says, a blob opens only
# with its own chunk's key, so a record pointing elsewhere fails that
# file, and no other.
if [ "$HAVE_CRYPTO" -eq 1 ]; then
    setrec() { python3 "$LAYOUT" setrec "$V" "$RECOVERY" "$@" || fail "layout.py setrec $*"; }
    python3 "$LAYOUT" records "$V" "$RECOVERY" 5 >"$T/recs-a"
    check_ok "a's segment holds one chunk record (offset 0, 3032 bytes stored, 3000 plain)" \
        [ "$(cut -d' ' -f2-5 "$T/recs-a")" = "$(basename "$pack_a") 0 3032 3000" ]
    # Where the blob is (its offset, its stored length, its flags: zstd,
    # the suite, both in the blob's associated data): another place.
    for spec in "off=1:offset-one-byte-on" "stored=3031:stored-length-short" \
        "flags=3:zstd-flag-set" "flags=4:suite-ChaCha"; do
        ops=${spec%%:*} region=${spec#*:}
        setrec 5 0 $ops
        damaged "$(basename "$pack_a")" a b "chunk record of a: $region ($ops)"
    done
    # Values no record may hold: the chunk block is malformed, its records
    # unknown.
    setrec 5 0 flags=0
    damaged "$seg_a: segment chunk block 0 is malformed" a b "chunk record of a: no suite (flags=0)"
    setrec 5 0 stored=16383
    damaged "$seg_a: segment chunk block 0 is malformed" a b "chunk record of a: stored length above a blob's"
    # A plaintext length other than the entry's: no record of that chunk.
    setrec 5 0 plain=2999
    damaged "a: chunk 0 has no record in the chain" a b "chunk record of a: plaintext length 2999"
    # p's two records exchange their places: each points at the other's
    # blob, authentic and of the same length.
    python3 "$LAYOUT" records "$V" "$RECOVERY" 10 >"$T/recs-p"
    i1=$(awk '$3 == 0 { print $1 }' "$T/recs-p")
    i2=$(awk '$3 == 3032 { print $1 }' "$T/recs-p")
    check_ok "p's segment holds its two records (at 0 and 3032)" test -n "$i1" -a -n "$i2"
    python3 "$LAYOUT" swapplace "$V" "$RECOVERY" 10 "$i1" "$i2" || fail "layout.py swapplace"
    verify "$(basename "$pack_p")" "chunk records of p exchanged" "$p1:4" "$p2:4" "a:0"
else
    echo "# SKIP - chunk records that lie: python3-cryptography missing (tests/cli/layout.py)"
fi

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
    "flip 0:first-line" "flip 15 03:format-version-0" "flip 15 02:format-version-downgraded-to-1" \
    "flip 15 01:format-version-downgraded-to-2" \
    "flip 30:vault-id" "flip 70:kem-name" "flip 90:aead-name" "flip 120:identity" \
    "flip -80:created" "flip -68:mac-key-word" "flip -5:mac" "flip -1:final-newline" \
    "truncate 0:empty" "truncate 100:truncated" "truncate -1:no-final-newline" \
    "truncate -69:mac-line-missing" "appendtext x:trailing-text" "append 0a:trailing-newline" \
    "append 00:trailing-NUL" "zeroall:all-zero" \
    "replace AES-256-GCM ChaCha20-Poly1305:aead-changed" \
    "replace FrodoKEM-640-SHAKE FrodoKEM-976-SHAKE:kem-changed"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$C" $ops
    config_expect 4 config "$region ($ops)"
done
# A version byte one higher is a newer format, not damage: refused as
# unsupported (exit 1), nothing read.
mut "$C" flip 15 07
config_expect 1 "config: format version 4 is not supported" "future-version (flip 15 07)"

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
    mut "$K" $ops
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
    mut "$K" $ops
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


# ---- format 2: a copy of the frozen fixture tests/fixtures/v2-aes ----
# What format 3 does not have, or has otherwise, on a vault of format 2
# (only reading commands: a writing one would upgrade it): segments whose
# head holds a command key (FrodoKEM-976), their entry blocks, and packs of
# extents sealed with the files' keys.  docs/replaced.txt was added in
# epoch 2 ("old content") and replaced in epoch 4 (one entry block; its
# pack of 57 bytes holds one blob, [8, 57)); extra.txt, added in epoch 3 and
# removed in epoch 5, left a pack of 30 bytes nobody refers to.  Epoch 4's
# block lies on the way of most names' lookups (it is the newest that may
# hold them, by their tags): docs/sparse.bin's tag is below it, so that
# file restores with the block damaged.
V=$T/v2
cp -r "$FX/v2-aes" "$V" && chmod -R u+w "$V"
PF=$FX/v2.pass
SRC=$T/v2-files
mkdir -p "$SRC/docs"
printf 'new content, longer than the old\n' >"$SRC/docs/replaced.txt"
printf 'pqvault format 2 fixture\n' >"$SRC/docs/readme.txt"
{ printf 'head' && head -c 3145720 /dev/zero && printf 'tail'; } >"$SRC/docs/sparse.bin"
rm -rf "$XDG_STATE_HOME"
expect_status 0 pq check --read-data
expect_stdout_contains "epoch: 5, segments: 5, entries: 11, packs: 3"
cp -a "$V" "$T/v2-pristine"
mkdir -p "$XDG_STATE_HOME" && cp -a "$XDG_STATE_HOME" "$T/v2-pristine-state"
PRISTINE=$T/v2-pristine
PRISTINE_STATE=$T/v2-pristine-state
seg_v2=$(seg 4)
pack_v2=$(cd "$V" && find packs -type f -size 57c) pack_v2x=$(cd "$V" && find packs -type f -size 30c)
S="$V/$seg_v2"
H=$(head_end "$S")
check_ok "format 2: learned the fixture's layout (segment 4 of version 2 with a block from $H)" \
    test -n "$pack_v2" -a -n "$pack_v2x" -a "$(od -An -tu1 -j4 -N1 "$S" | tr -d ' ')" -eq 2 -a \
    "$(which_unit "$S" "$H")" = "block 0"
N=docs/replaced.txt
for spec in "flip 4 01:a-version-of-format-3" "flip 4 02:version-unknown" \
    "flip $((H / 2)):head-command-key" "flip $((H - 1)):head-tag" \
    "truncate $H:block-missing" "truncate -1:one-byte-short"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$S" $ops
    refused "$seg_v2" $N docs/readme.txt "format 2 segment $region ($ops)"
done
# Its block lost: docs/replaced.txt refused, never served with its older
# content.
for spec in "flip $H:block-start" "flip -1:block-tag"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$S" $ops
    damaged "$seg_v2" $N docs/sparse.bin "format 2 segment $region ($ops)"
done
P="$V/$pack_v2"
for spec in \
    "flip 8:first-blob-byte" "flip 30:blob" "flip -1:tag" "truncate 8:header-only" \
    "truncate -1:one-byte-short" "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$P" $ops
    damaged "$pack_v2" $N docs/readme.txt "format 2 pack $region ($ops)"
done
for spec in "flip 0:magic" "flip 4:version-2-to-3" "flip 5:reserved" "append 00:one-trailing-byte"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$P" $ops
    outside "$pack_v2" $N docs/readme.txt "format 2 pack $region ($ops), outside the extent"
done
# The leftover pack of extra.txt in its place; the pack missing.
cp "$V/$pack_v2x" "$P"
damaged "$pack_v2" $N docs/readme.txt "format 2 pack of extra.txt over docs/replaced.txt's"
rm -f "$P"
damaged "$pack_v2" $N docs/readme.txt "format 2 pack of docs/replaced.txt missing"
check_ok "the fixture is still of format 2" test "$(head -n 1 "$V/config")" = "pqvault-config 2"
CASES3=$CASES

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
    mut "$R" $ops
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
    mut "$O" $ops
    damaged "$O1" "docs/$N1" "docs/$N2" "format 1 object $region ($ops)"
done
for spec in "flip 65560:segment-1" "truncate 65560:final-segment-missing"; do
    ops=${spec%%:*} region=${spec#*:}
    mut "$V/$O3" $ops
    damaged "$O3" "docs/$N3" "docs/$N1" "format 1 object of segments.bin: $region ($ops)"
done
mv "$V/$O1" "$T/x" && mv "$V/$O2" "$V/$O1" && mv "$T/x" "$V/$O2"
damaged "$O1" "docs/$N1" "docs/$N3" "format 1 objects of readme.txt and with space ü.txt swapped"
rm -f "$V/$O1"
damaged "$O1" "docs/$N1" "docs/$N2" "format 1 object of readme.txt missing"
# Damage carried into format 3 by an upgrade (1 to 2 to 3: the objects
# stay where they lie, referred to by format-2 entries) is still found.
mut "$V/$O1" flip 20
upgrade_expect 0 3 "object damaged"
damaged "$O1" "docs/$N1" "docs/$N2" "format 1 object damaged, then upgraded"

echo "# corruption matrix: $CASES2 cases of format 3, $((CASES3 - CASES2)) of format 2, $((CASES - CASES3)) of format 1"
expect_status 0 pq check --read-data
finish
