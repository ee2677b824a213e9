#!/bin/sh
# bench/compare_s3.sh (make bench-s3): pqvault over S3 side by side with
# rclone (the plaintext file) and restic, against a real Ceph RGW on
# 127.0.0.1 (tests/s3/with_rgw.sh starts one unless PQV_RGW_DIR names a
# running one), and through tests/s3/faultproxy.py adding 10 ms to every
# request.  Only drives the binaries.  Prints Markdown tables ready for
# docs/BENCHMARKS.md.  POSIX sh.
#
# Environment:
#   RUNS       repetitions (default 3), tools interleaved in each
#   BIG_MB     size of the random file, MiB (default 1024)
#   LIST_N     entries of the listed vault (default 10000, built once,
#              without the proxy)
#   DELAY_MS   the proxy's delay per request (default 10)
#   STEP_BUDGET  seconds (default 60): a proxied pqvault step whose run
#              took longer is not repeated (format 1 lists 10,000 entries
#              through the proxy in about 10 minutes, one request each)
#   PQVAULT    the binary (default build/pqvault)
#   BENCH_DIR  local scratch directory (default build/bench-s3; removed)
#   PQV_RGW_MEMSTORE_BYTES  the RGW's in-memory store when this script
#              starts it (default: enough for RUNS x 3 copies of BIG_MB)
#
# Run time on the 2-core VM: format 1 lists with one request per entry
# (about 57 ms each through the proxy): with the default LIST_N=10000 the
# one list through the proxy takes about 10 minutes, the whole run about
# 17; the baseline in docs/BENCHMARKS.md used LIST_N=2000: 6 minutes.
set -eu

RUNS=${RUNS:-3}
BIG_MB=${BIG_MB:-1024}
LIST_N=${LIST_N:-10000}
DELAY_MS=${DELAY_MS:-10}
PQVAULT=${PQVAULT:-build/pqvault}
BENCH_DIR=${BENCH_DIR:-build/bench-s3}
SMALL_N=500

HERE=$(cd "$(dirname "$0")" && pwd)
RGW=$HERE/../tests/s3/rgw.sh
. "$HERE/compare_lib.sh"
case $PQVAULT in /*) ;; *) PQVAULT=$(pwd)/$PQVAULT ;; esac

# Without a running RGW: start one for this run (its data live in memory:
# size it for the copies that are live before RGW's garbage collection).
if [ "${PQV_BENCH_S3_INNER:-0}" != 1 ]; then
    if ! { [ -n "${PQV_RGW_DIR:-}" ] && sh "$RGW" alive "$PQV_RGW_DIR" 2>/dev/null; }; then
        : "${PQV_RGW_MEMSTORE_BYTES:=$(((RUNS * 3 * BIG_MB + 2048) * 1048576))}"
        export PQV_RGW_MEMSTORE_BYTES
        unset PQV_RGW_DIR
        PQV_BENCH_S3_OWN=1
        export PQV_BENCH_S3_OWN
    fi
    PQV_BENCH_S3_INNER=1 PQVAULT=$PQVAULT exec sh "$HERE/../tests/s3/with_rgw.sh" sh "$0" "$@"
fi
[ -n "${PQV_RGW_DIR:-}" ] || { echo "compare_s3.sh: no RGW (Ceph not installed? sh scripts/install-deps.sh)" >&2; exit 1; }

missing=""
[ -x "$PQVAULT" ] || missing="$missing $PQVAULT"
for t in restic rclone python3 /usr/bin/time; do
    command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
[ -z "$missing" ] || { echo "compare_s3.sh: missing:$missing" >&2; exit 1; }

rm -rf "$BENCH_DIR"
mkdir -p "$BENCH_DIR"
W=$(cd "$BENCH_DIR" && pwd)
PROXY=bench$$
PREFIX=bench-s3-$$
B=$PQV_S3_BUCKET
DIRECT=$AWS_ENDPOINT_URL
cleanup() {
    cd /
    sh "$RGW" proxy-stop "$PQV_RGW_DIR" "$PROXY" 2>/dev/null || true
    # A cluster that outlives the run (PQV_RGW_DIR given) gets its space back.
    [ "${PQV_BENCH_S3_OWN:-0}" = 1 ] || rcl purge "rgw:$B/$PREFIX" >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mkdir -p "$W/home" "$W/xdg/state" "$W/xdg/cache" "$W/xdg/config" "$W/xdg/data" "$W/src" "$W/out"
export HOME="$W/home" XDG_STATE_HOME="$W/xdg/state" XDG_CACHE_HOME="$W/xdg/cache" \
    XDG_CONFIG_HOME="$W/xdg/config" XDG_DATA_HOME="$W/xdg/data"
export PQVAULT_PASSPHRASE="correct horse battery staple"
export RESTIC_PASSWORD="$PQVAULT_PASSPHRASE" RESTIC_CACHE_DIR="$W/xdg/cache/restic"
unset PQVAULT_DIR PQVAULT_KEYFILE RESTIC_REPOSITORY 2>/dev/null || true
PQ="$PQVAULT -q"

# rclone's remote "rgw" (the environment only reaches rclone); rclone
# refuses to start while AWS_CA_BUNDLE is set.
export RCLONE_CONFIG=/dev/null RCLONE_CONFIG_RGW_TYPE=s3 RCLONE_CONFIG_RGW_PROVIDER=Ceph \
    RCLONE_CONFIG_RGW_ENDPOINT="$DIRECT" RCLONE_CONFIG_RGW_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
    RCLONE_CONFIG_RGW_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
    RCLONE_CONFIG_RGW_REGION="${AWS_REGION:-us-east-1}"
rcl() { env -u AWS_CA_BUNDLE rclone "$@"; }

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$(date +%s)

# ---- Inputs -------------------------------------------------------------------
head -c $((BIG_MB * 1048576)) /dev/urandom >"$W/src/big"
python3 - "$W/src" "$SMALL_N" "$LIST_N" <<'EOF'
import os, random, sys
w, small, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(1)
def mk(path, k):
    with open(path, "wb") as f:
        f.write(os.urandom(k))
os.mkdir(os.path.join(w, "small"))
for i in range(small):
    mk(os.path.join(w, "small", "s%04d" % i), rnd.randint(1024, 16384))
per = (n + 99) // 100
made = 0
for d in range(100):
    dd = os.path.join(w, "listed", "d%02d" % d)
    os.makedirs(dd)
    for i in range(min(per, n - made)):
        mk(os.path.join(dd, "f%06d" % i), rnd.randint(1, 16))
    made = min(n, made + per)
EOF
sync
cd "$W/src"

# ---- Fixed vaults (direct): empty (unlock alone) and LIST_N entries ------------
S3=s3://$B/$PREFIX
$PQ -v "$S3/empty" init >/dev/null
$PQ -v "$S3/listed" init >/dev/null
t0=$(date +%s%N)
$PQ -v "$S3/listed" add listed >/dev/null
t1=$(date +%s%N)
list_build=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", (b - a) / 1e9}')
FORMAT=$($PQ -v "$S3/empty" info 2>/dev/null | sed -n 's/^format version:[[:space:]]*//p')

# ---- The proxy: DELAY_MS on every request ----------------------------------------
PURL=$(sh "$RGW" proxy-start "$PQV_RGW_DIR" "$PROXY")
PDIR=$PQV_RGW_DIR/proxy
echo "action=delay ms=$DELAY_MS" >"$PDIR/$PROXY.rules.new"
mv "$PDIR/$PROXY.rules.new" "$PDIR/$PROXY.rules"
PLOG=$PDIR/$PROXY.log
# nreq: requests the proxy has logged so far.
nreq() { grep -cv '^#' "$PLOG" || true; }
# counted STEP CMD...: timed, and the requests it sent through the proxy.
counted() {
    _n0=$(nreq)
    timed "$@"
    echo $(($(nreq) - _n0)) >>"$W/res/$1.req"
}
reqs() { sort -n "$W/res/$1.req" | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

gc() {
    # Deleted objects' tails wait for RGW's garbage collection (hours by
    # default): collect them now so the in-memory store does not fill.
    timeout 300 radosgw-admin -c "$PQV_RGW_DIR/ceph.conf" gc process --include-all >/dev/null 2>&1 || true
}

# ---- Repetitions -----------------------------------------------------------------
r=0
while [ "$r" -lt "$RUNS" ]; do
    r=$((r + 1))
    P=$PREFIX/r$r

    # The big file: pqvault, rclone (plaintext), restic; direct.
    $PQ -v "s3://$B/$P/pq" init >/dev/null
    timed pq_add $PQ -v "s3://$B/$P/pq" add big
    rm -rf "$W/out" && mkdir "$W/out"
    timed pq_get $PQ -v "s3://$B/$P/pq" get big -o "$W/out/big"
    [ "$r" -eq "$RUNS" ] && { cmp -s big "$W/out/big" && echo "- pqvault: identical" || echo "- pqvault: **differs**"; } >>"$W/verify"

    timed rclone_add env -u AWS_CA_BUNDLE rclone copy big "rgw:$B/$P/rclone/"
    rm -rf "$W/out" && mkdir "$W/out"
    timed rclone_get env -u AWS_CA_BUNDLE rclone copy "rgw:$B/$P/rclone/big" "$W/out/"
    [ "$r" -eq "$RUNS" ] && { cmp -s big "$W/out/big" && echo "- rclone: identical" || echo "- rclone: **differs**"; } >>"$W/verify"

    restic -q -r "s3:$DIRECT/$B/$P/restic" init >/dev/null
    timed restic_add restic -q -r "s3:$DIRECT/$B/$P/restic" backup big
    rm -rf "$W/out" && mkdir "$W/out"
    timed restic_get restic -q -r "s3:$DIRECT/$B/$P/restic" restore latest --target "$W/out"
    [ "$r" -eq "$RUNS" ] && { cmp -s big "$W/out/big" && echo "- restic: identical" || echo "- restic: **differs**"; } >>"$W/verify"
    rm -rf "$W/out" && mkdir "$W/out"

    # Through the proxy: unlock alone, 500 small files, list.
    counted unlock $PQ --s3-endpoint "$PURL" -v "$S3/empty" list
    if again small_add; then
        $PQ -v "s3://$B/$P/small" init >/dev/null
        counted small_add $PQ --s3-endpoint "$PURL" -v "s3://$B/$P/small" add small
    fi
    if again list; then
        TIMED_STDOUT=$W/list.out
        counted list $PQ --s3-endpoint "$PURL" -v "$S3/listed" list
        unset TIMED_STDOUT
    fi

    rcl purge "rgw:$B/$P" >/dev/null 2>&1
    gc
done
grep -q "delay:$DELAY_MS" "$PLOG" || { echo "compare_s3.sh: the proxy applied no delay" >&2; exit 1; }
T_END=$(date +%s)

# ---- Tables ------------------------------------------------------------------------
header "S3 comparison (bench/compare_s3.sh)"
echo "- New vaults are written in format ${FORMAT:-?} (\`pqvault info\`)"
echo "- Tools: $(ver rclone version), $(ver restic version); Ceph $(ver radosgw --version | awk '{print $3}') radosgw (memstore OSD) on 127.0.0.1"
echo "- $RUNS repetitions, tools interleaved in each; seconds, median (min-max); run took $((T_END - T_START)) s (RGW start not included); load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

pa=$(med pq_add); ra=$(med rclone_add); sa=$(med restic_add)
pg=$(med pq_get); rg=$(med rclone_get); sg=$(med restic_get)
pg2=$(med pq_get 2); rg2=$(med rclone_get 2); sg2=$(med restic_get 2)
t12() { awk -v p="$1" -v r="$2" -v s="$3" 'BEGIN{print (p <= 1.2 * r && p < s) ? 1 : 0}'; }
echo "### One ${BIG_MB} MiB random file, direct to the RGW"
echo
echo "| step | pqvault | rclone copy (plaintext) | restic | pqvault / rclone | pqvault / restic | target | pqvault peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
echo "| add / copy up / backup | $(cell pq_add) | $(cell rclone_add) | $(cell restic_add) | $(ratio "$pa" "$ra") | $(ratio "$pa" "$sa") | <= 1.2x rclone, < restic: $(met "$(t12 "$pa" "$ra" "$sa")") | $(rss pq_add) |"
echo "| get / copy down / restore | $(cell pq_get) | $(cell rclone_get) | $(cell restic_get) | $(ratio "$pg" "$rg") | $(ratio "$pg" "$sg") | <= 1.2x rclone, < restic: $(met "$(t12 "$pg" "$rg" "$sg")") | $(rss pq_get) |"
echo "| get, until durable (+ sync) | $(cell pq_get 2) | $(cell rclone_get 2) | $(cell restic_get 2) | $(ratio "$pg2" "$rg2") | $(ratio "$pg2" "$sg2") | | |"
echo
echo "Peak RSS of the others: rclone $(rss rclone_add) up, $(rss rclone_get) down; restic $(rss restic_add) backup, $(rss restic_get) restore. Retrieved files checked (last repetition):"
echo
cat "$W/verify"
echo

um=$(med unlock)
echo "### Through a proxy adding $DELAY_MS ms to every request (tests/s3/faultproxy.py)"
echo
echo "Unlock alone (\`list\` of an empty vault through the proxy): $(cell unlock), $(reqs unlock) requests. The $LIST_N-entry vault ($LIST_N files of 1-16 bytes in 100 directories; \`list\` printed $(wc -l <"$W/list.out") lines) was built once, directly, by one add in $list_build s."
echo
echo "| step | pqvault | minus unlock | requests | target | peak RSS |"
echo "| --- | --- | --- | --- | --- | --- |"
d=$(awk -v a="$(med small_add)" -v b="$um" 'BEGIN{print a - b}')
echo "| add $SMALL_N small files, 1-16 KiB (fresh vault, one command) | $(cell small_add) | $(minus "$(med small_add)" "$um") | $(reqs small_add) | unlock + 2 s: $(met "$(le "$d" 2)") | $(rss small_add) |"
d=$(awk -v a="$(med list)" -v b="$um" 'BEGIN{print a - b}')
echo "| list of the $LIST_N-entry vault | $(cell list) | $(minus "$(med list)" "$um") | $(reqs list) | unlock + 1.5 s: $(met "$(le "$d" 1.5)") | $(rss list) |"
echo "| unlock alone | $(cell unlock) | | $(reqs unlock) | | $(rss unlock) |"
echo
peak=0
for s in pq_add pq_get unlock small_add list; do
    m=$(awk 'BEGIN{m=0} $3>m{m=$3} END{print m}' "$W/res/$s")
    [ "$m" -gt "$peak" ] && peak=$m
done
echo "pqvault's peak RSS over all these steps: $(awk -v k="$peak" 'BEGIN{printf "%.0f MiB", k / 1024}') (target <= 200 MiB: $(met "$(le "$peak" 204800)"))."
