# tests/cli/everyday.sh: issue 21 "Everyday use": an option's value that is
# another option, unknown commands with a suggestion, init in a directory
# that is not empty or a file, weak passphrases, --kdf-time for passwd and
# recover, an error object per failing operand in --json.
. "$(dirname "$0")/lib.sh"

init_vault || exit 1
mkdir -p "$T/tree"
printf 'a\n' >"$T/tree/a.txt"
expect_status 0 pq -q add "$T/tree"

# ---- 1. global options after the command ----
# -v takes a value: "-v -o x" used to make "-o" the vault ("no vault at this
# location"); an option where a value belongs is refused, with a hint.
mkdir -p "$T/out"
expect_status 2 pq get tree/a.txt -v -o "$T/out"
expect_stderr_contains "pqvault: get: -v: '-o' is an option, not a vault location"
expect_stderr_contains "--verbose"
expect_stderr_contains "usage: pqvault get"
check_ok "the refused get wrote nothing" test ! -e "$T/out/tree"
expect_status 2 pq get tree/a.txt --vault --force
expect_stderr_contains "--vault: '--force' is an option, not a vault location"
expect_status 2 pq add "$T/tree" --name --force
expect_stderr_contains "--name: '--force' is an option, not its value"
expect_stderr_contains "--name=--force"
expect_status 2 "$PQV" --passphrase-file -q -v "$V" list
expect_stderr_contains "--passphrase-file: '-q' is an option"
# a command taken as the vault ("-v" with its value forgotten)
expect_status 2 "$PQV" -v list
expect_stderr_contains "pqvault: -v: 'list' is a command, not a vault location"
# Global options anywhere, when unambiguous; an attached value may begin
# with '-'.
expect_status 0 "$PQV" get tree/a.txt -o "$T/out" -v "$V" --passphrase-file "$PF" -q
check_ok "global options after the command and its operands" same_file "$T/tree/a.txt" "$T/out/tree/a.txt"
expect_status 0 "$PQV" list --passphrase-file="$PF" --vault="$V"
expect_stdout_contains "tree/a.txt"
expect_status 0 pq get tree/a.txt -o -
expect_stdout_contains "a"
printf 'dash\n' >"$T/dash"
expect_status 0 pq -q add "$T/dash" --name=-dash
expect_status 0 pq list -- -dash
expect_stdout_contains "-dash"

# unknown commands: the nearest known one
expect_status 2 "$PQV" ls
expect_stderr_contains "pqvault: unknown command 'ls' (did you mean 'list'?)"
expect_status 2 "$PQV" restore x
expect_stderr_contains "unknown command 'restore' (did you mean 'get'?)"
expect_status 2 "$PQV" backup x
expect_stderr_contains "unknown command 'backup' (did you mean 'add'?)"
expect_status 2 "$PQV" lsit
expect_stderr_contains "unknown command 'lsit' (did you mean 'list'?)"
expect_status 2 "$PQV" -v "$V" chek
expect_stderr_contains "unknown command 'chek' (did you mean 'check'?)"
expect_status 2 "$PQV" reocver
expect_stderr_contains "(did you mean 'recover'?)"
expect_status 2 "$PQV" help ls
expect_stderr_contains "unknown command 'ls' (did you mean 'list'?)"
expect_status 2 "$PQV" xyzzyplugh
expect_stderr_contains "unknown command 'xyzzyplugh'"
check_ok "no suggestion for a word near nothing" sh -c '! grep -q "did you mean" "$1"' sh "$ERR"

# ---- 2. init where there is no room for a vault ----
# A directory holding other files: refused unless --force (init used to
# mix the vault's files with them).
mkdir -p "$T/full/sub"
printf 'mine\n' >"$T/full/letter.txt"
expect_status 1 "$PQV" -v "$T/full" --passphrase-file "$PF" init --kdf "$KDF"
expect_stderr_contains "pqvault: init: $T/full: the directory is not empty and holds no vault"
expect_stderr_contains "--force"
expect_one_error_line
check_ok "the refused init wrote nothing" test "$(ls -A "$T/full" | sort | tr '\n' ' ')" = "letter.txt sub "
expect_status 0 "$PQV" -v "$T/full" --passphrase-file "$PF" -q init --kdf "$KDF" --force
check_ok "init --force creates the vault among the files" test -f "$T/full/config" -a -f "$T/full/letter.txt"
# An empty directory, or one holding only lost+found (a file system of its
# own), is fine.
mkdir -p "$T/empty" "$T/mnt/lost+found"
expect_status 0 "$PQV" -v "$T/empty" --passphrase-file "$PF" -q init --kdf "$KDF"
expect_status 0 "$PQV" -v "$T/mnt" --passphrase-file "$PF" -q init --kdf "$KDF"
# An existing vault is still "a vault already exists here".
expect_status 1 "$PQV" -v "$T/empty" --passphrase-file "$PF" init --kdf "$KDF"
expect_stderr_contains "a vault already exists here"
expect_status 1 "$PQV" -v "$T/empty" --passphrase-file "$PF" init --kdf "$KDF" --force
expect_stderr_contains "a vault already exists here"
# A vault location that is a regular file: said so, by init and the others.
printf 'not a vault\n' >"$T/afile"
expect_status 1 "$PQV" -v "$T/afile" --passphrase-file "$PF" init --kdf "$KDF"
expect_stderr_contains "pqvault: init: $T/afile: is a file, not a vault directory"
expect_one_error_line
expect_status 1 "$PQV" -v "$T/afile" --passphrase-file "$PF" init --kdf "$KDF" --force
expect_stderr_contains "is a file, not a vault directory"
expect_status 5 "$PQV" -v "$T/afile" --passphrase-file "$PF" list
expect_stderr_contains "pqvault: list: $T/afile: is a file, not a vault directory"
expect_one_error_line
expect_status 5 "$PQV" -v "$T/afile" info
expect_stderr_contains "is a file, not a vault directory"
check_ok "the file is left as it was" test "$(cat "$T/afile")" = "not a vault"

# ---- 4. weak passphrases: set, with one warning ----
weak() { printf '%s\n' "$1" >"$T/weak"; }
weak x
rm -rf "$T/wv"
expect_status 0 "$PQV" -v "$T/wv" --passphrase-file "$T/weak" -q init --kdf "$KDF"
expect_stderr_contains "pqvault: init: warning: weak passphrase (1 character, about 4 bits"
expect_stderr_contains "several random words"
expect_one_error_line
check_ok "the weak passphrase was set all the same" test -f "$T/wv/config"
expect_status 0 "$PQV" -v "$T/wv" --passphrase-file "$T/weak" list
check_ok "unlocking with it says nothing" test ! -s "$ERR"
for w in 123456789012 aaaaaaaaaaaaaaaaaaaa Tr0ub4dor3x; do
    weak "$w"
    rm -rf "$T/wv"
    expect_status 0 "$PQV" -v "$T/wv" --passphrase-file "$T/weak" -q init --kdf "$KDF"
    expect_stderr_contains "warning: weak passphrase"
done
for w in 'correct horse battery' 'über sécurité' 'Xk3-pq9-Lm2-vt7'; do
    weak "$w"
    rm -rf "$T/wv"
    expect_status 0 "$PQV" -v "$T/wv" --passphrase-file "$T/weak" -q init --kdf "$KDF"
    check_ok "no warning for '$w'" test ! -s "$ERR"
done
# whatever the source: the environment, passwd, recover
rm -rf "$T/wv"
expect_status 0 env PQVAULT_PASSPHRASE=pw "$PQV" -v "$T/wv" -q init --kdf "$KDF"
expect_stderr_contains "warning: weak passphrase (2 characters"
cp "$OUT" "$T/wv-code"
weak short
expect_status 0 env PQVAULT_PASSPHRASE=pw "$PQV" -v "$T/wv" passwd --slot 1 --kdf "$KDF" \
    --new-passphrase-file "$T/weak"
expect_stderr_contains "pqvault: passwd: warning: weak passphrase (5 characters"
expect_status 0 env PQVAULT_PASSPHRASE=pw PQVAULT_NEW_PASSPHRASE=tiny "$PQV" -v "$T/wv" passwd \
    --kdf "$KDF"
expect_stderr_contains "warning: weak passphrase (4 characters"
expect_status 0 env PQVAULT_PASSPHRASE=tiny "$PQV" -v "$T/wv" passwd --slot 1 --clear
check_ok "clearing a slot sets no passphrase: no warning" sh -c '! grep -q weak "$1"' sh "$ERR"
expect_status 0 env PQVAULT_PASSPHRASE=abc "$PQV" -v "$T/wv" recover --kdf "$KDF" \
    --recovery-file "$T/wv-code"
expect_stderr_contains "pqvault: recover: warning: weak passphrase (3 characters"
check_ok "one warning per run" test "$(grep -c 'weak passphrase' "$ERR")" -eq 1

# ---- 9. --json: an error object of its own for each failing operand ----
expect_status 1 pq add --json "$T/nosuch" "$T/tree" "$V"
check_ok "add --json: one error object per failing operand, in operand order" python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
errs = [o for o in objs if "error" in o]
assert [o["name"] for o in errs] == [sys.argv[2] + "/nosuch", sys.argv[2] + "/vault"], errs
assert all(o.get("operand") is True for o in errs), errs
assert errs[0]["error"] == "stat: No such file or directory", errs
assert "vault" in errs[1]["error"], errs
assert "summary" in objs[-1] and objs[-1]["summary"]["errors"] == 2, objs
assert any(o.get("name") == "tree/a.txt" for o in objs), objs
' "$OUT" "$T"
expect_stderr_contains "$T/nosuch: stat: No such file or directory"
mkdir -p "$T/jout"
expect_status 1 pq get --json nosuch tree/a.txt -o "$T/jout"
check_ok "get --json: the missing name has its error object, the other is restored" python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert {"name": "nosuch", "operand": True, "error": "not found"} in objs, objs
assert {"name": "tree/a.txt", "action": "restored"} in objs, objs
assert objs[-1]["summary"]["errors"] == 1 and objs[-1]["summary"]["restored"] == 1, objs
' "$OUT"
expect_status 1 pq get --json tree/a.txt -o "$T/jout"
check_ok "get --json: an existing destination has its error object" python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
e = [o for o in objs if "error" in o]
assert len(e) == 1 and e[0]["name"] == "tree/a.txt" and e[0]["operand"] is True, objs
assert "already exists" in e[0]["error"], e
' "$OUT"
expect_status 2 pq get --json tree/a.txt -o -
expect_stderr_contains "-o -: no --dry-run, --strip-components, --skip-existing or --json"

finish
