# tests/cli/copy.sh: pqvault copy --to (a directory here; a bucket in
# s3_vault.sh): the copy verifies and holds the same state; run again it
# continues (blobs there verified, not copied); a damaged or missing blob
# at the destination is copied again; a damaged source blob stops it with
# nothing of a vault at the destination; another vault there is refused;
# leftovers are not copied; a key file kept outside stays there; a pack of
# format 3 over 4 MiB is copied, and refused when longer than recorded.
. "$(dirname "$0")/lib.sh"

init_vault || finish
mkdir -p "$T/src/d"
head -c 200000 /dev/urandom >"$T/src/big"
printf 'small\n' >"$T/src/d/small"
expect_status 0 pq add "$T/src"
expect_status 0 pq rm src/d/small
mkdir -p "$V/packs/ab"
head -c 100 /dev/urandom >"$V/packs/ab/ab0102030405060708090a0b0c0d0e0f"
C=$T/copy
expect_status 0 pq copy --to "$C"
expect_stderr_contains "copied: epoch 3"
expect_status 0 "$PQV" -v "$C" --passphrase-file "$PF" check --read-data
expect_stdout_contains "leftovers: 0"
check_ok "the leftover pack is not copied" [ ! -e "$C/packs/ab/ab0102030405060708090a0b0c0d0e0f" ]
expect_status 0 "$PQV" -v "$C" --passphrase-file "$PF" get src/big -o "$T/big.out"
check_ok "the copy restores the file" same_file "$T/src/big" "$T/big.out"
# again: nothing but the key file and config rewritten
expect_status 0 pq copy --to "$C"
expect_stderr_contains "already there"
# a damaged and a missing blob at the destination: copied again
P=$(first_file "$C/packs")
flip_byte "$P" 20
rm "$C/config"
expect_status 0 pq copy --to "$C"
expect_status 0 "$PQV" -v "$C" --passphrase-file "$PF" check --read-data
# a damaged source pack: refused, and the destination is no vault
rm -rf "$C"
P=$(cd "$V" && find packs -type f ! -name 'ab0102*' | sort | head -n 1)
cp "$V/$P" "$T/p.saved"
flip_byte "$V/$P" 30
expect_status 4 pq copy --to "$C"
expect_stderr_contains "$P"
check_ok "no config at the destination" [ ! -e "$C/config" ]
cp "$T/p.saved" "$V/$P"
expect_status 0 pq copy --to "$C"
# another vault at the destination
V2=$T/other
V=$V2 init_vault
expect_status 1 pq copy --to "$V2"
expect_stderr_contains "holds another vault"
# a key file outside the vault stays there
V=$T/kv
expect_status 0 "$PQV" -v "$V" --keyfile "$T/kv.key" --passphrase-file "$PF" init --kdf "$KDF"
expect_status 0 "$PQV" -v "$V" --keyfile "$T/kv.key" --passphrase-file "$PF" add "$T/src/d"
expect_status 0 "$PQV" -v "$V" --keyfile "$T/kv.key" --passphrase-file "$PF" copy --to "$T/kv.copy"
expect_stderr_contains "the key file is kept outside the vault: not copied"
check_ok "no key file in the copy" [ ! -e "$T/kv.copy/keyfile" ]
expect_status 0 "$PQV" -v "$T/kv.copy" --keyfile "$T/kv.key" --passphrase-file "$PF" check --read-data
expect_status 2 pq copy
# Packs of format 3 hold up to 8 MiB of chunks (and one more, padded): a
# 12 MiB file fills one (format 2's were at most 4 MiB).  Copied, and run
# again verified where they are; one longer at the source than its segment
# recorded is refused.
V=$T/big3
init_vault
head -c $((12 << 20)) /dev/urandom >"$T/f12"
expect_status 0 pq add "$T/f12"
P=$(cd "$V" && find packs -type f -size +4200k | head -n 1)
check_ok "a pack over 4 MiB ($P)" test -n "$P"
expect_status 0 pq copy --to "$T/big3.copy"
expect_stderr_contains "copied: epoch 2"
expect_status 0 "$PQV" -v "$T/big3.copy" --passphrase-file "$PF" check --read-data
expect_stdout_contains "damaged: 0, missing: 0"
expect_status 0 "$PQV" -v "$T/big3.copy" --passphrase-file "$PF" get f12 -o "$T/f12.out"
check_ok "the copy restores the 12 MiB file" same_file "$T/f12" "$T/f12.out"
expect_status 0 pq copy --to "$T/big3.copy"
expect_stderr_contains "already there"
rm -rf "$T/big3.copy"
printf 'x' >>"$V/$P"
expect_status 4 pq copy --to "$T/big3.copy"
expect_stderr_contains "$P"
finish
