# tests/cli/add_opts.sh: add's --files-from (one a line, or with -0
# NUL-separated; '-' standard input; names as they are: '#' and spaces
# kept, empty lines skipped, a listed '-' is the file of that name; a
# missing name reported, the rest stored), --exclude-larger-than (sizes
# with suffixes; invalid ones exit 2; what is excluded stays with
# --delete), --exclude-if-present (a directory holding NAME, or NAME that
# begins with HEADER, left out whole, as --exclude-caches does); the dry
# run (-n: no writer lock taken, so it runs while one is held; the vault
# and this machine's state unchanged byte for byte; only what would change
# listed, the unchanged with --verbose; -q keeps the summary); --force-read
# of an unchanged tree (every file read, nothing stored, no epoch); stats
# (text and --json: entries, sizes, chunks, deduplication of a copied
# file, packs and segments as in the storage, --at); check's one line for
# leftovers and temporaries, and --verbose's list of them; info and stats
# say what gc would free.  Everything runs from $T with relative names.
. "$(dirname "$0")/lib.sh"

cd "$T" || exit 1
init_vault || finish

# stored: the stored names, one a line (list's output).
stored() { pq list 2>/dev/null; }
# names_are DESC WANT...: the vault holds exactly the names WANT.
names_are() {
    d=$1
    shift
    printf '%s\n' "$@" | sort >"$T/want.names"
    stored | sort >"$T/got.names"
    if cmp -s "$T/want.names" "$T/got.names"; then
        ok "$d"
    else
        fail "$d: stored $(tr '\n' ' ' <"$T/got.names")"
    fi
}
# same_text DESC FILE TEXT: FILE holds exactly TEXT (and a newline).
same_text() {
    printf '%s\n' "$3" >"$T/want.text"
    if cmp -s "$T/want.text" "$2"; then
        ok "$1"
    else
        fail "$1"
        sed 's/^/#   got: /' "$2"
        sed 's/^/#   want: /' "$T/want.text"
    fi
}
# summary KEY: KEY of the summary of the last add --json (in $OUT).
summary() {
    python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if "summary" in o:
        print(o["summary"][sys.argv[2]])
' "$OUT" "$1"
}
# fingerprint DIR...: every file below DIR with its SHA-256 (and the names
# of directories), to compare a vault before and after.
fingerprint() {
    find "$@" -exec sh -c 'for f; do
        if [ -f "$f" ]; then printf "%s %s %s\n" "$(sha256sum <"$f" | cut -c1-64)" "$(stat -c %s "$f")" "$f"
        else printf "dir %s\n" "$f"; fi; done' sh {} + | sort
}
nsegments() { ls "$V/segments" | wc -l; }

# ---- --files-from ----
mkdir -p src/a src/b
printf 'one\n' >src/a/one
printf 'two\n' >src/a/two
printf 'three\n' >src/b/three
printf 'spaced\n' >'src/sp ace '
printf 'hash\n' >'#x'
printf 'dash\n' >./-

# One a line, relative to the working directory; empty lines skipped; each
# stored under its last component, as an operand is.
printf 'src/a/one\n\nsrc/b\n' >list1
expect_status 0 pq add --files-from list1
expect_stderr_contains "added: 3 new, 0 changed, 0 unchanged, 0 removed"
names_are "--files-from: the listed file and tree stored" one b b/three
# Names as they are: '#' is no comment, trailing spaces are kept, and a
# listed '-' is the file named '-' (not standard input).
printf '#x\nsrc/sp ace \n-\n' >list2
expect_status 0 pq add --files-from list2
names_are "--files-from: '#x', 'sp ace ' and '-' are file names" one b b/three '#x' 'sp ace ' -
expect_status 0 pq get -o "$T/dash.out" -- -
check_ok "the listed '-' is the file '-'" same_file ./- "$T/dash.out"
# A listed name that does not exist: said, the rest stored, exit 1.
printf 'src/a/two\nsrc/nothere\n' >list3
expect_status 1 pq add --files-from list3
expect_stderr_contains "pqvault: add: src/nothere: stat: No such file or directory"
expect_stderr_contains "added: 1 new, 0 changed, 0 unchanged, 0 removed, 1 error"
check_ok "--files-from: the missing name reported once" test "$(grep -c nothere "$ERR")" -eq 1
names_are "--files-from: two stored, nothing for the missing name" one b b/three '#x' 'sp ace ' - two
# -0: NUL-separated, from standard input ('-').
rm -rf "$V" "$XDG_STATE_HOME"
init_vault || finish
printf 'src/a\0src/sp ace \0' | "$PQV" -v "$V" --passphrase-file "$PF" add -0 --files-from - >"$OUT" 2>"$ERR"
check_ok "-0 --files-from -: exit 0 ($?)" test $? -eq 0
names_are "-0 --files-from -: the two names stored" a a/one a/two 'sp ace '
# A newline list piped in; two lists; a list naming nothing (empty).
printf 'src/b/three\n' | "$PQV" -v "$V" --passphrase-file "$PF" add --files-from - --files-from list2 >"$OUT" 2>"$ERR"
check_ok "--files-from - with --files-from FILE: exit 0 ($?)" test $? -eq 0
names_are "two lists: both stored" a a/one a/two 'sp ace ' three '#x' -
: >empty.list
n0=$(nsegments)
expect_status 0 pq add --files-from empty.list
same_text "an empty list: nothing to do, said in the summary" "$ERR" \
    "$(sed -n 1p "$ERR" | grep '^added: 0 new, 0 changed, 0 unchanged, 0 removed; 0 B read, 0 B stored, in ')"
check_ok "an empty list: no epoch" test "$(nsegments)" -eq "$n0"
# A NUL in a newline list (its last line too): refused, nothing stored.
printf 'src/b\0src/a/one' >nul.list
expect_status 1 pq add --files-from nul.list
expect_stderr_contains "nul.list: a line holds a NUL byte (NUL-separated names: -0)"
check_ok "a NUL in the list: no epoch" test "$(nsegments)" -eq "$n0"
printf 'src/b\0src/a/one\n' >nul2.list
n0=$(nsegments)
expect_status 1 pq add --files-from nul2.list
expect_stderr_contains "a line holds a NUL byte"
check_ok "a NUL in a list's first line: no epoch" test "$(nsegments)" -eq "$n0"
# Usage: -0 without a list, '-' for both names and data, no list file.
expect_status 2 pq add -0 src
expect_stderr_contains "-0 is for --files-from"
expect_status 2 pq add --files-from - --name x -
expect_stderr_contains "give one of them"
expect_status 2 pq add --files-from - --files-from -
expect_stderr_contains "standard input given twice"
expect_status 1 pq add --files-from "$T/nolist"
expect_stderr_contains "--files-from: $T/nolist: No such file or directory"
expect_status 2 pq add
expect_stderr_contains "missing PATH operand"
# --name with a list of one name.
printf 'src/a/two\n' >one.list
expect_status 0 pq add --files-from one.list --name renamed
stored >"$T/got.names"
check_ok "--files-from with --name: stored under the name" grep -qx renamed "$T/got.names"
printf 'src/a/two\nsrc/a/one\n' >two.list
expect_status 2 pq add --files-from two.list --name renamed2
expect_stderr_contains "--name needs exactly one PATH"

# ---- --exclude-larger-than ----
rm -rf "$V" "$XDG_STATE_HOME"
init_vault || finish
mkdir -p sz
head -c 100 /dev/urandom >sz/small
head -c 1024 /dev/urandom >sz/exact
head -c 1025 /dev/urandom >sz/over
head -c 3000000 /dev/urandom >sz/big
: >sz/empty
expect_status 0 pq add --verbose --exclude-larger-than 1K sz
expect_stderr_contains "sz/over: excluded (larger than 1024 bytes)"
expect_stderr_contains "sz/big: excluded (larger than 1024 bytes)"
expect_stderr_contains "added: 4 new, 0 changed, 0 unchanged, 0 removed, 2 excluded"
names_are "--exclude-larger-than 1K: at most 1024 bytes stored" sz sz/small sz/exact sz/empty
# The suffixes (powers of 1024, either case, b/B bytes) and plain bytes.
for s in 1024 1024b 1024B 1k 1K; do
    expect_status 0 pq add -n --json --exclude-larger-than $s sz
    check_ok "--exclude-larger-than $s: 2 excluded" test "$(summary excluded)" -eq 2
done
for s in 3M 3m 3g 1T 1t 3000000 16777215T 18446744073709551615; do
    expect_status 0 pq add -n --json --exclude-larger-than $s sz
    check_ok "--exclude-larger-than $s: none excluded" test "$(summary excluded)" -eq 0
    expect_stdout_contains '"name": "sz/big", "action": "would be added"'
done
expect_status 0 pq add -n --json --exclude-larger-than 2999999 sz
check_ok "--exclude-larger-than 2999999: big excluded" test "$(summary excluded)" -eq 1
expect_status 0 pq add -n --json --exclude-larger-than 0 sz
check_ok "--exclude-larger-than 0: every file with data excluded (the empty one not)" \
    test "$(summary excluded)" -eq 4
for s in '' K 1.5K 10KB 1KiB -1 +1 ' 1' '1 ' 0x10 1P 99999999999999999999 16777216T 18446744073709551616; do
    expect_status 2 pq add --exclude-larger-than "$s" sz
    expect_stderr_contains "--exclude-larger-than: not a size: '$s'"
done
n0=$(nsegments)
check_ok "invalid sizes: no epoch" test "$(nsegments)" -eq "$n0"
# What it leaves out stays with --delete; the operand itself can be left out.
expect_status 0 pq add sz
names_are "without the option, every file stored" sz sz/small sz/exact sz/over sz/big sz/empty
rm sz/small
expect_status 0 pq add --delete --exclude-larger-than 1K sz
# (sz changed: a name less)
expect_stderr_contains "added: 0 new, 1 changed, 2 unchanged, 1 removed, 2 excluded"
names_are "--delete keeps what --exclude-larger-than leaves out" sz sz/exact sz/over sz/big sz/empty
n0=$(nsegments)
expect_status 0 pq add --exclude-larger-than 1000 sz/exact --name exact2
expect_stderr_contains "added: 0 new, 0 changed, 0 unchanged, 0 removed, 1 excluded"
check_ok "an operand larger than the size: not stored, no epoch" test "$(nsegments)" -eq "$n0"

# ---- --exclude-if-present ----
rm -rf "$V" "$XDG_STATE_HOME"
init_vault || finish
mkdir -p tg/keep tg/skip/deep tg/hdr tg/hdr2 tg/dirtag/.nobackup
printf 'k\n' >tg/keep/f
: >tg/skip/.nobackup
printf 's\n' >tg/skip/f
printf 'd\n' >tg/skip/deep/f
printf 'MAGIC and more\n' >tg/hdr/TAG
printf 'h\n' >tg/hdr/f
printf 'OTHER\n' >tg/hdr2/TAG
printf 'x\n' >tg/dirtag/f
expect_status 0 pq add --verbose --exclude-if-present .nobackup tg
expect_stderr_contains "tg/skip: excluded (holds .nobackup)"
expect_stderr_contains "tg/dirtag: excluded (holds .nobackup)"
expect_stderr_contains ", 2 excluded;"
names_are "--exclude-if-present .nobackup: the directories holding it left out whole" \
    tg tg/keep tg/keep/f tg/hdr tg/hdr/TAG tg/hdr/f tg/hdr2 tg/hdr2/TAG
rm -rf "$V" "$XDG_STATE_HOME"
init_vault || finish
expect_status 0 pq add --verbose --exclude-if-present TAG:MAGIC --exclude-if-present .nobackup tg
expect_stderr_contains "tg/hdr: excluded (holds TAG)"
expect_stderr_contains ", 3 excluded;"
names_are "NAME:HEADER: only the TAG that begins with MAGIC; repeatable" \
    tg tg/keep tg/keep/f tg/hdr2 tg/hdr2/TAG
# A header longer than the file, or a tag that is not there.
rm -rf "$V" "$XDG_STATE_HOME"
init_vault || finish
expect_status 0 pq add --exclude-if-present 'TAG:MAGIC and more, and more' --exclude-if-present NOPE tg/hdr
names_are "a header longer than the tag file: not excluded" hdr hdr/TAG hdr/f
n0=$(nsegments)
expect_status 0 pq add --exclude-if-present .nobackup tg/skip
expect_stderr_contains "added: 0 new, 0 changed, 0 unchanged, 0 removed, 1 excluded"
check_ok "an operand holding the tag: not stored, no epoch" test "$(nsegments)" -eq "$n0"
for s in '' ':MAGIC' 'a/b' 'a/b:x' '/abs'; do
    expect_status 2 pq add --exclude-if-present "$s" tg
    expect_stderr_contains "--exclude-if-present: not a file name: '$s'"
done
# (These the library refused, exit 1: now usage errors as the others.)
long=$(printf '%0256d' 0)
for s in . .. "$long" "T:${long}x"; do
    expect_status 2 pq add --exclude-if-present "$s" tg
    expect_stderr_contains "--exclude-if-present: not a file name: '$s'"
done
expect_status 0 pq add -n --exclude-if-present "${long%0}:$long" tg
check_ok "invalid tags: no epoch" test "$(nsegments)" -eq "$n0"

# ---- dry run ----
rm -rf "$V" "$XDG_STATE_HOME"
init_vault || finish
mkdir -p dr/sub
printf 'keep\n' >dr/keep
printf 'old\n' >dr/change
printf 'gone\n' >dr/sub/gone
expect_status 0 pq add dr
printf 'newer content\n' >dr/change.new && mv dr/change.new dr/change
rm dr/sub/gone
printf 'fresh\n' >dr/fresh
before=$(fingerprint "$V" "$XDG_STATE_HOME")
# The writer lock held (as a running writer holds it): a dry run runs, a
# writer is refused.
flock -n "$V/lock" sh -c '
    "$1" -v "$2" --passphrase-file "$3" add -n --delete dr >"$4/dry.out" 2>"$4/dry.err"
    echo $? >"$4/dry.rc"
    "$1" -v "$2" --passphrase-file "$3" add -n -q --delete dr >"$4/dryq.out" 2>"$4/dryq.err"
    echo $? >"$4/dryq.rc"
    "$1" -v "$2" --passphrase-file "$3" add -n --verbose --delete dr >"$4/dryv.out" 2>"$4/dryv.err"
    echo $? >"$4/dryv.rc"
    "$1" -v "$2" --passphrase-file "$3" add --delete dr >"$4/real.out" 2>"$4/real.err"
    echo $? >"$4/real.rc"' sh "$PQV" "$V" "$PF" "$T"
check_ok "the lock was held (flock)" test -s "$T/dry.rc"
check_ok "a writer beside the held lock: exit 6 ($(cat "$T/real.rc"))" test "$(cat "$T/real.rc")" = 6
check_ok "add -n beside the held lock: exit 0 ($(cat "$T/dry.rc"): $(head -n 1 "$T/dry.err"))" test "$(cat "$T/dry.rc")" = 0
# (dr and dr/sub changed: a name more, a name less)
same_text "add -n: only what would change, then the summary" "$T/dry.err" "dr: would be stored again (changed)
dr/change: would be stored again (changed)
dr/fresh: would be added
dr/sub: would be stored again (changed)
dr/sub/gone: would be removed
would add: 1 new, 3 changed, 1 unchanged, 1 removed; 20 B to read"
check_ok "add -n: nothing on stdout" test ! -s "$T/dry.out"
check_ok "add -n -q: exit 0" test "$(cat "$T/dryq.rc")" = 0
same_text "add -n -q: the summary alone" "$T/dryq.err" \
    "would add: 1 new, 3 changed, 1 unchanged, 1 removed; 20 B to read"
check_ok "add -n --verbose: exit 0" test "$(cat "$T/dryv.rc")" = 0
check_ok "add -n --verbose: the unchanged too" sh -c "grep -qx 'dr/keep: unchanged' '$T/dryv.err' && [ \$(wc -l <'$T/dryv.err') -eq 7 ]"
after=$(fingerprint "$V" "$XDG_STATE_HOME")
check_ok "add -n: the vault and this machine's state unchanged byte for byte" test "$before" = "$after"
expect_status 0 pq add -n --json --delete dr
check_ok "add -n --json: a dry run's summary" test "$(summary dry_run)" = True
check_ok "add -n --json: 20 bytes to read, none stored" \
    test "$(summary bytes)/$(summary stored_bytes)" = 20/0
expect_stdout_contains '"name": "dr/fresh", "action": "would be added"'
# A vault without the lock file: a dry run does not create it.
rm -f "$V/lock"
before=$(fingerprint "$V" "$XDG_STATE_HOME")
expect_status 0 pq add -n --delete dr
check_ok "add -n: no lock file created" test ! -e "$V/lock"
after=$(fingerprint "$V" "$XDG_STATE_HOME")
check_ok "add -n again: nothing written" test "$before" = "$after"
# The add then does what the dry run said.
expect_status 0 pq add --delete dr
expect_stderr_contains "added: 1 new, 3 changed, 1 unchanged, 1 removed; 20 B read"
names_are "the add after the dry run" dr dr/keep dr/change dr/fresh dr/sub
expect_status 0 pq add -n dr
same_text "add -n of an unchanged tree: its summary alone" "$ERR" \
    "would add: 0 new, 0 changed, 5 unchanged, 0 removed; 0 B to read"

# ---- --force-read of an unchanged tree ----
n0=$(nsegments)
before=$(fingerprint "$V/segments" "$V/packs")
expect_status 0 pq add --force-read --json dr
check_ok "--force-read: every file read (20 + 5 bytes), nothing stored" \
    test "$(summary bytes)/$(summary stored_bytes)/$(summary unchanged)/$(summary changed)" = 25/0/5/0
expect_stdout_contains '"name": "dr/keep", "action": "unchanged (read again)"'
expect_stdout_contains '"name": "dr/sub", "action": "unchanged"'
check_ok "--force-read: no epoch" test "$(nsegments)" -eq "$n0"
after=$(fingerprint "$V/segments" "$V/packs")
check_ok "--force-read: segments and packs unchanged" test "$before" = "$after"
expect_status 0 pq add --force-read --verbose dr
expect_stderr_contains "dr/keep: unchanged (read again)"
expect_stderr_contains "added: 0 new, 0 changed, 5 unchanged, 0 removed; 25 B read, 0 B stored"
expect_status 0 pq add -n --force-read --verbose dr
expect_stderr_contains "dr/keep: would be read again (recorded as unchanged)"
expect_stderr_contains "would add: 0 new, 0 changed, 5 unchanged, 0 removed; 25 B to read"

# ---- stats ----
rm -rf "$V" "$XDG_STATE_HOME"
init_vault || finish
expect_status 0 pq stats --json
check_ok "stats of an empty vault: no entries, ratios null" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["entries"] == 0 and o["files"] == 0 and o["chunks"] == 0, o
assert o["dedup_ratio"] is None and o["compression_ratio"] is None, o
assert o["snapshots"] == 0 and o["leftovers"] == 0 and o["newest"] is True, o
' "$OUT"
mkdir -p st/d
head -c 300000 /dev/urandom >st/d/data
ln -s d/data st/link
expect_status 0 pq add st
cp st/d/data st/copy
expect_status 0 pq add st
expect_status 0 pq stats --json
# (one JSON object; what the storage holds as its files.)
check_ok "stats --json: entries, sizes, chunks, deduplication 2, packs and segments" python3 -c '
import json, os, sys
o = json.load(open(sys.argv[1]))
v = sys.argv[2]
def files(d):
    r = []
    for root, _, names in os.walk(os.path.join(v, d)):
        r += [os.path.getsize(os.path.join(root, n)) for n in names if ".tmp-" not in n]
    return r
packs, segs = files("packs"), files("segments")
assert o["format"] == 3 and o["newest"] is True and o["snapshots"] == 2, o
assert (o["entries"], o["files"], o["directories"], o["symlinks"]) == (5, 2, 2, 1), o
assert o["size"] == 600000 and o["data"] == 600000, o
assert o["unique_bytes"] == 300000 and 1 <= o["chunks"] <= 3, o
assert abs(o["dedup_ratio"] - 2.0) < 1e-9, o
assert o["stored_bytes"] >= 300000 and o["compression_ratio"] <= 1.0, o
assert (o["packs"], o["pack_bytes"]) == (len(packs), sum(packs)), (o, packs)
assert (o["segments"], o["segment_bytes"]) == (len(segs), sum(segs)), (o, segs)
assert o["stored_bytes"] <= o["pack_bytes"], o
assert (o["leftovers"], o["reclaimable_bytes"], o["temporaries"]) == (0, 0, 0), o
assert o["unlocated_chunks"] == 0, o
' "$OUT" "$V"
expect_status 0 pq stats
expect_stdout_contains "state:           epoch 3, the newest; 2 snapshots kept"
expect_stdout_contains "entries:         5: 2 files, 2 directories, 1 symbolic link"
expect_stdout_contains "logical size:    585.9 KiB in files (600000 bytes)"
expect_stdout_contains "distinct data:   293.0 KiB in "
expect_stdout_contains ": deduplication 2.00x"
expect_stdout_contains "reclaimable:     0 B in 0 leftovers"
check_ok "stats: 8 lines" test "$(wc -l <"$OUT")" -eq 8
expect_status 0 pq --at 2 stats --json
check_ok "stats --at 2: the first snapshot (no copy: deduplication 1), leftovers not judged" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["epoch"] == 2 and o["newest"] is False and o["snapshots"] == 2, o
assert (o["entries"], o["files"], o["size"], o["unique_bytes"]) == (4, 1, 300000, 300000), o
assert o["dedup_ratio"] == 1.0, o
assert o["leftovers"] is None and o["reclaimable_bytes"] is None and o["temporaries"] is None, o
' "$OUT"
expect_status 0 pq --at 2 stats
expect_stdout_contains "state:           epoch 2 (snapshot, --at); 2 snapshots kept"
expect_stdout_contains ": deduplication 1.00x"
check_ok "stats --at: no reclaimable line" sh -c "! grep -q reclaimable '$OUT'"
expect_status 1 pq --at 9 stats
expect_status 2 pq stats extra
expect_status 2 pq stats --verbose

# ---- check's leftovers and temporaries ----
# A leftover: a pack of this vault no entry refers to, made by an add of a
# copy of the vault (its own state directory) and put in this one.
cp -a "$V" "$T/copy"
printf 'unique to the copy\n' >extra
"$PQV" -v "$T/copy" --state-dir "$T/copy.state" --passphrase-file "$PF" add extra >/dev/null 2>&1
( cd "$T/copy" && find packs -type f | sort ) >"$T/copy.packs"
( cd "$V" && find packs -type f | sort ) >"$T/v.packs"
extra=$(comm -13 "$T/v.packs" "$T/copy.packs")
check_ok "the copy's add wrote one pack" test "$(printf '%s\n' "$extra" | grep -c .)" -eq 1
mkdir -p "$V/$(dirname "$extra")"
cp "$T/copy/$extra" "$V/$extra"
size=$(stat -c %s "$V/$extra")
check_ok "the extra pack is small ($size bytes)" test "$size" -lt 1024
expect_status 0 pq check
expect_stdout_contains "leftovers: 1, temporaries: 0"
same_text "check: the leftover in one line" "$ERR" \
    "pqvault: check: 1 leftover ($size B) no entry refers to: what interrupted commands leave, not damage; 'pqvault gc' removes it (check --verbose lists them)"
# A temporary beside it.
tmp=$(head -n 1 "$T/v.packs").tmp-12345
cp "$V/$(head -n 1 "$T/v.packs")" "$V/$tmp"
expect_status 0 pq check
expect_stdout_contains "leftovers: 1, temporaries: 1"
same_text "check: leftover and temporary in one line" "$ERR" \
    "pqvault: check: 1 leftover ($size B) no entry refers to, and 1 temporary file: what interrupted commands leave, not damage; 'pqvault gc' removes them (check --verbose lists them)"
expect_status 0 pq check --verbose
sed '$d' "$ERR" | sort >"$T/listed"
same_text "check --verbose: each listed" "$T/listed" \
    "$(printf '%s\n' "pqvault: check: $extra: a pack no entry refers to (gc removes it)" \
        "pqvault: check: $tmp: leftover temporary file (gc removes it)" | sort)"
sed -n '$p' "$ERR" >"$T/last"
same_text "check --verbose: then the line" "$T/last" \
    "pqvault: check: 1 leftover ($size B) no entry refers to, and 1 temporary file: what interrupted commands leave, not damage; 'pqvault gc' removes them"
expect_status 0 pqn check --no-key
expect_stdout_contains "temporaries: 1"
same_text "check --no-key: the temporary in one line" "$ERR" \
    "pqvault: check: 1 temporary file: what interrupted commands leave, not damage; 'pqvault gc' removes it (check --verbose lists them)"
expect_status 0 pqn check --no-key --verbose
expect_stderr_contains "pqvault: check: $tmp: leftover temporary file (gc removes it)"
expect_status 0 pq info
expect_stdout_contains "reclaimable:     $size B in 1 leftover and 1 temporary ('pqvault gc' removes them)"
expect_status 0 pq stats
expect_stdout_contains "reclaimable:     $size B in 1 leftover and 1 temporary ('pqvault gc' removes them)"
expect_status 0 pq stats --json
check_ok "stats --json: the leftover and the temporary" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert (o["leftovers"], o["reclaimable_bytes"], o["temporaries"]) == (1, int(sys.argv[2]), 1), o
' "$OUT" "$size"
expect_status 0 pq gc
expect_stdout_contains "(leftovers: 1, temporaries: 1)"
expect_status 0 pq check
check_ok "check after gc: nothing on stderr" test ! -s "$ERR"
expect_stdout_contains "leftovers: 0, temporaries: 0"
finish
