# tests/cli/basic.sh: help, version, usage errors, init, info, add, get,
# list (-l, --json), rm, pipes, --force, speed.
. "$(dirname "$0")/lib.sh"

# ---- help, version, usage errors (exit 2) ----
expect_status 0 "$PQV" --version
expect_stdout_contains "pqvault "
expect_stdout_contains "(vault format 3)"
expect_status 0 "$PQV" --help
expect_stdout_contains "Exit status"
for c in init add get list rm check passwd recover info speed gc help; do
    expect_status 0 "$PQV" help "$c"
    expect_stdout_contains "usage: pqvault [GLOBAL OPTIONS] $c"
done
expect_status 0 "$PQV" add --help
expect_stdout_contains "--name NAME"
expect_status 0 "$PQV" -v "$V" get -h
expect_stdout_contains "-o, --output OUT"
expect_status 2 "$PQV"
expect_status 2 "$PQV" frobnicate
expect_stderr_contains "pqvault: unknown command 'frobnicate'"
expect_status 2 "$PQV" --bogus list
expect_stderr_contains "unknown option '--bogus'"
expect_status 2 "$PQV" help frobnicate
expect_status 2 pqn list --bogus
expect_stderr_contains "pqvault: list: unknown option '--bogus'"
expect_stderr_contains "usage: pqvault list"
expect_status 2 pqn add
expect_stderr_contains "pqvault: add: missing PATH operand"
expect_status 2 pqn get
expect_stderr_contains "missing NAME operand"
expect_status 2 pqn rm
expect_status 2 pqn add -
expect_stderr_contains "'-' (standard input) needs --name"
expect_status 2 pqn add a b --name x
expect_stderr_contains "--name needs exactly one PATH"
expect_status 2 pqn get x -o
expect_stderr_contains "needs an argument"
expect_status 2 pqn list --json=1
expect_stderr_contains "takes no argument"
expect_status 2 pqn list --depth 0
expect_status 2 pqn info extra
expect_status 2 pqn check --read-data extra
expect_status 2 pqn passwd --slot 2
expect_status 2 pqn passwd --clear
expect_stderr_contains "--clear needs --slot"
expect_status 2 "$PQV" -v "$V" --passphrase-fd x list
expect_status 2 "$PQV" -v "$V" --passphrase-fd 0 --passphrase-file "$PF" list
expect_stderr_contains "only one of"
for bad in "" "t=1" x t=0,m=256,p=1 t=1,m=7,p=1 t=1,m=256,p=0 t=1,m=256,p=1,t=2 \
    t=1,m=256,p=1, "t=1, m=256" t=-1,m=256,p=1 t=1,m=4194305,p=1 t=1,m=16,p=4 \
    t=99999999999,m=256,p=1 q=1; do
    [ "$bad" = t=1 ] && continue   # a partial spec is valid (rest default)
    expect_status 2 pq init --kdf "$bad"
    expect_stderr_contains "--kdf: invalid"
done
expect_status 2 pq init --kem FrodoKEM-123
expect_status 2 pq init --aead DES
check_ok "usage errors create no vault" test ! -e "$V"

# ---- no vault (exit 5) ----
expect_status 5 pq list
expect_stderr_contains "no vault at this location"
expect_one_error_line
expect_status 5 pqn info
expect_status 5 pq add "$PF"
expect_status 5 pq check
expect_status 5 "$PQV" -v "$T/nonexistent/dir" --passphrase-file "$PF" get x

# ---- vault location: PQVAULT_DIR, XDG_DATA_HOME, HOME ----
expect_status 0 env PQVAULT_DIR="$T/envvault" "$PQV" --passphrase-file "$PF" -q init --kdf "$KDF"
check_ok "PQVAULT_DIR is the vault location" test -f "$T/envvault/config"
expect_status 0 env XDG_DATA_HOME="$T/xdg" "$PQV" --passphrase-file "$PF" -q init --kdf "$KDF"
check_ok "XDG_DATA_HOME/pqvault is the default location" test -f "$T/xdg/pqvault/config"
mkdir -p "$T/home"
expect_status 0 env HOME="$T/home" "$PQV" --passphrase-file "$PF" -q init --kdf "$KDF"
check_ok "HOME/.local/share/pqvault is the fallback" test -f "$T/home/.local/share/pqvault/config"
expect_status 0 env PQVAULT_DIR="$T/envvault" "$PQV" -v "$T/xdg/pqvault" info
expect_stdout_contains "vault:           $T/xdg/pqvault"
rm -rf "$T/envvault" "$T/xdg" "$T/home"

# ---- init ----
expect_status 0 pq init --kdf "$KDF"
code=$(cat "$OUT")
check_ok "init prints a recovery code on stdout" \
    sh -c 'printf "%s\n" "$1" | grep -Eq "^[0-9A-Z]{4}(-[0-9A-Z]{4}){13}$"' sh "$code"
expect_stderr_contains "shown only once"
expect_stderr_contains "fingerprint: pqv1-"
check_ok "recovery code not on stderr" sh -c '! grep -qF "$1" "$2"' sh "$code" "$ERR"
check_ok "init creates config and key file" test -f "$V/config" -a -f "$V/keyfile"
expect_status 1 pq init --kdf "$KDF"
expect_one_error_line
printf '\n' >"$T/empty-pass"
expect_status 1 "$PQV" -v "$T/v2" --passphrase-file "$T/empty-pass" init --kdf "$KDF"
expect_stderr_contains "empty passphrase refused"

# ---- info (no passphrase needed) ----
expect_status 0 pqn info
for w in "format version:" "vault id:" "KEM:             FrodoKEM-976" "default AEAD:" \
    "fingerprint:     pqv1-" "created:" "slot 0:          Argon2id t=1, m=256 KiB, p=1" \
    "epoch:" "segments:" "packs:" "temporaries:"; do
    expect_stdout_contains "$w"
done

# ---- add, list, get ----
mkdir -p "$T/src"
printf 'hello world\n' >"$T/src/hello.txt"
: >"$T/src/empty"
head -c 100000 /dev/urandom >"$T/src/rand.bin"
cd "$T/src" || exit 1
expect_status 0 pq add hello.txt empty rand.bin
expect_empty_stdout
expect_status 0 pq list
check_ok "list prints sorted names" sh -c 'printf "empty\nhello.txt\nrand.bin\n" | cmp -s - "$1"' sh "$OUT"
# The same file again is unchanged (incremental add), not an error.
expect_status 0 pq add hello.txt
expect_stderr_contains "0 new, 0 changed, 1 unchanged"
# A path is stored under its last component (as cp, rsync and tar -C do):
# ../other/hello.txt is hello.txt, which exists, added from elsewhere.
mkdir -p "$T/other"
printf 'other\n' >"$T/other/hello.txt"
expect_status 1 pq add ../other/hello.txt
expect_stderr_contains "pqvault: add: ../other/hello.txt: hello.txt: already exists, added from $T/src/hello.txt (use --force to replace)"
expect_one_error_line
cd "$T" || exit 1
mkdir -p "$T/dst"
expect_status 0 pq get hello.txt -o "$T/dst"
check_ok "get into a directory restores NAME there" same_file "$T/src/hello.txt" "$T/dst/hello.txt"
expect_status 0 pq get rand.bin -o "$T/dst/r2"
check_ok "get -o FILE writes FILE" same_file "$T/src/rand.bin" "$T/dst/r2"
expect_status 1 pq get rand.bin -o "$T/dst/r2"
expect_stderr_contains "(use --force to replace)"
check_ok "refused get leaves the file intact" same_file "$T/src/rand.bin" "$T/dst/r2"
echo changed >"$T/src/hello.txt"
expect_status 0 pq add --force "$T/src/hello.txt" --name hello.txt
expect_status 0 pq get hello.txt -o "$T/dst/hello.txt" --force
check_ok "add --force replaced, get --force overwrote" same_file "$T/src/hello.txt" "$T/dst/hello.txt"
cd "$T/dst" || exit 1
rm -f empty
expect_status 0 pq get empty
check_ok "get without -o writes into the current directory" test -f "$T/dst/empty" -a ! -s "$T/dst/empty"
cd "$T" || exit 1
expect_status 0 pq get hello.txt empty -o "$T/dst/nodir"
check_ok "several names into a directory made for them" test -f "$T/dst/nodir/hello.txt" -a -f "$T/dst/nodir/empty"
mkdir -p "$T/multi"
expect_status 0 pq get hello.txt empty rand.bin -o "$T/multi"
check_ok "get of several names" same_file "$T/src/rand.bin" "$T/multi/rand.bin"

# ---- pipes ----
head -c 300000 /dev/urandom >"$T/piped"
expect_status 0 sh -c 'cat "$1" | "$2" -v "$3" --passphrase-file "$4" add - --name pipe/in' sh "$T/piped" "$PQV" "$V" "$PF"
expect_status 0 sh -c '"$1" -v "$2" --passphrase-file "$3" get pipe/in -o - | cat >"$4"' sh "$PQV" "$V" "$PF" "$T/piped.out"
check_ok "stdin to stdout round trip" same_file "$T/piped" "$T/piped.out"
expect_status 0 pq get rand.bin -o -
check_ok "get -o - writes the file to stdout" same_file "$T/src/rand.bin" "$OUT"
expect_status 0 pq add - --name -dash < "$T/src/rand.bin"
expect_status 0 pq get -o - -- -dash
check_ok "-- ends options: name with a leading dash" same_file "$T/src/rand.bin" "$OUT"
expect_status 1 pq get pipe -o -
expect_stderr_contains "pqvault: get: pipe: "
expect_status 1 pq get nosuch -o -
expect_stderr_contains "pqvault: get: nosuch: not found"
expect_empty_stdout

# ---- list -l, --json, prefix ----
expect_status 0 pq list -l
check_ok "list -l shows mode, size, time, name" \
    grep -Eq '^-rw-[-r][-w]-[-r][-w]- +[^ ]+ +[^ ]+ +100000 [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} rand\.bin$' "$OUT"
expect_status 0 pq list pipe
check_ok "list PREFIX" sh -c 'printf "pipe/in\n" | cmp -s - "$1"' sh "$OUT"
expect_status 0 pq list --json
check_ok "list --json is valid JSON" python3 -m json.tool "$OUT" >/dev/null
check_ok "list --json fields" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
e = {x["name"]: x for x in a}
r = e["rand.bin"]
# Format 3: "objects" counts the file'"'"'s chunks (100000 bytes, under the
# 128 KiB minimum: one chunk); a chunked entry has no suite of its own (its
# blobs have their pack'"'"'s, docs/FORMAT.md section 23), so "aead" is null.
assert r["type"] == "file" and r["size"] == 100000 and r["objects"] == 1, r
assert r["holes"] == 0 and r["link_group"] == 0, r
assert r["mode"] == "%04o" % (int(sys.argv[2], 8)), r["mode"]
assert r["mtime"].endswith("Z") and len(r["mtime"]) == 30, r["mtime"]
assert isinstance(r["mtime_unix"], int) and r["aead"] is None, r
assert e["empty"]["objects"] == 0 and e["empty"]["size"] == 0, e["empty"]
# 300000 bytes from a pipe: 1 to 3 chunks (each but the last at least
# 128 KiB; where the cuts fall depends on the vault'"'"'s chunker key).
assert e["pipe/in"]["size"] == 300000 and 1 <= e["pipe/in"]["objects"] <= 3, e["pipe/in"]
assert [x["name"] for x in a] == sorted(x["name"] for x in a)
' "$OUT" "$(stat -c %a "$T/src/rand.bin")"
# A prefix that names nothing is "not found" (exit 1), as for get; JSON
# output stays valid.
expect_status 1 pq list nothing-here --json
check_ok "empty --json list is []" sh -c 'printf "[]\n" | cmp -s - "$1"' sh "$OUT"
expect_status 1 pq list nothing-here
expect_stderr_contains "pqvault: list: nothing-here: not found"
expect_empty_stdout

# JSON escaping: quotes, backslash, control characters, UTF-8, invalid bytes
weird=$(printf 'q"b\\s\tt\001c-\303\251-\377')
printf x >"$T/wx"
expect_status 0 pq add "$T/wx" --name "$weird"
expect_status 0 pq list --json
check_ok "JSON escaping of names (surrogateescape for invalid bytes)" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
want = sys.argv[2].encode("utf-8", "surrogateescape")
names = [x["name"].encode("utf-8", "surrogateescape") for x in a]
assert want in names, names
' "$OUT" "$weird"

# ---- rm ----
expect_status 0 pq rm rand.bin
expect_status 1 pq get rand.bin -o "$T/dst/gone"
expect_stderr_contains "pqvault: get: rand.bin: not found"
check_ok "failed get leaves nothing" test ! -e "$T/dst/gone"
expect_status 1 pq rm rand.bin
expect_stderr_contains "pqvault: rm: rand.bin: not found"
expect_status 0 pq rm pipe
expect_status 1 pq list pipe
expect_empty_stdout

# ---- speed (its Argon2id part: speed_kdf.sh) ----
expect_status 0 "$PQV" speed --quick --kdf-time 100ms
for w in AES-256-GCM ChaCha20-Poly1305 "selected in auto mode" FrodoKEM-640-AES \
    FrodoKEM-640-SHAKE FrodoKEM-976-AES FrodoKEM-976-SHAKE FrodoKEM-1344-AES \
    FrodoKEM-1344-SHAKE MB/s; do
    expect_stdout_contains "$w"
done
check_ok "speed marks exactly one AEAD and one KEM" \
    test "$(grep -c 'selected in auto mode' "$OUT")" -eq 2

finish
