#!/bin/sh
# The independent Python reader (tests/reader/, written from docs/FORMAT.md
# alone) against the frozen fixtures: its FrodoKEM against the known-answer
# vectors, its chunker against section 21's vectors, its parsers of section
# 26's head extensions against malformed ones; for each v1, v2 and v3
# fixture, with only the recovery code: verify passes and its summary
# equals `pqvault check --read-data`'s, list --json equals the frozen
# listing, restore gives the original files byte for byte with their modes
# and mtimes (v2, v3: and symbolic links, hard links, holes, extended
# attributes, owners); damage (a flipped byte in a record, an object, a
# segment block, a chunk block, a pack's blob, table or locator; a short
# object or pack) fails verify naming the file; a wrong code is refused.
# Then vaults written now by pqvault (format 3, and a v2 copy upgraded),
# with what the fixtures lack, before and after gc's compaction and
# repacking, and one with a writer's imported batch.  History (section 26):
# every kept snapshot of those vaults and of v3-history listed, verified
# and restored as pqvault --at reads it, and a vault of three generations
# with kept segments deleted and replaced.
cd "$(dirname "$0")/../.." || exit 1      # the project root, from any directory
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

# Format 2: the v2 fixtures (tests/fixtures/make-v2.sh says what they hold).
# stat_tree DIR: every entry's name, type, mode, mtime (ns), size, link
# count, owner; not a directory's size (its allocation differs).
stat_tree() {
    (cd "$1" && find . -mindepth 1 -exec stat -c '%n|%F|%a|%.9Y|%h|%u:%g' {} + &&
        find . -mindepth 1 ! -type d -exec stat -c '%n|%s' {} +) | sort
}
# xattr_tree DIR: every extended attribute (links not followed).
xattr_tree() { (cd "$1" && getfattr -R -h -d -m - . 2>/dev/null); }
# chain_segments: the segments of $V's chain (its base to the newest), as
# pqvault check counts them.
chain_segments() { pq check 2>/dev/null | sed -n 's/.* segments: \([0-9]*\),.*/\1/p'; }
# history_compare LABEL (docs/FORMAT.md section 26; $V, $CODE, $PF set):
# the reader's snapshots --json is pqvault log --json; for every kept
# snapshot E, list --at E --json is pqvault --at E list --json, restore
# --at E gives pqvault --at E get's tree (contents, types, modes, mtimes,
# sizes, link counts, owners, extended attributes), and verify --at E's
# summary is pqvault --at E check --read-data's but for the leftovers
# (pqvault counts there the packs that only the newest state or other
# kept snapshots use: not what gc removes, section 26; the reader counts
# what no kept state needs).
history_compare() {
    expect_status 0 pq log --json
    cp "$OUT" "$T/log-c"
    expect_status 0 rdr snapshots "$V" --recovery-code "$CODE" --json
    check_ok "$1: reader's snapshots --json equals pqvault log --json" cmp -s "$T/log-c" "$OUT"
    hc_bad=
    hc_n=0
    for e in $(sed -n 's/^.{"epoch": \([0-9]*\),.*/\1/p' "$T/log-c"); do
        hc_n=$((hc_n + 1))
        "$PQV" -v "$V" --passphrase-file "$PF" --at "$e" list --json >"$T/hc-list-c" 2>"$ERR" &&
            rdr list "$V" --recovery-code "$CODE" --json --at "$e" >"$T/hc-list-r" 2>>"$ERR" &&
            cmp -s "$T/hc-list-c" "$T/hc-list-r" || hc_bad="$hc_bad list@$e"
        "$PQV" -v "$V" --passphrase-file "$PF" --at "$e" check --read-data >"$T/hc-check-c" 2>"$ERR"
        hc_st=$?
        rdr verify "$V" --recovery-code "$CODE" --at "$e" >"$T/hc-check-r" 2>>"$ERR"
        hc_rst=$?
        if [ $hc_st = 4 ] && [ $hc_rst = 0 ] && grep -q "is missing (a kept snapshot needs it" "$ERR"; then
            # pqvault's --at E check takes the kept list as it stood at E
            # (its generation's), so it demands the segments of snapshots
            # forgotten and deleted by gc since: a pqvault bug, reported.
            echo "# KNOWN pqvault bug: --at $e check: $(grep -m 1 "is missing" "$ERR")"
        elif [ $hc_rst != $hc_st ] || [ "$(sed 's/leftovers: [0-9]*/leftovers: -/' "$T/hc-check-c")" != \
            "$(sed 's/leftovers: [0-9]*/leftovers: -/' "$T/hc-check-r")" ]; then
            hc_bad="$hc_bad verify@$e"
            sed 's/^/#   pqvault: /' "$T/hc-check-c"
            sed 's/^/#   reader:  /' "$T/hc-check-r"
        fi
        rm -rf "$T/hc-c" "$T/hc-r"
        mkdir "$T/hc-c"
        "$PQV" -v "$V" --passphrase-file "$PF" --at "$e" list --depth 1 >"$T/hc-top" 2>"$ERR"
        if [ -s "$T/hc-top" ]; then
            tr '\n' '\0' <"$T/hc-top" | xargs -0 "$PQV" -v "$V" --passphrase-file "$PF" --at "$e" \
                get -o "$T/hc-c" >/dev/null 2>"$ERR" || hc_bad="$hc_bad get@$e"
        fi
        rdr restore "$V" --recovery-code "$CODE" --at "$e" -o "$T/hc-r" >/dev/null 2>>"$ERR" ||
            hc_bad="$hc_bad restore@$e"
        diff -r --no-dereference "$T/hc-c" "$T/hc-r" >/dev/null 2>&1 &&
            [ "$(stat_tree "$T/hc-c")" = "$(stat_tree "$T/hc-r")" ] &&
            [ "$(xattr_tree "$T/hc-c")" = "$(xattr_tree "$T/hc-r")" ] || hc_bad="$hc_bad tree@$e"
    done
    check_ok "$1: $hc_n kept snapshots, each listed, verified and restored by the reader as pqvault --at reads it${hc_bad:+ (differs:$hc_bad)}" \
        [ -z "$hc_bad" ]
}
for kind in aes chacha upgraded; do
    CODE=$(cat "$FX/v2-$kind.recovery")
    PF=$FX/v2.pass
    [ "$kind" = upgraded ] && PF=$FX/v1.pass
    V=$T/fx2-$kind
    cp -r "$FX/v2-$kind" "$V"

    expect_status 0 rdr verify "$V" --recovery-code "$CODE" --verbose
    cp "$OUT" "$T/summary-reader"
    cp "$ERR" "$T/verbose-reader"
    expect_status 0 pq check --read-data
    check_ok "v2-$kind: reader's verify summary equals pqvault check --read-data's" \
        cmp -s "$T/summary-reader" "$OUT"
    # The chain value the reader computed (section 11) is the one pqvault's
    # check wrote into its local state (section 15: VAULTID-LOCATION).
    vid=$(sed -n 's/^vault-id //p' "$V/config")
    chain=$(find "$XDG_STATE_HOME/pqvault" -name "$vid-*" ! -name '*.lock' -exec sed -n 's/^chain //p' {} +)
    check_ok "v2-$kind: reader's chain value equals the one in pqvault's local state" \
        grep -q ") $chain\$" "$T/verbose-reader"

    expect_status 0 rdr list "$V" --recovery-code "$CODE" --json
    if cmp -s "$OUT" "$FX/v2-$kind.list.json"; then
        ok "v2-$kind: reader's list --json matches the frozen listing"
    else
        fail "v2-$kind: reader's list --json differs from the frozen listing"
        diff "$OUT" "$FX/v2-$kind.list.json" | sed -n '1,6s/^/#   /p'
    fi

    R=$T/v2out-$kind
    C=$T/v2c-$kind
    expect_status 0 rdr restore "$V" --recovery-code "$CODE" -o "$R"
    expect_status 0 pq get docs -o "$C"
    check_ok "v2-$kind: restored tree is pqvault get's, byte for byte (links not followed)" \
        diff -r --no-dereference "$C" "$R"
    stat_tree "$C" >"$T/meta-c"
    stat_tree "$R" >"$T/meta-r"
    check_ok "v2-$kind: every type, mode, mtime (ns), size, link count and owner as pqvault get's" \
        cmp -s "$T/meta-c" "$T/meta-r"
    xattr_tree "$C" >"$T/xattr-c"
    xattr_tree "$R" >"$T/xattr-r"
    check_ok "v2-$kind: extended attributes as pqvault get's" cmp -s "$T/xattr-c" "$T/xattr-r"
    if [ "$kind" = upgraded ]; then
        all_same=1
        for f in readme.txt empty "with space ü.txt" nested/segments.bin; do
            same_file "$FX/v1-files/docs/$f" "$R/docs/$f" || all_same=0
        done
        check_ok "v2-upgraded: the format-1 data restores byte for byte" [ "$all_same" -eq 1 ]
        check_ok "v2-upgraded: readme.txt restored with mode 600 and its mtime" \
            [ "$(TZ=UTC stat -c '%a %y' "$R/docs/readme.txt")" = "600 2024-02-29 12:34:56.123456789 +0000" ]
        check_ok "v2-upgraded: the file added after the upgrade restores" \
            [ "$(cat "$R/docs/after-upgrade.txt")" = "written after the upgrade" ]
    else
        # What tests/cli/fixture_v2.sh asserts of pqvault's get.
        check_ok "v2-$kind: readme.txt: content, mode 600, mtime with nanoseconds" \
            [ "$(cat "$R/docs/readme.txt"; TZ=UTC stat -c '%a %y' "$R/docs/readme.txt")" = "pqvault format 2 fixture
600 2025-06-01 12:00:00.123456789 +0000" ]
        check_ok "v2-$kind: the extended attribute restored" \
            [ "$(getfattr --only-values -n user.pqvault.test "$R/docs/readme.txt" 2>/dev/null)" = fixture ]
        check_ok "v2-$kind: the symbolic link restored as a link, with its mtime" \
            [ -L "$R/docs/link" ] && [ "$(readlink "$R/docs/link")" = readme.txt ] && \
            [ "$(stat -c %Y "$R/docs/link")" = 1748779201 ]
        check_ok "v2-$kind: the hard links restored as one file" \
            [ "$(stat -c %i "$R/docs/hard-a")" = "$(stat -c %i "$R/docs/nested/hard-b")" ] && \
            [ "$(stat -c %h "$R/docs/hard-a")" = 2 ]
        check_ok "v2-$kind: the sparse file restored with its hole" \
            [ "$(stat -c %s "$R/docs/sparse.bin")" = 3145728 ] && \
            [ "$(stat -c %b "$R/docs/sparse.bin")" -lt 1000 ] && \
            [ "$(head -c 4 "$R/docs/sparse.bin")" = head ] && \
            [ "$(tail -c 4 "$R/docs/sparse.bin")" = tail ]
        check_ok "v2-$kind: the replaced file has its new content; the removed one is gone" \
            [ "$(cat "$R/docs/replaced.txt")" = "new content, longer than the old" ] && \
            [ ! -e "$R/extra.txt" ]
        check_ok "v2-$kind: the compressible file restored" \
            [ "$(wc -l <"$R/docs/compressible.txt")" = 2000 ] && \
            [ "$(sed -n 2000p "$R/docs/compressible.txt")" = "line 01999 of a file that compresses well" ]
        check_ok "v2-$kind: directories keep mode and mtime" \
            [ "$(stat -c '%a %Y' "$R/docs/nested")" = "751 1748822400" ]
    fi
    expect_status 1 rdr restore "$V" --recovery-code "$CODE" -o "$R"
    expect_stderr_contains "already exists"

    # Codes: a mistyped one fails its checksum, another vault's is refused.
    bad=$(printf '%s' "$CODE" | sed 's/^./\n&/' | sed '2s/^0/1/; 2s/^[^1\n]/0/' | tr -d '\n')
    expect_status 3 rdr verify "$V" --recovery-code "$bad"
    expect_stderr_contains "checksum"
    other=aes
    [ "$kind" = aes ] && other=chacha
    expect_status 3 rdr verify "$V" --recovery-code "$(cat "$FX/v2-$other.recovery")"
    expect_stderr_contains "belongs to another vault"

    # Without the key file: list and restore (one name) work, verify fails.
    N=$T/v2nokey-$kind
    cp -r "$FX/v2-$kind" "$N"
    rm "$N/keyfile"
    expect_status 0 rdr restore "$N" docs/nested --recovery-code "$CODE" -o "$T/v2nokey-out-$kind"
    check_ok "v2-$kind without key file: docs/nested restored alone, as pqvault get's" \
        diff -r --no-dereference "$C/docs/nested" "$T/v2nokey-out-$kind/docs/nested"
    expect_status 4 rdr verify "$N" --recovery-code "$CODE"
    expect_stderr_contains "keyfile"

    # Damage; each time verify exits 4 naming the file, and its summary is
    # pqvault check --read-data's.  v2_damaged NAME WHAT MESSAGE: $D prepared.
    v2_damaged() {
        expect_status 4 rdr verify "$D" --recovery-code "$CODE"
        expect_stderr_contains "$3"
        cp "$OUT" "$T/summary-reader"
        V=$D
        expect_status 4 pq check --read-data
        check_ok "v2-$kind, $2: reader's verify summary equals pqvault check --read-data's" \
            cmp -s "$T/summary-reader" "$OUT"
        V=$T/fx2-$kind
    }
    # A flipped byte in a segment block (the last byte of the largest
    # segment: its last block's tag).
    D=$T/v2blk-$kind
    cp -r "$FX/v2-$kind" "$D"
    seg=$(ls -S "$D"/segments/* | head -n 1)
    flip_byte "$seg" $(($(stat -c %s "$seg") - 1))
    v2_damaged "$D" "a flipped byte in a segment block" "${seg#"$D"/}: block"
    expect_status 4 rdr list "$D" --recovery-code "$CODE"
    expect_stderr_contains "${seg#"$D"/}: block"
    # A flipped byte in the head of the newest segment: no state at all.
    D=$T/v2head-$kind
    cp -r "$FX/v2-$kind" "$D"
    seg=$(ls "$D"/segments/* | tail -n 1)
    flip_byte "$seg" 80
    expect_status 4 rdr verify "$D" --recovery-code "$CODE"
    expect_stderr_contains "${seg#"$D"/}: head does not authenticate"
    # A flipped byte in a pack (the largest: docs' data).
    D=$T/v2pack-$kind
    cp -r "$FX/v2-$kind" "$D"
    pack=$(ls -S $(find "$D/packs" -type f) | head -n 1)
    flip_byte "$pack" 20
    v2_damaged "$D" "a flipped byte in a pack" "${pack#"$D"/}: "
    expect_status 4 rdr restore "$D" --recovery-code "$CODE" -o "$T/v2pack-out-$kind"
    expect_stderr_contains "${pack#"$D"/}: "
    # A pack one byte short.
    D=$T/v2short-$kind
    cp -r "$FX/v2-$kind" "$D"
    pack=$(ls -S $(find "$D/packs" -type f) | head -n 1)
    truncate -s -1 "$pack"
    v2_damaged "$D" "a pack one byte short" "${pack#"$D"/}: "
    # A pack missing.
    D=$T/v2gone-$kind
    cp -r "$FX/v2-$kind" "$D"
    pack=$(ls -S $(find "$D/packs" -type f) | head -n 1)
    rm "$pack"
    v2_damaged "$D" "a pack missing" "${pack#"$D"/}: missing"
    if [ "$kind" = upgraded ]; then
        # A flipped byte in a format-1 object that the base refers to.
        D=$T/v2obj-$kind
        cp -r "$FX/v2-$kind" "$D"
        obj=$(ls -S $(find "$D/objects" -type f) | head -n 1)
        flip_byte "$obj" 100
        v2_damaged "$D" "a flipped byte in a format-1 object" \
            "${obj#"$D"/}: extent 0 of docs/nested/segments.bin: segment 0 does not authenticate"
    fi

    # A config of a later format is refused, not guessed at.
    U=$T/v9-$kind
    cp -r "$FX/v2-$kind" "$U"
    sed -i '1s/ 2$/ 9/' "$U/config"
    expect_status 1 rdr verify "$U" --recovery-code "$CODE"
    expect_stderr_contains "unsupported version 9"
done

# Format 3: the chunker's test vectors (docs/FORMAT.md section 21), then the
# v3 fixtures (tests/fixtures/make-v3.sh says what they hold), with a local
# state of their own (v3-upgraded has v2-aes's vault id: format 3 here would
# make the v2-aes copies below downgrades).
XDG_STATE_HOME=$T/state3
"$PY" "$RD/test_chunker.py" >"$OUT" 2>"$ERR"
st=$?
cat "$OUT"
[ "$st" -eq 0 ] || fail "test_chunker.py: exit $st"
# Section 26's head extensions: well-formed and malformed ones, the kept
# snapshots through forgets (its own ok/FAIL lines).
"$PY" "$RD/test_history.py" >"$OUT" 2>"$ERR"
st=$?
cat "$OUT"
[ "$st" -eq 0 ] || fail "test_history.py: exit $st"
# sums DIR PATH...: sha256sum of every regular file, sorted (as make-v3.sh).
sums() {
    (d=$1 && shift && cd "$d" && find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
for kind in aes chacha upgraded gc history; do
    CODE=$(cat "$FX/v3-$kind.recovery")
    PF=$FX/v3.pass
    [ "$kind" = upgraded ] && PF=$FX/v2.pass
    top=docs
    [ "$kind" = gc ] && top=keep
    [ "$kind" = history ] && top=h
    V=$T/fx3-$kind
    cp -r "$FX/v3-$kind" "$V"

    # --chunking: every chunked file cut again under the vault's key.
    expect_status 0 rdr verify "$V" --recovery-code "$CODE" --verbose --chunking
    cp "$OUT" "$T/summary-reader"
    cp "$ERR" "$T/verbose-reader"
    check_ok "v3-$kind: the reader's chunker cuts every file as pqvault did (section 21)" \
        grep -q "^# chunking ok $top/" "$T/verbose-reader"
    expect_status 0 pq check --read-data
    check_ok "v3-$kind: reader's verify summary equals pqvault check --read-data's" \
        cmp -s "$T/summary-reader" "$OUT"
    vid=$(sed -n 's/^vault-id //p' "$V/config")
    chain=$(find "$XDG_STATE_HOME/pqvault" -name "$vid-*" ! -name '*.lock' -exec sed -n 's/^chain //p' {} +)
    check_ok "v3-$kind: reader's chain value equals the one in pqvault's local state" \
        grep -q ") $chain\$" "$T/verbose-reader"

    expect_status 0 rdr list "$V" --recovery-code "$CODE" --json
    if cmp -s "$OUT" "$FX/v3-$kind.list.json"; then
        ok "v3-$kind: reader's list --json matches the frozen listing"
    else
        fail "v3-$kind: reader's list --json differs from the frozen listing"
        diff "$OUT" "$FX/v3-$kind.list.json" | sed -n '1,6s/^/#   /p'
    fi

    R=$T/v3out-$kind
    C=$T/v3c-$kind
    expect_status 0 rdr restore "$V" --recovery-code "$CODE" -o "$R"
    expect_status 0 pq get "$top" -o "$C"
    if [ "$kind" = upgraded ]; then
        sums "$R" docs/readme.txt docs/after-upgrade.bin >"$T/sums-r"
    else
        sums "$R" "$top" >"$T/sums-r"
    fi
    check_ok "v3-$kind: every file restored byte for byte (the frozen SHA-256)" \
        cmp -s "$T/sums-r" "$FX/v3-$kind.sha256"
    check_ok "v3-$kind: restored tree is pqvault get's, byte for byte (links not followed)" \
        diff -r --no-dereference "$C" "$R"
    stat_tree "$C" >"$T/meta-c"
    stat_tree "$R" >"$T/meta-r"
    check_ok "v3-$kind: every type, mode, mtime (ns), size, link count and owner as pqvault get's" \
        cmp -s "$T/meta-c" "$T/meta-r"
    xattr_tree "$C" >"$T/xattr-c"
    xattr_tree "$R" >"$T/xattr-r"
    check_ok "v3-$kind: extended attributes as pqvault get's" cmp -s "$T/xattr-c" "$T/xattr-r"
    if [ "$kind" = aes ] || [ "$kind" = chacha ]; then
        check_ok "v3-$kind: the sparse file restored with its holes" \
            [ "$(stat -c %s "$R/docs/sparse.bin")" = 3145728 ] && \
            [ "$(stat -c %b "$R/docs/sparse.bin")" -lt 1000 ]
        check_ok "v3-$kind: the hard links restored as one file" \
            [ "$(stat -c %i "$R/docs/hard-a")" = "$(stat -c %i "$R/docs/nested/hard-b")" ]
    fi
    expect_status 1 rdr restore "$V" --recovery-code "$CODE" -o "$R"
    expect_stderr_contains "already exists"
    bad=$(printf '%s' "$CODE" | sed 's/^./\n&/' | sed '2s/^0/1/; 2s/^[^1\n]/0/' | tr -d '\n')
    expect_status 3 rdr verify "$V" --recovery-code "$bad"
    expect_stderr_contains "checksum"
    other=aes
    [ "$kind" = aes ] && other=chacha
    expect_status 3 rdr verify "$V" --recovery-code "$(cat "$FX/v3-$other.recovery")"
    expect_stderr_contains "belongs to another vault"

    # Without the key file: list and restore (one name) work, verify fails.
    N=$T/v3nokey-$kind
    cp -r "$FX/v3-$kind" "$N"
    rm "$N/keyfile"
    sub=docs/nested
    [ "$kind" = gc ] && sub=keep/file1
    [ "$kind" = history ] && sub=h/sub
    expect_status 0 rdr restore "$N" "$sub" --recovery-code "$CODE" -o "$T/v3nokey-out-$kind"
    check_ok "v3-$kind without key file: $sub restored alone, as pqvault get's" \
        diff -r --no-dereference "$C/$sub" "$T/v3nokey-out-$kind/$sub"
    expect_status 4 rdr verify "$N" --recovery-code "$CODE"
    expect_stderr_contains "keyfile"

    # Damage: verify exits 4 naming the file; its summary is pqvault
    # check --read-data's.  v3_damaged WHAT MESSAGE: $D prepared.
    v3_damaged() {
        expect_status 4 rdr verify "$D" --recovery-code "$CODE"
        expect_stderr_contains "$2"
        cp "$OUT" "$T/summary-reader"
        V=$D
        expect_status 4 pq check --read-data
        check_ok "v3-$kind, $1: reader's verify summary equals pqvault check --read-data's" \
            cmp -s "$T/summary-reader" "$OUT"
        V=$T/fx3-$kind
    }
    # The largest pack: its first blob's salt (byte 20), a blob's
    # ciphertext (byte 1000), its locator (the last byte), its table (the
    # byte before the locator); one byte short; missing.
    big_pack() { ls -S $(find "$1/packs" -type f) | head -n 1; }
    for at in salt:20 ciphertext:1000 locator:-1 table:-33; do
        D=$T/v3pack-$kind-${at%%:*}
        cp -r "$FX/v3-$kind" "$D"
        pack=$(big_pack "$D")
        off=${at#*:}
        [ "$off" -lt 0 ] && off=$(($(stat -c %s "$pack") + off))
        flip_byte "$pack" "$off"
        v3_damaged "a flipped byte in a pack's ${at%%:*}" "${pack#"$D"/}: "
    done
    # (v3-history's largest pack holds lines.txt, which only the pinned
    # snapshot 3 has: the damage shows there, not in the newest state.)
    if [ "$kind" = history ]; then
        expect_status 0 rdr restore "$D" --recovery-code "$CODE" -o "$T/v3pack-out-$kind"
        expect_status 4 rdr restore "$D" --recovery-code "$CODE" --at 3 -o "$T/v3pack-out3-$kind"
    else
        expect_status 4 rdr restore "$D" --recovery-code "$CODE" -o "$T/v3pack-out-$kind"
    fi
    D=$T/v3short-$kind
    cp -r "$FX/v3-$kind" "$D"
    pack=$(big_pack "$D")
    truncate -s -1 "$pack"
    v3_damaged "a pack one byte short" "${pack#"$D"/}: "
    D=$T/v3gone-$kind
    cp -r "$FX/v3-$kind" "$D"
    pack=$(big_pack "$D")
    rm "$pack"
    v3_damaged "a pack missing" "${pack#"$D"/}: missing"
    # The last byte of the newest segment with chunk records: the tag of
    # its last chunk block (chunk blocks come after the entry blocks).
    D=$T/v3blk-$kind
    cp -r "$FX/v3-$kind" "$D"
    seg=$("$PY" - "$D" "$CODE" "$RD" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[3])
import format3
v = format3.Vault(sys.argv[1], format3.decode_recovery(sys.argv[2]))
v.state()
print([s for s in v.chain if s.chunk_index][-1].rel)
PYEOF
)
    flip_byte "$D/$seg" $(($(stat -c %s "$D/$seg") - 1))
    v3_damaged "a flipped byte in a chunk block" "$seg: chunk block"
    # A config of a later format is refused, not guessed at.
    U=$T/v9-3-$kind
    cp -r "$FX/v3-$kind" "$U"
    sed -i '1s/ 3$/ 9/' "$U/config"
    expect_status 1 rdr verify "$U" --recovery-code "$CODE"
    expect_stderr_contains "unsupported version 9"
done
# v3-history (section 26): the reader's kept snapshots are the frozen log
# --json; each kept snapshot restored by the reader has the frozen SHA-256
# of its files, and agrees with pqvault --at in everything; a deleted
# segment of the old generation's kept snapshots, and the pinned
# snapshot's own, are found by both with the same summary.
V=$T/fx3-history
CODE=$(cat "$FX/v3-history.recovery")
PF=$FX/v3.pass
expect_status 0 rdr snapshots "$V" --recovery-code "$CODE" --json
check_ok "v3-history: reader's snapshots --json is the frozen log --json" \
    cmp -s "$OUT" "$FX/v3-history.log.json"
: >"$T/sums-at"
for e in 3 6 7 10 11; do
    rm -rf "$T/at"
    rdr restore "$V" --recovery-code "$CODE" --at "$e" -o "$T/at" >/dev/null 2>"$ERR"
    sums "$T/at" h | sed "s/^/$e /" >>"$T/sums-at"
done
check_ok "v3-history: every kept snapshot restored by the reader byte for byte (the frozen SHA-256)" \
    cmp -s "$T/sums-at" "$FX/v3-history.snapshots.sha256"
history_compare "v3-history"
for at in 1:3 3:3 7:7; do
    ep=${at%:*}
    D=$T/v3hist-gone-$ep
    cp -r "$FX/v3-history" "$D"
    seg=segments/$(printf %016x $ep)
    rm "$D/$seg"
    expect_status 4 rdr verify "$D" --recovery-code "$CODE"
    expect_stderr_contains "$seg: missing: snapshot ${at#*:}, which the chain keeps, needs it"
    cp "$OUT" "$T/summary-reader"
    V=$D
    expect_status 4 pq check --read-data
    expect_stderr_contains "$seg"
    check_ok "v3-history, kept segment $ep deleted: reader's verify summary equals pqvault check --read-data's" \
        cmp -s "$T/summary-reader" "$OUT"
done
# v3-upgraded's config of format 2 put back (its MAC made with the code's
# key, as a storage attacker with the old config would have it): the
# segments of version 3 are damage in a format-2 vault (section 20).
U=$T/v3down
cp -r "$FX/v3-upgraded" "$U"
cp "$FX/v2-aes/config" "$U/config"
expect_status 4 rdr verify "$U" --recovery-code "$(cat "$FX/v3-upgraded.recovery")"
expect_stderr_contains "segment version 3 in a format-2 vault"
XDG_STATE_HOME=$T/state

# An old key file put back after passwd (the new one's epoch supersedes it),
# then compaction (gc) into a base of epoch 7 with a history, which keeps
# the superseded hash; a segment from before the base is a leftover.
V=$T/v2-pw
cp -r "$FX/v2-aes" "$V"
PF=$FX/v2.pass
CODE=$(cat "$FX/v2-aes.recovery")
cp "$V/keyfile" "$T/old-keyfile"
printf 'another passphrase\n' >"$T/newpass"
expect_status 0 pq passwd --new-passphrase-file "$T/newpass" --kdf "$KDF"
PF=$T/newpass
expect_status 0 rdr verify "$V" --recovery-code "$CODE"
cp "$OUT" "$T/summary-reader"
expect_status 0 pq check --read-data
check_ok "v2 after passwd: reader's verify summary equals pqvault check --read-data's" \
    cmp -s "$T/summary-reader" "$OUT"
expect_status 0 pq gc
check_ok "v2 after gc: one segment left, a base" [ "$(ls "$V/segments")" = 0000000000000007 ]
expect_status 0 rdr verify "$V" --recovery-code "$CODE"
cp "$OUT" "$T/summary-reader"
expect_status 0 pq check --read-data
check_ok "v2 compacted: reader's verify summary equals pqvault check --read-data's" \
    cmp -s "$T/summary-reader" "$OUT"
expect_status 0 rdr list "$V" --recovery-code "$CODE" --json
check_ok "v2 compacted: reader's list --json is still the frozen listing" \
    cmp -s "$OUT" "$FX/v2-aes.list.json"
cp "$FX/v2-aes/segments/0000000000000002" "$V/segments/"
expect_status 0 rdr verify "$V" --recovery-code "$CODE"
expect_stderr_contains "segments/0000000000000002: leftover"
cp "$OUT" "$T/summary-reader"
expect_status 0 pq check --read-data
check_ok "v2 compacted, an old segment back: reader's summary equals pqvault check's" \
    cmp -s "$T/summary-reader" "$OUT"
cp "$T/old-keyfile" "$V/keyfile"
expect_status 4 rdr verify "$V" --recovery-code "$CODE"
expect_stderr_contains "keyfile: rollback"

# A vault written now by pqvault (format 3; FrodoKEM-1344-SHAKE,
# ChaCha20-Poly1305): a file of several chunks and its copy (deduplicated),
# segment-sized files, names with a newline, a non-UTF-8 byte and quotes, a
# setuid mode, an mtime before 1970, an empty directory, symbolic links
# (absolute, dangling, non-UTF-8 target), hard links, a file with holes,
# extended attributes, an owner that is not root (as root), a segment of
# several entry blocks and several chunk blocks.  The reader agrees with
# pqvault's list --json and check, cuts the files as pqvault did (verify
# --chunking), and restores the tree as it was; again after a replacement,
# a removal and gc's compaction, and after removing the big files and gc's
# repacking.
PF=$T/passphrase
S=$T/src
mkdir -p "$S/d/empty" "$S/d/sub" "$S/many"
head -c 4194305 /dev/urandom >"$S/big.bin"
cp -p "$S/big.bin" "$S/d/dup.bin"
head -c 65536 /dev/urandom >"$S/d/seg64k"
head -c 131073 /dev/urandom >"$S/d/seg128k+1"
printf 'x' >"$S/d/$(printf 'new\nline')"
printf 'y' >"$S/d/$(printf 'bad\377byte')"
printf 'z' >"$S/d/q\"uo\\te"
touch -d '1960-01-01 00:00:00.5 UTC' "$S/d/seg64k"
chmod 4755 "$S/d/seg128k+1"
chmod 700 "$S/d/empty"
ln -s /nonexistent/absolute "$S/d/abs-link"
ln -s "$(printf 'odd\377target')" "$S/d/sub/odd-link"
printf 'a' >"$S/d/holey"
truncate -s 9000000 "$S/d/holey"
printf 'm' | dd of="$S/d/holey" bs=1 seek=5000000 conv=notrunc 2>/dev/null
truncate -s 100000 "$S/d/all-hole"
printf 'three names\n' >"$S/d/h1"
ln "$S/d/h1" "$S/d/sub/h2"
ln "$S/d/h1" "$S/d/h3"
setfattr -n user.one -v 1 "$S/d/sub"
setfattr -n user.bin -v 0sAAECAwQ= "$S/d/seg64k"
[ "$(id -u)" = 0 ] && chown 1234:5678 "$S/d/h1" "$S/d/sub"
i=0
while [ $i -lt 1700 ]; do
    printf '%d\n' $i >"$S/many/a-file-with-a-name-long-enough-to-fill-blocks-$i"
    i=$((i + 1))
done
V=$T/fresh
expect_status 0 pq -q init --kdf "$KDF" --kem FrodoKEM-1344-SHAKE --aead ChaCha20-Poly1305
CODE=$(cat "$OUT")
expect_status 0 sh -c 'cd "$1" && shift && "$@"' sh "$S" "$PQV" -v "$V" --passphrase-file "$PF" add big.bin d many
fresh_compare() {
    expect_status 0 pq list --json
    cp "$OUT" "$T/list-c"
    expect_status 0 rdr list "$V" --recovery-code "$CODE" --json
    check_ok "fresh vault$1: reader's list --json equals pqvault's" cmp -s "$T/list-c" "$OUT"
    expect_status 0 pq check --read-data
    cp "$OUT" "$T/check-c"
    expect_status 0 rdr verify "$V" --recovery-code "$CODE" ${2:-}
    check_ok "fresh vault$1: reader's verify summary equals pqvault check --read-data's" \
        cmp -s "$T/check-c" "$OUT"
    rm -rf "$T/fresh-out"
    expect_status 0 rdr restore "$V" --recovery-code "$CODE" -o "$T/fresh-out"
    check_ok "fresh vault$1: restored tree is byte for byte the source" \
        diff -r --no-dereference "$S" "$T/fresh-out"
    stat_tree "$S" >"$T/meta-src"
    stat_tree "$T/fresh-out" >"$T/meta-out"
    check_ok "fresh vault$1: every type, mode, mtime (ns), size, link count and owner restored" \
        cmp -s "$T/meta-src" "$T/meta-out"
    xattr_tree "$S" >"$T/xattr-src"
    xattr_tree "$T/fresh-out" >"$T/xattr-out"
    check_ok "fresh vault$1: extended attributes restored" cmp -s "$T/xattr-src" "$T/xattr-out"
    check_ok "fresh vault$1: the holes restored as holes" \
        [ "$(stat -c %b "$T/fresh-out/d/holey")" -lt 1000 ] && \
        [ "$(stat -c %b "$T/fresh-out/d/all-hole")" = 0 ]
}
fresh_compare "" --chunking
# The block count is the header's last byte (u32 at offset 68, section 11);
# the chunk blocks are counted by the head (the reader's parse of it).
check_ok "fresh vault: a segment of several blocks" \
    [ "$(od -An -tu1 -j71 -N1 "$V/segments/$(ls -S "$V/segments" | head -n 1)")" -ge 2 ]
check_ok "fresh vault: a segment of several chunk blocks, big.bin's chunks shared by dup.bin" \
    [ "$("$PY" - "$V" "$CODE" "$RD" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[3])
import format3
v = format3.Vault(sys.argv[1], format3.decode_recovery(sys.argv[2]))
st = v.state()
big, dup = st[b"big.bin"], st[b"d/dup.bin"]
print(max(len(s.chunk_index) for s in v.chain) >= 2 and len(big.chunks) >= 2 and
      [c.id for c in big.chunks] == [c.id for c in dup.chunks])
PYEOF
)" = True ]
# A replacement, a removal, then gc compacts the chain into one base.
printf 'replaced\n' >"$T/repl"
touch -d '2001-02-03 04:05:06.7 UTC' "$T/repl"
expect_status 0 pq add --force --name d/q\"uo\\te "$T/repl"
cp -p "$T/repl" "$S/d/q\"uo\\te"
expect_status 0 pq rm many/a-file-with-a-name-long-enough-to-fill-blocks-7
many_mtime=$(stat -c %.9Y "$S/many")
rm "$S/many/a-file-with-a-name-long-enough-to-fill-blocks-7"
touch -d "@$many_mtime" "$S/many"   # the stored mtime: rm changes names, not metadata
expect_status 0 pq gc
check_ok "fresh vault: gc compacted the chain into one base" [ "$(chain_segments)" = 1 ]
check_ok "fresh vault: the kept snapshots' generation stays (section 26)" \
    [ "$(ls "$V/segments" | wc -l)" -gt 1 ]
fresh_compare " (compacted)"
# One add of r/ (one pack): a file of 1 MiB and a small one.  Once the big
# one and big.bin (and dup.bin, the same chunks) are removed, most of that
# pack's bytes are unused: gc repacks the small file's chunk into a new
# pack (section 25) and deletes the packs nothing uses.
mkdir "$S/r"
head -c 1048576 /dev/urandom >"$S/r/doomed"
head -c 20000 /dev/urandom >"$S/r/kept"
expect_status 0 sh -c 'cd "$1" && shift && "$@"' sh "$S" "$PQV" -v "$V" --passphrase-file "$PF" add r
(cd "$V" && find packs -type f | sort) >"$T/packs-before"
expect_status 0 pq rm big.bin d/dup.bin r/doomed
mt_d=$(stat -c %.9Y "$S/d")
mt_r=$(stat -c %.9Y "$S/r")
rm "$S/big.bin" "$S/d/dup.bin" "$S/r/doomed"
touch -d "@$mt_d" "$S/d"
touch -d "@$mt_r" "$S/r"
# The kept snapshots still use the removed files' chunks: forget them, so
# that gc's repacking has something to do.
history_compare "fresh vault (before forget)"
expect_status 0 pq forget --keep-last 1
expect_status 0 pq gc
(cd "$V" && find packs -type f | sort) >"$T/packs-after"
check_ok "fresh vault: gc repacked (a pack that was not there before)" \
    [ -n "$(comm -13 "$T/packs-before" "$T/packs-after")" ]
fresh_compare " (repacked)"
history_compare "fresh vault (repacked)"

# A vault upgraded now from format 2 (a copy of v2-aes: its own local
# state), then written: a changed file and new ones (chunked entries beside
# format-2 ones), a removal; then gc compacts the chain into a base of
# version 3 that carries the format-2 entries with a command key (section
# 24).  The reader agrees with pqvault before and after.
XDG_STATE_HOME=$T/state-mixed
V=$T/mixed
cp -r "$FX/v2-aes" "$V"
PF=$FX/v2.pass
CODE=$(cat "$FX/v2-aes.recovery")
head -c 300000 /dev/urandom >"$T/new.bin"
cat "$T/new.bin" "$T/new.bin" >"$T/twice.bin"
printf 'changed after the upgrade\n' >"$T/readme"
# (The first writing command upgrades, as pqvault upgrade would.)
expect_status 0 pq add --force --name docs/readme.txt "$T/readme"
check_ok "mixed vault: the config says format 3" [ "$(head -n 1 "$V/config")" = "pqvault-config 3" ]
expect_status 0 pq add --name docs/new.bin "$T/new.bin"
expect_status 0 pq add --name docs/twice.bin "$T/twice.bin"
expect_status 0 pq rm docs/hard-a
mixed_compare() {
    expect_status 0 pq list --json
    cp "$OUT" "$T/list-c"
    expect_status 0 rdr list "$V" --recovery-code "$CODE" --json
    check_ok "mixed vault$1: reader's list --json equals pqvault's" cmp -s "$T/list-c" "$OUT"
    expect_status 0 pq check --read-data
    cp "$OUT" "$T/check-c"
    expect_status 0 rdr verify "$V" --recovery-code "$CODE" --chunking
    check_ok "mixed vault$1: reader's verify summary equals pqvault check --read-data's" \
        cmp -s "$T/check-c" "$OUT"
    rm -rf "$T/mixed-out" "$T/mixed-c"
    expect_status 0 rdr restore "$V" --recovery-code "$CODE" -o "$T/mixed-out"
    expect_status 0 pq get docs -o "$T/mixed-c"
    check_ok "mixed vault$1: restored tree is pqvault get's" \
        diff -r --no-dereference "$T/mixed-c" "$T/mixed-out"
    stat_tree "$T/mixed-c" >"$T/meta-c"
    stat_tree "$T/mixed-out" >"$T/meta-r"
    check_ok "mixed vault$1: every type, mode, mtime, size, link count and owner as pqvault get's" \
        cmp -s "$T/meta-c" "$T/meta-r"
    check_ok "mixed vault$1: the new files restored byte for byte" \
        same_file "$T/new.bin" "$T/mixed-out/docs/new.bin" && \
        same_file "$T/twice.bin" "$T/mixed-out/docs/twice.bin"
}
mixed_compare ""
history_compare "mixed vault"
expect_status 0 pq gc
check_ok "mixed vault: gc compacted the chain into one base" [ "$(chain_segments)" = 1 ]
check_ok "mixed vault: the base is of version 3 (header byte 4)" \
    [ "$(od -An -tu1 -j4 -N1 "$V/segments/$(ls "$V/segments" | tail -n 1)" | tr -d ' ')" = 3 ]
mixed_compare " (compacted)"
history_compare "mixed vault (compacted)"
# Format 1 then 2 then 3: v2-upgraded (its data in format-1 objects) taken
# to format 3 by an add, then compacted by gc (format-1 objects referred to
# from a base of version 3).
V=$T/mixed1
cp -r "$FX/v2-upgraded" "$V"
PF=$FX/v1.pass
CODE=$(cat "$FX/v2-upgraded.recovery")
expect_status 0 pq add --force --name docs/readme.txt "$T/readme"
for when in "" " (compacted)"; do
    [ -n "$when" ] && expect_status 0 pq gc
    expect_status 0 pq list --json
    cp "$OUT" "$T/list-c"
    expect_status 0 rdr list "$V" --recovery-code "$CODE" --json
    check_ok "format-1 objects in a format-3 vault$when: reader's list --json equals pqvault's" \
        cmp -s "$T/list-c" "$OUT"
    expect_status 0 pq check --read-data
    cp "$OUT" "$T/check-c"
    expect_status 0 rdr verify "$V" --recovery-code "$CODE"
    check_ok "format-1 objects in a format-3 vault$when: reader's verify summary equals pqvault's" \
        cmp -s "$T/check-c" "$OUT"
    rm -rf "$T/mixed1-out" "$T/mixed1-c"
    expect_status 0 rdr restore "$V" --recovery-code "$CODE" -o "$T/mixed1-out"
    expect_status 0 pq get docs -o "$T/mixed1-c"
    check_ok "format-1 objects in a format-3 vault$when: restored tree is pqvault get's" \
        diff -r --no-dereference "$T/mixed1-c" "$T/mixed1-out"
done
check_ok "format-1 objects in a format-3 vault: compacted into one base" \
    [ "$(chain_segments)" = 1 ] && [ -n "$(find "$V/objects" -type f)" ]
history_compare "format-1 objects in a format-3 vault (compacted)"
XDG_STATE_HOME=$T/state

# History (docs/FORMAT.md section 26): a vault of several snapshots, one
# pinned, some forgotten (forget --keep-last), across two compactions by gc
# (the chain holds replaced names): kept snapshots in the generations of
# two older bases, and the forget's epoch between them a leftover.  The
# reader lists the snapshots as pqvault log --json, lists, verifies and
# restores every kept one as pqvault --at E does, and its verify summary is
# check --read-data's; a kept snapshot's segment deleted (in the middle of
# the history, and a base) is found by both (exit 4, the same summary),
# one put in another's place too; a forgotten snapshot's segment put back
# is a leftover for both.
V=$T/hist
PF=$T/passphrase
expect_status 0 pq -q init --kdf "$KDF"
CODE=$(cat "$OUT")
H=$T/hsrc
mkdir -p "$H/docs/sub"
hist_add() {
    expect_status 0 sh -c 'cd "$1" && shift && "$@"' sh "$H" "$PQV" -q -v "$V" \
        --passphrase-file "$PF" add --delete docs
}
# hist_verify WHEN STATUS [damaged]: both exit STATUS; the summaries are
# equal (with "damaged": their damaged and missing counts only).
hist_verify() {
    expect_status "$2" pq check --read-data
    cp "$OUT" "$T/check-c"
    expect_status "$2" rdr verify "$V" --recovery-code "$CODE"
    if [ "${3:-}" = damaged ]; then
        check_ok "history vault$1: reader's damaged and missing counts are pqvault check's" \
            [ "$(grep -o 'damaged: .*' "$T/check-c")" = "$(grep -o 'damaged: .*' "$OUT")" ]
    else
        check_ok "history vault$1: reader's verify summary equals pqvault check --read-data's" \
            cmp -s "$T/check-c" "$OUT"
    fi
}
printf 'one\n' >"$H/docs/a"
head -c 300000 /dev/urandom >"$H/docs/big"
ln -s a "$H/docs/link"
hist_add                                                    # epoch 2
printf 'two\n' >"$H/docs/a"
chmod 600 "$H/docs/a"
head -c 50000 /dev/urandom >"$H/docs/sub/s"
hist_add                                                    # 3
rm "$H/docs/big"
mv "$H/docs/sub/s" "$H/docs/moved"
hist_add                                                    # 4
expect_status 0 pq pin 3                                    # 5
printf 'three\n' >"$H/docs/a"
head -c 200000 /dev/urandom >"$H/docs/sub/new"
hist_add                                                    # 6
expect_status 0 pq rm docs/link                             # 7
rm "$H/docs/link"
expect_status 0 pq forget --keep-last 2                     # 8: forgets 2 and 4
expect_stderr_contains "forgot 2 snapshots"
cp "$V/segments/0000000000000008" "$T/forget-seg"
history_compare "history vault (forgotten, pinned)"
hist_verify " (forgotten, pinned)" 0
expect_status 0 pq gc                                       # 9: a base
check_ok "history vault: gc compacted the chain into a base of epoch 9" \
    [ "$(chain_segments)" = 1 ] && [ "$(ls "$V/segments" | tail -n 1)" = 0000000000000009 ]
check_ok "history vault: gc kept the segments 1-7 of the kept snapshots 3, 6, 7, not 8" \
    [ "$(ls "$V/segments" | tr '\n' ' ')" = "$(printf '%016x ' 1 2 3 4 5 6 7 9)" ]
printf 'four\n' >"$H/docs/a"
hist_add                                                    # 10
head -c 100000 /dev/urandom >"$H/docs/sub/new"
hist_add                                                    # 11
expect_status 0 pq gc                                       # 12: a base
printf 'five\n' >"$H/docs/b"
hist_add                                                    # 13
check_ok "history vault: three generations (bases 1, 9, 12)" \
    [ "$(ls "$V/segments" | tr '\n' ' ')" = "$(printf '%016x ' 1 2 3 4 5 6 7 9 10 11 12 13)" ]
history_compare "history vault (three generations)"
hist_verify " (three generations)" 0
expect_status 0 rdr snapshots "$V" --recovery-code "$CODE"
check_ok "history vault: the reader's kept snapshots and their bases (3 pinned)" \
    [ "$(awk '{ print $1 "/" $3 }' "$OUT" | tr '\n' ' ')" = "3/1 6/1 7/1 10/9 11/9 13/12 " ] && \
    [ "$(grep -c 'pinned$' "$OUT")" = 1 ] && grep -q '^3 .*pinned$' "$OUT"
# The forget's segment put back: a leftover (no kept snapshot needs it).
cp "$T/forget-seg" "$V/segments/0000000000000008"
hist_verify " (the forget's segment put back)" 0
expect_stderr_contains "segments/0000000000000008: leftover"
rm "$V/segments/0000000000000008"
# A kept snapshot's segment deleted: in the middle (epoch 5, the pin,
# which snapshots 6 and 7 need), a base of an old generation (9), the
# newest kept one of an old generation (11).
for ep in 5 9 11; do
    seg=segments/$(printf %016x $ep)
    mv "$V/$seg" "$T/kept-seg"
    hist_verify " (kept segment $ep deleted)" 4
    expect_stderr_contains "$seg: missing: snapshot"
    expect_status 4 rdr list "$V" --recovery-code "$CODE"
    expect_stderr_contains "$seg: missing"
    expect_status 4 pq list
    expect_status 4 rdr restore "$V" --recovery-code "$CODE" --at 13 -o "$T/hist-gone"
    mv "$T/kept-seg" "$V/$seg"
done
# Another segment in a kept one's place (epoch 10's bytes as 11): refused.
# (pqvault's check then prints the state's epoch, segments and entries but
# packs and bytes 0: neither the line of zeros of an unknown state nor a
# whole one; the damaged and missing counts are compared.)
cp "$V/segments/000000000000000b" "$T/kept-seg"
cp "$V/segments/000000000000000a" "$V/segments/000000000000000b"
hist_verify " (a kept segment replaced)" 4 damaged
expect_status 4 rdr restore "$V" --recovery-code "$CODE" --at 11 -o "$T/hist-repl"
expect_stderr_contains "segments/000000000000000b"
cp "$T/kept-seg" "$V/segments/000000000000000b"
hist_verify " (the kept segment put back)" 0
# A kept snapshot that is not: usage error for a malformed one, 1 for
# a forgotten or unknown epoch.
expect_status 1 rdr list "$V" --recovery-code "$CODE" --at 2
expect_stderr_contains "no snapshot of epoch 2 is kept"
expect_status 2 rdr list "$V" --recovery-code "$CODE" --at yesterday

# A format-3 vault with a registered writer and an imported batch: heads of
# version 3 carrying extensions (the writer registry and the imported
# batches, section 19), and the batch's entries stored as format 2's
# extents under a command key in a segment of version 3 (section 20).
V=$T/inboxed
PF=$T/passphrase
expect_status 0 pq -q init --kdf "$KDF"
CODE=$(cat "$OUT")
expect_status 0 pq writer add w1 --prefix in -o "$T/cred"
mkdir -p "$T/wsrc/sub"
head -c 200000 /dev/urandom >"$T/wsrc/sub/data.bin"
printf 'from the writer\n' >"$T/wsrc/note"
expect_status 0 pqn add --recipient "$T/cred" "$T/wsrc"
expect_status 0 pq import
head -c 100000 /dev/urandom >"$T/owner.bin"
expect_status 0 pq add --name own/owner.bin "$T/owner.bin"
expect_status 0 pq list --json
cp "$OUT" "$T/list-c"
expect_status 0 rdr list "$V" --recovery-code "$CODE" --json
check_ok "vault with an imported batch: reader's list --json equals pqvault's" cmp -s "$T/list-c" "$OUT"
expect_status 0 pq check --read-data
cp "$OUT" "$T/check-c"
expect_status 0 rdr verify "$V" --recovery-code "$CODE"
check_ok "vault with an imported batch: reader's verify summary equals pqvault check --read-data's" \
    cmp -s "$T/check-c" "$OUT"
expect_status 0 rdr restore "$V" --recovery-code "$CODE" -o "$T/inbox-out"
check_ok "vault with an imported batch: the batch's files and the owner's restored byte for byte" \
    same_file "$T/wsrc/sub/data.bin" "$T/inbox-out/in/wsrc/sub/data.bin" && \
    same_file "$T/wsrc/note" "$T/inbox-out/in/wsrc/note" && \
    same_file "$T/owner.bin" "$T/inbox-out/own/owner.bin"
check_ok "vault with an imported batch: its segments carry head extensions and entries of both kinds" \
    [ "$("$PY" - "$V" "$CODE" "$RD" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[3])
import format3
v = format3.Vault(sys.argv[1], format3.decode_recovery(sys.argv[2]))
st = v.state()
print(all(s.version == 3 for s in v.chain) and
      {1, 2} <= set(t for t, _, _ in v.chain[-1].extensions) and
      not st[b"in/wsrc/note"].chunked and st[b"own/owner.bin"].chunked)
PYEOF
)" = True ]
finish
