# tests/cli/s3_vault.sh: a vault in a bucket (Ceph RGW, tests/s3/rgw.sh):
# init, info, add, list, get, rm, check, gc, passwd, recover on s3://;
# a tree, a 64 MiB file and a pipe round trip; the key file in the bucket
# or local (--keyfile); $PQVAULT_DIR; `mount` of the bucket's vault (root,
# /dev/fuse: else SKIP); credentials from the environment or
# ~/.aws/credentials; wrong credentials, a missing bucket, a prefix without
# a vault, an unreachable endpoint; the storage operations one by one.
# Skipped without Ceph.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/s3_lib.sh"
fails_quietly() { ! "$@" >/dev/null 2>&1; }

# ---- the storage backend on its own ----
"$LIVE" "$URL/live" ops >"$T/live.out" 2>&1
cat "$T/live.out"
"$LIVE" "$URL/live" list 1100 >"$T/live.out" 2>&1
cat "$T/live.out"
"$LIVE" "$URL/live" parallel >"$T/live.out" 2>&1
cat "$T/live.out"

# ---- init, info ----
expect_status 0 pqs init --kdf "$KDF"
expect_stderr_contains "created vault $URL"
cp "$OUT" "$T/recovery"
expect_status 0 pqs info
expect_stdout_contains "vault:           $URL"
expect_stdout_contains "key file:        $URL/keyfile"
expect_stdout_contains "epoch:           1"
expect_stdout_contains "segments:        1"
check_ok "the config and key file are objects under the prefix" \
    test "$(s3_status GET "/$B/$RUN/config")$(s3_status GET "/$B/$RUN/keyfile")" = 200200
expect_status 1 pqs init --kdf "$KDF"
expect_stderr_contains "$URL: a vault already exists here"

# ---- a tree ----
mkdir -p "$T/tree/a b/c" "$T/tree/empty"
printf 'one\n' >"$T/tree/one"
: >"$T/tree/a b/zero"
head -c 300000 /dev/urandom >"$T/tree/a b/c/rand"
chmod 640 "$T/tree/one"
expect_status 0 pqs add "$T/tree" --name tree
expect_status 0 pqs list -l
expect_stdout_contains "tree/a b/c/rand"
check_ok "list -l: mode, owner, group and size" grep -Eq -- "^-rw-r----- +[^ ]+ +[^ ]+ +4 " "$OUT"
mkdir "$T/out"
expect_status 0 pqs get tree -o "$T/out"
check_ok "tree round trip: same bytes" diff -r "$T/tree" "$T/out/tree"
check_ok "tree round trip: modes kept" test "$(stat -c %a "$T/out/tree/one")" = 640

# ---- 64 MiB, and a pipe ----
head -c 67108864 /dev/urandom >"$T/big"
t0=$(date +%s.%N)
expect_status 0 pqs add "$T/big" --name big
t1=$(date +%s.%N)
expect_status 0 pqs get big -o "$T/big.out"
t2=$(date +%s.%N)
check_ok "64 MiB round trip" same_file "$T/big" "$T/big.out"
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "# 64 MiB: add %.2f s, get %.2f s\n", b - a, c - b }' </dev/null
rm -f "$T/big.out"
head -c 5000000 /dev/urandom >"$T/piped"
expect_status 0 sh -c '"$1" -v "$2" --passphrase-file "$3" add - --name piped <"$4"' sh \
    "$PQV" "$URL" "$PF" "$T/piped"
expect_status 0 pqs get piped -o "$T/piped.out"
check_ok "pipe round trip" same_file "$T/piped" "$T/piped.out"
expect_status 0 sh -c '"$1" -v "$2" --passphrase-file "$3" get piped -o - | cmp - "$4"' sh \
    "$PQV" "$URL" "$PF" "$T/piped"

# ---- rm, check, gc ----
expect_status 0 pqs rm "tree/a b"
expect_status 0 pqs list
check_ok "rm: the directory is gone" sh -c "! grep -q 'a b' '$OUT'"
expect_status 0 pqs check --read-data
expect_stdout_contains "damaged: 0, missing: 0"
expect_status 0 "$PQV" -v "$URL" check --no-key
expect_status 0 pqs gc
expect_status 0 pqs info
expect_stdout_contains "temporaries:     0"

# ---- passwd, recover ----
printf 'second pass\n' >"$T/pf2"
expect_status 0 pqs passwd --new-passphrase-file "$T/pf2" --kdf "$KDF"
expect_status 3 pqs list
expect_status 0 "$PQV" -v "$URL" --passphrase-file "$T/pf2" list
s3req DELETE "/$B/$RUN/keyfile"
expect_status 1 "$PQV" -v "$URL" --passphrase-file "$T/pf2" list
expect_stderr_contains "keyfile"
expect_status 0 pqs recover --recovery-file "$T/recovery" --kdf "$KDF"
expect_status 0 pqs get tree/one -o -
expect_stdout_contains "one"

# ---- $PQVAULT_DIR ----
expect_status 0 env PQVAULT_DIR="$URL" "$PQV" --passphrase-file "$PF" get tree/one -o -
expect_stdout_contains "one"

# ---- the key file kept locally ----
U2=$URL-k
expect_status 0 "$PQV" -v "$U2" --keyfile "$T/kf" --passphrase-file "$PF" init --kdf "$KDF"
check_ok "--keyfile: the key file is local" test -s "$T/kf"
check_ok "--keyfile: no key file in the bucket" test "$(s3_status GET "/$B/$RUN-k/keyfile")" = 404
expect_status 0 "$PQV" -v "$U2" --keyfile "$T/kf" --passphrase-file "$PF" add "$T/tree/one" --name one
expect_status 0 "$PQV" -v "$U2" --keyfile "$T/kf" --passphrase-file "$PF" get one -o -
expect_stdout_contains "one"
expect_status 1 "$PQV" -v "$U2" --passphrase-file "$PF" list
expect_stderr_contains "keyfile"
expect_status 0 env PQVAULT_KEYFILE="$T/kf" "$PQV" -v "$U2" --passphrase-file "$PF" info
expect_stdout_contains "key file:        $T/kf"

# ---- credentials from ~/.aws/credentials ----
mkdir -p "$T/home/.aws"
printf '[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n[rgw]\n# the test user\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
    "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$T/home/.aws/credentials"
expect_status 0 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$T/home" AWS_PROFILE=rgw \
    "$PQV" -v "$URL" --passphrase-file "$PF" list
expect_stdout_contains "tree/one"
expect_status 1 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$T/home" \
    "$PQV" -v "$URL" --passphrase-file "$PF" list
expect_stderr_contains "HTTP 403 InvalidAccessKeyId"
expect_status 1 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$T/nohome" \
    "$PQV" -v "$URL" --passphrase-file "$PF" list
expect_stderr_contains "no S3 credentials"
printf '[rgw]\naws_secret_access_key %s\n' "$AWS_SECRET_ACCESS_KEY" >"$T/home/.aws/credentials"
expect_status 1 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$T/home" AWS_PROFILE=rgw \
    "$PQV" -v "$URL" --passphrase-file "$PF" list
expect_stderr_contains "line 2: expected key = value"
no_secret

# ---- wrong credentials, missing bucket, no vault, bad locations ----
expect_status 1 env AWS_SECRET_ACCESS_KEY=wrong-secret-0123456789 "$PQV" -v "$URL" \
    --passphrase-file "$PF" list
expect_stderr_contains "$URL: HTTP 403 SignatureDoesNotMatch"
expect_one_error_line
expect_status 1 env AWS_ACCESS_KEY_ID=NOSUCHKEY0000000000 "$PQV" -v "$URL" --passphrase-file "$PF" list
expect_stderr_contains "HTTP 403 InvalidAccessKeyId"
no_secret
expect_status 5 "$PQV" -v "s3://no-such-bucket-$$/v" --passphrase-file "$PF" list
expect_stderr_contains "bucket no-such-bucket-$$ does not exist (HTTP 404 NoSuchBucket)"
expect_one_error_line
expect_status 5 "$PQV" -v "s3://no-such-bucket-$$/v" --passphrase-file "$PF" init --kdf "$KDF"
expect_status 5 "$PQV" -v "$URL-none" --passphrase-file "$PF" list
expect_stderr_contains "$URL-none: no vault at this location"
expect_status 5 "$PQV" -v "$URL-none" info
expect_status 1 "$PQV" -v "s3://$B/a//b" list
expect_stderr_contains "empty, \".\" or \"..\" component"
expect_status 1 "$PQV" -v "s3://Upper/x" list
expect_status 2 "$PQV" --s3-endpoint ftp://x -v "$URL" list
expect_stderr_contains "--s3-endpoint"
expect_status 1 "$PQV" --s3-endpoint http://127.0.0.1:1 -v "$URL" --passphrase-file "$PF" list
expect_stderr_contains "(after 6 attempts)"
expect_one_error_line
expect_status 1 "$PQV" --s3-endpoint "https://127.0.0.1:$PQV_RGW_PORT" -v "$URL" list
expect_stderr_contains "$URL"
# ---- HTTPS: the certificate is verified unless a CA file vouches for it ----
# A TLS front for the RGW (python3 ssl, a self-signed certificate for
# 127.0.0.1): bytes pass through, so the signatures stay valid.
cat >"$T/tls.py" <<'PY'
import socket, ssl, sys, threading
cert, key, upstream, portfile = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(32)
with open(portfile + ".tmp", "w") as f:
    f.write(str(ls.getsockname()[1]))
import os
os.rename(portfile + ".tmp", portfile)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def handle(c):
    try:
        t = ctx.wrap_socket(c, server_side=True)
    except (OSError, ssl.SSLError):
        c.close()
        return
    u = socket.create_connection(("127.0.0.1", upstream))
    threading.Thread(target=pipe, args=(t, u), daemon=True).start()
    pipe(u, t)
while True:
    c, _ = ls.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
PY
if openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/tls.key" -out "$T/tls.crt" -days 2 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1; then
    python3 "$T/tls.py" "$T/tls.crt" "$T/tls.key" "$PQV_RGW_PORT" "$T/tls.port" 2>/dev/null &
    BG_PIDS="$BG_PIDS $!"
    if wait_until "the TLS front listens" test -s "$T/tls.port"; then
        TLS=https://127.0.0.1:$(cat "$T/tls.port")
        expect_status 1 "$PQV" --s3-endpoint "$TLS" -v "$URL" --passphrase-file "$PF" list
        expect_stderr_contains "certificate"
        expect_one_error_line
        expect_status 0 "$PQV" --s3-endpoint "$TLS" --s3-ca-file "$T/tls.crt" -v "$URL" \
            --passphrase-file "$PF" get tree/one -o -
        expect_stdout_contains "one"
        expect_status 0 env AWS_CA_BUNDLE="$T/tls.crt" AWS_ENDPOINT_URL="$TLS" "$PQV" -v "$URL" \
            --passphrase-file "$PF" add "$T/tree/one" --name over-tls
        expect_status 1 "$PQV" --s3-endpoint "$TLS" --s3-ca-file "$T/nonexistent.pem" -v "$URL" list
    fi
else
    echo "# SKIP - openssl cannot make a test certificate"
fi

# ---- copy between a bucket and a directory, either way ----
expect_status 0 pqs copy --to "$T/copied"
expect_stderr_contains "copied: epoch"
expect_status 0 "$PQV" -v "$T/copied" --passphrase-file "$PF" check --read-data
expect_status 0 "$PQV" -v "$T/copied" --passphrase-file "$PF" copy --to "$URL-back"
expect_status 0 "$PQV" -v "$URL-back" --passphrase-file "$PF" check --read-data
expect_status 0 "$PQV" -v "$URL-back" --passphrase-file "$PF" get tree -o "$T/out-back"
# (tree/a b was removed above.)
check_ok "bucket -> directory -> bucket: the tree round-trips" diff -r -x 'a b' "$T/tree" "$T/out-back/tree"
check_ok "bucket -> directory -> bucket: the removed directory stays removed" test ! -e "$T/out-back/tree/a b"
expect_status 0 pqs copy --to "$T/copied"
expect_stderr_contains "already there"

# ---- write-only adds: a second user limited by a bucket policy ----
# pqvwriter may PutObject under PREFIX/inbox/ and GetObject PREFIX/config,
# nothing else; with its writer credential alone it adds a batch below its
# prefix, the owner imports.
expect_status 0 pqs writer add pqvwriter -o "$T/rcpt"
cat >"$T/policy.json" <<EOF
{"Version": "2012-10-17", "Statement": [
 {"Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam:::user/pqvwriter"]},
  "Action": ["s3:PutObject"], "Resource": ["arn:aws:s3:::$B/$RUN/inbox/*"]},
 {"Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam:::user/pqvwriter"]},
  "Action": ["s3:GetObject"], "Resource": ["arn:aws:s3:::$B/$RUN/config"]}]}
EOF
s3req PUT "/$B?policy" --data-binary "@$T/policy.json"
check_ok "bucket policy for pqvwriter set ($(cat "$OUT"))" grep -qE '^(200|204)$' "$OUT"
printf 'written by a write-only user\n' >"$T/wo-file"
head -c 200000 /dev/urandom >"$T/wo-big"
wo() { env AWS_ACCESS_KEY_ID="$PQV_S3_WRITER_ACCESS_KEY_ID" \
    AWS_SECRET_ACCESS_KEY="$PQV_S3_WRITER_SECRET_ACCESS_KEY" "$PQV" -v "$URL" "$@"; }
LAST="s3: write-only add as pqvwriter (no key file, no passphrase)"
if wo add --recipient "$T/rcpt" "$T/wo-file" "$T/wo-big" </dev/null >"$OUT" 2>"$ERR"; then
    ok "$LAST: exit 0"; else fail "$LAST: exit $?"; fi
expect_stderr_contains "inbox batch"
batch=$(sed -n 's/.*inbox batch \([0-9a-f]\{32\}\) written.*/\1/p' "$ERR")
# Every other request of pqvwriter is denied (it owns, and so may read back,
# the objects it wrote itself: S3 object ownership; they are sealed to the
# vault's identity).
for req in "GET /$B/$RUN/keyfile" "GET /$B/$RUN/segments/0000000000000001" \
    "GET /$B?list-type=2&prefix=$RUN/" "DELETE /$B/$RUN/config" \
    "DELETE /$B/$RUN/inbox/$batch.batch" "PUT /$B/$RUN/segments/0000000000000099"; do
    set -- $req
    if [ "$1" = PUT ]; then
        S3CURL_USER=writer s3req "$1" "$2" --data-binary "@$T/wo-file"
    else
        S3CURL_USER=writer s3req "$1" "$2"
    fi
    check_ok "s3: pqvwriter denied $req ($(cat "$OUT"))" test "$(cat "$OUT")" = 403
done
check_ok "s3: pqvwriter cannot list the vault" fails_quietly wo list
expect_status 0 pqs list
expect_stderr_contains "1 inbox batch waits"
expect_status 0 pqs import
expect_stderr_contains "1 batch, 2 entries imported"
expect_status 0 pqs get pqvwriter/wo-big -o "$T/wo-big.out"
check_ok "s3: write-only add imported byte-exact" cmp -s "$T/wo-big.out" "$T/wo-big"
expect_status 0 pqs get pqvwriter/wo-file -o "$T/wo-file.out"
check_ok "s3: write-only small file imported byte-exact" cmp -s "$T/wo-file.out" "$T/wo-file"
check_ok "s3: the batch object is gone" test "$(s3_status GET "/$B/$RUN/inbox/$batch.batch")" = 404
expect_status 0 pqs check --read-data
s3req DELETE "/$B?policy"

# ---- mount (issue 22): the vault in the bucket as a read-only file system ----
# The server in the foreground, in the background here; the mount seen in
# /proc/mounts (polled, as wait_until does); every read goes to the RGW.
M=$T/mnt
mount_skip=""
if [ "$(id -u)" -ne 0 ]; then
    mount_skip="needs root (mounts through /dev/fuse)"
elif [ ! -c /dev/fuse ]; then
    mount_skip="/dev/fuse is missing"
elif ! command -v fusermount3 >/dev/null 2>&1; then
    mount_skip="fusermount3 is missing (Debian package fuse3)"
elif "$PQV" mount --help 2>&1 | grep -q "built without FUSE"; then
    mount_skip="$PQV was built without libfuse3"
fi
if [ -n "$mount_skip" ]; then
    echo "# SKIP - s3 mount: $mount_skip"
else
    trap 'fusermount3 -u -z "$M" 2>/dev/null; s3_stop_all' EXIT
    mkdir -p "$M" "$T/mget"
    head -c 20000000 /dev/urandom >"$T/mbig"
    expect_status 0 pqs add "$T/mbig" --name mbig
    expect_status 0 pqs get tree piped -o "$T/mget"
    pqs mount -f "$M" 2>"$T/mount.err" &
    mpid=$!
    wait_until "the S3 vault mounted" grep -q " $M fuse" /proc/mounts
    check_ok "s3 mount: a 20 MB file byte-exact through the mount" cmp "$T/mbig" "$M/mbig"
    check_ok "s3 mount: the tree byte-exact" diff -r "$T/mget/tree" "$M/tree"
    check_ok "s3 mount: a piped file byte-exact" cmp "$T/mget/piped" "$M/piped"
    check_ok "s3 mount: an imported write-only file" cmp "$T/wo-file" "$M/pqvwriter/wo-file"
    check_ok "s3 mount: modes as stored" test "$(stat -c %a "$M/tree/one")" = 640
    python3 - "$T/mbig" "$M/mbig" >"$T/mrand" 2>&1 <<'PYEOF'
import os, random, sys
a = open(sys.argv[1], 'rb').read()
fd = os.open(sys.argv[2], os.O_RDONLY)
r = random.Random(19)
bad = 0
for _ in range(200):
    n = r.choice([1, 4096, 70000, 300000])
    off = r.randrange(1, len(a) - n)
    if os.pread(fd, n, off) != a[off:off + n]:
        bad += 1
os.close(fd)
print("ok" if bad == 0 else "bad %d" % bad)
PYEOF
    check_ok "s3 mount: 200 random preads byte-exact ($(cat "$T/mrand"))" grep -qx ok "$T/mrand"
    nsnap=$(find "$M/snapshots" -mindepth 1 -maxdepth 1 | wc -l)
    check_ok "s3 mount: snapshots/ lists the kept snapshots and latest ($nsnap)" test "$nsnap" -ge 3
    check_ok "s3 mount: versions/ holds mbig" test -d "$M/versions/mbig"
    check_ok "s3 mount: read-only" sh -c "! touch '$M/new' 2>/dev/null"
    fusermount3 -u "$M"
    wait "$mpid"
    mst=$?
    check_ok "s3 mount: fusermount3 -u ends the server with 0 ($mst: $(tail -n 1 "$T/mount.err"))" \
        test "$mst" -eq 0
    check_ok "s3 mount: no mount left" sh -c "! grep -q ' $M fuse' /proc/mounts"
    trap s3_stop_all EXIT
fi

# ---- a catalogue segment over 1 MiB: its blocks read in parts (ranged GETs) ----
python3 - "$T/many" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(12000):
    d = os.path.join(root, "d%02d" % (i % 60))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d-%016x" % (i, (i + 1) * 0x9E3779B97F4A7C15 % 2**64)), "w") as f:
        f.write("file %d\n" % i)
PY
printf 'first\n' >"$T/many/changing"
expect_status 0 pqs add "$T/many" --name many
printf 'second\n' >"$T/many/changing"
expect_status 0 pqs add "$T/many" --name many
expect_status 0 pqs list many
check_ok "s3, a large segment: list gives every entry ($(wc -l <"$OUT"))" test "$(wc -l <"$OUT")" -eq 12062
expect_status 0 pqs get many/changing -o -
expect_stdout_contains "second"
expect_status 0 pqs --at latest~1 get many/changing -o -
expect_stdout_contains "first"
expect_status 0 pqs get many/d07/f00007-f1bbcdcbfa53e0a8 -o -
expect_stdout_contains "file 7"
expect_status 0 pqs --at latest~1 list many
check_ok "s3, a large segment: list --at gives every entry ($(wc -l <"$OUT"))" test "$(wc -l <"$OUT")" -eq 12062
# (One directory of 200 files, not the 12,000: a GET per file.)
rm -rf "$T/many.out"
expect_status 0 pqs --at latest~1 get many/d07 -o "$T/many.out"
check_ok "s3, a large segment: a directory of the older snapshot byte-exact" \
    diff -r "$T/many/d07" "$T/many.out/many/d07"
expect_status 0 pqs check

expect_status 0 "$PQV" --help
expect_stdout_contains "--s3-endpoint URL"
expect_stdout_contains "--s3-ca-file FILE"

finish
