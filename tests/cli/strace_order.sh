# tests/cli/strace_order.sh: an audit of the real system-call order under
# strace: for `add` of a small tree, every rename of a temporary file comes
# after an fsync of that file, every record rename comes after the fsync of
# each object directory that received objects (following its last object
# rename), and every directory that received a record is fsynced after it;
# for `get`, the rename to the destination comes after the fsync of the
# output file and is followed by an fsync of the destination directory.
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
# LeakSanitizer cannot run under ptrace: no leak check in traced runs.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
TRACE="openat,write,fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat"

audit() {
    python3 - "$1" "$2" <<'EOF'
import os, re, sys
mode, log = sys.argv[1], sys.argv[2]
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

fsyncs = []           # (path, end)
renames = []          # (old, new, start, end)
for name, args, res, start, end in calls:
    if name in ('fsync', 'fdatasync') and res == 0:
        fsyncs.append((fd_path(args), end))
    elif name == 'rename' and res == 0:
        s = strings(args)
        if len(s) >= 2:
            renames.append((s[0], s[1], start, end))
    elif name in ('renameat', 'renameat2') and res == 0:
        # renameat2(3</dir>, "old", 3</dir>, "new", flags): names relative
        # to directory descriptors, whose paths strace -y shows
        m = re.match(r'(\S+?)<(.*?)>, "((?:[^"\\]|\\.)*)", (\S+?)<(.*?)>, "((?:[^"\\]|\\.)*)"', args)
        if m:
            renames.append((os.path.join(m.group(2), m.group(3)),
                            os.path.join(m.group(5), m.group(6)), start, end))

problems = []
def synced_between(path, after, before):
    return any(p == path and after < e < before for p, e in fsyncs)

for old, new, start, end in renames:
    if '.tmp-' in os.path.basename(old) and not synced_between(old, -1, start):
        problems.append('rename of %s without an fsync of it before' % old)

if mode == 'add':
    objs = [r for r in renames if '/objects/' in r[1]]
    recs = [r for r in renames if '/records/' in r[1]]
    if not objs or not recs:
        problems.append('no object or record renames seen (%d, %d)' % (len(objs), len(recs)))
    last_obj = {}
    for old, new, start, end in objs:
        d = os.path.dirname(new)
        last_obj[d] = max(last_obj.get(d, -1), end)
    for old, new, start, end in recs:
        for d, last in last_obj.items():
            if not synced_between(d, last, start):
                problems.append('record %s renamed before %s was fsynced' % (os.path.basename(new)[:12], d))
    last_rec = {}
    for old, new, start, end in recs:
        d = os.path.dirname(new)
        last_rec[d] = max(last_rec.get(d, -1), end)
    for d, last in last_rec.items():
        if not synced_between(d, last, 1 << 62):
            problems.append('record directory %s not fsynced after its rename' % d)
    print('# add: %d object renames, %d record renames, %d fsyncs' % (len(objs), len(recs), len(fsyncs)))
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
    ok "add: temporaries fsynced before rename, object directories fsynced before records, record directories after"
else
    fail "add: system-call order"
    sed 's/^/#   /' "$T/audit.out"
fi
grep '^#' "$T/audit.out"

# The audit itself: a trace with the object-directory fsyncs removed, and
# one with a temporary's fsync removed, must be refused.
grep -v 'fsync([0-9]*<[^>]*/objects/..>' "$T/add.trace" >"$T/bad1.trace"
if audit add "$T/bad1.trace" >/dev/null; then fail "audit accepted a trace without object-directory fsyncs"; else ok "audit refuses a trace without object-directory fsyncs"; fi
grep -v 'fsync([0-9]*<[^>]*\.tmp-' "$T/add.trace" >"$T/bad2.trace"
if audit add "$T/bad2.trace" >/dev/null; then fail "audit accepted a trace without temporary-file fsyncs"; else ok "audit refuses a trace without temporary-file fsyncs"; fi

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
if audit get "$T/get2.trace" >"$T/audit.out"; then
    ok "get of a tree: every file fsynced before its rename, its directory after"
else
    fail "get of a tree: system-call order"
    sed 's/^/#   /' "$T/audit.out"
fi
grep '^#' "$T/audit.out"
finish
