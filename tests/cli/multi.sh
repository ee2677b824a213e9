# tests/cli/multi.sh: one command, one epoch, whatever the operand count
# (issue 21).  add of 50 operands and rm of 50 names each write one epoch
# (one segment, one snapshot in log); get of many operands restores them all
# byte-exact into -o DIR and the current directory; an operand that names nothing is an
# error (exit 1, "NAME: not found", as list's) and the others are still
# restored or removed (rm is not refused whole); patterns as list's
# ('tree/*.txt' one level, '**' any depth), a stored name with glob
# characters is that name (list, get, rm); get --include/--exclude over whole
# names; get a b -o - writes a then b to standard output (a directory or a
# missing name among them an error, the others written); one progress total
# for a multi-operand restore (on a pseudo-terminal); a file replaced (its old
# data collected) while a get of several reads it, after the files before
# it were written: read again from its new version.
. "$(dirname "$0")/lib.sh"

# segments: the number of segment files (one a committed epoch).
segments() { find "$V/segments" -type f ! -name '*.tmp*' | wc -l; }
# snapshots: the number of snapshots log --json lists.
snapshots() { pq log --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }
# same_lines FILE LINE...: FILE holds exactly these lines.
same_lines() {
    f=$1
    shift
    printf '%s\n' "$@" | cmp -s - "$f"
}
# same_tree A B: the regular files under A and B are the same names with
# the same bytes.
same_tree() {
    (cd "$1" && find . -type f | sort) >"$T/tree.a"
    (cd "$2" && find . -type f | sort) >"$T/tree.b"
    cmp -s "$T/tree.a" "$T/tree.b" || return 1
    while IFS= read -r f; do
        cmp -s "$1/$f" "$2/$f" || return 1
    done <"$T/tree.a"
}

init_vault || finish

# ---- add: 50 operands, one epoch ----
mkdir -p "$T/src/tree/sub"
i=0
while [ "$i" -lt 50 ]; do
    i=$((i + 1))
    printf 'file %d\n' "$i" >"$T/src/tree/f$i.txt"
    [ $((i % 5)) -eq 0 ] && head -c $((i * 1000)) /dev/urandom >"$T/src/tree/f$i.txt"
done
s0=$(segments)
n0=$(snapshots)
here=$PWD
cd "$T/src/tree" || exit 1
expect_status 0 pq add f*.txt
cd "$here" || exit 1
check_ok "add of 50 operands: one new segment" [ "$(segments)" -eq $((s0 + 1)) ]
check_ok "add of 50 operands: one snapshot" [ "$(snapshots)" -eq $((n0 + 1)) ]
pq log --json | python3 -c '
import json, sys
s = json.load(sys.stdin)[0]
assert s["command"] == "add" and s["added"] == 50 and len(s["operands"]) == 50, s
' 2>"$ERR"
check_ok "add of 50 operands: the snapshot has the 50 operands and 50 entries" [ ! -s "$ERR" ]
expect_status 0 pq list
check_ok "add of 50 operands: 50 top-level names" [ "$(wc -l <"$OUT")" -eq 50 ]

# ---- rm: 50 names, one epoch, one snapshot ----
s0=$(segments)
n0=$(snapshots)
names=$(i=0; while [ "$i" -lt 50 ]; do i=$((i + 1)); printf 'f%d.txt ' "$i"; done)
# shellcheck disable=SC2086
expect_status 0 pq rm $names
expect_stderr_contains "removed: 50 entries"
check_ok "rm of 50 names: one new segment" [ "$(segments)" -eq $((s0 + 1)) ]
check_ok "rm of 50 names: one snapshot" [ "$(snapshots)" -eq $((n0 + 1)) ]
pq log --json | python3 -c '
import json, sys
s = json.load(sys.stdin)[0]
assert s["command"] == "rm" and s["removed"] == 50 and len(s["operands"]) == 50, s
' 2>"$ERR"
check_ok "rm of 50 names: the snapshot removed 50 entries" [ ! -s "$ERR" ]
expect_status 0 pq list
expect_empty_stdout

# ---- get: many operands, byte-exact ----
printf 'deep\n' >"$T/src/tree/sub/d.txt"
printf 'log 1\n' >"$T/src/tree/a.log"
printf 'log 2\n' >"$T/src/tree/sub/b.log"
printf 'bracket\n' >"$T/src/tree/odd[1].txt"
printf 'star\n' >"$T/src/tree/st*r"
printf 'plain\n' >"$T/src/tree/odd1.txt"
expect_status 0 pq -q add "$T/src/tree"
names=$(i=0; while [ "$i" -lt 50 ]; do i=$((i + 1)); printf 'tree/f%d.txt ' "$i"; done)
# shellcheck disable=SC2086
expect_status 0 pq get $names tree/sub -o "$T/o1"
mkdir -p "$T/want/tree/sub"
cp "$T/src/tree"/f*.txt "$T/want/tree/"
cp "$T/src/tree/sub"/* "$T/want/tree/sub/"
check_ok "get of 51 operands -o DIR: every file byte-exact, nothing else" same_tree "$T/o1" "$T/want"
mkdir "$T/o2"
# shellcheck disable=SC2086
here=$PWD
cd "$T/o2" || exit 1
expect_status 0 pq get $names tree/sub
cd "$here" || exit 1
check_ok "get of 51 operands, no -o: into the current directory, byte-exact" same_tree "$T/o2" "$T/want"

# ---- an operand that names nothing: exit 1, the others done ----
expect_status 1 pq get tree/f1.txt nosuch tree/f2.txt -o "$T/o3"
expect_stderr_contains "nosuch: not found"
check_ok "get with a missing operand: the others restored" \
    sh -c 'cmp -s "$1/tree/f1.txt" "$2/f1.txt" && cmp -s "$1/tree/f2.txt" "$2/f2.txt"' \
    sh "$T/o3" "$T/src/tree"
expect_status 1 pq get 'nomatch*' tree/f3.txt -o "$T/o4"
expect_stderr_contains "nomatch*: not found"
check_ok "get with a pattern matching nothing: the others restored" \
    same_file "$T/o4/tree/f3.txt" "$T/src/tree/f3.txt"
expect_status 1 pq list tree/f1.txt nosuch
expect_stderr_contains "nosuch: not found"
s0=$(segments)
expect_status 1 pq rm tree/f49.txt nosuch tree/f50.txt
expect_stderr_contains "nosuch: not found"
expect_stderr_contains "removed: 2 entries"
check_ok "rm with a missing operand: one epoch, the others removed (not refused whole)" \
    [ "$(segments)" -eq $((s0 + 1)) ]
expect_status 1 pq list tree/f49.txt tree/f50.txt
expect_stderr_contains "tree/f49.txt: not found"
pq log --json | python3 -c '
import json, sys
s = json.load(sys.stdin)[0]
assert s["operands"] == ["tree/f49.txt", "tree/f50.txt"], s
' 2>"$ERR"
check_ok "rm with a missing operand: the snapshot lists the operands that named something" \
    [ ! -s "$ERR" ]
s0=$(segments)
expect_status 1 pq rm nosuch 'none*'
check_ok "rm of names that name nothing: no epoch" [ "$(segments)" -eq "$s0" ]
expect_status 0 pq rm --dry-run tree/f1.txt tree/f2.txt
expect_stderr_contains "would remove: 2 entries"
check_ok "rm --dry-run of several: no epoch" [ "$(segments)" -eq "$s0" ]

# ---- patterns ----
expect_status 0 pq get 'tree/*.txt' -o "$T/p1"
(cd "$T/p1" && find . -type f | sort) >"$T/p1.list"
check_ok "get 'tree/*.txt': the top-level .txt files of tree, not sub's" \
    sh -c 'grep -qx "./tree/f1.txt" "$1" && grep -qx "./tree/odd\[1\].txt" "$1" &&
        ! grep -q "sub/" "$1" && ! grep -q "\.log" "$1" && [ "$(wc -l <"$1")" -eq 50 ]' sh "$T/p1.list"
check_ok "get 'tree/*.txt': byte-exact" same_file "$T/p1/tree/f45.txt" "$T/src/tree/f45.txt"
expect_status 0 pq get 'tree/**/*.log' -o "$T/p2"
check_ok "get 'tree/**/*.log': every depth" \
    sh -c 'cmp -s "$1/tree/a.log" "$2/a.log" && cmp -s "$1/tree/sub/b.log" "$2/sub/b.log"' \
    sh "$T/p2" "$T/src/tree"
s0=$(segments)
expect_status 0 pq rm 'tree/*.log'
check_ok "rm 'tree/*.log': one epoch" [ "$(segments)" -eq $((s0 + 1)) ]
expect_status 0 pq list 'tree/**/*.log'
check_ok "rm 'tree/*.log': tree/a.log gone, tree/sub/b.log kept" same_lines "$OUT" tree/sub/b.log
# A stored name with glob characters is that name.
expect_status 0 pq list 'tree/odd[1].txt'
check_ok "list of a stored name with [ ]: that name only" same_lines "$OUT" 'tree/odd[1].txt'
expect_status 0 pq get 'tree/odd[1].txt' 'tree/st*r' -o "$T/g1"
check_ok "get of stored names with [ ] and *: those names" \
    sh -c 'cmp -s "$1/tree/odd[1].txt" "$2/odd[1].txt" && cmp -s "$1/tree/st*r" "$2/st*r" &&
        [ ! -e "$1/tree/odd1.txt" ] && [ "$(find "$1" -type f | wc -l)" -eq 2 ]' sh "$T/g1" "$T/src/tree"
expect_status 0 pq get 'tree/odd[1].txt' -o -
check_ok "get of a stored name with [ ] -o -: its bytes" same_file "$OUT" "$T/src/tree/odd[1].txt"
expect_status 0 pq rm 'tree/odd[1].txt' 'tree/st*r'
expect_stderr_contains "removed: 2 entries"
expect_status 0 pq list 'tree/odd*'
check_ok "rm of stored names with [ ] and *: those only (odd1.txt kept)" same_lines "$OUT" tree/odd1.txt
# Not stored any more: now a pattern ('odd[1].txt' matches odd1.txt).
expect_status 0 pq list 'tree/odd[1].txt'
check_ok "a name with [ ] not stored is a pattern" same_lines "$OUT" tree/odd1.txt

# ---- get --include / --exclude (whole names) ----
expect_status 0 pq get tree --include 'tree/sub/**' -o "$T/i1"
check_ok "get --include: only what matches" \
    sh -c '[ "$(find "$1" -type f | wc -l)" -eq 2 ] && cmp -s "$1/tree/sub/d.txt" "$2/sub/d.txt"' \
    sh "$T/i1" "$T/src/tree"
expect_status 0 pq get tree --exclude 'tree/f*.txt' --exclude tree/sub -o "$T/i2"
check_ok "get --exclude: the rest" \
    sh -c '[ "$(find "$1" -type f | wc -l)" -eq 1 ] && cmp -s "$1/tree/odd1.txt" "$2/odd1.txt"' \
    sh "$T/i2" "$T/src/tree"
expect_status 0 pq get tree/sub tree/f7.txt --exclude '**/*.log' -o "$T/i3"
check_ok "get of several operands --exclude: applies to every operand" \
    sh -c '[ "$(find "$1" -type f | wc -l)" -eq 2 ] && [ -f "$1/tree/sub/d.txt" ] &&
        [ -f "$1/tree/f7.txt" ]' sh "$T/i3"
expect_status 2 pq get tree/f1.txt --include 'x*' -o -
expect_stderr_contains "no --include or --exclude"

# ---- get a b -o -: each in turn ----
expect_status 0 pq get tree/f5.txt tree/f1.txt tree/f10.txt -o -
cat "$T/src/tree/f5.txt" "$T/src/tree/f1.txt" "$T/src/tree/f10.txt" >"$T/cat"
check_ok "get a b c -o -: a, b, c in operand order" same_file "$OUT" "$T/cat"
expect_status 0 pq get 'tree/f1?.txt' -o -
cat "$T/src/tree"/f1?.txt >"$T/cat"
check_ok "get PATTERN -o -: the files it matches in name order" same_file "$OUT" "$T/cat"
expect_status 1 pq get tree/f5.txt nosuch tree/sub tree/f1.txt -o -
expect_stderr_contains "nosuch: not found"
expect_stderr_contains "tree/sub: is a directory"
cat "$T/src/tree/f5.txt" "$T/src/tree/f1.txt" >"$T/cat"
check_ok "get -o - with a missing name and a directory: exit 1, the files written" \
    same_file "$OUT" "$T/cat"

# ---- one progress total (a pseudo-terminal) ----
mkdir -p "$T/big"
head -c 3000000 /dev/urandom >"$T/big/b1"
head -c 5000000 /dev/urandom >"$T/big/b2"
expect_status 0 pq -q add "$T/big"
# totals FILE: the distinct totals the bar drew ("N.N MiB" after " / ").
totals() { tr '\r' '\n' <"$1" | sed -n 's/^get .*\] .* \/ \([^ ]* [^ ]*\) .*/\1/p' | sort -u; }
expect_status 0 python3 "$(dirname "$0")/ptydrv.py" "" "$PQV" -v "$V" --passphrase-file "$PF" \
    get big -o "$T/t1"
totals "$OUT" >"$T/tot1"
expect_status 0 python3 "$(dirname "$0")/ptydrv.py" "" "$PQV" -v "$V" --passphrase-file "$PF" \
    get big/b1 big/b2 -o "$T/t2"
totals "$OUT" >"$T/tot2"
check_ok "get of 2 operands on a terminal: one total, the directory's (both files)" \
    sh -c '[ "$(wc -l <"$1")" -eq 1 ] && cmp -s "$1" "$2"' sh "$T/tot2" "$T/tot1"
check_ok "get of 2 operands on a terminal: the bar reaches 100%" \
    sh -c 'tr "\r" "\n" <"$1" | grep -q "^get 100%"' sh "$OUT"
check_ok "get of 2 operands: byte-exact" same_tree "$T/t2" "$T/t1"

# ---- a file replaced while a get of several reads it ----
# The test build stops itself (PQVAULT_TEST_STOP_AT) before it opens the
# second file's temporary, the first one written (the restore's progress
# past 0): meanwhile that file is replaced and its old data forgotten and
# collected, so reading it fails and it is read again from its new version
# (its own temporary rewound, the first file's bytes untouched).
# stopped_run ACTION CMD...: run CMD, and once it has stopped itself run
# the shell code ACTION and let it go on (waitpid, no polling); exits with
# CMD's status.
stopped_run() {
    python3 -c '
import os, signal, subprocess, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, st = os.waitpid(pid, os.WUNTRACED)
if os.WIFSTOPPED(st):
    subprocess.call(["sh", "-c", sys.argv[1]])
    os.kill(pid, signal.SIGCONT)
    _, st = os.waitpid(pid, 0)
else:
    print("stopped_run: it never stopped", file=sys.stderr)
sys.exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))
' "$@"
}
mkdir -p "$T/rr"
head -c 300000 /dev/urandom >"$T/rr/aa-first"
head -c 200000 /dev/urandom >"$T/zz1"
head -c 250000 /dev/urandom >"$T/zz2"
expect_status 0 pq -q add "$T/rr"
expect_status 0 pq -q add "$T/zz1" --name rr/zz-second
q="\"$PQV\" -q -v \"$V\" --passphrase-file \"$PF\""
expect_status 0 stopped_run "$q add --force \"$T/zz2\" --name rr/zz-second && $q forget --keep-last 1 &&
    $q gc" env PQVAULT_TEST_STOP_PATH=zz-second PQVAULT_TEST_STOP_AT=open:1 \
    "$PQV_TEST" -v "$V" --passphrase-file "$PF" get rr/aa-first rr/zz-second -o "$T/rr.out"
check_ok "get a b, b replaced and collected after a was written: a byte-exact" \
    same_file "$T/rr.out/rr/aa-first" "$T/rr/aa-first"
check_ok "get a b, b replaced and collected after a was written: b read again, its new version" \
    same_file "$T/rr.out/rr/zz-second" "$T/zz2"
check_ok "get a b, b read again: no temporary left" \
    sh -c '! find "$1" -name "*.tmp-*" | grep -q .' sh "$T/rr.out"

# An add of many directory operands holds the directories of one operand's
# files at a time (fsutil_dirs): 40 trees 4 levels deep under a limit of
# 72 descriptors (was: each operand's directories still held while the
# next was read, 40 x 4 of them).
i=0
while [ "$i" -lt 40 ]; do
    i=$((i + 1))
    mkdir -p "$T/deep/d$i/a/b/c"
    printf 'deep %d\n' "$i" >"$T/deep/d$i/a/b/c/f"
done
here=$PWD
cd "$T/deep" || exit 1
expect_status 0 sh -c 'ulimit -n 72 && exec "$@"' sh "$PQV" -v "$V" --passphrase-file "$PF" add d*
cd "$here" || exit 1
expect_stderr_contains "added: 200 new, 0 changed"
expect_status 0 pq get d17/a/b/c/f -o -
check_ok "the deep trees stored: d17's file read back" [ "$(cat "$OUT")" = "deep 17" ]

finish
