# tests/cli/tree.sh: a directory tree round trip compared byte for byte
# with mode and mtime: empty files, files of 4 MiB - 1, 4 MiB, 4 MiB + 1
# and 12 MiB, of exactly one minimum chunk (128 KiB) and one byte more,
# names with spaces, UTF-8 and leading dashes; symbolic links (to a file,
# to a directory, dangling) stored as links and restored as links, never
# followed; a FIFO stored and restored (tests/cli/kinds.sh has the other
# kinds), a socket skipped with one warning.
. "$(dirname "$0")/lib.sh"

init_vault || finish
S=$T/tree
mkdir -p "$S/sub/deeper" "$S/with space" "$S/empty dir" "$S/private"
: >"$S/empty"
head -c 4194304 /dev/urandom >"$S/four-mib"
head -c 4194305 /dev/urandom >"$S/four-mib-plus-one"
head -c 4194303 /dev/urandom >"$S/sub/four-mib-minus-one"
head -c 12582912 /dev/urandom >"$S/sub/twelve-mib"
head -c 131072 /dev/urandom >"$S/sub/chunk-min"
head -c 131073 /dev/urandom >"$S/sub/chunk-min-plus-one"
printf 'spaces\n' >"$S/with space/a b  c.txt"
printf 'utf8\n' >"$S/h$(printf '\303\251')llo w$(printf '\303\266')rld $(printf '\342\234\223').txt"
printf 'dash\n' >"$S/-rf"
printf 'dashes\n' >"$S/sub/deeper/--help"
printf '#!/bin/sh\n' >"$S/sub/script.sh"
printf 'secret\n' >"$S/private/key"
chmod 755 "$S/sub/script.sh"
chmod 600 "$S/private/key"
chmod 640 "$S/four-mib"
chmod 2750 "$S/sub/deeper"
chmod 700 "$S/private"
touch -d '2001-02-03 04:05:06.123456789' "$S/four-mib" "$S/empty" "$S/-rf"
touch -d '1999-12-31 23:59:59' "$S/with space/a b  c.txt"
ln -s four-mib "$S/link-to-file"
ln -s sub "$S/link-to-dir"
ln -s /nonexistent "$S/sub/dangling"
mkfifo "$S/fifo"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$S/sock"
touch -d '2010-01-01 00:00:00' "$S/sub/deeper" "$S/empty dir" "$S/with space"

cd "$T" || exit 1
expect_status 0 pq add tree
expect_stderr_contains "pqvault: add: tree/sock: skipped (socket)"
check_ok "the skipped socket gets one warning line, the links and the FIFO none (and the summary)" \
    test "$(wc -l <"$ERR")" -eq 2
expect_stderr_contains "added: 23 new, 0 changed, 0 unchanged"
# Again: nothing changed, nothing stored.
expect_status 0 pq add tree
expect_stderr_contains "added: 0 new, 0 changed, 23 unchanged"
expect_status 0 pq list tree
expect_stdout_contains "tree/-rf"
expect_stdout_contains "tree/with space/a b  c.txt"
expect_stdout_contains "tree/sub/deeper/--help"
expect_stdout_contains "tree/link-to-file"
expect_stdout_contains "tree/link-to-dir"
expect_stdout_contains "tree/sub/dangling"
check_ok "list shows the FIFO, not the skipped socket" sh -c 'grep -qx "tree/fifo" "$1" && ! grep -q "sock" "$1"' sh "$OUT"
check_ok "the link to a directory was not followed" sh -c '! grep -q "link-to-dir/" "$1"' sh "$OUT"
expect_status 0 pq list -l tree/sub
check_ok "list -l shows directories with d and setgid" grep -q '^drwxr-s--- ' "$OUT"
check_ok "list -l shows a link with l and its target, as ls does" \
    grep -q '^lrwxrwxrwx  *[^ ]*  *[^ ]*  *[0-9]* [0-9-]* [0-9:]* tree/sub/dangling -> /nonexistent$' "$OUT"
expect_status 0 pq list --json tree
check_ok "list --json of the tree is valid JSON" python3 -m json.tool "$OUT" >/dev/null
# Format 3: "objects" is the chunk count.  Every chunk but a region's last
# is 128 KiB to 2 MiB (where the cuts fall depends on the vault's chunker
# key), so N bytes are ceil(N / 2 MiB) to ceil(N / 128 KiB) chunks; a
# file of at most 128 KiB is one chunk.
check_ok "--json reports chunk counts within the chunk size limits" python3 -c '
import json, sys
e = {x["name"]: x for x in json.load(open(sys.argv[1]))}
def ceil(a, b): return -(-a // b)
for n in ("four-mib", "four-mib-plus-one", "sub/four-mib-minus-one", "sub/twelve-mib",
          "sub/chunk-min", "sub/chunk-min-plus-one"):
    x = e["tree/" + n]
    assert ceil(x["size"], 2 << 20) <= x["objects"] <= ceil(x["size"], 128 << 10), x
    assert x["aead"] is None and x["holes"] == 0, x
assert e["tree/four-mib-plus-one"]["objects"] >= 3
assert e["tree/sub/twelve-mib"]["objects"] >= 6
assert e["tree/sub/chunk-min"]["objects"] == 1, e["tree/sub/chunk-min"]
assert e["tree/empty"]["size"] == 0 and e["tree/empty"]["objects"] == 0
assert e["tree/four-mib"]["mode"] == "0640"
assert e["tree/four-mib"]["mtime"] == sys.argv[2], e["tree/four-mib"]["mtime"]
assert e["tree/sub"]["type"] == "dir"
assert e["tree/link-to-file"]["type"] == "symlink"
assert e["tree/link-to-file"]["target"] == "four-mib"
assert e["tree/link-to-dir"]["target"] == "sub"
assert e["tree/sub/dangling"]["target"] == "/nonexistent"
assert e["tree/four-mib"]["target"] is None
' "$OUT" "$(TZ=UTC date -d '2001-02-03 04:05:06.123456789' +%Y-%m-%dT%H:%M:%S.123456789Z 2>/dev/null)"

# listing of a tree: type, mode, mtime (ns), size, name (and a link's
# target), the FIFO too; the skipped socket left out.  (A link's own mode is 777 and its
# size its target's length on Linux.)
sig() {
    (cd "$1" && find . \( -type f -o -type d -o -type l -o -type p \) -printf '%y %m %T@ %s %p %l\n' | sort)
}
sig "$S" >"$T/sig.src"
mkdir -p "$T/restore"
expect_status 0 pq get tree -o "$T/restore"
sig "$T/restore/tree" >"$T/sig.dst"
check_ok "restored tree has the same files, modes and mtimes" cmp -s "$T/sig.src" "$T/sig.dst"
if ! cmp -s "$T/sig.src" "$T/sig.dst"; then diff "$T/sig.src" "$T/sig.dst" | sed 's/^/#   /' | head -20; fi
check_ok "restored tree is byte for byte equal" diff -r "$S" "$T/restore/tree" --no-dereference -x fifo -x sock
check_ok "links restored as links, with their targets" \
    [ "$(readlink "$T/restore/tree/link-to-file"):$(readlink "$T/restore/tree/link-to-dir"):$(readlink "$T/restore/tree/sub/dangling")" = four-mib:sub:/nonexistent ]
check_ok "no temporary files left in the restore" test -z "$(find "$T/restore" -name '*tmp*')"

# restore of a subtree and of a single deep file
expect_status 0 pq get tree/sub -o "$T/restore2"
check_ok "subtree restored under OUT" same_file "$S/sub/twelve-mib" "$T/restore2/tree/sub/twelve-mib"
expect_status 0 pq get "tree/h$(printf '\303\251')llo w$(printf '\303\266')rld $(printf '\342\234\223').txt" -o "$T/u.txt"
check_ok "UTF-8 name round trip" same_file "$S/h$(printf '\303\251')llo w$(printf '\303\266')rld $(printf '\342\234\223').txt" "$T/u.txt"

# an existing tree is not overwritten without --force, and is with it
echo modified >"$T/restore/tree/-rf"
expect_status 1 pq get tree -o "$T/restore"
expect_stderr_contains "(use --force to replace)"
check_ok "refused tree restore kept the modified file" grep -q modified "$T/restore/tree/-rf"
expect_status 0 pq get tree -o "$T/restore" --force
check_ok "--force restored the file" same_file "$S/-rf" "$T/restore/tree/-rf"

# a top-level name with leading dashes, added with -- (from a copy outside
# the stored tree: inside it, it would update tree/-rf)
mkdir -p "$T/dash" && cp "$S/-rf" "$T/dash/-rf"
cd "$T/dash" || exit 1
expect_status 0 pq add -- -rf
cd "$T" || exit 1
expect_status 0 pq list -- -rf
check_ok "name '-rf' stored" sh -c 'printf -- "-rf\n" | cmp -s - "$1"' sh "$OUT"
expect_status 0 pq rm -- -rf
expect_status 0 pq rm tree
expect_status 0 pq list
expect_empty_stdout

# a directory cannot be written to stdout
expect_status 0 pq add "$S/sub" --name d
expect_status 1 pq get d -o -
expect_stderr_contains "pqvault: get: d: is a directory"
expect_empty_stdout

finish
