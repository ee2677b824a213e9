# tests/cli/strace_order.sh: an audit of the real system-call order under
# strace.  For `add` of a small tree (format 2, docs/DESIGN.md section 3):
# every rename or link(2) of a temporary file comes after an fsync of that
# file; every pack is renamed into place before the commit point; the
# commit point is one link(2) of the segment's synced temporary to its
# name, after the fsync of each pack directory that received packs
# (following its last pack rename) and of the parent of each directory the
# command created; the segments directory is fsynced after the link (the
# barrier), and only then is the local state renamed into place.  For
# `get`, the rename to the destination comes after the fsync of the output
# file and is followed by an fsync of the destination directory.
. "$(dirname "$0")/lib.sh"

if ! command -v strace >/dev/null 2>&1; then
    fail "strace is not installed (scripts/install-deps.sh installs it)"
    finish
fi
if ! strace -f -qq -o /dev/null true 2>/dev/null; then
    echo "# SKIP - system-call audit: strace cannot trace here (ptrace not permitted)"
    finish
fi

init_vault || finish
mkdir -p "$T/tree/sub/deeper"
for f in a b c sub/d sub/deeper/e; do
    head -c 20000 /dev/urandom >"$T/tree/$f"
done
: >"$T/tree/empty"
head -c 9000000 /dev/urandom >"$T/tree/sub/big"   # three packs of at most 4 MiB
# LeakSanitizer cannot run under ptrace: no leak check in traced runs.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
TRACE="openat,write,fsync,fdatasync,syncfs,rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat"

audit() {
    python3 - "$1" "$2" "$V" <<'EOF'
import os, re, sys
mode, log, vault = sys.argv[1], sys.argv[2], sys.argv[3]
pending = {}          # pid -> (call, args, start)
calls = []            # (name, args, result, start, end)
line_re = re.compile(r'^(\d+)\s+(.*)$')
for i, line in enumerate(open(log)):
    m = line_re.match(line.rstrip('\n'))
    if not m:
        continue
    pid, rest = m.groups()
    if rest.endswith('<unfinished ...>'):
        c = re.match(r'(\w+)\((.*) <unfinished \.\.\.>$', rest)
        if c:
            pending[pid] = (c.group(1), c.group(2), i)
        continue
    r = re.match(r'<\.\.\. (\w+) resumed>(.*)\)\s+= (-?\d+)', rest)
    if r:
        name, args, start = pending.pop(pid, (r.group(1), '', i))
        calls.append((name, args + r.group(2), int(r.group(3)), start, i))
        continue
    c = re.match(r'(\w+)\((.*)\)\s+= (-?\d+)', rest)
    if c:
        calls.append((c.group(1), c.group(2), int(c.group(3)), i, i))

def fd_path(args):
    m = re.match(r'\d+<(.*?)>', args)
    return m.group(1) if m else None

def strings(args):
    return re.findall(r'"((?:[^"\\]|\\.)*)"', args)

# renameat2(3</dir>, "old", 3</dir>, "new", flags), and linkat alike: names
# relative to directory descriptors, whose paths strace -y shows.
two_names = re.compile(r'(\S+?)<(.*?)>, "((?:[^"\\]|\\.)*)", (\S+?)<(.*?)>, "((?:[^"\\]|\\.)*)"')
fsyncs = []           # (path, end)
renames = []          # (old, new, start, end)
links = []            # (old, new, start, end)
mkdirs = []           # (path, end)
for name, args, res, start, end in calls:
    if res != 0:
        continue
    if name in ('fsync', 'fdatasync'):
        fsyncs.append((fd_path(args), end))
    elif name == 'syncfs':
        # The whole file system (the test's files are on one): every
        # path synced at once, as a tree get does per batch.
        fsyncs.append(('*syncfs*', end))
    elif name in ('rename', 'link'):
        s = strings(args)
        if len(s) >= 2:
            (renames if name == 'rename' else links).append((s[0], s[1], start, end))
    elif name in ('renameat', 'renameat2', 'linkat'):
        m = two_names.match(args)
        if m:
            (links if name == 'linkat' else renames).append(
                (os.path.join(m.group(2), m.group(3)), os.path.join(m.group(5), m.group(6)), start, end))
    elif name == 'mkdir':
        s = strings(args)
        if s:
            mkdirs.append((s[0], end))
    elif name == 'mkdirat':
        m = re.match(r'(\S+?)<(.*?)>, "((?:[^"\\]|\\.)*)"', args)
        if m:
            mkdirs.append((os.path.join(m.group(2), m.group(3)), end))

problems = []
def synced_between(path, after, before):
    return any((p == path or p == '*syncfs*') and after < e < before for p, e in fsyncs)

for what, moves in (('rename', renames), ('link', links)):
    for old, new, start, end in moves:
        if '.tmp-' in os.path.basename(old) and not synced_between(old, -1, start):
            problems.append('%s of %s without an fsync of it before' % (what, old))

if mode == 'add':
    packs = [r for r in renames if r[1].startswith(vault + '/packs/')]
    segs = [l for l in links if l[1].startswith(vault + '/segments/')]
    if not packs:
        problems.append('no pack renames seen')
    if len(segs) != 1:
        problems.append('%d segment links seen, expected one (one command, one commit)' % len(segs))
    else:
        old, seg, cstart, cend = segs[0]
        last_pack = {}
        for o, new, start, end in packs:
            if start > cstart:
                problems.append('pack %s renamed after the commit point' % os.path.basename(new)[:12])
            d = os.path.dirname(new)
            last_pack[d] = max(last_pack.get(d, -1), end)
        for d, last in sorted(last_pack.items()):
            if not synced_between(d, last, cstart):
                problems.append('segment linked before %s was fsynced' % d)
        for path, end in mkdirs:
            if path.startswith(vault + '/') and end < cstart and \
                    not synced_between(os.path.dirname(path), end, cstart):
                problems.append('%s created, its parent not fsynced before the commit point' % path)
        segdir = os.path.dirname(seg)
        if not synced_between(segdir, cend, 1 << 62):
            problems.append('%s not fsynced after the commit point (no barrier)' % segdir)
        states = [r for r in renames if '/pqvault/' in r[1] and not r[1].startswith(vault + '/')]
        if not states:
            problems.append('no rename of the local state seen')
        for o, new, start, end in states:
            if not synced_between(segdir, cend, start):
                problems.append('local state renamed before the barrier after the commit point')
    print('# add: %d pack renames, %d segment links, %d fsyncs' % (len(packs), len(segs), len(fsyncs)))
else:
    outs = [r for r in renames if '/out/' in r[1]]
    if not outs:
        problems.append('no rename to the destination seen')
    for old, new, start, end in outs:
        if not synced_between(os.path.dirname(new), end, 1 << 62):
            problems.append('no fsync of %s after the rename of %s' % (os.path.dirname(new), new))
    print('# get: %d renames to the destination, %d fsyncs' % (len(outs), len(fsyncs)))
for p in problems[:10]:
    print('PROBLEM ' + p)
sys.exit(1 if problems else 0)
EOF
}

strace -f -y -qq -o "$T/add.trace" -e trace=$TRACE "$PQV" -v "$V" --passphrase-file "$PF" add "$T/tree" --name tree >/dev/null 2>"$ERR"
check_ok "add of a tree under strace" test $? -eq 0
if audit add "$T/add.trace" >"$T/audit.out"; then
    ok "add: temporaries fsynced before rename or link, pack directories before the segment's link (the commit point), the segments directory after it, the local state last"
else
    fail "add: system-call order"
    sed 's/^/#   /' "$T/audit.out"
fi
grep '^#' "$T/audit.out"

# The audit itself: traces without the pack directories' fsyncs, without a
# temporary's fsyncs, without the barrier after the link, without the vault
# directory's fsyncs (the new packs/ not durable), must be refused; so must
# one where the link comes before the packs are renamed.
refuses() {
    if audit add "$T/bad.trace" >"$T/bad.out"; then fail "audit accepted a trace $1"; else
        ok "audit refuses a trace $1"; sed -n "s/^PROBLEM /#   /p" "$T/bad.out" | head -n 2; fi
}
grep -v 'fsync([0-9]*<[^>]*/packs/..>' "$T/add.trace" >"$T/bad.trace"
refuses "without pack-directory fsyncs"
grep -v 'fsync([0-9]*<[^>]*\.tmp-' "$T/add.trace" >"$T/bad.trace"
refuses "without temporary-file fsyncs"
grep -v 'fsync([0-9]*<[^>]*/segments>' "$T/add.trace" >"$T/bad.trace"
refuses "without the segments directory's fsync"
grep -v "fsync([0-9]*<$V>" "$T/add.trace" >"$T/bad.trace"
refuses "without the vault directory's fsyncs"
{ grep 'linkat(' "$T/add.trace"; grep -v 'linkat(' "$T/add.trace"; } >"$T/bad.trace"
refuses "whose segment link comes first"

mkdir -p "$T/out"
strace -f -y -qq -o "$T/get.trace" -e trace=$TRACE "$PQV" -v "$V" --passphrase-file "$PF" get tree/sub/d -o "$T/out/d" >/dev/null 2>"$ERR"
check_ok "get under strace" test $? -eq 0
check_ok "get restored the file" cmp -s "$T/out/d" "$T/tree/sub/d"
if audit get "$T/get.trace" >"$T/audit.out"; then
    ok "get: output fsynced before the rename, destination directory fsynced after"
else
    fail "get: system-call order"
    sed 's/^/#   /' "$T/audit.out"
fi
grep '^#' "$T/audit.out"

# A tree restored by get: the same for each file.
strace -f -y -qq -o "$T/get2.trace" -e trace=$TRACE "$PQV" -v "$V" --passphrase-file "$PF" get tree -o "$T/out/tree" >/dev/null 2>"$ERR"
check_ok "get of a tree under strace" test $? -eq 0
check_ok "get of a tree restored it" diff -r "$T/tree" "$T/out/tree/tree"
if audit get "$T/get2.trace" >"$T/audit.out"; then
    ok "get of a tree: every file fsynced before its rename, its directory after"
else
    fail "get of a tree: system-call order"
    sed 's/^/#   /' "$T/audit.out"
fi
grep '^#' "$T/audit.out"
# The tree's files are synced by syncfs per batch: without those calls the
# audit must refuse it.
if grep -q 'syncfs(' "$T/get2.trace"; then
    grep -v 'syncfs(' "$T/get2.trace" >"$T/bad.trace"
    if audit get "$T/bad.trace" >"$T/bad.out"; then fail "audit accepted a tree get without its syncfs calls"
    else ok "audit refuses a tree get without its syncfs calls"; fi
fi
finish
