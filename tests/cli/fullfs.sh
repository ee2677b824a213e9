#!/bin/sh
# A full disk (issue 21): a local vault keeps a reserve (its file "reserve",
# 16 MiB) so that rm, forget and gc can commit when nothing else can be
# written.  On a 64 MiB tmpfs: add until the disk is full (add fails with
# "No space left on device" and a hint at rm + gc, nothing half-written,
# check clean), the last bytes taken by a file beside the vault; then rm
# (its commit releases the reserve and is tried again), forget, gc (unused
# packs removed first, the reserve made again), check clean, add works.
# Then the crash rules: rm killed at each durability step of a commit that
# releases the reserve (check clean after each, the reserve whole or
# gone), and a release that fails (EIO: rm fails as before, nothing
# damaged).  Also, without root: the reserve is no vault file for check,
# check --no-key, gc, copy, list; a reserve that is a link or a directory
# is neither followed nor touched, only reported; the write-only writer
# never touches it.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/src"
init_vault
check_ok "init made the reserve (16 MiB, a regular file)" \
    test -f "$V/reserve" -a ! -L "$V/reserve" -a "$(stat -c %s "$V/reserve")" -eq 16777216
head -c 300000 /dev/urandom >"$T/src/a"
expect_status 0 pq add "$T/src/a" --name a
expect_status 0 pq check
expect_stdout_contains "leftovers: 0, temporaries: 0"
expect_status 0 pqn check --no-key
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
check_ok "check says nothing of the reserve" sh -c '! grep -q reserve "$1"' sh "$ERR"
expect_status 0 pq list
check_ok "list does not show the reserve" sh -c '! grep -q reserve "$1"' sh "$OUT"
expect_status 0 pq gc
check_ok "gc kept the reserve" test -f "$V/reserve"
expect_status 0 pq copy --to "$T/copy"
check_ok "copy did not copy the reserve" test ! -e "$T/copy/reserve"
# A vault without one (made before there was a reserve, or it was used):
# the next writing command makes it.
rm "$V/reserve"
expect_status 0 pq check
check_ok "a missing reserve is no damage" sh -c '! grep -q "reserve.*warning\|warning.*reserve" "$1"' sh "$ERR"
echo b >"$T/src/b"
expect_status 0 pq add "$T/src/b" --name b
check_ok "add made the reserve again" test "$(stat -c %s "$V/reserve")" -eq 16777216
# Hostile: a link or a directory at its name is neither followed nor touched.
rm "$V/reserve"
echo precious >"$T/target"
ln -s "$T/target" "$V/reserve"
expect_status 0 pq add "$T/src/b" --name b2
check_ok "the link's target untouched" test "$(cat "$T/target")" = precious
check_ok "the link left as it is" test -L "$V/reserve"
expect_stderr_contains "not a regular file (a symbolic link): ignored"
expect_status 0 pq check
expect_stderr_contains "reserve: not a regular file (a symbolic link): ignored"
expect_status 0 pqn check --no-key
expect_stderr_contains "reserve: not a regular file (a symbolic link): ignored"
expect_status 0 pq rm b2
expect_status 0 pq gc
check_ok "gc left the link alone" test -L "$V/reserve" -a "$(cat "$T/target")" = precious
rm "$V/reserve"
mkdir "$V/reserve"
expect_status 0 pq gc
check_ok "a directory at its name left as it is" test -d "$V/reserve"
expect_stderr_contains "not a regular file (a directory): ignored"
rmdir "$V/reserve"
# A huge sparse one is not read, and left as it is (it holds little).
truncate -s 1T "$V/reserve"
expect_status 0 pq add "$T/src/b" --name b3
expect_status 0 pq check
check_ok "a sparse reserve topped up (allocated), its length kept" \
    test "$(stat -c %s "$V/reserve")" -eq 1099511627776 -a "$(($(stat -c %b "$V/reserve") * 512))" -ge 16777216
rm "$V/reserve"
expect_status 0 pq add "$T/src/b" --name b4
# The write-only writer never touches it.
expect_status 0 pq export-recipient -o "$T/recipient"
rm "$V/reserve"
expect_status 0 "$PQV" -v "$V" add --recipient "$T/recipient" "$T/src/b" --name w
check_ok "the write-only writer made no reserve" test ! -e "$V/reserve"

if [ "$(id -u)" -ne 0 ]; then
    echo "# SKIP - needs root to mount a tmpfs"
    finish
fi
M=$T/mnt
mkdir "$M"
if ! mount -t tmpfs -o size=64m tmpfs "$M" 2>/dev/null; then
    echo "# SKIP - cannot mount a tmpfs"
    finish
fi
trap 'umount "$M" 2>/dev/null; cleanup' EXIT
V=$M/vault
init_vault
check_ok "init made the reserve on the tmpfs" test "$(stat -c %s "$V/reserve")" -eq 16777216
head -c 20000000 /dev/urandom >"$T/src/big"
expect_status 0 pq add "$T/src/big" --name big
# Add 4 MB files until the disk is full.
i=0
while [ $i -lt 20 ]; do
    i=$((i + 1))
    head -c 4000000 /dev/urandom >"$T/src/f"
    pq add "$T/src/f" --name "f$i" >"$OUT" 2>"$ERR" || break
done
LAST="add f$i on a full disk"
check_ok "$LAST: fails (after $((i - 1)) files)" test $i -gt 1 -a $i -lt 20
expect_stderr_contains "No space left on device (free space: 'pqvault rm'"
expect_stderr_contains "then 'pqvault gc': they run on a full disk)"
expect_status 1 pq add "$T/src/f" --name "f$i"
expect_status 0 pq check
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
check_ok "no temporary left by the failed add" test -z "$(find "$V" -name '*.tmp-*')"
expect_status 1 pq list "f$i"
check_ok "the reserve is still whole" test "$(stat -c %s "$V/reserve")" -eq 16777216
# The last bytes taken (an add of a small file might still fit).
head -c 100000000 /dev/zero >"$M/filler" 2>/dev/null
check_ok "the disk is full" test "$(df -k --output=avail "$M" | tail -n 1)" -le 4
expect_status 0 pq rm big
expect_stderr_contains "reserve: the disk is full: committed in the reserve"
check_ok "rm used the reserve" test ! -e "$V/reserve"
expect_status 0 pq list
check_ok "big is gone from the listing" sh -c '! grep -q big "$1"' sh "$OUT"
expect_status 0 pq forget --keep-last 1
expect_status 0 pq check
expect_stdout_contains "damaged: 0, missing: 0"
avail0=$(df -k --output=avail "$M" | tail -n 1)
npacks0=$(find "$V/packs" -type f | wc -l)
expect_status 0 pq gc
npacks1=$(find "$V/packs" -type f | wc -l)
avail1=$(df -k --output=avail "$M" | tail -n 1)
check_ok "gc removed big's packs ($npacks0 -> $npacks1)" test "$npacks1" -lt "$npacks0"
check_ok "the reserve is back" test "$(stat -c %s "$V/reserve")" -eq 16777216
check_ok "gc freed space beyond the reserve ($avail0 -> $avail1 KiB)" test "$avail1" -gt "$((avail0 + 2000))"
expect_status 0 pq check
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
expect_status 0 pq add "$T/src/f" --name again
expect_status 0 pq get again -o "$T/again"
check_ok "the file added after gc reads back" same_file "$T/src/f" "$T/again"

# Crash rules: rm killed at each durability step (the failed put, the
# release, the retry, the local state), on a full disk each time until the
# reserve was released.
rm -f "$M/filler"
head -c 100000000 /dev/zero >"$M/filler" 2>/dev/null
n=0
status=137
while [ $status -eq 137 ] && [ $n -lt 40 ]; do
    n=$((n + 1))
    PQVAULT_TEST_KILL_AT=$n "$PQV_TEST" -v "$V" --passphrase-file "$PF" rm again >"$OUT" 2>"$ERR"
    status=$?
    if [ $status -eq 137 ]; then
        pq check >"$T/check.out" 2>"$T/check.err" || { fail "killed at $n: check fails"; cat "$T/check.err"; }
        if [ -e "$V/reserve" ] && [ "$(stat -c %s "$V/reserve")" -ne 16777216 ]; then
            fail "killed at $n: the reserve is neither whole nor gone"
        fi
        # Killed after its commit point: removed.
        pq list >"$T/list.out" 2>/dev/null
        grep -q again "$T/list.out" || status=0
    fi
done
check_ok "rm killed at each of its first $((n - 1)) durability steps, then done" test $status -eq 0
check_ok "(the kills reached the release: the reserve is gone)" test ! -e "$V/reserve"
expect_status 0 pq check
rm -f "$M/filler"
expect_status 0 pq gc
check_ok "the reserve made again" test "$(stat -c %s "$V/reserve")" -eq 16777216
# A release that fails: rm fails for lack of space, as without a reserve.
expect_status 0 pq add "$T/src/b" --name small
rm -f "$M/filler"
head -c 100000000 /dev/zero >"$M/filler" 2>/dev/null
expect_status 1 env PQVAULT_TEST_FAULT=unlink:1+:EIO "$PQV_TEST" -v "$V" --passphrase-file "$PF" rm small
expect_stderr_contains "No space left on device"
check_ok "the reserve still there" test "$(stat -c %s "$V/reserve")" -eq 16777216
expect_status 0 pq list small
expect_stdout_contains "small"
expect_status 0 pq check
expect_stdout_contains "damaged: 0, missing: 0"
expect_status 0 pq rm small
expect_status 0 pq gc
expect_status 0 pq check
expect_stdout_contains "damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
finish
