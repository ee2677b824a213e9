# tests/cli/roundtrip.sh: trees round-trip exactly.  Debian's
# /usr/share/doc (symbolic links included) and a tree with hard links, a
# 1 GiB sparse file, extended attributes, owners and odd modes are added
# and restored; a listing of every name (kind, mode, owner, size, mtime in
# nanoseconds, link target, content hash, extended attributes, hard-link
# classes) of the restored tree equals the source's.
. "$(dirname "$0")/lib.sh"

init_vault || finish

# listing DIR: one line per name below DIR, sorted; hard links named by
# the first name of their class; a directory's size (its blocks, which
# depend on its history) left out.
listing() {
    (cd "$1" && find . -mindepth 1 -printf '%P\t%y\t%m\t%U:%G\t%s\t%T@\t%l\t%i\n' | sort |
        awk -F '\t' '{ if ($2 == "d") $5 = "-";
                      if ($2 == "f") { if ($8 in first) cls = first[$8]; else { first[$8] = $1; cls = "-" } }
                      else cls = "-"; $8 = cls; print }' OFS='\t' >"$2.names")
    (cd "$1" && find . -type f -printf '%P\0' | sort -z | xargs -0 -r md5sum) >"$2.md5"
    (cd "$1" && getfattr -R -P -d -m - --absolute-names . 2>/dev/null | grep -v '^$' ) >"$2.xattr"
}
same_listing() {
    if cmp -s "$1.names" "$2.names" && cmp -s "$1.md5" "$2.md5" && cmp -s "$1.xattr" "$2.xattr"; then
        ok "$3"
    else
        fail "$3"
        for k in names md5 xattr; do
            diff "$1.$k" "$2.$k" | sed -n '1,6s/^/#   /p'
        done
    fi
}

# ---- /usr/share/doc ----
if [ -d /usr/share/doc ] && [ -n "$(find /usr/share/doc -type l | head -n 1)" ]; then
    expect_status 0 pq add /usr/share/doc --name doc
    expect_status 0 pq get doc -o "$T/doc.out"
    listing /usr/share/doc "$T/doc.src"
    listing "$T/doc.out/doc" "$T/doc.got"
    same_listing "$T/doc.src" "$T/doc.got" "/usr/share/doc round-trips (names, kinds, modes, owners, sizes, mtimes, link targets, contents)"
    nlinks=$(find /usr/share/doc -type l | wc -l)
    check_ok "its $nlinks symbolic links restored as links" \
        [ "$(find "$T/doc.out/doc" -type l | wc -l)" -eq "$nlinks" ]
else
    echo "# SKIP - no /usr/share/doc with symbolic links here"
fi

# ---- hard links, a 1 GiB sparse file, extended attributes, owners ----
S=$T/special
mkdir -p "$S/a/b" "$S/empty-dir"
printf 'shared\n' >"$S/a/one"
ln "$S/a/one" "$S/a/b/two"
ln "$S/a/one" "$S/three"
printf 'pair\n' >"$S/p1"
ln "$S/p1" "$S/a/p2"
truncate -s 1G "$S/sparse"
printf 'start' | dd of="$S/sparse" conv=notrunc status=none
printf 'middle' | dd of="$S/sparse" bs=1 seek=536870912 conv=notrunc status=none
printf 'end' | dd of="$S/sparse" bs=1 seek=1073741821 conv=notrunc status=none
head -c 300000 /dev/urandom >"$S/random"
setfattr -n user.colour -v blue "$S/a/one"
setfattr -n user.empty "$S/random"
setfattr -n user.binary -v 0x00ff10 "$S/a"
ln -s ../random "$S/a/link"
ln -s /nonexistent/target "$S/dangling"
chmod 4755 "$S/random"
chmod 1777 "$S/empty-dir"
chmod 0400 "$S/p1"
if [ "$(id -u)" -eq 0 ]; then
    setfattr -n trusted.pqvault -v root-only "$S/a/one"
    chown 1234:5678 "$S/a/b/two"
    chown -h 4321:8765 "$S/a/link"
    chown 99:99 "$S/empty-dir"
    chmod 4755 "$S/random"   # chown clears setuid
fi
touch -d '2021-02-03 04:05:06.789' "$S/random" "$S/a/b" "$S/empty-dir"
touch -h -d '2020-01-01 00:00:00.5' "$S/a/link"
expect_status 0 pq add "$S"
expect_status 0 pq list -l special
expect_stdout_contains "special/a/link"
expect_status 0 pq get special -o "$T/special.out"
listing "$S" "$T/sp.src"
listing "$T/special.out/special" "$T/sp.got"
same_listing "$T/sp.src" "$T/sp.got" "hard links, sparse file, xattrs, owners, setuid, sticky round-trip"
check_ok "the 1 GiB sparse file is restored sparse (under 1 MiB allocated)" \
    [ "$(stat -c %b "$T/special.out/special/sparse")" -lt 2048 ]
check_ok "three names of one file restored as one inode" \
    [ "$(stat -c %h "$T/special.out/special/a/one")" -eq 3 ]
expect_status 0 pq list --json special/sparse
expect_stdout_contains '"holes": 10737'
# With few descriptors a tree restore makes smaller batches.
expect_status 0 sh -c "ulimit -n 64; exec \"\$0\" -v \"\$1\" --passphrase-file \"\$2\" get special -o \"\$3\"" \
    "$PQV" "$V" "$PF" "$T/special.lowfd"
listing "$T/special.lowfd/special" "$T/sp.low"
same_listing "$T/sp.src" "$T/sp.low" "the same under ulimit -n 64"
# Restoring as root applies owners; a restore without them is a user's.
finish
