# tests/cli/downgrade.sh: a config of format 1 put back beside a vault
# upgraded (issue 17 item 1; the upgrade goes on to format 3 now,
# FORMAT.md section 24).  Format 1 has no chain, no local state and no key
# file history, so a storage attacker who restores the pre-upgrade config
# (and records) would undo every change made since the upgrade, unnoticed.
# Refused (exit 4) when this machine saw the vault as format 2 or 3, and
# whenever segments beyond an upgrade's base lie beside the format-1
# config; a half-finished upgrade (config 1 beside a verifying segment 1,
# FORMAT.md section 17) is still read and finished.
. "$(dirname "$0")/lib.sh"
PQV_T=$PQV_TEST
FX=$(cd "$(dirname "$0")/../fixtures" && pwd)
PF=$FX/v1.pass
S=$XDG_STATE_HOME

cp -r "$FX/v1-aes" "$V"
cp -a "$V" "$T/pre"                                 # format 1, never upgraded
expect_status 0 pq upgrade                          # epoch 1
check_ok "format 1 upgraded to format 3 in one step" grep -qx 'pqvault-config 3' "$V/config"
expect_status 0 pq rm docs/readme.txt               # epoch 2
printf 'new\n' >"$T/newfile.txt"
expect_status 0 pq add "$T/newfile.txt"             # epoch 3
cp -a "$V" "$T/at3"
cp -a "$S" "$T/state3"
# segver N: the version byte of segment N's header (FORMAT.md section 11).
segver() { od -An -tu1 -j4 -N1 "$(printf '%s/segments/%016x' "$V" "$1")" | tr -d ' '; }
check_ok "the upgrade's base is a segment of version 2, the later ones of version 3" \
    test "$(segver 1) $(segver 2) $(segver 3)" = "2 3 3"
STATEFILE=$(find "$S" -type f ! -name '*.lock')
check_ok "the local state records the vault's format (3)" grep -qx 'format 3' "$STATEFILE"

serve() { rm -rf "$V" && cp -a "$1" "$V"; }
known() { rm -rf "$S" && cp -a "$T/state3" "$S"; }
fresh() { rm -rf "$S"; }
# downgraded: the pre-upgrade config and records put back beside epoch 3.
downgraded() {
    serve "$T/at3"
    cp "$T/pre/config" "$V/config"
    cp -r "$T/pre/records" "$V/records"
}
seg() { printf '%s/segments/%016x' "$V" "$1"; }

# ---- the issue's case: config and records put back, local state at 3 ----
downgraded; known
expect_status 4 pq list
expect_stderr_contains "downgrade: the config says format 1, but the vault holds format-2 segments up to epoch 3"
expect_one_error_line
check_ok "list printed nothing of the downgraded state" [ ! -s "$OUT" ]
expect_status 4 pq get docs/readme.txt -o -
expect_empty_stdout
expect_status 4 pq get docs -o "$T/out-down"
check_ok "nothing restored from the downgraded state" [ ! -e "$T/out-down" ]
printf 'other\n' >"$T/other"
expect_status 4 pq add "$T/other"
check_ok "add wrote no epoch on the downgraded vault" [ ! -e "$(seg 4)" ]
check_ok "add left the format-1 config as it was" cmp -s "$V/config" "$T/pre/config"
expect_status 4 pq rm docs/empty
check_ok "rm left the records" [ -n "$(find "$V/records" -type f)" ]
expect_status 4 pq upgrade
check_ok "upgrade did not take the downgraded config for a half-finished upgrade" \
    cmp -s "$V/config" "$T/pre/config"
expect_status 4 pq check
expect_stderr_contains "downgrade"
expect_status 4 pq gc
expect_status 4 pq accept
expect_stderr_contains "cannot accept a config of format 1 beside format-2 segments up to epoch 3"

# ---- the same without local state: the segments tell ----
downgraded; fresh
expect_status 4 pq list
expect_stderr_contains "downgrade: the config says format 1, but the vault holds format-2 segments up to epoch 3"
# ... also with the segments after the base deleted but the local state kept.
downgraded; known
rm "$(seg 2)" "$(seg 3)"
expect_status 4 pq list
expect_stderr_contains "downgrade: the config says format 1, but this vault was seen here as format 3 at epoch 3"

# ---- the whole pre-upgrade copy served (no segment at all) ----
serve "$T/pre"; known
expect_status 4 pq list
expect_stderr_contains "downgrade: the config says format 1, but this vault was seen here as format 3 at epoch 3"
expect_status 4 pq get docs/readme.txt -o -
expect_empty_stdout
expect_status 4 pq rm docs/empty
expect_status 4 pq check
# Without local state nothing can tell (first contact, as with any older copy).
fresh
expect_status 0 pq list
expect_stdout_contains "docs/readme.txt"

# ---- a local state file of version 1 (pqvault 0.2.0) still counts ----
# Rewritten by hand from the version-2 file: same epoch and chain value,
# MAC'd with key("state") derived from the fixture's recovery code.
known
python3 - "$FX/v1-aes.recovery" "$STATEFILE" <<'EOF'
import hashlib, hmac, sys
# FORMAT.md sections 5 and 2: the seed from the code, key("state") from it.
A = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
v = 0
for ch in open(sys.argv[1]).read().upper():
    if ch in A:
        v = (v << 5) | A.index(ch)
seed = v.to_bytes(35, "big")[:32]
h = lambda k, m: hmac.new(k, m, hashlib.sha256).digest()
prk = h(h(b"pqvault/v1/identity", seed), b"\x01")       # HKDF(seed, salt, "", 32)
key = h(prk, b"key/state\x01")                          # HKDF-Expand(PRK, "key/state", 32)
lines = dict(l.split(" ", 1) for l in open(sys.argv[2]).read().splitlines())
text = "pqvault-state 1\nvault %s\nepoch %s\nchain %s\n" % (lines["vault"], lines["epoch"], lines["chain"])
mac = hmac.new(key, text.encode(), hashlib.sha256).hexdigest()
open(sys.argv[2], "w").write(text + "mac %s\n" % mac)
EOF
check_ok "the state file is now of version 1" grep -qx 'pqvault-state 1' "$STATEFILE"
serve "$T/at3"
expect_status 0 pq list
expect_stdout_contains "newfile.txt"
serve "$T/pre"
expect_status 4 pq list
expect_stderr_contains "seen here as format 2 at epoch 3"
serve "$T/at3"
expect_status 0 pq add "$T/other"
check_ok "the next record is of version 2 again (format 3)" \
    sh -c "grep -qx 'pqvault-state 2' '$STATEFILE' && grep -qx 'format 3' '$STATEFILE'"

# ---- accept: the owner restored the format-1 copy on purpose ----
serve "$T/pre"; known
expect_status 0 pq accept
expect_stdout_contains "accepted the format-1 vault as it is (epoch 3 of format 3 was known here"
expect_status 0 pq list
expect_stdout_contains "docs/readme.txt"
expect_status 0 pq upgrade
expect_status 0 pq list

# ---- a half-finished upgrade is read and finished ----
# The config's rename fails (rename:3: after segment 1 and the local state).
serve "$T/pre"; fresh
expect_status 1 env PQVAULT_TEST_FAULT=rename:3:EIO "$PQV_T" -v "$V" --passphrase-file "$PF" upgrade
check_ok "half upgraded: config 1 beside segment 1" \
    sh -c "head -n 1 '$V/config' | grep -qx 'pqvault-config 1' && [ -e '$(seg 1)' ]"
cp -a "$V" "$T/half"
cp -a "$S" "$T/state-half"
expect_status 0 pq list
expect_stdout_contains "docs/readme.txt"
expect_status 0 pq get docs/readme.txt -o -
expect_stdout_contains "pqvault format 1 fixture"
expect_status 0 pq check
# rm finishes the upgrade first (records removed beside the base would
# come back with it), then removes.
expect_status 0 pq rm docs/readme.txt
check_ok "rm finished the upgrade (to format 3)" grep -qx 'pqvault-config 3' "$V/config"
expect_status 0 pq list
if grep -qx 'docs/readme.txt' "$OUT"; then fail "rm on a half upgrade: readme.txt still listed"; else
    ok "rm on a half upgrade: readme.txt removed"; fi
# add finishes it too.
serve "$T/half"; rm -rf "$S" && cp -a "$T/state-half" "$S"
expect_status 0 pq add "$T/other"
check_ok "add finished the upgrade (to format 3)" grep -qx 'pqvault-config 3' "$V/config"
expect_status 0 pq check
# Without local state (the state's own write failed, rename:2, which is no
# failure of the command, then the config's, rename:3), or read by another
# machine: still a half upgrade.
serve "$T/pre"; fresh
expect_status 1 env PQVAULT_TEST_FAULT=rename:2+:EIO "$PQV_T" -v "$V" --passphrase-file "$PF" upgrade
expect_stderr_contains "warning: cannot keep the local state"
check_ok "no local state after rename:2" [ -z "$(find "$S" -type f ! -name '*.lock' 2>/dev/null)" ]
check_ok "half upgraded: config 1 beside segment 1" \
    sh -c "head -n 1 '$V/config' | grep -qx 'pqvault-config 1' && [ -e '$(seg 1)' ]"
expect_status 0 pq list
expect_status 0 pq upgrade
expect_stdout_contains "upgraded to format 3"
# A half upgrade served where later epochs were seen: a rollback to it.
serve "$T/half"; known
expect_status 4 pq list
expect_stderr_contains "downgrade"
# Another upgrade's segment 1 than the one seen here: a fork.
serve "$T/half"; known
cp "$T/at3/segments/0000000000000001" "$T/seg1-at3"
rm -rf "$S" && cp -a "$T/state-half" "$S"
cp "$T/seg1-at3" "$(seg 1)"
expect_status 4 pq list
expect_stderr_contains "fork: the vault's epoch 1 is not the one seen here before"
# accept takes the half upgrade as it is.
expect_status 0 pq accept
expect_stdout_contains "accepted epoch 1 as current (a half-finished upgrade"
expect_status 0 pq list
# A segment 1 that is not an upgrade's base beside a format-1 config.
serve "$T/half"; fresh
flip_byte "$(seg 1)" 80
expect_status 4 pq list

# ---- format 2 -> 3 (FORMAT.md section 24) ----
# A format-2 vault becomes format 3 by its config alone; its segments
# from then on are of version 3, and the local state records format 3.
# A config of format 2 put back afterwards is a downgrade: refused (exit
# 4) by the version-3 segments beside it, with or without local state, and
# by the local state when the whole pre-upgrade copy is served.
PF=$FX/v2.pass
rm -rf "$V" "$S"
cp -r "$FX/v2-aes" "$V"
cp -a "$V" "$T/pre2"                                # format 2 at epoch 5
expect_status 0 pq list
STATEFILE=$(find "$S" -type f ! -name '*.lock')
check_ok "seen here as format 2 at epoch 5" \
    sh -c "grep -qx 'format 2' '$STATEFILE' && grep -qx 'epoch 5' '$STATEFILE'"
cp -a "$S" "$T/state2"
expect_status 0 pq upgrade
expect_stdout_contains "upgraded to format 3"
check_ok "upgrade 2 -> 3: the config says format 3" grep -qx 'pqvault-config 3' "$V/config"
check_ok "upgrade 2 -> 3: by the config alone (no segment written)" [ ! -e "$(seg 6)" ]
expect_status 0 pq upgrade
expect_stdout_contains "already format 3"
expect_status 0 pq add "$T/newfile.txt"             # epoch 6
check_ok "the first commit after the upgrade is a segment of version 3" test "$(segver 6)" = 3
check_ok "the local state records format 3 at epoch 6" \
    sh -c "grep -qx 'format 3' '$STATEFILE' && grep -qx 'epoch 6' '$STATEFILE'"
cp -a "$V" "$T/at6"
cp -a "$S" "$T/state6"
known6() { rm -rf "$S" && cp -a "$T/state6" "$S"; }
# downgraded2: the format-2 config put back beside epoch 6.
downgraded2() { serve "$T/at6" && cp "$T/pre2/config" "$V/config"; }
# unchanged2 WHAT: the vault is still as downgraded2 left it (config of
# format 2, no epoch 7).
unchanged2() {
    check_ok "$1 left the format-2 config as it was, wrote no epoch" \
        sh -c "cmp -s '$V/config' '$T/pre2/config' && [ ! -e '$(seg 7)' ]"
}
F3="segments/0000000000000006: a segment of format 3 in a vault of format 2"

# The config put back, this machine having seen format 3: every keyed
# command refused, nothing rewritten (each on the vault as put back).
downgraded2; known6
expect_status 4 pq list
expect_stderr_contains "$F3"
expect_one_error_line
check_ok "list printed nothing of the downgraded state" [ ! -s "$OUT" ]
expect_status 4 pq get newfile.txt -o -
expect_empty_stdout
expect_status 4 pq check
expect_stderr_contains "$F3"
for cmd in add rm upgrade gc accept; do
    downgraded2; known6
    case $cmd in
    add) expect_status 4 pq add "$T/other" ;;
    rm) expect_status 4 pq rm docs/empty ;;
    *) expect_status 4 pq $cmd ;;
    esac
    expect_stderr_contains "$F3"
    unchanged2 "$cmd"
done
# Without local state: the segment of version 3 tells, with the key or
# without (check --no-key compares the headers, FORMAT.md section 20).
downgraded2; fresh
expect_status 4 pq list
expect_stderr_contains "$F3"
for cmd in add upgrade; do
    downgraded2; fresh
    case $cmd in
    add) expect_status 4 pq add "$T/other" ;;
    *) expect_status 4 pq $cmd ;;
    esac
    expect_stderr_contains "$F3"
    unchanged2 "$cmd without local state"
done
downgraded2; fresh
expect_status 4 pqn check --no-key
expect_stderr_contains "$F3"
expect_stdout_contains "damaged: 1"

# The whole pre-upgrade copy served (all of format 2, at epoch 5): the
# local state tells.
D2="downgrade: the config says format 2, but this vault was seen here as format 3 at epoch 6"
serve "$T/pre2"; known6
expect_status 4 pq list
expect_stderr_contains "$D2"
expect_one_error_line
expect_status 4 pq get newfile.txt -o -
expect_empty_stdout
expect_status 4 pq check
expect_stderr_contains "$D2"
for cmd in add rm upgrade; do
    serve "$T/pre2"; known6
    case $cmd in
    add) expect_status 4 pq add "$T/other" ;;
    rm) expect_status 4 pq rm docs/empty ;;
    *) expect_status 4 pq $cmd ;;
    esac
    expect_stderr_contains "$D2"
    check_ok "$cmd on the pre-upgrade copy: the config left as it was, no epoch" \
        sh -c "cmp -s '$V/config' '$T/pre2/config' && [ ! -e '$(seg 6)' ]"
done
# ... also with the version-3 segment deleted beside the put-back config.
downgraded2; known6
rm "$(seg 6)"
expect_status 4 pq list
expect_stderr_contains "$D2"
# Without local state nothing can tell (first contact with an older copy).
serve "$T/pre2"; fresh
expect_status 0 pq list
expect_stdout_contains "docs/readme.txt"
# accept: the owner put the format-2 copy back on purpose; the next
# writing command upgrades it again.
serve "$T/pre2"; known6
expect_status 0 pq accept
expect_stdout_contains "accepted epoch 5 as current (epoch 6 was known here)"
check_ok "accept records format 2 at epoch 5" \
    sh -c "grep -qx 'format 2' '$STATEFILE' && grep -qx 'epoch 5' '$STATEFILE'"
expect_status 0 pq list
expect_status 0 pq add "$T/other"
check_ok "the add after accept upgraded again" grep -qx 'pqvault-config 3' "$V/config"
check_ok "... and the local state records format 3 at epoch 6" \
    sh -c "grep -qx 'format 3' '$STATEFILE' && grep -qx 'epoch 6' '$STATEFILE'"
expect_status 0 pq check
# A writer that read the format-2 config, then waited for the lock (--wait)
# while another upgraded the vault and committed a segment of version 3:
# it reads the config again once it holds the lock (no false "segment of
# format 3 in a vault of format 2").  It stops itself (test build) just
# before opening the lock file, and goes on after the other is done.
for cmd in add rm gc; do
    serve "$T/pre2"; fresh
    case $cmd in
    add) set -- add "$T/newfile.txt" ;;
    rm) set -- rm docs/empty ;;
    gc) set -- gc ;;
    esac
    PQVAULT_TEST_STOP_PATH=lock PQVAULT_TEST_STOP_AT=open:1 "$PQV_TEST" -v "$V" \
        --passphrase-file "$PF" --wait "$@" >"$T/waiter.out" 2>"$T/waiter.err" &
    waiter=$!
    BG_PIDS=$waiter
    n=0
    while [ "$(sed 's/.*) //' "/proc/$waiter/stat" 2>/dev/null | cut -d' ' -f1)" != T ] &&
        [ $n -lt 600 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    check_ok "$cmd --wait stopped before the lock" test $n -lt 600
    expect_status 0 pq add "$T/other"
    check_ok "the other writer upgraded the vault (config 3, segment 6 of version 3)" \
        sh -c "grep -qx 'pqvault-config 3' '$V/config' && [ \"\$(od -An -tu1 -j4 -N1 '$(seg 6)' | tr -d ' ')\" = 3 ]"
    kill -CONT $waiter
    wait $waiter
    st=$?
    BG_PIDS=
    check_ok "$cmd, which read format 2 before the upgrade, then works on format 3 (exit $st: $(head -n 1 "$T/waiter.err"))" \
        test $st -eq 0
    expect_status 0 pq list
    expect_stdout_contains "other"
    expect_status 0 pq check
done
finish
