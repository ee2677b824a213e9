#!/bin/sh
# bench/kernel.sh (make bench-real, make bench-compare): a Linux kernel
# source tree (Debian's linux-source-6.1: 78,579 files, 1.30 GB) backed up by
# pqvault, restic 0.14 and borg 1.2 side by side, in one run, the tools
# interleaved at every step of every repetition, taking turns at going
# first (see in_turn below).  Prints Markdown tables
# ready for docs/BENCHMARKS.md.  POSIX sh.
#
# Steps, each tool into its own new repository in every repetition:
#   1. first add / backup / create of the tree;
#   2. the same tree, unchanged, added again (second archive for borg);
#   3. `list` of every entry (pqvault list; restic ls latest; borg list
#      REPO::ARCHIVE);
#   4. check of every byte (pqvault check --read-data; restic check
#      --read-data; borg check --verify-data);
#   5. restore of the whole tree into an empty directory until durable
#      (pqvault get linux -o DIR; restic restore latest + sync; borg
#      extract + sync), checked against the source in the last repetition.
# The repository sizes (du -sb, apparent bytes) are taken after step 2.
#
# Environment (and those of bench/real_lib.sh: RUNS, PQVAULT, BENCH_DIR,
# PQ_KDF, BORG_ENCRYPTION, BENCH_PASSPHRASE, PQ_ADD_OPTS, BENCH_FRESH_FS):
#   KERNEL_TARBALL  the tarball (default /usr/src/linux-source-6.1.tar.xz),
#                   unpacked once with tar -xf into the scratch directory
#   KERNEL_SUBSET   N: only the top-level files and the first N top-level
#                   directories (sorted: 1 Documentation, 8,869 files,
#                   42 MB; 2 adds LICENSES); or names ("block crypto",
#                   0.3k files, 5.5 MB) for quick development runs
#
# Quick check: KERNEL_SUBSET="block crypto" RUNS=1 sh bench/kernel.sh
set -eu
NAME=kernel
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/real_lib.sh"
need restic borg tar md5sum /usr/bin/time
scratch
fresh_fs_init

kernel_tree "$W/src/linux"
tree_stats "$W/src/linux"
t_links_src=$t_links
tree_sums "$W/src" linux >"$W/tree.md5"
sync
cd "$W/src"

# Each step of a repetition, per tool.  The tools take turns at going
# first (pqvault, restic, borg in the first repetition; restic, borg,
# pqvault in the second; borg, pqvault, restic in the third): whatever
# the file system still owes for the deletions of the repetition before
# (ext4 skips recently freed inodes when it allocates, and discards them
# at commit) falls on each tool once, and the medians of three runs leave
# it out.  Restores go into a directory of their own per tool; nothing is
# deleted between the tools of a step.  Every step starts with what it
# reads in the page cache (warm, bench/real_lib.sh: the tree before an
# add, the tool's repository before a check or a restore).
add1_pq() { warm linux; timed pq_add1 $PQ -v "$R/pq" add $PQ_ADD_OPTS linux; }
add1_restic() { warm linux; timed restic_add1 restic -q -r "$R/restic" backup linux; }
add1_borg() { warm linux; timed borg_add1 borg create "$R/borg::a1" linux; }
add2_pq() { warm linux; timed pq_add2 $PQ -v "$R/pq" add $PQ_ADD_OPTS linux; }
add2_restic() { warm linux; timed restic_add2 restic -q -r "$R/restic" backup linux; }
add2_borg() { warm linux; timed borg_add2 borg create "$R/borg::a2" linux; }
list_pq() { TIMED_STDOUT=$W/list.pq timed pq_list $PQ -v "$R/pq" list; }
list_restic() { TIMED_STDOUT=$W/list.restic timed restic_list restic -q -r "$R/restic" ls latest; }
list_borg() { TIMED_STDOUT=$W/list.borg timed borg_list borg list "$R/borg::a2"; }
check_pq() { warm "$R/pq"; timed pq_check $PQ -v "$R/pq" check --read-data; }
check_restic() { warm "$R/restic"; timed restic_check restic -q -r "$R/restic" check --read-data; }
check_borg() { warm "$R/borg"; timed borg_check borg check --verify-data "$R/borg"; }
get_pq() {
    mkdir "$F/out.pq"
    warm "$R/pq"
    timed pq_get $PQ -v "$R/pq" get linux -o "$F/out.pq"
    [ "$last" = no ] || verify pqvault "$W/tree.md5" "$F/out.pq" linux >>"$W/verify"
}
get_restic() {
    mkdir "$F/out.restic"
    warm "$R/restic"
    timed restic_get restic -q -r "$R/restic" restore latest --target "$F/out.restic"
    [ "$last" = no ] || verify restic "$W/tree.md5" "$F/out.restic" linux >>"$W/verify"
}
get_borg() {
    mkdir "$F/out.borg"
    warm "$R/borg"
    timed borg_get sh -c 'cd "$1" && borg extract "$2::a2"' sh "$F/out.borg" "$R/borg"
    [ "$last" = no ] || verify borg "$W/tree.md5" "$F/out.borg" linux >>"$W/verify"
}
# in_turn STEP: the step for every tool, in this repetition's order.
in_turn() {
    case $((r % 3)) in
    1) "$1_pq"; "$1_restic"; "$1_borg" ;;
    2) "$1_restic"; "$1_borg"; "$1_pq" ;;
    *) "$1_borg"; "$1_pq"; "$1_restic" ;;
    esac
}

: >"$W/verify"
r=0
while [ "$r" -lt "$RUNS" ]; do
    r=$((r + 1))
    fresh_fs
    R=$F/repo/r$r
    mkdir -p "$R"
    last=no
    [ "$r" -eq "$RUNS" ] && last=yes
    pq_init "$R/pq"
    restic_init "$R/restic"
    borg_init "$R/borg"

    in_turn add1
    in_turn add2

    size_pq=$(size_of "$R/pq")
    size_restic=$(size_of "$R/restic")
    size_borg=$(size_of "$R/borg")

    in_turn list
    n_pq=$(wc -l <"$W/list.pq")
    n_restic=$(wc -l <"$W/list.restic")
    n_borg=$(wc -l <"$W/list.borg")
    rm -f "$W/list.pq" "$W/list.restic" "$W/list.borg"

    in_turn check
    in_turn get
    rm -rf "$R" "$F/out.pq" "$F/out.restic" "$F/out.borg"
    sync
done

# ---- Tables ------------------------------------------------------------------
header "Linux kernel tree (bench/kernel.sh)"
tools_line
footer
echo
what="$(basename "$KERNEL_TARBALL")"
[ -z "$KERNEL_SUBSET" ] || what="$what, KERNEL_SUBSET=$KERNEL_SUBSET (top-level files and those directories only)"
echo "Repositories and restores $fs_note.  Every step starts with what it reads in the page cache (the tree, or the tool's repository: bench/real_lib.sh \`warm\`; borg drops the files it reads from the cache)."
echo
echo "### The tree: $what: $t_files files ($(mib "$t_bytes"), $t_bytes bytes), $t_links symbolic links, $t_dirs directories"
echo
echo "| step | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
row "first add / backup / create, until durable" add1 2
row "the same tree unchanged, again, until durable" add2 2
row "restore of the whole tree, until durable (get -o DIR; restore + sync; extract + sync)" get 2
row "check --read-data (borg: check --verify-data)" check
row "list of every entry (list; ls latest; list REPO::ARCHIVE)" list
srow "repository size after the two adds (du -sb; pqvault without its 16 MiB reserve)" "$size_pq" "$size_restic" "$size_borg"
echo "| peak RSS, largest of the steps | $(maxrss pq add1 add2 list check get) | $(maxrss restic add1 add2 list check get) | $(maxrss borg add1 add2 list check get) | |"
echo
echo "Repository bytes: pqvault $size_pq, restic $size_restic, borg $size_borg (tree: $t_bytes). Lines listed: pqvault $n_pq, restic $n_restic, borg $n_borg."
echo
echo "The same steps, the command alone (each tool's own durability; pqvault's add and get are durable when they return):"
echo
echo "| step | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
row "first add / backup / create" add1 1
row "the same tree unchanged, again" add2 1
row "restore of the whole tree" get 1
echo
echo "Peak RSS (GNU time, largest process):"
echo
echo "| step | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
rssrow "first add" add1
rssrow "unchanged tree again" add2
rssrow "list" list
rssrow "check of every byte" check
rssrow "restore" get
echo
echo "Restored trees checked (last repetition):"
echo
cat "$W/verify"
