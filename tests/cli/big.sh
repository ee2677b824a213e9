# tests/cli/big.sh: large files.  A 300 MiB round trip (file and pipes),
# and a 1.5 GiB file added and restored under an address-space cap of
# 768 MiB (ulimit -v): memory does not grow with the file size.  Format 3
# stores each chunk once: the pipe of the 300 MiB file and the 1.5 GiB file
# that begins with it store (almost) nothing of those 300 MiB again.
. "$(dirname "$0")/lib.sh"

MiB=1048576
# packbytes: the bytes of the packs of $V, temporaries aside.
packbytes() {
    find "$V/packs" -type f ! -name '*.tmp*' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'
}

init_vault || finish
B=$T/b300
dd if=/dev/urandom of="$B" bs=1M count=300 status=none
expect_status 0 pq add "$B" --name b300
p300=$(packbytes)
# Random data: every byte once, plus salts, tags and Padme padding (at
# most 1/32 a pack of 64 KiB or more).
check_ok "300 MiB stored in 300 MiB to 4% more ($p300)" \
    test "$p300" -ge $((300 * MiB)) -a "$p300" -le $((300 * MiB * 104 / 100))
expect_status 0 pq get b300 -o "$T/b300.out"
check_ok "300 MiB file round trip" same_file "$B" "$T/b300.out"
check_ok "300 MiB mode and mtime restored" test "$(stat_sig "$B")" = "$(stat_sig "$T/b300.out")"
rm -f "$T/b300.out"
expect_status 0 sh -c 'cat "$1" | "$2" -v "$3" --passphrase-file "$4" add - --name piped' sh "$B" "$PQV" "$V" "$PF"
expect_status 0 sh -c '"$1" -v "$2" --passphrase-file "$3" get piped -o - | cmp -s - "$4"' sh "$PQV" "$V" "$PF" "$B"
check_ok "the pipe of the same 300 MiB stored nothing new" test "$(packbytes)" -eq "$p300"
expect_status 0 pq list --json
# "objects" is the chunk count: 300 MiB in chunks of 128 KiB to 2 MiB
# (150 to 2400 of them), the same chunks from the file and the pipe.
check_ok "300 MiB = 150 to 2400 chunks, the same for the file and the pipe" python3 -c '
import json, sys
e = {x["name"]: x for x in json.load(open(sys.argv[1]))}
f, p = e["b300"], e["piped"]
assert f["size"] == p["size"] == 300 << 20, e
assert 150 <= f["objects"] <= 2400 and p["objects"] == f["objects"], e' "$OUT"

# Memory bounds are measured on the plain build: ASan reserves terabytes of
# address space (no ulimit -v fits) and its shadow memory and quarantine
# inflate RSS.  The sanitised run still does the 300 MiB round trips above.
if [ "${PQV_SAN:-0}" = 1 ]; then
    echo "# SKIP - memory bounds (ulimit -v, peak RSS): not meaningful under ASan; measured by the plain build"
    finish
fi

# rss CMD...: the peak resident set size (KiB) of CMD (its output discarded).
rss() { /usr/bin/time -f %M -o "$T/rss" "$@" >/dev/null 2>&1 && cat "$T/rss"; }
if [ -x /usr/bin/time ]; then
    r300=$(rss "$PQV" -v "$V" --passphrase-file "$PF" get b300 -o -)
fi

# 1.5 GiB: 300 MiB of random data, a hole, 1 MiB of random data at the end.
G=$T/g1536
cp "$B" "$G"
dd if=/dev/urandom of="$G" bs=1M count=1 seek=1535 conv=notrunc status=none
rm -f "$B"
check_ok "1.5 GiB test file" test "$(stat -c %s "$G")" -eq 1610612736
expect_status 0 sh -c 'ulimit -v 786432 && exec "$@"' sh "$PQV" -v "$V" --passphrase-file "$PF" add "$G" --name g
expect_status 0 sh -c 'ulimit -v 786432 && exec "$@"' sh "$PQV" -v "$V" --passphrase-file "$PF" get g -o "$T/g.out"
check_ok "1.5 GiB round trip under a 768 MiB address-space cap" same_file "$G" "$T/g.out"
# Its first 300 MiB are b300's chunks (a data region from offset 0 cut as
# b300 was); only the last MiB is new (at least 1 MiB stored).  On a file
# system without holes the zeros are data: then b300's last chunk runs on
# into them (at most 2 MiB, new) and the zeros' chunks are compressed, so
# at most 4 MiB either way.
pg=$(packbytes)
check_ok "1.5 GiB file beginning with the 300 MiB: 1 to 4 MiB stored ($((pg - p300)) bytes)" \
    test "$pg" -ge $((p300 + MiB)) -a "$pg" -le $((p300 + 4 * MiB))
rm -f "$T/g.out"
expect_status 0 sh -c '(ulimit -v 786432 && exec "$1" -v "$2" --passphrase-file "$3" get g -o -) | cmp -s - "$4"' \
    sh "$PQV" "$V" "$PF" "$G"
if [ -x /usr/bin/time ] && [ -n "${r300:-}" ]; then
    r1536=$(rss "$PQV" -v "$V" --passphrase-file "$PF" get g -o -)
    echo "# peak RSS of get -o -: 300 MiB file ${r300} KiB, 1.5 GiB file ${r1536} KiB"
    check_ok "peak RSS does not grow with the file (${r300} vs ${r1536} KiB)" \
        test "$r1536" -lt $((r300 + 32768))
    check_ok "peak RSS at most 140 MiB (${r1536} KiB)" test "$r1536" -le 143360
fi
expect_status 0 pq check --read-data
expect_stdout_contains "damaged: 0"

finish
