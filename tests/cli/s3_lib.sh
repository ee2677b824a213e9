# tests/cli/s3_lib.sh: setup shared by the S3 tests (tests/cli/s3_*.sh),
# sourced after lib.sh.  A real S3 server: the Ceph RGW cluster of
# PQV_RGW_DIR when it runs (tests/s3/with_rgw.sh), else one of our own in
# $T/rgw, stopped on every exit path.  Without Ceph the test prints a SKIP
# line and exits.
#
#   URL            s3://BUCKET/PREFIX, a prefix of this test run's own
#   pqs ARGS...    pqvault -v $URL --passphrase-file $PF ARGS
#   s3req METHOD /BUCKET/KEY [curl args]   a signed request (rgw.sh s3curl);
#                  the HTTP status in $OUT
#   wait_until DESC CMD...  poll CMD (every 0.1 s, at most 120 s): no fixed
#                  sleeps; reports FAIL and returns 1 on timeout
#   LIVE           build/tests/s3_live, the storage-level driver

[ "$(basename -- "$0")" = s3_lib.sh ] && exit 0   # run directly: nothing to test

S3=$(cd "$(dirname "$0")/../s3" && pwd -P)
LIVE=$(dirname "$PQV")/tests/s3_live
if ! sh "$S3/rgw.sh" available; then
    echo "# SKIP - Ceph RGW not installed (scripts/install-deps.sh installs it)"
    exit 0
fi
if [ ! -x "$LIVE" ]; then
    echo "FAIL - $LIVE not built"
    exit 1
fi
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_CA_BUNDLE AWS_ENDPOINT_URL_S3 \
    AWS_SHARED_CREDENTIALS_FILE AWS_DEFAULT_REGION PQVAULT_S3_LEASE_SECONDS

S3_OWN=""
if [ -n "${PQV_RGW_DIR:-}" ] && sh "$S3/rgw.sh" alive "$PQV_RGW_DIR" 2>/dev/null; then
    D=$PQV_RGW_DIR
else
    D=$T/rgw
    S3_OWN=1
fi
S3_PROXIES=""
s3_stop_all() {
    for p in $S3_PROXIES; do sh "$S3/rgw.sh" proxy-stop "$D" "$p" 2>/dev/null; done
    [ -n "$S3_OWN" ] && sh "$S3/rgw.sh" stop "$D"
    cleanup
}
trap s3_stop_all EXIT
if [ -n "$S3_OWN" ]; then
    if ! sh "$S3/rgw.sh" start "$D" 2>"$T/rgw-start.err"; then
        sed 's/^/#   /' "$T/rgw-start.err"
        fail "rgw.sh start"
        finish
    fi
fi
# shellcheck disable=SC1091
. "$D/env"
B=$PQV_S3_BUCKET
RUN=$(basename "$0" .sh)-$$-$(date +%s)
URL=s3://$B/$RUN

pqs() { "$PQV" -v "$URL" --passphrase-file "$PF" "$@"; }

s3req() {
    s3_m=$1
    s3_p=$2
    shift 2
    sh "$S3/rgw.sh" s3curl "$D" "$s3_m" "$s3_p" -o "$T/s3body" -w '%{http_code}' "$@" \
        >"$OUT" 2>"$ERR"
}

# s3_status METHOD /BUCKET/KEY: print the status of a signed request.
s3_status() {
    s3req "$@"
    cat "$OUT"
}

wait_until() {
    wu_d=$1
    shift
    wu_end=$(($(date +%s) + 120))
    until "$@" >/dev/null 2>&1; do
        if [ "$(date +%s)" -ge "$wu_end" ]; then
            fail "timed out waiting: $wu_d"
            return 1
        fi
        sleep 0.1
    done
    return 0
}

# proxy_start NAME: a fault proxy in front of the server; its URL in $PX,
# its rules file in $RULES, its log in $PLOG.
proxy_start() {
    if ! PX=$(sh "$S3/rgw.sh" proxy-start "$D" "$1" 2>"$T/px.err"); then
        sed 's/^/#   /' "$T/px.err"
        fail "proxy-start"
        finish
    fi
    S3_PROXIES="$S3_PROXIES $1"
    RULES=$D/proxy/$1.rules
    PLOG=$D/proxy/$1.log
}

# rules TEXT...: replace the proxy's rules (one per argument) atomically.
rules() {
    printf '%s\n' "$@" >"$RULES.new"
    mv "$RULES.new" "$RULES"
}

# no_secret: the last command's stderr and stdout never show the secret.
no_secret() {
    if grep -qF -- "$AWS_SECRET_ACCESS_KEY" "$ERR" "$OUT"; then
        fail "$LAST: the secret key appears in its output"
    else
        ok "$LAST: no secret in its output"
    fi
}
