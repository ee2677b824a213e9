#!/bin/sh
# bench/e2e.sh: the end-to-end rows of the prior versions' table, each step
# timed with the pqvault binary (every step includes unlocking with the
# default Argon2id parameters), beside the machine's limits measured in the
# same run.  Prints Markdown tables.
#
# Environment: RUNS (3), BIG_MB (1024), SMALL (500), PQVAULT (the binary,
# default build/pqvault), BENCH_DIR (scratch directory on the filesystem to
# measure, default build/bench-e2e; removed at the end).
set -eu

RUNS=${RUNS:-3}
BIG_MB=${BIG_MB:-1024}
SMALL=${SMALL:-500}
PQVAULT=${PQVAULT:-build/pqvault}
BENCH_DIR=${BENCH_DIR:-build/bench-e2e}
EXTRA=30 # records beyond SMALL in the list vault (about 530 in all)

case $PQVAULT in /*) ;; *) PQVAULT=$(pwd)/$PQVAULT ;; esac
[ -x "$PQVAULT" ] || { echo "e2e.sh: $PQVAULT not built" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "e2e.sh: /usr/bin/time missing (Debian package 'time')" >&2; exit 1; }

rm -rf "$BENCH_DIR"
mkdir -p "$BENCH_DIR"
W=$(cd "$BENCH_DIR" && pwd)
trap 'rm -rf "$W"' EXIT INT TERM
printf 'correct horse battery staple\n' >"$W/pass"
export PQVAULT_PASSPHRASE="correct horse battery staple"
PQ="$PQVAULT -q"

# ---- Inputs -------------------------------------------------------------
head -c $((BIG_MB * 1048576)) /dev/urandom >"$W/big"
mkdir "$W/small" "$W/extra"
python3 - "$W" "$SMALL" "$EXTRA" <<'EOF'
import os, random, sys
w, n, extra = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(1)
for d, k in (("small", n), ("extra", extra)):
    for i in range(k):
        with open(os.path.join(w, d, "f%04d" % i), "wb") as f:
            f.write(os.urandom(rnd.randint(1024, 16384)))
EOF
sync

# ---- Helpers --------------------------------------------------------------

# timed OUTVAR CMD...: run CMD under GNU time (for its peak RSS); append
# "seconds maxrss_kib" to $W/OUTVAR (wall time from the nanosecond clock:
# GNU time's %e has 10 ms steps).
timed() {
    out=$1
    shift
    t0=$(date +%s%N)
    /usr/bin/time -o "$W/.t" -f "%M" "$@" >/dev/null
    t1=$(date +%s%N)
    echo "$(( (t1 - t0) / 1000 )) $(cat "$W/.t")" |
        awk '{printf "%.6f %s\n", $1 / 1e6, $2}' >>"$W/$out"
}

# threads OUTVAR CMD...: run CMD, polling /proc for its peak thread count
# (a separate, untimed run: polling takes CPU).
threads() {
    out=$1
    shift
    "$@" >/dev/null &
    pid=$!
    peak=0
    while [ -r /proc/$pid/status ]; do
        t=$(sed -n 's/^Threads:[[:space:]]*//p' /proc/$pid/status 2>/dev/null || true)
        [ -n "$t" ] && [ "$t" -gt "$peak" ] && peak=$t
    done
    wait $pid || true
    echo "$peak" >>"$W/$out"
}

new_vault() {
    rm -rf "$1"
    $PQ -v "$1" init >/dev/null
}

# stat FILE: "median (min-max)" of column 1 (seconds).
stat() {
    sort -n "$W/$1" | awk '{v[NR]=$1} END{m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2;
        p = m < 1 ? 3 : 2; printf "%.*f (%.*f-%.*f)", p, m, p, v[1], p, v[NR]}'
}
med() {
    sort -n "$W/$1" | awk '{v[NR]=$1} END{printf "%.4f", NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}
# peak RSS (MiB) over all runs of a step: column 2 of its file.
rss() {
    awk 'BEGIN{m=0} $2>m{m=$2} END{printf "%.0f", m/1024}' "$W/$1"
}
maxof() {
    sort -n "$W/$1" | tail -1
}

# ---- Fixed vaults: empty (unlock alone) and ~530 records (list) ----------
new_vault "$W/v-empty"
new_vault "$W/v-list"
$PQ -v "$W/v-list" add "$W/small" "$W/extra" >/dev/null
nrec=$($PQ -v "$W/v-list" list | wc -l)
small_name=$($PQ -v "$W/v-list" list | grep 'f0123' | head -1)

# ---- Runs (steps interleaved so load hits them alike) ---------------------
r=0
while [ $r -lt "$RUNS" ]; do
    r=$((r + 1))
    rm -f "$W/dd.out"
    sync
    timed dd dd if=/dev/zero of="$W/dd.out" bs=4M count=$((BIG_MB / 4)) conv=fsync status=none
    rm -f "$W/dd.out"
    timed unlock $PQ -v "$W/v-empty" list
    new_vault "$W/v-big"
    sync
    timed addbig $PQ -v "$W/v-big" add "$W/big" --name big
    rm -f "$W/big.out"
    sync
    timed getbig $PQ -v "$W/v-big" get big -o "$W/big.out"
    rm -f "$W/big.out"
    new_vault "$W/v-small"
    sync
    timed addsmall $PQ -v "$W/v-small" add "$W/small"
    timed list $PQ -v "$W/v-list" list
    rm -f "$W/one.out"
    timed getsmall $PQ -v "$W/v-list" get "$small_name" -o "$W/one.out"
    # Write-only adds (issue 13): the recipient alone, no key file read, no
    # Argon2id; then the owner's import of the small-file batch.
    new_vault "$W/v-wo"
    $PQ -v "$W/v-wo" export-recipient -o "$W/rcpt" --force
    sync
    timed woaddsmall env -u PQVAULT_PASSPHRASE $PQ -v "$W/v-wo" add --recipient "$W/rcpt" "$W/small"
    timed import $PQ -v "$W/v-wo" import
    new_vault "$W/v-wobig"
    $PQ -v "$W/v-wobig" export-recipient -o "$W/rcpt" --force
    sync
    timed woaddbig env -u PQVAULT_PASSPHRASE $PQ -v "$W/v-wobig" add --recipient "$W/rcpt" "$W/big" --name big
done

# Peak threads: one more, untimed, run of each step.
new_vault "$W/v-big"
threads th_addbig $PQ -v "$W/v-big" add "$W/big" --name big
rm -f "$W/big.out"
threads th_getbig $PQ -v "$W/v-big" get big -o "$W/big.out"
cmp "$W/big" "$W/big.out"
rm -f "$W/big.out"
new_vault "$W/v-small"
threads th_addsmall $PQ -v "$W/v-small" add "$W/small"
threads th_list $PQ -v "$W/v-list" list
rm -f "$W/one.out"
threads th_getsmall $PQ -v "$W/v-list" get "$small_name" -o "$W/one.out"
threads th_unlock $PQ -v "$W/v-empty" list

# ---- Tables ----------------------------------------------------------------
dd_m=$(med dd)
un_m=$(med unlock)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2fx", a / b}'; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%+.0f ms", (a - b) * 1000}'; }

echo "### End to end (seconds, median (min-max) of $RUNS runs; each step includes unlocking)"
echo
echo "| Step | pqvault | machine limit, same run | ratio or gap | peak RSS | peak threads | Go 0.5 | Rust 0.6 |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
echo "| add ${BIG_MB} MiB file (fresh vault) | $(stat addbig) | dd conv=fsync: $(stat dd) | $(ratio "$(med addbig)" "$dd_m") | $(rss addbig) MiB | $(maxof th_addbig) | 41.7 s (1 GiB) | 29.6 s |"
echo "| add $SMALL small files, 1-16 KiB (fresh vault, one command) | $(stat addsmall) | unlock alone: $(stat unlock) | $(minus "$(med addsmall)" "$un_m") | $(rss addsmall) MiB | $(maxof th_addsmall) | 123.9 s | 79.0 s |"
echo "| get ${BIG_MB} MiB file | $(stat getbig) | dd conv=fsync: $(stat dd) | $(ratio "$(med getbig)" "$dd_m") | $(rss getbig) MiB | $(maxof th_getbig) | 9.8 s | 16.2 s |"
echo "| list ($nrec records) | $(stat list) | unlock alone: $(stat unlock) | $(minus "$(med list)" "$un_m") | $(rss list) MiB | $(maxof th_list) | 4.95 s | 0.74 s |"
echo "| get one small file | $(stat getsmall) | unlock alone: $(stat unlock) | $(minus "$(med getsmall)" "$un_m") | $(rss getsmall) MiB | $(maxof th_getsmall) | 5.24 s | 0.74 s |"
echo "| write-only add $SMALL small files (recipient only; target <= 0.5 s) | $(stat woaddsmall) | | | $(rss woaddsmall) MiB | | | |"
echo "| write-only add ${BIG_MB} MiB file (target <= 1.15x dd) | $(stat woaddbig) | dd conv=fsync: $(stat dd) | $(ratio "$(med woaddbig)" "$dd_m") | $(rss woaddbig) MiB | | | |"
echo "| import of the $SMALL-file batch (target <= unlock + 0.5 s) | $(stat import) | unlock alone: $(stat unlock) | $(minus "$(med import)" "$un_m") | $(rss import) MiB | | | |"
echo "| unlock alone (list of an empty vault) | $(stat unlock) | | | $(rss unlock) MiB | $(maxof th_unlock) | | |"
echo
echo "Limits: \`dd if=/dev/zero bs=4M count=$((BIG_MB / 4)) conv=fsync\` in the same directory is the durable-write limit for add and get; \`pqvault list\` of an empty vault is unlock alone. Ratio: pqvault / limit; gap: pqvault - unlock alone."
