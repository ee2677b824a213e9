# tests/cli/environ.sh: secrets in the environment and on disk (issue 17
# item 5).  (a) A --passphrase-command runs without pqvault's secrets and
# the S3 credentials in its environment (the rest of the environment
# stays).  (b) The recovery code written by "pqvault init > FILE" is not
# left readable by others: a file of our own is made mode 0600 (under
# umask 022 the shell made it 0644), a file of another user or one that
# cannot be made private is refused before anything is created; pipes and
# /dev/null are as before.
. "$(dirname "$0")/lib.sh"

init_vault || finish

# ---- (a) the passphrase command's environment ----
expect_status 0 env AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=aws-secret-value \
    AWS_SESSION_TOKEN=aws-session-value AWS_SECURITY_TOKEN=aws-legacy-value \
    PQVAULT_PASSPHRASE=env-pass PQVAULT_NEW_PASSPHRASE=env-new PQVAULT_RECOVERY_CODE=env-code \
    PQV_KEEP_ME=kept AWS_PROFILE=someprofile \
    "$PQV" -v "$V" --passphrase-command "env >'$T/child.env'; cat '$PF'" list
for var in AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_SECURITY_TOKEN \
    PQVAULT_PASSPHRASE PQVAULT_NEW_PASSPHRASE PQVAULT_RECOVERY_CODE; do
    if grep -q "^$var=" "$T/child.env"; then
        fail "the passphrase command saw $var"
    else
        ok "the passphrase command did not see $var"
    fi
done
check_ok "no secret value reached the passphrase command" \
    sh -c '! grep -qE "aws-secret-value|aws-session-value|aws-legacy-value|env-pass|env-new|env-code" "$1"' sh "$T/child.env"
check_ok "the rest of the environment reached it (PQV_KEEP_ME, AWS_PROFILE, PATH)" \
    sh -c 'grep -qx PQV_KEEP_ME=kept "$1" && grep -qx AWS_PROFILE=someprofile "$1" && grep -q "^PATH=" "$1"' \
    sh "$T/child.env"
# passwd's old passphrase by command, the new one from the environment.
printf 'another passphrase\n' >"$T/new"
expect_status 0 env PQVAULT_NEW_PASSPHRASE="another passphrase" AWS_SECRET_ACCESS_KEY=aws-secret-value \
    "$PQV" -v "$V" --passphrase-command "env >'$T/child2.env'; cat '$PF'" passwd --kdf "$KDF"
check_ok "passwd's passphrase command saw neither the new passphrase nor the S3 secret" \
    sh -c '! grep -qE "^(PQVAULT_NEW_PASSPHRASE|AWS_SECRET_ACCESS_KEY)=" "$1"' sh "$T/child2.env"
PF=$T/new

# ---- (b) the recovery code's file ----
V=$T/v2
LAST="umask 022; pqvault init > FILE"
(umask 022 && exec "$PQV" -v "$V" --passphrase-file "$PF" -q init --kdf "$KDF") >"$T/code.txt" 2>"$ERR"
check_ok "$LAST: exit 0" [ $? -eq 0 ]
check_ok "the recovery code's file is mode 600 ($(stat -c %a "$T/code.txt"))" \
    [ "$(stat -c %a "$T/code.txt")" = 600 ]
check_ok "the file holds the recovery code" grep -qE '^([0-9A-Z]{4}-){13}[0-9A-Z]{4}$' "$T/code.txt"
# Appending to a file of our own, mode 0664: made 0600 too.
V=$T/v3
: >"$T/codes.txt"
chmod 0664 "$T/codes.txt"
"$PQV" -v "$V" --passphrase-file "$PF" -q init --kdf "$KDF" >>"$T/codes.txt" 2>"$ERR"
st=$?
check_ok "appending: exit 0 ($st), mode 600 ($(stat -c %a "$T/codes.txt"))" \
    test "$st" -eq 0 -a "$(stat -c %a "$T/codes.txt")" = 600
# A pipe and /dev/null: as before.
V=$T/v4
"$PQV" -v "$V" --passphrase-file "$PF" -q init --kdf "$KDF" 2>"$ERR" | cat >"$T/piped.txt"
check_ok "init into a pipe works" grep -qE '^([0-9A-Z]{4}-){13}[0-9A-Z]{4}$' "$T/piped.txt"
V=$T/v5
expect_status 0 sh -c '"$1" -v "$2" --passphrase-file "$3" -q init --kdf "$4" >/dev/null' sh \
    "$PQV" "$V" "$PF" "$KDF"
check_ok "/dev/null is still a character device" [ -c /dev/null ]
# Another user's file (as root): refused, nothing created.
if [ "$(id -u)" -eq 0 ]; then
    V=$T/v6
    : >"$T/theirs.txt"
    chown 65534:65534 "$T/theirs.txt"
    chmod 0600 "$T/theirs.txt"
    LAST="init > a file of another user"
    "$PQV" -v "$V" --passphrase-file "$PF" -q init --kdf "$KDF" >"$T/theirs.txt" 2>"$ERR"
    check_ok "$LAST: exit 1" [ $? -eq 1 ]
    expect_stderr_contains "standard output is a file of another user (uid 65534)"
    expect_one_error_line
    check_ok "refused before anything was created" test ! -e "$V" -a ! -s "$T/theirs.txt"
else
    echo "# SKIP - a file of another user needs root"
fi
finish
