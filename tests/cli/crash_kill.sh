# tests/cli/crash_kill.sh: the real binary killed with SIGKILL at every
# durability call (PQVAULT_TEST_KILL_AT=N, a hook of the test build only:
# src/util/io.c, build/pqvault-test) of add, add --force, add from a pipe, rm, passwd and
# get, for N = 1, 2, ... until the command completes.  After each kill:
# check exits 0, the earlier files read back byte-exact, the file being
# written is all or nothing (old or new), the key file unlocks with the old
# or the new passphrase; a killed get leaves nothing at its destination
# unless it completed.
. "$(dirname "$0")/lib.sh"
PQV=$PQV_TEST

init_vault || finish
head -c 3000 /dev/urandom >"$T/a"
head -c 70000 /dev/urandom >"$T/old"
head -c 90000 /dev/urandom >"$T/new"
head -c 5000 /dev/urandom >"$T/replacement"
expect_status 0 pq add "$T/a" --name a
expect_status 0 pq add "$T/old" --name old
printf 'new passphrase\n' >"$T/newpass"

TOTAL_POINTS=0
# verify_after NAME OLDFILE NEWFILE: the common checks after one run
# (OLDFILE/NEWFILE "-": the name may be absent in that state).
verify_after() {
    vname=$1 vold=$2 vnew=$3
    bad=""
    "$PQV" -v "$V" --passphrase-file "$PF" check >"$T/check.out" 2>"$T/check.err" ||
        "$PQV" -v "$V" --passphrase-file "$T/newpass" check >"$T/check.out" 2>"$T/check.err" ||
        bad="$bad check-failed"
    pf=$PF
    "$PQV" -v "$V" --passphrase-file "$PF" get a -o - >"$T/got.a" 2>/dev/null || pf=$T/newpass
    "$PQV" -v "$V" --passphrase-file "$pf" get a -o - >"$T/got.a" 2>/dev/null || bad="$bad a-unreadable"
    cmp -s "$T/got.a" "$T/a" || bad="$bad a-differs"
    if "$PQV" -v "$V" --passphrase-file "$pf" get "$vname" -o - >"$T/got.n" 2>"$T/got.err"; then
        if ! { [ "$vold" != - ] && cmp -s "$T/got.n" "$vold"; } &&
            ! { [ "$vnew" != - ] && cmp -s "$T/got.n" "$vnew"; }; then
            bad="$bad $vname-neither-old-nor-new"
        fi
    else
        grep -q "not found" "$T/got.err" || bad="$bad $vname-unreadable"
        [ "$vold" = - ] || [ "$vnew" = - ] || bad="$bad $vname-absent"
    fi
    echo "$bad"
}

# kill_loop DESC NAME OLD NEW CMD...: run CMD with the kill point at 1, 2,
# ... until it completes; restore the vault between runs with RESET.
kill_loop() {
    desc=$1 name=$2 old=$3 new=$4
    shift 4
    n=1 points=0 problems=""
    rm -rf "$T/vault.saved" "$T/state.saved"
    cp -a "$V" "$T/vault.saved"
    # The local state (last epoch seen) goes back with the vault: a vault
    # put back alone would rightly be refused as a rollback.
    mkdir -p "$T/state"
    cp -a "$T/state" "$T/state.saved"
    while [ "$n" -le 60 ]; do
        PQVAULT_TEST_KILL_AT=$n "$@" >/dev/null 2>"$T/kill.err" </dev/null
        st=$?
        if [ "$st" -eq 137 ]; then
            points=$((points + 1))
            res=$(verify_after "$name" "$old" "$new")
            [ -n "$res" ] && problems="$problems [kill at $n:$res]"
        elif [ "$st" -eq 0 ]; then
            res=$(verify_after "$name" "$new" "$new")
            [ -n "$res" ] && problems="$problems [completed:$res]"
            break
        else
            problems="$problems [kill at $n: exit $st: $(head -c 200 "$T/kill.err")]"
            break
        fi
        rm -rf "$V" "$T/state"
        cp -a "$T/vault.saved" "$V"
        cp -a "$T/state.saved" "$T/state"
        n=$((n + 1))
    done
    TOTAL_POINTS=$((TOTAL_POINTS + points))
    if [ -z "$problems" ] && [ "$points" -ge 2 ]; then
        ok "$desc killed at each of $points durability calls: check passes, files intact, all or nothing"
    else
        fail "$desc ($points kill points):$problems"
    fi
}

# Runs that complete leave the new state: start each loop from the state
# the previous one finished in.
kill_loop "add" new - "$T/new" pq add "$T/new" --name new
kill_loop "add --force" old "$T/old" "$T/replacement" pq add --force "$T/replacement" --name old
cat "$T/new" >"$T/piped.src"
kill_loop "add from a pipe" piped - "$T/piped.src" sh -c '"$0" -v "$1" --passphrase-file "$2" add - --name piped <"$3"' "$PQV" "$V" "$PF" "$T/piped.src"
kill_loop "rm" new "$T/new" - pq rm new
kill_loop "passwd" a "$T/a" "$T/a" pqn --passphrase-file "$PF" passwd --new-passphrase-file "$T/newpass" --kdf "$KDF"

# get: nothing at the destination unless it completed (a hidden temporary
# may remain).
n=1 points=0 problems=""
pf=$PF
pq list >/dev/null 2>&1 || pf=$T/newpass
while [ "$n" -le 40 ]; do
    rm -rf "$T/out"
    PQVAULT_TEST_KILL_AT=$n "$PQV" -v "$V" --passphrase-file "$pf" get old -o "$T/out/sub/old" >/dev/null 2>"$T/kill.err"
    st=$?
    if [ "$st" -eq 137 ]; then
        points=$((points + 1))
        if [ -e "$T/out/sub/old" ] && ! cmp -s "$T/out/sub/old" "$T/replacement"; then
            problems="$problems [kill at $n: partial file at the destination]"
        fi
    elif [ "$st" -eq 0 ]; then
        cmp -s "$T/out/sub/old" "$T/replacement" || problems="$problems [completed: wrong content]"
        break
    else
        problems="$problems [kill at $n: exit $st]"
        break
    fi
    n=$((n + 1))
done
TOTAL_POINTS=$((TOTAL_POINTS + points))
if [ -z "$problems" ] && [ "$points" -ge 2 ]; then
    ok "get killed at each of $points durability calls: never a partial file at the destination"
else
    fail "get ($points kill points):$problems"
fi
echo "# crash_kill: $TOTAL_POINTS kill points in all"
finish
