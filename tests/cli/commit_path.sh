#!/bin/sh
# Every writing command ends through one commit path (txn_finish): the
# delta committed, then the chain compacted once it holds more than 64
# deltas (so at most 65 segments remain).  Before, `add -` never
# compacted: a vault fed only from standard input grew a segment per
# command for ever.
. "$(dirname "$0")/lib.sh"

segments() { find "$V/segments" -type f ! -name '*.tmp-*' | wc -l; }

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
check_ok "70 adds from standard input compacted the chain ($n segments left; 71 without compaction)" \
    test "$n" -le 65
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
check_ok "66 single rm commands compacted the chain ($n segments left)" test "$n" -le 65
expect_status 0 pq list stdin
expect_stdout_contains "stdin/f70"
expect_status 0 pq -q check --read-data
finish
