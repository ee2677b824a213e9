# tests/cli/s3_lease.sh: the writer lease of an S3 vault (docs/S3.md): a
# second writer gets exit 6 naming the holder while readers go on; the
# lease is renewed while its holder runs and deleted when it ends; a
# holder killed with SIGKILL on this host leaves a lease the next writer
# (gc too) takes at once; a lease of another host is taken over once
# expired (by polling, and by --wait); a holder stopped past its lease refuses to
# write after another writer took over; an unreadable lease object blocks
# like a lease.  Never sleeps to synchronise: waits poll for a state.
# Skipped without Ceph.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3_lib.sh"

LOCK=/$B/$RUN/lock
printf 'x\n' >"$T/x"
expect_status 0 pqs init --kdf "$KDF"
expect_status 0 pqs add "$T/x" --name x

# lease_exists: the lease object is there.
lease_exists() { [ "$(s3_status GET "$LOCK")" = 200 ]; }
lease_absent() { [ "$(s3_status GET "$LOCK")" = 404 ]; }
# lease_has TEXT: the lease object's body contains TEXT.
lease_has() { s3req GET "$LOCK" && grep -qF -- "$1" "$T/s3body"; }

# A holder: an add that blocks reading its passphrase from a FIFO after it
# took the lease (session order: lock, then unlock).
start_holder() {
    rm -f "$T/pfifo"
    mkfifo "$T/pfifo"
    env "$@" "$PQV" -v "$URL" --passphrase-file "$T/pfifo" add "$T/x" --name held --force \
        >/dev/null 2>"$T/holder.err" &
    holder=$!
    BG_PIDS="$holder"
}

# ---- held: exit 6 naming the holder; readers go on ----
start_holder
wait_until "the holder takes the lease" lease_exists
check_ok "the lease names its holder" lease_has "holder pid $holder on "
expect_status 6 pqs rm x
expect_stderr_contains "pqvault: rm: vault is locked by another writer (pid $holder on "
expect_stderr_contains ", lease expires in "
expect_one_error_line
expect_status 6 pqs add "$T/x" --name y
expect_status 6 pqs gc
expect_status 0 pqs list
expect_stdout_contains "x"
expect_status 0 pqs get x -o -
expect_status 0 pqs check
cat "$PF" >"$T/pfifo"
wait "$holder"
hs=$?
BG_PIDS=
check_ok "the holder finished (status $hs)" test "$hs" -eq 0
check_ok "the lease is deleted when its holder ends" lease_absent
expect_status 0 pqs rm x

# ---- renewed while the holder runs ----
start_holder PQVAULT_S3_LEASE_SECONDS=4
wait_until "the holder takes a 4 s lease" lease_has "duration 4"
wait_until "the lease is renewed twice" lease_has "serial 2"
expect_status 6 pqs add "$T/x" --name y
expect_stderr_contains "(pid $holder on "
cat "$PF" >"$T/pfifo"
wait "$holder"
hs=$?
BG_PIDS=
check_ok "the renewing holder finished (status $hs)" test "$hs" -eq 0
check_ok "the lease is deleted" lease_absent

# ---- a killed holder's lease expires and is taken over ----
# taken_over: a writer gets through (exit 0); exit 6 until then, nothing else.
taken_over() {
    "$PQV" -v "$URL" --passphrase-file "$PF" add "$T/x" --name after-kill --force \
        >"$OUT" 2>"$ERR"
    tk=$?
    [ "$tk" -eq 6 ] || echo "$tk" >"$T/taken"
    [ "$tk" -eq 0 ]
}
# A killed holder on this host: its lease is free at once (its process is
# gone), with no wait for the lease to run out.
start_holder PQVAULT_S3_LEASE_SECONDS=120
wait_until "the holder takes a 120 s lease" lease_has "duration 120"
check_ok "the lease says which process of which boot holds it" lease_has "process "
kill -KILL "$holder"
wait "$holder" 2>/dev/null
BG_PIDS=
check_ok "the dead holder's lease stays" lease_exists
expect_status 0 pqs add "$T/x" --name after-kill --force
check_ok "the new holder deleted its lease" lease_absent
expect_status 0 pqs get after-kill -o -
start_holder PQVAULT_S3_LEASE_SECONDS=120
wait_until "another holder takes a 120 s lease" lease_has "duration 120"
kill -KILL "$holder"
wait "$holder" 2>/dev/null
BG_PIDS=
expect_status 0 pqs gc
check_ok "gc took the dead holder's lease at once" lease_absent

# A lease of another host (or of an older pqvault, which wrote no process
# line) cannot be checked: it is waited for until it expires.
foreign_lease() {
    printf 'pqvault-lease 1\nholder pid 1 on elsewhere\ntoken %s\nduration %s\nserial 0\n%s' \
        00112233445566778899aabbccddeeff "$1" "$2" >"$T/lease"
    s3req PUT "$LOCK" --data-binary "@$T/lease"
}
foreign_lease 3 'process 00000000-0000-0000-0000-000000000000 pid:[1] 1 1
'
expect_status 6 pqs add "$T/x" --name y
expect_stderr_contains "(pid 1 on elsewhere, lease expires in "
expect_stderr_contains "perhaps on another host"
rm -f "$T/taken"
wait_until "the expired lease is taken over" taken_over
check_ok "until then only exit 6 (then 0)" test "$(cat "$T/taken" 2>/dev/null)" = 0
check_ok "the new holder deleted its lease" lease_absent
foreign_lease 2 ''
expect_status 0 pqs --wait add "$T/x" --name waited
check_ok "--wait: the lease is released after" lease_absent
# A planted holder is text, never a format (it once reached printf).
printf 'pqvault-lease 1\nholder %%s%%s%%n%%s%%n\ntoken 00\nduration 2\nserial 0\n' >"$T/lease"
s3req PUT "$LOCK" --data-binary "@$T/lease"
expect_status 6 pqs add "$T/x" --name z
expect_stderr_contains "(%s%s%n%s%n, lease expires in "
s3req DELETE "$LOCK"

# ---- a holder stopped past its lease may not write ----
rm -f "$T/hfifo"
mkfifo "$T/hfifo"
env PQVAULT_S3_LEASE_SECONDS=3 "$LIVE" "$URL" hold <"$T/hfifo" >"$T/hold.out" 2>&1 &
driver=$!
BG_PIDS="$driver"
exec 7>"$T/hfifo"
wait_until "the driver holds the lease" grep -q '^locked' "$T/hold.out"
echo put >&7
wait_until "a put under the lease" grep -q '^put: 0' "$T/hold.out"
kill -STOP "$driver"
rm -f "$T/taken"
wait_until "another writer takes the stalled lease over" taken_over
# A third writer holds the lease now.
start_holder
BG_PIDS="$driver $holder"
wait_until "a new holder takes the lease" lease_has "holder pid $holder on "
kill -CONT "$driver"
echo put >&7
wait_until "the resumed driver answers" grep -q '^put: -9' "$T/hold.out"
check_ok "the resumed driver refuses to write (lease lost)" grep -q 'writer lease lost' "$T/hold.out"
echo quit >&7
exec 7>&-
wait "$driver"
check_ok "the old holder left the new holder's lease alone" lease_has "holder pid $holder on "
cat "$PF" >"$T/pfifo"
wait "$holder"
hs=$?
BG_PIDS=
check_ok "the new holder finished (status $hs)" test "$hs" -eq 0
check_ok "the driver's put under its lease landed" test "$(s3_status GET "/$B/$RUN/held-put-1")" = 200
check_ok "its put after the lease was lost did not" test "$(s3_status GET "/$B/$RUN/held-put-2")" = 404
expect_status 0 pqs check --read-data

# ---- an unreadable lease object ----
printf 'not a lease\n' >"$T/junk"
s3req PUT "$LOCK" --data-binary "@$T/junk"
expect_status 6 pqs add "$T/x" --name z
expect_stderr_contains "locked by another writer (an unreadable lease object, lease expires in "
s3req DELETE "$LOCK"
expect_status 0 pqs add "$T/x" --name z
expect_status 0 pqs list
check_ok "the lease is never listed" sh -c "! grep -qx lock '$OUT'"

finish
