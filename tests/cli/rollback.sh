# tests/cli/rollback.sh: the tamper suite of format 2.  A storage attacker
# rolls back, deletes, resurrects, swaps and forks catalogue segments,
# packs, format-1 objects and the key file, singly and the whole vault,
# with this machine's local state and without it.  Each case is detected
# (exit 4, naming what), or, where nothing can tell (first contact without
# local state), the vault is accepted with a note saying so.
. "$(dirname "$0")/lib.sh"

init_vault || finish
S=$XDG_STATE_HOME
printf 'one\n' >"$T/a"
printf 'two\n' >"$T/b"
printf 'two, again\n' >"$T/b2"
expect_status 0 pq add "$T/a"                 # epoch 2
cp -a "$V" "$T/at2"
expect_status 0 pq add "$T/b"                 # epoch 3
cp -a "$V" "$T/at3"
expect_status 0 pq rm a                       # epoch 4
cp -a "$V" "$T/at4"
expect_status 0 pq add --force --name b "$T/b2"   # epoch 5
cp -a "$V" "$T/at5"
cp -a "$S" "$T/state5"
# The pack of b's current content (the one epoch 5 wrote), and an older one.
(cd "$T/at4" && find packs -type f | sort) >"$T/packs4"
BPACK=$(cd "$T/at5" && find packs -type f | sort | comm -13 "$T/packs4" -)
OLDPACK=$(head -n 1 "$T/packs4")
expect_status 0 pq check --read-data
expect_stdout_contains "epoch: 5, segments: 5, entries: 1"

serve() { rm -rf "$V" && cp -a "$1" "$V"; }
known() { rm -rf "$S" && cp -a "$T/state5" "$S"; }   # the state after epoch 5
fresh() { rm -rf "$S"; }                              # a machine that never saw it
seg() { printf '%s/segments/%016x' "$V" "$1"; }

# ---- with local state ----
for old in at2 at3 at4; do
    serve "$T/$old"; known
    expect_status 4 pq list
    expect_stderr_contains "rollback: the vault shows epoch"
    expect_one_error_line
    expect_status 4 pq get b -o "$T/out-$old"
    check_ok "rollback to $old: nothing restored" [ ! -e "$T/out-$old" ]
    expect_status 4 pq check
done
# The newest segment deleted (the removal of a and the replacement of b
# undone: a resurrected, b rolled back).
serve "$T/at5"; known
rm "$(seg 5)"
expect_status 4 pq get a -o "$T/out-res"
expect_stderr_contains "rollback"
check_ok "resurrection refused: a not restored" [ ! -e "$T/out-res" ]
rm "$(seg 4)"
expect_status 4 pq list
expect_stderr_contains "rollback"
# A writer refuses too: it must not build on a rolled-back vault.
expect_status 4 pq add "$T/a" --name c
check_ok "no epoch written on a rolled-back vault" [ ! -e "$(seg 4)" ]

# ---- with or without local state: the chain ----
for st in known fresh; do
    # A segment in the middle deleted.
    serve "$T/at5"; $st
    rm "$(seg 3)"
    expect_status 4 pq list
    expect_stderr_contains "segments/0000000000000003"
    expect_stderr_contains "is missing"
    # Two segments swapped.
    serve "$T/at5"; $st
    mv "$(seg 4)" "$T/s4" && mv "$(seg 5)" "$(seg 4)" && mv "$T/s4" "$(seg 5)"
    expect_status 4 pq list
    expect_status 4 pq check
    # An old segment copied in as the next epoch (resurrection by replay).
    serve "$T/at5"; $st
    cp "$(seg 3)" "$(seg 6)"
    expect_status 4 pq list
    expect_stderr_contains "segments/0000000000000006"
    # One byte of a segment flipped (head, then a block).
    serve "$T/at5"; $st
    flip_byte "$(seg 5)" 80
    expect_status 4 pq list
    serve "$T/at5"; $st
    flip_byte "$(seg 5)" $(($(stat -c %s "$(seg 5)") - 3))
    expect_status 4 pq check
done

# ---- forks ----
# (Each fork is made at the vault's own location: the local state is kept
# per location, a copy elsewhere is another vault to this machine.)
S_SAVE=$T/state-fork
serve "$T/at3"; rm -rf "$S"
expect_status 0 pq rm a   # epoch 4 on A: seen here
rm -rf "$T/forkA" && cp -a "$V" "$T/forkA"
cp -a "$S" "$S_SAVE"
printf 'other\n' >"$T/other"
serve "$T/at3"; rm -rf "$S"
expect_status 0 pq add "$T/other"   # epoch 4 on B
rm -rf "$T/forkB" && cp -a "$V" "$T/forkB"
rm -rf "$S" && cp -a "$S_SAVE" "$S"
serve "$T/forkB"
expect_status 4 pq list
expect_stderr_contains "fork: the vault's epoch 4 is not the one seen here before"
# A segment of the other history put under a later one of this history:
# the chain breaks.  (Alone at the top it is simply the other fork, which
# only the local state tells.)
rm -rf "$S" && cp -a "$S_SAVE" "$S"
serve "$T/forkA"
expect_status 0 pq add "$T/other" --name other-a
rm -rf "$T/forkA" && cp -a "$V" "$T/forkA"
serve "$T/forkA"; fresh
cp "$T/forkB/segments/0000000000000004" "$(seg 4)"
expect_status 4 pq list
expect_stderr_contains "does not continue epoch 4"
# A forked history that went further: epoch 4 seen here is not in it.
serve "$T/forkB"; rm -rf "$S" && cp -a "$S_SAVE" "$S"
expect_status 0 "$PQV" -v "$T/forkB" --passphrase-file "$PF" --quiet info
V2=$T/forkB
XDG_STATE_HOME=$T/elsewhere "$PQV" -v "$V2" --passphrase-file "$PF" add "$T/a" --name z 2>/dev/null
serve "$V2"
expect_status 4 pq list
expect_stderr_contains "fork"

# ---- first contact without local state: accepted, and said ----
serve "$T/at3"; fresh
expect_status 0 pq list
expect_stderr_contains "first use of this vault on this machine: accepting its epoch 3 as current"
# ... and from then on, a rollback below it is refused.
serve "$T/at2"
expect_status 4 pq list
expect_stderr_contains "rollback"

# ---- accept: the owner takes a restored copy knowingly ----
serve "$T/at3"; known
expect_status 4 pq list
expect_status 0 pq accept
expect_stdout_contains "accepted epoch 3 as current (epoch 5 was known here)"
expect_status 0 pq list
expect_stdout_contains "a"
expect_status 0 pq add "$T/a" --name after-accept
# accept cannot make a broken chain valid.
serve "$T/at5"; known
rm "$(seg 3)"
expect_status 4 pq accept

# ---- packs ----
serve "$T/at5"; known
rm "$V/$BPACK"
expect_status 4 pq check
expect_stderr_contains "is missing"
expect_status 4 pq get b -o "$T/out-nopack"
check_ok "missing pack: nothing restored" [ ! -e "$T/out-nopack" ]
expect_status 4 pq gc
expect_stderr_contains "refusing to collect garbage while the vault is damaged"
# A pack replaced by another pack's bytes (a swap, a rollback of its name).
serve "$T/at5"; known
cp "$V/$BPACK" "$T/p1"; cp "$V/$OLDPACK" "$V/$BPACK"; cp "$T/p1" "$V/$OLDPACK"
expect_status 4 pq get b -o "$T/out-swap"
check_ok "swapped packs: nothing restored" [ ! -e "$T/out-swap" ]
expect_status 4 pq check --read-data
# A pack one byte longer or shorter.
serve "$T/at5"; known
printf 'x' >>"$V/$BPACK"
expect_status 4 pq check
expect_stderr_contains "expected"
# A leftover pack (an interrupted add) is never served, and gc removes it.
serve "$T/at5"; known
mkdir -p "$V/packs/ab"
head -c 300 /dev/urandom >"$V/packs/ab/ab0102030405060708090a0b0c0d0e0f"
expect_status 0 pq get b -o "$T/out-left"
check_ok "b restored despite the leftover" same_file "$T/b2" "$T/out-left"
expect_status 0 pq check
expect_stderr_contains "1 leftover (300 B) no entry refers to"
# (The snapshots before keep the old data until they are forgotten.)
expect_status 0 pq forget --keep-last 1
expect_status 0 pq gc
check_ok "gc removed the leftover pack" [ ! -e "$V/packs/ab/ab0102030405060708090a0b0c0d0e0f" ]
check_ok "gc removed the packs of a and the old b, kept the new b's" \
    [ "$(find "$V/packs" -type f | wc -l)" -eq 1 ]
expect_status 0 pq check --read-data
expect_status 0 pq get b -o "$T/out-aftergc"

# ---- the key file ----
serve "$T/at5"; known
cp "$V/keyfile" "$T/keyfile.old"
printf 'a new passphrase\n' >"$T/newpass"
expect_status 0 pq passwd --new-passphrase-file "$T/newpass" --kdf "$KDF"
cp "$T/keyfile.old" "$V/keyfile"
expect_status 4 pq list
expect_stderr_contains "rollback: this key file was replaced in epoch 6 or before"
# ... the same with the vault rolled back along with it: the local state.
serve "$T/at5"
cp "$T/keyfile.old" "$V/keyfile"
expect_status 4 pq list
expect_stderr_contains "rollback"

# ---- format-1 objects of an upgraded vault ----
V=$T/upgraded
cp -r tests/fixtures/v1-aes "$V"
chmod -R u+w "$V"
PF=tests/fixtures/v1.pass
expect_status 0 pq upgrade
expect_stdout_contains "upgraded to format 3"
check_ok "upgrade: no record left" [ -z "$(find "$V/records" -type f 2>/dev/null)" ]
expect_status 0 pq check --read-data
O=$(first_file "$V/objects")
cp "$O" "$T/obj.saved"
flip_byte "$O" 40
expect_status 4 pq check --read-data
expect_stderr_contains "docs/"
cp "$T/obj.saved" "$O"
rm "$O"
expect_status 4 pq check
expect_stderr_contains "is missing"
finish
