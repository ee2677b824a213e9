# tests/cli/lock.sh: a second writer gets exit 6 naming the holder; readers
# need no lock; --wait waits; a lock held by a killed process is free.
. "$(dirname "$0")/lib.sh"

init_vault || finish
printf 'x\n' >"$T/x"
expect_status 0 pq add "$T/x" --name x

# Hold the lock: an add from a slow pipe.  $! is the pid of pqvault (the
# last command of the pipeline).
(sleep 4; echo slow) | "$PQV" -v "$V" --passphrase-file "$PF" add - --name slow >/dev/null 2>"$T/holder.err" &
holder=$!
BG_PIDS="$holder"
# wait until the holder has the lock (a second add is refused)
# Give it time to take the lock (probing with another writer could make
# the holder itself fail); it then blocks reading its standard input.
sleep 1.5
check_ok "the holder is running" kill -0 "$holder"
expect_status 6 pq add "$T/x" --name y
expect_stderr_contains "pqvault: add: vault is locked by another writer (pid $holder)"
expect_one_error_line
expect_status 6 pq rm x
expect_status 6 pq gc
expect_status 6 pqn --passphrase-file "$PF" passwd --slot 1 --new-passphrase-file "$PF" --kdf "$KDF"
# readers take no lock
expect_status 0 pq list
expect_stdout_contains "x"
expect_status 0 pq get x -o -
expect_status 0 pq check
expect_status 0 pqn info
# --wait blocks until the holder is done
expect_status 0 pq --wait add "$T/x" --name waited
wait "$holder"
hs=$?
check_ok "the holder finished (status $hs)" test "$hs" -eq 0
expect_status 0 pq get slow -o -
expect_stdout_contains "slow"

# A holder killed with SIGKILL leaves a free lock.
# (stdin from a FIFO this shell keeps open, so nothing is left behind)
mkfifo "$T/fifo"
"$PQV" -v "$V" --passphrase-file "$PF" add - --name killed <"$T/fifo" >/dev/null 2>&1 &
holder=$!
BG_PIDS="$holder"
exec 3>"$T/fifo"
printf 'partial data' >&3
# Give it time to take the lock (probing with another writer could make
# the holder itself fail); it then blocks reading its standard input.
sleep 1.5
check_ok "the holder is running" kill -0 "$holder"
expect_status 6 pq add "$T/x" --name z
expect_stderr_contains "(pid $holder)"
kill -KILL "$holder"
wait "$holder" 2>/dev/null
exec 3>&-
BG_PIDS=
expect_status 0 pq add "$T/x" --name z
expect_status 1 pq get killed -o -
expect_stderr_contains "not found"
expect_status 0 pq gc
expect_status 0 pq check
expect_stdout_contains "temporaries: 0"

finish
