# tests/cli/kdf_limit.sh: a key file slot's Argon2id cost is chosen by
# whoever wrote the key file and paid before anything is authenticated.
# A reader computes no slot above its limit (default m=1 GiB, t=16):
# a forged key file asking 4 GiB and 64 passes is refused (exit 1) at
# once, without the allocation, naming the slot, its cost and the
# --kdf-limit that would accept it; --kdf-limit raises or lowers the limit;
# init/passwd warn when they set a cost above the default limit.
. "$(dirname "$0")/lib.sh"

init_vault --kem FrodoKEM-640-SHAKE || finish
printf 'data\n' >"$T/f"
expect_status 0 pq add "$T/f" --name f
cp "$V/keyfile" "$T/keyfile.orig"

# forge_cost SLOT T M: set a slot's cost in $V/keyfile and fix the
# checksum, as a forger with write access would.
forge_cost() {
    python3 - "$V/keyfile" "$1" "$2" "$3" <<'EOF'
import hashlib, struct, sys
path, slot, t, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
b = bytearray(open(path, 'rb').read())
off = len(b) - 32 - 2 * 92 + slot * 92   # slots: t, m, lanes (u32 BE), salt, sealed seed
b[off:off + 8] = struct.pack('>II', t, m)
b[-32:] = hashlib.sha256(b[:-32]).digest()
open(path, 'wb').write(b)
EOF
}
# limited CMD...: run CMD with at most 600 MiB of address space: an
# Argon2id of 4 GiB cannot even be allocated there.
limited() { sh -c 'ulimit -v 614400 && exec "$@"' sh "$@"; }

# ---- both slots forged: refused before any Argon2id work ----
forge_cost 0 64 4194304
forge_cost 1 64 4194304
if [ "${PQV_SAN:-0}" = 1 ]; then
    echo "# SKIP - address-space limit: not meaningful under ASan"
    expect_status 1 pq list
else
    expect_status 1 limited "$PQV" -v "$V" --passphrase-file "$PF" list
fi
expect_stderr_contains "slot 0 (Argon2id m=4194304 KiB, t=64) and slot 1 (Argon2id m=4194304 KiB, t=64): cost above the limit (m=1048576 KiB, t=16), not computed"
expect_stderr_contains "$V/keyfile"
expect_stderr_contains "(if you trust this key file: --kdf-limit m=4194304,t=64)"
expect_one_error_line
# every command that unlocks
for c in "get f -o -" "add $T/f --name g" "rm f" "check" "gc" "passwd --kdf $KDF"; do
    # shellcheck disable=SC2086
    expect_status 1 pq $c
    expect_stderr_contains "cost above the limit"
done
# info shows the forged cost (no passphrase: nothing computed)
expect_status 0 pqn info
expect_stdout_contains "slot 0:          Argon2id t=64, m=4194304 KiB, p=1, above the Argon2id limit (unlocking it needs --kdf-limit)"
# a raised limit that is still too low does not compute it either
expect_status 1 pq --kdf-limit m=2097152,t=64 list
expect_stderr_contains "limit (m=2097152 KiB, t=64)"
# no passphrase is asked from a terminal-less session either way
expect_status 1 env PQVAULT_PASSPHRASE=x "$PQV" -v "$V" list
expect_stderr_contains "cost above the limit"

# ---- only slot 1 forged: slot 0 still opens with its passphrase ----
cp "$T/keyfile.orig" "$V/keyfile"
forge_cost 1 64 4194304
expect_status 0 pq get f -o -
expect_stdout_contains "data"
# a passphrase that is not slot 0's might be slot 1's: not "wrong" (3)
printf 'wrong\n' >"$T/wrong"
expect_status 1 pqn --passphrase-file "$T/wrong" list
expect_stderr_contains "wrong passphrase for slot 0; slot 1 (Argon2id m=4194304 KiB, t=64)"
cp "$T/keyfile.orig" "$V/keyfile"

# ---- --kdf-limit around the default cost (t=3, m=64 MiB) ----
V2=$T/v2
expect_status 0 "$PQV" -v "$V2" --passphrase-file "$PF" -q init --kem FrodoKEM-640-SHAKE
expect_status 0 "$PQV" -v "$V2" --passphrase-file "$PF" --kdf-limit m=65536,t=3 list
expect_status 0 "$PQV" -v "$V2" --passphrase-file "$PF" --kdf-limit t=3,m=65536 list
expect_status 1 "$PQV" -v "$V2" --passphrase-file "$PF" --kdf-limit m=32768,t=3 list
expect_stderr_contains "cost above the limit (m=32768 KiB, t=3)"
expect_stderr_contains "--kdf-limit m=65536,t=3"
expect_status 1 "$PQV" -v "$V2" --passphrase-file "$PF" --kdf-limit m=65536,t=2 list
expect_stderr_contains "(m=65536 KiB, t=2)"
# given after the command too, like every global option
expect_status 0 "$PQV" -v "$V2" --passphrase-file "$PF" list --kdf-limit m=65536
for bad in "" "m=" "m=foo" "t=0" "m=7" "m=4194305" "t=65" "x=1" "m=1,m=2" "m=65536," \
    " m=65536" "m=+65536"; do
    expect_status 2 "$PQV" -v "$V2" --passphrase-file "$PF" --kdf-limit "$bad" list
    expect_stderr_contains "--kdf-limit: invalid"
done

# ---- setting a cost above the default limit: allowed, with a warning ----
printf 'second\n' >"$T/p1"
expect_status 0 pq passwd --slot 1 --kdf t=17,m=256,p=1 --new-passphrase-file "$T/p1"
expect_stderr_contains "warning: slot 1's Argon2id cost (m=256 KiB, t=17) is above what readers accept by default (m=1048576 KiB, t=16): unlocking with this passphrase will need --kdf-limit m=1048576,t=17"
expect_status 1 pqn --passphrase-file "$T/p1" list
expect_stderr_contains "--kdf-limit m=1048576,t=17"
expect_status 0 pqn --passphrase-file "$T/p1" --kdf-limit t=17 list
expect_stdout_contains "f"
# slot 0's passphrase does not need it
expect_status 0 pq list
expect_status 0 pq passwd --slot 1 --kdf "$KDF" --new-passphrase-file "$T/p1"
check_ok "no warning for a cost within the limit" sh -c '! grep -q "Argon2id cost" "$1"' sh "$ERR"
expect_status 0 "$PQV" -v "$T/v3" --passphrase-file "$PF" -q init --kdf t=20,m=256,p=1
expect_stderr_contains "warning: slot 0's Argon2id cost (m=256 KiB, t=20)"
expect_status 0 "$PQV" -v "$T/v3" --passphrase-file "$PF" --kdf-limit t=20 list

finish
