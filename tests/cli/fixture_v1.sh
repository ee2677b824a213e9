#!/bin/sh
# Format version 1 fixtures: vaults frozen at the first release (one with
# FrodoKEM-976-AES + AES-256-GCM, one with FrodoKEM-640-SHAKE +
# ChaCha20-Poly1305).  Every later version must still list them, restore
# them byte for byte with their modes and mtimes, verify every tag and
# recover them from their recovery codes.  Never regenerate these files.
. tests/cli/lib.sh
FX=$PWD/tests/fixtures

for kind in aes chacha; do
    V=$T/v1-$kind
    cp -r "$FX/v1-$kind" "$V"
    PF=$FX/v1.pass
    expect_status 0 pq list --json
    # The keys format 2 added follow format 1's: the frozen listing is what
    # comes before them.
    sed 's/, "target": .*}/}/' "$OUT" >"$T/list-v1"
    if cmp -s "$T/list-v1" "$FX/v1-$kind.list.json"; then
        ok "v1-$kind: list --json matches the frozen listing"
    else
        fail "v1-$kind: list --json differs from the frozen listing"
        diff "$T/list-v1" "$FX/v1-$kind.list.json" | sed -n '1,6s/^/#   /p'
    fi
    expect_status 0 pq check --read-data
    expect_status 0 pq get docs -o "$T/out-$kind"
    all_same=1
    for f in readme.txt empty "with space ü.txt" nested/segments.bin; do
        same_file "$FX/v1-files/docs/$f" "$T/out-$kind/docs/$f" || all_same=0
    done
    check_ok "v1-$kind: restored files are byte for byte the originals" [ "$all_same" -eq 1 ]
    check_ok "v1-$kind: readme.txt restored with mode 600 and its mtime" \
        [ "$(TZ=UTC stat -c '%a %Y %y' "$T/out-$kind/docs/readme.txt")" = "600 1709210096 2024-02-29 12:34:56.123456789 +0000" ]
    check_ok "v1-$kind: nested/ restored with mode 751 and its mtime" \
        [ "$(stat -c '%a %Y' "$T/out-$kind/docs/nested")" = "751 1709251200" ]
    expect_status 0 env PQVAULT_CPU=portable "$PQV" -v "$V" --passphrase-file "$PF" get docs/readme.txt -o -
    expect_stdout_contains "pqvault format 1 fixture"
    # Recovery from the frozen recovery code.
    rm "$V/keyfile"
    printf 'new passphrase\n' >"$T/newpass"
    expect_status 0 env PQVAULT_RECOVERY_CODE="$(cat "$FX/v1-$kind.recovery")" \
        "$PQV" -v "$V" --passphrase-file "$T/newpass" recover --kdf "$KDF"
    expect_status 0 "$PQV" -v "$V" --passphrase-file "$T/newpass" check --read-data
done
finish
