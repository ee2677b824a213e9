# tests/cli/pass.sh: passphrase sources, wrong passphrases (exit 3),
# no source (exit 1), passwd on both slots, recover, default Argon2 cost.
. "$(dirname "$0")/lib.sh"

init_vault || finish
code=$(cat "$T/recovery")
printf 'data\n' >"$T/f"
expect_status 0 pq add "$T/f" --name f

printf 'wrong passphrase\n' >"$T/wrong"
printf 'correct horse battery\r\n' >"$T/crlf"
printf 'correct horse battery' >"$T/noeol"

# ---- each source, right and wrong ----
expect_status 0 pqn --passphrase-file "$T/crlf" list
expect_status 0 pqn --passphrase-file "$T/noeol" list
expect_status 3 pqn --passphrase-file "$T/wrong" list
expect_stderr_contains "pqvault: list: wrong passphrase"
expect_one_error_line
expect_status 1 pqn --passphrase-file "$T/missing" list
expect_stderr_contains "$T/missing"

expect_status 0 sh -c 'exec "$1" -v "$2" --passphrase-fd 3 list 3<"$3"' sh "$PQV" "$V" "$PF"
expect_status 3 sh -c 'exec "$1" -v "$2" --passphrase-fd 3 list 3<"$3"' sh "$PQV" "$V" "$T/wrong"
expect_stderr_contains "wrong passphrase"
expect_status 0 sh -c 'printf "correct horse battery\nextra\n" | "$1" -v "$2" --passphrase-fd 0 list' sh "$PQV" "$V"
expect_status 1 pqn --passphrase-fd 9 list
expect_stderr_contains "descriptor 9"

expect_status 0 pqn --passphrase-command "cat '$PF'" list
expect_status 0 pqn --passphrase-command "printf 'correct horse battery\nsecond line\n'" list
expect_status 3 pqn --passphrase-command "echo nope" list
expect_stderr_contains "wrong passphrase"
expect_status 1 pqn --passphrase-command "echo correct horse battery; exit 7" list
expect_stderr_contains "passphrase command: exited with status 7"

expect_status 0 env PQVAULT_PASSPHRASE="correct horse battery" "$PQV" -v "$V" list
expect_status 3 env PQVAULT_PASSPHRASE="nope" "$PQV" -v "$V" list
expect_stderr_contains "wrong passphrase"
# A passphrase command never sees the secret environment variables.
expect_status 3 env PQVAULT_PASSPHRASE="x" "$PQV" -v "$V" \
    --passphrase-command 'test -z "${PQVAULT_PASSPHRASE+set}" || exit 9; echo wrong' list
expect_status 1 notty "$PQV" -v "$V" list
expect_stderr_contains "no passphrase source: use --passphrase-file, --passphrase-fd, --passphrase-command or PQVAULT_PASSPHRASE"
expect_one_error_line

# a wrong passphrase gives 3 for every command that unlocks
for c in "get f -o -" "add $T/f --name g" "rm f" "check" "gc" "passwd" "list"; do
    # shellcheck disable=SC2086
    expect_status 3 pqn --passphrase-file "$T/wrong" $c
done
# info with a passphrase source unlocks to verify the config (info_verify.sh)
expect_status 3 pqn --passphrase-file "$T/wrong" info
expect_status 0 pqn info

# ---- passwd ----
printf 'second person\n' >"$T/p1"
expect_status 0 pq passwd --slot 1 --kdf "$KDF" --new-passphrase-file "$T/p1"
expect_status 0 pqn --passphrase-file "$T/p1" list
expect_stdout_contains "f"
expect_status 0 pq list
expect_status 0 pqn info
expect_stdout_contains "slot 1:          Argon2id t=1, m=256 KiB, p=1"
# change slot 0 with the new passphrase from an fd
printf 'new owner pass\n' >"$T/p0"
expect_status 0 sh -c 'exec "$1" -v "$2" --passphrase-file "$3" passwd --kdf "$4" --new-passphrase-fd 4 4<"$5"' \
    sh "$PQV" "$V" "$PF" "$KDF" "$T/p0"
expect_status 3 pq list
expect_status 0 pqn --passphrase-file "$T/p0" list
expect_status 0 pqn --passphrase-file "$T/p1" list
# new passphrase from the environment; slot 1 unlocks and changes itself
expect_status 0 env PQVAULT_NEW_PASSPHRASE="third" "$PQV" -v "$V" --passphrase-file "$T/p1" passwd --kdf "$KDF"
expect_status 3 pqn --passphrase-file "$T/p1" list
expect_status 0 env PQVAULT_PASSPHRASE=third "$PQV" -v "$V" list
expect_status 1 pqn --passphrase-file "$T/p0" passwd --new-passphrase-file "$T/empty"
: >"$T/emptyfile"
expect_status 1 pqn --passphrase-file "$T/p0" passwd --new-passphrase-file "$T/emptyfile"
expect_stderr_contains "empty passphrase refused"
expect_status 1 notty "$PQV" -v "$V" --passphrase-file "$T/p0" passwd
expect_stderr_contains "no passphrase source"
# --clear: not the slot that unlocked; slot 1 then no longer opens
expect_status 1 pqn --passphrase-file "$T/p0" passwd --slot 0 --clear
expect_status 0 pqn --passphrase-file "$T/p0" passwd --slot 1 --clear
expect_status 3 env PQVAULT_PASSPHRASE=third "$PQV" -v "$V" list
expect_status 0 pqn --passphrase-file "$T/p0" list

# ---- recover ----
rm -f "$V/keyfile"
expect_status 1 pqn --passphrase-file "$T/p0" list
expect_stderr_contains "pqvault: list: "
printf '%s\n' "$code" >"$T/code"
printf 'recovered pass\n' >"$T/pr"
bad=$(printf '%s' "$code" | sed 's/^\(.\)/\1X/' | cut -c1-100)
printf '%s\n' "$code" | tr 'A-Z0-9' 'B-Z0-9A' >"$T/badcode"
expect_status 3 pqn --passphrase-file "$T/pr" recover --kdf "$KDF" --recovery-file "$T/badcode"
expect_stderr_contains "invalid recovery code"
expect_one_error_line
expect_status 3 env PQVAULT_RECOVERY_CODE="$bad" "$PQV" -v "$V" --passphrase-file "$T/pr" recover --kdf "$KDF"
expect_status 1 notty "$PQV" -v "$V" --passphrase-file "$T/pr" recover --kdf "$KDF"
expect_stderr_contains "no recovery code source"
expect_status 0 pqn --passphrase-file "$T/pr" recover --kdf "$KDF" --recovery-file "$T/code"
expect_status 0 pqn --passphrase-file "$T/pr" get f -o -
expect_stdout_contains "data"
# recovery code from the environment, lower case without dashes
lc=$(printf '%s' "$code" | tr 'A-Z' 'a-z' | tr -d -)
expect_status 0 env PQVAULT_RECOVERY_CODE="$lc" "$PQV" -v "$V" --passphrase-file "$PF" recover --kdf "$KDF"
expect_status 0 pq list
expect_status 3 pqn --passphrase-file "$T/pr" list

# ---- key file elsewhere (--keyfile, PQVAULT_KEYFILE) ----
V2=$T/v2
expect_status 0 "$PQV" -v "$V2" --keyfile "$T/kf" --passphrase-file "$PF" -q init --kdf "$KDF"
check_ok "--keyfile puts the key file elsewhere" test -f "$T/kf" -a ! -e "$V2/keyfile"
expect_status 0 env PQVAULT_KEYFILE="$T/kf" "$PQV" -v "$V2" --passphrase-file "$PF" add "$T/f" --name f
expect_status 0 "$PQV" -v "$V2" --keyfile "$T/kf" --passphrase-file "$PF" list
expect_stdout_contains "f"
expect_status 1 "$PQV" -v "$V2" --passphrase-file "$PF" list

# ---- the default Argon2id cost (t=3, m=64 MiB, p=4), once ----
V3=$T/v3
expect_status 0 "$PQV" -v "$V3" --passphrase-file "$PF" -q init
expect_status 0 "$PQV" -v "$V3" info
expect_stdout_contains "slot 0:          Argon2id t=3, m=65536 KiB, p=4"
expect_status 0 "$PQV" -v "$V3" --passphrase-file "$PF" list
expect_status 3 "$PQV" -v "$V3" --passphrase-file "$T/wrong" list

finish
