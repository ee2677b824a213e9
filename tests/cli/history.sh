# tests/cli/history.sh: history (issue 20; docs/FORMAT.md section 26):
# every add, rm and import a snapshot; log (--json, -n, NAME); every
# snapshot restored byte-exact with --at after each kind of change
# (content, mode, rename, delete, file -> link -> directory -> file);
# --at by epoch, latest~N, date and time, refused for writers; diff and
# versions; forget's rules (restic's: --keep-last, --keep-daily of
# snapshots of one day, --keep-within), --dry-run, pins, forgetting by
# name; gc frees only what no kept snapshot needs, across a compaction;
# a kept snapshot's segment deleted or replaced is found (exit 4) by every
# command, a forgotten one put back is only a leftover; a ransomware drill.
. "$(dirname "$0")/lib.sh"

init_vault || finish
S=$T/src
mkdir -p "$S"
# snap: the newest snapshot's epoch.
snap() { pq log --json -n 1 2>/dev/null | sed -n 's/.*"epoch": \([0-9]*\).*/\1/p'; }
# tree_is DIR REF: DIR holds exactly REF's files, byte for byte.
tree_is() { diff -r "$1" "$2" >/dev/null 2>&1; }

# ---- one snapshot per writing command, each restorable ----
printf 'version one\n' >"$S/a"
printf 'bee\n' >"$S/b"
expect_status 0 pq add "$S" --name s
E1=$(snap)
cp -a "$S" "$T/at1"
printf 'version two\n' >"$S/a"                      # content
expect_status 0 pq add "$S" --name s
E2=$(snap)
cp -a "$S" "$T/at2"
chmod 600 "$S/a"                                    # mode
expect_status 0 pq add "$S" --name s
E3=$(snap)
cp -a "$S" "$T/at3"
mv "$S/b" "$S/c"                                    # rename
expect_status 0 pq add --delete "$S" --name s
E4=$(snap)
cp -a "$S" "$T/at4"
rm "$S/c" && ln -s a "$S/c"                         # file -> link
expect_status 0 pq add --delete "$S" --name s
E5=$(snap)
cp -a "$S" "$T/at5"
rm "$S/c" && mkdir "$S/c" && printf 'inside\n' >"$S/c/in"   # link -> directory
expect_status 0 pq add --delete "$S" --name s
E6=$(snap)
cp -a "$S" "$T/at6"
expect_status 0 pq rm s/c                           # delete
E7=$(snap)
rm -rf "$S/c" && cp -a "$S" "$T/at7"
check_ok "seven writing commands, seven snapshots" [ "$E1" -lt "$E2" -a "$E6" -lt "$E7" ]
expect_status 0 pq log
expect_stderr_contains "7 snapshots kept"
expect_stdout_contains "add $S"
expect_stdout_contains "rm s/c"
expect_status 0 pq log -n 2 --json
check_ok "log -n 2 --json: two objects" [ "$(grep -o '"epoch"' "$OUT" | wc -l)" -eq 2 ]
expect_stdout_contains "\"command\": \"rm\""
for i in 1 2 3 4 5 6 7; do
    eval e=\$E$i
    rm -rf "$T/got"
    expect_status 0 pq --at "$e" get s -o "$T/got"
    check_ok "snapshot $i (epoch $e) restored byte-exact" tree_is "$T/got/s" "$T/at$i"
    check_ok "snapshot $i: modes restored" [ "$(stat -c %a "$T/got/s/a")" = "$(stat -c %a "$T/at$i/a")" ]
done
rm -rf "$T/got" && expect_status 0 pq --at "$E5" get s -o "$T/got"
check_ok "snapshot 5: c is a symbolic link" [ -L "$T/got/s/c" ]
rm -rf "$T/got" && expect_status 0 pq --at "$E6" get s -o "$T/got"
check_ok "snapshot 6: c is a directory" [ -d "$T/got/s/c" -a ! -L "$T/got/s/c" ]

# ---- naming snapshots ----
expect_status 0 pq --at latest~6 list s
expect_stdout_contains "s/b"
expect_status 0 pq --at "$(date +%F)" list s
check_ok "--at today: the newest of the day (no c)" sh -c '! grep -q "^s/c" "$1"' sh "$OUT"
expect_status 0 pq --at "$(date +%FT%H:%M:%S)" get s/a -o -
expect_stdout_contains "version two"
expect_status 1 pq --at 1999-01-01 list
expect_stderr_contains "no snapshot of that day"
expect_status 1 pq --at latest~99 list
expect_stderr_contains "no such snapshot"
expect_status 2 pq --at 2026-13-45 list
expect_stderr_contains "not a snapshot"
expect_status 2 pq --at "$E1" add "$S" --name s
expect_stderr_contains "--at is for list, get, check, stats and mount"
expect_status 0 pq --at "$E1" check
expect_stdout_contains "entries: 3"

# ---- diff and versions ----
expect_status 0 pq diff "$E1" "$E4"
expect_stdout_contains "M f s/a  (content,mode,time)"
expect_stdout_contains "- f s/b"
expect_stdout_contains "+ f s/c"
expect_status 0 pq diff "$E1" --json --prefix s/b
expect_stdout_contains "\"change\": \"removed\", \"name\": \"s/b\""
expect_status 0 pq versions s/c
expect_stdout_contains "(absent)"
expect_stdout_contains "symbolic link"
expect_stdout_contains "directory"
expect_stderr_contains "5 versions"
expect_status 0 pq log s/b
check_ok "log NAME: the snapshots in which s/b changed" [ "$(wc -l <"$OUT")" -eq 2 ]

# ---- forget and gc ----
head -c 3000000 /dev/urandom >"$S/big"
expect_status 0 pq add "$S" --name s
EB=$(snap)
rm "$S/big"
expect_status 0 pq add --delete "$S" --name s
size_of() { du -sb "$V/packs" | cut -f1; }
with_big=$(size_of)
expect_status 0 pq gc
check_ok "gc keeps what a kept snapshot needs" [ "$(size_of)" -ge "$with_big" ]
rm -rf "$T/got" && expect_status 0 pq --at "$EB" get s/big -o "$T/got"
expect_status 0 pq forget --keep-last 1 --dry-run
expect_stdout_contains "keep   $(snap)"
expect_stdout_contains "forget $EB"
expect_stderr_contains "would forget"
expect_status 0 pq log
expect_stderr_contains "9 snapshots kept"
expect_status 0 pq pin "$E1"
expect_stderr_contains "pinned"
expect_status 1 pq forget "$E1"
expect_stderr_contains "is pinned"
expect_status 0 pq forget --keep-last 1
expect_stdout_contains "pinned"
expect_stderr_contains "forgot 7 snapshots"
expect_status 0 pq log
expect_stderr_contains "2 snapshots kept"
expect_status 1 pq --at "$EB" list
expect_stderr_contains "no snapshot of epoch $EB is kept"
expect_status 0 pq gc
check_ok "gc after forget frees the 3 MB no kept snapshot needs" [ "$(size_of)" -lt $((with_big - 2500000)) ]
expect_status 0 pq check --read-data
rm -rf "$T/got" && expect_status 0 pq --at "$E1" get s -o "$T/got"
check_ok "the pinned snapshot, across gc's compaction, byte-exact" tree_is "$T/got/s" "$T/at1"
expect_status 0 pq get s -o "$T/now"
check_ok "the newest state, byte-exact" tree_is "$T/now/s" "$S"
expect_status 0 pq unpin "$E1"
expect_status 0 pq forget --keep-within 1d
expect_stderr_contains "forgot 0 snapshots"
expect_status 0 pq forget --keep-daily 1
expect_stderr_contains "forgot 1 snapshot"
expect_status 0 pq log
expect_stderr_contains "1 snapshot kept"

# ---- tampering with history ----
printf 'later\n' >"$S/later"
expect_status 0 pq add "$S" --name s
expect_status 0 pq pin latest
EK=$(snap)
printf 'more\n' >"$S/more"
expect_status 0 pq add "$S" --name s
expect_status 0 pq rm s/more
expect_status 0 pq gc                     # compacts: epoch EK is now in an old generation
check_ok "the kept snapshot's segment is kept by gc" [ -f "$V/segments/$(printf %016x "$EK")" ]
seg=$V/segments/$(printf %016x "$EK")
mv "$seg" "$T/seg.kept"
expect_status 4 pq list
expect_stderr_contains "is missing: snapshot $EK, which the chain keeps, needs it"
expect_status 4 pq log
expect_status 4 pq check
mv "$T/seg.kept" "$seg"
expect_status 0 pq --at "$EK" list s/later
# Another segment in its place: refused when read.
other=$(ls "$V/segments" | head -n 1)
cp "$seg" "$T/seg.kept"
cp "$V/segments/$other" "$seg" 2>/dev/null
expect_status 4 pq --at "$EK" list
cp "$T/seg.kept" "$seg"
expect_status 0 pq check

# ---- copies keep the history; --at where it means nothing ----
expect_status 0 pq copy --to "$T/copy"
expect_status 0 pq -v "$T/copy" log
expect_stderr_contains "snapshot"
expect_status 0 pq -v "$T/copy" --at "$EK" get s/later -o -
expect_stdout_contains "later"
expect_status 0 pq -v "$T/copy" check --read-data
expect_status 2 pq --at "$EK" copy --to "$T/copy2"
expect_stderr_contains "--at is for list, get, check, stats and mount"
expect_status 2 pq --at "$EK" info
check_ok "copy --at wrote nothing" [ ! -e "$T/copy2" ]
expect_status 2 pq diff 2026-13-45
expect_stderr_contains "not a snapshot"
expect_status 2 pq forget not-a-snapshot
expect_status 0 pq log s/never-stored
expect_empty_stdout
expect_status 0 pq --at "$EK" check
check_ok "check at a snapshot judges no leftovers" grep -q "leftovers: 0" "$OUT"

# ---- a ransomware drill ----
mkdir -p "$T/victim/docs"
for i in 1 2 3 4 5; do head -c 20000 /dev/urandom >"$T/victim/docs/f$i"; done
cp -a "$T/victim" "$T/victim.good"
expect_status 0 pq add "$T/victim"
EGOOD=$(snap)
for f in "$T"/victim/docs/*; do head -c 20000 /dev/urandom >"$f"; done    # encrypted in place
expect_status 0 pq add "$T/victim"                                       # the nightly backup runs
expect_status 0 pq diff "$EGOOD"
expect_stdout_contains "M f victim/docs/f1  (content"
rm -rf "$T/restored"
expect_status 0 pq --at "$EGOOD" get victim -o "$T/restored"
check_ok "ransomware drill: the tree from the snapshot before, byte-exact" tree_is "$T/restored/victim" "$T/victim.good"

finish
