#!/bin/sh
# bench/mount.sh: `pqvault mount` (issue 22) beside `restic mount` and
# `borg mount` on the same data, in one run: the tree /usr/share/doc (DOC,
# default) and a 1 GiB random file (BIG_MB, default 1024), stored by each
# tool in one backup, then mounted fresh for:
#   ready      from starting the mount command until `ls` of the backup's
#              tree answers (pqvault: the command returns then; restic and
#              borg: polled every 10 ms)
#   first      the first access after ready: stat + cat of one file deep
#   ls -lR     of the tree; find | wc -l; du -s
#   tar        tar cf - of the tree piped to wc -c (every byte read)
#   cp -a      of the tree out of the mount (pqvault: beside `get`)
#   rand 4K    1,000 reads of 4 KiB at random offsets of the big file
#              (before anything else read it: the kernel's cache is cold)
#   seq        cat of the big file to /dev/null, MB/s (pqvault: beside
#              `get -o -`)
#   rss        the mount process's peak RSS (VmHWM) at the end
# then pqvault's mount against its get, interleaved, medians of ROUNDS
# rounds (default 5; cat of the big file against get -o -, cp -a of the
# tree against get of it; issue 22's ratios): cp -a out of a fresh mount
# (the ratio), and cp -a after a cat of the big file through the same
# mount, beside it.
# Then a vault of LARGE_N files (default 100000: LARGE_N / 100 directories
# of 100 files of a few bytes), backed up twice by each tool (10 files
# changed between), each row on a fresh mount (cold):
#   find       find MOUNT | wc -l: the whole mount (pqvault: the root, the
#              snapshots and versions/; restic: snapshots/, ids/, hosts/
#              and tags/; borg: the archives) after the first backup and
#              after the second (median of 3 fresh mounts), and the
#              entries counted
#   find tree  find of the newest backup's tree alone
#   du         du -s of the newest backup's tree
#   rss        the server's peak RSS after du
# (LARGE_N=0 skips it; FIND_TIMEOUT, default 300 s, bounds each command.)
# As root with /dev/fuse.  The repositories are in the page cache (all
# three alike, warm: read again after a sync before the first row and
# before cat, and before pqvault's get): the figures are the tools' own
# costs.  W: scratch directory.
set -eu
PQVAULT=${PQVAULT:-$PWD/build/pqvault}
PQVAULT=$(realpath "$PQVAULT")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/compare_lib.sh"   # (median_of)
DOC=${DOC:-/usr/share/doc}
BIG_MB=${BIG_MB:-1024}
ROUNDS=${ROUNDS:-5}
W=${W:-$(mktemp -d "${TMPDIR:-/tmp}/pqvbench-mount.XXXXXX")}
mkdir -p "$W"
W=$(realpath "$W")
export XDG_STATE_HOME="$W/state" RESTIC_PASSWORD=bench-pass BORG_PASSPHRASE=bench-pass \
    BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes BORG_RELOCATED_REPO_ACCESS_IS_OK=yes \
    RESTIC_CACHE_DIR="$W/restic-cache" BORG_BASE_DIR="$W/borg-base"
MNT=$W/mnt
mkdir -p "$MNT"
cleanup() {
    if grep -q " $MNT fuse" /proc/mounts 2>/dev/null; then
        fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true
    fi
    [ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s%N; }
el() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", (b - a) / 1e9}'; }
mbps() { awk -v s="$1" -v mb="$BIG_MB" 'BEGIN{if (s > 0) printf "%.0f", mb * 1.048576 / s; else print "-"}'; }
# tm CMD...: seconds CMD takes (its output discarded).
tm() { _a=$(now); "$@" >/dev/null 2>&1; _b=$(now); el "$_a" "$_b"; }
mounted() { grep -q " $MNT fuse" /proc/mounts; }
# server_pid: the process serving $MNT (its command line names it).
server_pid() {
    for p in /proc/[0-9]*; do
        if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "$MNT"; then
            basename "$p"
            return
        fi
    done
}
unmount() {
    fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT"
    # (restic's and borg's servers exit on their own; wait until they did)
    while [ -n "$(server_pid)" ]; do sleep 0.05; done
}

RAND=$W/rand.py
cat >"$RAND" <<'EOF'
import os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
r = random.Random(22)
offs = [r.randrange(0, size - 4096) for _ in range(1000)]
t = time.monotonic()
for o in offs:
    if len(os.pread(fd, 4096, o)) != 4096:
        sys.exit("short read")
print("%.3f" % (time.monotonic() - t))
EOF

echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# data: $DOC ($(find "$DOC" | wc -l) entries, $(du -sh "$DOC" | cut -f1)) and a $BIG_MB MiB random file"
head -c $((BIG_MB * 1048576)) /dev/urandom >"$W/big.bin"
DEEP=$(find "$DOC" -mindepth 2 -type f -size -64k | sort | head -n 1)
DEEP=${DEEP#"$DOC"/}

# warm REPO: the repository's files read once (untimed), after a sync:
# every tool's timed reads start with the repository in the page cache
# and nothing of an earlier step being written back (this machine's
# kernel pages out page cache left unused for a minute, and cp -a leaves
# 150 MB to write back).
warm() { sync; find "$1" -type f -exec cat {} + >/dev/null; }

# out_path NAME: a new path under $W/out for one timed copy (not made); the
# copies are removed only once the timings are done.  (This machine's
# ext4 runs without a journal, and then allocating an inode skips, one
# buffer lookup each, every inode deleted in the last minute: a copy of
# the tree right after removing the previous one took 3.0-5.0 s against
# 1.9 s into a fresh place, and `get` paid the same way.)
out_path() { mkdir -p "$W/out"; mktemp -u "$W/out/$1.XXXXXX"; }

# measure TOOL START_CMD TREE BIGFILE REPO: one fresh mount, every row.
measure() {
    tool=$1 start=$2 tree=$3 big=$4 repo=$5
    warm "$repo"
    t0=$(now)
    eval "$start"
    until ls "$tree" >/dev/null 2>&1; do sleep 0.01; done
    t1=$(now)
    ready=$(el "$t0" "$t1")
    a=$(now); stat "$tree/$DEEP" >/dev/null; cat "$tree/$DEEP" >/dev/null; b=$(now)
    first=$(el "$a" "$b")
    rand=$(python3 "$RAND" "$big")
    lslr=$(tm ls -lR "$tree")
    find_t=$(tm sh -c "find '$tree' | wc -l")
    du_t=$(tm du -s "$tree")
    tar_t=$(tm sh -c "tar cf - -C '$tree' . | wc -c")
    cp_t=$(tm cp -a "$tree" "$(out_path cp)")
    warm "$repo"
    seq_t=$(tm cat "$big")
    pid=$(server_pid)
    rss=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status" 2>/dev/null || echo -)
    unmount
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s MB/s) | %s MiB |\n' \
        "$tool" "$ready" "$first" "$lslr" "$find_t" "$du_t" "$tar_t" "$cp_t" "$rand" \
        "$seq_t" "$(mbps "$seq_t")" "$rss"
}

ROWS=$W/rows
: >"$ROWS"

# ---- pqvault ----
PQ="$PQVAULT -v $W/pqv --passphrase-file $W/pf"
echo bench-pass >"$W/pf"
$PQ -q init --kdf t=1,m=65536,p=1 >/dev/null 2>&1
$PQ -q add "$DOC" "$W/big.bin"
warm "$W/pqv"
unlock=$(tm $PQ list big.bin)
get_big=$(tm sh -c "$PQ -q get big.bin -o - | cat >/dev/null")
get_dir=$(out_path get)
mkdir -p "$get_dir"
warm "$W/pqv"
get_tree=$(tm $PQ -q get "$(basename "$DOC")" -o "$get_dir")
measure pqvault "$PQ mount $MNT" "$MNT/$(basename "$DOC")" "$MNT/big.bin" "$W/pqv" >>"$ROWS"
# byte-exact, and metadata by stat (mode, owner, size, mtime in ns)
$PQ mount "$MNT"
if diff -r --no-dereference "$DOC" "$MNT/$(basename "$DOC")" >/dev/null 2>&1; then exact=yes; else exact=NO; fi
(cd "$DOC" && find . -exec stat -c '%n %f %u %g %s %.9Y' {} + | sort) >"$W/st1"
(cd "$MNT/$(basename "$DOC")" && find . -exec stat -c '%n %f %u %g %s %.9Y' {} + | sort) >"$W/st2"
# (directories' sizes are the mount's own)
awk '$2 !~ /^41/' "$W/st1" >"$W/st1f"
awk '$2 !~ /^41/' "$W/st2" >"$W/st2f"
if cmp -s "$W/st1f" "$W/st2f"; then meta=yes; else meta=NO; fi
unmount

# The mount against get, interleaved, medians of ROUNDS (issue 22's
# ratios: single runs of either move by 1.5x on this VM, and the median
# of 3 by 0.3x from one run to the next): each round cp -a of the
# tree out of a fresh mount; a fresh mount, cat of the big file, cp -a of
# the tree again (cats: this VM hands out pages its host has taken back
# after such a cat, and the mount's page cache pays twice what get's
# writes pay: docs/BENCHMARKS.md); then get -o - of the big file and get
# of the tree; the repository warm before each.
cats="" gets="" cps="" cpcats="" gtrees=""
for round in $(seq "$ROUNDS"); do
    warm "$W/pqv"
    $PQ mount "$MNT"
    cps="$cps $(tm cp -a "$MNT/$(basename "$DOC")" "$(out_path cp)")"
    unmount
    warm "$W/pqv"
    $PQ mount "$MNT"
    cats="$cats $(tm cat "$MNT/big.bin")"
    warm "$W/pqv"
    cpcats="$cpcats $(tm cp -a "$MNT/$(basename "$DOC")" "$(out_path cp)")"
    unmount
    warm "$W/pqv"
    gets="$gets $(tm sh -c "$PQ -q get big.bin -o - | cat >/dev/null")"
    get_dir=$(out_path get)
    mkdir -p "$get_dir"
    warm "$W/pqv"
    gtrees="$gtrees $(tm $PQ -q get "$(basename "$DOC")" -o "$get_dir")"
done
# ($W/out stays until the end: removing it here would slow the next
# tools' copies, as above.)
cat_m=$(median_of $cats) get_m=$(median_of $gets) cp_m=$(median_of $cps) gtree_m=$(median_of $gtrees)
cpcat_m=$(median_of $cpcats)

# ---- restic ----
if command -v restic >/dev/null 2>&1; then
    restic -q -r "$W/restic" init >/dev/null
    restic -q -r "$W/restic" backup "$DOC" "$W/big.bin" >/dev/null
    measure "restic $(restic version | awk '{print $2}')" \
        "restic -q -r $W/restic mount $MNT >/dev/null 2>&1 &" \
        "$MNT/snapshots/latest$DOC" "$MNT/snapshots/latest$W/big.bin" "$W/restic" >>"$ROWS"
fi

# ---- borg ----
if command -v borg >/dev/null 2>&1; then
    borg init -e repokey "$W/borg" >/dev/null 2>&1
    borg create "$W/borg::a" "$DOC" "$W/big.bin" >/dev/null 2>&1
    measure "borg $(borg --version | awk '{print $2}')" \
        "borg mount $W/borg::a $MNT" "$MNT${DOC}" "$MNT$W/big.bin" "$W/borg" >>"$ROWS"
fi

# ---- the large vault: find and du ----
LARGE_N=${LARGE_N:-100000}
FIND_TIMEOUT=${FIND_TIMEOUT:-300}
LROWS=$W/lrows
: >"$LROWS"
# tmt SECS CMD...: seconds CMD takes, or "> SECS" when it ran longer.
tmt() {
    _lim=$1
    shift
    _a=$(now)
    if timeout -k 5 "$_lim" "$@" >/dev/null 2>&1; then _b=$(now); el "$_a" "$_b"; else echo "> $_lim"; fi
}
# fresh START TREE: a new mount, answering.
fresh() {
    eval "$1"
    until ls "$2" >/dev/null 2>&1; do sleep 0.01; done
}
# find_once START TREE: find of the whole mount on a fresh mount (seconds).
find_once() {
    fresh "$1" "$2"
    tmt "$FIND_TIMEOUT" sh -c "find '$MNT' | wc -l"
    unmount
}
# large TOOL START_CMD TREE ONE: the row of the large vault, each column
# on a fresh mount: find of the whole mount after one backup (ONE, timed
# before the second), after two, its entries, find of the tree, du -s.
large() {
    tool=$1 start=$2 tree=$3 one=$4
    fresh "$start" "$tree"
    count=$(timeout -k 5 "$FIND_TIMEOUT" find "$MNT" 2>/dev/null | wc -l)
    unmount
    # (Two backups: the median of 3 fresh mounts, the runs beside it; a
    # run that timed out counts as the longest.)
    f1=$(find_once "$start" "$tree")
    f2=$(find_once "$start" "$tree")
    f3=$(find_once "$start" "$tree")
    find_all="$(printf '%s\n' "$f1" "$f2" "$f3" | sed 's/^> .*/999999/' | sort -n | sed -n 2p |
        sed 's/^999999$/> '"$FIND_TIMEOUT"'/') (runs: $f1, $f2, $f3)"
    fresh "$start" "$tree"
    find_tree=$(tmt "$FIND_TIMEOUT" sh -c "find '$tree' | wc -l")
    unmount
    fresh "$start" "$tree"
    du_t=$(tmt "$FIND_TIMEOUT" du -s "$tree")
    pid=$(server_pid)
    rss=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status" 2>/dev/null || echo -)
    unmount
    printf '| %s | %s | %s | %s | %s | %s | %s MiB |\n' "$tool" "$one" "$find_all" "$count" \
        "$find_tree" "$du_t" "$rss"
}
# The tree: LARGE_N / 100 directories of 100 files of a few bytes; change
# makes the second backup's ten changed files, restore the first state.
L=$W/large
make_large() {
    rm -rf "$L"
    python3 -c 'import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for d in range((n + 99) // 100):
    p = os.path.join(root, "d%05d" % d)
    os.makedirs(p)
    for f in range(min(100, n - 100 * d)):
        with open(os.path.join(p, "f%03d.txt" % f), "w") as fh:
            fh.write("file %d %d\n" % (d, f))' "$L" "$LARGE_N"
}
change() { for d in 0 1 2 3 4 5 6 7 8 9; do echo changed >>"$L/d0000$d/f001.txt"; done; }
if [ "$LARGE_N" -gt 0 ]; then
    make_large
    PQL="$PQVAULT -v $W/pqv-large --passphrase-file $W/pf"
    $PQL -q init --kdf t=1,m=65536,p=1 >/dev/null 2>&1
    $PQL -q add "$L"
    one=$(find_once "$PQL mount $MNT" "$MNT/large")
    change
    $PQL -q add "$L"
    large pqvault "$PQL mount $MNT" "$MNT/large" "$one" >>"$LROWS"
    if command -v restic >/dev/null 2>&1; then
        make_large
        restic -q -r "$W/restic-large" init >/dev/null
        restic -q -r "$W/restic-large" backup "$L" >/dev/null
        rstart="restic -q -r $W/restic-large mount $MNT >/dev/null 2>&1 &"
        one=$(find_once "$rstart" "$MNT/snapshots/latest$L")
        change
        restic -q -r "$W/restic-large" backup "$L" >/dev/null
        large "restic $(restic version | awk '{print $2}')" "$rstart" "$MNT/snapshots/latest$L" \
            "$one" >>"$LROWS"
    fi
    if command -v borg >/dev/null 2>&1; then
        make_large
        borg init -e repokey "$W/borg-large" >/dev/null 2>&1
        borg create "$W/borg-large::a" "$L" >/dev/null 2>&1
        one=$(find_once "borg mount $W/borg-large $MNT" "$MNT/a$L")
        change
        borg create "$W/borg-large::b" "$L" >/dev/null 2>&1
        large "borg $(borg --version | awk '{print $2}')" \
            "borg mount $W/borg-large $MNT" "$MNT/b$L" "$one" >>"$LROWS"
    fi
fi

echo
echo "| tool | ready (s) | first access (s) | ls -lR (s) | find \\| wc -l (s) | du -s (s) | tar cf - \\| wc -c (s) | cp -a out (s) | 1,000 random 4 KiB (s) | cat 1 GiB (s) | peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
cat "$ROWS"
if [ "$LARGE_N" -gt 0 ]; then
    echo
    echo "A vault of $LARGE_N files in $(( (LARGE_N + 99) / 100 )) directories, after one backup and after a second (10 files changed), each column on a fresh mount:"
    echo
    echo "| tool | find MOUNT \\| wc -l, one backup (s) | find MOUNT \\| wc -l, two backups (s; median of 3) | entries (two) | find of the tree (s) | du -s of the tree (s) | peak RSS |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    cat "$LROWS"
fi
echo
echo "Load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pqvault: unlock + list of one name $unlock s; get -o - of the big file $get_big s ($(mbps "$get_big") MB/s); get of the tree $get_tree s; the tree through the mount byte-exact (diff -r): $exact, metadata (stat: mode, owner, size, mtime ns): $meta"
echo "pqvault, the mount against get, interleaved, medians of $ROUNDS (cat and the first cp -a each on a fresh mount):"
echo "  cat of the big file $cat_m s ($(mbps "$cat_m") MB/s; runs:$cats) against get -o - $get_m s ($(mbps "$get_m") MB/s; runs:$gets): $(awk -v c="$cat_m" -v g="$get_m" 'BEGIN{printf "%.0f", 100 * g / c}')% of get's throughput"
echo "  cp -a of the tree $cp_m s (runs:$cps) against get of the tree $gtree_m s (runs:$gtrees): $(awk -v c="$cp_m" -v g="$gtree_m" 'BEGIN{printf "%.2f", c / g}')x"
echo "  cp -a of the tree after the cat, on its mount: $cpcat_m s (runs:$cpcats): $(awk -v c="$cpcat_m" -v g="$gtree_m" 'BEGIN{printf "%.2f", c / g}')x"
