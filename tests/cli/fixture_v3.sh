#!/bin/sh
# Format version 3 fixtures (made by tests/fixtures/make-v3.sh, frozen):
# v3-aes and v3-chacha hold every kind of entry over seven epochs, their
# files in chunks (a file of several chunks, a copy and an edited copy that
# share them, a moved file, a sparse file of two regions, a replacement,
# removals, a leftover pack); v3-upgraded is v2-aes upgraded, format-2
# entries beside chunked ones; v3-gc a compacted base and gc's repacking
# epoch after it; v3-history snapshots (docs/FORMAT.md section 26), one
# pinned, a forget, a gc that compacted (kept snapshots in the old
# generation, the forget's segment gone).  Every later version must list
# them, restore them byte for byte (the frozen SHA-256 of every file; of
# v3-history, of every kept snapshot too), verify them and recover them.
cd "$(dirname "$0")/../.." || exit 1      # the project root, from any directory
. tests/cli/lib.sh
FX=$PWD/tests/fixtures

# sums DIR PATH...: sha256sum of every regular file, sorted (as make-v3.sh).
sums() {
    (d=$1 && shift && cd "$d" && find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
# listing KIND: list --json equals the frozen listing.
listing() {
    expect_status 0 pq list --json
    if cmp -s "$OUT" "$FX/$1.list.json"; then
        ok "$1: list --json matches the frozen listing"
    else
        fail "$1: list --json differs from the frozen listing"
        diff "$OUT" "$FX/$1.list.json" | sed -n '1,6s/^/#   /p'
    fi
}
# summary KIND LINE: check --read-data passes with exactly LINE.
summary() {
    expect_status 0 pq check --read-data
    check_ok "$1: check --read-data: $2" [ "$(cat "$OUT")" = "$2" ]
}

for kind in aes chacha; do
    V=$T/v3-$kind
    cp -r "$FX/v3-$kind" "$V"
    PF=$FX/v3.pass
    listing "v3-$kind"
    bytes=942384
    [ $kind = chacha ] && bytes=864560
    summary "v3-$kind" "epoch: 7, segments: 7, entries: 16, packs: 4, bytes: $bytes, damaged: 0, missing: 0, leftovers: 1, temporaries: 0"
    expect_stderr_contains "a pack no entry refers to"
    D=$T/out-$kind
    expect_status 0 pq get docs -o "$D"
    sums "$D" docs >"$T/sums-$kind"
    check_ok "v3-$kind: every file restored byte for byte (the frozen SHA-256)" \
        cmp -s "$T/sums-$kind" "$FX/v3-$kind.sha256"
    check_ok "v3-$kind: the copy and the edited copy of big.bin, the moved file" \
        [ "$(stat -c %s "$D/docs/big-copy.bin" "$D/docs/big-edit.bin" "$D/docs/nested/moved.bin" | tr '\n' ' ')" = "3211264 3211264 410402 " ]
    check_ok "v3-$kind: the moved file's old name and the removed file are gone" \
        [ ! -e "$D/docs/tomove.bin" ]
    expect_status 1 pq get extra.txt -o "$T/extra-$kind"
    check_ok "v3-$kind: readme.txt: content, mode 600, mtime with nanoseconds" \
        [ "$(cat "$D/docs/readme.txt"; TZ=UTC stat -c '%a %y' "$D/docs/readme.txt")" = "pqvault format 3 fixture
600 2025-07-01 12:00:00.123456789 +0000" ]
    check_ok "v3-$kind: the extended attribute restored" \
        [ "$(getfattr --only-values -n user.pqvault.test "$D/docs/readme.txt" 2>/dev/null)" = fixture ]
    check_ok "v3-$kind: the symbolic link restored as a link, with its mtime" \
        [ -L "$D/docs/link" ] && [ "$(readlink "$D/docs/link")" = readme.txt ] && \
        [ "$(stat -c %Y "$D/docs/link")" = 1751371201 ]
    check_ok "v3-$kind: the hard links restored as one file" \
        [ "$(stat -c %i "$D/docs/hard-a")" = "$(stat -c %i "$D/docs/nested/hard-b")" ] && \
        [ "$(stat -c %h "$D/docs/hard-a")" = 2 ]
    check_ok "v3-$kind: the sparse file restored with its holes" \
        [ "$(stat -c %s "$D/docs/sparse.bin")" = 3145728 ] && \
        [ "$(stat -c %b "$D/docs/sparse.bin")" -lt 1000 ] && \
        [ "$(head -c 4 "$D/docs/sparse.bin")" = head ] && \
        [ "$(tail -c 4 "$D/docs/sparse.bin")" = tail ] && \
        [ "$(tail -c +1048577 "$D/docs/sparse.bin" | head -c 11)" = "sparse line" ]
    check_ok "v3-$kind: the replaced file has its new content" \
        [ "$(cat "$D/docs/replaced.txt")" = "new content, longer than the old" ]
    check_ok "v3-$kind: directories keep mode and mtime" \
        [ "$(stat -c '%a %Y' "$D/docs/nested")" = "751 1751414400" ]
    expect_status 0 env PQVAULT_CPU=portable "$PQV" -v "$V" --passphrase-file "$PF" get docs/big-edit.bin -o "$T/portable-$kind"
    check_ok "v3-$kind: the portable code reads the chunks too" \
        cmp -s "$T/portable-$kind" "$D/docs/big-edit.bin"
    # Recovery from the frozen recovery code.
    rm "$V/keyfile"
    printf 'new passphrase\n' >"$T/newpass"
    expect_status 0 env PQVAULT_RECOVERY_CODE="$(cat "$FX/v3-$kind.recovery")" \
        "$PQV" -v "$V" --passphrase-file "$T/newpass" recover --kdf "$KDF"
    expect_status 0 "$PQV" -v "$V" --passphrase-file "$T/newpass" check --read-data
done

# The upgraded fixture: v2-aes's format-2 entries, then chunked ones.
V=$T/v3-upgraded
cp -r "$FX/v3-upgraded" "$V"
PF=$FX/v2.pass
listing v3-upgraded
summary v3-upgraded "epoch: 7, segments: 7, entries: 12, packs: 5, bytes: 223397, damaged: 0, missing: 0, leftovers: 1, temporaries: 0"
expect_status 0 pq get docs -o "$T/out-up"
sums "$T/out-up" docs/readme.txt docs/after-upgrade.bin >"$T/sums-up"
check_ok "v3-upgraded: the files added after the upgrade restored byte for byte" \
    cmp -s "$T/sums-up" "$FX/v3-upgraded.sha256"
check_ok "v3-upgraded: readme.txt replaced by a chunked entry (the old extended attribute gone)" \
    [ -z "$(getfattr -d -m - "$T/out-up/docs/readme.txt" 2>/dev/null)" ]
# The format-2 files are v2-aes's (the same vault id: another local state,
# where this one's format 3 would make v2-aes a downgrade).
V2=$T/v2-aes
cp -r "$FX/v2-aes" "$V2"
expect_status 0 "$PQV" -v "$V2" --passphrase-file "$PF" --state-dir "$T/state-v2" get docs -o "$T/out-v2"
rm "$T/out-v2/docs/readme.txt" "$T/out-up/docs/readme.txt" "$T/out-up/docs/after-upgrade.bin"
check_ok "v3-upgraded: the format-2 files restored as v2-aes's" \
    diff -r --no-dereference "$T/out-v2" "$T/out-up"
expect_status 0 pq get docs/readme.txt -o -
expect_stdout_contains "changed after the upgrade to format 3"

# The gc fixture: a base, then the repacking epoch whose records replace
# the base's; the old pack gone.
V=$T/v3-gc
cp -r "$FX/v3-gc" "$V"
PF=$FX/v3.pass
listing v3-gc
summary v3-gc "epoch: 67, segments: 2, entries: 66, packs: 1, bytes: 86016, damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
expect_status 0 pq get keep -o "$T/out-gc"
sums "$T/out-gc" keep >"$T/sums-gc"
check_ok "v3-gc: every file restored byte for byte (the frozen SHA-256)" \
    cmp -s "$T/sums-gc" "$FX/v3-gc.sha256"
expect_status 1 pq get drop -o "$T/drop"

# The history fixture (tests/fixtures/make-v3-history.sh): the kept
# snapshots as frozen (log --json), each restored byte for byte (the
# frozen SHA-256 of each snapshot's files), the pinned one of the old
# generation with its file that no later state has.
V=$T/v3-history
cp -r "$FX/v3-history" "$V"
PF=$FX/v3.pass
listing v3-history
summary v3-history "epoch: 11, segments: 3, entries: 6, packs: 5, bytes: 289136, damaged: 0, missing: 0, leftovers: 0, temporaries: 0"
expect_status 0 pq get h -o "$T/out-h"
sums "$T/out-h" h >"$T/sums-h"
check_ok "v3-history: every file of the newest state restored byte for byte (the frozen SHA-256)" \
    cmp -s "$T/sums-h" "$FX/v3-history.sha256"
expect_status 0 pq log --json
check_ok "v3-history: log --json lists the frozen kept snapshots (11, 10, 7, 6, 3 pinned)" \
    cmp -s "$OUT" "$FX/v3-history.log.json"
: >"$T/sums-at"
for e in 3 6 7 10 11; do
    rm -rf "$T/at"
    expect_status 0 pq --at "$e" get h -o "$T/at"
    sums "$T/at" h | sed "s/^/$e /" >>"$T/sums-at"
done
check_ok "v3-history: every kept snapshot restored byte for byte (the frozen SHA-256 of each)" \
    cmp -s "$T/sums-at" "$FX/v3-history.snapshots.sha256"
rm -rf "$T/at" && expect_status 0 pq --at 3 get h -o "$T/at"
check_ok "v3-history: snapshot 3 (old generation, pinned): lines.txt, a.txt of mode 600" \
    [ -f "$T/at/h/lines.txt" ] && [ "$(stat -c %a "$T/at/h/a.txt")" = 600 ] && \
    [ "$(cat "$T/at/h/a.txt")" = "version 2" ] && [ -L "$T/at/h/link" ]
expect_status 1 pq --at 2 list
expect_stderr_contains "no snapshot of epoch 2 is kept"
expect_status 0 pq --at 7 check --read-data
mv "$V/segments/0000000000000004" "$T/seg4"
expect_status 4 pq check
expect_stderr_contains "segments/0000000000000004"
mv "$T/seg4" "$V/segments/0000000000000004"
finish
