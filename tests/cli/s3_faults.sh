# tests/cli/s3_faults.sh: an S3 vault through the fault proxy
# (tests/s3/faultproxy.py): transient faults (503 SlowDown, 429, 500, a
# reset before or after the request was forwarded, a truncated body, a
# duplicated request) are retried and the commands succeed, the vault stays
# consistent (check --read-data); a create-only put whose reply was lost or
# whose request was duplicated succeeds once (also the segment of an add,
# the commit point: one epoch, not two, and no error); persistent
# faults on packs, on the segment's put and on reads fail cleanly with the
# status and S3 error code in one message, committing nothing and leaving
# no damage.  At most 5 faults per rule set (6 attempts per request), so
# every transient case must succeed.  Skipped without Ceph.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3_lib.sh"

proxy_start "px$$"
pqx() { "$PQV" --s3-endpoint "$PX" -v "$URL" --passphrase-file "$PF" "$@"; }

# faults_seen PATTERN: the proxy applied PATTERN since mark_log.
mark_log() { LOGMARK=$(wc -l <"$PLOG"); }
faults_seen() {
    n=$(tail -n +"$((LOGMARK + 1))" "$PLOG" | grep -v '^#' | grep -cE -- "$1")
    check_ok "$LAST: the proxy applied '$1' ($n times)" test "$n" -gt 0
}
# step RULE DESC: new rules, then the command.
step() {
    rules "$1"
    mark_log
}

expect_status 0 pqs init --kdf "$KDF"
mkdir -p "$T/tree/d"
for i in 1 2 3 4 5 6; do head -c $((i * 20000)) /dev/urandom >"$T/tree/d/f$i"; done
printf 'small\n' >"$T/tree/small"
head -c 9000000 /dev/urandom >"$T/big"
# New data for the adds whose pack or segment puts fail (format 3 stores a
# chunk once: $T/big again would write no pack).
head -c 9000000 /dev/urandom >"$T/big2"
head -c 9000000 /dev/urandom >"$T/big3"

# ---- transient faults: retried, the command succeeds ----
step "action=error status=503 every=3 times=5"
expect_status 0 pqx add "$T/tree" --name t1
faults_seen " 503 error"
step "action=error status=429 every=2 times=5"
expect_status 0 pqx add "$T/big" --name big
faults_seen " 429 error"
step "action=error status=500 every=3 times=5"
expect_status 0 pqx get t1 -o "$T/out1"
faults_seen " 500 error"
check_ok "get through 500s: same tree" diff -r "$T/tree" "$T/out1/t1"
step "action=reset-before every=3 times=5"
expect_status 0 pqx add "$T/tree" --name t2
faults_seen "reset-before"
step "action=reset-after method=PUT every=2 times=5"
expect_status 0 pqx add "$T/tree" --name t3
faults_seen "reset-after"
step "action=truncate method=GET every=2 times=5"
expect_status 0 pqx get big -o "$T/big.out"
faults_seen "truncate"
check_ok "get through truncated bodies: same bytes" same_file "$T/big" "$T/big.out"
step "action=duplicate method=PUT every=2 times=5"
expect_status 0 pqx add "$T/tree" --name t4
faults_seen "duplicate"
step "action=duplicate method=DELETE every=1 times=5"
expect_status 0 pqx rm t4
faults_seen "duplicate"
step "action=reset-after method=DELETE every=1 times=5"
expect_status 0 pqx rm t3
faults_seen "reset-after"
step "action=reset-after method=PUT path=/lock nth=1"
expect_status 0 pqx add "$T/tree/small" --name lease-reply-lost
faults_seen "PUT [^ ]*/lock .*reset-after"
check_ok "the lease is released" test "$(s3_status GET "/$B/$RUN/lock")" = 404

# A renewal whose reply is lost: the retry gets 412, finds its own bytes.
rm -f "$T/pfifo"
mkfifo "$T/pfifo"
step "action=reset-after method=PUT path=/lock every=2 times=4"
env PQVAULT_S3_LEASE_SECONDS=4 "$PQV" --s3-endpoint "$PX" -v "$URL" --passphrase-file "$T/pfifo" \
    add "$T/tree/small" --name renewed >/dev/null 2>"$T/holder.err" &
holder=$!
BG_PIDS=$holder
lease_serial3() { s3req GET "/$B/$RUN/lock" && grep -q '^serial [3-9]' "$T/s3body"; }
wait_until "renewals through lost replies" lease_serial3
cat "$PF" >"$T/pfifo"
wait "$holder"
hs=$?
BG_PIDS=
check_ok "the holder kept its lease through lost replies (status $hs)" test "$hs" -eq 0
LAST="lease renewals"
faults_seen "PUT [^ ]*/lock .*reset-after"

# ---- create-only puts (put_new) under faults ----
step "action=reset-after method=PUT nth=1"
AWS_ENDPOINT_URL=$PX "$LIVE" "$URL/pn" putnew seg1 hello >"$OUT" 2>"$ERR"
LAST="put_new, reply lost"
expect_stdout_contains "putnew: 0"
faults_seen "reset-after"
faults_seen "PUT [^ ]*/seg1 412"
step "action=duplicate method=PUT nth=1"
AWS_ENDPOINT_URL=$PX "$LIVE" "$URL/pn" putnew seg2 hello >"$OUT" 2>"$ERR"
LAST="put_new, request duplicated"
expect_stdout_contains "putnew: 0"
faults_seen "duplicate:first=200"
step "action=reset-after method=PUT nth=1"
AWS_ENDPOINT_URL=$PX "$LIVE" "$URL/pn" putnew seg1 other >"$OUT" 2>"$ERR"
LAST="put_new over other bytes, reply lost"
expect_stdout_contains "putnew: -5"
expect_stdout_contains "already exists"

# The segment of an add (its commit point) put create-only: its reply
# lost, the retry finds its own bytes there (412, then the same bytes):
# one epoch committed, no error.
expect_status 0 pqs check
ep_before=$(sed -n 's/^epoch: \([0-9]*\),.*/\1/p' "$OUT")
step "action=reset-after method=PUT path=/segments/ nth=1"
expect_status 0 pqx add "$T/tree/small" --name segment-reply-lost
faults_seen "PUT [^ ]*/segments/[0-9a-f]* .*reset-after"
faults_seen "PUT [^ ]*/segments/[0-9a-f]* 412"
step "action=duplicate method=PUT path=/segments/ nth=1"
expect_status 0 pqx add "$T/tree/small" --name segment-duplicated
faults_seen "PUT [^ ]*/segments/.*duplicate"
rules ""
expect_status 0 pqs check
check_ok "two adds, two epochs ($ep_before before)" \
    grep -q "^epoch: $((ep_before + 2)), segments: [0-9]*, " "$OUT"
expect_status 0 pqs list segment-reply-lost
expect_status 0 pqs list segment-duplicated

rules ""
expect_status 0 pqs check --read-data
expect_stdout_contains "damaged: 0, missing: 0"

# ---- persistent faults: a clean failure naming status and code ----
step "action=error status=503 from=1"
expect_status 1 pqx list
expect_stderr_contains "HTTP 503 SlowDown"
expect_stderr_contains "(after 6 attempts)"
expect_one_error_line
no_secret
step "action=error status=500 from=1"
expect_status 1 pqx list
expect_stderr_contains "HTTP 500 InternalError"
step "action=error status=429 from=1"
expect_status 1 pqx list
expect_stderr_contains "HTTP 429 SlowDown"
step "action=reset-before from=1"
expect_status 1 pqx list
expect_stderr_contains "(after 6 attempts)"
expect_one_error_line
step "action=error status=503 method=PUT path=/packs/ from=1"
# Data already stored needs no pack: its add is untouched by the faults.
expect_status 0 pqx add "$T/big" --name bigdup
expect_stderr_contains "0 B stored"
expect_status 1 pqx add "$T/big2" --name big2
expect_stderr_contains "/packs/"
expect_stderr_contains "HTTP 503 SlowDown"
expect_stderr_contains "(after 6 attempts)"
expect_one_error_line
check_ok "the failed add released its lease" test "$(s3_status GET "/$B/$RUN/lock")" = 404
# The commit point itself failing: the packs were written, the segment
# cannot be: nothing committed.
step "action=error status=500 method=PUT path=/segments/ from=1"
expect_status 1 pqx add "$T/big3" --name big3
expect_stderr_contains "/segments/"
expect_stderr_contains "HTTP 500 InternalError"
expect_one_error_line
check_ok "the add failed at its commit point released its lease" test "$(s3_status GET "/$B/$RUN/lock")" = 404
step "action=truncate method=GET path=/packs/ from=1"
expect_status 1 pqx get big -o "$T/fail.out"
expect_stderr_contains "/packs/"
expect_stderr_contains "(after 6 attempts)"
check_ok "a failed get leaves no file" test ! -e "$T/fail.out"
step "action=error status=503 method=GET path=/segments/ from=1"
expect_status 1 pqx get big -o "$T/fail.out"
expect_stderr_contains "HTTP 503 SlowDown"
check_ok "a get that cannot read the catalogue leaves no file" test ! -e "$T/fail.out"
rules ""
expect_status 0 pqs list
check_ok "the failed adds committed nothing" sh -c "! grep -qx 'big[23]' '$OUT'"
expect_status 0 pqs check --read-data
expect_stdout_contains "damaged: 0, missing: 0"
expect_status 0 pqs gc
expect_status 0 pqs check --read-data
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0"
expect_status 0 pqs get t2 -o "$T/out2"
check_ok "the vault still holds what was committed" diff -r "$T/tree" "$T/out2/t2"

finish
