#!/bin/sh
# tests/s3/with_rgw.sh CMD...: run CMD with a real S3 server (Ceph RGW, see
# tests/s3/rgw.sh) and its environment exported (AWS_ENDPOINT_URL,
# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, PQV_S3_BUCKET,
# PQV_S3_WRITER_*, PQV_RGW_DIR, PQV_RGW_PORT).
#
# If PQV_RGW_DIR names a running cluster, it is reused (and left running);
# otherwise a cluster is started in a fresh temporary directory and stopped
# when CMD ends, on every exit path.  So a whole suite shares one cluster:
#     sh tests/s3/with_rgw.sh make test
# Without Ceph installed, CMD runs without that environment (PQV_RGW_DIR
# unset), so its S3 tests skip.  Exits with CMD's status.
set -u
HERE=$(cd "$(dirname "$0")" && pwd -P)
RGW=$HERE/rgw.sh
[ $# -ge 1 ] || { echo "usage: with_rgw.sh CMD..." >&2; exit 2; }

if [ -n "${PQV_RGW_DIR:-}" ] && [ -f "$PQV_RGW_DIR/env" ] && sh "$RGW" alive "$PQV_RGW_DIR" 2>/dev/null; then
    # shellcheck disable=SC1091
    . "$PQV_RGW_DIR/env"
    exec "$@"
fi
if ! sh "$RGW" available; then
    echo "with_rgw.sh: Ceph RGW not installed (scripts/install-deps.sh installs it); running without S3" >&2
    unset PQV_RGW_DIR
    exec "$@"
fi

D=$(mktemp -d "${TMPDIR:-/tmp}/pqvrgw.XXXXXX") || exit 1
trap 'sh "$RGW" stop "$D"' EXIT
trap 'exit 130' INT TERM HUP
sh "$RGW" start "$D" || exit 1
# shellcheck disable=SC1091
. "$D/env"
"$@"
