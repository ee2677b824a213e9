# tests/cli/mount.sh: pqvault mount (issue 22) through the kernel's FUSE,
# as root with /dev/fuse and fusermount3 (else SKIP, with the reason).
# A tree of every file kind (small, 5 MiB random, sparse, empty, hard links,
# a symbolic link, extended attributes, odd owners, times with nanoseconds)
# stored in two snapshots, mounted: the command returns when the mount
# answers (ls right after it, no sleep); contents byte-exact (cmp), holes
# by SEEK_DATA/SEEK_HOLE, stat's mode, owner, mtime in ns, link counts,
# blocks (du); snapshots/ and latest, an earlier snapshot's content,
# versions/NAME, --at; writes, mkdir, unlink refused with EROFS; a damaged
# pack gives EIO for its file only (reported once, naming it) while another
# file reads; fusermount3 -u, SIGTERM and SIGINT end the server with exit
# 0 and no mount left; the daemon exits 0 after fusermount3 -u (waited for
# as a subreaper: no sleep); a vault written while mounted (the mount
# keeps its state until remounted); a rolled-back vault refused; a vault
# with no extended attribute anywhere says it supports none.  A trap
# unmounts whatever is left.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "# SKIP - mount.sh: needs root (mounts through /dev/fuse)"
    exit 0
fi
if [ ! -c /dev/fuse ]; then
    echo "# SKIP - mount.sh: /dev/fuse is missing"
    exit 0
fi
if ! command -v fusermount3 >/dev/null 2>&1; then
    echo "# SKIP - mount.sh: fusermount3 is missing (Debian package fuse3)"
    exit 0
fi
if "$PQV" mount --help 2>&1 | grep -q "built without FUSE" ||
   "$PQV" -v "$T/none" mount "$T" 2>&1 | grep -q "built without FUSE"; then
    echo "# SKIP - mount.sh: $PQV was built without libfuse3 (libfuse3-dev missing at build time)"
    exit 0
fi

M=$T/mnt
M2=$T/mnt2
mkdir -p "$M" "$M2"
# Whatever the test leaves mounted is unmounted on exit (lazily: a hung
# server cannot hold the trap), then lib.sh's cleanup.
unmount_all() {
    for d in "$M" "$M2"; do
        if grep -q " $d fuse" /proc/mounts 2>/dev/null; then
            fusermount3 -u -z "$d" 2>/dev/null || umount -l "$d" 2>/dev/null
        fi
    done
}
trap 'unmount_all; cleanup' EXIT
mounted() { grep -q " $1 fuse" /proc/mounts; }

# start_fg MNT ARGS...: pqvault mount -f MNT in the background ($FG_PID),
# its stderr into a FIFO the shell holds open read-write on fd 3 (never a
# broken pipe); returns once the first line ("... mounted") is read: the
# mount exists, and the kernel holds requests until FUSE's INIT is answered.
start_fg() {
    mnt=$1
    shift
    rm -f "$T/fifo"
    mkfifo "$T/fifo"
    exec 3<>"$T/fifo"
    # (A background job of sh ignores SIGINT, and pqvault keeps a signal
    # its caller ignores ignored: set back to the default before the exec.)
    python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$PQV" -v "$V" --passphrase-file "$PF" "$@" mount -f "$mnt" \
        2>"$T/fifo" 3>&- &
    FG_PID=$!
    BG_PIDS="$BG_PIDS $FG_PID"
    IFS= read -r FG_LINE <&3
}
# fg_stderr: the rest of the foreground server's stderr (it has exited).
fg_stderr() {
    echo "--end--" >&3
    while IFS= read -r l <&3; do
        [ "$l" = "--end--" ] && break
        printf '%s\n' "$l"
    done
    exec 3<&-
}

cd "$T" || exit 1
S=src
mkdir -p "$S/dir/sub" "$S/empty"
printf 'hello, mount\n' >"$S/small"
head -c $((5 * 1048576)) /dev/urandom >"$S/big"
: >"$S/zero"
# sparse: 16 MiB, data at 4 MiB (8 KiB) and in the last 100 bytes.
truncate -s $((16 * 1048576)) "$S/sparse"
head -c 8192 /dev/urandom | dd of="$S/sparse" bs=4096 seek=1024 conv=notrunc 2>/dev/null
head -c 100 /dev/urandom | dd of="$S/sparse" bs=1 seek=$((16 * 1048576 - 100)) conv=notrunc 2>/dev/null
printf 'linked\n' >"$S/dir/h1"
ln "$S/dir/h1" "$S/dir/sub/h2"
ln "$S/dir/h1" "$S/h3"
ln -s '../small' "$S/dir/sl"
ln -s 'nowhere/at all' "$S/dangling"
mkfifo -m 0620 "$S/fifo"
mknod -m 0600 "$S/null-dev" c 1 3
setfattr -n user.colour -v blue "$S/small"
setfattr -n user.empty "$S/small"
chown 1234:5678 "$S/small"
chmod 0640 "$S/small"
chmod 4755 "$S/dir/sub"
printf 'version one\n' >"$S/changing"
touch -d '2021-02-03 04:05:06.123456789' "$S/small" "$S/changing"
touch -h -d '2020-01-01 00:00:00.5' "$S/dir/sl"
touch -d '2019-06-07 08:09:10.987654321' "$S/dir/sub"

init_vault || finish
expect_status 0 pq add "$S"
printf 'version two, longer\n' >"$S/changing"
expect_status 0 pq add "$S"
E2=$(pq log --json 2>/dev/null | python3 -c '
import json, sys
print(max(s["epoch"] for s in json.load(sys.stdin)))' 2>/dev/null)
check_ok "log gives the newest epoch ($E2)" test -n "$E2"
E1=$((E2 - 1))

# ---- the daemon: returns when ls works ----
expect_status 0 pq mount "$M"
if ! mounted "$M"; then
    fail "pqvault mount returned 0 but $M is not mounted"
    finish
fi
ls "$M" >"$T/ls" 2>"$ERR"
check_ok "ls right after mount returned: the root answers (src, snapshots, versions)" \
    test "$(sort "$T/ls" | tr '\n' ' ')" = "snapshots src versions "
R=$M/$S

# ---- contents ----
# contents_checks HOW: every file byte-exact, random preads, links, holes;
# run with the zero-message opens this kernel offers (the view keeps each
# file open itself) and again with FUSE's OPEN and RELEASE.
contents_checks() {
    how=$1
    for f in small big zero sparse dir/h1 dir/sub/h2 h3 changing; do
        check_ok "cmp $f through the mount ($how)" cmp "$S/$f" "$R/$f"
    done
    check_ok "cat of the 5 MiB file piped equals it ($how)" sh -c "cat '$R/big' | cmp - '$S/big'"
    # Random offsets of the 5 MiB file (reads across chunk boundaries).
    python3 - "$S/big" "$R/big" >"$T/rand" 2>&1 <<'EOF'
import os, random, sys
a = open(sys.argv[1], 'rb').read()
fd = os.open(sys.argv[2], os.O_RDONLY)
r = random.Random(22)
for _ in range(300):
    off = r.randrange(0, len(a) + 10)
    n = r.choice([1, 4096, 65536, 300000])
    got = os.pread(fd, n, off)
    if got != a[off:off + n]:
        print("mismatch at", off, n)
        sys.exit(1)
print("ok")
EOF
    check_ok "300 random preads of the 5 MiB file byte-exact ($how)" grep -qx ok "$T/rand"
    check_ok "readlink dir/sl ($how)" test "$(readlink "$R/dir/sl")" = "../small"
    check_ok "readlink dangling ($how)" test "$(readlink "$R/dangling")" = "nowhere/at all"
    check_ok "dir/sl followed ($how)" cmp "$S/small" "$R/dir/sl"

    # ---- holes ----
    python3 - "$R/sparse" >"$T/seek" 2>&1 <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
MiB = 1048576
res = [os.lseek(fd, 0, os.SEEK_DATA), os.lseek(fd, 4 * MiB, os.SEEK_HOLE),
       os.lseek(fd, 4 * MiB + 8192, os.SEEK_DATA), os.lseek(fd, 0, os.SEEK_HOLE)]
try:
    os.lseek(fd, 16 * MiB, os.SEEK_DATA)
    res.append("no ENXIO")
except OSError as e:
    res.append(e.errno == 6 and "ENXIO" or str(e))
print(" ".join(str(x) for x in res))
EOF
    # Extents have the vault's granularity (4 KiB blocks): the data at 4 MiB
    # starts there, ends at or after 4 MiB + 8 KiB; the next data is the tail.
    seek=$(cat "$T/seek")
    set -- $seek
    check_ok "SEEK_DATA from 0 = 4 MiB ($seek) ($how)" test "$1" -eq 4194304
    check_ok "SEEK_HOLE from 4 MiB >= 4 MiB + 8 KiB, below the tail ($how)" test "$2" -ge 4202496 -a "$2" -lt 16777116
    check_ok "SEEK_DATA after the first data: the tail's block ($how)" test "$3" -ge 16773120 -a "$3" -le 16777116
    check_ok "SEEK_HOLE from 0 = 0 (a hole first) ($how)" test "$4" -eq 0
    check_ok "SEEK_DATA at the end: ENXIO ($how)" test "$5" = ENXIO
}
contents_checks "zero-message opens"
# The same through FUSE's OPEN and RELEASE (a kernel without zero-message
# opens), then the default mount again.
expect_status 0 fusermount3 -u "$M"
PQVAULT_TEST_MOUNT_OPEN=1 expect_status 0 "$PQV_TEST" -v "$V" --passphrase-file "$PF" mount "$M"
contents_checks "OPEN and RELEASE"
expect_status 0 fusermount3 -u "$M"
expect_status 0 pq mount "$M"

bm=$(stat -c %b "$R/sparse")
check_ok "sparse: st_blocks counts the data only ($bm blocks of 512)" test "$bm" -ge 16 -a "$bm" -le 64
bb=$(stat -c %b "$R/big")
check_ok "big: st_blocks covers 5 MiB ($bb)" test "$bb" -ge 10240 -a "$bb" -le 10400
du=$(du -sk "$R" | cut -f1)
dus=$(du -sk "$S" | cut -f1)
check_ok "du -sk of the mounted tree ($du) near the source's ($dus)" \
    test "$du" -ge $((dus - 64)) -a "$du" -le $((dus + 64))

# ---- metadata ----
for f in small big sparse dir dir/sub dir/h1 dir/sub/h2 h3 dir/sl dangling empty zero changing \
    fifo null-dev; do
    a=$(stat -c '%f %u %g %h %s %.9Y %t %T' "$S/$f")
    b=$(stat -c '%f %u %g %h %s %.9Y %t %T' "$R/$f")
    if [ "$f" = dir ] || [ "$f" = dir/sub ] || [ "$f" = empty ]; then
        # Directories: their size and link counts are the mount's own.
        a=$(stat -c '%f %u %g %.9Y' "$S/$f")
        b=$(stat -c '%f %u %g %.9Y' "$R/$f")
        # (A device node's number: %t %T above.)
    fi
    check_ok "stat $f: mode, owner, links, size, mtime in ns ($b)" test "$a" = "$b"
done
check_ok "a device node of the mount opens nothing (nodev)" sh -c '! head -c 1 "$1" >/dev/null 2>&1' sh "$R/null-dev"
i1=$(stat -c %i "$R/dir/h1") i2=$(stat -c %i "$R/dir/sub/h2") i3=$(stat -c %i "$R/h3")
check_ok "hard links share one inode number" test "$i1" = "$i2" -a "$i2" = "$i3"
check_ok "hard links: link count 3" test "$(stat -c %h "$R/h3")" -eq 3
check_ok "small: owner 1234:5678, mode 640" test "$(stat -c '%u:%g %a' "$R/small")" = "1234:5678 640"
check_ok "dir/sub: mode 4755" test "$(stat -c '%a' "$R/dir/sub")" = 4755
sub_links=$(stat -c %h "$R/dir")
check_ok "dir: link count 3 (2 + one subdirectory) ($sub_links)" test "$sub_links" -eq 3
check_ok "getfattr user.colour = blue" \
    test "$(getfattr --only-values -n user.colour "$R/small" 2>/dev/null)" = blue
python3 - "$R/small" "$R/big" >"$T/xattr" 2>&1 <<'EOF'
import os, sys
names = sorted(os.listxattr(sys.argv[1]))
out = [",".join(names), repr(os.getxattr(sys.argv[1], "user.empty")),
       ",".join(os.listxattr(sys.argv[2]))]
try:
    os.getxattr(sys.argv[1], "user.none")
    out.append("found")
except OSError as e:
    out.append(e.errno == 61 and "ENODATA" or str(e))
print("|".join(out))
EOF
check_ok "listxattr, an empty value, none on big, ENODATA ($(cat "$T/xattr"))" \
    test "$(cat "$T/xattr")" = "user.colour,user.empty|b''||ENODATA"
ls -lR "$M" >/dev/null 2>"$ERR"
check_ok "ls -lR of the whole mount works" test ! -s "$ERR"

# ---- history ----
ls "$M/snapshots" >"$T/snaps"
n1=$(printf '%06d' "$E1") n2=$(printf '%06d' "$E2")
check_ok "snapshots/: two EPOCH-TIME directories and latest ($(tr '\n' ' ' <"$T/snaps"))" \
    test "$(grep -c "^$n1-20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z\$\|^$n2-20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z\$\|^latest\$" "$T/snaps")" -eq 3
s1=$(grep "^$n1-" "$T/snaps") s2=$(grep "^$n2-" "$T/snaps")
check_ok "snapshots/latest -> $s2" test "$(readlink "$M/snapshots/latest")" = "$s2"
check_ok "the earlier snapshot holds version one" \
    test "$(cat "$M/snapshots/$s1/$S/changing")" = "version one"
check_ok "the later snapshot (through latest) holds version two" \
    test "$(cat "$M/snapshots/latest/$S/changing")" = "version two, longer"
check_ok "the earlier snapshot's big file equals it" cmp "$S/big" "$M/snapshots/$s1/$S/big"
mkdir -p "$T/get1"
pq -q --at "$E1" get "$S" -o "$T/get1" >/dev/null 2>&1
check_ok "snapshot $s1 equals get --at $E1 (diff -r; the FIFO and device node by stat above)" diff -r --no-dereference -x fifo -x null-dev "$T/get1" "$M/snapshots/$s1"
# versions/: every distinct version of each file beside its siblings,
# STEM.SNAPSHOT.EXT; versions/NAME/ (looked up, not listed) holds NAME's.
ls "$M/versions/$S" >"$T/versall"
check_ok "versions/src lists changing's two versions and small's one ($(tr '\n' ' ' <"$T/versall"))" \
    sh -c 'grep -qx "changing.$1" "$3" && grep -qx "changing.$2" "$3" && grep -qx "small.$1" "$3" &&
        test "$(grep -c "^changing\." "$3")" -eq 2 && test "$(grep -c "^small\." "$3")" -eq 1' \
    sh "$s1" "$s2" "$T/versall"
check_ok "versions/src lists no directory of a file's own (dir, empty and sub only)" \
    test "$(find "$M/versions/$S" -type d | sed "s|^$M/versions/||" | sort | tr '\n' ' ')" = \
        "src src/dir src/dir/sub src/empty "
ls "$M/versions/$S/changing" >"$T/vers"
check_ok "versions/.../changing/: its two versions named by epoch ($(tr '\n' ' ' <"$T/vers"))" \
    test "$(cat "$T/vers" | tr '\n' ' ')" = "changing.$s1 changing.$s2 "
check_ok "versions: the first is version one" \
    test "$(cat "$M/versions/$S/changing/changing.$s1")" = "version one"
check_ok "versions: the second is version two (beside its siblings)" \
    test "$(cat "$M/versions/$S/changing.$s2")" = "version two, longer"
check_ok "versions/.../small/: one version" test "$(ls "$M/versions/$S/small" | wc -l)" -eq 1
check_ok "versions/.../small: its mtime in ns" \
    test "$(stat -c %.9Y "$M/versions/$S/small/small.$s1")" = "$(stat -c %.9Y "$S/small")"
check_ok "versions/.../big: the extension after the snapshot (big has none: big.$s1)" \
    cmp "$S/big" "$M/versions/$S/big.$s1"
check_ok "versions/.../dir/h1 (a hard link) reads" cmp "$S/dir/h1" "$M/versions/$S/dir/h1.$s1"
# An unchanged file is one inode wherever it shows (diff -r of snapshots
# takes it as the same file); a changed one is not.
i_root=$(stat -c %i "$R/big") i_s1=$(stat -c %i "$M/snapshots/$s1/$S/big")
i_v=$(stat -c %i "$M/versions/$S/big.$s1")
check_ok "big: one inode in the root, snapshot $s1 and versions/ ($i_root $i_s1 $i_v)" \
    test "$i_root" = "$i_s1" -a "$i_s1" = "$i_v"
check_ok "changing: snapshot $s1's is another inode than the root's" \
    test "$(stat -c %i "$R/changing")" != "$(stat -c %i "$M/snapshots/$s1/$S/changing")"
check_ok "changing: the root's and versions/...changing.$s2 are one inode" \
    test "$(stat -c %i "$R/changing")" = "$(stat -c %i "$M/versions/$S/changing.$s2")"
check_ok "hard links keep inodes of their own in a snapshot (h1, h2, h3: link count 3)" \
    test "$(stat -c %h "$M/snapshots/$s1/$S/h3")" -eq 3 -a \
        "$(stat -c %i "$M/snapshots/$s1/$S/h3")" != "$i1"
diff -r --no-dereference -x fifo -x null-dev "$M/snapshots/$s1" "$M/snapshots/$s2" >"$T/sdiff" 2>&1
check_ok "diff -r of the two snapshots: changing differs, nothing else ($(head -n 1 "$T/sdiff"))" \
    test "$(grep -c '^diff ' "$T/sdiff")" -eq 1 -a "$(grep -c '^Only' "$T/sdiff")" -eq 0
check_ok "ls -l of snapshots/ answers (link count 1 for the snapshots' roots)" \
    test "$(stat -c %h "$M/snapshots/$s1")" -eq 1

# ---- read-only ----
python3 - "$M" "$R" >"$T/rofs" 2>&1 <<'EOF'
import errno, os, sys
m, r = sys.argv[1], sys.argv[2]
def erofs(f):
    try:
        f()
        return "succeeded"
    except OSError as e:
        return e.errno == errno.EROFS and "EROFS" or errno.errorcode.get(e.errno, str(e))
res = [erofs(lambda: os.open(r + "/small", os.O_WRONLY)),
       erofs(lambda: os.open(r + "/new", os.O_WRONLY | os.O_CREAT, 0o644)),
       erofs(lambda: os.mkdir(r + "/newdir")),
       erofs(lambda: os.unlink(r + "/big")),
       erofs(lambda: os.rename(r + "/big", r + "/big2")),
       erofs(lambda: os.setxattr(r + "/small", "user.x", b"1")),
       erofs(lambda: os.chmod(r + "/small", 0o600)),
       erofs(lambda: os.truncate(r + "/big", 0))]
print(" ".join(res))
EOF
check_ok "write, create, mkdir, unlink, rename, setxattr, chmod, truncate: EROFS ($(cat "$T/rofs"))" \
    test "$(cat "$T/rofs")" = "EROFS EROFS EROFS EROFS EROFS EROFS EROFS EROFS"

# ---- a vault written while mounted: the mount keeps its state ----
printf 'added later\n' >"$S/later"
expect_status 0 pq add "$S"
check_ok "the mount still shows the state it mounted (no 'later')" test ! -e "$R/later"
check_ok "... and its snapshots" test "$(ls "$M/snapshots" | wc -l)" -eq 3

# ---- fusermount3 -u: the daemon exits 0 ----
expect_status 0 fusermount3 -u "$M"
check_ok "fusermount3 -u: not mounted any more" sh -c "! grep -q ' $M fuse' /proc/mounts"

SRC=$S
export SRC
# The daemon waited for: a Python subreaper runs pqvault mount, the ls,
# fusermount3 -u, then waits for the orphaned server and prints its status.
python3 - "$PQV" "$V" "$PF" "$M" >"$T/reaper" 2>&1 <<'EOF'
import ctypes, os, subprocess, sys
pqv, v, pf, m = sys.argv[1:5]
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    print("prctl failed"); sys.exit(0)
r = subprocess.run([pqv, "-v", v, "--passphrase-file", pf, "mount", m])
print("mount", r.returncode)
print("ls", " ".join(sorted(os.listdir(m))))
print("later", os.path.exists(m + "/" + os.environ["SRC"] + "/later"))
print("umount", subprocess.run(["fusermount3", "-u", m]).returncode)
pid, st = os.wait()
print("daemon", os.waitstatus_to_exitcode(st))
EOF
check_ok "daemon: mount 0, ls, the new epoch after a remount, unmount, server exits 0 ($(tr '\n' ';' <"$T/reaper"))" \
    test "$(tr '\n' ';' <"$T/reaper")" = "mount 0;ls snapshots src versions;later True;umount 0;daemon 0;"
unset SRC

# ---- --at ----
expect_status 0 pq --at "$E1" mount "$M"
check_ok "--at $E1: the root is snapshot $E1 (version one)" \
    test "$(cat "$R/changing" 2>/dev/null)" = "version one"
check_ok "--at $E1: no 'later'" test ! -e "$R/later"
fusermount3 -u "$M"

# ---- foreground: fusermount3 -u, SIGTERM, SIGINT ----
start_fg "$M"
check_ok "-f: says it is mounted ($FG_LINE)" sh -c "printf '%s' \"\$1\" | grep -q 'mounted (read-only)'" - "$FG_LINE"
check_ok "-f: ls works once it said so" cmp "$S/small" "$R/small"
fusermount3 -u "$M"
wait "$FG_PID"
st=$?
fg_stderr >/dev/null
check_ok "-f, fusermount3 -u: the server exits 0 ($st)" test "$st" -eq 0
check_ok "-f, fusermount3 -u: no mount left" sh -c "! grep -q ' $M fuse' /proc/mounts"

for sig in TERM INT; do
    start_fg "$M"
    cat "$R/big" >/dev/null
    kill -"$sig" "$FG_PID"
    wait "$FG_PID"
    st=$?
    fg_stderr >/dev/null
    check_ok "-f, SIG$sig while in use: exit 0 ($st)" test "$st" -eq 0
    check_ok "-f, SIG$sig: no mount left" sh -c "! grep -q ' $M fuse' /proc/mounts"
done

# ---- listings: files without attributes until the caller looks one up ----
# (docs/DESIGN.md "Files listed without attributes until a caller stats":
# the test build writes the FUSE layer's counts to
# PQVAULT_TEST_MOUNT_COUNTS when the session ends.)  walk.py lists a tree
# with scandir alone (names, types and numbers from the listing, no stat),
# stat.py stats what walk.py printed; "first" stats a file before its walk.
cat >"$T/walk.py" <<'PY'
import os, sys
def walk(d):
    for e in sorted(os.scandir(d), key=lambda e: e.name):
        kind = "d" if e.is_dir(follow_symlinks=False) else "l" if e.is_symlink() else "f"
        print(kind, e.inode(), e.path)
        if kind == "d":
            walk(e.path)
if len(sys.argv) > 2:
    os.lstat(sys.argv[2])
walk(sys.argv[1])
PY
cat >"$T/stat.py" <<'PY'
import os, stat, sys
for line in sys.stdin:
    kind, ino, path = line.rstrip("\n").split(" ", 2)
    st = os.lstat(path)
    real = "d" if stat.S_ISDIR(st.st_mode) else "l" if stat.S_ISLNK(st.st_mode) else "f"
    print(real, st.st_ino, path)
PY
# count NAME: that count of the FUSE layer's file.
count() { awk -v k="$1" '$1 == k { print $2 }' "$T/counts"; }
# counted_mount ARGS...: the test build mounted in the foreground, its
# counts kept; ends with fusermount3 -u and the server waited for.
keep_pqv=$PQV
PQV=$PQV_TEST
export PQVAULT_TEST_MOUNT_COUNTS="$T/counts"
rm -f "$T/counts"
start_fg "$M"
python3 "$T/walk.py" "$R" >"$T/walk1"
# (The kernel cached walk1's listings; a caller that stats, here a file
# before its walk, gets them again from the view, with attributes.)
python3 "$T/walk.py" "$R" "$R/small" >"$T/walk3"
python3 "$T/stat.py" <"$T/walk1" >"$T/stat1"
fusermount3 -u "$M"
wait "$FG_PID"
fg_stderr >/dev/null
nondirs=$(grep -c -v '^d' "$T/walk1")
dirs=$(grep -c '^d' "$T/walk1")
check_ok "a listing walked with no stat: every name ($nondirs files and links, $dirs directories)" \
    test "$nondirs" -ge 10 -a "$dirs" -ge 3
check_ok "names given without attributes: the number and type each has (stat after the walk)" \
    cmp "$T/walk1" "$T/stat1"
check_ok "a walk that never looked a file up got its files without attributes ($(count names_only) of $nondirs)" \
    test "$(count names_only)" -ge "$nondirs"
check_ok "the listings cached without attributes dropped when a caller that stats came ($(count listings_dropped))" \
    test "$(count listings_dropped)" -ge 2
check_ok "and listed again with attributes for a walk after a stat ($(count with_attrs))" \
    test "$(count with_attrs)" -ge "$nondirs"
check_ok "that walk: the same names, numbers and types" cmp "$T/walk1" "$T/walk3"
rm -f "$T/counts"
start_fg "$M"
python3 "$T/walk.py" "$R" "$R/small" >"$T/walk2"
python3 "$T/stat.py" <"$T/walk2" >"$T/stat2"
fusermount3 -u "$M"
wait "$FG_PID"
fg_stderr >/dev/null
check_ok "a walk after a stat: the same names, numbers and types" cmp "$T/walk1" "$T/walk2"
check_ok "a walk after a stat: numbers and types as stat gives" cmp "$T/walk2" "$T/stat2"
check_ok "a caller that looked a file up gets every file's attributes in its listings ($(count with_attrs), $(count names_only) without)" \
    test "$(count names_only)" -eq 0 -a "$(count with_attrs)" -ge $((nondirs + dirs))
unset PQVAULT_TEST_MOUNT_COUNTS
PQV=$keep_pqv

# ---- damage stays local ----
V0=$V
V=$T/vault2
init_vault || finish
mkdir -p "d2"
head -c $((3 * 1048576)) /dev/urandom >"d2/bad"
head -c $((3 * 1048576)) /dev/urandom >"d2/good"
expect_status 0 pq add "d2/bad"
find "$V/packs" -type f | sort >"$T/packs1"
cp -a "$V" "$T/vault2-old"
expect_status 0 pq add "d2/good"
badpack=$(head -n 1 "$T/packs1")
check_ok "the first add wrote one pack" test "$(wc -l <"$T/packs1")" -eq 1
flip_byte "$badpack" 100000
start_fg "$M2"
R2=$M2
check_ok "damaged pack: the other file reads fine" cmp "d2/good" "$R2/good"
# A vault with no extended attribute anywhere says it has none: the kernel
# stops asking (EOPNOTSUPP, alias ENOTSUP, from then on); cp -a copies as ever.
python3 - "$R2/good" "$R2" >"$T/noxattr" 2>&1 <<'EOF'
import errno, os, sys
f, d = sys.argv[1], sys.argv[2]
asks = (lambda: os.listxattr(f), lambda: os.listxattr(d), lambda: os.listxattr(f),
        lambda: os.getxattr(f, "user.x"))
def answer(ask):
    try:
        return "answered:%r" % (ask(),)
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e))
print(" ".join(answer(a) for a in asks))
EOF
check_ok "no extended attribute anywhere: not supported ($(cat "$T/noxattr"))" \
    test "$(cat "$T/noxattr")" = "ENOTSUP ENOTSUP ENOTSUP ENOTSUP"
check_ok "no extended attribute anywhere: cp -a copies" cp -a "$R2/good" "$T/good-copy"
check_ok "no extended attribute anywhere: the copy is byte-exact" cmp "d2/good" "$T/good-copy"
python3 - "$R2/bad" >"$T/eio" 2>&1 <<'EOF'
import errno, os, sys
out = []
for _ in range(2):
    try:
        with open(sys.argv[1], 'rb') as f:
            f.read()
        out.append("read")
    except OSError as e:
        out.append(errno.errorcode.get(e.errno, str(e)))
print(" ".join(out))
EOF
check_ok "damaged pack: reading its file gives EIO, twice ($(cat "$T/eio"))" \
    test "$(cat "$T/eio")" = "EIO EIO"
check_ok "damaged pack: the good file still reads" cmp "d2/good" "$R2/good"
check_ok "damaged pack: stat of the bad file still works" test "$(stat -c %s "$R2/bad")" -eq $((3 * 1048576))
kill -TERM "$FG_PID"
wait "$FG_PID"
st=$?
fg_stderr >"$T/fgerr"
check_ok "damaged pack: the server exits 0 ($st)" test "$st" -eq 0
n=$(grep -c "mount: bad: " "$T/fgerr")
check_ok "damaged pack: reported once, naming the file ($n: $(head -n 1 "$T/fgerr"))" test "$n" -eq 1
check_ok "damaged pack: the good file not reported" sh -c "! grep -q "mount: good" '$T/fgerr'"

# ---- a rollback of the storage is refused, as by every reading command ----
mv "$V" "$T/vault2-new"
cp -a "$T/vault2-old" "$V"
expect_status 4 pq mount "$M2"
expect_stderr_contains "rollback"
check_ok "rolled back: nothing mounted" sh -c "! grep -q ' $M2 fuse' /proc/mounts"
expect_status 4 pq mount -f "$M2"
check_ok "rolled back, -f: nothing mounted" sh -c "! grep -q ' $M2 fuse' /proc/mounts"
V=$V0

# ---- a large file streams through the page cache ----
# (docs/DESIGN.md, "A large file streams through": read from start to end,
# a file of 64 MiB or more keeps only about its last 16-24 MiB behind the
# reader in the kernel's page cache; a smaller file stays cached whole.
# fincore counts the file's pages in the page cache.)
V0=$V
V=$T/vault3
init_vault || finish
mkdir -p d3
# long: 96 MiB, mid: 40 MiB, both sparse: 64 KiB of random data every 8 MiB.
python3 - d3/long d3/mid <<'EOF'
import os, sys
for path, size in ((sys.argv[1], 96 << 20), (sys.argv[2], 40 << 20)):
    with open(path, 'wb') as f:
        f.truncate(size)
        for off in range(0, size, 8 << 20):
            f.seek(off)
            f.write(os.urandom(65536))
EOF
expect_status 0 pq add d3
expect_status 0 pq mount "$M2"
cached() { fincore -b -n -o RES "$1" | tr -d ' '; }
check_ok "96 MiB file: byte-exact through the mount" cmp d3/long "$M2/d3/long"
r=$(cached "$M2/d3/long")
check_ok "96 MiB file read whole: 8-32 MiB of it left in the page cache ($r bytes)" \
    test "$r" -ge $((8 << 20)) -a "$r" -le $((32 << 20))
check_ok "96 MiB file: byte-exact read again" cmp d3/long "$M2/d3/long"
check_ok "40 MiB file: byte-exact through the mount" cmp d3/mid "$M2/d3/mid"
r=$(cached "$M2/d3/mid")
check_ok "40 MiB file read whole: all of it in the page cache ($r bytes)" test "$r" -ge $((40 << 20))
# A mapping of the large file stays right while a reader's pass drops the
# pages it maps (they are read again).
python3 - d3/long "$M2/d3/long" >"$T/mapped" 2>&1 <<'EOF'
import mmap, subprocess, sys
src = open(sys.argv[1], 'rb').read()
with open(sys.argv[2], 'rb') as f:
    mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    spots = [0, 8 << 20, 88 << 20]
    before = [mm[s:s + 65536] for s in spots]
    subprocess.run(["cat", sys.argv[2]], stdout=subprocess.DEVNULL, check=True)
    after = [mm[s:s + 65536] for s in spots]
    want = [src[s:s + 65536] for s in spots]
    print("ok" if before == want and after == want else "mismatch")
EOF
check_ok "a mapping of the 96 MiB file reads right after a pass drops its pages ($(cat "$T/mapped"))" \
    grep -qx ok "$T/mapped"
expect_status 0 fusermount3 -u "$M2"
V=$V0

# ---- usage ----
expect_status 2 pq mount
expect_status 2 pq mount "$M" "$M2"
expect_status 2 pq mount --cache-size 1M "$M"
expect_status 1 pq mount "$T/nonexistent"
check_ok "no mount left behind" sh -c "! grep -q ' $T/' /proc/mounts"

finish
