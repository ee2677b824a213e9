# tests/cli/kinds.sh: every file kind (issue 21): a tree with a FIFO, a
# character and a block device and a unix socket: add stores the FIFO and
# the devices (the socket reported and skipped); list -l shows p/c/b and a
# device's "major, minor", --json its type and rdev; get as root restores
# them with mode, owner, times and device number; as another user the
# FIFO is restored and the devices reported and skipped (exit 1, as for
# other partial restores); get -o - of a FIFO or device is refused (exit
# 1, as for a directory); an unchanged FIFO is left as it is; a device
# number changed is a change (diff says "device"); versions names them;
# check, forget and gc (compaction), copy keep them;
# the independent reader lists and restores them as pqvault does; a
# write-only writer stores the FIFO, not the devices; a format-2 vault is
# upgraded to format 3 by the add that stores them.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "# SKIP - device nodes need root"
    finish
fi

init_vault || exit 1
CODE=$(grep -E '^[A-Z0-9]{4}(-[A-Z0-9]{4})+' "$T/recovery" | head -n 1)
mkdir -p "$T/src/dev" "$T/src/sub"
printf 'data\n' >"$T/src/sub/file"
mkfifo -m 0640 "$T/src/dev/pipe"
mknod -m 0620 "$T/src/dev/null" c 1 3
mknod -m 0600 "$T/src/dev/loop" b 7 200
chown 1234:5678 "$T/src/dev/null"
chown 0:65534 "$T/src/dev/pipe"
touch -h -d '2020-01-02 03:04:05.123456789' "$T/src/dev/pipe" "$T/src/dev/null" "$T/src/dev/loop"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/src/dev/sock"
check_ok "the source has a socket" [ -S "$T/src/dev/sock" ]

# ---- add ----
expect_status 0 pq add "$T/src"
expect_stderr_contains "dev/sock: skipped (socket)"
expect_stderr_contains "7 new"
check_ok "only the socket is said skipped" [ "$(grep -c skipped "$ERR")" -eq 1 ]
expect_status 0 pq list
check_ok "list: the FIFO and the devices stored, not the socket" sh -c \
    'grep -qx src/dev/pipe "$1" && grep -qx src/dev/null "$1" && grep -qx src/dev/loop "$1" && ! grep -q sock "$1"' sh "$OUT"

# ---- list -l, --json ----
expect_status 0 pq list -l src/dev
check_ok "list -l: a FIFO is p, its mode rw-r-----" grep -qE '^prw-r----- root +nogroup +0 2020-01-02 03:04 src/dev/pipe$' "$OUT"
check_ok "list -l: a character device is c, its number 1, 3 (as ls)" grep -qE '^crw--w---- 1234 +5678 +1, 3 2020-01-02 03:04 src/dev/null$' "$OUT"
check_ok "list -l: a block device is b, its number 7, 200" grep -qE '^brw------- root +root +7, 200 .* src/dev/loop$' "$OUT"
check_ok "list -l: totals count no device as a file" grep -qx '4 entries, 0 bytes in 0 files' "$OUT"
expect_status 0 pq list --json src/dev
python3 - "$OUT" >"$T/json.check" 2>&1 <<'EOF'
import json, sys
e = {x["name"]: x for x in json.load(open(sys.argv[1]))}
assert e["src/dev/pipe"]["type"] == "fifo" and e["src/dev/pipe"]["mode"] == "0640", e["src/dev/pipe"]
assert "rdev_major" not in e["src/dev/pipe"]
assert e["src/dev/pipe"]["mtime"] == "2020-01-02T03:04:05.123456789Z", e["src/dev/pipe"]["mtime"]
n = e["src/dev/null"]
assert n["type"] == "chardev" and (n["rdev_major"], n["rdev_minor"]) == (1, 3), n
assert (n["uid"], n["gid"], n["size"], n["aead"]) == (1234, 5678, 0, None), n
b = e["src/dev/loop"]
assert b["type"] == "blockdev" and (b["rdev_major"], b["rdev_minor"]) == (7, 200), b
EOF
check_ok "list --json: types fifo, chardev, blockdev; a device's rdev_major/rdev_minor ($(head -c 200 "$T/json.check"))" [ ! -s "$T/json.check" ]

# ---- get as root ----
expect_status 0 pq get src -o "$T/out"
want_stat() { # PATH WANT: stat's type, device number (hex), mode, owner and mtime
    got=$(stat -c '%F %t %T %a %u %g %y' "$1")
    if [ "$got" = "$2" ]; then ok "restored $(basename "$1"): $2"; else fail "restored $(basename "$1"): '$got', expected '$2'"; fi
}
want_stat "$T/out/src/dev/pipe" "fifo 0 0 640 0 65534 2020-01-02 03:04:05.123456789 +0000"
want_stat "$T/out/src/dev/null" "character special file 1 3 620 1234 5678 2020-01-02 03:04:05.123456789 +0000"
want_stat "$T/out/src/dev/loop" "block special file 7 c8 600 0 0 2020-01-02 03:04:05.123456789 +0000"
check_ok "no socket restored, no temporary left" sh -c '[ ! -e "$1/sock" ] && [ -z "$(ls -A "$1" | grep -v "^\(pipe\|null\|loop\)$")" ]' sh "$T/out/src/dev"
expect_status 0 pq get src/dev/pipe -o "$T/out2/"
check_ok "get of one FIFO into a directory" [ -p "$T/out2/src/dev/pipe" ]
expect_stderr_contains "restored: 1 entry"
expect_status 1 pq get src/dev/pipe -o "$T/out2/"
expect_stderr_contains "already exists"
expect_status 0 pq get --force src/dev/null -o "$T/out2/src/dev/pipe"
check_ok "get --force: a device over an existing FIFO, at the path named" [ -c "$T/out2/src/dev/pipe" ]
expect_status 0 pq get src/dev/loop -o "$T/out2/named-loop"
check_ok "get NAME -o PATH: the device made at PATH" [ -b "$T/out2/named-loop" ]

# ---- get -o -: refused, as for a directory ----
expect_status 1 pq get src/dev/pipe -o -
expect_stderr_contains "is a FIFO, not a regular file"
expect_empty_stdout
expect_status 1 pq get src/dev/null -o -
expect_stderr_contains "is a character device, not a regular file"
expect_status 1 pq get src -o -
expect_stderr_contains "is a directory"

# ---- get as another user: the FIFO restored, the devices reported ----
if command -v setpriv >/dev/null 2>&1; then
    NB=$(mktemp -d /tmp/pqv-kinds.XXXXXX)
    chmod 755 "$NB" "$T"
    chown 65534:65534 "$NB"
    cp "$PF" "$NB/pass"
    chown 65534:65534 "$NB/pass"
    chmod -R a+rX "$V"
    # A copy of the program nobody can run wherever the clone lives (a
    # private directory included).
    cp "$PQV" "$NB/pqvault"
    chmod 0755 "$NB/pqvault"
    LAST="get as nobody"
    setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_STATE_HOME="$NB/state" \
        "$NB/pqvault" -v "$V" --passphrase-file "$NB/pass" get src -o "$NB/out" >"$OUT" 2>"$ERR"
    st=$?
    check_ok "$LAST: exit 1 (a partial restore), got $st" [ "$st" -eq 1 ]
    expect_stderr_contains "dev/null: not restored: a character device needs root"
    expect_stderr_contains "dev/loop: not restored: a block device needs root"
    expect_stderr_contains "2 entries not restored"
    check_ok "as nobody: the FIFO restored, its mode and time" \
        [ "$(stat -c '%F %a %u %y' "$NB/out/src/dev/pipe")" = "fifo 640 65534 2020-01-02 03:04:05.123456789 +0000" ]
    check_ok "as nobody: the file restored" same_file "$NB/out/src/sub/file" "$T/src/sub/file"
    check_ok "as nobody: no device made, no temporary left" sh -c '[ -z "$(ls -A "$1" | grep -vx pipe)" ]' sh "$NB/out/src/dev"
    rm -rf "$NB"
else
    fail "setpriv missing: the non-root restore is not tested"
fi

# ---- incremental add, diff, versions ----
expect_status 0 pq add "$T/src"
expect_stderr_contains "0 new, 0 changed, 7 unchanged"
rm "$T/src/dev/loop"
mknod -m 0600 "$T/src/dev/loop" b 7 201
touch -h -d '2020-01-02 03:04:05.123456789' "$T/src/dev/loop"
expect_status 0 pq add "$T/src"
expect_stderr_contains "0 new, 2 changed, 5 unchanged"
pq log >"$T/log" 2>/dev/null
NEWEST=$(awk '/^[0-9]/ { print $1; exit }' "$T/log")
BEFORE=$(awk '/^[0-9]/ { n++; if (n == 2) { print $1; exit } }' "$T/log")
expect_status 0 pq diff "$BEFORE" "$NEWEST"
expect_stdout_contains "src/dev/loop"
expect_stdout_contains "device"
expect_status 0 pq versions src/dev/loop
expect_stdout_contains "block device 7, 200"
expect_stdout_contains "block device 7, 201"
expect_status 0 pq versions src/dev/pipe
expect_stdout_contains "FIFO"
expect_status 0 pq check --read-data
expect_status 0 pq gc
# Folded (forget, gc's compaction into a base), copied: the kinds kept.
expect_status 0 pq forget --keep-last 1
expect_status 0 pq gc
expect_status 0 pq list -l src/dev
check_ok "after forget and gc: the devices and their numbers kept" sh -c \
    'grep -q "^crw--w---- .* 1, 3 .* src/dev/null$" "$1" && grep -q "^brw------- .* 7, 201 .* src/dev/loop$" "$1" && grep -q "^prw-r----- .* src/dev/pipe$" "$1"' sh "$OUT"
expect_status 0 pq check --read-data
expect_status 0 pq info
expect_status 0 pq copy --to "$T/copy"
expect_status 0 "$PQV" -v "$T/copy" --passphrase-file "$PF" list -l src/dev
check_ok "copy: the FIFO and devices there" sh -c \
    'grep -q "^c.* 1, 3 .* src/dev/null$" "$1" && grep -q "^b.* 7, 201 .* src/dev/loop$" "$1" && grep -q "^p.* src/dev/pipe$" "$1"' sh "$OUT"

# ---- the independent reader (tests/reader/, docs/FORMAT.md alone) ----
RD=$(cd "$(dirname "$0")/../reader" && pwd)
PY=
for p in ${PQV_PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 &&
        "$p" -c 'import cryptography.hazmat.primitives.ciphers.aead, numpy' 2>/dev/null; then
        PY=$p
        break
    fi
done
if [ -n "$PY" ] && [ -n "$CODE" ]; then
    expect_status 0 pq list --json
    cp "$OUT" "$T/pqv.json"
    expect_status 0 "$PY" "$RD/pqvault_reader.py" list "$V" --recovery-code "$CODE" --json
    check_ok "reader: list --json equals pqvault's (fifo, chardev, blockdev, rdev)" same_file "$OUT" "$T/pqv.json"
    expect_status 0 "$PY" "$RD/pqvault_reader.py" restore "$V" --recovery-code "$CODE" -o "$T/rdr"
    want_stat "$T/rdr/src/dev/pipe" "fifo 0 0 640 0 65534 2020-01-02 03:04:05.123456789 +0000"
    want_stat "$T/rdr/src/dev/null" "character special file 1 3 620 1234 5678 2020-01-02 03:04:05.123456789 +0000"
    want_stat "$T/rdr/src/dev/loop" "block special file 7 c9 600 0 0 2020-01-02 03:04:05.123456789 +0000"
else
    echo "# SKIP - the reader needs python3-cryptography and numpy (and the recovery code)"
fi

# ---- a write-only writer: the FIFO, not the devices ----
C=$T/cred
expect_status 0 pq writer add w1 --prefix in -o "$C"
LAST="write-only add of the tree"
env -u PQVAULT_PASSPHRASE "$PQV" -v "$V" add --recipient "$C" "$T/src" </dev/null >"$OUT" 2>"$ERR"
check_ok "$LAST: exit 0" [ $? -eq 0 ]
expect_stderr_contains "dev/null: skipped (character device: a write-only writer stores no device nodes)"
expect_stderr_contains "dev/loop: skipped (block device: a write-only writer stores no device nodes)"
expect_stderr_contains "dev/sock: skipped (socket)"
LAST="write-only add of a device operand"
env -u PQVAULT_PASSPHRASE "$PQV" -v "$V" add --recipient "$C" "$T/src/dev/null" </dev/null >"$OUT" 2>"$ERR"
check_ok "$LAST: refused, exit 1 (got $?)" [ $? -ne 0 ]
expect_stderr_contains "a write-only writer stores no device nodes"
expect_status 0 pq import
expect_status 0 pq list -l in
check_ok "imported: the writer's FIFO" grep -qE '^prw-r----- .* in/src/dev/pipe$' "$OUT"
check_ok "imported: no device node" sh -c '! grep -qE "^[cb]" "$1"' sh "$OUT"

# ---- a FIFO or device given as the operand ----
expect_status 0 pq add "$T/src/dev/pipe" --name lone-pipe
expect_status 0 pq add "$T/src/dev/null" --name lone-null
expect_status 0 pq list -l lone-pipe lone-null
check_ok "operands: a FIFO and a device stored as named" sh -c 'grep -q "^p.* lone-pipe$" "$1" && grep -q "^c.* 1, 3 .* lone-null$" "$1"' sh "$OUT"
expect_status 1 pq add "$T/src/dev/sock" --name lone-sock
expect_stderr_contains "is a socket: not stored"

# ---- a format-2 vault: upgraded to format 3 by the add, then the FIFO stored ----
FX=$(cd "$(dirname "$0")/../fixtures" && pwd)
cp -r "$FX/v2-chacha" "$T/v2"
chmod -R u+w "$T/v2"
mkdir -p "$T/v2src"
mkfifo "$T/v2src/pipe"
mknod "$T/v2src/null" c 1 3
expect_status 0 "$PQV" -v "$T/v2" --passphrase-file "$FX/v2.pass" add "$T/v2src"
expect_status 0 "$PQV" -v "$T/v2" --passphrase-file "$FX/v2.pass" info
expect_stdout_contains "format version:  3"
expect_status 0 "$PQV" -v "$T/v2" --passphrase-file "$FX/v2.pass" list -l v2src
check_ok "format 2 upgraded: the FIFO and device stored" sh -c 'grep -q "^p.* v2src/pipe$" "$1" && grep -q "^c.* 1, 3 .* v2src/null$" "$1"' sh "$OUT"
expect_status 0 "$PQV" -v "$T/v2" --passphrase-file "$FX/v2.pass" check

finish
