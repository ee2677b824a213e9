#!/bin/sh
# bench/history_scale.sh (make bench-history-scale): issue 20's scale
# targets for history.  A vault of ENTRIES entries (ENTRIES/100 directories
# of 100 files of a few bytes), then SNAPSHOTS snapshots more, each an add
# of one changed small file (so every snapshot holds the whole tree); then,
# each RUNS times:
#   - `log` of all the snapshots;
#   - `get --at E f -o -` of the changed file from the oldest, the middle
#     and the newest snapshot (E: their epochs);
#   - `list` of the newest state, beside `list` of a copy of the vault made
#     right after the first add (one snapshot, the same tree);
#   - the baseline: `get f -o -` from a vault of one file, same key file
#     parameters: what unlocking and opening cost, which the targets allow
#     on top ("log within unlock + 0.2 s", "get --at within unlock + 50 ms").
# Prints a Markdown table for docs/BENCHMARKS.md.  restic is not run here:
# 1,000 backups of a 100,000-file tree would take it over an hour; its
# snapshot listing is in bench/history.sh.  POSIX sh.
#
# Environment (and bench/real_lib.sh's RUNS, PQVAULT, BENCH_DIR, PQ_KDF):
#   ENTRIES    files in the tree (default 100000)
#   SNAPSHOTS  snapshots after the first (default 1000)
# PQ_KDF defaults here to t=1,m=8192,p=1 (the building takes SNAPSHOTS
# unlocks); the baseline uses the same parameters.
#
# Quick check: ENTRIES=2000 SNAPSHOTS=50 RUNS=1 sh bench/history_scale.sh
set -eu
NAME=history-scale
HERE=$(cd "$(dirname "$0")" && pwd)
PQ_KDF=${PQ_KDF:-t=1,m=8192,p=1}
. "$HERE/real_lib.sh"
ENTRIES=${ENTRIES:-100000}
SNAPSHOTS=${SNAPSHOTS:-1000}
need python3 /usr/bin/time
scratch

V=$W/repo/vault
V1=$W/repo/vault-one-snapshot
VB=$W/repo/baseline
python3 - "$W/src/tree" "$ENTRIES" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%04d" % (i // 100))
    if i % 100 == 0:
        os.makedirs(d)
    with open(os.path.join(d, "f%03d" % (i % 100)), "w") as f:
        f.write("file %d\n" % i)
EOF
pq_init "$V"
t0=$(date +%s%N)
$PQ -v "$V" add "$W/src/tree"
t1=$(date +%s%N)
cp -a "$V" "$V1"
# (A copy elsewhere is a vault of its own to the local state.)
for i in $(seq 1 "$SNAPSHOTS"); do
    printf 'version %d\n' "$i" >"$W/src/f"
    $PQ -v "$V" add "$W/src/f"
done
t2=$(date +%s%N)
pq_init "$VB"
printf 'version 0\n' >"$W/src/b"
$PQ -v "$VB" add "$W/src/b"

epochs=$($PQ -v "$V" log --json | python3 -c '
import json, sys
e = sorted(s["epoch"] for s in json.load(sys.stdin))
print(len(e), e[1], e[len(e) // 2], e[-1])')
set -- $epochs
nsnap=$1 oldest=$2 middle=$3 newest=$4
for r in $(seq 1 "$RUNS"); do
    timed baseline $PQ -v "$VB" get b -o -
    timed log $PQ -v "$V" log
    timed at_oldest $PQ -v "$V" --at "$oldest" get f -o -
    timed at_middle $PQ -v "$V" --at "$middle" get f -o -
    timed at_newest $PQ -v "$V" --at "$newest" get f -o -
    timed list_many $PQ -v "$V" list
    timed list_one $PQ -v "$V1" list
done
# The oldest snapshot holding f gives its first version.
[ "$($PQ -v "$V" --at "$oldest" get f -o -)" = "version 1" ] || {
    echo "$SELF: get --at $oldest gave the wrong version" >&2
    exit 1
}

b=$(med baseline)
over() { awk -v a="$(med "$1")" -v b="$b" 'BEGIN{printf "%+.3f", a - b}'; }
echo "## History at scale: $nsnap snapshots of a $ENTRIES-entry vault (bench/history_scale.sh), $(date -u '+%Y-%m-%d %H:%M') UTC, pqvault $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
echo "- $(pqvault_version 2>/dev/null || $PQVAULT --version | head -1); key file \`--kdf $PQ_KDF\`; $RUNS runs, median (min-max) seconds; load at start: $LOAD0, at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- building: first add of $ENTRIES entries $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", (b - a) / 1e9}') s; $SNAPSHOTS adds of one file into it $(awk -v a="$t1" -v b="$t2" 'BEGIN{printf "%.0f", (b - a) / 1e9}') s; vault $(du -sh "$V" | cut -f1), $(ls "$V/segments" | wc -l) segments"
echo
echo "| command | seconds | over the baseline | target |"
echo "| --- | --- | --- | --- |"
echo "| baseline: \`get\` of one file from a one-file vault (unlock and open) | $(cell baseline) | | |"
echo "| \`log\` of $nsnap snapshots | $(cell log) | $(over log) | unlock + 0.2 s |"
echo "| \`get --at $oldest\` (the oldest) of one file | $(cell at_oldest) | $(over at_oldest) | unlock + 0.05 s |"
echo "| \`get --at $middle\` (the middle) of one file | $(cell at_middle) | $(over at_middle) | unlock + 0.05 s |"
echo "| \`get --at $newest\` (the newest) of one file | $(cell at_newest) | $(over at_newest) | unlock + 0.05 s |"
echo "| \`list\` of the newest state, $nsnap snapshots kept | $(cell list_many) | $(over list_many) | no slower than with one |"
echo "| \`list\` of the same tree, one snapshot | $(cell list_one) | $(over list_one) | |"
echo
echo "peak RSS: log $(rss log), get --at $(rss at_oldest), list $(rss list_many)"
