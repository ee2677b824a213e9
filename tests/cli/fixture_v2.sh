#!/bin/sh
# Format version 2 fixtures (made by tests/fixtures/make-v2.sh, frozen):
# v2-aes and v2-chacha hold every kind of entry (files, an empty file, a
# compressible one, a symbolic link, two hard links, a sparse file, an
# extended attribute) over five epochs (a replacement and a removal among
# them); v2-upgraded is the v1-aes fixture upgraded, its data still in
# format-1 objects, plus one file added after.  Every later version must
# list them, restore them exactly, verify them and recover them.
. tests/cli/lib.sh
FX=$PWD/tests/fixtures

for kind in aes chacha; do
    V=$T/v2-$kind
    cp -r "$FX/v2-$kind" "$V"
    PF=$FX/v2.pass
    expect_status 0 pq list --json
    if cmp -s "$OUT" "$FX/v2-$kind.list.json"; then
        ok "v2-$kind: list --json matches the frozen listing"
    else
        fail "v2-$kind: list --json differs from the frozen listing"
        diff "$OUT" "$FX/v2-$kind.list.json" | sed -n '1,6s/^/#   /p'
    fi
    expect_status 0 pq check --read-data
    expect_stdout_contains "epoch: 5, segments: 5, entries: 11, packs: 3"
    expect_stdout_contains "leftovers: 1"
    D=$T/out-$kind
    expect_status 0 pq get docs -o "$D"
    check_ok "v2-$kind: files restored byte for byte" \
        cmp -s "$FX/v1-files/docs/nested/segments.bin" "$D/docs/nested/segments.bin"
    check_ok "v2-$kind: readme.txt: content, mode 600, mtime with nanoseconds" \
        [ "$(cat "$D/docs/readme.txt"; TZ=UTC stat -c '%a %y' "$D/docs/readme.txt")" = "pqvault format 2 fixture
600 2025-06-01 12:00:00.123456789 +0000" ]
    check_ok "v2-$kind: the extended attribute restored" \
        [ "$(getfattr --only-values -n user.pqvault.test "$D/docs/readme.txt" 2>/dev/null)" = fixture ]
    check_ok "v2-$kind: the symbolic link restored as a link" \
        [ -L "$D/docs/link" ] && [ "$(readlink "$D/docs/link")" = readme.txt ]
    check_ok "v2-$kind: the hard links restored as one file" \
        [ "$(stat -c %i "$D/docs/hard-a")" = "$(stat -c %i "$D/docs/nested/hard-b")" ] && \
        [ "$(stat -c %h "$D/docs/hard-a")" = 2 ]
    check_ok "v2-$kind: the sparse file restored with its hole" \
        [ "$(stat -c %s "$D/docs/sparse.bin")" = 3145728 ] && \
        [ "$(stat -c %b "$D/docs/sparse.bin")" -lt 1000 ] && \
        [ "$(head -c 4 "$D/docs/sparse.bin")" = head ] && \
        [ "$(tail -c 4 "$D/docs/sparse.bin")" = tail ]
    check_ok "v2-$kind: the replaced file has its new content; the removed one is gone" \
        [ "$(cat "$D/docs/replaced.txt")" = "new content, longer than the old" ]
    expect_status 1 pq get extra.txt -o "$T/extra-$kind"
    check_ok "v2-$kind: the compressible file restored" \
        [ "$(wc -l <"$D/docs/compressible.txt")" = 2000 ] && \
        [ "$(sed -n 2000p "$D/docs/compressible.txt")" = "line 01999 of a file that compresses well" ]
    check_ok "v2-$kind: directories keep mode and mtime" \
        [ "$(stat -c '%a %Y' "$D/docs/nested")" = "751 1748822400" ]
    expect_status 0 env PQVAULT_CPU=portable "$PQV" -v "$V" --passphrase-file "$PF" get docs/readme.txt -o -
    expect_stdout_contains "pqvault format 2 fixture"
    # Recovery from the frozen recovery code.
    rm "$V/keyfile"
    printf 'new passphrase\n' >"$T/newpass"
    expect_status 0 env PQVAULT_RECOVERY_CODE="$(cat "$FX/v2-$kind.recovery")" \
        "$PQV" -v "$V" --passphrase-file "$T/newpass" recover --kdf "$KDF"
    expect_status 0 "$PQV" -v "$V" --passphrase-file "$T/newpass" check --read-data
done

# The upgraded fixture: format-1 objects referred to from a base segment.
V=$T/v2-upgraded
cp -r "$FX/v2-upgraded" "$V"
PF=$FX/v1.pass
expect_status 0 pq list --json
check_ok "v2-upgraded: list --json matches the frozen listing" cmp -s "$OUT" "$FX/v2-upgraded.list.json"
expect_status 0 pq check --read-data
expect_stdout_contains "epoch: 2, segments: 2, entries: 7, packs: 4"
expect_status 0 pq get docs -o "$T/out-up"
all_same=1
for f in readme.txt empty "with space ü.txt" nested/segments.bin; do
    same_file "$FX/v1-files/docs/$f" "$T/out-up/docs/$f" || all_same=0
done
check_ok "v2-upgraded: the format-1 data restores byte for byte" [ "$all_same" -eq 1 ]
check_ok "v2-upgraded: the file added after the upgrade restores" \
    [ "$(cat "$T/out-up/docs/after-upgrade.txt")" = "written after the upgrade" ]
finish
