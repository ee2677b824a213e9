# tests/cli/hostile.sh: files that change while they are added, hostile
# restore destinations, interrupts, a hostile vault directory, and commands
# that carry on past what they cannot process (issue 9).  Files are changed
# at a known point: the test build stops itself (PQVAULT_TEST_STOP_AT, a
# hook of build/pqvault-test only), the test acts, then continues it.  No
# timing assumption: a stopped process is waited for by polling its state.
. "$(dirname "$0")/lib.sh"

# bg CMD...: run CMD in the background, output to $T/bg.out and $T/bg.err.
# (A shell starts background jobs with SIGINT ignored, which pqvault then
# respects: give them the default back, as an interactive job has it.)
bg() {
    env --default-signal=INT "$@" >"$T/bg.out" 2>"$T/bg.err" &
    BGPID=$!
    BG_PIDS="$BG_PIDS $BGPID"
}
# wait_stopped PID: until PID has stopped itself (state T); 1 if it exited.
wait_stopped() {
    i=0
    while [ $i -lt 6000 ]; do
        st=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)
        [ "$st" = T ] && return 0
        [ -z "$st" ] || [ "$st" = Z ] && return 1
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}
# bg_wait: wait for the background command; its status in $BGST.
bg_wait() {
    wait "$BGPID"
    BGST=$?
    BG_PIDS=
}
bg_check() { # DESC WANT: the background command's status and stderr
    if [ "$BGST" -eq "$2" ]; then ok "$1: exit $2"; else
        fail "$1: exit $BGST, expected $2"
        sed -n '1,5s/^/#   stderr: /p' "$T/bg.err"
    fi
}
bg_stderr() { # DESC TEXT
    if grep -qF -- "$2" "$T/bg.err"; then ok "$1: stderr mentions '$2'"; else
        fail "$1: stderr lacks '$2'"
        sed -n '1,5s/^/#   stderr: /p' "$T/bg.err"
    fi
}
pqt() { "$PQV_TEST" -v "$V" --passphrase-file "$PF" "$@"; }

init_vault || finish

# ---- 1. a file that shrinks while add reads it -------------------------
head -c 20971520 /dev/urandom >"$T/s"          # 5 objects
bg env PQVAULT_TEST_STOP_AT=read:2 "$PQV_TEST" -v "$V" --passphrase-file "$PF" add "$T/s"
if wait_stopped "$BGPID"; then
    truncate -s 6000000 "$T/s"
    kill -CONT "$BGPID"
fi
bg_wait
bg_check "file shrunk during add" 0
bg_stderr "file shrunk during add" "changed while it was being read: reading it again"
expect_status 0 pq get s -o "$T/s.got"
check_ok "shrunk file: what is stored is the file as it is now (6000000 bytes)" same_file "$T/s" "$T/s.got"
expect_status 0 pq check --read-data

# ---- 2. a file replaced (mv over it) or growing during add -------------
head -c 20971520 /dev/urandom >"$T/r"
head -c 9000000 /dev/urandom >"$T/r.other"
bg env PQVAULT_TEST_STOP_AT=read:2 "$PQV_TEST" -v "$V" --passphrase-file "$PF" add "$T/r"
if wait_stopped "$BGPID"; then
    cp "$T/r.other" "$T/r.new" && mv "$T/r.new" "$T/r"
    kill -CONT "$BGPID"
fi
bg_wait
bg_check "file replaced during add" 0
bg_stderr "file replaced during add" "changed while it was being read: reading it again"
expect_status 0 pq get r -o "$T/r.got"
check_ok "replaced file: the new file is stored whole, not old chunks + new ones" same_file "$T/r.other" "$T/r.got"

head -c 12000000 /dev/urandom >"$T/g"
bg env PQVAULT_TEST_STOP_AT=read:1 "$PQV_TEST" -v "$V" --passphrase-file "$PF" add "$T/g"
if wait_stopped "$BGPID"; then
    head -c 3000000 /dev/urandom >>"$T/g"
    kill -CONT "$BGPID"
fi
bg_wait
bg_check "file growing during add" 0
expect_status 0 pq get g -o "$T/g.got"
check_ok "grown file: stored as it is after growing, not cut at its first size" same_file "$T/g" "$T/g.got"

# A file that changes at every attempt is refused, never stored half.
head -c 100000 /dev/urandom >"$T/busy"
bg env PQVAULT_TEST_STOP_AT=read:1,2,3 "$PQV_TEST" -v "$V" --passphrase-file "$PF" add "$T/busy"
for k in 1 2 3; do
    wait_stopped "$BGPID" || break
    printf 'more %s\n' "$k" >>"$T/busy"
    kill -CONT "$BGPID"
done
bg_wait
bg_check "file changing at every read" 1
bg_stderr "file changing at every read" "busy: not stored: it changed while it was being read, 3 times"
expect_status 1 pq list busy
expect_stderr_contains "not found"

# ---- 3. links planted in the restore destination -----------------------
mkdir -p "$T/tree/d1/sub"
printf 'x\n' >"$T/tree/d1/sub/f"
expect_status 0 pq add "$T/tree/d1"
mkdir -p "$T/out" "$T/elsewhere" "$T/elsewhere2"
chmod 700 "$T/elsewhere"
ln -s "$T/elsewhere" "$T/out/d1"
expect_status 1 pq get d1 -o "$T/out"
expect_stderr_contains "out/d1: is a symbolic link (not followed)"
check_ok "a link planted at d1 is not followed: elsewhere/ stays empty" [ -z "$(ls -A "$T/elsewhere")" ]
check_ok "...and keeps its mode" [ "$(stat -c %a "$T/elsewhere")" = 700 ]
expect_status 1 pq get d1 -o "$T/out" --force
check_ok "--force never follows it either" [ -z "$(ls -A "$T/elsewhere")" ]
rm "$T/out/d1"
mkdir -p "$T/out/d1"
ln -s "$T/elsewhere2" "$T/out/d1/sub"
expect_status 1 pq get d1 -o "$T/out"
expect_stderr_contains "out/d1/sub: is a symbolic link (not followed)"
check_ok "an intermediate link is not followed" [ -z "$(ls -A "$T/elsewhere2")" ]
# A link at a file's own name: refused; with --force the link itself is
# replaced, its target untouched.
mkdir -p "$T/out2"
printf 'precious\n' >"$T/victim"
ln -s "$T/victim" "$T/out2/f"
expect_status 1 pq get d1/sub/f -o "$T/out2/f"
expect_stderr_contains "exists (a symbolic link)"
expect_status 0 pq get d1/sub/f -o "$T/out2/f" --force
check_ok "--force replaced the link by the file" [ -f "$T/out2/f" -a ! -L "$T/out2/f" ]
check_ok "...and the link's target is untouched" [ "$(cat "$T/victim")" = precious ]

# ---- 4. devices and FIFOs as the destination ---------------------------
if mknod "$T/nulldev" c 1 3 2>/dev/null; then
    expect_status 0 pq get s -o "$T/nulldev" --force
    check_ok "get -o DEVICE --force writes into the device, which stays a device" [ -c "$T/nulldev" ]
else
    echo "# SKIP - mknod not permitted here (needs root): character device destination"
fi
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/fifo.out" &
catpid=$!
expect_status 0 pq get d1/sub/f -o "$T/fifo"
wait "$catpid"
check_ok "get -o FIFO writes into it (as cat would)" same_file "$T/tree/d1/sub/f" "$T/fifo.out"
check_ok "...and the FIFO stays a FIFO" [ -p "$T/fifo" ]
mkdir -p "$T/adir/d1/sub/f"
expect_status 1 pq get d1/sub/f -o "$T/adir" --force
expect_stderr_contains "is a directory"
if grep -q -- "--force to replace" "$ERR"; then fail "the --force hint is shown although --force was given"; else
    ok "no --force hint when --force was given"; fi

# ---- 5. interrupted get and add leave no plaintext, no temporaries -----
mkdir "$T/outi"
bg env PQVAULT_TEST_STOP_AT=write:3 "$PQV_TEST" -v "$V" --passphrase-file "$PF" get r -o "$T/outi/r"
if wait_stopped "$BGPID"; then
    check_ok "a get stopped half-way has its temporary beside the destination" \
        sh -c 'ls -A "$1" | grep -q "^\.r\.pqvault\.tmp-"' sh "$T/outi"
    kill -INT "$BGPID"
    kill -CONT "$BGPID"
fi
bg_wait
bg_check "get interrupted with SIGINT" 130
check_ok "SIGINT: nothing left at the destination (no partial plaintext)" [ -z "$(ls -A "$T/outi")" ]
for sig in TERM HUP; do
    bg env PQVAULT_TEST_STOP_AT=write:2 "$PQV_TEST" -v "$V" --passphrase-file "$PF" get r -o "$T/outi/r"
    wait_stopped "$BGPID" && { kill -"$sig" "$BGPID"; kill -CONT "$BGPID"; }
    bg_wait
    check_ok "SIG$sig: nothing left at the destination" [ -z "$(ls -A "$T/outi")" ]
done
bg env PQVAULT_TEST_STOP_AT=write:3 "$PQV_TEST" -v "$V" --passphrase-file "$PF" get r -o "$T/outi/r"
wait_stopped "$BGPID" && kill -KILL "$BGPID"
bg_wait
check_ok "SIGKILL leaves the temporary (no handler can run)" \
    sh -c 'ls -A "$1" | grep -q "^\.r\.pqvault\.tmp-"' sh "$T/outi"
expect_status 0 pq get r -o "$T/outi/r"
check_ok "the next get into the same place removes the dead one's temporary" \
    [ "$(ls -A "$T/outi")" = r ]
check_ok "...and restores the file" same_file "$T/r.other" "$T/outi/r"

head -c 20971520 /dev/urandom >"$T/s2"
bg env PQVAULT_TEST_STOP_AT=read:3 "$PQV_TEST" -v "$V" --passphrase-file "$PF" add "$T/s2"
wait_stopped "$BGPID" && { kill -INT "$BGPID"; kill -CONT "$BGPID"; }
bg_wait
bg_check "add interrupted with SIGINT" 130
bg_stderr "add interrupted with SIGINT" "interrupted: what was committed stays (an add is one commit, and so is each checkpoint of a large one; run the same add again to continue); packs written since are left for 'pqvault gc'"
expect_status 1 pq list s2
expect_stderr_contains "s2: not found"
expect_status 0 pq check
check_ok "the interrupted add left no temporary in the vault" \
    sh -c '! find "$1" -name "*.tmp-*" | grep -q .' sh "$V"
expect_status 0 pq gc
expect_status 0 pq check
expect_stdout_contains "leftovers: 0, temporaries: 0"

# ---- 6. a hostile vault directory --------------------------------------
printf 'precious\n' >"$T/victim.txt"
rm -f "$V/lock"
ln -s ../victim.txt "$V/lock"
expect_status 4 pq add "$T/tree/d1/sub/f" --name lockcheck
expect_stderr_contains "lock: is a symbolic link"
check_ok "a lock file replaced by a link: its target is not truncated" [ "$(cat "$T/victim.txt")" = precious ]
rm "$V/lock"
mv "$V/config" "$T/config.saved"
mkfifo "$V/config"
expect_status 4 timeout 60 "$PQV" -v "$V" --passphrase-file "$PF" list
expect_stderr_contains "not a regular file"
rm "$V/config"
mv "$T/config.saved" "$V/config"
seg=$V/segments/0000000000000002
mv "$seg" "$T/seg.saved"
mkfifo "$seg"
expect_status 4 timeout 60 "$PQV" -v "$V" --passphrase-file "$PF" check
expect_stderr_contains "segments/0000000000000002"
expect_status 4 timeout 60 "$PQV" -v "$V" --passphrase-file "$PF" list
expect_status 4 timeout 60 "$PQV" -v "$V" check --no-key
check_ok "a FIFO at a segment's path does not hang check" [ "$(cat "$T/victim.txt")" = precious ]
rm "$seg"
mv "$T/seg.saved" "$seg"
pack=$(first_file "$V/packs")
mv "$pack" "$T/pack.saved"
mkfifo "$pack"
expect_status 4 timeout 60 "$PQV" -v "$V" --passphrase-file "$PF" check --read-data
expect_stderr_contains "$(basename "$pack")"
rm "$pack"
mv "$T/pack.saved" "$pack"
expect_status 0 pq check

# ---- 10. carry on past what cannot be processed ------------------------
mkdir -p "$T/many/a" "$T/many/b"
for i in 1 2 3 4 5 6; do head -c $((i * 1000)) /dev/urandom >"$T/many/a/f$i"; done
for i in 1 2 3; do head -c $((i * 777)) /dev/urandom >"$T/many/b/g$i"; done
# The 4th read of a file fails (as on a broken disk): that file is reported
# and skipped, every other one stored, and the add ends with exit 1.
expect_status 1 env PQVAULT_TEST_FAULT=read:4:EIO "$PQV_TEST" -v "$V" --passphrase-file "$PF" add "$T/many"
expect_stderr_contains "not stored: read: Input/output error"
expect_stderr_contains "1 entry not stored (reported above)"
expect_status 0 pq get many -o "$T/many.out"
n_ok=0
for f in a/f1 a/f2 a/f3 a/f4 a/f5 a/f6 b/g1 b/g2 b/g3; do
    same_file "$T/many/$f" "$T/many.out/many/$f" && n_ok=$((n_ok + 1))
done
check_ok "8 of the 9 files stored and restored byte-exact (one failed to read)" [ "$n_ok" -eq 8 ]

# One damaged catalogue block (the segment of the next add holds one
# entry, many/damaged): list, tree get and rm carry on.
last=$(ls "$V/segments" | sort | tail -n 1)
expect_status 0 pq add - --name many/damaged </dev/null
dseg=$V/segments/$(ls "$V/segments" | sort | tail -n 1)
check_ok "the add wrote a segment of its own" [ "$dseg" != "$V/segments/$last" ]
cp "$dseg" "$T/dseg.saved"
flip_byte "$dseg" $(($(stat -c %s "$dseg") - 3))
expect_status 4 pq list many
expect_stdout_contains "many/b/g3"
expect_stderr_contains "segment block 0 failed authentication"
expect_stderr_contains "many: 1 damaged catalogue block (reported above)"
check_ok "list: the damaged block's name is not shown" sh -c '! grep -q "many/damaged" "$1"' sh "$OUT"
rm -rf "$T/many.out2"
expect_status 4 pq get many -o "$T/many.out2"
expect_stderr_contains "1 damaged catalogue block: the entries in it are lost"
n_ok=0
for f in a/f1 a/f2 a/f3 a/f4 a/f5 a/f6 b/g1 b/g2 b/g3; do
    same_file "$T/many/$f" "$T/many.out2/many/$f" && n_ok=$((n_ok + 1))
done
check_ok "tree get past a damaged block restores the 8 others byte-exact" [ "$n_ok" -eq 8 ]
expect_status 0 pq rm many/damaged
expect_stderr_contains "not among the readable entries: removed in case it is in a damaged block"
expect_status 4 pq list many/damaged
# The block stays damaged (its other entries, if any, are lost): check
# keeps saying so and gc, which cannot tell what it referred to, refuses.
expect_status 4 pq check --read-data
expect_stderr_contains "segment block 0 failed authentication"
expect_status 4 pq gc
expect_stderr_contains "refusing to collect garbage while the vault is damaged"
# Its bytes put back (a copy of the vault): sound again, the name removed.
cp "$T/dseg.saved" "$dseg"
expect_status 0 pq check --read-data
expect_status 1 pq list many/damaged
expect_status 0 pq gc

# ---- 11. a name cannot be a file and a parent --------------------------
printf 'file\n' | pq add - --name a/f.txt >/dev/null 2>&1
expect_status 1 pq add - --name a/f.txt/child
expect_stderr_contains "a/f.txt is a file in the vault: nothing can be stored below it"
mkdir -p "$T/t2/d"
printf '1\n' >"$T/t2/d/x"
printf '2\n' >"$T/t2/d/y"
expect_status 0 pq add "$T/t2"
rm -r "$T/t2/d"
printf 'now a file\n' >"$T/t2/d"
# The source changed: the directory became a file (incremental add: the
# file is stored, the names below the old directory are removed).
expect_status 0 pq add "$T/t2"
expect_stderr_contains "0 new, 2 changed, 0 unchanged, 2 removed"
expect_status 0 pq add "$T/t2"
expect_stderr_contains "0 new, 0 changed, 2 unchanged, 0 removed"
expect_status 0 pq list t2
check_ok "a directory replaced by a file leaves no stale children" \
    sh -c 'printf "t2\nt2/d\n" | cmp -s - "$1"' sh "$OUT"
expect_status 0 pq check

# ---- 12. names and operands ---------------------------------------------
mkdir -p "$T/home/Documents/taxes"
printf 'pdf\n' >"$T/home/Documents/taxes/2025.pdf"
expect_status 0 pq add "$T/home/Documents/taxes"
expect_status 0 pq get taxes/2025.pdf -o "$T/got-taxes/"
check_ok "README example: add ~/Documents/taxes, then get taxes/2025.pdf -o DIR/" \
    same_file "$T/home/Documents/taxes/2025.pdf" "$T/got-taxes/taxes/2025.pdf"
mkdir -p "$T/proj"
printf 'p\n' >"$T/proj/p"
expect_status 0 sh -c 'cd "$0" && "$1" -v "$2" --passphrase-file "$3" add .' "$T/proj" "$PQV" "$V" "$PF"
expect_status 0 pq list proj
expect_stdout_contains "proj/p"
# A symbolic link as the operand that names a directory: the directory's
# contents under the link's name (as cp -H; links below it stay links); a
# link to a file and a dangling link are stored as links; -L follows every
# link.
ln -s "$T/proj" "$T/link-operand"
ln -s "$T/proj/p" "$T/proj/inner-link"
expect_status 0 pq add --verbose "$T/link-operand"
expect_stderr_contains "link-operand: a link to a directory: its contents are stored"
expect_status 0 pq list --json link-operand
expect_stdout_contains "\"name\": \"link-operand\", \"type\": \"dir\""
expect_stdout_contains "\"name\": \"link-operand/p\", \"type\": \"file\""
expect_stdout_contains "\"name\": \"link-operand/inner-link\", \"type\": \"symlink\""
expect_status 0 pq get link-operand/p -o -
expect_stdout_contains "p"
ln -s "$T/proj/p" "$T/file-link"
ln -s "$T/nowhere" "$T/dangling-link"
expect_status 0 pq add "$T/file-link" "$T/dangling-link"
expect_status 0 pq list --json file-link dangling-link
expect_stdout_contains "\"name\": \"file-link\", \"type\": \"symlink\""
expect_stdout_contains "\"target\": \"$T/proj/p\""
expect_stdout_contains "\"name\": \"dangling-link\", \"type\": \"symlink\""
expect_status 0 pq add -L "$T/link-operand" --name followed
expect_status 0 pq list --json followed
expect_stdout_contains "\"name\": \"followed/inner-link\", \"type\": \"file\""
# A tree deeper than PATH_MAX is walked (relative descriptors); a name
# beyond 4096 bytes is reported, the rest stored.
python3 - "$T/deep" <<'EOF'
import os, sys
os.makedirs(sys.argv[1])
os.chdir(sys.argv[1])
for i in range(90):
    d = "d%02d" % i + "x" * 60
    os.mkdir(d)
    os.chdir(d)
    with open("f", "w") as f:
        f.write("level %d\n" % i)
EOF
expect_status 1 pq add "$T/deep"
expect_stderr_contains "its name would be longer than 4096 bytes"
expect_status 0 pq get deep -o "$T/deep.out"
check_ok "the parts of the deep tree within 4096 bytes are stored" \
    [ "$(find "$T/deep.out" -name f | wc -l)" -ge 60 ]

# check while a writer is running: its packs (no segment names them yet)
# are not leftovers.
head -c 20971520 /dev/urandom >"$T/w"
bg env PQVAULT_TEST_STOP_AT=rename:2 "$PQV_TEST" -v "$V" --passphrase-file "$PF" add "$T/w"
if wait_stopped "$BGPID"; then
    expect_status 0 pq check
    expect_stdout_contains "leftovers: 0, temporaries: 0"
    expect_stdout_contains "written by a running writer: "
    expect_stderr_contains "is running: packs no entry refers to are taken as its own"
    kill -CONT "$BGPID"
fi
bg_wait
bg_check "the writer checked meanwhile" 0

finish
