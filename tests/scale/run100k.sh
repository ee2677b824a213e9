#!/bin/sh
# tests/scale/run100k.sh [N]: a vault of N (default 100000) small records:
# add (as one directory tree), list, get of a few names and of the whole
# tree, rm of a subtree, check --read-data; each must stay correct, and peak
# RSS (GNU time's "Maximum resident set size") is reported per command.
# Not run by `make test` (minutes at 100,000); figures in docs/TESTING.md.
# Usage: sh tests/scale/run100k.sh [N]   (PQV_BIN: the binary to use)
set -u
N=${1:-100000}
PQV=${PQV_BIN:-$PWD/build/pqvault}
T=$(mktemp -d "${TMPDIR:-/tmp}/pqvscale.XXXXXX")
trap 'rm -rf "$T"' EXIT
V=$T/vault
printf 'scale test\n' >"$T/pass"
pq() { "$PQV" -v "$V" --passphrase-file "$T/pass" -q "$@"; }
fails=0
measure() { # measure LABEL ARGS...: run pqvault ARGS, print seconds and peak RSS
    label=$1
    shift
    /usr/bin/time -f "%e %M" -o "$T/time" "$PQV" -v "$V" --passphrase-file "$T/pass" -q "$@" \
        >"$T/out" 2>"$T/err"
    st=$?
    read -r secs kb <"$T/time" 2>/dev/null || { secs=?; kb=?; }
    printf '%-28s exit %d  %8s s  peak RSS %8s KiB\n' "$label" "$st" "$secs" "$kb"
    [ "$st" -eq 0 ] || { fails=$((fails + 1)); sed -n 1,3p "$T/err"; }
}
pq init --kdf t=1,m=256,p=1 --kem FrodoKEM-640-SHAKE >/dev/null || exit 1
echo "making $N files"
mkdir -p "$T/tree"
i=0
while [ $i -lt $N ]; do
    d=$T/tree/d$((i / 1000))
    [ -d "$d" ] || mkdir "$d"
    : $((i += 1))
done
python3 - "$T/tree" "$N" <<'PY'
import sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open('%s/d%d/f%d' % (root, i // 1000, i), 'w') as f:
        f.write('file %d\n' % i)
PY
cd "$T"
measure "add tree ($N files)" add tree
measure "list" list
lines=$(wc -l <"$T/out")
[ "$lines" -ge "$N" ] || { echo "list: $lines lines, expected >= $N"; fails=$((fails + 1)); }
measure "get one name" get tree/d0/f7 -o "$T/one"
grep -qx 'file 7' "$T/one" || { echo "get: wrong content"; fails=$((fails + 1)); }
measure "check --read-data" check --read-data
measure "get tree" get tree -o "$T/restored"
diff -r "$T/tree" "$T/restored/tree" >/dev/null || { echo "restored tree differs"; fails=$((fails + 1)); }
measure "rm tree/d1" rm tree/d1
measure "list after rm" list
after=$(wc -l <"$T/out")
echo "records listed: $lines before rm, $after after"
measure "check after rm" check
echo "failures: $fails"
[ "$fails" -eq 0 ]
