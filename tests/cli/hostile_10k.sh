# tests/cli/hostile_10k.sh: the acceptance case of issue 9.  A tree of
# 10,000 files, with one file that cannot be read (an I/O error injected at
# one read), one file changing while it is read (the test build stops
# itself while reading it; the test appends to it), and one catalogue block
# damaged after the add (format 2: the add is one segment of many blocks of
# about 64 KiB; a block lost loses the names it holds, as a damaged record
# lost its one name in format 1), is added, listed, restored and checked:
# exactly those three are reported, everything else is byte-exact.
. "$(dirname "$0")/lib.sh"

bg() {
    env --default-signal=INT "$@" >"$T/bg.out" 2>"$T/bg.err" &
    BGPID=$!
    BG_PIDS="$BG_PIDS $BGPID"
}
wait_stopped() {
    i=0
    while [ $i -lt 12000 ]; do
        st=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)
        [ "$st" = T ] && return 0
        [ -z "$st" ] || [ "$st" = Z ] && return 1
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

init_vault || finish
python3 - "$T/tree" <<'EOF'
import os, random, sys
root = sys.argv[1]
rnd = random.Random(10000)
for d in range(100):
    os.makedirs(os.path.join(root, "d%02d" % d))
    for f in range(100):
        if d == 99 and f == 99:
            continue
        with open(os.path.join(root, "d%02d" % d, "f%02d" % f), "wb") as out:
            out.write(os.urandom(rnd.randint(0, 3000)))
# The file that changes while it is read: 3 extents, read last.
with open(os.path.join(root, "zz-growing"), "wb") as out:
    out.write(os.urandom(9 * 1024 * 1024))
EOF
count=$(find "$T/tree" -type f | wc -l)
check_ok "the tree holds 10,000 files" [ "$count" -eq 10000 ]

# Read 5000 fails with EIO; the second read of zz-growing stops the process.
bg env PQVAULT_TEST_FAULT=read:5000:EIO PQVAULT_TEST_STOP_AT=read:2 \
    PQVAULT_TEST_STOP_PATH=zz-growing "$PQV_TEST" -v "$V" --passphrase-file "$PF" add "$T/tree"
if wait_stopped "$BGPID"; then
    head -c 100000 /dev/urandom >>"$T/tree/zz-growing"
    kill -CONT "$BGPID"
fi
wait "$BGPID"
st=$?
BG_PIDS=
check_ok "add: exit 1 (one file could not be read; the others are stored)" [ "$st" -eq 1 ]
unreadable=$(sed -n 's|^pqvault: add: \(.*\): not stored: read: Input/output error$|\1|p' "$T/bg.err")
check_ok "add: exactly one file reported unreadable" \
    [ -n "$unreadable" -a "$(printf '%s\n' "$unreadable" | wc -l)" -eq 1 ]
check_ok "add: the changing file reported once, read again" \
    [ "$(grep -c 'zz-growing: changed while it was being read: reading it again' "$T/bg.err")" -eq 1 ]
check_ok "add: nothing else reported (4 lines: unreadable, changed, the count not stored, the summary)" \
    [ "$(wc -l <"$T/bg.err")" -eq 4 ]
check_ok "add: the summary counts one entry" grep -q 'tree: 1 entry not stored (reported above)' "$T/bg.err"

# The add is one commit: one segment.  Damage one of its blocks, one that
# does not hold the tree's root nor zz-growing (which block holds a name
# depends on the add's threads): the first place, trying eight in the
# first half of the block area (entry blocks: the chunk block is last),
# whose damage leaves both listed.
seg=$V/segments/0000000000000002
check_ok "the add wrote one segment (epoch 2)" [ -f "$seg" -a ! -e "$V/segments/0000000000000003" ]
size=$(stat -c %s "$seg")
headend=$((72 + $(od -An -tu4 --endian=big -j64 -N4 "$seg")))
cp "$seg" "$T/seg.orig"
placed=0
for k in 1 3 5 7 2 4 6 8; do
    cp "$T/seg.orig" "$seg"
    flip_byte "$seg" $((headend + (size - headend) * k / 16))
    pq list tree >"$T/try" 2>/dev/null
    if grep -qx tree "$T/try" && grep -qx tree/zz-growing "$T/try"; then
        placed=1
        break
    fi
done
check_ok "a block to damage that holds neither the root nor zz-growing (at $k/16)" [ "$placed" -eq 1 ]
expect_status 4 pq list tree
listed=$T/listed
cp "$OUT" "$listed"
check_ok "list: exactly one error line about the catalogue, the damaged block" \
    [ "$(grep -c 'segment block [0-9]* failed authentication' "$ERR")" -eq 1 ]
expect_stderr_contains "tree: 1 damaged catalogue block (reported above)"
# What list does not show: the unreadable file and the damaged block's
# names (at most a block's worth: 64 KiB of entries).
find "$T/tree" -mindepth 1 | sed "s|^$T/||" | sort >"$T/all"
missing=$(sort "$listed" | comm -23 "$T/all" -)
nmissing=$(printf '%s\n' "$missing" | wc -l)
check_ok "list: every entry shows but the unreadable one and the damaged block's ($nmissing)" \
    [ "$nmissing" -ge 2 -a "$nmissing" -lt 1500 -a "$(sort "$listed" | comm -13 "$T/all" - | wc -l)" -eq 1 ]
check_ok "list: the unreadable file is one of them" \
    sh -c 'printf "%s\n" "$1" | grep -qxF "$2"' sh "$missing" "${unreadable#$T/}"

expect_status 4 pq get tree -o "$T/out"
check_ok "get: exactly one failure reported (the damaged block)" \
    [ "$(grep -c 'segment block [0-9]* failed authentication' "$ERR")" -eq 1 ]
expect_stderr_contains "1 damaged catalogue block: the entries in it are lost"
bad=0
good=0
while IFS= read -r name; do
    [ -f "$T/$name" ] || continue
    if cmp -s "$T/$name" "$T/out/$name"; then good=$((good + 1)); else bad=$((bad + 1)); fi
done <"$listed"
check_ok "get: every listed file restored byte-exact ($good files)" [ "$bad" -eq 0 -a "$good" -gt 8000 ]
check_ok "get: nothing restored that list does not show" \
    [ "$(cd "$T/out" && find tree -type f | wc -l)" -eq "$good" ]
check_ok "get: the grown file restored as it was after growing" cmp -s "$T/tree/zz-growing" "$T/out/tree/zz-growing"

expect_status 4 pq check --read-data
expect_stdout_contains "damaged: 1, missing: 0"
check_ok "check: one damaged item, the block" \
    [ "$(grep -c 'segments/0000000000000002: segment block [0-9]* failed authentication' "$ERR")" -eq 1 ]

finish
