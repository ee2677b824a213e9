#!/bin/sh
# bench/mount_cp.sh: where `cp -a` out of `pqvault mount` goes (issue 22's
# row "cp -a of the tree out of the mount within 2x of pqvault get"), part
# by part, ROUNDS rounds (default 5) interleaved, each copy into a fresh
# place under W (a directory on the disk, not tmpfs), the vault's files
# in the page cache before each:
#   get          pqvault get of the tree
#   cp tmpfs     cp -a of the same tree from a copy in /dev/shm: the
#                copier's own cost reading another file system, no FUSE
#                (from the same file system cp uses copy_file_range)
#   mount cold   cp -a out of a fresh mount
#   mount warm   again on the same mount (every listing, attribute and
#                page in the kernel's caches)
#   after cat    cp -a out of a fresh mount after a cat of the big file
#                through it, as bench/mount.sh does
# then the medians and their ratios to get.  DOC (default /usr/share/doc),
# BIG_MB (default 1024; 0: no big file, no last column).  As root with
# /dev/fuse.
set -eu
PQVAULT=${PQVAULT:-$PWD/build/pqvault}
PQVAULT=$(realpath "$PQVAULT")
DOC=${DOC:-/usr/share/doc}
BIG_MB=${BIG_MB:-1024}
ROUNDS=${ROUNDS:-5}
W=${W:-$(mktemp -d /var/tmp/pqvbench-cp.XXXXXX)}
mkdir -p "$W"
W=$(realpath "$W")
SRC=$(mktemp -d /dev/shm/pqvbench-cp.XXXXXX)
export XDG_STATE_HOME="$W/state"
MNT=$W/mnt
mkdir -p "$MNT"
cleanup() {
    if grep -q " $MNT fuse" /proc/mounts 2>/dev/null; then
        fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true
    fi
    rm -rf "$SRC"
    [ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# (ratio A B from there: A / B as "1.23x".  HERE: the bench directory.)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/compare_lib.sh"

now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }
# (A copy's place is removed only at the end: on an ext4 without a journal
# allocating inodes right after many were deleted is slower.)
out() { mktemp -u "$W/out/$1.XXXXXX"; }
warm() { sync; find "$W/v" -type f -exec cat {} + >/dev/null; }
# timed_cp FROM: milliseconds of cp -a FROM into a fresh place.
timed_cp() {
    _o=$(out cp)
    _a=$(now)
    cp -a "$1" "$_o"
    _b=$(now)
    ms "$_a" "$_b"
}

mkdir -p "$W/out"
cp -a "$DOC" "$SRC/doc"
PQ="$PQVAULT -v $W/v --passphrase-file $W/pf"
echo bench-pass >"$W/pf"
$PQ -q init --kdf t=1,m=65536,p=1 >/dev/null 2>&1
if [ "$BIG_MB" -gt 0 ]; then
    head -c $((BIG_MB * 1048576)) /dev/urandom >"$SRC/big.bin"
    $PQ -q add "$SRC/doc" "$SRC/big.bin"
    rm -f "$SRC/big.bin"
else
    $PQ -q add "$SRC/doc"
fi

echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $DOC: $(find "$DOC" | wc -l) entries, $(du -sh "$DOC" | cut -f1); $ROUNDS rounds, ms"
gets="" tmps="" colds="" warms="" cats=""
for r in $(seq "$ROUNDS"); do
    warm
    g=$(out get)
    mkdir -p "$g"
    a=$(now)
    $PQ -q get doc -o "$g"
    b=$(now)
    get=$(ms "$a" "$b")
    warm
    tmp=$(timed_cp "$SRC/doc")
    warm
    $PQ mount "$MNT"
    cold=$(timed_cp "$MNT/doc")
    sync
    warmcp=$(timed_cp "$MNT/doc")
    fusermount3 -u "$MNT"
    line="round $r: get $get, cp tmpfs $tmp, mount cold $cold, mount warm $warmcp"
    gets="$gets $get" tmps="$tmps $tmp" colds="$colds $cold" warms="$warms $warmcp"
    if [ "$BIG_MB" -gt 0 ]; then
        warm
        $PQ mount "$MNT"
        cat "$MNT/big.bin" >/dev/null
        warm
        c=$(timed_cp "$MNT/doc")
        fusermount3 -u "$MNT"
        line="$line, after cat $c"
        cats="$cats $c"
    fi
    echo "$line"
done
g=$(median_of $gets)
t=$(median_of $tmps) c=$(median_of $colds) w=$(median_of $warms)
echo
echo "| get | cp -a from tmpfs | mount cold | mount warm |$([ -z "$cats" ] || echo ' mount cold after cat |')"
echo "| --- | --- | --- | --- |$([ -z "$cats" ] || echo ' --- |')"
if [ -n "$cats" ]; then
    k=$(median_of $cats)
    echo "| $g | $t | $c | $w | $k |"
    echo "| 1.00x | $(ratio "$t" "$g") | $(ratio "$c" "$g") | $(ratio "$w" "$g") | $(ratio "$k" "$g") |"
else
    echo "| $g | $t | $c | $w |"
    echo "| 1.00x | $(ratio "$t" "$g") | $(ratio "$c" "$g") | $(ratio "$w" "$g") |"
fi
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
