# tests/cli/bounds.sh: bounds before authentication (issue 17 item 3).
#  - a storage listing gives at most PQV_STORAGE_LIST_MAX names (S3: also a
#    bounded number of pages): an S3 endpoint whose listing never ends
#    (tests/s3/endless.py, no Ceph needed) and a local prefix with too many
#    names are refused (the test build lowers the bound with
#    PQVAULT_TEST_LIST_MAX);
#  - a segment is read header, then sealed head (at most 256 MiB), then,
#    once the head authenticates, the blocks it gives: a segment extended
#    to nearly 2 GiB, or whose header claims a huge head, is refused
#    without reading it (under a 768 MiB address-space limit);
#  - a file entry's size is at most 2^50 (FORMAT.md section 13): a forged
#    one (a write-only writer's batch) is refused at import (exit 4), a
#    real sparse file of 8 TiB still round-trips.
. "$(dirname "$0")/lib.sh"
ENDLESS=$(cd "$(dirname "$0")/../s3" && pwd)/endless.py
LIVE=$(dirname "$PQV")/tests/s3_live

# ---- S3: a listing without end ----
if [ -x "$LIVE" ]; then
    mkfifo "$T/port"
    for mode in names empty; do
        python3 "$ENDLESS" "$mode" >"$T/port" &
        pid=$!
        BG_PIDS="$BG_PIDS $pid"
        read -r port <"$T/port"
        LAST="s3 listing without end ($mode)"
        AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
            PQVAULT_TEST_LIST_MAX=1000 "$LIVE" s3://bucket/p listall segments >"$OUT" 2>"$ERR"
        case $mode in
        names) expect_stdout_contains "segments/ holds more than 1000 names, more than a vault writes: refused" ;;
        empty) expect_stdout_contains "segments/: the listing goes on beyond 20 pages (0 names so far): refused" ;;
        esac
        expect_stdout_contains "list: -13 "   # PQV_E_LIMIT
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
else
    fail "no $LIVE (make build/tests/s3_live)"
fi

# ---- local: too many names under a prefix ----
init_vault || finish
printf 'one\n' >"$T/a"
expect_status 0 pq add "$T/a"
mkdir -p "$V/packs/ab"
i=0
while [ "$i" -lt 30 ]; do
    : >"$V/packs/ab/planted-$i.tmp-0000000000000000"
    i=$((i + 1))
done
expect_status 1 env PQVAULT_TEST_LIST_MAX=20 "$PQV_TEST" -v "$V" --passphrase-file "$PF" check
expect_stderr_contains "holds more than 20 names, more than a vault writes: refused"
expect_status 0 pq check
rm -rf "$V/packs/ab"
# A directory deeper than any the vault makes is not entered: reported.
mkdir -p "$V/packs/cd/1/2/3/4/5/6/7/8/9"
expect_status 4 pq check
expect_stderr_contains "not a regular file"
rm -rf "$V/packs/cd"
expect_status 0 pq check

# ---- segments: nothing unauthenticated read beyond the head ----
seg() { printf '%s/segments/%016x' "$V" "$1"; }
SEG=$(seg 2)
SIZE=$(stat -c %s "$SEG")
# 768 MiB of address space: reading either planted segment whole would not
# fit.  (Under ASan no ulimit -v fits its shadow memory: the messages, which
# name what was read, still tell.)
VLIMIT=786432
[ "${PQV_SAN:-0}" = 1 ] && VLIMIT=unlimited
cp "$SEG" "$T/seg2"
cp -a "$XDG_STATE_HOME" "$T/state-saved"
# Extended to 2 GiB - 1 (sparse): the head authenticates, says how long the
# blocks are, and the size disagrees: refused, the blocks never read.
truncate -s $((2 * 1024 * 1024 * 1024 - 1)) "$SEG"
LAST="list of a segment extended to 2 GiB, under ulimit -v $VLIMIT"
(ulimit -v "$VLIMIT" && exec "$PQV" -v "$V" --passphrase-file "$PF" list) >"$OUT" 2>"$ERR"
st=$?
check_ok "$LAST: exit 4 (was $st)" [ "$st" -eq 4 ]
expect_stderr_contains "segment has 2147483647 bytes, its head says $SIZE"
cp "$T/seg2" "$SEG"
# A header claiming a head of 300 MiB, in a file that long: refused from the
# header alone.
python3 - "$SEG" <<'EOF'
import sys
p = sys.argv[1]
with open(p, "r+b") as f:
    f.seek(64)
    f.write((300 << 20).to_bytes(4, "big"))
    f.truncate(72 + (300 << 20) + 100)
EOF
LAST="list of a segment claiming a 300 MiB head, under ulimit -v $VLIMIT"
(ulimit -v "$VLIMIT" && exec "$PQV" -v "$V" --passphrase-file "$PF" list) >"$OUT" 2>"$ERR"
st=$?
check_ok "$LAST: exit 4 (was $st)" [ "$st" -eq 4 ]
expect_stderr_contains "segment head of 314572800 bytes is larger than any pqvault writes"
# ... and one claiming more head than the file holds.
python3 - "$SEG" "$T/seg2" <<'EOF'
import sys
data = bytearray(open(sys.argv[2], "rb").read())
data[64:68] = (200000).to_bytes(4, "big")
open(sys.argv[1], "wb").write(data)
EOF
expect_status 4 pq list
expect_stderr_contains "segment is truncated"
cp "$T/seg2" "$SEG"
rm -rf "$XDG_STATE_HOME" && cp -a "$T/state-saved" "$XDG_STATE_HOME"
expect_status 0 pq check --read-data
# A large segment (over 1 MiB: read in three parts) round-trips.  Format
# 3's segments hold no command key and an empty file's entry is about 43
# bytes and its name: 12000 names of 55 bytes (about 1.1 MiB).
mkdir "$T/many"
python3 - "$T/many" <<'EOF'
import os, sys
for i in range(12000):
    open(os.path.join(sys.argv[1], "a-file-with-a-long-name-to-make-the-segment-large-%05d" % i), "w").close()
EOF
expect_status 0 pq -q add "$T/many"
check_ok "the segment of 12000 names is over 1 MiB" [ "$(stat -c %s "$(seg 3)")" -gt 1048576 ]
expect_status 0 pq list many/a-file-with-a-long-name-to-make-the-segment-large-11999
expect_status 0 pq check

# ---- entries: a file's size is bounded ----
expect_status 0 pq writer add bounds -o "$T/rcpt"
printf 'forged\n' >"$T/forged"
expect_status 0 env PQVAULT_TEST_ENTRY_SIZE=$((1 << 60)) "$PQV_TEST" -v "$V" add \
    --recipient "$T/rcpt" --name huge "$T/forged"
expect_status 4 pq import
expect_stderr_contains "not imported (left in place): entry is malformed"
expect_status 1 pq get bounds/huge -o -
expect_empty_stdout
# At the bound itself it is a file of holes beyond its data: accepted.
rm -rf "$V/inbox"/* 2>/dev/null
expect_status 0 env PQVAULT_TEST_ENTRY_SIZE=$((1 << 50)) "$PQV_TEST" -v "$V" add \
    --recipient "$T/rcpt" --name petabyte "$T/forged"
expect_status 0 pq import
expect_status 0 pq list -l --bytes bounds/petabyte
expect_stdout_contains "1125899906842624"
# A real sparse file of 8 TiB (holes only) still round-trips.
if truncate -s 8T "$T/sparse" 2>/dev/null; then
    expect_status 0 pq add "$T/sparse"
    expect_status 0 pq get sparse -o "$T/sparse-out"
    check_ok "the 8 TiB sparse file restored with its size" \
        [ "$(stat -c %s "$T/sparse-out")" = "$(stat -c %s "$T/sparse")" ]
    rm -f "$T/sparse" "$T/sparse-out"
else
    echo "# SKIP - this file system makes no 8 TiB sparse file"
fi
finish
