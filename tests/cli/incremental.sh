# tests/cli/incremental.sh: keeping a tree up to date (issue 11): adding a
# tree again stores what is new or changed and leaves the rest, --delete,
# --force-read, a name from another place, excludes, CACHEDIR.TAG, the
# vault never stored into itself, --dry-run (nothing changes), --verbose,
# --json, the summary line, and an add killed at every durable step then
# run again giving what an uninterrupted add gives.
. "$(dirname "$0")/lib.sh"

init_vault || finish
S=$T/tree
mkdir -p "$S/d/e" "$S/cache" "$S/logs"
for i in 1 2 3 4 5; do printf 'file %s\n' $i >"$S/f$i"; done
printf 'deep\n' >"$S/d/e/deep"
printf 'Signature: 8a477f597d28d172789f06886806bc55\n# a cache\n' >"$S/cache/CACHEDIR.TAG"
printf 'cached\n' >"$S/cache/data"
printf 'log\n' >"$S/logs/a.log"
printf 'keep\n' >"$S/logs/keep.txt"
segs() { find "$V/segments" -type f | wc -l; }

expect_status 0 pq add "$S"
expect_stderr_contains "added: 15 new, 0 changed, 0 unchanged, 0 removed"
n=$(segs)
expect_status 0 pq add "$S"
expect_stderr_contains "added: 0 new, 0 changed, 15 unchanged, 0 removed; 0 B read, 0 B stored"
check_ok "an unchanged tree writes no epoch" [ "$(segs)" -eq "$n" ]

# change one, add one, delete one
printf 'file 1, changed\n' >"$S/f1"
printf 'new\n' >"$S/f6"
rm "$S/f5"
expect_status 0 pq add --verbose "$S"
expect_stderr_contains "tree/f1: changed"
expect_stderr_contains "tree/f6: added"
expect_stderr_contains "added: 1 new, 2 changed, 12 unchanged, 0 removed"
expect_status 0 pq list tree/f5
expect_stdout_contains "tree/f5"
expect_status 0 pq get tree/f1 -o -
expect_stdout_contains "file 1, changed"

# a dry run changes nothing, then --delete removes the vanished file
cp -a "$V" "$T/before-dry"
rm "$S/f4"
expect_status 0 pq add --dry-run --delete "$S"
expect_stderr_contains "tree/f4: would be removed"
expect_stderr_contains "tree/f5: would be removed"
expect_stderr_contains "would add: 0 new, 1 changed, 13 unchanged, 2 removed"
check_ok "--dry-run: the vault is byte for byte as before" diff -r "$T/before-dry" "$V"
expect_status 0 pq add --delete "$S"
expect_stderr_contains "2 removed"
expect_status 1 pq list tree/f5
expect_status 0 pq list tree
check_ok "f4 and f5 gone, f6 there" sh -c "! grep -q 'tree/f[45]' '$OUT' && grep -q tree/f6 '$OUT'"

# --force-read reads every file again; a file that holds what is stored is
# unchanged (format 3 compares its chunks): nothing stored, no epoch
n=$(segs)
expect_status 0 pq add --force-read "$S"
expect_stderr_contains "added: 0 new, 0 changed, 14 unchanged, 0 removed; 109 B read, 0 B stored"
check_ok "--force-read of an unchanged tree writes no epoch" [ "$(segs)" -eq "$n" ]

# the same name from another place is refused, and taken with --force
mkdir -p "$T/other/tree"
printf 'other\n' >"$T/other/tree/x"
expect_status 1 pq add "$T/other/tree"
expect_stderr_contains "tree: already exists, added from $S"
expect_one_error_line
expect_status 0 pq add --force "$T/other/tree"
expect_status 0 pq get tree/x -o -
expect_stdout_contains "other"
# --force replaced the stored tree (no mix of both sources): only x is
# left under tree, and the next add from there is an update
expect_status 0 pq list tree
check_ok "--force: the tree is the new source's alone" test "$(cat "$OUT")" = "$(printf 'tree\ntree/x')"
expect_status 1 pq get tree/f1 -o -
printf 'other, changed\n' >"$T/other/tree/x"
expect_status 0 pq add "$T/other/tree"
expect_status 0 pq get tree/x -o -
expect_stdout_contains "other, changed"
expect_status 1 pq add "$S"
expect_stderr_contains "tree: already exists, added from $T/other/tree"

# a path inside a tree stored from its place updates its name there (not a
# new top-level name); the deepest tree wins; --name still says otherwise
rm -rf "$V" && init_vault
mkdir -p "$T/place/big/sub"
printf 'r1\n' >"$T/place/big/r1.bin"
printf 's\n' >"$T/place/big/sub/s"
expect_status 0 pq add "$T/place/big"
printf 'r1, changed\n' >"$T/place/big/r1.bin"
touch -d '2001-02-03 04:05:06' "$T/place/big/r1.bin"
printf 'n\n' >"$T/place/big/sub/n"
expect_status 0 pq add --json "$T/place/big/r1.bin" "$T/place/big/sub/n"
expect_stdout_contains '{"name": "big/r1.bin", "action": "changed"}'
expect_stdout_contains '{"name": "big/sub/n", "action": "added"}'
expect_status 0 sh -c 'cd "$0" && "$1" -v "$2" --passphrase-file "$3" add --json .' "$T/place/big/sub" "$PQV" "$V" "$PF"
expect_stdout_contains '"name": "big/sub/s", "action": "unchanged"'
expect_status 0 pq list
check_ok "names inside the tree: no new top-level name" test "$(cat "$OUT")" = "$(printf 'big\nbig/r1.bin\nbig/sub\nbig/sub/n\nbig/sub/s')"
expect_status 0 pq get big/r1.bin -o -
expect_stdout_contains "r1, changed"
expect_status 0 pq add "$T/place/big/r1.bin" --name r1-alone
expect_status 0 pq get r1-alone -o -
expect_stdout_contains "r1, changed"

# excludes: patterns, a pattern file, CACHEDIR.TAG; --json
rm -rf "$V" && init_vault
printf '*.log\n# a comment\n\n' >"$T/ex"
expect_status 0 pq add --exclude-from "$T/ex" --exclude 'd/e/' --exclude-caches --json "$S"
expect_stdout_contains '{"name": "tree/f1", "action": "added"}'
expect_stdout_contains '"excluded": 3'
check_ok "--json: every line is one JSON object" python3 -c "
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
assert 'summary' in objs[-1] and objs[-1]['summary']['new'] == len([o for o in objs if o.get('action') == 'added'])
" "$OUT"
expect_status 0 pq list tree
check_ok "excluded names are not stored" sh -c "! grep -q -e 'a.log' -e 'tree/cache' -e 'tree/d/e' '$OUT' && grep -q keep.txt '$OUT'"
expect_status 2 pq add --exclude '' "$S"
expect_status 1 pq add --exclude-from "$T/nonexistent" "$S"

# the vault is never stored into itself
mkdir -p "$T/home"
printf 'x\n' >"$T/home/file"
V=$T/home/vault init_vault
V=$T/home/vault expect_status 0 pq add "$T/home"
expect_stderr_contains "not stored: it is the vault directory itself"
V=$T/home/vault expect_status 0 pq list
check_ok "the vault's files are not in the vault" sh -c "! grep -q 'home/vault' '$OUT' && grep -q home/file '$OUT'"
V=$T/home/vault expect_status 1 pq add "$T/home/vault"
expect_stderr_contains "is the vault's own directory"

# an add killed at every durable step, then run again, equals an add never
# interrupted (checkpoints every 3 entries here: the test build's switch)
if [ -x "$PQV_TEST" ]; then
    K=$T/kill
    mkdir -p "$K/src/a" "$K/src/b"
    for i in 1 2 3 4 5 6 7 8; do printf 'k%s\n' $i >"$K/src/a/k$i"; head -c $((i * 3000)) /dev/urandom >"$K/src/b/r$i"; done
    rm -rf "$V" && init_vault
    cp -a "$V" "$K/empty"
    pq add "$K/src" 2>/dev/null
    pq list --json src >"$K/want.json"
    steps=0 bad=0
    n=1
    while [ $n -lt 200 ]; do
        # (the vault starts over, and so does this machine's memory of it)
        rm -rf "$V" "$XDG_STATE_HOME" && cp -a "$K/empty" "$V"
        PQVAULT_TEST_CHECKPOINT_ENTRIES=3 PQVAULT_TEST_KILL_AT=$n "$PQV_TEST" -v "$V" \
            --passphrase-file "$PF" add "$K/src" >/dev/null 2>&1
        st=$?
        [ $st -eq 0 ] && break
        steps=$((steps + 1))
        "$PQV" -v "$V" --passphrase-file "$PF" add "$K/src" >/dev/null 2>"$K/err" || bad=$((bad + 1))
        "$PQV" -v "$V" --passphrase-file "$PF" list --json src >"$K/got.json" 2>/dev/null
        cmp -s "$K/want.json" "$K/got.json" || { bad=$((bad + 1)); echo "# kill at $n: listing differs"; }
        "$PQV" -v "$V" --passphrase-file "$PF" check --read-data >/dev/null 2>&1 || bad=$((bad + 1))
        n=$((n + 1))
    done
    check_ok "killed at each of $steps steps, the add run again equals an uninterrupted one" \
        [ "$bad" -eq 0 ] && [ "$steps" -gt 10 ]
else
    echo "# SKIP - no test build of the program"
fi
finish
