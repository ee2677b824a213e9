#!/bin/sh
# bench/multi.sh: one command, one epoch, however many operands (issue 21).
# N tiny files (default 300) as N operands (what a shell glob gives) against
# the same files as one directory operand, for add, rm and get: the median
# wall time of RUNS runs each, the ratio, and the epochs (segments) written.
# Target: every ratio within 1.5.  POSIX sh; no other tool needed.
#
# Environment:
#   PQVAULT   the program (default build/pqvault)
#   N         files (default 300)
#   RUNS      repetitions, the median reported (default 5)
#   BENCH_DIR scratch directory (default a mktemp -d, removed)
#
# Quick check: N=50 RUNS=1 sh bench/multi.sh
set -eu
PQVAULT=${PQVAULT:-$PWD/build/pqvault}
N=${N:-300}
RUNS=${RUNS:-5}
if [ -n "${BENCH_DIR:-}" ]; then
    W=$BENCH_DIR
    mkdir -p "$W"
else
    W=$(mktemp -d "${TMPDIR:-/tmp}/pqvbench.XXXXXX")
    trap 'rm -rf "$W"' EXIT
fi
export XDG_STATE_HOME="$W/state"
V=$W/vault
PF=$W/pass
printf 'bench passphrase\n' >"$PF"
pq() { "$PQVAULT" -q -v "$V" --passphrase-file "$PF" "$@"; }

mkdir -p "$W/src/tree"
i=0
while [ "$i" -lt "$N" ]; do
    i=$((i + 1))
    printf 'file %d\n' "$i" >"$W/src/tree/f$i.txt"
done

# now: seconds since the epoch, to the nanosecond.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# epoch: the vault's newest epoch (info's line).
epoch() { pq info 2>/dev/null | awk '$1 == "epoch:" { print $2 }'; }

fresh() {
    rm -rf "$V"
    pq init --kdf t=1,m=256,p=1 >/dev/null 2>&1
}

# timed OUT CMD...: CMD's wall time appended to OUT.
timed() {
    out=$1
    shift
    t0=$(now)
    "$@"
    t1=$(now)
    elapsed "$t0" "$t1" >>"$out"
}

names() { i=0; while [ "$i" -lt "$N" ]; do i=$((i + 1)); printf 'tree/f%d.txt\n' "$i"; done; }

: >"$W/add1" ; : >"$W/addN" ; : >"$W/rm1" ; : >"$W/rmN" ; : >"$W/get1" ; : >"$W/getN"
r=0
cd "$W/src/tree"
while [ "$r" -lt "$RUNS" ]; do
    r=$((r + 1))
    # add: the directory, then the files (a fresh vault each; the files
    # go in as top-level names, as "add tree/*" would store them).
    fresh
    (cd "$W/src" && timed "$W/add1" pq add tree)
    s0=$(epoch)
    # get: the directory, then every name (into fresh directories).
    rm -rf "$W/o1" "$W/oN"
    timed "$W/get1" pq get tree -o "$W/o1"
    # shellcheck disable=SC2046
    timed "$W/getN" pq get $(names) -o "$W/oN"
    # rm: every name, then (re-added) the directory.
    s1=$(epoch)
    # shellcheck disable=SC2046
    timed "$W/rmN" pq rm $(names)
    s2=$(epoch)
    (cd "$W/src" && pq add tree)
    s3=$(epoch)
    timed "$W/rm1" pq rm tree
    s4=$(epoch)
    fresh
    s5=$(epoch)
    # shellcheck disable=SC2046
    timed "$W/addN" pq add $(ls)
    s6=$(epoch)
done
cd "$W"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / (a > 0 ? a : 0.001) }'; }
report() {
    one=$(median <"$W/${1}1")
    many=$(median <"$W/${1}N")
    printf '| %-4s | %8s s | %8s s | %5sx |\n' "$1" "$one" "$many" "$(ratio "$one" "$many")"
}
echo "$N files, median of $RUNS run(s); $("$PQVAULT" --version | head -n 1)"
echo
echo "| cmd  | 1 dir      | $N operands | ratio |"
echo "|------|------------|--------------|-------|"
report add
report rm
report get
echo
echo "epochs (last run): add of $N operands $((s6 - s5)), rm of $N names $((s2 - s1)), rm of the directory $((s4 - s3)), get of $N names $((s1 - s0))"
