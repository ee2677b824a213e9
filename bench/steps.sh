#!/bin/sh
# bench/steps.sh (make bench-real, make bench-compare): five steps of a
# large random file, one after another, backed up after each by pqvault,
# restic 0.14 and borg 1.2 side by side (the tools interleaved at every step
# of every repetition), with the time of each step and each repository's
# size after it.  Prints Markdown tables ready for docs/BENCHMARKS.md.
# POSIX sh.
#
# The file is d/big, BIG_MB MiB of random data (made once, copied afresh
# into every repetition).  The steps, each followed by every tool's backup
# into its own repository (pqvault `add d`, restic `backup d`, borg
# `create REPO::sN d`):
#   1. d/big as it is;
#   2. `chmod 600 d/big` (metadata only);
#   3. 10 writes of 4 KiB (the same random bytes in every run) at the 4 KiB
#      blocks floor((2i+1) * B / 20), i = 0..9, B the file's 4 KiB blocks
#      (5%, 15%, ..., 95% into it), with dd conv=notrunc;
#   4. `cp d/big d/big2` (a second copy of the same content);
#   5. `mv d e` (the directory renamed), then pqvault `add e` (it may print
#      notes), restic `backup e`, borg `create REPO::s5 e`.
# Times are until durable (the command, then `sync`, for every tool).
#
# Environment (and those of bench/real_lib.sh: RUNS, PQVAULT, BENCH_DIR,
# PQ_KDF, BORG_ENCRYPTION, BENCH_PASSPHRASE, PQ_ADD_OPTS):
#   BIG_MB   size of the file, MiB (default 200)
#
# Quick check: BIG_MB=8 RUNS=1 sh bench/steps.sh
set -eu
NAME=steps
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/real_lib.sh"
BIG_MB=${BIG_MB:-200}
need restic borg dd /usr/bin/time
scratch

head -c $((BIG_MB * 1048576)) /dev/urandom >"$W/big.orig"
head -c 40960 /dev/urandom >"$W/writes"
blocks=$((BIG_MB * 256))

# backup_all STEP DIR: every tool's backup of DIR after step STEP; the sizes
# after it (last repetition) to $W/sizes.
backup_all() {
    timed "pq_s$1" $PQ -v "$R/pq" add $PQ_ADD_OPTS "$2"
    timed "restic_s$1" restic -q -r "$R/restic" backup "$2"
    timed "borg_s$1" borg create "$R/borg::s$1" "$2"
    [ "$last" = no ] || echo "$1 $(size_of "$R/pq") $(size_of "$R/restic") $(size_of "$R/borg")" >>"$W/sizes"
}

r=0
while [ "$r" -lt "$RUNS" ]; do
    r=$((r + 1))
    R=$W/repo/r$r
    mkdir -p "$R"
    last=no
    [ "$r" -eq "$RUNS" ] && last=yes
    rm -rf "$W/src/d" "$W/src/e"
    mkdir "$W/src/d"
    cp "$W/big.orig" "$W/src/d/big"
    cd "$W/src"
    pq_init "$R/pq"
    restic_init "$R/restic"
    borg_init "$R/borg"
    [ "$last" = no ] || echo "0 $(size_of "$R/pq") $(size_of "$R/restic") $(size_of "$R/borg")" >"$W/sizes"

    backup_all 1 d
    chmod 600 d/big
    backup_all 2 d
    i=0
    while [ "$i" -lt 10 ]; do
        dd if="$W/writes" of=d/big bs=4096 count=1 skip="$i" seek=$(((2 * i + 1) * blocks / 20)) \
            conv=notrunc status=none
        i=$((i + 1))
    done
    backup_all 3 d
    cp d/big d/big2
    backup_all 4 d
    mv d e
    backup_all 5 e
    cd "$W"
    rm -rf "$R" "$W/src/e"
done

# ---- Tables ------------------------------------------------------------------
label() {
    case $1 in
    0) echo "empty repository (init)" ;;
    1) echo "1. add d (d/big, $BIG_MB MiB random)" ;;
    2) echo "2. chmod 600 d/big, add d" ;;
    3) echo "3. 10 writes of 4 KiB at scattered offsets, add d" ;;
    4) echo "4. cp d/big d/big2, add d" ;;
    5) echo "5. mv d e, add e" ;;
    esac
}
header "Five steps of a $BIG_MB MiB file (bench/steps.sh)"
tools_line
footer
echo
echo "### Time of each step (backup after the change, until durable)"
echo
echo "| step | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
for s in 1 2 3 4 5; do row "$(label "$s")" "s$s" 2; done
echo
echo "### Repository size after each step (MB = 10^6 bytes, du -sb, pqvault without its 16 MiB reserve; last repetition)"
echo
echo "| after step | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
while read -r s a b c; do
    echo "| $(label "$s") | $(mb "$a") | $(mb "$b") | $(mb "$c") | $(ratio "$a" "$b") |"
done <"$W/sizes"
echo
echo "Growth of each step (MB added to the repository):"
echo
echo "| step | pqvault | restic | borg |"
echo "| --- | --- | --- | --- |"
awk 'NR > 1 { printf "| %s | %+.1f MB | %+.1f MB | %+.1f MB |\n", $1, ($2 - a) / 1e6, ($3 - b) / 1e6, ($4 - c) / 1e6 }
    { a = $2; b = $3; c = $4 }' "$W/sizes"
echo
echo "The same steps, the command alone (each tool's own durability), and peak RSS:"
echo
echo "| step | pqvault | restic | borg | pqvault / restic | peak RSS pqvault / restic / borg |"
echo "| --- | --- | --- | --- | --- | --- |"
for s in 1 2 3 4 5; do
    echo "$(row "$(label "$s")" "s$s" 1) $(rss "pq_s$s") / $(rss "restic_s$s") / $(rss "borg_s$s") |"
done
