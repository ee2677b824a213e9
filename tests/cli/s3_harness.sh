# tests/cli/s3_harness.sh: the S3 test harness itself, against a real Ceph
# RGW (tests/s3/rgw.sh) and through the fault proxy (tests/s3/faultproxy.py):
# the S3 behaviour the backend relies on (signed PUT/GET/HEAD/DELETE,
# ListObjectsV2 with continuation, If-None-Match: *, If-Match, signature and
# payload-hash checks, a second user without access), every fault mode of
# the proxy, and radosgw restarts keeping the data.  Reuses the cluster of
# PQV_RGW_DIR when it runs (tests/s3/with_rgw.sh), else starts its own in a
# temporary directory and stops it on every exit path.  Skipped when Ceph is
# not installed.
. "$(dirname "$0")/lib.sh"

S3=$(cd "$(dirname "$0")/../s3" && pwd -P)
if ! sh "$S3/rgw.sh" available; then
    echo "# SKIP - Ceph RGW not installed (scripts/install-deps.sh installs it)"
    exit 0
fi

OWN=""
if [ -n "${PQV_RGW_DIR:-}" ] && sh "$S3/rgw.sh" alive "$PQV_RGW_DIR" 2>/dev/null; then
    D=$PQV_RGW_DIR
    echo "# using the running cluster of $D"
else
    D=$T/rgw
    OWN=1
fi
stop_all() {
    sh "$S3/rgw.sh" proxy-stop "$D" harness 2>/dev/null
    [ -n "$OWN" ] && sh "$S3/rgw.sh" stop "$D"
    cleanup
}
trap stop_all EXIT

if [ -n "$OWN" ]; then
    if ! sh "$S3/rgw.sh" start "$D" 2>"$T/start.err"; then
        sed 's/^/#   /' "$T/start.err"
        fail "rgw.sh start"
        finish
    fi
    sed -n 's/^rgw.sh: \(cluster up in .*\)$/# \1/p' "$T/start.err"
    ok "rgw.sh start: cluster up"
fi
# shellcheck disable=SC1091
. "$D/env"
B=$PQV_S3_BUCKET
P=harness-$$-$(date +%s)     # this run's key prefix (the bucket may be shared)
BODY=$T/body
HDRS=$T/headers

# s3 METHOD PATH [curl args]: a signed request.  Sets STATUS (the HTTP
# status, 000 if none) and CURL_ST (curl's exit status); the body is in
# $BODY, the headers in $HDRS.  Set for one call, then cleared: SHA (payload
# hash), SECRET (a wrong secret), AS=writer (the second user), EP (another
# endpoint: the proxy).
s3() {
    s3_m=$1
    s3_p=$2
    shift 2
    : >"$BODY"
    : >"$HDRS"
    S3CURL_SHA256=${SHA:-} S3CURL_SECRET=${SECRET:-} S3CURL_USER=${AS:-} S3CURL_ENDPOINT=${EP:-} \
        sh "$S3/rgw.sh" s3curl "$D" "$s3_m" "$s3_p" -o "$BODY" -D "$HDRS" -w '%{http_code}' \
        --max-time 120 "$@" >"$T/status" 2>"$ERR"
    CURL_ST=$?
    STATUS=$(cat "$T/status")
    SHA= SECRET= AS= EP=
}
# expect_code WANT DESC METHOD PATH [curl args]
expect_code() {
    want=$1
    d=$2
    shift 2
    s3 "$@"
    if [ "$STATUS" = "$want" ]; then ok "$d: $want"; else
        fail "$d: status $STATUS, expected $want (curl exit $CURL_ST)"
    fi
}
body_has() {
    if grep -qF -- "$2" "$BODY"; then ok "$1: body has $2"; else
        fail "$1: body lacks $2"
        sed -n '1,3s/^/#   body: /p' "$BODY"
    fi
}
sha() { sha256sum "$1" | cut -d' ' -f1; }

head -c 100000 /dev/urandom >"$T/obj"
head -c 3000000 /dev/urandom >"$T/big"
printf 'small\n' >"$T/small"

# --- plain S3 behaviour --------------------------------------------------
SHA=$(sha "$T/obj")
expect_code 200 "PUT with the payload's SHA-256" PUT "/$B/$P/obj" --data-binary "@$T/obj"
expect_code 200 "GET" GET "/$B/$P/obj"
check_ok "GET returns the bytes PUT" same_file "$BODY" "$T/obj"
expect_code 200 "HEAD" HEAD "/$B/$P/obj" -I
check_ok "HEAD: Content-Length 100000" grep -qi '^content-length: 100000' "$HDRS"
ETAG=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *"\{0,1\}\([^"]*\)"\{0,1\}.*$/\1/p' "$HDRS" | tr -d '\r')
check_ok "HEAD: ETag is the MD5 ($ETAG)" [ "$ETAG" = "$(md5sum "$T/obj" | cut -d' ' -f1)" ]
expect_code 206 "GET a range" GET "/$B/$P/obj" -H 'Range: bytes=10-19'
check_ok "range: bytes 10-19" sh -c "tail -c +11 '$T/obj' | head -c 10 | cmp -s - '$BODY'"
SHA=$(printf x | sha256sum | cut -d' ' -f1)
expect_code 400 "PUT with a wrong payload hash" PUT "/$B/$P/bad" --data-binary "@$T/obj"
body_has "wrong payload hash" "<Code>XAmzContentSHA256Mismatch</Code>"
SECRET=not-the-secret
expect_code 403 "GET signed with a wrong secret" GET "/$B/$P/obj"
body_has "wrong secret" "<Code>SignatureDoesNotMatch</Code>"

# Conditional writes.
expect_code 412 "PUT If-None-Match: * over an existing key" PUT "/$B/$P/obj" -H 'If-None-Match: *' --data-binary "@$T/small"
body_has "If-None-Match" "<Code>PreconditionFailed</Code>"
expect_code 200 "PUT If-None-Match: * on a new key" PUT "/$B/$P/new" -H 'If-None-Match: *' --data-binary "@$T/small"
expect_code 412 "PUT If-Match with a wrong ETag" PUT "/$B/$P/obj" -H 'If-Match: 0123456789abcdef0123456789abcdef' --data-binary "@$T/small"
s3 GET "/$B/$P/obj"
check_ok "the object is unchanged after the failed conditions" same_file "$BODY" "$T/obj"
expect_code 200 "PUT If-Match with the (unquoted) ETag" PUT "/$B/$P/obj" -H "If-Match: $ETAG" --data-binary "@$T/small"
s3 GET "/$B/$P/obj"
check_ok "If-Match PUT replaced the object" same_file "$BODY" "$T/small"
s3 PUT "/$B/$P/new" -H "If-Match: \"$(md5sum "$T/small" | cut -d' ' -f1)\"" --data-binary "@$T/small"
echo "# note: RGW 16 compares If-Match unquoted; with the quoted ETag it gave $STATUS"

# ListObjectsV2, with a continuation token.
for k in l1 l2 l3; do s3 PUT "/$B/$P/list/$k" --data-binary "@$T/small"; done
expect_code 200 "ListObjectsV2 (max-keys 2)" GET "/$B?list-type=2&prefix=$P/list/&max-keys=2"
body_has "list page 1" "<Key>$P/list/l1</Key><"
body_has "list page 1" "<Key>$P/list/l2</Key><"
body_has "list page 1" "<IsTruncated>true</IsTruncated>"
TOKEN=$(sed -n 's/.*<NextContinuationToken>\([^<]*\)<.*/\1/p' "$BODY")
check_ok "list page 1 has a NextContinuationToken" [ -n "$TOKEN" ]
expect_code 200 "ListObjectsV2 continuation" GET "/$B?list-type=2&prefix=$P/list/&max-keys=2&continuation-token=$TOKEN"
body_has "list page 2" "<Key>$P/list/l3</Key><"
body_has "list page 2" "<IsTruncated>false</IsTruncated>"
check_ok "list page 2 holds l3 only" [ "$(grep -o '<Key>' "$BODY" | wc -l)" -eq 1 ]

expect_code 204 "DELETE" DELETE "/$B/$P/list/l3"
expect_code 404 "GET after DELETE" GET "/$B/$P/list/l3"
body_has "GET after DELETE" "<Code>NoSuchKey</Code>"
expect_code 204 "DELETE of a missing key" DELETE "/$B/$P/list/l3"

# The second user exists and has no access to the bucket (no policy yet).
AS=writer
expect_code 200 "pqvwriter: ListBuckets" GET /
AS=writer
expect_code 403 "pqvwriter: PUT into pqvtest without a policy" PUT "/$B/$P/w" --data-binary "@$T/small"

# --- the fault proxy ------------------------------------------------------
if ! PX=$(sh "$S3/rgw.sh" proxy-start "$D" harness 2>"$T/px.err"); then
    sed 's/^/#   /' "$T/px.err"
    fail "proxy-start"
    finish
fi
ok "proxy-start: $PX"
RULES=$D/proxy/harness.rules
PLOG=$D/proxy/harness.log
# rules TEXT: replace the proxy's rules atomically.
rules() {
    printf '%s\n' "$@" >"$RULES.new"
    mv "$RULES.new" "$RULES"
}
# via: the s3 function through the proxy.
via() {
    EP=$PX
    s3 "$@"
}
expect_via() {
    want=$1
    d=$2
    shift 2
    via "$@"
    if [ "$STATUS" = "$want" ]; then ok "proxy, $d: $want"; else
        fail "proxy, $d: status $STATUS, expected $want (curl exit $CURL_ST)"
    fi
}
# last_log FIELD...: the proxy's last request line.
last_log() { grep -v '^#' "$PLOG" | tail -n 1; }
log_is() {
    l=$(last_log | cut -d' ' -f2-)
    if [ "$l" = "$2" ]; then ok "proxy log, $1: $l"; else fail "proxy log, $1: '$l', expected '$2'"; fi
}

rules ""
SHA=$(sha "$T/big")
expect_via 200 "PUT 3 MB (Expect: 100-continue passed through)" PUT "/$B/$P/big" --data-binary "@$T/big"
expect_via 200 "GET 3 MB" GET "/$B/$P/big"
check_ok "proxy: GET returns the bytes PUT" same_file "$BODY" "$T/big"
log_is "plain GET" "GET /$B/$P/big 200 -"

# Keep-alive: three requests on one connection.
n=$(S3CURL_ENDPOINT=$PX sh "$S3/rgw.sh" s3curl "$D" GET "/$B/$P/new" -o /dev/null -w '%{num_connects}\n' \
    "$PX/$B/$P/new" -o /dev/null "$PX/$B/$P/new" -o /dev/null 2>"$ERR" | paste -sd ' ' -)
check_ok "proxy keeps the connection alive (connects per request: $n)" [ "$n" = "1 0 0" ]

# A chunked request body is passed through whole: RGW answers 411 (it wants
# a Content-Length) as it does directly, and the connection goes on.
expect_code 411 "direct: PUT with a chunked body" PUT "/$B/$P/ch" -T "$T/obj" -H 'Transfer-Encoding: chunked'
expect_via 411 "PUT with a chunked body" PUT "/$B/$P/ch" -T "$T/obj" -H 'Transfer-Encoding: chunked'

# Injected errors.
rules "action=error status=503 nth=1"
expect_via 503 "error 503 on the 1st request" GET "/$B/$P/new"
body_has "injected 503" "<Code>SlowDown</Code>"
log_is "injected 503" "GET /$B/$P/new 503 error"
expect_via 200 "the 2nd request passes" GET "/$B/$P/new"
rules "action=error status=500 method=^PUT$"
expect_via 500 "error 500 on PUT (method regex)" PUT "/$B/$P/e500" --data-binary "@$T/small"
body_has "injected 500" "<Code>InternalError</Code>"
expect_via 500 "error 500 on a 3 MB PUT with Expect (not forwarded)" PUT "/$B/$P/e500" --data-binary "@$T/big"
expect_via 200 "GET unaffected by a PUT rule" GET "/$B/$P/new"
expect_code 404 "direct: the failed PUTs wrote nothing" GET "/$B/$P/e500"
rules "action=error status=429 path=/e429\$"
expect_via 429 "error 429 on a path regex" GET "/$B/$P/e429"
body_has "injected 429" "<Code>SlowDown</Code>"
expect_via 404 "another path passes" GET "/$B/$P/e428"
rules "action=error status=503 every=3"
pat=""
for i in 1 2 3 4 5 6 7; do
    via HEAD "/$B/$P/new" -I
    pat="$pat$STATUS-"
done
check_ok "every=3: 7 requests gave $pat" [ "$pat" = "200-200-503-200-200-503-200-" ]

# With a probability: reproducible from the seed, neither none nor all.
# probe: PROBE is the first digits of 16 statuses under that rule.
probe() {
    rules "seed=7" "action=error status=503 prob=0.5"
    PROBE=""
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
        via HEAD "/$B/$P/new" -I
        PROBE="$PROBE$(echo "$STATUS" | cut -c1)"
    done
}
probe
p1=$PROBE
probe
p2=$PROBE
case $p1 in *2*5* | *5*2*) ok "prob=0.5: some fail, some pass ($p1)" ;; *) fail "prob=0.5: $p1 (2: 200, 5: 503)" ;; esac
check_ok "prob=0.5: the same sequence again from the same seed" [ "$p1" = "$p2" ]

# Resets.
rules "action=reset-before method=PUT"
via PUT "/$B/$P/rb" --data-binary "@$T/small"
check_ok "reset before forwarding: curl sees the reset (exit $CURL_ST)" [ "$CURL_ST" -eq 56 ] || [ "$CURL_ST" -eq 52 ]
expect_code 404 "direct: reset-before PUT did not take effect" GET "/$B/$P/rb"
rules "action=reset-after method=PUT"
via PUT "/$B/$P/ra" --data-binary "@$T/small"
check_ok "reset after forwarding: curl sees the reset (exit $CURL_ST)" [ "$CURL_ST" -eq 56 ] || [ "$CURL_ST" -eq 52 ]
log_is "reset-after" "PUT /$B/$P/ra - reset-after:200"
expect_code 200 "direct: reset-after PUT took effect" GET "/$B/$P/ra"
check_ok "reset-after PUT stored the bytes" same_file "$BODY" "$T/small"

# A truncated body.
rules "action=truncate path=/big\$"
via GET "/$B/$P/big"
check_ok "truncated body: curl detects it (exit $CURL_ST, 18 expected)" [ "$CURL_ST" -eq 18 ]
got=$(wc -c <"$BODY")
check_ok "truncated body: $got of 3000000 bytes" [ "$got" -lt 3000000 ]
log_is "truncate" "GET /$B/$P/big 200 truncate:1500000/3000000"
rules "action=truncate bytes=0 path=/big\$"
via GET "/$B/$P/big"
check_ok "truncated to 0 bytes: curl exit 18 ($CURL_ST)" [ "$CURL_ST" -eq 18 ]

# Delay: at least D ms (no upper bound asserted).
rules "action=delay ms=250"
t=$(S3CURL_ENDPOINT=$PX sh "$S3/rgw.sh" s3curl "$D" GET "/$B/$P/new" -o /dev/null -w '%{time_total}' 2>"$ERR")
check_ok "delay 250 ms: the request took at least 0.25 s ($t s)" awk -v t="$t" 'BEGIN { exit !(t >= 0.25) }'
log_is "delay" "GET /$B/$P/new 200 delay:250"
rules "action=delay ms=100" "action=error status=503 nth=1"
expect_via 503 "delay and error together" GET "/$B/$P/new"
log_is "delay and error" "GET /$B/$P/new 503 delay:100,error"

# Duplicate: the request is sent twice; a create-only PUT sees its own first
# copy (412), the object is there.
rules "action=duplicate method=PUT"
expect_via 412 "duplicated If-None-Match PUT: the client gets the 2nd reply" PUT "/$B/$P/dup" -H 'If-None-Match: *' --data-binary "@$T/obj"
log_is "duplicate" "PUT /$B/$P/dup 412 duplicate:first=200"
expect_code 200 "direct: the duplicated PUT stored the object" GET "/$B/$P/dup"
check_ok "duplicated PUT stored the bytes" same_file "$BODY" "$T/obj"
SHA=$(sha "$T/big")
expect_via 200 "duplicated 3 MB PUT (Expect: 100-continue)" PUT "/$B/$P/dup2" --data-binary "@$T/big"
rules "action=duplicate method=DELETE"
expect_via 204 "duplicated DELETE" DELETE "/$B/$P/dup2"
log_is "duplicate DELETE" "DELETE /$B/$P/dup2 204 duplicate:first=204"

# Many concurrent connections.
rules ""
i=0
while [ $i -lt 24 ]; do
    (st=$(S3CURL_ENDPOINT=$PX sh "$S3/rgw.sh" s3curl "$D" GET "/$B/$P/obj" -o "$T/par.$i" -w '%{http_code}' --max-time 120 2>/dev/null)
     echo "$st" >"$T/par.$i.st") &
    i=$((i + 1))
done
wait
bad=0
i=0
while [ $i -lt 24 ]; do
    { [ "$(cat "$T/par.$i.st")" = 200 ] && same_file "$T/par.$i" "$T/small"; } || bad=$((bad + 1))
    i=$((i + 1))
done
check_ok "24 concurrent GETs through the proxy all whole ($bad bad)" [ "$bad" -eq 0 ]

# --- radosgw restarts -----------------------------------------------------
if sh "$S3/rgw.sh" restart-rgw "$D" 2>"$T/restart.err"; then
    ok "restart-rgw"
    sed -n 's/^rgw.sh: \(radosgw serving in .*\)$/# \1/p' "$T/restart.err"
else
    sed 's/^/#   /' "$T/restart.err"
    fail "restart-rgw"
fi
expect_code 200 "GET after restart-rgw" GET "/$B/$P/dup"
check_ok "the data survived the restart" same_file "$BODY" "$T/obj"
expect_via 200 "GET through the proxy after the restart (new upstream connection)" GET "/$B/$P/big"
check_ok "proxy after restart: bytes intact" same_file "$BODY" "$T/big"
sh "$S3/rgw.sh" stop-rgw "$D" -9 2>"$ERR"
via GET "/$B/$P/obj"
check_ok "radosgw killed: the proxy resets the connection (curl exit $CURL_ST)" [ "$CURL_ST" -eq 56 ] || [ "$CURL_ST" -eq 52 ]
log_is "upstream down" "GET /$B/$P/obj - upstream-down"
if sh "$S3/rgw.sh" start-rgw "$D" 2>"$T/restart.err"; then ok "start-rgw after a kill -9"; else
    sed 's/^/#   /' "$T/restart.err"
    fail "start-rgw after a kill -9"
fi
expect_code 200 "GET after the kill -9 and start" GET "/$B/$P/big"
check_ok "the data survived the kill -9" same_file "$BODY" "$T/big"

# Clean up this run's objects (the cluster may be shared).
s3 GET "/$B?list-type=2&prefix=$P/"
for k in $(sed 's/<Key>/\n<Key>/g' "$BODY" | sed -n 's/^<Key>\([^<]*\)<.*/\1/p'); do
    s3 DELETE "/$B/$k"
done
expect_code 200 "list after clean-up" GET "/$B?list-type=2&prefix=$P/"
check_ok "this run's objects are gone" [ "$(grep -c '<Key>' "$BODY")" -eq 0 ]

# --- stop ---------------------------------------------------------------------
if [ -n "$OWN" ]; then
    sh "$S3/rgw.sh" proxy-stop "$D" harness
    conf=$D/ceph.conf
    sh "$S3/rgw.sh" stop "$D"
    left=""
    for f in /proc/[0-9]*/cmdline; do
        if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qxF -- "$conf"; then left="$left ${f#/proc/}"; fi
    done
    # A zombie (unreaped by init) does not count: it has an empty cmdline.
    check_ok "stop: no process of the cluster left" [ -z "$left" ]
    check_ok "stop: the directory is removed" [ ! -e "$D" ]
    check_ok "stop again: a no-op" sh "$S3/rgw.sh" stop "$D"
    OWN=""
fi
finish
