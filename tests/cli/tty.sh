# tests/cli/tty.sh: the terminal: passphrase prompts without echo (asked
# twice when setting one), retries, the terminal restored after SIGINT at a
# prompt, and the progress bar (only on a terminal, not with -q).  Runs the
# program on a pseudo-terminal with a small Python driver.
. "$(dirname "$0")/lib.sh"

pty() { python3 "$(dirname "$0")/ptydrv.py" "$@"; }
PW='correct horse battery'

# init on the terminal: asked twice; a mismatch is asked again
expect_status 0 pty "New passphrase:=>$PW|Repeat new passphrase:=>typo|New passphrase:=>$PW|Repeat new passphrase:=>$PW" \
    "$PQV" -v "$V" init --kdf "$KDF"
expect_stdout_contains "passphrases do not match"
expect_stdout_contains "shown only once"
check_ok "the passphrase is never echoed" sh -c '! grep -qF "$1" "$2"' sh "$PW" "$OUT"
code=$(grep -Eo '[0-9A-Z]{4}(-[0-9A-Z]{4}){13}' "$OUT" | head -n 1)
check_ok "init on a terminal shows the recovery code" test -n "$code"

printf 'tty data\n' >"$T/f"
expect_status 0 pq add "$T/f" --name f
expect_status 0 pty "Passphrase for $V:=>$PW" "$PQV" -v "$V" get f -o -
expect_stdout_contains "tty data"
check_ok "unlock prompt does not echo" sh -c '! grep -qF "$1" "$2"' sh "$PW" "$OUT"
# up to three attempts on a terminal, then exit 3
expect_status 0 pty "Passphrase for=>bad|Passphrase for=>$PW" "$PQV" -v "$V" list
expect_stdout_contains "wrong passphrase, try again"
expect_status 3 pty "Passphrase for=>a|Passphrase for=>b|Passphrase for=>c" "$PQV" -v "$V" list
expect_stdout_contains "pqvault: list: wrong passphrase"
# the environment source never falls back to the prompt
expect_status 3 pty "" env PQVAULT_PASSPHRASE=bad "$PQV" -v "$V" list
check_ok "no prompt after a wrong non-interactive passphrase" sh -c '! grep -q "Passphrase for" "$1"' sh "$OUT"

# SIGINT at the prompt: the program dies, the terminal has echo again
expect_status 0 pty "Passphrase for=>^C" sh -c 'trap "echo interrupted" INT; "$1" -v "$2" list; stty -a' sh "$PQV" "$V"
expect_stdout_contains "interrupted"
check_ok "echo restored after SIGINT at the prompt" sh -c 'grep -q " echo " "$1" || grep -q "^echo " "$1"' sh "$OUT"

# passwd on a terminal: current, then the new one twice
expect_status 0 pty "Passphrase for=>$PW|New passphrase:=>second|Repeat new passphrase:=>second" \
    "$PQV" -v "$V" passwd --slot 1 --kdf "$KDF"
expect_status 0 env PQVAULT_PASSPHRASE=second "$PQV" -v "$V" list

# recover on a terminal: the code shown as typed (issue 21: it is read off
# paper, not a passphrase), then the new passphrase without echo
rm -f "$V/keyfile"
expect_status 0 pty "Recovery code:=>$code|New passphrase:=>after|Repeat new passphrase:=>after" \
    "$PQV" -v "$V" recover --kdf "$KDF"
check_ok "recovery code echoed" grep -qF "$code" "$OUT"
check_ok "new passphrase not echoed" sh -c '! grep -qF after "$1"' sh "$OUT"
expect_status 0 env PQVAULT_PASSPHRASE=after "$PQV" -v "$V" list
printf 'after\n' >"$PF"

# progress bar: on a terminal, and not with -q
head -c 20000000 /dev/urandom >"$T/big"
expect_status 0 pty "" "$PQV" -v "$V" --passphrase-file "$PF" add "$T/big" --name big
check_ok "add shows a progress bar on a terminal" grep -q '100%' "$OUT"
expect_status 0 pty "" "$PQV" -v "$V" --passphrase-file "$PF" get big -o "$T/big.out"
check_ok "get shows a progress bar on a terminal" grep -q '%.*MiB' "$OUT"
check_ok "get through the terminal session restored the file" same_file "$T/big" "$T/big.out"
expect_status 0 pty "" "$PQV" -v "$V" --passphrase-file "$PF" -q get big -o "$T/big.q"
check_ok "-q: no progress bar" test ! -s "$OUT"
expect_status 0 pq get big -o "$T/big.nt"
check_ok "no progress bar when stderr is not a terminal (the summary line alone)" \
    sh -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "^restored: 1 entry, " "$1"' sh "$ERR"

finish
