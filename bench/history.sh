#!/bin/sh
# bench/history.sh (make bench-real, make bench-compare): a skeleton for the
# history issue.  DAYS "daily" snapshots of a copy of a tree (default
# /usr/share/doc), about 1% of its files changed each day by
# bench/mutate.py --profile daily --seed SEED+DAY (0.7% edited, 0.1% renamed
# or moved, 0.1% deleted, 0.1% new; see its header), each snapshot added in
# turn by pqvault, restic 0.14 and borg 1.2 (the tools interleaved every
# day of every repetition), each into its own repository.  Then the
# repository sizes, and a retention of --keep-daily 7 --keep-weekly 4:
# restic `forget --prune`, borg `prune` then `compact`, and the sizes after.
# Prints Markdown tables ready for docs/BENCHMARKS.md.  POSIX sh.
#
# restic and borg are given each snapshot's day as its time (restic backup
# --time, borg create --timestamp: DAY 1 is 2026-01-01 12:00 UTC), so that
# the retention sees DAYS days.  pqvault `add TREE` again into the same
# vault (every command's epoch a snapshot, names gone from the source kept);
# its history commands (`pqvault log`, `pqvault forget`) are detected by
# `pqvault log --help`'s exit status: when missing, their cells say
# "n/a (not implemented)".  When present, the script tries `pqvault forget
# --keep-daily 7 --keep-weekly 4` then `pqvault gc` (the interface is not
# settled: a failure is reported in its cell, not fatal; pqvault's
# snapshots carry the time they were made: with faketime(1) installed
# (Debian's faketime, scripts/install-deps.sh) each add runs with the clock
# starting at its day, so that its retention sees DAYS days too; without
# it, one day).
#
# Environment (and those of bench/real_lib.sh: RUNS, PQVAULT, BENCH_DIR,
# PQ_KDF, BORG_ENCRYPTION, BENCH_PASSPHRASE, PQ_ADD_OPTS):
#   TREE   the tree (default /usr/share/doc; copied)
#   DAYS   snapshots (default 60)
#   SEED   day D is made with seed SEED+D (default 1000)
#
# Quick check: TREE=/usr/share/doc/git DAYS=10 RUNS=1 sh bench/history.sh
set -eu
NAME=history
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/real_lib.sh"
TREE=${TREE:-/usr/share/doc}
DAYS=${DAYS:-60}
SEED=${SEED:-1000}
KEEP="--keep-daily 7 --keep-weekly 4"
need restic borg python3 /usr/bin/time
[ -d "$TREE" ] || { echo "$SELF: no tree $TREE" >&2; exit 1; }
scratch

TN=$(basename "$TREE")
mkdir -p "$W/day1"
cp -a "$TREE" "$W/day1/$TN"
tree_stats "$W/day1/$TN"

NA="n/a (not implemented)"
if "$PQVAULT" log --help >/dev/null 2>&1; then pq_hist=yes; else pq_hist=no; fi
if command -v faketime >/dev/null 2>&1; then faketime=yes; else faketime=no; fi
# at-day CMD...: CMD with the clock starting at $PQ_DAY (a script: timed
# runs a program, and the time holds a space).
printf '#!/bin/sh\nexec env NO_FAKE_STAT=1 faketime -f "@$PQ_DAY" "$@"\n' >"$W/at-day"
chmod +x "$W/at-day"

: >"$W/mutations"
r=0
while [ "$r" -lt "$RUNS" ]; do
    r=$((r + 1))
    R=$W/repo/r$r
    mkdir -p "$R"
    last=no
    [ "$r" -eq "$RUNS" ] && last=yes
    rm -rf "$W/src/$TN"
    cp -a "$W/day1/$TN" "$W/src/$TN"
    cd "$W/src"
    pq_init "$R/pq"
    restic_init "$R/restic"
    borg_init "$R/borg"
    sync

    d=1
    while [ "$d" -le "$DAYS" ]; do
        if [ "$d" -gt 1 ]; then
            m=$(python3 "$HERE/mutate.py" --profile daily --seed $((SEED + d)) "$TN")
            [ "$r" -gt 1 ] || echo "$m" >>"$W/mutations"
        fi
        when=$(date -u -d "2026-01-01 12:00:00 UTC +$((d - 1)) days" '+%Y-%m-%d %H:%M:%S')
        step=day
        [ "$d" -gt 1 ] || step=first
        # pqvault dates a snapshot by the clock: under faketime (its file
        # times left alone, NO_FAKE_STAT) the clock starts at that day.
        PQ_AT_DAY=
        [ "$faketime" = no ] || { export PQ_DAY="$when"; PQ_AT_DAY="$W/at-day"; }
        timed "pq_$step" $PQ_AT_DAY $PQ -v "$R/pq" add $PQ_ADD_OPTS "$TN"
        timed "restic_$step" restic -q -r "$R/restic" backup --time "$when" "$TN"
        timed "borg_$step" borg create --timestamp "$(echo "$when" | tr ' ' T)" "$R/borg::day$d" "$TN"
        d=$((d + 1))
    done

    if [ "$last" = yes ]; then
        size_pq=$(size_of "$R/pq")
        size_restic=$(size_of "$R/restic")
        size_borg=$(size_of "$R/borg")
        snaps_restic=$(restic -q -r "$R/restic" snapshots --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
        snaps_borg=$(borg list --short "$R/borg" | wc -l)
        snaps_pq=$NA
        [ "$pq_hist" = no ] || snaps_pq="$($PQ -v "$R/pq" log 2>/dev/null | wc -l) lines of \`pqvault log\`"
    fi

    # Retention: --keep-daily 7 --keep-weekly 4.
    # shellcheck disable=SC2086
    timed restic_forget restic -q -r "$R/restic" forget $KEEP --prune
    # shellcheck disable=SC2086
    timed borg_prune borg prune $KEEP "$R/borg"
    timed borg_compact borg compact "$R/borg"
    pq_forget_note=$NA
    if [ "$pq_hist" = yes ]; then
        # shellcheck disable=SC2086
        if timed_try pq_forget $PQ -v "$R/pq" forget $KEEP && timed_try pq_gc $PQ -v "$R/pq" gc; then
            pq_forget_note=""
        else
            pq_forget_note="failed: $(head -1 "$W/.err")"
        fi
    fi
    if [ "$last" = yes ]; then
        after_restic=$(size_of "$R/restic")
        after_borg=$(size_of "$R/borg")
        after_pq=$(size_of "$R/pq")
        left_restic=$(restic -q -r "$R/restic" snapshots --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
        left_borg=$(borg list --short "$R/borg" | wc -l)
        left_pq=$NA
        if [ "$pq_hist" = yes ]; then
            left_pq="-"
            [ -n "$pq_forget_note" ] ||
                left_pq="$($PQ -v "$R/pq" log 2>/dev/null | wc -l) lines of \`pqvault log\`"
        fi
    fi
    cd "$W"
    rm -rf "$R"
done

# ---- Tables ------------------------------------------------------------------
header "History: $DAYS daily snapshots (bench/history.sh)"
tools_line
footer
echo
echo "### $DAYS daily snapshots of a copy of $TREE"
echo
echo "Day 1: $t_files files ($(mib "$t_bytes")), $t_links symbolic links, $t_dirs directories. Each later day: \`bench/mutate.py --profile daily --seed $SEED+DAY\` (0.7% of the files edited at a random offset, 4 B - 4 KiB replaced or inserted; 0.1% renamed or moved; 0.1% deleted; 0.1% new), e.g. day 2: \`$(head -1 "$W/mutations" 2>/dev/null || echo -)\`. restic and borg snapshots dated one day apart from 2026-01-01 12:00 UTC$( [ "$faketime" = yes ] && echo ", pqvault's too (its adds under \`faketime\`)" || echo "; pqvault's at the time they were made (no faketime here)"). pqvault's history commands: $( [ "$pq_hist" = yes ] && echo "present (\`pqvault log --help\` exits 0)" || echo "not in this build (\`pqvault log --help\` fails)")."
echo
total() {
    # total TOOL: the sum of TOOL's DAYS snapshot times (until durable),
    # divided by RUNS.
    cat "$W/res/$1_first" "$W/res/$1_day" 2>/dev/null |
        awk -v n="$RUNS" '{s += $2} END{v = s / n; if (v < 1) printf "%.3f", v; else if (v < 100) printf "%.2f", v; else printf "%.0f", v}'
}
echo "| | pqvault | restic | borg | pqvault / restic |"
echo "| --- | --- | --- | --- | --- |"
row "snapshot of day 1 (first add / backup / create), until durable" first 2
row "one later day's snapshot, until durable (median over days 2-$DAYS)" day 2
echo "| all $DAYS snapshots, until durable (sum; mean of the repetitions) | $(total pq) | $(total restic) | $(total borg) | $(ratio "$(total pq)" "$(total restic)") |"
srow "repository size after $DAYS snapshots (du -sb; pqvault without its 16 MiB reserve)" "$size_pq" "$size_restic" "$size_borg"
echo "| snapshots | ${snaps_pq} | $snaps_restic | $snaps_borg | |"
if [ "$pq_hist" = yes ] && [ -z "$pq_forget_note" ]; then
    echo "| forget $KEEP (pqvault forget + gc; restic forget --prune; borg prune + compact) | $(cell pq_forget 2) + $(cell pq_gc 2) | $(cell restic_forget 2) | $(cell borg_prune 2) + $(cell borg_compact 2) | |"
    srow "repository size after forget (du -sb; pqvault without its 16 MiB reserve)" "$after_pq" "$after_restic" "$after_borg"
else
    echo "| forget $KEEP (pqvault forget + gc; restic forget --prune; borg prune + compact), until durable | $pq_forget_note | $(cell restic_forget 2) | $(cell borg_prune 2) + $(cell borg_compact 2) | |"
    echo "| repository size after forget (du -sb) | $pq_forget_note | $(mib "$after_restic") | $(mib "$after_borg") | |"
fi
echo "| snapshots left | $left_pq | $left_restic | $left_borg | |"
echo "| peak RSS, largest of the steps | $(maxrss pq first day forget gc) | $(maxrss restic first day forget) | $(maxrss borg first day prune compact) | |"
echo
echo "Repository bytes after $DAYS snapshots: pqvault $size_pq, restic $size_restic, borg $size_borg; after forget: restic $after_restic, borg $after_borg."
