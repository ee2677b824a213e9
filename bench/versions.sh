#!/bin/sh
# bench/versions.sh (make bench-real, make bench-compare): a version series
# of a real tree backed up by pqvault, restic 0.14 and borg 1.2 side by
# side, in one run, the tools interleaved at every version of every
# repetition.  Prints Markdown tables ready for docs/BENCHMARKS.md.  POSIX sh.
#
# Version 1 is the Linux kernel tree (as bench/kernel.sh unpacks it) or
# TREE; versions 2, 3 and 4 are made from the one before, in place, by
# bench/mutate.py --profile version --seed SEED+V (deterministic: see its
# header; per version 2% of the files edited at random offsets, 1% renamed or
# moved, 1% deleted, 1% new, the largest file appended 1 MiB).  Each version
# is backed up in turn by each tool into its own repository, new in every
# repetition: pqvault `add TREE` again into the same vault (every command is
# an epoch; names gone from the source are kept, the tool's default),
# restic `backup TREE` (its parent snapshot found by path), borg `create
# REPO::vV TREE`.  Then the last version is restored by each tool into an
# empty directory of its own (none deleted between the tools) until
# durable (pqvault get -o DIR; restic restore latest + sync; borg extract +
# sync) and checked against the source in the last repetition.  Every
# repetition starts again from a fresh copy of version 1.
#
# Environment (and those of bench/real_lib.sh: RUNS, PQVAULT, BENCH_DIR,
# PQ_KDF, BORG_ENCRYPTION, BENCH_PASSPHRASE, PQ_ADD_OPTS, BENCH_FRESH_FS):
#   TREE            version 1 (copied; default: the kernel tree)
#   KERNEL_TARBALL, KERNEL_SUBSET   as bench/kernel.sh, without TREE
#   SEED            version V is made with seed SEED+V (default 0)
#
# Quick check: TREE=/usr/share/doc/python3 RUNS=1 sh bench/versions.sh
set -eu
NAME=versions
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/real_lib.sh"
TREE=${TREE:-}
SEED=${SEED:-0}
need restic borg tar python3 md5sum /usr/bin/time
scratch
fresh_fs_init

mkdir -p "$W/v1"
if [ -n "$TREE" ]; then
    [ -d "$TREE" ] || { echo "$SELF: no tree $TREE" >&2; exit 1; }
    TN=$(basename "$TREE")
    cp -a "$TREE" "$W/v1/$TN"
    what="a copy of $TREE"
else
    TN=linux
    kernel_tree "$W/v1/$TN"
    what="the kernel tree, $(basename "$KERNEL_TARBALL")"
    [ -z "$KERNEL_SUBSET" ] || what="$what, KERNEL_SUBSET=$KERNEL_SUBSET"
fi
tree_stats "$W/v1/$TN"
v1_files=$t_files v1_bytes=$t_bytes v1_links=$t_links v1_dirs=$t_dirs

: >"$W/verify"
: >"$W/mutations"
r=0
while [ "$r" -lt "$RUNS" ]; do
    r=$((r + 1))
    fresh_fs
    R=$F/repo/r$r
    mkdir -p "$R"
    last=no
    [ "$r" -eq "$RUNS" ] && last=yes
    rm -rf "$W/src/$TN"
    cp -a "$W/v1/$TN" "$W/src/$TN"
    cd "$W/src"
    pq_init "$R/pq"
    restic_init "$R/restic"
    borg_init "$R/borg"
    sync

    v=1
    while [ "$v" -le 4 ]; do
        if [ "$v" -gt 1 ]; then
            m=$(python3 "$HERE/mutate.py" --profile version --seed $((SEED + v)) "$TN")
            [ "$r" -gt 1 ] || echo "- version $v: \`$m\`" >>"$W/mutations"
        fi
        warm "$TN"
        timed "pq_v$v" $PQ -v "$R/pq" add $PQ_ADD_OPTS "$TN"
        warm "$TN"
        timed "restic_v$v" restic -q -r "$R/restic" backup "$TN"
        warm "$TN"
        timed "borg_v$v" borg create "$R/borg::v$v" "$TN"
        if [ "$last" = yes ]; then
            echo "$v $(size_of "$R/pq") $(size_of "$R/restic") $(size_of "$R/borg")" >>"$W/sizes"
        fi
        v=$((v + 1))
    done

    if [ "$last" = yes ]; then
        tree_stats "$TN"
        t_links_src=$t_links
        tree_sums . "$TN" >"$W/v4.md5"
    fi
    # Each tool restores into a directory of its own: none deleted
    # between the tools (the deletions' cost would fall on the next one).
    mkdir "$F/out.pq" "$F/out.restic" "$F/out.borg"
    warm "$R/pq"
    timed pq_get $PQ -v "$R/pq" get "$TN" -o "$F/out.pq"
    [ "$last" = no ] || verify pqvault "$W/v4.md5" "$F/out.pq" "$TN" >>"$W/verify"
    warm "$R/restic"
    timed restic_get restic -q -r "$R/restic" restore latest --target "$F/out.restic"
    [ "$last" = no ] || verify restic "$W/v4.md5" "$F/out.restic" "$TN" >>"$W/verify"
    warm "$R/borg"
    timed borg_get sh -c 'cd "$1" && borg extract "$2::v4"' sh "$F/out.borg" "$R/borg"
    [ "$last" = no ] || verify borg "$W/v4.md5" "$F/out.borg" "$TN" >>"$W/verify"
    cd "$W"
    rm -rf "$R" "$F/out.pq" "$F/out.restic" "$F/out.borg"
    sync
done

# ---- Tables ------------------------------------------------------------------
header "Version series (bench/versions.sh)"
tools_line
footer
echo
echo "Repositories and restores $fs_note.  Every step starts with what it reads in the page cache (the tree, or the tool's repository: bench/real_lib.sh \`warm\`; borg drops the files it reads from the cache)."
echo
echo "### Four versions of $what"
echo
echo "Version 1: $v1_files files ($(mib "$v1_bytes")), $v1_links symbolic links, $v1_dirs directories; version 4: $t_files files ($(mib "$t_bytes")). Versions 2-4 by \`bench/mutate.py --profile version\` (per version: 2% of the files edited at a random offset, 4 B - 4 KiB replaced or inserted; 1% renamed or moved to another directory; 1% deleted; 1% new, half copies of other files with an edit, half random text; the largest file appended 1 MiB):"
echo
cat "$W/mutations"
echo
echo "| step | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
row "version 1 (first add / backup / create), until durable" v1 2
row "version 2, until durable" v2 2
row "version 3, until durable" v3 2
row "version 4, until durable" v4 2
row "restore of version 4, until durable (get -o DIR; restore + sync; extract + sync)" get 2
# shellcheck disable=SC2046
set -- $(tail -1 "$W/sizes")
srow "repository size after the four versions (du -sb; pqvault without its 16 MiB reserve)" "$2" "$3" "$4"
echo "| peak RSS, largest of the steps | $(maxrss pq v1 v2 v3 v4 get) | $(maxrss restic v1 v2 v3 v4 get) | $(maxrss borg v1 v2 v3 v4 get) | |"
echo
echo "Repository size after each version (du -sb, pqvault without its 16 MiB reserve; last repetition):"
echo
echo "| after | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
while read -r v a b c; do
    srow "version $v" "$a" "$b" "$c"
done <"$W/sizes"
echo
echo "The same steps, the command alone (each tool's own durability):"
echo
echo "| step | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
for v in 1 2 3 4; do row "version $v" "v$v" 1; done
row "restore of version 4" get 1
echo
echo "Peak RSS (GNU time, largest process):"
echo
echo "| step | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
for v in 1 2 3 4; do rssrow "version $v" "v$v"; done
rssrow "restore of version 4" get
echo
echo "Restored version 4 checked against the source (last repetition; pqvault keeps names gone from the source unless \`add --delete\`):"
echo
cat "$W/verify"
