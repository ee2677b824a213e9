#!/bin/sh
# The independent Python reader (tests/reader/, written from docs/FORMAT.md
# alone) against the frozen fixtures: its FrodoKEM against the known-answer
# vectors; for each v1 fixture, with only the recovery code: verify passes
# and its summary equals `pqvault check --read-data`'s, list --json equals
# the frozen listing, restore gives the original files byte for byte with
# their modes and mtimes; damage (one flipped byte in a record, one in an
# object) fails verify naming both files; a wrong code is refused.  Then
# a vault written now by pqvault, with what the fixtures lack.
. tests/cli/lib.sh
FX=$PWD/tests/fixtures
RD=$PWD/tests/reader
PF=$FX/v1.pass   # only for the C program's check, compared with the reader's

# The first python3 with python3-cryptography and numpy (a python3 ahead of
# Debian's on PATH, e.g. pyenv's, may lack them).
PY=
for p in ${PQV_PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 &&
        "$p" -c 'import cryptography.hazmat.primitives.ciphers.aead, numpy' 2>/dev/null; then
        PY=$p
        break
    fi
done
if [ -z "$PY" ]; then
    echo "# SKIP - python3-cryptography/numpy missing"
    exit 0
fi
rdr() { "$PY" "$RD/pqvault_reader.py" "$@"; }

# FrodoKEM: entries 0-1 of every shared KAT set (or, without ../shared,
# the official KAT digests of the 640 sets); prints its own ok/FAIL lines.
"$PY" "$RD/test_frodokem.py" --entries 2 >"$OUT" 2>"$ERR"
st=$?
cat "$OUT"
[ "$st" -eq 0 ] || fail "test_frodokem.py: exit $st"

for kind in aes chacha; do
    CODE=$(cat "$FX/v1-$kind.recovery")
    V=$T/v1-$kind
    cp -r "$FX/v1-$kind" "$V"

    expect_status 0 rdr verify "$V" --recovery-code "$CODE"
    cp "$OUT" "$T/summary-reader"
    expect_status 0 pq check --read-data
    check_ok "v1-$kind: reader's verify summary equals pqvault check --read-data's" \
        cmp -s "$T/summary-reader" "$OUT"

    expect_status 0 rdr list "$V" --recovery-code "$CODE" --json
    if cmp -s "$OUT" "$FX/v1-$kind.list.json"; then
        ok "v1-$kind: reader's list --json matches the frozen listing"
    else
        fail "v1-$kind: reader's list --json differs from the frozen listing"
        diff "$OUT" "$FX/v1-$kind.list.json" | sed -n '1,6s/^/#   /p'
    fi

    # The code is read leniently: lower case, no dashes, O for 0, L for 1.
    lenient=$(printf '%s' "$CODE" | tr -d '-' | tr 'A-Z' 'a-z' | sed 's/0/o/g; s/1/l/g')
    expect_status 0 rdr restore "$V" --recovery-code " $lenient " -o "$T/out-$kind"
    if diff -r "$FX/v1-files/docs" "$T/out-$kind/docs" >"$T/diff" 2>&1; then
        ok "v1-$kind: restored tree is byte for byte the originals (nothing more, nothing less)"
    else
        fail "v1-$kind: restored tree differs from the originals"
        sed -n '1,5s/^/#   /p' "$T/diff"
    fi
    check_ok "v1-$kind: readme.txt restored with mode 600 and its mtime" \
        [ "$(TZ=UTC stat -c '%a %Y %y' "$T/out-$kind/docs/readme.txt")" = "600 1709210096 2024-02-29 12:34:56.123456789 +0000" ]
    check_ok "v1-$kind: nested/ restored with mode 751 and its mtime" \
        [ "$(stat -c '%a %Y' "$T/out-$kind/docs/nested")" = "751 1709251200" ]
    check_ok "v1-$kind: docs/ restored with mode 755 and its mtime" \
        [ "$(stat -c '%a %Y' "$T/out-$kind/docs")" = "755 1709251200" ]
    check_ok "v1-$kind: other files restored with mode 644 and their mtime" \
        [ "$(cd "$T/out-$kind/docs" && TZ=UTC stat -c '%a %.9Y' empty 'with space ü.txt' nested/segments.bin | sort -u)" = "644 1709210096.123456789" ]
    expect_status 1 rdr restore "$V" --recovery-code "$CODE" -o "$T/out-$kind"
    expect_stderr_contains "already exists"

    # A mistyped code fails its checksum; another vault's code is not this identity.
    bad=$(printf '%s' "$CODE" | sed 's/^./\n&/' | sed '2s/^0/1/; 2s/^[^1\n]/0/' | tr -d '\n')
    expect_status 3 rdr verify "$V" --recovery-code "$bad"
    expect_stderr_contains "checksum"
    other=aes
    [ "$kind" = aes ] && other=chacha
    expect_status 3 rdr list "$V" --recovery-code "$(cat "$FX/v1-$other.recovery")"
    expect_stderr_contains "belongs to another vault"

    # The case recovery is for: no key file.  list and restore need none;
    # verify requires it.
    N=$T/nokey-$kind
    cp -r "$FX/v1-$kind" "$N"
    rm "$N/keyfile"
    expect_status 0 rdr restore "$N" docs/nested --recovery-code "$CODE" -o "$T/nokey-out-$kind"
    check_ok "v1-$kind without key file: docs/nested restored alone, byte for byte" \
        [ "$(cd "$T/nokey-out-$kind" && find . | sort | tr '\n' ' ')" = ". ./docs ./docs/nested ./docs/nested/segments.bin " ]
    check_ok "v1-$kind without key file: segments.bin is the original" \
        same_file "$FX/v1-files/docs/nested/segments.bin" "$T/nokey-out-$kind/docs/nested/segments.bin"
    expect_status 4 rdr verify "$N" --recovery-code "$CODE"
    expect_stderr_contains "keyfile"

    # One flipped byte in a record and one in an object: verify names both.
    # The record is the smallest, a directory's (a file's record holds a
    # wrapped key of 15 KB), so every object is still named by a record.
    D=$T/damaged-$kind
    cp -r "$FX/v1-$kind" "$D"
    rec=$(find "$D/records" -type f -printf '%s %p\n' | sort -n | head -n 1 | cut -d' ' -f2-)
    obj=$(first_file "$D/objects")
    flip_byte "$rec" 60
    flip_byte "$obj" 20
    expect_status 4 rdr verify "$D" --recovery-code "$CODE"
    expect_stderr_contains "${rec#"$D"/}: record authentication failed"
    expect_stderr_contains "${obj#"$D"/}: segment 0 does not authenticate"
    cp "$OUT" "$T/summary-reader"
    V=$D
    expect_status 4 pq check --read-data
    check_ok "v1-$kind damaged: reader's verify summary equals pqvault check --read-data's" \
        cmp -s "$T/summary-reader" "$OUT"
    expect_status 4 rdr restore "$D" --recovery-code "$CODE" -o "$T/dout-$kind"
    expect_stderr_contains "record authentication failed"

    # An object one byte short: the same count (one damaged item) both ways.
    S=$T/short-$kind
    cp -r "$FX/v1-$kind" "$S"
    obj=$(first_file "$S/objects")
    truncate -s -1 "$obj"
    expect_status 4 rdr verify "$S" --recovery-code "$CODE"
    expect_stderr_contains "${obj#"$S"/}: "
    cp "$OUT" "$T/summary-reader"
    V=$S
    expect_status 4 pq check --read-data
    check_ok "v1-$kind short object: reader's verify summary equals pqvault check --read-data's" \
        cmp -s "$T/summary-reader" "$OUT"

    # A config of a later format is refused, not guessed at.
    U=$T/v2-$kind
    cp -r "$FX/v1-$kind" "$U"
    sed -i '1s/ 1$/ 9/' "$U/config"
    expect_status 1 rdr verify "$U" --recovery-code "$CODE"
    expect_stderr_contains "unsupported version 9"
done

# A vault written now by pqvault (FrodoKEM-1344-SHAKE, ChaCha20-Poly1305):
# a file of two objects, segment-sized files, names with a newline, a
# non-UTF-8 byte and quotes, a setuid mode, an mtime before 1970, an empty
# directory.  The reader agrees with pqvault's list --json and check, and
# restores the tree as it was.
S=$T/src
mkdir -p "$S/d/empty"
head -c 4194305 /dev/urandom >"$S/big.bin"
head -c 65536 /dev/urandom >"$S/d/seg64k"
head -c 131073 /dev/urandom >"$S/d/seg128k+1"
printf 'x' >"$S/d/$(printf 'new\nline')"
printf 'y' >"$S/d/$(printf 'bad\377byte')"
printf 'z' >"$S/d/q\"uo\\te"
touch -d '1960-01-01 00:00:00.5 UTC' "$S/d/seg64k"
chmod 4755 "$S/d/seg128k+1"
chmod 700 "$S/d/empty"
V=$T/fresh
expect_status 0 pq -q init --kdf "$KDF" --kem FrodoKEM-1344-SHAKE --aead ChaCha20-Poly1305
CODE=$(cat "$OUT")
expect_status 0 sh -c 'cd "$1" && shift && "$@"' sh "$S" "$PQV" -v "$V" --passphrase-file "$PF" add big.bin d
expect_status 0 pq list --json
cp "$OUT" "$T/list-c"
expect_status 0 rdr list "$V" --recovery-code "$CODE" --json
check_ok "fresh vault: reader's list --json equals pqvault's" cmp -s "$T/list-c" "$OUT"
expect_status 0 pq check --read-data
cp "$OUT" "$T/check-c"
expect_status 0 rdr verify "$V" --recovery-code "$CODE"
check_ok "fresh vault: reader's verify summary equals pqvault check --read-data's" \
    cmp -s "$T/check-c" "$OUT"
expect_status 0 rdr restore "$V" --recovery-code "$CODE" -o "$T/fresh-out"
check_ok "fresh vault: restored tree is byte for byte the source" diff -r "$S" "$T/fresh-out"
(cd "$S" && find . -mindepth 1 -exec stat -c '%n %a %.9Y' {} + | sort) >"$T/meta-src"
(cd "$T/fresh-out" && find . -mindepth 1 -exec stat -c '%n %a %.9Y' {} + | sort) >"$T/meta-out"
check_ok "fresh vault: every mode and mtime (ns) restored" cmp -s "$T/meta-src" "$T/meta-out"
finish
