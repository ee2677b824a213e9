# tests/cli/nohome.sh: commands do not fail for want of a home (issue 17
# item 6).  The local state (${XDG_STATE_HOME:-$HOME/.local/state}/pqvault)
# is a defence, not a precondition: a user whose home is missing or
# read-only (nobody, a service account, a container) can init, add, list,
# get and rm; that the state cannot be kept is said once per command, on
# stderr, naming XDG_STATE_HOME and that rollbacks are not detected.  A
# state directory that can be read but not written still detects a
# rollback.  --state-dir DIR and $PQVAULT_STATE_DIR choose another place.
. "$(dirname "$0")/lib.sh"

NOTE="a rollback of the vault to an older copy is not detected without it (set XDG_STATE_HOME, PQVAULT_STATE_DIR or --state-dir to a directory you can write)"
# warned_once: the last stderr holds the warning exactly once.
warned_once() {
    n=$(grep -c "warning: cannot keep the local state" "$ERR")
    if [ "$n" -eq 1 ] && grep -qF -- "$NOTE" "$ERR"; then
        ok "$LAST: the state that cannot be kept is said once"
    else
        fail "$LAST: $n warnings about the local state, expected 1"
    fi
}
not_warned() {
    if grep -q "cannot keep the local state" "$ERR"; then fail "$LAST: warned"; else
        ok "$LAST: no warning"; fi
}
printf 'one\n' >"$T/a"
printf 'two\n' >"$T/b"

# ---- a state directory that cannot be made (works as root too) ----
unset XDG_STATE_HOME
for home in /dev/null /dev/null/sub; do
    export HOME=$home
    rm -rf "$V"
    expect_status 0 pq -q init --kdf "$KDF"
    warned_once
    expect_status 0 pq add "$T/a"
    warned_once
    expect_status 0 pq list
    expect_stdout_contains "a"
    warned_once
    expect_status 0 pq get a -o -
    expect_stdout_contains "one"
    warned_once
    expect_status 0 pq rm a
    warned_once
    expect_status 0 pq check
    warned_once
    # accept is the one command that is about the local state: it fails.
    expect_status 1 pq accept
done
export HOME=$T/home
mkdir -p "$HOME"

# ---- --state-dir and PQVAULT_STATE_DIR ----
rm -rf "$V"
expect_status 0 pq -q --state-dir "$T/sd1" init --kdf "$KDF"
ID=$(sed -n 's/^vault-id //p' "$V/config")
# state_in DIR: DIR holds this vault's state (a file VAULTID-LOCATION).
state_in() { for f in "$1/$ID"-*; do case $f in *.lock) ;; *) [ -f "$f" ] && return 0 ;; esac; done; return 1; }
check_ok "--state-dir: the state is kept there" state_in "$T/sd1"
expect_status 0 env PQVAULT_STATE_DIR="$T/sd2" "$PQV" -v "$V" --passphrase-file "$PF" list
expect_stderr_contains "first use of this vault on this machine"
check_ok "PQVAULT_STATE_DIR: the state is kept there" state_in "$T/sd2"
expect_status 0 env PQVAULT_STATE_DIR="$T/sd2" "$PQV" -v "$V" --passphrase-file "$PF" --state-dir "$T/sd3" list
check_ok "--state-dir wins over PQVAULT_STATE_DIR" state_in "$T/sd3"
expect_status 0 sh -c 'cd "$1" && "$2" -v "$3" --passphrase-file "$4" --state-dir rel list' sh \
    "$T" "$PQV" "$V" "$PF"
check_ok "a relative --state-dir is below the working directory" state_in "$T/rel"
# The state there detects a rollback like the default one.
cp -a "$V" "$T/old"
expect_status 0 pq --state-dir "$T/sd1" add "$T/b"
rm -rf "$V" && cp -a "$T/old" "$V"
expect_status 4 pq --state-dir "$T/sd1" list
expect_stderr_contains "rollback"
expect_status 0 pq --state-dir "$T/sd1" accept

# ---- as nobody: a home that does not exist, a state directory not ours ----
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1; then
    echo "# SKIP - the other-user cases need root and setpriv"
    finish
fi
NB=$(mktemp -d /tmp/pqv-nohome.XXXXXX)
trap 'rm -rf "$NB"; cleanup' EXIT
chmod 755 "$NB"
cp "$PQV" "$NB/pqvault"
chmod 755 "$NB/pqvault"
mkdir "$NB/work" "$NB/ro"
chown 65534:65534 "$NB/work"
printf 'nobody pass\n' >"$NB/work/pass"
printf 'data\n' >"$NB/work/f"
chown 65534:65534 "$NB/work/pass" "$NB/work/f"
nb() { setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_STATE_HOME HOME=/nonexistent "$@"; }
NV=$NB/work/vault
nbq() { nb "$NB/pqvault" -v "$NV" --passphrase-file "$NB/work/pass" "$@"; }
check_ok "/nonexistent does not exist" [ ! -e /nonexistent ]
# (The recovery code into a file of nobody's own: another user's is refused.)
: >"$NB/work/code"
chown 65534:65534 "$NB/work/code"
LAST="nobody: init with HOME=/nonexistent"
nbq -q init --kdf "$KDF" >"$NB/work/code" 2>"$ERR"
check_ok "$LAST: exit 0" [ $? -eq 0 ]
warned_once
expect_stderr_contains "/nonexistent"
expect_status 0 nbq add "$NB/work/f"
warned_once
expect_status 0 nbq list
expect_stdout_contains "f"
warned_once
expect_status 0 nbq get f -o -
expect_stdout_contains "data"
warned_once
expect_status 0 nbq rm f
warned_once
check_ok "nothing was made at /nonexistent" [ ! -e /nonexistent ]
# A state directory of another user (root's, 0755): read-only to nobody.
expect_status 0 nb XDG_STATE_HOME="$NB/ro" "$NB/pqvault" -v "$NV" --passphrase-file "$NB/work/pass" add "$NB/work/f"
warned_once
# A state that can be read but not written: a rollback is still refused.
SD=$NB/work/state
expect_status 0 nbq --state-dir "$SD" list
not_warned
cp -a "$NV" "$NB/work/old"
expect_status 0 nbq --state-dir "$SD" rm f
cp -a "$NV" "$NB/work/new"
chmod 0555 "$SD"
chmod 0444 "$SD"/*
expect_status 0 nbq --state-dir "$SD" list
not_warned
rm -rf "$NV" && cp -a "$NB/work/old" "$NV" && chown -R 65534:65534 "$NV"
expect_status 4 nbq --state-dir "$SD" list
expect_stderr_contains "rollback"
# A newer epoch than the read-only state: the command goes on, said once.
rm -rf "$NV" && mv "$NB/work/new" "$NV"
expect_status 0 nbq --state-dir "$SD" add --name g "$NB/work/f"
warned_once
# (and again by the next command: epoch 6 is still newer than the state.)
expect_status 0 nbq --state-dir "$SD" list
warned_once
finish
