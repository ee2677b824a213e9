# tests/cli/vectors.sh: the corpus of invalid files (tests/vectors/invalid/),
# each tied to the exit status and message it must produce.  Every line of
# tests/vectors/invalid/EXPECTED is
#     CASE | COMMAND | EXIT STATUS | SUBSTRING OF THE OUTPUT
# For each line a fresh copy of the frozen vault tests/vectors/base-vault/
# (passphrase in tests/vectors/base-vault.pass) gets the case applied:
#   CASE.patch       patch instructions for one file of the vault: "file
#                    PATH" then mutate.py operations, or "delete",
#                    "swapwith PATH", "copyfrom PATH";
#   config-*         a whole replacement config;
#   recovery-code-*  a recovery code file, named in COMMAND as CASE;
#   base             the vault as it is.
# Then "pqvault -v VAULT --passphrase-file PASS COMMAND" runs (OUT in
# COMMAND is a fresh destination path) and must exit with the status and
# print the substring (stdout or stderr).  A failing command must leave
# nothing at OUT.  VECTORS_SHOW=1 prints what each case produced.
. "$(dirname "$0")/lib.sh"

VEC=$(cd "$(dirname "$0")/../vectors" && pwd)
MUT="python3 $VEC/mutate.py"
BASE=$VEC/base-vault
PASS=$VEC/base-vault.pass
lines=0

apply_patch() {
    target=""
    ops=""
    while IFS= read -r l; do
        case $l in
        '#'* | '') ;;
        'file '*) target=$V/${l#file } ;;
        delete) rm -f "$target" ;;
        'swapwith '*)
            mv "$target" "$T/swap" && mv "$V/${l#swapwith }" "$target" &&
                mv "$T/swap" "$V/${l#swapwith }" ;;
        'copyfrom '*) cp "$V/${l#copyfrom }" "$target" ;;
        *) ops="$ops $l" ;;
        esac
    done <"$1"
    [ -z "$ops" ] || $MUT "$target" $ops
}

while IFS='|' read -r case cmd want substr; do
    case=$(echo $case)
    case $case in '#'* | '') continue ;; esac
    cmd=$(echo $cmd)
    want=$(echo $want)
    substr=$(echo "$substr" | sed -e 's/^ *//' -e 's/ *$//')
    lines=$((lines + 1))
    rm -rf "$V" "$T/out"
    cp -a "$BASE" "$V"
    chmod -R u+w "$V"
    mkdir "$T/out"
    case $case in
    base) ;;
    *.patch) apply_patch "$VEC/invalid/$case" ;;
    config-*) cp "$VEC/invalid/$case" "$V/config" ;;
    recovery-code-*) ;;
    *) fail "$case: unknown kind of case" && continue ;;
    esac
    args=$(echo "$cmd" | sed -e "s|OUT|$T/out/o|g" -e "s|CASE|$VEC/invalid/$case|g")
    st=0
    "$PQV" -v "$V" --passphrase-file "$PASS" $args >"$OUT" 2>"$ERR" </dev/null || st=$?
    if [ "${VECTORS_SHOW:-0}" = 1 ]; then
        echo "# $case | $cmd | $st | $(cat "$ERR" "$OUT" | head -n 3 | tr '\n' ' ')"
    fi
    if [ "$st" -eq "$want" ] && { [ -z "$substr" ] || cat "$OUT" "$ERR" | grep -qF -- "$substr"; }; then
        ok "$case: $cmd: exit $want, '$substr'"
    else
        fail "$case: $cmd: exit $st (want $want), output lacks '$substr'"
    fi
    if [ "$want" -ne 0 ] && [ -n "$(ls -A "$T/out")" ]; then
        fail "$case: $cmd: left $(ls -A "$T/out") behind"
    fi
    if grep -qF "$(head -n 1 "$PASS")" "$OUT" "$ERR"; then
        fail "$case: $cmd: the passphrase appears in the output"
    fi
done <"$VEC/invalid/EXPECTED"
check_ok "EXPECTED lists cases ($lines)" test "$lines" -ge 40
# Every case in the corpus has a line.
for f in "$VEC"/invalid/*; do
    b=$(basename "$f")
    [ "$b" = EXPECTED ] && continue
    check_ok "$b is listed in EXPECTED" grep -q "^$b " "$VEC/invalid/EXPECTED"
done
finish
