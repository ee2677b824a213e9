# tests/cli/tamper.sh: check on a healthy vault; a flipped byte in a pack,
# in a segment's block and in its head, in the config and in the key file;
# missing packs and segments; gc of temporaries and leftovers (packs no
# entry refers to).  Then format 1, on a copy of the frozen fixture
# tests/fixtures/v1-aes: a flipped byte in an object and a record, and gc
# of an orphaned object.
. "$(dirname "$0")/lib.sh"

init_vault || finish
head -c 5000000 /dev/urandom >"$T/big"
printf 'small\n' >"$T/small"
expect_status 0 pq add "$T/big" --name big
expect_status 0 pq add "$T/small" --name small
expect_status 0 pq check
expect_stdout_contains "epoch: 3, segments: 3, entries: 2, packs: 3"
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
expect_status 0 pq check --read-data
expect_stdout_contains "damaged: 0"

cp -a "$V" "$T/pristine"
restore() { rm -rf "$V" && cp -a "$T/pristine" "$V"; }
seg() { printf '%s/segments/%016x' "$V" "$1"; }

# ---- a flipped byte in every pack in turn ----
n=0
for pack in $(find "$V/packs" -type f | sort); do
    n=$((n + 1))
    size=$(stat -c %s "$pack")
    flip_byte "$pack" $((size / 2))
    expect_status 4 pq check --read-data
    expect_stderr_contains "pqvault: check: "
    expect_stderr_contains "$(basename "$pack")"
    expect_stdout_contains "damaged: 1"
    rm -rf "$T/out"
    mkdir -p "$T/out"
    st=0
    pq get big -o "$T/out/big" 2>"$ERR" || st=$?
    pq get small -o "$T/out/small" 2>>"$ERR" || st=$?
    check_ok "pack $n flipped: get fails with exit 4 (got $st)" test "$st" -eq 4
    check_ok "pack $n flipped: no damaged output left" \
        test "$(find "$T/out" -type f | wc -l)" -eq 1
    check_ok "pack $n flipped: no temporary left" test -z "$(find "$T/out" -name '*tmp*')"
    restore
done
check_ok "three packs were tampered with" test "$n" -eq 3

# ---- a flipped byte in a segment's block: that entry is lost ----
# big's segment (epoch 2); small, newer, is found before it is reached.
flip_byte "$(seg 2)" $(($(stat -c %s "$(seg 2)") - 3))
expect_status 4 pq check
expect_stderr_contains "pqvault: check: segments/0000000000000002: segment block 0 failed authentication"
st=0
pq get big -o "$T/o1" >/dev/null 2>&1 || st=$?
st2=0
pq get small -o "$T/o2" >/dev/null 2>&1 || st2=$?
check_ok "segment block flipped: get big exits 4, get small 0 ($st, $st2)" \
    test "$st" -eq 4 -a "$st2" -eq 0 -a ! -e "$T/o1"
expect_status 4 pq list
expect_stdout_contains "small"
restore
rm -f "$T/o1" "$T/o2"

# ---- a flipped byte in a segment's head: the chain does not verify ----
flip_byte "$(seg 2)" 100
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
# no segment names (as an interrupted add leaves).
expect_status 0 pq rm small
head -c 300 /dev/urandom >"$V/packs/ab/ab0102030405060708090a0b0c0d0e0f"
expect_status 0 pq check
expect_stdout_contains "entries: 1"
expect_stdout_contains "leftovers: 2"
expect_stderr_contains "no entry refers to: what interrupted commands leave, not damage"
expect_stderr_contains "(check --verbose lists them)"
expect_one_error_line
expect_status 0 pq check --verbose
expect_stderr_contains "a pack no entry refers to (gc removes it)"
expect_status 0 pq gc
expect_stdout_contains "removed: 2 (leftovers: 2, temporaries: 0)"
expect_status 0 pq check --read-data
expect_stdout_contains "packs: 2"
expect_stdout_contains "leftovers: 0, temporaries: 0"
expect_status 0 pq get big -o "$T/big.out"
check_ok "big intact after gc" same_file "$T/big" "$T/big.out"

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
