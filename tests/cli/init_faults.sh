# tests/cli/init_faults.sh: a failed init leaves nothing behind, or only
# what a rerun of init completes (issue 17 item 7).  Before, a failure after
# the key file left it and segments/ without a config: every command said
# "no vault" and init itself "key file already exists".  Now init removes
# what it created when it fails (key file, segment 1, local state, inbox/,
# the directories it made), and a rerun on a directory holding only what an
# init writes before its config (left by a kill, or by a removal that failed
# too) starts over; anything more of a vault is refused.  With the test
# build: EIO at every I/O operation of init in turn (once, and from then on),
# and SIGKILL at every durability call.
. "$(dirname "$0")/lib.sh"
PQV=$PQV_TEST

V=$T/parent/sub/vault
S=$XDG_STATE_HOME/pqvault
state_files() { find "$S" -type f 2>/dev/null | wc -l; }
# a_vault DESC: $V is a working vault.
a_vault() {
    if pq list >/dev/null 2>"$T/l.err" && pq check >/dev/null 2>>"$T/l.err"; then
        ok "$1: a working vault"
    else
        fail "$1: not a working vault ($(head -n 1 "$T/l.err"))"
    fi
}
# rerun DESC: init without a fault completes.
rerun() {
    LAST="$1: init again"
    pq -q init --kdf "$KDF" >"$T/code" 2>"$ERR"
    st=$?
    check_ok "$LAST: exit 0 ($st)" [ "$st" -eq 0 ]
    a_vault "$1, init again"
}
# reset: no vault, no state, no parents.
reset() { rm -rf "$T/parent" "$XDG_STATE_HOME"; }

# ---- EIO at the N-th I/O operation, once ----
op=0 clean=0 failed=0
while [ "$op" -lt 100 ]; do
    op=$((op + 1))
    reset
    LAST="init with any:$op:EIO"
    PQVAULT_TEST_FAULT=any:$op:EIO pq -q init --kdf "$KDF" >"$T/code" 2>"$ERR"
    st=$?
    if [ "$st" -eq 0 ] && [ ! -s "$ERR" ]; then
        break # past the last operation: nothing failed
    fi
    if [ "$st" -eq 0 ] && grep -q '^pqvault: init: reserve: warning: not made' "$ERR"; then
        # Only the reserve failed (made last, after the config): a
        # warning, the vault made, without a reserve.
        ok "$LAST: only the reserve failed: a warning"
        a_vault "$LAST"
        continue
    fi
    if [ "$st" -eq 0 ]; then
        # Only the local state failed: a warning, the vault made.
        expect_stderr_contains "warning: cannot keep the local state"
        a_vault "$LAST"
        continue
    fi
    failed=$((failed + 1))
    check_ok "$LAST: exit 1 ($st)" [ "$st" -eq 1 ]
    expect_one_error_line
    check_ok "$LAST: no config" [ ! -e "$V/config" ]
    if [ ! -e "$T/parent" ] && [ "$(state_files)" -eq 0 ]; then
        clean=$((clean + 1))
    else
        fail "$LAST: left $(cd "$T" && find parent "$S" 2>/dev/null | tr '\n' ' ')"
    fi
    rerun "$LAST"
done
check_ok "init's $((op - 1)) I/O operations each failed in turn ($failed failures, each leaving nothing: $clean)" \
    test "$op" -gt 10 -a "$op" -lt 100 -a "$clean" -eq "$failed"

# ---- EIO from the N-th operation on (the removals fail too) ----
k=1
while [ "$k" -lt "$op" ]; do
    reset
    LAST="init with any:$k+:EIO"
    PQVAULT_TEST_FAULT=any:$k+:EIO pq -q init --kdf "$KDF" >"$T/code" 2>"$ERR"
    st=$?
    if [ "$st" -eq 0 ] && grep -q '^pqvault: init: reserve: warning: not made' "$ERR"; then
        ok "$LAST: only the reserve failed (made after the config): a warning"
        a_vault "$LAST"
        k=$((k + 1))
        continue
    fi
    check_ok "$LAST: exit 1 ($st)" [ "$st" -eq 1 ]
    if [ -e "$V/config" ]; then
        # Even the config's removal failed: said, and the vault works.
        expect_stderr_contains "and the vault made could not be removed again"
        a_vault "$LAST"
    else
        rerun "$LAST"
    fi
    k=$((k + 1))
done

# ---- killed at every durability call ----
k=0
while :; do
    k=$((k + 1))
    reset
    PQVAULT_TEST_KILL_AT=$k pq -q init --kdf "$KDF" >"$T/code" 2>"$ERR"
    st=$?
    [ "$st" -ne 137 ] && break
    if [ -e "$V/config" ]; then
        a_vault "init killed at $k, after its config" # (its last step: a whole vault)
    else
        rerun "init killed at $k"
    fi
    [ "$k" -lt 100 ] || break
done
check_ok "init ran past its last kill point ($((k - 1)) points, exit $st)" test "$st" -eq 0 -a "$k" -gt 3

# ---- what is not an init's leftover is refused ----
reset
expect_status 0 pq -q init --kdf "$KDF"
printf 'data\n' >"$T/f"
expect_status 0 pq add "$T/f"
rm "$V/config"
expect_status 1 pq -q init --kdf "$KDF"
expect_stderr_contains "is here but no config: the files of a vault"
check_ok "the key file of the vault without config is kept" [ -f "$V/keyfile" ]
check_ok "its segments are kept" [ -f "$V/segments/0000000000000002" ]
# A key file given with --keyfile that exists is another vault's, perhaps.
reset
mkdir -p "$T/keys"
printf 'not ours\n' >"$T/keys/kf"
expect_status 1 pq --keyfile "$T/keys/kf" -q init --kdf "$KDF"
expect_stderr_contains "key file already exists (if a failed init left it, remove it)"
check_ok "the existing key file is untouched" [ "$(cat "$T/keys/kf")" = "not ours" ]
check_ok "nothing made for the refused init" [ ! -e "$T/parent" ]
# An init into an existing directory that fails leaves the directory.
reset
mkdir -p "$V"
printf 'mine\n' >"$V/notes.txt"
PQVAULT_TEST_FAULT=rename:1:EIO pq -q init --kdf "$KDF" >"$T/code" 2>"$ERR"
check_ok "a failed init into an existing directory keeps it and its files" \
    test -f "$V/notes.txt" -a ! -e "$V/keyfile" -a ! -e "$V/config"
finish
