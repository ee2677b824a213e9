# tests/cli/inbox.sh: write-only adds (issues 13 and 17; docs/FORMAT.md
# sections 18 and 19).  export-recipient (format, fingerprint, no
# overwrite, verified with the key or --unverified said, a forged config
# and key file refused, tampered and foreign recipients refused); writer
# credentials (writer add/list/revoke, mode 0600); add with a credential
# with no key file, no passphrase and no terminal, and as another Unix user
# who can only create files in the 1733 inbox/; inbox -l, list's note,
# import round trip byte-exact under the writer's prefix, the writer's
# newer state replacing its names (no copies) and what it no longer has
# removed, names outside the prefix untouched, the bare recipient's batch
# refused or quarantined (stripped), an interrupted import finished and a
# replay refused (exit 4), tampered, truncated, swapped, renamed and
# foreign batches (reported, left, the others imported, exit 4), a revoked
# writer and an older credential refused, a writer that edits its
# credential's prefix refused, a failed import deleting no pack it found,
# a batch id committed twice (create-only);
# the test build killed at every durability call of a write-only add and of
# an import, and an I/O fault at every operation of an import: the batch is
# imported once or not at all, check clean.
. "$(dirname "$0")/lib.sh"
# fails CMD...: CMD fails.
fails() { ! "$@" >/dev/null 2>&1; }

init_vault || finish
R=$T/recipient
# ---- export-recipient ----
expect_status 0 pq export-recipient -o "$R"
check_ok "recipient: first line" [ "$(head -n 1 "$R")" = "pqvault-recipient 1" ]
check_ok "recipient: vault-id line" grep -qE '^vault-id: [0-9a-f]{32}$' "$R"
check_ok "recipient: kem line" grep -qE '^kem: FrodoKEM-976-(AES|SHAKE)$' "$R"
check_ok "recipient: format line" grep -qx 'format: 2' "$R"
fp=$(sed -n 's/^fingerprint: //p' "$R")
expect_status 0 pq info
info_fp=$(sed -n 's/^fingerprint: *\(pqv1-[0-9a-f-]*\).*/\1/p' "$OUT")
check_ok "recipient: fingerprint equals info's ($fp)" [ -n "$fp" -a "$fp" = "$info_fp" ]
check_ok "recipient: ~21 KB" [ "$(wc -c <"$R")" -gt 20000 -a "$(wc -c <"$R")" -lt 24000 ]
expect_status 1 pq export-recipient -o "$R"
expect_stderr_contains "exists"
expect_status 0 pq export-recipient -o "$R" --force
expect_status 0 pq export-recipient
check_ok "export-recipient to stdout equals the file" same_file "$OUT" "$R"
# Without the key (issue 17): refused, unless --unverified, which says so.
expect_status 2 notty "$PQV" -v "$V" export-recipient -o "$T/r.nokey"
expect_stderr_contains "--unverified"
check_ok "export-recipient without the key wrote nothing" [ ! -e "$T/r.nokey" ]
expect_status 0 notty "$PQV" -v "$V" export-recipient --unverified
check_ok "export-recipient --unverified equals the verified one" same_file "$OUT" "$R"
expect_stderr_contains "warning: the recipient was not verified against the vault's key"
# A forged config (this vault's id, another identity, MAC'd with that
# identity's key) and the forger's key file: with the key, refused; the
# unverified export is the forger's, and says it is unverified.
A=$T/attacker
printf 'the forger does not know the passphrase\n' >"$T/a.pass"
"$PQV" -v "$A" --passphrase-file "$T/a.pass" -q init --kdf "$KDF" >"$T/a.recovery" 2>/dev/null
cp -a "$V" "$T/victim"
python3 - "$A/config" "$V/config" "$T/a.recovery" "$T/forged-config" <<'EOF'
import hashlib, hmac, sys
A = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
v = 0
for ch in open(sys.argv[3]).read().upper():
    if ch in A:
        v = (v << 5) | A.index(ch)
seed = v.to_bytes(35, "big")[:32]
h = lambda k, m: hmac.new(k, m, hashlib.sha256).digest()
# key("config") (FORMAT.md section 2): HKDF-Expand(HKDF(seed, salt, "", 32), "key/config", 32)
key = h(h(h(b"pqvault/v1/identity", seed), b"\x01"), b"key/config\x01")
lines = open(sys.argv[1]).read().splitlines(True)
victim_id = [l for l in open(sys.argv[2]) if l.startswith("vault-id ")][0]
lines = [victim_id if l.startswith("vault-id ") else l for l in lines if not l.startswith("mac ")]
text = "".join(lines)
open(sys.argv[4], "w").write(text + "mac " + hmac.new(key, text.encode(), hashlib.sha256).hexdigest() + "\n")
EOF
cp "$T/forged-config" "$V/config"
cp "$A/keyfile" "$V/keyfile"
expect_status 0 notty "$PQV" -v "$V" export-recipient --unverified -o "$T/r.forged"
expect_stderr_contains "not verified"
check_ok "the unverified export is the forger's recipient" sh -c '! cmp -s "$1" "$2"' sh "$R" "$T/r.forged"
expect_status 3 pq export-recipient -o "$T/r.forged2"
check_ok "with the key, nothing exported from the forged config" [ ! -e "$T/r.forged2" ]
# The forged config beside the vault's own key file: refused either way.
cp "$T/victim/keyfile" "$V/keyfile"
expect_status 4 notty "$PQV" -v "$V" export-recipient --unverified
expect_status 3 pq export-recipient
expect_stderr_contains "key file belongs to another vault"
rm -rf "$V" && mv "$T/victim" "$V"
expect_status 0 pq export-recipient -o -
check_ok "export-recipient unlocked equals the file" same_file "$OUT" "$R"

# ---- writer credentials ----
C=$T/cred
expect_status 0 pq writer add w1 --prefix in -o "$C"
expect_stderr_contains "w1 registered"
check_ok "credential: first line" [ "$(head -n 1 "$C")" = "pqvault-writer 1" ]
check_ok "credential: mode 0600" [ "$(stat -c %a "$C")" = 600 ]
check_ok "credential: its writer, prefix, generation and key" sh -c 'grep -qx "writer: w1" "$1" && grep -qx "prefix: in" "$1" && grep -qx "generation: 1" "$1" && grep -qE "^key: [0-9a-f]{64}$" "$1"' sh "$C"
expect_status 1 pq writer add w1 -o "$C"
expect_stderr_contains "exists"
expect_status 1 pq writer add w2 --prefix in/sub -o "$T/cred2"
expect_stderr_contains "overlaps the prefix in of writer w1"
expect_status 1 pq writer add "bad name" -o "$T/cred2"
check_ok "a refused writer: no file written" [ ! -e "$T/cred2" ]
expect_status 0 pq writer list
expect_stdout_contains "w1  prefix in  generation 1"
expect_status 2 pq writer frobnicate

# ---- sources ----
mkdir -p "$T/src/sub" "$T/src/empty"
head -c 70000 /dev/urandom >"$T/src/big"
printf 'hello\n' >"$T/src/a"
printf 'sub file\n' >"$T/src/sub/c"
ln -s a "$T/src/link"
head -c 3000 /dev/urandom >"$T/lone"

# ---- refused recipients ----
sed '7s/^\(.\)/\1/; 7y/ABCDEFGHIJ/BCDEFGHIJA/' "$R" >"$T/r.tampered"
check_ok "the tampered recipient differs from the real one" sh -c '! cmp -s "$1" "$2"' sh "$R" "$T/r.tampered"
expect_status 4 pqn add --recipient "$T/r.tampered" "$T/lone"
expect_stderr_contains "does not match its fingerprint"
# The fingerprint's first hex digit changed (always to another digit).
python3 -c '
import sys
out = []
for line in open(sys.argv[1]):
    if line.startswith("fingerprint: pqv1-"):
        i = len("fingerprint: pqv1-")
        line = line[:i] + "%x" % ((int(line[i], 16) + 1) % 16) + line[i + 1:]
    out.append(line)
open(sys.argv[2], "w").write("".join(out))
' "$R" "$T/r.fp"
check_ok "the altered recipient differs from the real one" sh -c '! cmp -s "$1" "$2"' sh "$R" "$T/r.fp"
expect_status 4 pqn add --recipient "$T/r.fp" "$T/lone"
head -c 5000 "$R" >"$T/r.trunc"
expect_status 1 pqn add --recipient "$T/r.trunc" "$T/lone"
expect_stderr_contains "recipient"
sed '1s/1$/2/' "$R" >"$T/r.ver"
expect_status 1 pqn add --recipient "$T/r.ver" "$T/lone"
printf 'junk\n' >>"$T/r.ver"
cp "$R" "$T/r.extra"
printf 'AAAA\n\n' >>"$T/r.extra"
expect_status 1 pqn add --recipient "$T/r.extra" "$T/lone"
V2=$T/other
"$PQV" -v "$V2" --passphrase-file "$PF" -q init --kdf "$KDF" >/dev/null 2>&1
"$PQV" -v "$V2" --passphrase-file "$PF" export-recipient -o "$T/r.other" 2>/dev/null
expect_status 3 pqn add --recipient "$T/r.other" "$T/lone"
expect_stderr_contains "another vault"
# The vault id line of this vault over another vault's key: fingerprint refused.
{ sed -n 1,2p "$R"; sed -n '3,$p' "$T/r.other"; } >"$T/r.mixed"
expect_status 3 pqn add --recipient "$T/r.mixed" "$T/lone"
expect_status 2 pqn add --recipient "$R" --delete "$T/lone"
check_ok "refused recipients wrote nothing into the inbox" [ -z "$(find "$V/inbox" -mindepth 1)" ]

# ---- write-only add: no key file, no passphrase, no terminal ----
ls "$V/segments" >"$T/segs.before"
mv "$V/keyfile" "$T/keyfile.away"
LAST="write-only add, no key file, no passphrase, no tty"
if notty env -u PQVAULT_PASSPHRASE "$PQV" -v "$V" add --recipient "$C" "$T/src" "$T/lone" \
    </dev/null >"$OUT" 2>"$ERR"; then ok "$LAST: exit 0"; else fail "$LAST: exit $?"; fi
expect_stderr_contains "inbox batch"
mv "$T/keyfile.away" "$V/keyfile"
# What the writer touches, traced (strace -y names each descriptor's path):
# the vault directory itself, its config and inbox/, nothing else.
if command -v strace >/dev/null; then
    printf 'traced\n' >"$T/traced"
    strace -f -qq -y -o "$T/trace" -e trace=open,openat,openat2,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,unlink,unlinkat,newfstatat,statx,getdents64,truncate \
        "$PQV" -v "$V" add --recipient "$C" "$T/traced" >/dev/null 2>&1 </dev/null
    {
        grep -o "[\"<]$V[^\">]*" "$T/trace" | cut -c2- | sed "s|^$V||"
        grep -F "<$V>, \"" "$T/trace" | sed 's/.*<[^>]*>, "\([^"]*\)".*/\/\1/'
    } | grep -vE '^(|/\.|/config|/inbox(/.*)?)$' | sort -u >"$T/touched"
    check_ok "write-only add touches only the config and inbox/ ($(tr '\n' ' ' <"$T/touched"))" \
        [ ! -s "$T/touched" -a -s "$T/trace" ]
    check_ok "write-only add traced: it created its batch" grep -q '\.batch", 0) = 0' "$T/trace"
else
    fail "strace not installed: the write-only writer's accesses are not traced"
fi
ls "$V/segments" >"$T/segs.after"
check_ok "write-only add wrote no segment" cmp -s "$T/segs.before" "$T/segs.after"
check_ok "write-only add wrote only under inbox/" [ -z "$(find "$V" -newer "$T/segs.before" ! -path "$V/inbox*" ! -path "$V" -type f)" ]
check_ok "two batch files (the add and the traced add)" [ "$(find "$V/inbox" -name '*.batch' | wc -l)" -eq 2 ]
expect_status 0 pq list
expect_stderr_contains "2 inbox batches wait (pqvault import)"
check_ok "list before import: nothing listed" [ ! -s "$OUT" ]
expect_status 0 pqn inbox
expect_stdout_contains "pending"
expect_status 0 pq inbox
expect_stdout_contains " 8 entries"
expect_stdout_contains " 1 entries"
expect_stdout_contains "writer w1 -> in"
expect_status 0 pq inbox -l
expect_stdout_contains " in/src/sub/c"
expect_stdout_contains " in/src/link -> a"
expect_status 2 pqn inbox -l
expect_status 0 pq check
expect_stdout_contains "inbox: 2 batches waiting"
expect_status 0 pq import
expect_stderr_contains "2 batches, 9 entries imported"
check_ok "inbox empty after import" [ -z "$(find "$V/inbox" -mindepth 1)" ]
expect_status 0 pq list
for n in in/src in/src/a in/src/big in/src/sub in/src/sub/c in/src/empty in/src/link in/lone; do
    check_ok "imported under the writer's prefix: $n listed" grep -qx "$n" "$OUT"
done
expect_status 0 pq get in/src -o "$T/out1"
check_ok "round trip: big byte-exact" same_file "$T/out1/in/src/big" "$T/src/big"
check_ok "round trip: a byte-exact" same_file "$T/out1/in/src/a" "$T/src/a"
check_ok "round trip: sub/c byte-exact" same_file "$T/out1/in/src/sub/c" "$T/src/sub/c"
check_ok "round trip: link" [ "$(readlink "$T/out1/in/src/link")" = a ]
expect_status 0 pq get in/lone -o "$T/lone.out"
check_ok "round trip: lone byte-exact" same_file "$T/lone.out" "$T/lone"
expect_status 0 pq check --read-data
expect_status 0 pq import
expect_stderr_contains "0 batches"

# ---- a writer's newer state: replaced, never copies; gone names removed ----
printf 'second version\n' >"$T/lone"
rm "$T/src/a"
expect_status 0 pqn add --recipient "$C" "$T/lone" "$T/src"
expect_status 0 pq import
expect_stderr_contains "1 removed"
expect_status 0 pq list
check_ok "newer state: no copy beside the name" sh -c '! grep -q "inbox" "$1"' sh "$OUT"
check_ok "newer state: what the writer no longer has is gone" sh -c '! grep -qx "in/src/a" "$1"' sh "$OUT"
check_ok "newer state: the rest stays" grep -qx "in/src/sub/c" "$OUT"
expect_status 0 pq get in/lone -o "$T/lone.new"
check_ok "newer state: the name holds the new file" same_file "$T/lone.new" "$T/lone"
# A name of the owner outside the prefix is never touched; one at the
# writer's root is the writer's.
printf 'x\n' >"$T/plain"
expect_status 0 pq add "$T/plain" --name tree
expect_status 0 pq add "$T/plain" --name in/tree
expect_status 0 pqn add --recipient "$C" "$T/src" --name tree
expect_status 0 pq import
expect_status 0 pq list
check_ok "outside the prefix: the owner's tree untouched" grep -qx "tree" "$OUT"
check_ok "at the writer's root: its directory over the file" grep -qx "in/tree/sub/c" "$OUT"
expect_status 0 pq get tree -o "$T/tree.out"
check_ok "the owner's file outside the prefix, byte-exact" same_file "$T/tree.out" "$T/plain"
expect_status 0 pq check
# The bare recipient's batch: anyone's; refused, or quarantined stripped.
printf 'anyone\n' >"$T/anyone"
chmod 4755 "$T/anyone"
expect_status 0 pqn add --recipient "$R" "$T/anyone"
expect_status 0 pq inbox
expect_stdout_contains "bare recipient (import --quarantine)"
expect_status 0 pq inbox -l
expect_stdout_contains "quarantine/"
check_ok "inbox -l: the bare recipient's batch as quarantine would store it (no set-id bit)" sh -c '! grep -q "^ *-rws.*anyone" "$1" && grep -q "^ *-rwxr-xr-x .*/anyone$" "$1"' sh "$OUT"
expect_status 4 pq import
expect_stderr_contains "made with the bare recipient"
check_ok "the bare recipient's batch left in place" [ "$(find "$V/inbox" -name '*.batch' | wc -l)" -eq 1 ]
expect_status 0 pq import --quarantine
expect_stderr_contains "1 batch quarantined"
expect_status 0 pq list -l quarantine
expect_stdout_contains "/anyone"
check_ok "quarantined: no set-id bit" sh -c '! grep -q "^-rws" "$1"' sh "$OUT"
expect_status 0 pq list
check_ok "quarantined: nothing outside quarantine/" sh -c '! grep -qx "anyone" "$1"' sh "$OUT"

# Two operands of one name: one command, one batch, so the second is
# refused (with the way out: --name), the first written.
mkdir -p "$T/twice1/dd" "$T/twice2/dd"
printf 'one\n' >"$T/twice1/dd/x"
printf 'two\n' >"$T/twice2/dd/x"
expect_status 1 pqn add --recipient "$C" "$T/twice1/dd" "$T/twice2/dd"
expect_stderr_contains "$T/twice2/dd: would be stored as in/dd, which $T/twice1/dd is stored as too: add one of them on its own with --name"
check_ok "the refusal suggests no --force" sh -c '! grep -q -- "--force" "$1"' sh "$ERR"
expect_stderr_contains "inbox batch"
expect_status 0 pq import --replace
expect_status 0 pq list
check_ok "the refused operand is not in the batch" sh -c '! grep -q "dd (inbox" "$1"' sh "$OUT"
expect_status 0 pq get in/dd/x -o "$T/dd.x"
check_ok "the first operand keeps the name" same_file "$T/dd.x" "$T/twice1/dd/x"
expect_status 0 pq check

# gc leaves the inbox alone: a pending batch and an incomplete one stay.
printf 'pending\n' >"$T/pend"
expect_status 0 pqn add --recipient "$C" "$T/pend"
mkdir "$V/inbox/ffffffffffffffffffffffffffffffff" && head -c 100 /dev/urandom >"$V/inbox/ffffffffffffffffffffffffffffffff/ffffffffffffffffffffffffffffffff"
expect_status 0 pq gc
check_ok "gc: the pending batch stays" [ "$(find "$V/inbox" -name '*.batch' | wc -l)" -eq 1 ]
check_ok "gc: the incomplete batch's pack stays" [ -f "$V/inbox/ffffffffffffffffffffffffffffffff/ffffffffffffffffffffffffffffffff" ]
expect_status 0 pq inbox
expect_stdout_contains "incomplete (no commit point)"
expect_status 0 pq import
expect_stderr_contains "1 batch, 1 entries imported"
check_ok "import leaves the incomplete batch" [ -f "$V/inbox/ffffffffffffffffffffffffffffffff/ffffffffffffffffffffffffffffffff" ]
rm -rf "$V/inbox/ffffffffffffffffffffffffffffffff"

# ---- an import interrupted before its deletion; a replay ----
printf 'replayed\n' >"$T/rep"
expect_status 0 pqn add --recipient "$C" "$T/rep"
cp -a "$V/inbox" "$T/inbox.copy"
expect_status 0 pq import
# (An import killed between its commit and the deletion leaves the batch:
# the next import deletes it, below.)  Put back after: a replay, refused
# whatever the options.
rm -rf "$V/inbox"
cp -a "$T/inbox.copy" "$V/inbox"
expect_status 4 pq import --replace --quarantine
expect_stderr_contains "replayed: this batch was imported in epoch"
expect_status 4 pq inbox
expect_stdout_contains "refused"
expect_status 0 pq list
check_ok "replayed batch: imported once" [ "$(grep -c '^in/rep' "$OUT")" -eq 1 ]
check_ok "replayed batch: left in place" [ -n "$(find "$V/inbox" -name '*.batch')" ]
rm -rf "$V/inbox"/*

# ---- damaged batches: reported, left in place, the others imported ----
# batch_of FILE NAME: a write-only add of FILE as NAME; its batch id.
batch_of() {
    pqn add --recipient "$C" "$1" --name "$2" >/dev/null 2>"$T/b.err"
    sed -n 's/.*inbox batch \([0-9a-f]\{32\}\) written.*/\1/p' "$T/b.err"
}
printf 'good\n' >"$T/good"
printf 'bad one\n' >"$T/bad1"
head -c 9000 /dev/urandom >"$T/bad2"
head -c 9000 /dev/urandom >"$T/bad3"
g=$(batch_of "$T/good" good)
b1=$(batch_of "$T/bad1" bad1)
b2=$(batch_of "$T/bad2" bad2)
b3=$(batch_of "$T/bad3" bad3)
b4=$(batch_of "$T/bad1" bad4)
b5=$(batch_of "$T/bad1" bad5)
check_ok "six batches written" [ "$(find "$V/inbox" -name '*.batch' | wc -l)" -eq 6 ]
sz=$(stat -c %s "$V/inbox/$b1.batch")
flip_byte "$V/inbox/$b1.batch" $((sz - 20))                 # tampered body
head -c $((sz - 7)) "$V/inbox/$b5.batch" >"$T/trunc" && cat "$T/trunc" >"$V/inbox/$b5.batch"  # truncated
p2=$(ls "$V/inbox/$b2") p3=$(ls "$V/inbox/$b3")
mv "$V/inbox/$b2/$p2" "$T/p2" && mv "$V/inbox/$b3/$p3" "$V/inbox/$b2/$p2" && mv "$T/p2" "$V/inbox/$b3/$p3"  # swapped
# renamed: batch b4 moved to another id
nid=00000000000000000000000000000001
mv "$V/inbox/$b4.batch" "$V/inbox/$nid.batch" && mv "$V/inbox/$b4" "$V/inbox/$nid"
# another vault's batch
"$PQV" -v "$V2" add --recipient "$T/r.other" "$T/good" --name foreign >/dev/null 2>&1
fb=$(basename "$(find "$V2/inbox" -name '*.batch')" .batch)
cp -a "$V2/inbox/$fb" "$V2/inbox/$fb.batch" "$V/inbox/"
expect_status 4 pq inbox
expect_stdout_contains "damaged"
expect_status 4 pq import
expect_stderr_contains "6 refused"
expect_stderr_contains "$b1.batch"
expect_stderr_contains "does not authenticate as writer w1's"
expect_stderr_contains "wrong size or SHA-256"
expect_stderr_contains "not its name's"
expect_stderr_contains "another vault"
expect_status 0 pq get in/good -o "$T/good.out"
check_ok "the good batch imported beside the damaged ones" same_file "$T/good.out" "$T/good"
for b in "$b1" "$b2" "$b3" "$nid" "$b5" "$fb"; do
    check_ok "damaged batch $b left in place" [ -f "$V/inbox/$b.batch" ]
done
expect_status 0 pq list
check_ok "no damaged batch's entry imported" [ -z "$(grep '^in/bad' "$OUT")" ]
expect_status 0 pq check
expect_stdout_contains "6 of them damaged"
rm -rf "$V/inbox/$b1" "$V/inbox/$b1.batch" "$V/inbox/$b2" "$V/inbox/$b2.batch" \
    "$V/inbox/$b3" "$V/inbox/$b3.batch" "$V/inbox/$nid" "$V/inbox/$nid.batch" \
    "$V/inbox/$b5" "$V/inbox/$b5.batch" "$V/inbox/$fb" "$V/inbox/$fb.batch"

# ---- two waiting batches of one writer: the newer stands ----
# The older gets the id that lists last (S3 lists by name; a directory in
# its own order): import takes them by their authenticated time.
printf 'older\n' >"$T/wstate"
PQVAULT_TEST_BATCH_ID=ffffffffffffffffffffffffffffffff "$PQV_TEST" -v "$V" add --recipient "$C" "$T/wstate" >/dev/null 2>&1
printf 'newer\n' >"$T/wstate"
PQVAULT_TEST_BATCH_ID=00000000000000000000000000000000 "$PQV_TEST" -v "$V" add --recipient "$C" "$T/wstate" >/dev/null 2>&1
expect_status 0 pq inbox
expect_status 0 pq import
expect_stderr_contains "2 batches"
expect_status 0 pq get in/wstate -o "$T/wstate.out"
check_ok "two waiting batches of one writer: the newer stands" same_file "$T/wstate.out" "$T/wstate"

# ---- one batch id committed twice: create-only ----
fixed=0123456789abcdef0123456789abcdef
printf 'first\n' >"$T/first"
printf 'second\n' >"$T/second"
LAST="batch id committed twice"
PQVAULT_TEST_BATCH_ID=$fixed "$PQV_TEST" -v "$V" add --recipient "$C" "$T/first" >/dev/null 2>&1
PQVAULT_TEST_BATCH_ID=$fixed "$PQV_TEST" -v "$V" add --recipient "$C" "$T/second" >"$OUT" 2>"$ERR"
st=$?
if [ "$st" -eq 1 ]; then ok "$LAST: exit 1"; else fail "$LAST: exit $st, expected 1"; fi
expect_stderr_contains "exists already"
expect_status 0 pq import
expect_status 0 pq get in/first -o "$T/first.out"
check_ok "the first batch of the id stands" same_file "$T/first.out" "$T/first"
expect_status 1 pq get in/second -o "$T/second.out"
check_ok "nothing left in the inbox" [ -z "$(find "$V/inbox" -mindepth 1)" ]

# ---- another Unix user, who can only create files in inbox/ ----
if [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null && command -v setpriv >/dev/null; then
    U=pqvt$$
    if useradd -M -r -s /usr/sbin/nologin "$U" 2>/dev/null; then
        trap 'userdel "$U" 2>/dev/null; cleanup' EXIT
        uid=$(id -u "$U") gid=$(id -g "$U")
        # A vault made for it: init --shared-inbox sets the permissions
        # (and warns of the parent the other user cannot search).
        chmod 0700 "$T"
        OWNV=$V V=$T/shared
        expect_status 0 pq init --kdf "$KDF" --shared-inbox
        expect_stderr_contains "other users' writers cannot reach the vault through $T (mode 0700): chmod o+x $T"
        check_ok "init --shared-inbox: vault 0711, config 0644, inbox 1733, key file 0600" \
            [ "$(stat -c %a "$V") $(stat -c %a "$V/config") $(stat -c %a "$V/inbox") $(stat -c %a "$V/keyfile")" = "711 644 1733 600" ]
        chmod 0711 "$T"
        expect_status 0 pq writer add w1 --prefix in -o "$T/cred.shared"
        printf 'owner\n' >"$T/pub.seed"
        expect_status 0 pq add "$T/pub.seed"
        mkdir "$T/pub" && chmod 0755 "$T/pub"
        cp "$T/cred.shared" "$T/pub/recipient" && printf 'from another user\n' >"$T/pub/file" &&
            chmod 0644 "$T/pub/recipient" "$T/pub/file"
        # A copy of the program the other user can run wherever the clone
        # lives (a private directory included).
        cp "$PQV" "$T/pub/pqvault" && chmod 0755 "$T/pub/pqvault"
        check_ok "inbox/ is 1733" [ "$(stat -c %a "$V/inbox")" = 1733 ]
        asu() { setpriv --reuid="$uid" --regid="$gid" --clear-groups env -u PQVAULT_PASSPHRASE HOME=/nonexistent XDG_STATE_HOME=/nonexistent "$@"; }
        LAST="write-only add as another user"
        if asu "$T/pub/pqvault" -v "$V" add --recipient "$T/pub/recipient" "$T/pub/file" --name other \
            </dev/null >"$OUT" 2>"$ERR"; then ok "$LAST: exit 0"; else fail "$LAST: exit $?"; fi
        for f in "$V/keyfile" "$V/segments/0000000000000001" "$(first_file "$V/packs")"; do
            check_ok "the other user cannot read $(basename "$f")" fails asu cat "$f" 
        done
        check_ok "the other user cannot list inbox/" fails asu ls "$V/inbox"
        check_ok "the other user cannot list segments/" fails asu ls "$V/segments"
        check_ok "the other user cannot list the vault directory" fails asu ls "$V"
        check_ok "the other user cannot list the vault" fails asu "$T/pub/pqvault" -v "$V" list
        check_ok "the other user cannot delete a vault file" fails asu rm "$V/config"
        check_ok "the other user's batch is in the inbox" [ "$(find "$V/inbox" -name '*.batch' -user "$U" | wc -l)" -eq 1 ]
        expect_status 0 pq import
        expect_status 0 pq get in/other -o "$T/other.out"
        check_ok "another user's file imported byte-exact" same_file "$T/other.out" "$T/pub/file"
        check_ok "inbox empty after importing another user's batch" [ -z "$(find "$V/inbox" -mindepth 1)" ]
        # A file the writer cannot read: its add exits 1, and the vault
        # keeps its copy (the tree is not declared whole: nothing removed).
        mkdir "$T/pub/t" && printf 'one\n' >"$T/pub/t/a" && printf 'two\n' >"$T/pub/t/b" &&
            chmod 0755 "$T/pub/t" && chmod 0644 "$T/pub/t/a" "$T/pub/t/b"
        asu "$T/pub/pqvault" -v "$V" add --recipient "$T/pub/recipient" "$T/pub/t" </dev/null >/dev/null 2>&1
        expect_status 0 pq import
        chmod 0600 "$T/pub/t/b"
        printf 'one again\n' >"$T/pub/t/a"
        LAST="write-only add of a tree with a file the writer cannot read"
        asu "$T/pub/pqvault" -v "$V" add --recipient "$T/pub/recipient" "$T/pub/t" </dev/null >"$OUT" 2>"$ERR"
        st=$?
        if [ "$st" -eq 1 ]; then ok "$LAST: exit 1"; else fail "$LAST: exit $st, expected 1"; fi
        expect_stderr_contains "its import removes nothing below it this time"
        expect_status 0 pq import
        expect_status 0 pq get in/t -o "$T/t.out"
        check_ok "a file the writer cannot read: the vault keeps its copy" same_file "$T/t.out/in/t/b" "$T/pub/t/b"
        check_ok "the rest of that tree: its newer state" same_file "$T/t.out/in/t/a" "$T/pub/t/a"
        userdel "$U" 2>/dev/null
        trap cleanup EXIT
        V=$OWNV
    else
        fail "useradd $U failed"
    fi
else
    fail "another-user case needs root, useradd and setpriv"
fi

# A shared inbox is a local directory's permissions: refused on S3 (exit 2,
# before anything is asked or contacted).
expect_status 2 env PQVAULT_PASSPHRASE=x "$PQV" -v s3://bucket/prefix init --shared-inbox
expect_stderr_contains "--shared-inbox: for a local vault"

# ---- a writer that edits its credential's prefix: refused ----
# The owner's alice/ (0700); writer w1 (prefix in) rewrites the prefix line
# of its credential to alice and sends alice/ (0777), a set-uid helper and
# a new file: the batch authenticates as w1's, but its names are outside
# w1's registered prefix: refused whole (exit 4), alice/ untouched.
mkdir -p "$T/own/alice" "$T/evil/alice/bin"
printf 'mine\n' >"$T/own/alice/notes"
chmod 0700 "$T/own/alice"
expect_status 0 pq add "$T/own/alice"
chmod 0777 "$T/evil/alice"
printf '#!/bin/sh\n' >"$T/evil/alice/bin/helper"
chmod 4755 "$T/evil/alice/bin/helper"
printf 'ssh-ed25519 AAAA attacker\n' >"$T/evil/alice/docs_authorized_keys"
sed 's/^prefix: in$/prefix: alice/' "$C" >"$T/cred.evil"
chmod 600 "$T/cred.evil"
expect_status 0 pqn add --recipient "$T/cred.evil" "$T/evil/alice" --name alice
expect_status 4 pq import --replace
expect_stderr_contains "outside writer w1's prefix in: the batch is refused"
expect_status 0 pq list -l alice
check_ok "alice/ untouched: still 0700" grep -q '^drwx------ .* alice$' "$OUT"
check_ok "alice/ untouched: no helper, no planted file" sh -c '! grep -q "helper\|authorized" "$1"' sh "$OUT"
rm -f "$V"/inbox/*.batch && rm -rf "$V"/inbox/*/

# ---- a failed import deletes only what it created ----
# Packs the vault already holds with a batch pack's bytes (left by an
# earlier interrupted import) stay, whatever operation of the import fails.
printf 'kept by the vault\n' >"$T/kept"
expect_status 0 pqn add --recipient "$C" "$T/kept"
batch=$(find "$V/inbox" -name '*.batch')
packs_found=""
for p in "${batch%.batch}"/*; do
    h=$(basename "$p")
    mkdir -p "$V/packs/$(echo "$h" | cut -c1-2)"
    cp "$p" "$V/packs/$(echo "$h" | cut -c1-2)/$h"
    packs_found="$packs_found $V/packs/$(echo "$h" | cut -c1-2)/$h"
done
n=1 points=0 problems=""
while [ "$n" -le 100 ]; do
    PQVAULT_TEST_FAULT="any:$n:EIO" "$PQV_TEST" -v "$V" --passphrase-file "$PF" import >/dev/null 2>&1 </dev/null
    st=$?
    for p in $packs_found; do [ -f "$p" ] || problems="$problems [EIO at $n: $p deleted]"; done
    [ "$st" -eq 0 ] && break
    points=$((points + 1))
    n=$((n + 1))
done
check_ok "import failing at each of $points operations deletes no pack it found ($problems)" [ -z "$problems" -a "$points" -gt 3 -a "$st" -eq 0 ]
expect_status 0 pq get in/kept -o "$T/kept.out"
check_ok "the file of the found pack, byte-exact" same_file "$T/kept.out" "$T/kept"
expect_status 0 pq check --read-data

# ---- killed at every durability call: write-only add, then import ----
mkdir -p "$T/ks"
head -c 300000 /dev/urandom >"$T/ks/big"
printf 'small\n' >"$T/ks/small"
expect_status 0 pq check
rm -rf "$T/saved" "$T/state.saved" && cp -a "$V" "$T/saved" && cp -a "$T/state" "$T/state.saved"
# restore DIR: the vault saved in DIR, and this machine's memory of it.
restore() { rm -rf "$V" "$T/state" && cp -a "$1" "$V" && cp -a "$T/state.saved" "$T/state"; }
# state_ok: check clean, and ks either fully imported and byte-exact or absent
# (no batch, or a batch that imports whole).
state_ok() {
    bad=""
    "$PQV" -v "$V" --passphrase-file "$PF" import >/dev/null 2>"$T/imp.err" || bad="$bad import-failed"
    "$PQV" -v "$V" --passphrase-file "$PF" check >/dev/null 2>"$T/chk.err" || bad="$bad check-failed"
    if "$PQV" -v "$V" --passphrase-file "$PF" list >"$T/l.out" 2>/dev/null; then
        n=$(grep -c '^in/ks' "$T/l.out")
        if [ "$n" -eq 3 ]; then
            "$PQV" -v "$V" --passphrase-file "$PF" get in/ks -o "$T/ks.out" >/dev/null 2>&1 &&
                same_file "$T/ks.out/in/ks/big" "$T/ks/big" && same_file "$T/ks.out/in/ks/small" "$T/ks/small" ||
                bad="$bad ks-differs"
            rm -rf "$T/ks.out"
        elif [ "$n" -ne 0 ] && [ "${1:-}" != partial-ok ]; then
            bad="$bad ks-partial($n)"
        fi
        [ "$(grep -c 'ks (inbox' "$T/l.out")" -eq 0 ] || bad="$bad imported-twice"
    else
        bad="$bad list-failed"
    fi
    echo "$bad"
}
n=1 points=0 problems=""
while [ "$n" -le 80 ]; do
    restore "$T/saved"
    PQVAULT_TEST_KILL_AT=$n "$PQV_TEST" -v "$V" add --recipient "$C" "$T/ks" >/dev/null 2>&1 </dev/null
    st=$?
    [ "$st" -ne 137 ] && break
    points=$((points + 1))
    res=$(state_ok)
    [ -n "$res" ] && problems="$problems [add killed at $n:$res]"
    n=$((n + 1))
done
check_ok "write-only add killed at each of $points durability calls: batch whole or absent, check clean ($problems)" [ -z "$problems" -a "$points" -gt 3 -a "$st" -eq 0 ]
# The batch committed; import killed at every durability call.
restore "$T/saved"
pqn add --recipient "$C" "$T/ks" >/dev/null 2>&1
rm -rf "$T/saved2" && cp -a "$V" "$T/saved2"
n=1 points=0 problems=""
while [ "$n" -le 80 ]; do
    restore "$T/saved2"
    PQVAULT_TEST_KILL_AT=$n "$PQV_TEST" -v "$V" --passphrase-file "$PF" import >/dev/null 2>&1 </dev/null
    st=$?
    [ "$st" -ne 137 ] && break
    points=$((points + 1))
    res=$(state_ok)
    [ -n "$res" ] && problems="$problems [import killed at $n:$res]"
    grep -q '^in/ks$' "$T/l.out" || problems="$problems [import killed at $n: ks lost]"
    n=$((n + 1))
done
check_ok "import killed at each of $points durability calls: imported once, check clean ($problems)" [ -z "$problems" -a "$points" -gt 3 -a "$st" -eq 0 ]
# An I/O error at every operation of an import: exit non-zero, then a clean retry.
n=1 points=0 problems=""
while [ "$n" -le 200 ]; do
    restore "$T/saved2"
    PQVAULT_TEST_FAULT="any:$n:EIO" "$PQV_TEST" -v "$V" --passphrase-file "$PF" import >/dev/null 2>&1 </dev/null
    st=$?
    [ "$st" -eq 0 ] && break
    points=$((points + 1))
    res=$(state_ok)
    [ -n "$res" ] && problems="$problems [import EIO at $n:$res]"
    grep -q '^in/ks$' "$T/l.out" || problems="$problems [import EIO at $n: ks lost]"
    n=$((n + 1))
done
check_ok "import with EIO at each of $points operations: imported once, check clean ($problems)" [ -z "$problems" -a "$points" -gt 3 ]

# An I/O error at every operation of a write-only add: exit 1, then the
# batch imports whole or is absent (a file whose reading failed is left
# out and reported, as by any add).
n=1 points=0 problems=""
while [ "$n" -le 200 ]; do
    restore "$T/saved"
    PQVAULT_TEST_FAULT="any:$n:EIO" "$PQV_TEST" -v "$V" add --recipient "$C" "$T/ks" >/dev/null 2>"$T/f.err" </dev/null
    st=$?
    [ "$st" -eq 0 ] && break
    points=$((points + 1))
    [ "$st" -eq 1 ] || problems="$problems [add EIO at $n: exit $st]"
    # A source file that cannot be read is left out, the rest added (as
    # any add does): then the batch holds the rest.
    if grep -q "not stored" "$T/f.err"; then res=$(state_ok partial-ok); else res=$(state_ok); fi
    [ -n "$res" ] && problems="$problems [add EIO at $n:$res]"
    n=$((n + 1))
done
check_ok "write-only add with EIO at each of $points operations: exit 1, batch whole or absent ($problems)" [ -z "$problems" -a "$points" -gt 3 ]

finish
