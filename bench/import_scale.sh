#!/bin/sh
# bench/import_scale.sh (make bench-import): how import scales with the
# entries of one writer's batch (issue 17 item 6: it was quadratic).  For
# each N of SIZES: a vault, a writer, a tree of N entries (directories of
# 999 small files each) added with the writer's credential, then timed:
# the first import (all new), and a second batch of the same tree with one
# file changed and one removed (the writer's newer state: every name
# replaced, one removed).  Median of RUNS.  Prints a Markdown table.
#
# Environment: PQVAULT (the binary), SIZES (default "10000 40000 160000"),
# RUNS (default 3), BENCH_DIR (scratch parent; default $TMPDIR or /tmp).
set -eu
PQV=${PQVAULT:-build/pqvault}
SIZES=${SIZES:-"10000 40000 160000"}
RUNS=${RUNS:-3}
W=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/pqv-import.XXXXXX")
trap 'rm -rf "$W"' EXIT
export PQVAULT_PASSPHRASE=import-bench-passphrase
export XDG_STATE_HOME="$W/state" HOME="$W"

now() { date +%s.%N; }
# median: the middle of the numbers on standard input.
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# timed CMD...: run CMD, print its wall time in seconds.
timed() {
    s=$(now)
    "$@" >/dev/null 2>&1 </dev/null
    e=$(now)
    printf "%.3f\n" "$(echo "$e - $s" | bc)"
}

echo "import of one writer's batch: median of $RUNS ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| entries | write-only add | import (new) | add of the newer state | import (all replaced) |"
echo "| --- | --- | --- | --- | --- |"
for n in $SIZES; do
    rm -rf "$W/src"
    python3 - "$W/src" "$n" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(root)
made = 0
d = 0
while made < n:
    sub = os.path.join(root, "d%04d" % d)
    os.makedirs(sub)
    made += 1
    for i in range(min(999, n - made)):
        with open(os.path.join(sub, "f%04d" % i), "w") as f:
            f.write("x%d\n" % i)
        made += 1
    d += 1
PY
    : >"$W/a" >"$W/i" >"$W/a2" >"$W/i2"
    r=0
    while [ "$r" -lt "$RUNS" ]; do
        rm -rf "$W/v" "$W/state" "$W/cred"
        "$PQV" -v "$W/v" -q init --kdf t=1,m=256,p=1 </dev/null >/dev/null 2>&1
        "$PQV" -v "$W/v" -q writer add w -o "$W/cred" </dev/null >/dev/null 2>&1
        timed "$PQV" -v "$W/v" -q add --recipient "$W/cred" "$W/src" >>"$W/a"
        timed "$PQV" -v "$W/v" -q import >>"$W/i"
        cp -a "$W/src" "$W/src2"
        echo changed >>"$W/src2/d0000/f0001"
        rm -f "$W/src2/d0000/f0002"
        timed "$PQV" -v "$W/v" -q add --recipient "$W/cred" "$W/src2" --name src >>"$W/a2"
        timed "$PQV" -v "$W/v" -q import >>"$W/i2"
        rm -rf "$W/src2"
        r=$((r + 1))
    done
    echo "| $n | $(median <"$W/a") s | $(median <"$W/i") s | $(median <"$W/a2") s | $(median <"$W/i2") s |"
done
