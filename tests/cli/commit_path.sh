#!/bin/sh
# Every writing command ends through one commit path (txn_finish): the
# delta committed, then the chain compacted once it holds more than 64
# deltas (so the current chain is at most 65 segments; the older ones stay
# while kept snapshots need them, docs/FORMAT.md section 26).  Before,
# `add -` never compacted: a vault fed only from standard input grew a
# chain of a segment per command for ever.
. "$(dirname "$0")/lib.sh"

# segments: the segments of the current chain (check's count).
segments() { pq check 2>/dev/null | sed -n 's/.*segments: \([0-9]*\),.*/\1/p'; }

init_vault || finish
i=0
while [ $i -lt 70 ]; do
    i=$((i + 1))
    if ! echo "line $i" | pq -q add - --name "stdin/f$i" 2>"$ERR"; then
        fail "add - number $i"
        break
    fi
done
n=$(segments)
check_ok "70 adds from standard input compacted the chain ($n segments in it; 71 without compaction)" \
    test -n "$n" -a "$n" -le 65
expect_status 0 pq get stdin/f70 -o -
expect_stdout_contains "line 70"
expect_status 0 pq get stdin/f1 -o -
expect_stdout_contains "line 1"
expect_status 0 pq -q check --read-data

# rm, one name per command, compacts too.
i=0
while [ $i -lt 66 ]; do
    i=$((i + 1))
    pq -q rm "stdin/f$i" 2>"$ERR" || { fail "rm number $i"; break; }
done
n=$(segments)
check_ok "66 single rm commands compacted the chain ($n segments in it)" test -n "$n" -a "$n" -le 65
# Forgetting the old snapshots lets gc delete the segments they needed.
expect_status 0 pq -q forget --keep-last 1
expect_status 0 pq -q gc
check_ok "after forget and gc, few segments stay ($(find "$V/segments" -type f | wc -l))" \
    test "$(find "$V/segments" -type f ! -name '*.tmp-*' | wc -l)" -le 65
expect_status 0 pq list stdin
expect_stdout_contains "stdin/f70"
expect_status 0 pq -q check --read-data
finish
