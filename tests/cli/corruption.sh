# tests/cli/corruption.sh: the corruption and tampering matrix, driving the
# real binary.  For every file kind (key file, config, record, object) and
# every region of each (header, lengths, ciphertext, tag, trailing bytes) a
# damaged copy is made by bit flips, truncation, extension and zeroing, plus
# two records swapped, a record copied over another and objects moved under
# other ids.  Each case asserts:
#   check --read-data   exits 4 and names the damaged file on stderr;
#   get                 exits 4 and writes nothing (no file, no temporary);
#   other files         stay readable, byte for byte.
# Key file cases follow src/keys/keyfile.c: its trailing SHA-256 catches
# accidental damage (exit 4); a forger who fixes the checksum is stopped by
# the slot tags and looks like a wrong passphrase (exit 3), except where the
# parser can still tell (out-of-range slot parameters: exit 4).
. "$(dirname "$0")/lib.sh"

MUT="python3 $(dirname "$0")/../vectors/mutate.py"
init_vault --kem FrodoKEM-640-SHAKE --aead AES-256-GCM || finish

# Files: a and d of the same size (one object, one STREAM segment), b tiny,
# c of two objects whose second has two segments.  Learn each file's record
# and objects by listing the vault after each add.
head -c 3000 /dev/urandom >"$T/a"
head -c 3000 /dev/urandom >"$T/d"
head -c 100 /dev/urandom >"$T/b"
head -c $((4194304 + 70000)) /dev/urandom >"$T/c"
listing() { (cd "$V" && find records objects -type f | sort); }
listing >"$T/l0"
for f in a b c d; do
    pq -q add "$T/$f" --name "$f" || fail "add $f"
    listing >"$T/l1"
    comm -13 "$T/l0" "$T/l1" >"$T/new-$f"
    mv "$T/l1" "$T/l0"
    eval "rec_$f=\$(grep '^records/' \"\$T/new-$f\")"
done
obj_a=$(grep '^objects/' "$T/new-a")
obj_b=$(grep '^objects/' "$T/new-b")
obj_d=$(grep '^objects/' "$T/new-d")
# c's objects: the larger one is object 0.
obj_c0=$(cd "$V" && ls -S $(grep '^objects/' "$T/new-c") | head -n 1)
obj_c1=$(cd "$V" && ls -S $(grep '^objects/' "$T/new-c") | tail -n 1)
check_ok "learned the vault layout" test -n "$rec_a" -a -n "$obj_a" -a -n "$obj_c1" \
    -a "$obj_c0" != "$obj_c1"
expect_status 0 pq check --read-data
cp -a "$V" "$T/pristine"
restore() { rm -rf "$V" && cp -a "$T/pristine" "$V"; }

CASES=0
# damaged SUBJECT-REGEX NAME OTHER DESC: the vault is damaged; check names
# SUBJECT, get NAME fails with 4 and leaves nothing; OTHER (if any) is intact.
damaged() {
    subject=$1 name=$2 other=$3 what=$4
    CASES=$((CASES + 1))
    st=0
    pq check --read-data >"$OUT" 2>"$ERR" || st=$?
    if [ "$st" -eq 4 ] && grep -q -- "$subject" "$ERR"; then
        ok "$what: check --read-data exits 4 naming $subject"
    else
        fail "$what: check --read-data exit $st (want 4), stderr naming '$subject'"
    fi
    rm -rf "$T/out" && mkdir "$T/out"
    st=0
    pq get "$name" -o "$T/out/$name" >/dev/null 2>"$ERR" || st=$?
    left=$(ls -A "$T/out")
    if [ "$st" -eq 4 ] && [ -z "$left" ] && [ "$(wc -l <"$ERR")" -eq 1 ]; then
        ok "$what: get $name exits 4, one error line, nothing written"
    else
        fail "$what: get $name exit $st (want 4), left '$left'"
    fi
    if [ -n "$other" ]; then
        st=0
        pq get "$other" -o "$T/out/$other" >/dev/null 2>"$ERR" || st=$?
        if [ "$st" -eq 0 ] && same_file "$T/out/$other" "$T/$other"; then
            ok "$what: $other still restores intact"
        else
            fail "$what: $other exit $st or content differs"
        fi
    fi
    restore
}

# ---- records: file a's record ----
R="$V/$rec_a"
rsize=$(stat -c %s "$R")
for spec in \
    "flip 0:magic" "flip 3:magic" "flip 4:version" "flip 4 02:version" "flip 5:suite" \
    "flip 5 03:suite" "flip 6:reserved" "flip 7 80:reserved" "flip 8:salt" "flip 39:salt" \
    "flip 40:body-start" "flip 44:body-name-length" "flip 2000:body" \
    "flip -17:body-end" "flip -16:tag" "flip -1:tag" \
    "truncate 0:empty" "truncate 7:short-header" "truncate 40:header-only" \
    "truncate 96:below-minimum" "truncate -1:one-byte-short" "truncate -16:tag-missing" \
    "append 00:one-trailing-byte" "append 00000000000000000000000000000000:16-trailing-bytes" \
    "zero 40 64:zeroed-body" "zeroall:all-zero" "zero -16 16:zeroed-tag"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$R" $ops
    damaged "$rec_a" a b "record $region ($ops)"
done

# Two records swapped: each sits at the other's name.
mv "$V/$rec_a" "$T/x" && mv "$V/$rec_b" "$V/$rec_a" && mv "$T/x" "$V/$rec_b"
damaged "$rec_a" a c "records of a and b swapped"
mv "$V/$rec_a" "$T/x" && mv "$V/$rec_b" "$V/$rec_a" && mv "$T/x" "$V/$rec_b"
damaged "$rec_b" b c "records of a and b swapped (get b)"
# One record copied over another.
cp "$V/$rec_a" "$V/$rec_b"
damaged "$rec_b" b a "record of a copied over b's"
# A record of a same-size file put in place of another.
cp "$V/$rec_d" "$V/$rec_a"
damaged "$rec_a" a b "record of d copied over a's"

# ---- objects: a's object (one segment) ----
O="$V/$obj_a"
for spec in \
    "flip 0:magic" "flip 4:version" "flip 5:suite" "flip 5 03:suite" "flip 6:reserved" \
    "flip 8:first-ciphertext-byte" "flip 1500:ciphertext" "flip -17:last-ciphertext-byte" \
    "flip -16:tag" "flip -1:tag" "truncate 0:empty" "truncate 8:header-only" \
    "truncate -1:one-byte-short" "truncate -16:tag-missing" "append 00:one-trailing-byte" \
    "append 0000000000000000000000000000000000:17-trailing-bytes" "zero 8 32:zeroed-ciphertext" \
    "zero -16 16:zeroed-tag" "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$O" $ops
    damaged "$obj_a" a b "object $region ($ops)"
done

# c's second object: two STREAM segments (65536 + 4464 bytes of plaintext).
O="$V/$obj_c1"
for spec in "flip 100:segment-0" "flip 65551:segment-0-tag" "flip 65560:segment-1" \
    "flip -1:segment-1-tag" "truncate 65560:final-segment-missing" \
    "truncate 65576:final-segment-short"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$O" $ops
    damaged "$obj_c1" c a "object 1 of c: $region ($ops)"
done
# The two objects of c swapped.
mv "$V/$obj_c0" "$T/x" && mv "$V/$obj_c1" "$V/$obj_c0" && mv "$T/x" "$V/$obj_c1"
damaged "$obj_c0" c a "objects of c swapped"
# a's object moved under d's id (same size: only the tag can tell).
mv "$V/$obj_a" "$V/$obj_d"
damaged "$obj_d" d b "object of a moved under d's id"
mv "$V/$obj_a" "$V/$obj_d"
damaged "$obj_a" a b "object of a moved under d's id (a's side)"
# a's object copied over b's (sizes differ).
cp "$V/$obj_a" "$V/$obj_b"
damaged "$obj_b" b a "object of a copied over b's"
# An object missing.
rm -f "$V/$obj_b"
damaged "$obj_b" b a "object of b missing"

# ---- config: any damage is found at open (parse) or by the MAC ----
C="$V/config"
csize=$(stat -c %s "$C")
for spec in \
    "flip 0:first-line" "flip 15:format-version" "flip 30:vault-id" "flip 70:kem-name" \
    "flip 90:aead-name" "flip 120:identity" "flip -80:created" "flip -68:mac-key-word" \
    "flip -5:mac" "flip -1:final-newline" "truncate 0:empty" "truncate 100:truncated" \
    "truncate -1:no-final-newline" "truncate -69:mac-line-missing" "appendtext x:trailing-text" \
    "append 0a:trailing-newline" "append 00:trailing-NUL" "zeroall:all-zero" \
    "replace AES-256-GCM ChaCha20-Poly1305:aead-changed" \
    "replace FrodoKEM-640-SHAKE FrodoKEM-976-SHAKE:kem-changed"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$C" $ops
    CASES=$((CASES + 1))
    for cmd in "check --read-data" "get a"; do
        rm -rf "$T/out" && mkdir "$T/out"
        st=0
        (cd "$T/out" && pq $cmd) >/dev/null 2>"$ERR" || st=$?
        if [ "$st" -eq 4 ] && grep -q 'config' "$ERR" && [ -z "$(ls -A "$T/out")" ]; then
            ok "config $region ($ops): $cmd exits 4 naming the config"
        else
            fail "config $region ($ops): $cmd exit $st (want 4, naming the config)"
        fi
    done
    restore
done

# ---- key file ----
K="$V/keyfile"
ksize=$(stat -c %s "$K")
S0=$((ksize - 32 - 2 * 92))   # slot 0: t, m, p (12), salt (32), sealed seed (48)
S1=$((S0 + 92))
# keyfile_expect STATUS SUBSTRING DESC: check and get both end with STATUS.
keyfile_expect() {
    want=$1 substr=$2 what=$3
    CASES=$((CASES + 1))
    for cmd in "check --read-data" "get a"; do
        rm -rf "$T/out" && mkdir "$T/out"
        st=0
        (cd "$T/out" && pq $cmd) >/dev/null 2>"$ERR" || st=$?
        if [ "$st" -eq "$want" ] && grep -qF -- "$substr" "$ERR" && [ -z "$(ls -A "$T/out")" ] &&
            [ "$(wc -l <"$ERR")" -eq 1 ]; then
            ok "key file $what: $cmd exits $want ($substr)"
        else
            fail "key file $what: $cmd exit $st (want $want, '$substr')"
        fi
    done
    restore
}
# Accidental damage anywhere: exit 4 naming the key file.
for spec in \
    "flip 0:magic" "flip 4:version" "flip 4 02:version" "flip 5:reserved" "flip 8:identity-version" \
    "flip 9:kem-id" "flip 20:x25519-key" "flip 5000:frodo-key" "flip $((S0 + 1)):slot0-t" \
    "flip $((S0 + 6)):slot0-m" "flip $((S0 + 20)):slot0-salt" "flip $((S0 + 50)):slot0-seed" \
    "flip $((S0 + 90)):slot0-tag" "flip $((S1 + 11)):slot1-p" "flip $((S1 + 70)):slot1-sealed" \
    "flip -32:checksum" "flip -1:checksum" "truncate 0:empty" "truncate 7:short-header" \
    "truncate 100:truncated" "truncate -1:one-byte-short" "truncate -33:checksum-missing" \
    "append 00:one-trailing-byte" "append 0000000000000000:8-trailing-bytes" \
    "zero $S0 92:zeroed-slot" "zeroall:all-zero"; do
    ops=${spec%%:*} region=${spec#*:}
    $MUT "$K" $ops
    keyfile_expect 4 "keyfile" "$region ($ops)"
done
# Deliberate changes with the checksum fixed: the slot tags stop them and
# look like a wrong passphrase (3); parameters out of range are still
# refused by the parser (4); slot 1 is unused here, so changing it is
# harmless (its bytes are random anyway).
for spec in \
    "3:wrong passphrase:flip 5000 fixsum:frodo-key" \
    "3:wrong passphrase:flip 20 fixsum:x25519-key" \
    "3:wrong passphrase:flip $((S0 + 50)) fixsum:slot0-seed" \
    "3:wrong passphrase:flip $((S0 + 20)) fixsum:slot0-salt" \
    "3:wrong passphrase:flip $((S0 + 3)) 02 fixsum:slot0-t" \
    "4:out-of-range Argon2id:be32 $((S0 + 4)) 0xffffffff fixsum:slot0-m-huge" \
    "4:out-of-range Argon2id:be32 $S0 0 fixsum:slot0-t-zero" \
    "4:out-of-range Argon2id:be32 $((S1 + 8)) 1000 fixsum:slot1-p-huge" \
    "4:unknown KEM:set 9 63 fixsum:kem-id" \
    "4:reserved:set 5 01 fixsum:reserved" \
    "1:version 2 is not supported:set 4 02 fixsum:future-version" \
    "0::flip $((S1 + 70)) fixsum:slot1-sealed"; do
    want=${spec%%:*} rest=${spec#*:}
    substr=${rest%%:*} rest=${rest#*:}
    ops=${rest%%:*} region=${rest#*:}
    $MUT "$K" $ops
    if [ "$want" -eq 0 ]; then
        CASES=$((CASES + 1))
        expect_status 0 pq get a -o "$T/ka"
        check_ok "key file forged $region: a intact" same_file "$T/ka" "$T/a"
        rm -f "$T/ka"
        restore
    else
        keyfile_expect "$want" "$substr" "forged $region ($ops)"
    fi
done

echo "# corruption matrix: $CASES cases"
expect_status 0 pq check --read-data
finish
