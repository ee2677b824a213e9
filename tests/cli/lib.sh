# tests/cli/lib.sh: helpers for the CLI integration tests (POSIX sh).
# Sourced by every tests/cli/*.sh (which the runner starts from the project
# root with PQV_BIN set).  Each test file gets a fresh temporary directory
# $T (removed on exit) with a vault location $V and a passphrase file $PF.
#
#   expect_status N CMD...        run CMD (stdout in $OUT, stderr in $ERR),
#                                 report ok/FAIL on its exit status
#   expect_stderr_contains STR    the last command's stderr contains STR
#   expect_stdout_contains STR    the last command's stdout contains STR
#   expect_one_error_line         the last stderr is exactly one line
#   pq ARGS...                    pqvault -v $V --passphrase-file $PF ARGS
#   pqn ARGS...                   pqvault -v $V ARGS (no passphrase source)
#   check_ok COND DESC            report ok/FAIL on "test COND" style commands

set -u
[ "$(basename -- "$0")" = lib.sh ] && exit 0   # run directly: nothing to test
PQV=${PQV_BIN:-$PWD/build/pqvault}
# The test build of the program (test hooks compiled in: PQVAULT_TEST_FAULT,
# PQVAULT_TEST_KILL_AT), for the scripts that inject faults or kill points.
PQV_TEST=${PQV_TEST_BIN:-$(dirname "$PQV")/pqvault-test}
if [ ! -x "$PQV" ]; then
    echo "FAIL - pqvault binary not found at $PQV"
    exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/pqvcli.XXXXXX") || exit 1
cleanup() {
    [ -n "${BG_PIDS:-}" ] && kill $BG_PIDS 2>/dev/null
    chmod -R u+rwx "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
exec </dev/null
unset PQVAULT_DIR PQVAULT_KEYFILE PQVAULT_PASSPHRASE PQVAULT_NEW_PASSPHRASE \
    PQVAULT_RECOVERY_CODE XDG_DATA_HOME
# This machine's memory of the vaults (epochs seen: rollback detection),
# private to the test.
export XDG_STATE_HOME="$T/state"
V=$T/vault
PF=$T/passphrase
printf 'correct horse battery\n' >"$PF"
KDF="t=1,m=256,p=1"
OUT=$T/stdout
ERR=$T/stderr
FAILS=0
BG_PIDS=

ok() { echo "ok - $*"; }
fail() {
    echo "FAIL - $*"
    FAILS=$((FAILS + 1))
    if [ -s "$ERR" ]; then sed -n '1,5s/^/#   stderr: /p' "$ERR"; fi
}

pq() { "$PQV" -v "$V" --passphrase-file "$PF" "$@"; }
pqn() { "$PQV" -v "$V" "$@"; }
# notty CMD...: run CMD without a controlling terminal.
notty() { setsid -w "$@"; }

# Describe a command for ok/FAIL lines (short).
desc() {
    d=$(printf '%s ' "$@" | tr '\n' ' ' | sed -e "s|$T|\$T|g" -e "s|$PQV|pqvault|g" \
        -e 's/ -v \$T\/vault//' -e 's/ --passphrase-file \$T\/passphrase//')
    printf '%.110s' "$d"
}

LAST=""
expect_status() {
    want=$1
    shift
    LAST=$(desc "$@")
    "$@" >"$OUT" 2>"$ERR"
    got=$?
    if [ "$got" -eq "$want" ]; then
        ok "$LAST: exit $want"
    else
        fail "$LAST: exit $got, expected $want"
    fi
}

expect_stderr_contains() {
    if grep -qF -- "$1" "$ERR"; then
        ok "$LAST: stderr mentions '$1'"
    else
        fail "$LAST: stderr lacks '$1'"
    fi
}

expect_stdout_contains() {
    if grep -qF -- "$1" "$OUT"; then
        ok "$LAST: stdout mentions '$1'"
    else
        fail "$LAST: stdout lacks '$1'"
        sed -n '1,5s/^/#   stdout: /p' "$OUT"
    fi
}

expect_one_error_line() {
    n=$(wc -l <"$ERR")
    if [ "$n" -eq 1 ] && grep -q '^pqvault: ' "$ERR"; then
        ok "$LAST: one error line"
    else
        fail "$LAST: $n stderr lines, expected one 'pqvault: ...' line"
    fi
}

expect_empty_stdout() {
    if [ ! -s "$OUT" ]; then ok "$LAST: stdout empty"; else fail "$LAST: stdout not empty"; fi
}

# check_ok DESC CMD...: ok if CMD succeeds.
check_ok() {
    d=$1
    shift
    if "$@"; then ok "$d"; else fail "$d"; fi
}

# same_file A B: byte-for-byte equal.
same_file() { cmp -s -- "$1" "$2"; }

# stat_sig PATH: mode and mtime (seconds) of PATH.
stat_sig() { stat -c '%a %Y' -- "$1"; }

# init_vault [ARGS...]: a fresh vault at $V with cheap Argon2 parameters.
init_vault() {
    rm -rf "$V"
    if ! pq -q init --kdf "$KDF" "$@" >"$T/recovery" 2>"$ERR"; then
        fail "init_vault: pqvault init failed"
        return 1
    fi
}

# flip_byte FILE OFFSET: invert one byte of FILE in place.
flip_byte() {
    python3 - "$1" "$2" <<'EOF'
import sys
p, off = sys.argv[1], int(sys.argv[2])
with open(p, 'r+b') as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0x01]))
EOF
}

# first_file DIR: the first regular file under DIR (sorted).
first_file() { find "$1" -type f ! -name '*.tmp*' | sort | head -n 1; }

finish() {
    [ "$FAILS" -eq 0 ]
    exit $?
}
