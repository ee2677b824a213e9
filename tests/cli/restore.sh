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
# The check before writing holds the destination's directories open and
# asks nothing below one that is absent (dest_exists): a file that exists
# beside an absent directory, and one below a directory after a sibling
# found absent, are still found.
mkdir -p "$T/s4/proj/src"
printf 'mine\n' >"$T/s4/proj/src/main.c"
expect_status 1 pq get proj -o "$T/s4"
expect_stderr_contains "s4/proj/src/main.c: already exists"
check_ok "refused past an absent doc/ and src/lib/: nothing written" \
    [ ! -e "$T/s4/proj/doc" ] && [ ! -e "$T/s4/proj/src/lib" ]
rm "$T/s4/proj/src/main.c" && mkdir -p "$T/s4/proj/src/lib" && printf 'mine\n' >"$T/s4/proj/src/lib/lib.c"
expect_status 1 pq get proj -o "$T/s4"
expect_stderr_contains "s4/proj/src/lib/lib.c: already exists"
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

# Dry runs and summaries say what the real command does (review of the docs).
mkdir -p "$T/dr"
printf 'was here\n' >"$T/dr/f"
expect_status 0 pq add "$T/dr" --name dr
expect_status 0 pq get dr/f -o "$T/dr-out"
expect_status 1 pq get dr/f -o "$T/dr-out" -n
expect_stderr_contains "dr-out: already exists (use --force to replace)"
expect_status 0 pq get dr/f -o "$T/dr-out" -n -f
expect_stderr_contains "would be restored"
expect_status 0 pq get dr/f -o "$T/dr-out" -n --skip-existing
expect_stderr_contains "skipped (exists)"
expect_status 0 pq get dr/f dr -n -o "$T/dr-multi/"
expect_stderr_contains "$T/dr-multi/dr/f: would be restored"
check_ok "a dry run's paths have one slash" sh -c '! grep -q "//" "$1"' sh "$ERR"
check_ok "a dry run makes no directory" [ ! -e "$T/dr-multi" ]
expect_status 1 pq get dr/f -o "$T/dr-out" --json
check_ok "get --json: a refused operand is an error in the summary" \
    grep -q '"restored": 0, "bytes": 0, "skipped": 0, "errors": 1,' "$OUT"
printf 'streamed\n' | pq add - --name streamed >"$OUT" 2>"$ERR"
expect_stderr_contains "added: 1 new, 0 changed"
printf 'streamed again\n' | pq add -f - --name streamed >"$OUT" 2>"$ERR"
expect_stderr_contains "added: 0 new, 1 changed"
# A dry run changes nothing, not even a format-1 vault's format.
cp -r tests/fixtures/v1-aes "$T/v1dry" && chmod -R u+w "$T/v1dry"
cp -a "$T/v1dry" "$T/v1dry.before"
expect_status 0 "$PQV" -v "$T/v1dry" --passphrase-file tests/fixtures/v1.pass add -n "$T/dr"
expect_stderr_contains "would add: "
check_ok "add --dry-run leaves a format-1 vault byte for byte (not upgraded)" \
    diff -r -x lock "$T/v1dry.before" "$T/v1dry"
finish
