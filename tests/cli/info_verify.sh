# tests/cli/info_verify.sh: what info and check --no-key say, and on what
# authority.  Without unlocking, the config's fields come from an
# unauthenticated file and info says so on each line; with a passphrase
# source that asks nobody (file, descriptor, command, environment; never
# a prompt) info unlocks and verifies them, and names the slot that
# opened; a slot that did not open is in use when its cost is not the
# default, else not knowable (an unused slot is random bytes at the
# default cost).  Neither info nor check --no-key needs the key file: it may be
# kept elsewhere (--keyfile) or lost.  Format 2 shows its epoch, segments
# and packs, format 1 (the frozen fixture) its records and objects.
. "$(dirname "$0")/lib.sh"

UNVERIFIED="(unverified: unlock to verify)"
# A slot at the default cost that did not open cannot be told used or
# unused; one at another cost is in use (an unused slot has the default).
UNKNOWN="in use or unused: not knowable without its passphrase (an unused slot is random bytes at the default cost, by design the same as a used one)"
INUSE="in use (its cost is not the default an unused slot has)"

init_vault --kem FrodoKEM-640-SHAKE --aead ChaCha20-Poly1305 || finish
code=$(cat "$T/recovery")
printf 'data\n' >"$T/f"
expect_status 0 pq add "$T/f" --name f

# ---- no passphrase: every config field marked unverified ----
expect_status 0 pqn info
for w in "vault id:        " "KEM:             FrodoKEM-640-SHAKE $UNVERIFIED" \
    "default AEAD:    ChaCha20-Poly1305 $UNVERIFIED" "fingerprint:     pqv1-" "created:         "; do
    expect_stdout_contains "$w"
done
n=$(grep -cF "$UNVERIFIED" "$OUT")
check_ok "five config lines marked unverified ($n)" test "$n" -eq 5
expect_stdout_contains "slot 0:          Argon2id t=1, m=256 KiB, p=1, $INUSE"
expect_stdout_contains "slot 1:          Argon2id t=3, m=65536 KiB, p=4, $UNKNOWN"
check_ok "nothing verified without a passphrase" sh -c '! grep -q "(verified)" "$1"' sh "$OUT"

# ---- a passphrase source: unlocked, verified, the slot that opened ----
expect_status 0 pq info
for w in "KEM:             FrodoKEM-640-SHAKE (verified)" \
    "default AEAD:    ChaCha20-Poly1305 (verified)" "fingerprint:     pqv1-" \
    "slot 0:          Argon2id t=1, m=256 KiB, p=1 (opened by this passphrase)" \
    "slot 1:          Argon2id t=3, m=65536 KiB, p=4, $UNKNOWN"; do
    expect_stdout_contains "$w"
done
n=$(grep -c "(verified)$" "$OUT")
check_ok "five config lines verified ($n)" test "$n" -eq 5
check_ok "nothing left unverified" sh -c '! grep -qF "$1" "$2"' sh "$UNVERIFIED" "$OUT"
expect_status 0 env PQVAULT_PASSPHRASE="correct horse battery" "$PQV" -v "$V" info
expect_stdout_contains "(opened by this passphrase)"
expect_status 0 pqn --passphrase-command "cat '$PF'" info
expect_stdout_contains "KEM:             FrodoKEM-640-SHAKE (verified)"
expect_status 0 sh -c 'exec "$1" -v "$2" --passphrase-fd 3 info 3<"$3"' sh "$PQV" "$V" "$PF"
expect_stdout_contains "fingerprint:     pqv1-"
expect_stdout_contains "(verified)"
# the second slot's passphrase opens slot 1; slot 0 is then unknown
printf 'second\n' >"$T/p1"
# (passwd records the new key file in an epoch of its own: epoch 3)
expect_status 0 pq passwd --slot 1 --kdf "$KDF" --new-passphrase-file "$T/p1"
expect_status 0 pqn --passphrase-file "$T/p1" info
expect_stdout_contains "slot 0:          Argon2id t=1, m=256 KiB, p=1, $INUSE"
expect_stdout_contains "slot 1:          Argon2id t=1, m=256 KiB, p=1 (opened by this passphrase)"
# a wrong passphrase: nothing verified, exit 3
printf 'wrong\n' >"$T/wrong"
expect_status 3 pqn --passphrase-file "$T/wrong" info
expect_stderr_contains "wrong passphrase"
expect_empty_stdout

# ---- a forged config: shown unverified without the key, refused with it ----
cp "$V/config" "$T/config.orig"
sed -i 's/^aead ChaCha20-Poly1305$/aead AES-256-GCM/' "$V/config"
expect_status 0 pqn info
expect_stdout_contains "default AEAD:    AES-256-GCM $UNVERIFIED"
expect_status 4 pq info
expect_empty_stdout
cp "$T/config.orig" "$V/config"

# ---- the key file kept elsewhere, or lost ----
mv "$V/keyfile" "$T/kf"
expect_status 0 pqn info
expect_stdout_contains "key file:        $V/keyfile (not found: if it is kept elsewhere, name it with --keyfile; if it is lost, 'pqvault recover' writes a new one from the recovery code)"
expect_stdout_contains "KEM:             FrodoKEM-640-SHAKE $UNVERIFIED"
expect_stdout_contains "slot 0:          unknown (no key file)"
expect_stdout_contains "epoch:           3"
expect_stdout_contains "segments:        3 ("
expect_stdout_contains "packs:           1 ("
# a passphrase cannot verify anything without the key file: still exit 0
expect_status 0 pq info
expect_stdout_contains "(not found:"
expect_stdout_contains "$UNVERIFIED"
expect_status 0 pqn check --no-key
expect_stdout_contains "epoch: 3, segments: 3, packs: 1"
expect_stderr_contains "$V/keyfile: key file not checked: key file not found"
# it still finds damage in what it can check
seg=$V/segments/0000000000000002
flip_byte "$seg" 0
expect_status 4 pqn check --no-key
expect_stderr_contains "segments/0000000000000002: segment has a bad magic number"
flip_byte "$seg" 0
# with --keyfile (and PQVAULT_KEYFILE) pointing at it, all is there
expect_status 0 pqn --keyfile "$T/kf" info
expect_stdout_contains "key file:        $T/kf"
expect_stdout_contains "slot 0:          Argon2id t=1, m=256 KiB, p=1, $INUSE"
expect_status 0 pqn --keyfile "$T/kf" --passphrase-file "$PF" info
expect_stdout_contains "(opened by this passphrase)"
expect_status 0 env PQVAULT_KEYFILE="$T/kf" "$PQV" -v "$V" check --no-key
check_ok "check --no-key with the key file: nothing said about it" test ! -s "$ERR"
expect_status 0 pqn --keyfile "$T/kf" --passphrase-file "$PF" list
# a --keyfile in a directory that does not exist
expect_status 0 pqn --keyfile "$T/nodir/kf" info
expect_stdout_contains "key file:        $T/nodir/kf (not found:"
expect_status 0 pqn --keyfile "$T/nodir/kf" check --no-key
expect_stderr_contains "key file not checked"
# commands that need the key still fail without it (and say how to get one)
expect_status 1 pq list
expect_stderr_contains "key file not found"
expect_stderr_contains "pqvault recover"
expect_status 1 pqn --keyfile "$T/nodir/kf" --passphrase-file "$PF" list
expect_stderr_contains "no such directory"

# ---- a damaged key file: check --no-key reports it as damage ----
cp "$T/kf" "$V/keyfile"
flip_byte "$V/keyfile" 100
expect_status 4 pqn check --no-key
expect_stderr_contains "$V/keyfile: key file is corrupted (checksum mismatch)"
expect_status 0 pqn info
expect_stdout_contains "key file:        $V/keyfile (damaged: key file is corrupted (checksum mismatch))"
expect_status 4 pq list
cp "$T/kf" "$V/keyfile"
expect_status 0 pqn check --no-key
check_ok "an intact key file: nothing said about it" test ! -s "$ERR"

# ---- format 1 (a copy of the frozen fixture): records and objects ----
V=$T/v1
cp -r "$(dirname "$0")/../fixtures/v1-aes" "$V" && chmod -R u+w "$V"
expect_status 0 pqn info
expect_stdout_contains "format version:  1"
expect_stdout_contains "KEM:             FrodoKEM-976-AES $UNVERIFIED"
expect_stdout_contains "records:         6 ("
expect_stdout_contains "objects:         3 ("
check_ok "no epoch shown for format 1" sh -c '! grep -q "^epoch:" "$1"' sh "$OUT"
expect_status 0 pqn --passphrase-file "$(dirname "$0")/../fixtures/v1.pass" info
expect_stdout_contains "KEM:             FrodoKEM-976-AES (verified)"

finish
