# tests/cli/tamper.sh: check on a healthy vault; a flipped byte in an
# object, a record, the config and the key file; missing objects; gc of
# temporaries and orphans.
. "$(dirname "$0")/lib.sh"

init_vault || finish
head -c 5000000 /dev/urandom >"$T/big"
printf 'small\n' >"$T/small"
expect_status 0 pq add "$T/big" --name big
expect_status 0 pq add "$T/small" --name small
expect_status 0 pq check
expect_stdout_contains "records: 2, objects: 3"
expect_stdout_contains "damaged: 0, missing: 0, orphans: 0, temporaries: 0"
expect_status 0 pq check --read-data
expect_stdout_contains "damaged: 0"

cp -a "$V" "$T/pristine"
restore() { rm -rf "$V" && cp -a "$T/pristine" "$V"; }

# ---- a flipped byte in every object file in turn ----
n=0
for obj in $(find "$V/objects" -type f | sort); do
    n=$((n + 1))
    size=$(stat -c %s "$obj")
    flip_byte "$obj" $((size / 2))
    expect_status 4 pq check --read-data
    expect_stderr_contains "pqvault: check: "
    expect_stdout_contains "damaged: 1"
    rm -rf "$T/out"
    mkdir -p "$T/out"
    st=0
    pq get big -o "$T/out/big" 2>"$ERR" || st=$?
    pq get small -o "$T/out/small" 2>>"$ERR" || st=$?
    check_ok "object $n flipped: get fails with exit 4 (got $st)" test "$st" -eq 4
    check_ok "object $n flipped: no damaged output left" \
        test "$(find "$T/out" -type f | wc -l)" -eq 1
    check_ok "object $n flipped: no temporary left" test -z "$(find "$T/out" -name '*tmp*')"
    restore
done
check_ok "three objects were tampered with" test "$n" -eq 3

# ---- a flipped byte in a record ----
rec=$(first_file "$V/records")
flip_byte "$rec" 40
expect_status 4 pq check
expect_stderr_contains "pqvault: check: "
st=0
pq get big -o "$T/o1" >/dev/null 2>&1 || st=$?
st2=0
pq get small -o "$T/o2" >/dev/null 2>&1 || st2=$?
check_ok "record flipped: one of the two gets fails with exit 4 ($st, $st2)" \
    sh -c '[ "$1" -eq 4 -a "$2" -eq 0 ] || [ "$1" -eq 0 -a "$2" -eq 4 ]' sh "$st" "$st2"
expect_status 4 pq list
restore
rm -f "$T/o1" "$T/o2"

# ---- a missing object ----
rm -f "$(first_file "$V/objects")"
expect_status 4 pq check
expect_stdout_contains "missing: 1"
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

# ---- gc: temporaries and orphans ----
mkdir -p "$V/objects/ab"
tmp="$V/objects/ab/abababababababababababababababababababababababababababababababab.tmp-1234"
printf 'junk' >"$tmp"
expect_status 0 pq check
expect_stdout_contains "temporaries: 1"
expect_status 0 pqn info
expect_stdout_contains "temporaries:     1"
expect_status 0 pq gc
expect_stdout_contains "removed: 1"
check_ok "gc removed the temporary file" test ! -e "$tmp"
# an orphan: an object no record names (a record removed behind our back)
cp -a "$V/records" "$T/records.bak"
rm -f "$(first_file "$V/records")"
expect_status 0 pq check
expect_stdout_contains "records: 1"
orphans=$(sed -n 's/.*orphans: \([0-9]*\).*/\1/p' "$OUT")
check_ok "check counts orphans ($orphans)" test "${orphans:-0}" -ge 1
expect_status 0 pq gc
expect_status 0 pq check --read-data
expect_stdout_contains "orphans: 0, temporaries: 0"

finish
