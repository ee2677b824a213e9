# tests/cli/tamper.sh: check on a healthy vault of format 3; a flipped byte
# in a pack (a blob, its table, its locator), in a segment's entry block,
# chunk block and head, in the config and in the key file; missing packs
# and segments; gc of temporaries and leftovers (packs no entry refers to),
# gc rewriting a mostly unused pack (and refusing to while a live blob of
# it is damaged), that pack put back afterwards (a leftover, never read),
# then put back damaged before its chunks are added again (only blobs that
# open are adopted).  Then format 1, on a copy of the frozen fixture
# tests/fixtures/v1-aes: a flipped byte in an object and a record, and gc
# of an orphaned object.
. "$(dirname "$0")/lib.sh"

init_vault || finish
head -c 5000000 /dev/urandom >"$T/big"
printf 'small\n' >"$T/small"
expect_status 0 pq add "$T/big" --name big
expect_status 0 pq add "$T/small" --name small
expect_status 0 pq check
expect_stdout_contains "epoch: 3, segments: 3, entries: 2, packs: 2"
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
expect_status 0 pq check --read-data
expect_stdout_contains "damaged: 0"

cp -a "$V" "$T/pristine"
restore() { rm -rf "$V" && cp -a "$T/pristine" "$V"; }
seg() { printf '%s/segments/%016x' "$V" "$1"; }

# ---- a flipped byte in every pack in turn ----
# Format 3 (docs/FORMAT.md section 22): a pack is its header, blobs back to
# back from byte 8 (each starting with its 16-byte salt), the sealed table
# and the 32-byte locator at the end.  A flipped byte in a blob (its first
# byte: the salt, which the blob's key comes from) fails that file's get;
# one in the table (its tag, just before the locator: the first pack) or
# the locator (the second) lies outside every blob: get serves both files
# intact, check --read-data finds the pack (its size and SHA-256 are in the
# segment that wrote it).
n=0
for pack in $(find "$V/packs" -type f | sort); do
    n=$((n + 1))
    size=$(stat -c %s "$pack")
    outside="$((size - 33)):table"
    [ "$n" -eq 2 ] && outside="$((size - 1)):locator"
    for spec in "8:blob" "$outside"; do
        off=${spec%%:*} region=${spec#*:}
        flip_byte "$pack" "$off"
        expect_status 4 pq check --read-data
        expect_stderr_contains "pqvault: check: "
        expect_stderr_contains "$(basename "$pack") does not match its SHA-256"
        expect_stdout_contains "damaged: 1"
        rm -rf "$T/out"
        mkdir -p "$T/out"
        st=0
        pq get big -o "$T/out/big" 2>"$ERR" || st=$?
        pq get small -o "$T/out/small" 2>>"$ERR" || st=$?
        if [ "$region" = blob ]; then
            check_ok "pack $n $region flipped: get fails with exit 4 (got $st)" test "$st" -eq 4
            check_ok "pack $n $region flipped: no damaged output left" \
                test "$(find "$T/out" -type f | wc -l)" -eq 1
            check_ok "pack $n $region flipped: the error names the blob" \
                grep -q "blob failed authentication" "$ERR"
        else
            check_ok "pack $n $region flipped (byte $off, outside every blob): get serves both (got $st)" \
                test "$st" -eq 0
            check_ok "pack $n $region flipped: both files intact" \
                sh -c 'cmp -s "$1/big" "$2/out/big" && cmp -s "$1/small" "$2/out/small"' sh "$T" "$T"
        fi
        check_ok "pack $n $region flipped: no temporary left" test -z "$(find "$T/out" -name '*tmp*')"
        restore
    done
done
check_ok "two packs were tampered with" test "$n" -eq 2

# ---- a flipped byte in a segment's blocks: that entry, or the records of
# its chunks, are lost ----
# big's segment (epoch 2): its head, then its entry block (big's entry),
# then its chunk block (the records of big's chunks: FORMAT.md section 23).
# small, newer, is found before it is reached; its chunk record is in its
# own segment.
h2=$((72 + $(od -An -tu4 --endian=big -j64 -N4 "$(seg 2)")))
flip_byte "$(seg 2)" "$h2"
expect_status 4 pq check
expect_stderr_contains "pqvault: check: segments/0000000000000002: segment block 0 failed authentication"
st=0
pq get big -o "$T/o1" >/dev/null 2>&1 || st=$?
st2=0
pq get small -o "$T/o2" >/dev/null 2>&1 || st2=$?
check_ok "segment entry block flipped: get big exits 4, get small 0 ($st, $st2)" \
    test "$st" -eq 4 -a "$st2" -eq 0 -a ! -e "$T/o1"
expect_status 4 pq list
expect_stdout_contains "small"
restore
rm -f "$T/o1" "$T/o2"
flip_byte "$(seg 2)" $(($(stat -c %s "$(seg 2)") - 3))
expect_status 4 pq check
expect_stderr_contains "pqvault: check: segments/0000000000000002: segment chunk block 0 failed authentication"
expect_stderr_contains "pqvault: check: big: chunk 0 has no record in the chain"
st=0
pq get big -o "$T/o1" >/dev/null 2>"$ERR" || st=$?
check_ok "segment chunk block flipped: get big exits 4, nothing written ($st)" \
    test "$st" -eq 4 -a ! -e "$T/o1"
expect_stderr_contains "segment chunk block 0 failed authentication"
# small's chunk record is in its own segment: served.
expect_status 0 pq get small -o "$T/o2"
check_ok "segment chunk block flipped: small intact" same_file "$T/small" "$T/o2"
# The entries are intact: list shows both names, and says a block is lost.
expect_status 4 pq list
expect_stdout_contains "big"
expect_stdout_contains "small"
restore
rm -f "$T/o1" "$T/o2"

# ---- a flipped byte in a segment's head: the chain does not verify ----
flip_byte "$(seg 2)" $(((72 + h2) / 2))
expect_status 4 pq list
expect_one_error_line
expect_stderr_contains "segments/0000000000000002"
expect_status 4 pq get small -o "$T/o2"
check_ok "segment head flipped: nothing restored" test ! -e "$T/o2"
expect_status 4 pq check
restore

# ---- a missing pack, a missing segment ----
rm -f "$(first_file "$V/packs")"
expect_status 4 pq check
expect_stdout_contains "missing: 1"
expect_stderr_contains "is missing"
restore
rm -f "$(seg 2)"
expect_status 4 pq check
expect_stderr_contains "segments/0000000000000002"
expect_stderr_contains "is missing"
restore

# ---- a flipped byte in the config ----
size=$(stat -c %s "$V/config")
flip_byte "$V/config" $((size - 3))
expect_status 4 pq list
expect_one_error_line
expect_status 4 pq check
restore

# ---- a flipped byte in the key file: integrity (4) or, where tampering
# cannot be told from a wrong passphrase, 3 ----
size=$(stat -c %s "$V/keyfile")
for off in 5 100 $((size - 40)) $((size - 1)); do
    flip_byte "$V/keyfile" "$off"
    st=0
    pq get small -o "$T/kf-out" >/dev/null 2>"$ERR" || st=$?
    check_ok "key file byte $off flipped: exit 3 or 4 (got $st)" \
        sh -c '[ "$1" -eq 3 ] || [ "$1" -eq 4 ]' sh "$st"
    check_ok "key file byte $off flipped: no output file" test ! -e "$T/kf-out"
    check_ok "key file byte $off flipped: one error line" test "$(wc -l <"$ERR")" -eq 1
    restore
done
: >"$V/keyfile"
expect_status 4 pq list
restore

# ---- gc: temporaries and leftovers ----
mkdir -p "$V/packs/ab"
tmp="$V/packs/ab/abababababababababababababababab.tmp-1234"
printf 'junk' >"$tmp"
expect_status 0 pq check
expect_stdout_contains "temporaries: 1"
expect_status 0 pqn info
expect_stdout_contains "temporaries:     1"
expect_status 0 pq gc
expect_stdout_contains "removed: 1 (leftovers: 0, temporaries: 1)"
check_ok "gc removed the temporary file" test ! -e "$tmp"
# Leftovers: the pack of a removed name (rm leaves data to gc), and a pack
# no segment names whose table does not open (an interrupted add's, whose
# table opens, would be adopted by the next add instead).
expect_status 0 pq rm small
# (The snapshots before keep small's data until they are forgotten.)
expect_status 0 pq forget --keep-last 1
head -c 300 /dev/urandom >"$V/packs/ab/ab0102030405060708090a0b0c0d0e0f"
expect_status 0 pq check
expect_stdout_contains "entries: 1"
expect_stdout_contains "leftovers: 2"
expect_stderr_contains "a pack no entry refers to (gc removes it)"
expect_status 0 pq gc
expect_stdout_contains "removed: 2 (leftovers: 2, temporaries: 0)"
expect_status 0 pq check --read-data
expect_stdout_contains "packs: 1"
expect_stdout_contains "leftovers: 0, temporaries: 0"
expect_status 0 pq get big -o "$T/big.out"
check_ok "big intact after gc" same_file "$T/big" "$T/big.out"

# ---- gc rewrites a mostly unused pack (FORMAT.md section 25) ----
# d/x and d/y, added together, share a pack; once d/x is removed, more than
# a fifth of it is unused: gc copies d/y's blobs into a new pack, records
# their new places in an epoch of their own, then deletes the old pack.
mkdir -p "$T/d"
head -c 3000000 /dev/urandom >"$T/d/x"
head -c 600000 /dev/urandom >"$T/d/y"
find "$V/packs" -type f | sort >"$T/packs-before"
expect_status 0 pq -q add "$T/d" --name d
oldpack=$(find "$V/packs" -type f | sort | comm -13 "$T/packs-before" -)
check_ok "d/x and d/y share one pack" test -n "$oldpack" -a "$(echo "$oldpack" | wc -l)" -eq 1
cp "$oldpack" "$T/oldpack"
expect_status 0 pq rm d/x
expect_status 0 pq forget --keep-last 1
# A live blob of that pack damaged first: gc copies blobs as they are, so it
# must not rewrite a pack that does not match its SHA-256 (nor delete it):
# it refuses, and check --read-data still finds the pack.  d/y's blobs lie
# either first (from byte 8, about 600 KB) or after d/x's (from about 3 MB):
# a flip at 300000 damages d/y in the first case, at 3300000 in the other.
cp -a "$V" "$T/before-gc" && cp -a "$XDG_STATE_HOME" "$T/before-gc-state"
flip_byte "$oldpack" 300000
if pq get d/y -o - >/dev/null 2>&1; then
    flip_byte "$oldpack" 300000
    flip_byte "$oldpack" 3300000
fi
st=0
pq get d/y -o - >/dev/null 2>&1 || st=$?
check_ok "a live blob of the mostly unused pack damaged (get d/y exits $st)" test "$st" -eq 4
expect_status 4 pq gc
expect_stderr_contains "$(basename "$oldpack"): does not match its SHA-256: not rewritten"
check_ok "gc left the damaged pack in place" test -e "$oldpack"
expect_status 4 pq check --read-data
expect_stderr_contains "$(basename "$oldpack") does not match its SHA-256"
rm -rf "$V" "$XDG_STATE_HOME" && mv "$T/before-gc" "$V" && mv "$T/before-gc-state" "$XDG_STATE_HOME"
expect_status 0 pq gc
expect_stdout_contains "rewritten: 1 pack without their unused chunks"
check_ok "gc deleted the old pack" test ! -e "$oldpack"
expect_status 0 pq check --read-data
expect_stdout_contains "entries: 3, packs: 2"
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0"
expect_status 0 pq get d/y -o "$T/y.out"
check_ok "d/y intact after its pack was rewritten" same_file "$T/d/y" "$T/y.out"
# The old pack put back (a replay of what the storage once held): no record
# of the chain names it any more; a leftover, never read.
mkdir -p "$(dirname "$oldpack")" && cp "$T/oldpack" "$oldpack"
expect_status 0 pq check --read-data
expect_stdout_contains "leftovers: 1"
expect_stderr_contains "$(basename "$oldpack"): a pack no entry refers to"
rm -f "$T/y.out"
expect_status 0 pq get d/y -o "$T/y.out"
check_ok "d/y intact beside the replayed pack" same_file "$T/d/y" "$T/y.out"
expect_status 0 pq gc
expect_stdout_contains "removed: 1 (leftovers: 1, temporaries: 0)"
check_ok "gc deleted the replayed pack" test ! -e "$oldpack"
# Put back once more, with a byte of d/x's blobs flipped (d/x's lie first
# or after d/y's: both candidates flipped, d/y's chunks are in the chain
# anyway), then d/x added again: the add adopts the chunks of a pack no
# segment names (FORMAT.md section 23), but only those whose blob opens; it
# stores the damaged one again, so d/x restores.
cp "$T/oldpack" "$oldpack"
flip_byte "$oldpack" 300000
flip_byte "$oldpack" 3300000
expect_status 0 pq add "$T/d" --name d
rm -f "$T/x.out"
expect_status 0 pq get d/x -o "$T/x.out"
check_ok "d/x intact, added again beside a damaged pack of its chunks" same_file "$T/d/x" "$T/x.out"
expect_status 0 pq check --read-data
expect_stdout_contains "damaged: 0, missing: 0"

# ---- format 1 (a copy of the frozen fixture) ----
V=$T/v1
PF=$(dirname "$0")/../fixtures/v1.pass
cp -r "$(dirname "$0")/../fixtures/v1-aes" "$V" && chmod -R u+w "$V"
cp -a "$V" "$T/v1-pristine"
restore() { rm -rf "$V" && cp -a "$T/v1-pristine" "$V"; }
expect_status 0 pq check --read-data
expect_stdout_contains "records: 6, objects: 3, bytes: 70130, damaged: 0, missing: 0, orphans: 0, temporaries: 0"
obj=$(find "$V/objects" -type f -size 49c)
flip_byte "$obj" 30
expect_status 4 pq check --read-data
expect_stderr_contains "$(basename "$obj")"
expect_stdout_contains "damaged: 1"
expect_status 4 pq get docs/readme.txt -o "$T/v1-readme"
check_ok "format 1 object flipped: nothing restored" test ! -e "$T/v1-readme"
restore
rec=$(first_file "$V/records")
flip_byte "$rec" 40
expect_status 4 pq check
expect_stderr_contains "$(basename "$rec")"
expect_status 4 pq list
restore
# An orphan: an object no record names (a record removed behind our back).
rm -f "$(find "$V/records" -type f -size 15998c)"
expect_status 0 pq check
expect_stdout_contains "records: 5"
expect_stdout_contains "orphans: 1"
expect_status 0 pq gc
expect_stdout_contains "removed: 1 (orphans: 1, temporaries: 0)"
expect_status 0 pq check --read-data
expect_stdout_contains "orphans: 0, temporaries: 0"
check_ok "gc left format 1 alone" test "$(head -n 1 "$V/config")" = "pqvault-config 1"

finish
