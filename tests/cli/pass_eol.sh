# tests/cli/pass_eol.sh: every passphrase source is read alike (one
# trailing "\n", "\r\n" or "\r" is not part of the passphrase, whether it
# comes from a file, a descriptor, a command, the environment or the
# terminal), and an empty passphrase is refused before any Argon2id work,
# for a new passphrase (init, passwd, recover) and for unlocking.
. "$(dirname "$0")/lib.sh"

nl='
'
cr=$(printf '\r')
printf 'pw\n' >"$T/pw-lf"
printf 'pw\r\n' >"$T/pw-crlf"
printf 'pw' >"$T/pw-bare"
printf 'pw2\n' >"$T/pw2"
: >"$T/empty"
printf '\n' >"$T/empty-line"

# ---- a trailing newline in $PQVAULT_PASSPHRASE is not part of it ----
rm -rf "$V"
expect_status 0 env PQVAULT_PASSPHRASE="pw$nl" "$PQV" -v "$V" -q init --kdf "$KDF"
cp "$OUT" "$T/code"
for f in pw-lf pw-crlf pw-bare; do
    expect_status 0 pqn --passphrase-file "$T/$f" list
done
expect_status 0 env PQVAULT_PASSPHRASE="pw" "$PQV" -v "$V" list
expect_status 0 env PQVAULT_PASSPHRASE="pw$nl" "$PQV" -v "$V" list
expect_status 0 env PQVAULT_PASSPHRASE="pw$cr$nl" "$PQV" -v "$V" list
expect_status 0 pqn --passphrase-command "printf 'pw\r\n'" list
expect_status 0 sh -c 'exec "$1" -v "$2" --passphrase-fd 3 list 3<"$3"' sh "$PQV" "$V" "$T/pw-crlf"
# only one: "pw\n\n" is "pw\n", which is not the passphrase
expect_status 3 env PQVAULT_PASSPHRASE="pw$nl$nl" "$PQV" -v "$V" list

# ---- the same for a new passphrase (passwd) and for recover ----
expect_status 0 env PQVAULT_NEW_PASSPHRASE="pw2$cr$nl" "$PQV" -v "$V" \
    --passphrase-file "$T/pw-lf" passwd --kdf "$KDF"
expect_status 0 pqn --passphrase-file "$T/pw2" list
expect_status 0 env PQVAULT_PASSPHRASE="pw2" "$PQV" -v "$V" list
# a line break inside a new passphrase could never be typed or read from a
# file (they give the first line): refused
expect_status 1 env PQVAULT_NEW_PASSPHRASE="a${nl}b" "$PQV" -v "$V" \
    --passphrase-file "$T/pw2" passwd --kdf "$KDF"
expect_stderr_contains "line break"
rm -f "$V/keyfile"
expect_status 0 env PQVAULT_PASSPHRASE="pw3$nl" "$PQV" -v "$V" recover --kdf "$KDF" \
    --recovery-file "$T/code"
expect_status 0 pqn --passphrase-command "echo pw3" list
expect_status 1 pqn --passphrase-file "$T/empty-line" recover --kdf "$KDF" \
    --recovery-file "$T/code"
expect_stderr_contains "empty passphrase refused"

# ---- empty passphrases: refused, and before any Argon2id ----
# Under an address-space limit of 32 MiB, Argon2id with the default cost
# (64 MiB) cannot even allocate its memory: a command that reached it
# fails with "cannot allocate"; one refused before says "empty passphrase".
V2=$T/v2
expect_status 0 "$PQV" -v "$V2" --passphrase-file "$T/pw-lf" -q init
LIM=32768
small() { sh -c 'ulimit -v "$1" && shift && exec "$@"' sh "$LIM" "$@"; }
if [ "${PQV_SAN:-0}" = 1 ]; then
    echo "# SKIP - address-space limits: not meaningful under ASan"
else
    # control: a non-empty wrong passphrase does reach Argon2id
    expect_status 1 small "$PQV" -v "$V2" --passphrase-file "$T/pw2" list
    expect_stderr_contains "cannot allocate"
    for src in "--passphrase-file $T/empty" "--passphrase-file $T/empty-line" \
        "--passphrase-command true" "--passphrase-command echo"; do
        # shellcheck disable=SC2086
        expect_status 1 small "$PQV" -v "$V2" $src list
        expect_stderr_contains "empty passphrase refused"
        expect_one_error_line
    done
    expect_status 1 small env PQVAULT_PASSPHRASE="" "$PQV" -v "$V2" list
    expect_stderr_contains "empty passphrase refused"
    expect_status 1 small env PQVAULT_PASSPHRASE="$nl" "$PQV" -v "$V2" list
    expect_stderr_contains "empty passphrase refused"
    # new passphrases: init (default cost), passwd
    expect_status 1 small "$PQV" -v "$T/v3" --passphrase-file "$T/empty-line" init
    expect_stderr_contains "empty passphrase refused"
    check_ok "init with an empty passphrase created nothing" test ! -e "$T/v3/config"
    expect_status 1 small env PQVAULT_PASSPHRASE="$cr$nl" "$PQV" -v "$T/v3" init
    expect_stderr_contains "empty passphrase refused"
fi
expect_status 1 env PQVAULT_NEW_PASSPHRASE="$nl" "$PQV" -v "$V2" --passphrase-file "$T/pw-lf" \
    passwd --kdf "$KDF"
expect_stderr_contains "empty passphrase refused"
expect_status 0 "$PQV" -v "$V2" --passphrase-file "$T/pw-lf" list

finish
