#!/bin/sh
# bench/compare.sh (make bench-compare; make bench with BENCH_COMPARE=1):
# pqvault side by side with restic, borg and tar + age, in one run, the
# tools interleaved within each repetition so that load hits them alike.
# Only drives the binaries (whatever the vault format inside).  Prints
# Markdown tables ready for docs/BENCHMARKS.md; targets of issues 10 and 12
# in a "target" column.  POSIX sh.
#
# Environment:
#   RUNS       repetitions (default 3); medians with min-max
#   BIG_MB     size of the random file, MiB (default 1024)
#   LARGE_N    entries of the large vault (default 100000, in 100
#              directories); the 100,000-entry parts take most of the time
#   TREE       the tree to copy (default /usr/share/doc)
#   PQVAULT    the binary (default build/pqvault)
#   BENCH_DIR  scratch directory (default build/bench-compare; removed at
#              the end); it is the file system measured
#   BORG_ENCRYPTION  borg's mode (default repokey: AES-CTR + HMAC-SHA256)
#   PQ_KDF     pqvault init's --kdf (default t=3,m=65536,p=4, the default)
#
# Run time on the 2-core VM with the defaults: about 16 minutes at load
# 4-5, of which building the 100,000-entry vault takes about 3 (format 1;
# LARGE_N=10000: well under a minute) and pqvault's restores of the tree
# about 3 (format 1 fsyncs every file); RUNS=1 BIG_MB=64 LARGE_N=2000 took
# 3.5 minutes.
set -eu

RUNS=${RUNS:-3}
BIG_MB=${BIG_MB:-1024}
LARGE_N=${LARGE_N:-100000}
TREE=${TREE:-/usr/share/doc}
PQVAULT=${PQVAULT:-build/pqvault}
BENCH_DIR=${BENCH_DIR:-build/bench-compare}
BORG_ENCRYPTION=${BORG_ENCRYPTION:-repokey}
PQ_KDF=${PQ_KDF:-t=3,m=65536,p=4}
TINY_N=3000
SMALL_N=500

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/compare_lib.sh"

case $PQVAULT in /*) ;; *) PQVAULT=$(pwd)/$PQVAULT ;; esac
missing=""
[ -x "$PQVAULT" ] || missing="$missing $PQVAULT"
for t in restic borg age age-keygen tar python3 strace /usr/bin/time; do
    command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
[ -z "$missing" ] || {
    echo "compare.sh: missing:$missing (make; sh scripts/install-deps.sh as root)" >&2
    exit 1
}
[ -d "$TREE" ] || { echo "compare.sh: no tree $TREE" >&2; exit 1; }

rm -rf "$BENCH_DIR"
mkdir -p "$BENCH_DIR"
W=$(cd "$BENCH_DIR" && pwd)
trap 'cd /; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM HUP

# Private state for every tool: nothing under the user's home.
mkdir -p "$W/home" "$W/xdg/state" "$W/xdg/cache" "$W/xdg/config" "$W/xdg/data" \
    "$W/src" "$W/out" "$W/repo"
export HOME="$W/home" XDG_STATE_HOME="$W/xdg/state" XDG_CACHE_HOME="$W/xdg/cache" \
    XDG_CONFIG_HOME="$W/xdg/config" XDG_DATA_HOME="$W/xdg/data"
export PQVAULT_PASSPHRASE="correct horse battery staple"
export RESTIC_PASSWORD="$PQVAULT_PASSPHRASE" RESTIC_CACHE_DIR="$W/xdg/cache/restic"
export BORG_PASSPHRASE="$PQVAULT_PASSPHRASE" BORG_BASE_DIR="$W/home"
export BORG_RELOCATED_REPO_ACCESS_IS_OK=yes BORG_CHECK_I_KNOW_WHAT_I_AM_DOING=NO
unset PQVAULT_DIR PQVAULT_KEYFILE RESTIC_REPOSITORY BORG_REPO 2>/dev/null || true
PQ="$PQVAULT -q"
age-keygen -o "$W/age.key" 2>/dev/null
RCPT=$(age-keygen -y "$W/age.key")

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$(date +%s)

# ---- Inputs ----------------------------------------------------------------
# The tree, copied so that page cache and permissions are the same for all.
cp -a "$TREE" "$W/src/doc"
tree_files=$(find "$W/src/doc" -type f | wc -l)
tree_links=$(find "$W/src/doc" -type l | wc -l)
tree_bytes=$(find "$W/src/doc" -type f -printf '%s\n' | awk '{s+=$1} END{print s+0}')
(cd "$W/src" && find doc -type f -print0 | sort -z | xargs -0 md5sum) >"$W/tree.md5"
head -c $((BIG_MB * 1048576)) /dev/urandom >"$W/src/big"
python3 - "$W/src" "$TINY_N" "$SMALL_N" "$LARGE_N" <<'EOF'
import os, random, sys
w, tiny, small, large = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(1)
def mk(path, n):
    with open(path, "wb") as f:
        f.write(os.urandom(n))
os.mkdir(os.path.join(w, "tiny"))
for i in range(tiny):
    mk(os.path.join(w, "tiny", "t%04d" % i), rnd.randint(1, 16))
os.mkdir(os.path.join(w, "small"))
for i in range(small):
    mk(os.path.join(w, "small", "s%04d" % i), rnd.randint(1024, 16384))
per = (large + 99) // 100
made = 0
for d in range(100):
    dd = os.path.join(w, "large", "d%02d" % d)
    os.makedirs(dd)
    for i in range(min(per, large - made)):
        mk(os.path.join(dd, "f%06d" % i), rnd.randint(1, 16))
    made = min(large, made + per)
EOF
tiny_bytes=$(find "$W/src/tiny" -type f -printf '%s\n' | awk '{s+=$1} END{print s+0}')
sync
cd "$W/src"

# ---- Helpers -----------------------------------------------------------------
pq_init() { $PQ -v "$1" init --kdf "$PQ_KDF" >/dev/null; }
borg_init() { borg init -e "$BORG_ENCRYPTION" "$1" >/dev/null 2>&1; }
restic_init() { restic -q -r "$1" init >/dev/null; }
fresh_out() { rm -rf "$W/out"; mkdir "$W/out"; }

# check_tree TOOL: the restored tree's regular files against the source's
# (appended to $W/verify; symbolic links counted).
check_tree() {
    if (cd "$W/out" && find doc -type f -print0 | sort -z | xargs -0 md5sum) |
        cmp -s - "$W/tree.md5"; then
        v="all $tree_files regular files identical"
    else
        v="**regular files differ**"
    fi
    echo "- $1: $v; symbolic links restored: $(find "$W/out/doc" -type l | wc -l) of $tree_links" >>"$W/verify"
}
check_big() {
    if cmp -s "$W/src/big" "$W/out/big"; then v="identical"; else v="**differs**"; fi
    echo "- $1, ${BIG_MB} MiB file: $v" >>"$W/verify.big"
}

# ---- Fixed vaults: empty (unlock alone) and the large one --------------------
pq_init "$W/repo/v-empty"
FORMAT=$($PQ -v "$W/repo/v-empty" info 2>/dev/null | sed -n 's/^format version:[[:space:]]*//p')
pq_init "$W/repo/v-large"
t0=$(date +%s%N)
$PQ -v "$W/repo/v-large" add large >/dev/null
t1=$(date +%s%N)
large_build=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", (b - a) / 1e9}')
large_entries=$($PQ -v "$W/repo/v-large" list | wc -l)
one_name=large/d50/f$(printf %06d 42)
[ "$LARGE_N" -ge 5100 ] || one_name=large/d00/f000000

# Does this build add an unchanged tree again (incremental add)?
readd=yes
readd_note=""
if ! $PQ -v "$W/repo/v-large" add large >/dev/null 2>"$W/.readd"; then
    if grep -q 'already exists' "$W/.readd"; then
        readd=no
        readd_note="n/a (no incremental add in this build)"
    else
        readd=no
        readd_note="failed: $(head -1 "$W/.readd")"
    fi
fi

# ---- Repetitions (tools interleaved) ------------------------------------------
r=0
while [ "$r" -lt "$RUNS" ]; do
    r=$((r + 1))
    R=$W/repo/r$r
    mkdir -p "$R"

    # (a) the tree: add/backup, then restore, each tool in turn.
    pq_init "$R/pq-tree"
    timed pq_tree_add $PQ -v "$R/pq-tree" add doc
    fresh_out
    timed pq_tree_get $PQ -v "$R/pq-tree" get doc -o "$W/out"
    [ "$r" -eq "$RUNS" ] && check_tree pqvault
    rm -rf "$R/pq-tree"

    restic_init "$R/restic-tree"
    timed restic_tree_add restic -q -r "$R/restic-tree" backup doc
    fresh_out
    timed restic_tree_get restic -q -r "$R/restic-tree" restore latest --target "$W/out"
    [ "$r" -eq "$RUNS" ] && check_tree restic
    rm -rf "$R/restic-tree"

    borg_init "$R/borg-tree"
    timed borg_tree_add borg create "$R/borg-tree::a" doc
    fresh_out
    timed borg_tree_get sh -c 'cd "$1" && borg extract "$2::a"' sh "$W/out" "$R/borg-tree"
    [ "$r" -eq "$RUNS" ] && check_tree borg
    rm -rf "$R/borg-tree"

    timed age_tree_add sh -c 'tar -cf - doc | age -r "$1" >"$2"' sh "$RCPT" "$R/doc.tar.age"
    fresh_out
    timed age_tree_get sh -c 'age -d -i "$1" "$2" | tar -xf - -C "$3"' sh "$W/age.key" "$R/doc.tar.age" "$W/out"
    [ "$r" -eq "$RUNS" ] && check_tree "tar + age"
    rm -f "$R/doc.tar.age"
    fresh_out

    # (b) the big file, with dd conv=fsync as the durable-write limit.
    timed dd_big dd if=big of="$R/dd.out" bs=4M conv=fsync status=none
    rm -f "$R/dd.out"

    pq_init "$R/pq-big"
    timed pq_big_add $PQ -v "$R/pq-big" add big
    timed pq_big_get $PQ -v "$R/pq-big" get big -o "$W/out/big"
    [ "$r" -eq "$RUNS" ] && check_big pqvault
    rm -rf "$R/pq-big"
    fresh_out

    restic_init "$R/restic-big"
    timed restic_big_add restic -q -r "$R/restic-big" backup big
    timed restic_big_get restic -q -r "$R/restic-big" restore latest --target "$W/out"
    [ "$r" -eq "$RUNS" ] && check_big restic
    rm -rf "$R/restic-big"
    fresh_out

    borg_init "$R/borg-big"
    timed borg_big_add borg create "$R/borg-big::a" big
    timed borg_big_get sh -c 'cd "$1" && borg extract "$2::a"' sh "$W/out" "$R/borg-big"
    [ "$r" -eq "$RUNS" ] && check_big borg
    rm -rf "$R/borg-big"
    fresh_out

    timed age_big_add age -r "$RCPT" -o "$R/big.age" big
    timed age_big_get age -d -i "$W/age.key" -o "$W/out/big" "$R/big.age"
    [ "$r" -eq "$RUNS" ] && check_big age
    rm -f "$R/big.age"
    fresh_out

    # (e) small files and the large vault, against unlock alone.
    timed unlock $PQ -v "$W/repo/v-empty" list
    pq_init "$R/pq-small"
    timed pq_small_add $PQ -v "$R/pq-small" add small
    rm -rf "$R/pq-small"
    timed pq_large_get $PQ -v "$W/repo/v-large" get "$one_name" -o "$W/out/one"
    rm -f "$W/out/one"
    timed pq_large_list $PQ -v "$W/repo/v-large" list
    # (f) the unchanged large tree added again.
    if [ "$readd" = yes ]; then
        timed pq_large_readd $PQ -v "$W/repo/v-large" add large
    fi
    rm -rf "$R"
done

# ---- Once: repository sizes, per-file overhead, fsync calls --------------------
# (c) the big file then the tree (two commands) in one repository per tool,
# and (durability) the fsync-family system calls of each tool's own
# default, counted by strace (--seccomp-bpf: only those calls stop).
S=$W/repo/size
mkdir -p "$S"
sc() {
    # sc CMD...: count fsync, fdatasync, sync_file_range, syncfs, sync.
    strace -f --seccomp-bpf -qq -e trace=fsync,fdatasync,sync_file_range,syncfs,sync \
        -o "$W/.strace" "$@" >/dev/null 2>&1 || { echo "compare.sh: $* failed" >&2; exit 1; }
    echo "$1 $(grep -c -E '(fsync|fdatasync|sync_file_range|syncfs|sync)\(' "$W/.strace")" >>"$W/fsyncs"
}
pq_init "$S/pq"
restic_init "$S/restic"
borg_init "$S/borg"
sync
# $W/fsyncs gets one line per call of sc, read back by line number below.
sc $PQ -v "$S/pq" add big
sc $PQ -v "$S/pq" add doc
sc restic -q -r "$S/restic" backup big
sc restic -q -r "$S/restic" backup doc
sc borg create "$S/borg::big" big
sc borg create "$S/borg::doc" doc
sc age -r "$RCPT" -o "$S/big.age" big
sc sh -c 'tar -cf - doc | age -r "$1" >"$2"' sh "$RCPT" "$S/doc.tar.age"
sync
# (pqvault's without its 16 MiB reserve: free space held for rm and gc on a
# full disk, no data.)
size_pq=$(( $(du -sb "$S/pq" | cut -f1) - $(stat -c %s "$S/pq/reserve" 2>/dev/null || echo 0) ))
size_restic=$(du -sb "$S/restic" | cut -f1)
size_borg=$(du -sb "$S/borg" | cut -f1)
size_age=$(du -cb "$S/big.age" "$S/doc.tar.age" | tail -1 | cut -f1)
fresh_out
sc $PQ -v "$S/pq" get doc -o "$W/out"
fresh_out
sc restic -q -r "$S/restic" restore latest --path "$W/src/doc" --target "$W/out"
fresh_out
sc sh -c 'cd "$1" && borg extract "$2::doc"' sh "$W/out" "$S/borg"
fresh_out
sc sh -c 'age -d -i "$1" "$2" | tar -xf - -C "$3"' sh "$W/age.key" "$S/doc.tar.age" "$W/out"
fresh_out
rm -rf "$S"

# (d) 3,000 files of 1-16 bytes, one add (and restic, borg for context).
pq_init "$W/repo/pq-tiny"
empty_pq=$(( $(du -sb "$W/repo/pq-tiny" | cut -f1) - $(stat -c %s "$W/repo/pq-tiny/reserve" 2>/dev/null || echo 0) ))
$PQ -v "$W/repo/pq-tiny" add tiny >/dev/null
tiny_pq=$(( $(du -sb "$W/repo/pq-tiny" | cut -f1) - $(stat -c %s "$W/repo/pq-tiny/reserve" 2>/dev/null || echo 0) ))
blobs_pq=$(find "$W/repo/pq-tiny" -type f ! -name lock | wc -l)
restic_init "$W/repo/restic-tiny"
empty_restic=$(du -sb "$W/repo/restic-tiny" | cut -f1)
restic -q -r "$W/repo/restic-tiny" backup tiny >/dev/null
tiny_restic=$(du -sb "$W/repo/restic-tiny" | cut -f1)
blobs_restic=$(find "$W/repo/restic-tiny" -type f ! -name lock | wc -l)
borg_init "$W/repo/borg-tiny"
empty_borg=$(du -sb "$W/repo/borg-tiny" | cut -f1)
borg create "$W/repo/borg-tiny::a" tiny
tiny_borg=$(du -sb "$W/repo/borg-tiny" | cut -f1)
blobs_borg=$(find "$W/repo/borg-tiny" -type f ! -name lock ! -name 'lock.*' | wc -l)
rm -rf "$W/repo/pq-tiny" "$W/repo/restic-tiny" "$W/repo/borg-tiny"

T_END=$(date +%s)

# ---- Tables ----------------------------------------------------------------------
header "Comparison (bench/compare.sh)"
echo "- Tools: $(ver restic version), $(ver borg --version), age $(ver age --version), $(ver tar --version), $(ver python3 --version)"
echo "- New vaults are written in format ${FORMAT:-?} (\`pqvault info\`)"
echo "- borg \`init -e $BORG_ENCRYPTION\` (default lz4 compression); restic repository v2 (default auto compression); age X25519 recipient; pqvault \`init --kdf $PQ_KDF\`"
echo "- $RUNS repetitions, tools interleaved in each; seconds, median (min-max); run took $((T_END - T_START)) s; load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

um=$(med unlock)

# row LABEL STEP_PREFIX COL: one line per tool column.
trow() {
    printf "| %s | %s | %s | %s | %s |" "$1" "$(cell "pq_$2" "$3")" "$(cell "restic_$2" "$3")" \
        "$(cell "borg_$2" "$3")" "$(cell "age_$2" "$3")"
}
echo "### (a) The tree: a copy of $TREE ($tree_files files, $tree_links symbolic links, $(mib "$tree_bytes"))"
echo
echo "| step | pqvault | restic | borg | tar + age | pqvault / restic | target | pqvault peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for s in add get; do
    case $s in
    add) what="add / backup / create / tar \\| age"; tgt=1.0 ;;
    get) what="get / restore / extract / age -d \\| tar -x"; tgt=1.2 ;;
    esac
    for c in 1 2; do
        p=$(med "pq_tree_$s" "$c")
        q=$(med "restic_tree_$s" "$c")
        if [ "$c" = 1 ]; then m="$what, tool's default"; else m="$what, until durable (+ sync)"; fi
        echo "$(trow "$m" "tree_$s" "$c") $(ratio "$p" "$q") | <= ${tgt}x: $(met "$(le "$p" "$(awk -v q="$q" -v t="$tgt" 'BEGIN{print q * t}')")") | $(rss "pq_tree_$s") |"
    done
done
echo
echo "Restored trees checked (last repetition):"
echo
cat "$W/verify"
echo

echo "### (b) One ${BIG_MB} MiB random file"
echo
echo "| step | pqvault | restic | borg | age | dd bs=4M conv=fsync | pqvault / restic | pqvault / dd | target | pqvault peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for s in add get; do
    for c in 1 2; do
        p=$(med "pq_big_$s" "$c")
        q=$(med "restic_big_$s" "$c")
        d=$(med dd_big 2)
        if [ "$c" = 1 ]; then m="$s, tool's default"; else m="$s, until durable (+ sync)"; fi
        echo "$(trow "$m" "big_$s" "$c" | sed 's/ |$//') | $(cell dd_big 2) | $(ratio "$p" "$q") | $(ratio "$p" "$d") | | $(rss "pq_big_$s") |"
    done
done
echo
cat "$W/verify.big"
echo

echo "### (c) Repository size after storing the ${BIG_MB} MiB file, then the tree (apparent bytes, du -sb; pqvault without its 16 MiB reserve)"
echo
echo "| | pqvault | restic | borg | tar + age (two files) | target |"
echo "| --- | --- | --- | --- | --- | --- |"
echo "| bytes | $size_pq | $size_restic | $size_borg | $size_age | |"
echo "| size | $(mib "$size_pq") | $(mib "$size_restic") | $(mib "$size_borg") | $(mib "$size_age") | pqvault <= restic: $(met "$(le "$size_pq" "$size_restic")") |"
echo "| size / content ($(mib $((BIG_MB * 1048576 + tree_bytes)))) | $(ratio "$size_pq" $((BIG_MB * 1048576 + tree_bytes))) | $(ratio "$size_restic" $((BIG_MB * 1048576 + tree_bytes))) | $(ratio "$size_borg" $((BIG_MB * 1048576 + tree_bytes))) | $(ratio "$size_age" $((BIG_MB * 1048576 + tree_bytes))) | |"
echo

echo "### (d) $TINY_N files of 1-16 bytes ($tiny_bytes bytes in all) in one directory, one add"
echo
echo "| | pqvault | target | restic (context) | borg (context) |"
echo "| --- | --- | --- | --- | --- |"
ovh() { awk -v s="$1" -v c="$tiny_bytes" -v n="$TINY_N" -v e="${2:-0}" 'BEGIN{printf "%.0f", (s - e - c) / n}'; }
o=$(ovh "$tiny_pq")
echo "| (repository size - content) / $TINY_N, bytes per file | $o | <= 200: $(met "$(le "$o" 200)") | $(ovh "$tiny_restic") | $(ovh "$tiny_borg") |"
echo "| the same, less the empty repository ($empty_pq / $empty_restic / $empty_borg bytes) | $(ovh "$tiny_pq" "$empty_pq") | | $(ovh "$tiny_restic" "$empty_restic") | $(ovh "$tiny_borg" "$empty_borg") |"
echo "| blobs (files in the repository, lock excluded) | $blobs_pq | <= 10: $(met "$(le "$blobs_pq" 10)") | $blobs_restic | $blobs_borg |"
echo

echo "### (e, f) Small files and a $LARGE_N-entry vault, pqvault against unlock alone"
echo
echo "Unlock alone (\`list\` of an empty vault, KDF $PQ_KDF): $(cell unlock). The $LARGE_N-entry vault ($LARGE_N files of 1-16 bytes in 100 directories; \`list\` prints $large_entries lines) was built once by one add in $large_build s."
echo
echo "| step | pqvault | minus unlock | target | peak RSS |"
echo "| --- | --- | --- | --- | --- |"
lrow() {
    # lrow LABEL STEP LIMIT_S LIMIT_TEXT
    p=$(med "$2")
    echo "| $1 | $(cell "$2") | $(minus "$p" "$um") | unlock + $4: $(met "$(le "$(awk -v a="$p" -v b="$um" 'BEGIN{print a - b}')" "$3")") | $(rss "$2") |"
}
lrow "add $SMALL_N small files, 1-16 KiB (fresh vault, one command)" pq_small_add 0.25 "0.25 s"
lrow "get one small file from the $LARGE_N-entry vault" pq_large_get 0.020 "20 ms"
lrow "list of the $LARGE_N-entry vault" pq_large_list 0.5 "0.5 s"
if [ "$readd" = yes ]; then
    lrow "add the unchanged $LARGE_N-file tree again" pq_large_readd 2 "2 s"
else
    echo "| add the unchanged $LARGE_N-file tree again | $readd_note | | unlock + 2 s | |"
fi
echo "| unlock alone | $(cell unlock) | | | $(rss unlock) |"
echo
echo "Targets are for LARGE_N=100000."
echo

echo "### Durability: fsync-family calls of each tool's default (strace, one run)"
echo
echo "| | pqvault | restic | borg | tar + age |"
echo "| --- | --- | --- | --- | --- |"
f() { sed -n "${1}p" "$W/fsyncs" | awk '{print $NF}'; }
echo "| store the ${BIG_MB} MiB file | $(f 1) | $(f 3) | $(f 5) | $(f 7) (age) |"
echo "| store the tree | $(f 2) | $(f 4) | $(f 6) | $(f 8) |"
echo "| restore the tree | $(f 9) | $(f 10) | $(f 11) | $(f 12) |"
echo
echo "\"Tool's default\" rows time the command alone; \"until durable\" adds a \`sync\` after every tool's command (an untimed \`sync\` runs before each step). The sync is system-wide, so other work on the machine can add to it."
