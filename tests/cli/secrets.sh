# tests/cli/secrets.sh: secrets stay out of reach of other processes and
# of the output.  A pqvault process blocked reading stdin ("add -") is
# inspected through /proc: (a) $PQVAULT_PASSPHRASE is gone from its
# environment, (b) core dumps are off (RLIMIT_CORE 0; not dumpable, so
# /proc/PID/environ of another user is unreadable too), (c) its argv holds
# no passphrase.  (d) The passphrase appears in no output of failing or
# succeeding commands.
. "$(dirname "$0")/lib.sh"

SECRET_PASS="s3cret-Passphrase-$$"
printf '%s\n' "$SECRET_PASS" >"$PF"
init_vault --kem FrodoKEM-640-SHAKE || finish

# (a)-(c): a writer blocked on a slow stdin, unlocked from the environment.
# feed_past_pipe FD: write more than a pipe holds (64 KiB) to FD, which
# returns only once the reader has read from its standard input: "add -"
# reads it only after unlocking and taking the writer lock, and then
# blocks waiting for the rest.  No polling, no sleeps.
feed_past_pipe() {
    yes 'first part' | head -c 131072 >&"$1"
}
mkfifo "$T/fifo"
PQVAULT_PASSPHRASE="$SECRET_PASS" "$PQV" -v "$V" -q add - --name piped <"$T/fifo" \
    >"$T/bg.out" 2>"$T/bg.err" &
pid=$!
BG_PIDS=$pid
exec 7>"$T/fifo"           # open the writer end: the process starts
feed_past_pipe 7
check_ok "the blocked add holds the writer lock while it reads stdin" \
    sh -c 'ls -l "/proc/$1/fd" | grep -q "$2/lock"' sh "$pid" "$V"
if [ -r "/proc/$pid/environ" ] || [ "$(id -u)" = 0 ]; then
    # /proc/PID/environ shows the process's initial environment block: the
    # variable is unset (children do not inherit it) and its value wiped in
    # place, so at most its name with an empty value remains there.
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q '^PQVAULT_PASSPHRASE=.'; then
        fail "PQVAULT_PASSPHRASE still has a value in the running process's environment"
    else
        ok "PQVAULT_PASSPHRASE wiped from the running process's environment"
    fi
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qF "$SECRET_PASS"; then
        fail "the passphrase is still in /proc/PID/environ"
    else
        ok "the passphrase is not in /proc/PID/environ"
    fi
fi
core=$(awk '/^Max core file size/ { print $5 " " $6 }' "/proc/$pid/limits")
check_ok "core dumps disabled (Max core file size: $core)" test "$core" = "0 0"
# Not dumpable: the kernel then gives a process's /proc/PID files to root
# instead of its user.  As root that tells nothing, so run a second blocked
# pqvault as an unprivileged user (nobody) and look at its files.  That
# user must reach the program and its vault whatever the permissions of
# the checkout (a clone in a private directory, mode 0700, is common): the
# binary is copied into a fresh directory under /tmp that nobody may enter
# and run, and nobody's vault is created in a directory of its own there.
if [ "$(id -u)" != 0 ]; then
    owner=$(stat -c %u "/proc/$pid/environ" 2>/dev/null)
    check_ok "process not dumpable (/proc/PID/environ owned by root, not uid $(id -u))" \
        test "$owner" = 0
else
    NB=$(mktemp -d /tmp/pqv-nobody.XXXXXX)
    cp "$PQV" "$NB/pqvault"
    chmod 755 "$NB" "$NB/pqvault"
    mkdir "$NB/home"
    chown 65534:65534 "$NB/home"
    chmod 700 "$NB/home"
    mkfifo "$NB/fifo"
    # nobody keeps its local state (last epoch seen) in its own home.
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env XDG_STATE_HOME="$NB/home/state" "$@"; }
    if ! as_nobody "$NB/pqvault" --version >/dev/null 2>"$ERR"; then
        fail "nobody cannot run a copy of the program in $NB (is /tmp mounted noexec?)"
    elif ! as_nobody env PQVAULT_PASSPHRASE=nobody-pass "$NB/pqvault" -v "$NB/home/vault" -q \
        init --kdf "$KDF" >/dev/null 2>"$ERR"; then
        fail "nobody cannot create a vault in $NB/home"
    else
        # setpriv, env and pqvault exec each other: one process, $!.
        setpriv --reuid=65534 --regid=65534 --clear-groups \
            env XDG_STATE_HOME="$NB/home/state" PQVAULT_PASSPHRASE=nobody-pass "$NB/pqvault" -v "$NB/home/vault" -q \
            add - --name x <"$NB/fifo" >/dev/null 2>&1 &
        npid=$!
        exec 8>"$NB/fifo"
        feed_past_pipe 8
        owner=$(stat -c %u "/proc/$npid/environ" 2>/dev/null)
        puid=$(awk '/^Uid:/ { print $2 }' "/proc/$npid/status" 2>/dev/null)
        check_ok "process not dumpable: running as uid $puid, its /proc files belong to uid $owner" \
            test "$puid" = 65534 -a "$owner" = 0
        exec 8>&-
        wait $npid
        st=$?
        check_ok "nobody's blocked add completed (exit $st)" test "$st" -eq 0
    fi
    rm -rf "$NB"
fi
if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$SECRET_PASS"; then
    fail "the passphrase is in argv"
else
    ok "no passphrase in argv ($(tr '\0' ' ' <"/proc/$pid/cmdline" | sed "s|$T|\$T|g"))"
fi
printf 'second part\n' >&7
exec 7>&-
wait $pid
st=$?
BG_PIDS=
check_ok "the blocked add completed (exit $st)" test "$st" -eq 0
expect_status 0 pq get piped -o -
expect_stdout_contains "second part"

# (d): the passphrase never appears in any output.
leaks=0
scan() {
    if cat "$OUT" "$ERR" 2>/dev/null | grep -qF -- "$SECRET_PASS"; then
        leaks=$((leaks + 1))
        fail "passphrase printed by: $*"
    fi
}
printf 'wrong-%s\n' "$SECRET_PASS" >"$T/wrong"
for args in "list" "check --read-data" "info" "get nosuch -o $T/x" "add $T/nonexistent" \
    "get piped -o -" "rm nosuch" "passwd --slot 2" "recover --recovery-file $T/wrong"; do
    pq $args >"$OUT" 2>"$ERR" </dev/null
    scan pq $args
    "$PQV" -v "$V" --passphrase-file "$T/wrong" $args >"$OUT" 2>"$ERR" </dev/null
    scan "wrong passphrase" $args
    PQVAULT_PASSPHRASE="wrong-$SECRET_PASS" "$PQV" -v "$V" $args >"$OUT" 2>"$ERR" </dev/null
    scan "wrong PQVAULT_PASSPHRASE" $args
done
"$PQV" -v "$V" --passphrase-command "echo $SECRET_PASS; exit 3" list >"$OUT" 2>"$ERR"
scan "failing --passphrase-command"
"$PQV" -v "$V" --passphrase-fd 9 list 9<"$T/wrong" >"$OUT" 2>"$ERR"
scan "--passphrase-fd with a wrong passphrase"
check_ok "the passphrase appears in no output ($leaks leaks)" test "$leaks" -eq 0
finish
