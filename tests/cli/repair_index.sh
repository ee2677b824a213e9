# tests/cli/repair_index.sh: check --repair-index (issue 19; docs/FORMAT.md
# section 23): a segment whose chunk block is damaged loses the places of
# its chunks (check and get: exit 4, naming them and the way out); the
# packs' own sealed tables still hold them, so check --repair-index
# records them again in a new base: the files come back byte-exact, check
# is clean, and what no pack holds stays reported as lost.
. "$(dirname "$0")/lib.sh"

init_vault || finish
mkdir -p "$T/d"
for i in 1 2 3; do head -c 300000 /dev/urandom >"$T/d/f$i"; done
expect_status 0 pq add "$T/d"
seg=$V/segments/0000000000000002
python3 - "$seg" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[-1] ^= 1          # the last unit is the chunk block: its tag
open(p, 'wb').write(b)
PY
expect_status 4 pq check
expect_stderr_contains "segment chunk block 0 failed authentication"
expect_stderr_contains "d/f2: chunk 0 has no record in the chain (check --repair-index looks for it in the packs)"
expect_status 4 pq get d -o "$T/out"
expect_status 2 pq check --no-key --repair-index
expect_status 0 pq check --repair-index
expect_stdout_contains "chunk records recovered from the packs' tables, 0 still lost"
expect_stdout_contains "damaged: 0"
expect_status 0 pq check --read-data
rm -rf "$T/out"
expect_status 0 pq get d -o "$T/out"
for i in 1 2 3; do
    check_ok "f$i restored byte-exact after the repair" same_file "$T/out/d/f$i" "$T/d/f$i"
done
# A pack gone too: its chunks cannot be found; said, the rest repaired.
printf 'another\n' >"$T/d/f4"
expect_status 0 pq add "$T/d"
seg2=$(ls "$V"/segments/* | tail -n 1)
python3 - "$seg2" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[-1] ^= 1
open(p, 'wb').write(b)
PY
newest_pack=$(ls -t "$V"/packs/*/* | head -n 1)
rm "$newest_pack"
expect_status 4 pq check --repair-index
expect_stdout_contains "0 chunk records recovered from the packs' tables, 1 still lost"
expect_status 4 pq check
expect_stderr_contains "d/f4: chunk 0 has no record in the chain"
finish
