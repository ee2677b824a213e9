#!/bin/sh
# add --one-file-system (-x): a directory on another file system is left
# out, and with --delete what the vault holds below it is kept (not
# "gone": it was not read).  Needs root to mount a tmpfs (CI runs as root).
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v mount >/dev/null; then
    echo "# SKIP - onefs.sh needs root to mount a tmpfs"
    exit 0
fi
mkdir -p "$T/src/mnt" "$T/src/here"
if ! mount -t tmpfs -o size=1m tmpfs "$T/src/mnt" 2>/dev/null; then
    echo "# SKIP - onefs.sh: cannot mount a tmpfs here"
    exit 0
fi
umount_it() { umount "$T/src/mnt" 2>/dev/null; cleanup; }
trap umount_it EXIT
printf 'on the other fs\n' >"$T/src/mnt/far.txt"
printf 'here\n' >"$T/src/here/near.txt"

init_vault || finish
expect_status 0 pq add "$T/src"
expect_status 0 pq list src
expect_stdout_contains "src/mnt/far.txt"
expect_status 0 pq add -x --delete --verbose "$T/src"
expect_stderr_contains "skipped (another file system)"
expect_status 0 pq list src
expect_stdout_contains "src/here/near.txt"
expect_stdout_contains "src/mnt/far.txt"
check_ok "--delete kept what lies on the file system -x did not read" grep -q 'src/mnt/far.txt' "$OUT"
expect_status 0 pq add -x "$T/src" -n --verbose
check_ok "a dry run says nothing is removed" sh -c '! grep -q "would be removed" "$1"' sh "$ERR"
finish
