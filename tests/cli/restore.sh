# tests/cli/restore.sh: restoring the way people restore (issue 11):
# --strip-components, --skip-existing, several names into a directory that
# does not exist yet, --to-original, --dry-run (nothing written), --json,
# the summary line; rm --dry-run and its count.
. "$(dirname "$0")/lib.sh"

init_vault || finish
S=$T/proj
mkdir -p "$S/src/lib" "$S/doc"
printf 'main\n' >"$S/src/main.c"
printf 'lib\n' >"$S/src/lib/lib.c"
printf 'readme\n' >"$S/doc/README"
expect_status 0 pq add "$S"

# --strip-components: as tar's
expect_status 0 pq get proj -o "$T/s1" --strip-components 1
check_ok "strip 1: src/main.c at the top" [ -f "$T/s1/src/main.c" ] && [ ! -e "$T/s1/proj" ]
expect_stderr_contains "restored: 6 entries, 16 B in"
expect_status 0 pq get proj/src -o "$T/s2" --strip-components 2
check_ok "strip 2: main.c and lib/ at the top" [ -f "$T/s2/main.c" ] && [ -f "$T/s2/lib/lib.c" ]
expect_status 1 pq get proj/src/main.c -o "$T/s3/" --strip-components 3
expect_status 2 pq get proj --strip-components x

# existing files: refused before anything is written, or skipped
printf 'mine\n' >"$T/s1/src/main.c"
rm "$T/s1/doc/README"
expect_status 1 pq get proj -o "$T/s1" --strip-components 1
expect_stderr_contains "already exists"
check_ok "refused: nothing written" [ ! -e "$T/s1/doc/README" ]
expect_status 0 pq get proj -o "$T/s1" --strip-components 1 --skip-existing
expect_stderr_contains "skipped (existing)"
check_ok "--skip-existing: mine kept, the missing one restored" \
    [ "$(cat "$T/s1/src/main.c")" = mine ] && [ -f "$T/s1/doc/README" ]
expect_status 2 pq get proj --force --skip-existing

# several names into a directory that does not exist yet
expect_status 0 pq get proj/doc proj/src/main.c -o "$T/new/dir"
check_ok "several names into a new directory" \
    [ -f "$T/new/dir/proj/doc/README" ] && [ -f "$T/new/dir/proj/src/main.c" ]

# --dry-run writes nothing; --json
expect_status 0 pq get proj -n -o "$T/dry"
expect_stderr_contains "would restore: 7 entries"
check_ok "--dry-run: no destination made" [ ! -e "$T/dry" ]
expect_status 0 pq get proj --json -o "$T/js"
expect_stdout_contains '{"name": "proj/src/main.c", "action": "restored"}'
expect_stdout_contains '"restored": 7'

# --to-original: back where it was added from
rm -rf "$S/src"
expect_status 0 pq get --to-original proj/src
check_ok "--to-original: proj/src back in place" [ "$(cat "$S/src/lib/lib.c")" = lib ]
expect_status 1 pq get --to-original proj
expect_stderr_contains "already exists"
expect_status 2 pq get --to-original proj -o "$T/x"
printf 'piped\n' | pq add - --name piped >/dev/null 2>&1
expect_status 1 pq get --to-original piped
expect_stderr_contains "original place is not recorded"

# rm: a dry run, then the count
cp -a "$V" "$T/before-rm"
expect_status 0 pq rm -n proj/src
expect_stderr_contains "proj/src/lib/lib.c: would be removed"
expect_stderr_contains "would remove: 4 entries"
check_ok "rm --dry-run: the vault is byte for byte as before" diff -r "$T/before-rm" "$V"
expect_status 0 pq rm proj/src
expect_stderr_contains "removed: 4 entries"
expect_status 0 pq -q rm proj/doc
check_ok "-q: no summary" [ ! -s "$ERR" ]
finish
