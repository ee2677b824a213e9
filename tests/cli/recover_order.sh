# tests/cli/recover_order.sh: recover checks the recovery code (its
# checksum, and that it is this vault's: identity hash and config MAC)
# before it asks for, or reads, the new passphrase; it works with the key
# file missing, damaged or intact, and with --keyfile elsewhere.
. "$(dirname "$0")/lib.sh"

init_vault --kem FrodoKEM-640-SHAKE || finish
cp "$T/recovery" "$T/code"
printf 'data\n' >"$T/f"
expect_status 0 pq add "$T/f" --name f
# another vault's valid code
expect_status 0 "$PQV" -v "$T/other" --passphrase-file "$PF" -q init --kdf "$KDF" \
    --kem FrodoKEM-640-SHAKE
cp "$OUT" "$T/othercode"
# a typo: one symbol changed (the checksum catches it)
sed 's/^\(.\)./\1Z/' "$T/code" >"$T/typo"
cmp -s "$T/code" "$T/typo" && sed -i 's/^\(.\)./\1Y/' "$T/typo"
printf 'new pass\n' >"$T/np"

# A passphrase command that records that it ran.
RAN=$T/ran
askpass="touch '$RAN'; cat '$T/np'"

for bad in typo othercode; do
    rm -f "$RAN"
    expect_status 3 pqn --passphrase-command "$askpass" recover --kdf "$KDF" \
        --recovery-file "$T/$bad"
    expect_stderr_contains "invalid recovery code"
    expect_one_error_line
    check_ok "recover with the $bad code read no passphrase" test ! -e "$RAN"
    # a passphrase file that does not exist is never opened either
    expect_status 3 pqn --passphrase-file "$T/missing" recover --kdf "$KDF" \
        --recovery-file "$T/$bad"
    expect_stderr_contains "invalid recovery code"
    # nor is the terminal asked (no terminal here: that would be exit 1)
    expect_status 3 notty "$PQV" -v "$V" recover --kdf "$KDF" --recovery-file "$T/$bad"
    expect_stderr_contains "invalid recovery code"
done
expect_stderr_contains "belongs to another vault"
# the key file was not touched
expect_status 0 pq get f -o -

# ---- a valid code: then the new passphrase is read ----
rm -f "$RAN"
expect_status 0 pqn --passphrase-command "$askpass" recover --kdf "$KDF" --recovery-file "$T/code"
check_ok "recover with the right code read the new passphrase" test -e "$RAN"
expect_status 0 pqn --passphrase-file "$T/np" get f -o -
expect_stdout_contains "data"
expect_status 3 pq list

# ---- with the key file missing, damaged, elsewhere ----
rm -f "$V/keyfile"
expect_status 3 pqn --passphrase-file "$T/missing" recover --kdf "$KDF" --recovery-file "$T/typo"
expect_status 0 pq recover --kdf "$KDF" --recovery-file "$T/code"
expect_status 0 pq list
flip_byte "$V/keyfile" 60
expect_status 4 pq list
expect_status 3 pqn --passphrase-file "$T/missing" recover --kdf "$KDF" --recovery-file "$T/typo"
expect_status 0 pqn --passphrase-file "$T/np" recover --kdf "$KDF" --recovery-file "$T/code"
expect_status 0 pqn --passphrase-file "$T/np" list
mv "$V/keyfile" "$T/kf"
expect_status 0 pq --keyfile "$T/kf2" recover --kdf "$KDF" --recovery-file "$T/code"
check_ok "recover wrote the key file at --keyfile" test -f "$T/kf2" -a ! -e "$V/keyfile"
expect_status 0 pq --keyfile "$T/kf2" list
# a --keyfile directory that does not exist: the code is checked first,
# then writing fails (exit 1), naming the directory
expect_status 3 pq --keyfile "$T/nodir/kf" recover --kdf "$KDF" --recovery-file "$T/typo"
expect_status 1 pq --keyfile "$T/nodir/kf" recover --kdf "$KDF" --recovery-file "$T/code"
expect_stderr_contains "$T/nodir"
# an empty new passphrase is refused after the code, before any Argon2id
printf '\n' >"$T/empty"
expect_status 1 pqn --passphrase-file "$T/empty" --keyfile "$T/kf2" recover --kdf "$KDF" \
    --recovery-file "$T/code"
expect_stderr_contains "empty passphrase refused"
expect_status 0 pq --keyfile "$T/kf2" list

finish
