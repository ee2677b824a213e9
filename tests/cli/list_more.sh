# tests/cli/list_more.sh: list with several prefixes and glob patterns,
# "not found" per operand, --depth, -l's owner columns, link targets,
# readable sizes on a terminal (--bytes for exact) and the totals line,
# a damaged chunk block and a damaged entry block;
# --json keeps its shape and has no totals.
. "$(dirname "$0")/lib.sh"

# onpty CMD...: run CMD with its output on a pseudo-terminal (ptydrv.py,
# as tty.sh); prints what it wrote (CR LF as LF), exits with its status.
onpty() {
    python3 "$(dirname "$0")/ptydrv.py" "" "$@" >"$T/pty.out"
    pst=$?
    tr -d '\r' <"$T/pty.out"
    return $pst
}
# same_lines FILE LINE...: FILE holds exactly these lines.
same_lines() {
    f=$1
    shift
    printf '%s\n' "$@" | cmp -s - "$f"
}

# ---- usage ----
expect_status 0 "$PQV" help list
expect_stdout_contains "--depth N"
expect_stdout_contains "--bytes"
expect_stdout_contains "PATTERN..."
for bad in 0 -1 x 1x 4097 99999999999999999999 ""; do
    expect_status 2 pqn list --depth "$bad"
    expect_stderr_contains "--depth: expected a number from 1 to 4096"
done
expect_status 2 pqn list -l --json
expect_status 2 pqn list --depth

# ---- a tree ----
init_vault || exit 1
mkdir -p "$T/src/docs/sub/deep" "$T/src/photos/2024" "$T/src/empty"
head -c 1500 /dev/zero >"$T/src/docs/a.pdf"
head -c 2500000 /dev/zero >"$T/src/docs/sub/b.pdf"
printf 'hi\n' >"$T/src/docs/notes.txt"
printf 'x\n' >"$T/src/docs/sub/deep/c.pdf"
head -c 100 /dev/zero >"$T/src/photos/x.jpg"
head -c 200 /dev/zero >"$T/src/photos/2024/y.jpg"
printf 'q' >"$T/src/photos/odd[1].jpg"
printf 'top\n' >"$T/src/top.pdf"
expect_status 0 pq add "$T/src/docs" "$T/src/photos" "$T/src/empty" "$T/src/top.pdf"

# ---- operands: prefixes, patterns, several, not found ----
expect_status 0 pq list docs/sub
check_ok "list PREFIX: the name and what is below" same_lines "$OUT" \
    docs/sub docs/sub/b.pdf docs/sub/deep docs/sub/deep/c.pdf
expect_status 0 pq list photos/2024 docs/sub/deep
check_ok "several prefixes: one sorted list" same_lines "$OUT" \
    docs/sub/deep docs/sub/deep/c.pdf photos/2024 photos/2024/y.jpg
expect_status 0 pq list docs docs/sub
check_ok "overlapping operands: each name once" test "$(sort "$OUT" | uniq -d | wc -l)" -eq 0
expect_status 0 pq list 'docs/*.pdf'
check_ok "list 'docs/*.pdf': one level, whole names" same_lines "$OUT" docs/a.pdf
expect_status 0 pq list '**/*.pdf'
check_ok "list '**/*.pdf': any depth" same_lines "$OUT" \
    docs/a.pdf docs/sub/b.pdf docs/sub/deep/c.pdf top.pdf
expect_status 0 pq list '*.pdf'
check_ok "list '*.pdf': anchored at the root" same_lines "$OUT" top.pdf
expect_status 0 pq list 'photos/*/'
check_ok "a trailing slash: directories only" same_lines "$OUT" photos/2024
expect_status 0 pq list 'photos/[x-y]*' 'docs/n?tes.txt'
check_ok "brackets and ?" same_lines "$OUT" docs/notes.txt photos/x.jpg
expect_status 0 pq list 'photos/odd\[1].jpg'
check_ok "an escaped [ is literal" same_lines "$OUT" 'photos/odd[1].jpg'
expect_status 0 pq list ./docs/sub/deep/
check_ok "a prefix is normalised (./, trailing /)" same_lines "$OUT" docs/sub/deep docs/sub/deep/c.pdf
expect_status 1 pq list docs/a.pdf nosuch '*.zip' photos/x.jpg
check_ok "operands that match are listed" same_lines "$OUT" docs/a.pdf photos/x.jpg
expect_stderr_contains "pqvault: list: nosuch: not found"
expect_stderr_contains "pqvault: list: *.zip: not found"
check_ok "one line per operand not found" test "$(wc -l <"$ERR")" -eq 2
expect_status 1 pq list docsx
expect_stderr_contains "docsx: not found"
expect_empty_stdout
expect_status 1 pq list --json 'nope*'
check_ok "--json with nothing found is []" same_lines "$OUT" "[]"
expect_status 1 pq list ../x
expect_one_error_line

# ---- --depth ----
expect_status 0 pq list --depth 1
check_ok "--depth 1: the top level, like ls" same_lines "$OUT" docs empty photos top.pdf
expect_status 0 pq list --depth 1 docs
check_ok "--depth 1 PREFIX: the prefix and one level" same_lines "$OUT" \
    docs docs/a.pdf docs/notes.txt docs/sub
expect_status 0 pq list --depth 2 docs photos/2024
check_ok "--depth under each prefix" same_lines "$OUT" \
    docs docs/a.pdf docs/notes.txt docs/sub docs/sub/b.pdf docs/sub/deep \
    photos/2024 photos/2024/y.jpg
expect_status 0 pq list --depth 1 '**/*.jpg'
check_ok "--depth does not limit patterns" same_lines "$OUT" \
    'photos/2024/y.jpg' 'photos/odd[1].jpg' photos/x.jpg
expect_status 0 pq list --depth 1 docs/a.pdf
check_ok "--depth with a file prefix lists the file" same_lines "$OUT" docs/a.pdf
pq list >"$T/all" 2>"$ERR"
expect_status 0 pq list --depth 4096
check_ok "--depth 4096 is everything" cmp -s "$OUT" "$T/all"
check_ok "everything is 14 entries" test "$(wc -l <"$OUT")" -eq 14

# ---- -l: columns, exact sizes to a pipe, totals ----
expect_status 0 pq list -l docs
check_ok "-l to a pipe: exact sizes" grep -Eq '^-rw-[-r][-w]-[-r][-w]- +([^ ]+ +[^ ]+ +)?2500000 [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} docs/sub/b\.pdf$' "$OUT"
check_ok "-l ends with the totals line" \
    sh -c 'tail -n 1 "$1" | grep -qx "7 entries, 2501505 bytes in 4 files"' sh "$OUT"
expect_status 0 pq list -l docs/notes.txt
check_ok "totals: singular" sh -c 'tail -n 1 "$1" | grep -qx "1 entry, 3 bytes in 1 file"' sh "$OUT"
expect_status 0 pq list -l empty
check_ok "totals of a directory alone" sh -c 'tail -n 1 "$1" | grep -qx "1 entry, 0 bytes in 0 files"' sh "$OUT"
expect_status 0 pq list -l --bytes docs/a.pdf
expect_stdout_contains " 1500 "
# Owners: ls's columns (format 2 records them).
expect_status 0 pq list -l top.pdf
check_ok "-l shows the owner and group" \
    sh -c 'head -n 1 "$1" | awk -v u="$2" -v g="$3" "\$2 == u && \$3 == g {ok=1} END {exit !ok}"' \
    sh "$OUT" "$(id -un)" "$(id -gn)"
# No totals line anywhere else.
expect_status 0 pq list docs
check_ok "plain names: no totals line" sh -c '! grep -q "entries, \| in [0-9]* files\?$" "$1"' sh "$OUT"
expect_status 0 pq list --json docs
check_ok "--json: no totals line, valid JSON of the same shape" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
keys = ["name", "type", "size", "mode", "mtime", "mtime_unix", "aead", "objects",
        "target", "uid", "gid", "user", "group", "link_group", "holes"]
assert all(list(x.keys()) == keys for x in a), a
assert [x["name"] for x in a][:2] == ["docs", "docs/a.pdf"]
assert {x["type"] for x in a} == {"dir", "file"}
' "$OUT"

# ---- a terminal: readable sizes, --bytes for exact ----
expect_status 0 onpty "$PQV" -v "$V" --passphrase-file "$PF" list -l docs
check_ok "on a terminal: readable sizes (2.4M, 1.5K)" \
    sh -c 'grep -q " 2\.4M .* docs/sub/b\.pdf$" "$1" && grep -q " 1\.5K .* docs/a\.pdf$" "$1" && grep -q "  *3 .* docs/notes\.txt$" "$1"' sh "$OUT"
check_ok "on a terminal: readable totals" \
    sh -c 'tail -n 1 "$1" | grep -qx "7 entries, 2\.4 MiB in 4 files"' sh "$OUT"
expect_status 0 onpty "$PQV" -v "$V" --passphrase-file "$PF" list -l docs/notes.txt
check_ok "on a terminal: totals below 1 KiB in bytes" \
    sh -c 'tail -n 1 "$1" | tr -d "\r" | grep -qx "1 entry, 3 bytes in 1 file"' sh "$OUT"
expect_status 0 onpty "$PQV" -v "$V" --passphrase-file "$PF" list -l --bytes docs
check_ok "--bytes on a terminal: exact sizes" grep -q " 2500000 .* docs/sub/b\.pdf$" "$OUT"
check_ok "--bytes on a terminal: exact totals" \
    sh -c 'tail -n 1 "$1" | grep -qx "7 entries, 2501505 bytes in 4 files"' sh "$OUT"
expect_status 1 onpty "$PQV" -v "$V" --passphrase-file "$PF" list nosuch
expect_stdout_contains "nosuch: not found"

# ---- symbolic links: l and their target ----
mkdir -p "$T/ln"
printf 'target\n' >"$T/ln/t"
ln -s t "$T/ln/link"
expect_status 0 pq add "$T/ln"
expect_status 0 pq list -l ln
check_ok "-l shows a link as l, NAME -> TARGET" grep -Eq '^l.* ln/link -> t$' "$OUT"
expect_status 0 pq list --json ln
check_ok "--json: a link's type is symlink" python3 -c '
import json, sys
e = {x["name"]: x for x in json.load(open(sys.argv[1]))}
assert e["ln/link"]["type"] == "symlink" and e["ln/link"]["aead"] is None
assert e["ln/link"]["target"] == "t"
' "$OUT"

# ---- a damaged chunk block (format 3): the names are listed, exit 4 ----
# A segment's chunk blocks follow its entry blocks (docs/FORMAT.md section
# 23): the last bytes of the segment of an add of data are its chunk
# block's tag.  The entries are sound, so every name is listed; where the
# file's chunk lies is unknown, so reading it is an integrity error.
mkdir -p "$T/cb"
printf 'some data\n' >"$T/cb/f"
expect_status 0 pq add "$T/cb"
seg=$V/segments/$(ls "$V/segments" | sort | tail -n 1)
cp "$seg" "$T/seg.good"
flip_byte "$seg" $(($(stat -c %s "$seg") - 3))
expect_status 4 pq list 'docs/*' cb
expect_stdout_contains "docs/a.pdf"
expect_stdout_contains "cb/f"
expect_stderr_contains "segment chunk block 0 failed authentication"
expect_stderr_contains "pqvault: list: 1 damaged catalogue block (reported above)"
expect_status 4 pq get cb/f -o -
expect_stderr_contains "pqvault: get: cb/f: segment chunk block 0 failed authentication"
expect_empty_stdout
cp "$T/seg.good" "$seg"
expect_status 0 pq rm cb

# ---- a damaged catalogue block: reported, the rest listed, exit 4 ----
# The last segment holds an empty file and a link: no data, no chunk
# block, so its last bytes are its entry block's tag.
mkdir -p "$T/eb"
: >"$T/eb/empty"
ln -s empty "$T/eb/link"
expect_status 0 pq add "$T/eb"
seg=$V/segments/$(ls "$V/segments" | sort | tail -n 1)
flip_byte "$seg" $(($(stat -c %s "$seg") - 3))
expect_status 4 pq list 'docs/*' nosuch ln eb
expect_stdout_contains "docs/a.pdf"
expect_stdout_contains "ln/link"
expect_stderr_contains "segment block 0 failed authentication"
check_ok "the damaged block's names are not shown" sh -c '! grep -q "^eb" "$1"' sh "$OUT"
finish
