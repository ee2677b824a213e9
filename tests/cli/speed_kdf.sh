# tests/cli/speed_kdf.sh: speed's Argon2id table and recommended --kdf,
# init --kdf-time, strict DURATION parsing.  The machine may be loaded: only
# structure and bounds are asserted, never a duration.
. "$(dirname "$0")/lib.sh"

# ---- speed --kdf-only --quick: the table and a recommendation init accepts ----
expect_status 0 "$PQV" speed --kdf-only --quick --kdf-time 100ms
expect_stdout_contains "Argon2id ("
expect_stdout_contains "init's default t=3, m=64 MiB, p=4:"
expect_stdout_contains "m \\ t"
for row in "8 MiB" "16 MiB" "32 MiB"; do
    check_ok "speed --quick: a table row for $row with four cells" \
        grep -Eq "^  $row +([0-9]+|-) +([0-9]+|-) +([0-9]+|-) +([0-9]+|-)\$" "$OUT"
done
expect_stdout_contains "caps: m at most "
expect_stdout_contains "recommended: --kdf t="
check_ok "speed --kdf-only measures no AEAD or KEM" \
    sh -c "! grep -q 'MB/s\|FrodoKEM' '$OUT'"
rec=$(sed -n 's/^recommended: --kdf \([^ ]*\) (about .* here for a target of 100 ms.*)$/\1/p' "$OUT")
check_ok "speed: one recommended --kdf value ('$rec')" test -n "$rec"
t=$(echo "$rec" | sed -n 's/^t=\([0-9]*\),m=\([0-9]*\),p=4$/\1/p')
m=$(echo "$rec" | sed -n 's/^t=\([0-9]*\),m=\([0-9]*\),p=4$/\2/p')
check_ok "speed: the recommendation is t=N,m=KIB,p=4 within the default limit" \
    test -n "$t" -a -n "$m" -a "${t:-0}" -ge 1 -a "${t:-0}" -le 16 -a "${m:-0}" -ge 32 \
    -a "${m:-0}" -le 1048576
expect_status 0 pq -q init --kdf "$rec"
check_ok "init accepts speed's recommendation" test -f "$V/config"
rm -rf "$V"

# ---- the caps: a --kdf-limit bounds the table and the recommendation ----
expect_status 0 "$PQV" --kdf-limit m=16384,t=2 speed --kdf-only --quick --kdf-time 2s
expect_stdout_contains "caps: m at most 16 MiB (the --kdf-limit"
expect_stdout_contains "t at most 2"
expect_stdout_contains "(-: not measured, "
check_ok "speed: no table row above the m cap" sh -c "! grep -q '^  32 MiB' '$OUT'"
rec=$(sed -n 's/^recommended: --kdf \([^ ]*\) .*/\1/p' "$OUT")
t=$(echo "$rec" | sed -n 's/^t=\([0-9]*\),m=\([0-9]*\),p=4$/\1/p')
m=$(echo "$rec" | sed -n 's/^t=\([0-9]*\),m=\([0-9]*\),p=4$/\2/p')
check_ok "speed: the recommendation ('$rec') stays within m=16384,t=2" \
    test -n "$t" -a -n "$m" -a "${t:-0}" -ge 1 -a "${t:-0}" -le 2 -a "${m:-0}" -ge 32 \
    -a "${m:-0}" -le 16384

# ---- the whole speed output, quick: AEAD, KEM, then Argon2id ----
expect_status 0 "$PQV" speed --quick --kdf-time 100ms
for w in AES-256-GCM FrodoKEM-976-AES "Argon2id (" "recommended: --kdf t="; do
    expect_stdout_contains "$w"
done
check_ok "speed --quick marks exactly one AEAD and one KEM" \
    test "$(grep -c 'selected in auto mode' "$OUT")" -eq 2
expect_status 0 "$PQV" help speed
expect_stdout_contains "--kdf-time DURATION"
expect_stdout_contains "--quick"

# ---- init --kdf-time: a vault that opens, info shows the pick ----
expect_status 0 pq init --kdf-time 100ms
expect_stderr_contains "kdf: Argon2id t="
check_ok "init --kdf-time says 'kdf: Argon2id t=N, m=N MiB, p=4 (about ... here)'" \
    grep -Eq '^kdf: Argon2id t=[0-9]+, m=[0-9]+ [KM]iB, p=4 \(about [0-9.]+ m?s here\)$' "$ERR"
t=$(sed -n 's/^kdf: Argon2id t=\([0-9]*\), m=.*/\1/p' "$ERR")
mm=$(sed -n 's/^kdf: Argon2id t=[0-9]*, m=\([0-9]*\) MiB, p=4 .*/\1/p' "$ERR")
check_ok "init --kdf-time: t within 1..16 and m a whole MiB within 1 GiB" \
    test -n "$t" -a -n "$mm" -a "${t:-0}" -ge 1 -a "${t:-0}" -le 16 -a "${mm:-0}" -ge 1 \
    -a "${mm:-0}" -le 1024
printf 'kdf-time content\n' >"$T/f.txt"
expect_status 0 pq -q add "$T/f.txt"
expect_status 0 pq -q get f.txt -o "$T/back.txt"
check_ok "init --kdf-time: add/get round trip" same_file "$T/f.txt" "$T/back.txt"
expect_status 0 pqn info
expect_stdout_contains "slot 0:          Argon2id t=$t, m=$((${mm:-0} * 1024)) KiB, p=4"
expect_status 1 pq -q init --kdf-time 0.1s
expect_stderr_contains "already"
rm -rf "$V"
expect_status 0 pq -q init --kdf-time=100.0ms
check_ok "init -q --kdf-time says nothing" test ! -s "$ERR"
expect_status 0 pq -q list
rm -rf "$V"

# ---- passwd and recover --kdf-time (issue 21), as init's ----
init_vault || finish
printf 'second slot passphrase\n' >"$T/p1"
expect_status 0 pq passwd --slot 1 --kdf-time 100ms --new-passphrase-file "$T/p1"
check_ok "passwd --kdf-time says 'kdf: Argon2id t=N, m=N MiB, p=4 (about ... here)'" \
    grep -Eq '^kdf: Argon2id t=[0-9]+, m=[0-9]+ [KM]iB, p=4 \(about [0-9.]+ m?s here\)$' "$ERR"
t=$(sed -n 's/^kdf: Argon2id t=\([0-9]*\), m=.*/\1/p' "$ERR")
mm=$(sed -n 's/^kdf: Argon2id t=[0-9]*, m=\([0-9]*\) MiB, p=4 .*/\1/p' "$ERR")
expect_status 0 pqn info
expect_stdout_contains "slot 1:          Argon2id t=$t, m=$((${mm:-0} * 1024)) KiB, p=4"
expect_status 0 pqn --passphrase-file "$T/p1" list
expect_status 2 pq passwd --slot 1 --kdf "$KDF" --kdf-time 1s
expect_stderr_contains "only one of --kdf and --kdf-time may be given"
expect_status 2 pq passwd --slot 1 --clear --kdf-time 1s
expect_stderr_contains "--clear takes no --kdf, --kdf-time or new passphrase"
expect_status 2 pq passwd --kdf-time 5
expect_stderr_contains "--kdf-time: invalid duration '5'"
rm -f "$V/keyfile"
expect_status 0 pq recover --kdf-time 100ms --recovery-file "$T/recovery"
check_ok "recover --kdf-time says what it picked" grep -Eq '^kdf: Argon2id t=[0-9]+, m=' "$ERR"
t=$(sed -n 's/^kdf: Argon2id t=\([0-9]*\), m=.*/\1/p' "$ERR")
mm=$(sed -n 's/^kdf: Argon2id t=[0-9]*, m=\([0-9]*\) MiB, p=4 .*/\1/p' "$ERR")
expect_status 0 pqn info
expect_stdout_contains "slot 0:          Argon2id t=$t, m=$((${mm:-0} * 1024)) KiB, p=4"
expect_status 0 pq list
# a bad code is said before any calibration
rm -f "$V/keyfile"
printf 'not a code\n' >"$T/badcode"
expect_status 3 pq recover --kdf-time 100ms --recovery-file "$T/badcode"
check_ok "recover --kdf-time with a bad code calibrates nothing" sh -c '! grep -q "^kdf:" "$1"' sh "$ERR"
expect_status 2 pq recover --kdf-time 1s --kdf "$KDF" --recovery-file "$T/recovery"
expect_stderr_contains "only one of --kdf and --kdf-time may be given"
rm -rf "$V"

# ---- speed --quick: shorter measurements, the same lines ----
expect_status 0 "$PQV" speed --quick --kdf-time 100ms
expect_stdout_contains "AEAD (STREAM, 64 KiB segments, 4 MiB in memory, median of 3):"
expect_stdout_contains "KEM (median of 3):"
expect_stdout_contains "p=4 lanes in as many threads, median of 1, ms):"
check_ok "speed --quick: every line of the full run" sh -c '
    for w in "AES-256-GCM " "ChaCha20-Poly1305 " "FrodoKEM-640-AES " "FrodoKEM-1344-SHAKE " \
        "init'"'"'s default" "m \\ t" "caps: m at most" "recommended: --kdf t="; do
        grep -qF -- "$w" "$1" || exit 1
    done' sh "$OUT"

# ---- usage errors (exit 2), before any work, and no vault made ----
for bad in "" 1 s ms 1.s .5s -1s +1s 1e3ms "1 s" " 1s" "1s " 1S 1sec 1m 1h 1.5.5s 1,5s \
    0x10s 1ms5; do
    expect_status 2 pq init --kdf-time "$bad"
    expect_stderr_contains "--kdf-time: invalid duration '$bad'"
done
for bad in 0s 0ms 99ms 99.999ms 0.0999s 60.001s 61s 60001ms 1000000000s \
    99999999999999999999s 99999999999999999999.5ms; do
    expect_status 2 pq init --kdf-time "$bad"
    expect_stderr_contains "--kdf-time: '$bad' is out of range (100ms to 60s)"
done
expect_status 2 pq init --kdf-time
expect_stderr_contains "needs an argument"
expect_status 2 pq init --kdf "$KDF" --kdf-time 1s
expect_stderr_contains "only one of --kdf and --kdf-time may be given"
expect_status 2 pq init --kdf-time 1s --kdf "$KDF"
expect_stderr_contains "only one of --kdf and --kdf-time may be given"
expect_status 2 "$PQV" speed --kdf-time 2
expect_stderr_contains "--kdf-time: invalid duration '2'"
expect_status 2 "$PQV" speed --kdf-time 70s
expect_stderr_contains "out of range"
expect_status 2 "$PQV" speed --quick extra
check_ok "usage errors create no vault" test ! -e "$V"

finish
