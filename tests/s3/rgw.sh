#!/bin/sh
# tests/s3/rgw.sh: a real S3 server for tests, a single-node Ceph cluster
# (one monitor, one memstore OSD, radosgw) started and stopped by the tests
# themselves.  Facts behind it: shared design note s3-testing.md.
#
#   rgw.sh available              exit 0 if the Ceph binaries are installed
#   rgw.sh start DIR              start a cluster whose state, logs, sockets
#                                 and pid files all live in DIR (absent or
#                                 empty: it is the cluster's); write DIR/env
#   rgw.sh stop DIR               stop exactly DIR's daemons (and proxies),
#                                 remove DIR; safe twice, after a failed start
#   rgw.sh restart-rgw DIR        stop and start radosgw only (data survive:
#                                 they live in the OSD), wait until it serves
#   rgw.sh stop-rgw DIR [-9]      stop radosgw only (-9: SIGKILL, a crash)
#   rgw.sh start-rgw DIR          start it again, wait until it serves
#   rgw.sh alive DIR              exit 0 if DIR's radosgw answers
#   rgw.sh s3curl DIR METHOD /BUCKET/KEY[?QUERY] [curl args...]
#                                 a SigV4-signed curl request (see below)
#   rgw.sh proxy-start DIR [NAME] start tests/s3/faultproxy.py in front of
#                                 DIR's radosgw; prints its endpoint URL
#   rgw.sh proxy-stop DIR [NAME]  stop that proxy
#
# DIR/env holds shell exports for the tests and the backend:
#   AWS_ENDPOINT_URL=http://127.0.0.1:PORT  AWS_ACCESS_KEY_ID
#   AWS_SECRET_ACCESS_KEY  AWS_REGION (us-east-1)  PQV_S3_BUCKET (pqvtest)
#   PQV_S3_WRITER_ACCESS_KEY_ID  PQV_S3_WRITER_SECRET_ACCESS_KEY (user
#   pqvwriter, no bucket of its own: for write-only policy tests)
#   PQV_RGW_DIR  PQV_RGW_PORT  PQV_RGW_MON_PORT
# Ports are chosen at random in 20000-31999 (below the kernel's ephemeral
# range) after a bind test, so clusters of concurrent or leftover runs do
# not clash; the OSD takes free ports of Ceph's own range 6800-7300.
#
# Environment: PQV_RGW_MEMSTORE_BYTES (memstore size, default 3 GiB; the
# OSD holds all data in RAM), PQV_RGW_TIMEOUT (seconds allowed for each
# readiness wait, default 180), PQV_RGW_KEEP=1 (stop leaves DIR in place).
#
# s3curl: signs with curl's --aws-sigv4 "aws:amz:REGION:s3" and sends
# x-amz-content-sha256 (curl 7.88 does not), UNSIGNED-PAYLOAD unless
# S3CURL_SHA256 gives the payload's hex SHA-256 (RGW checks it then).  The
# query string is made canonical (percent-encoded but for A-Z a-z 0-9 -_.~,
# sorted, "k" written "k=") since curl 7.88 signs it as given.
# S3CURL_ENDPOINT overrides the endpoint (e.g. a fault proxy), S3CURL_USER=
# writer signs as pqvwriter, S3CURL_SECRET overrides the secret (bad
# signature tests).  curl runs with -sS and the caller's arguments, e.g.
#   rgw.sh s3curl "$D" PUT /pqvtest/k --data-binary @file -o /dev/null -w '%{http_code}'
#   rgw.sh s3curl "$D" GET '/pqvtest?list-type=2&prefix=a/'
#
# Benchmark comparison (rclone 1.60 and restic 0.14 from Debian 12),
# after `. DIR/env`:
#   env -u AWS_CA_BUNDLE RCLONE_CONFIG=/dev/null \
#       RCLONE_CONFIG_RGW_TYPE=s3 RCLONE_CONFIG_RGW_PROVIDER=Ceph \
#       RCLONE_CONFIG_RGW_ENDPOINT="$AWS_ENDPOINT_URL" \
#       RCLONE_CONFIG_RGW_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
#       RCLONE_CONFIG_RGW_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
#       rclone copy FILE "rgw:$PQV_S3_BUCKET/rclone/"
#   (and rclone copy "rgw:$PQV_S3_BUCKET/rclone/NAME" OUTDIR/ back)
#   export RESTIC_PASSWORD=... RESTIC_CACHE_DIR=SOMEDIR/restic-cache
#   restic -r "s3:$AWS_ENDPOINT_URL/$PQV_S3_BUCKET/restic" init
#   restic -r "s3:$AWS_ENDPOINT_URL/$PQV_S3_BUCKET/restic" backup FILE
#   restic -r ... restore latest --target OUTDIR
#   (restic reads AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY itself; rclone
#   refuses to start while AWS_CA_BUNDLE is set, hence env -u)
set -eu

HERE=$(cd "$(dirname "$0")" && pwd -P)
BUCKET=pqvtest
REGION=us-east-1
# Fixed keys of throw-away test users (not secrets).
ACCESS_KEY=PQVTEST0ACCESS0KEY01
SECRET_KEY=pqvtest0secret0key0for0local0rgw0tests01
WRITER_ACCESS_KEY=PQVWRITER0ACCESS0K01
WRITER_SECRET_KEY=pqvwriter0secret0key0for0local0rgw0test1
TIMEOUT=${PQV_RGW_TIMEOUT:-180}
MEMSTORE_BYTES=${PQV_RGW_MEMSTORE_BYTES:-3221225472}
PYTHON=${PYTHON:-python3}

say() { echo "rgw.sh: $*" >&2; }
die() { say "$*"; exit 1; }
usage() {
    sed -n '2,/^# Ports are chosen/{/^# Ports/d;s/^# \{0,1\}//p}' "$0" >&2
    exit 2
}

# absdir DIR: DIR as an absolute path (it must exist).
absdir() { (cd "$1" 2>/dev/null && pwd -P); }

# deadline handling: `wait_for DESC CHECK...` polls CHECK (a command) every
# 0.2 s until it succeeds, or fails after $TIMEOUT s; between polls it calls
# check_daemons so that a daemon that died is reported at once.
wait_for() {
    desc=$1
    shift
    end=$(($(date +%s) + TIMEOUT))
    while ! "$@" >/dev/null 2>&1; do
        check_daemons || { say "$desc: a daemon exited"; return 1; }
        if [ "$(date +%s)" -ge "$end" ]; then
            say "$desc: not ready after $TIMEOUT s"
            return 1
        fi
        sleep 0.2
    done
}

# pid_alive PID: the process exists and is not a zombie.
pid_alive() {
    [ -r "/proc/$1/stat" ] || return 1
    st=$(sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "$st" != Z ]
}

# owned PID: PID's command line has the argument $CONF (one of ours).
owned() {
    { tr '\0' '\n' <"/proc/$1/cmdline"; } 2>/dev/null | grep -qxF -- "$CONF"
}

# pids_of_dir: every live process whose argv has "$CONF" (daemons and
# proxies of this DIR, with or without a pid file).
pids_of_dir() {
    for f in /proc/[0-9]*/cmdline; do
        p=${f#/proc/}
        p=${p%/cmdline}
        [ "$p" = "$$" ] && continue
        if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qxF -- "$CONF"; then
            pid_alive "$p" && echo "$p"
        fi
    done
    return 0
}

# daemon_pid NAME: pid of DIR's daemon NAME (mon.a, osd.0, client.rgw) if it
# runs, from its pid file, checked against its command line.
daemon_pid() {
    for f in "$D/run/$1.pid" "$D/run/$1.spawned"; do
        [ -s "$f" ] || continue
        p=$(cat "$f" 2>/dev/null) || continue
        case $p in '' | *[!0-9]*) continue ;; esac
        if pid_alive "$p" && owned "$p"; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# spawn NAME CMD...: run daemon NAME in the foreground mode (-f) in the
# background, so that a start that hangs cannot block us (a forking daemon's
# parent waits for the monitor, up to 300 s); stdio to DIR/log/NAME.out.
# A fixed glibc mmap threshold returns freed large buffers to the system
# (radosgw held ~200 MiB after a 1 GiB PUT without it, ~47 MiB with it).
spawn() {
    n=$1
    shift
    MALLOC_MMAP_THRESHOLD_=262144 "$@" -f </dev/null >>"$D/log/$n.out" 2>&1 &
    echo $! >"$D/run/$n.spawned"
    EXPECT="$EXPECT $n"
}

# Daemons that have been started and must still run (set as start goes).
EXPECT=""
check_daemons() {
    for n in $EXPECT; do
        daemon_pid "$n" >/dev/null || { say "$n is not running"; return 1; }
    done
}

log_tails() {
    for f in "$D"/log/*.log "$D"/log/*.out; do
        [ -s "$f" ] || continue
        echo "---- tail of $f" >&2
        tail -n 25 "$f" >&2
    done
}

# stop_pids PIDS...: TERM, wait for exit (up to 60 s), then KILL; only
# processes still carrying our $CONF (a recycled pid is left alone).
stop_pids() {
    [ $# -gt 0 ] || return 0
    kill -TERM "$@" 2>/dev/null || true
    end=$(($(date +%s) + 60))
    while :; do
        left=""
        for p in "$@"; do pid_alive "$p" && owned "$p" && left="$left $p"; done
        [ -z "$left" ] && return 0
        if [ "$(date +%s)" -ge "$end" ]; then
            say "killing$left (no exit 60 s after SIGTERM)"
            # shellcheck disable=SC2086
            kill -KILL $left 2>/dev/null || true
            end=$(($(date +%s) + 30))
            set -- $left
        fi
        sleep 0.1
    done
}

# free_port: a TCP port on 127.0.0.1 that nothing is bound to right now.
free_port() {
    "$PYTHON" - <<'EOF'
import random, socket
r = random.SystemRandom()
for _ in range(500):
    p = r.randrange(20000, 32000)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
else:
    raise SystemExit("no free port found")
EOF
}

ceph_cli() { timeout 60 ceph -c "$CONF" --connect-timeout 20 "$@"; }
rgw_admin() { timeout 120 radosgw-admin -c "$CONF" "$@"; }

# http_status URL: the status code of an anonymous GET.
http_status() {
    curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$1" 2>/dev/null || true
}
rgw_serves() { [ "$(http_status "http://127.0.0.1:$RGW_PORT/")" = 200 ]; }
mon_ready() { ceph_cli mon stat; }
# put_ballast: one object of BALLAST_BYTES in a pool of its own, never
# read or removed.  Ceph 16's memstore counts the bytes it holds in an
# unsigned total that some of RGW's deletions take more from than their
# writes added: a CI rehearsal's s3_vault.sh under ASan saw it fall to
# 656,972 bytes below zero (the OSD's perf counters: stat_bytes_used
# 18446744073708894644, stat_bytes_avail above stat_bytes), which the OSD
# takes for a store more than full ("full status failsafe engaged,
# dropping updates, now -2147483648% full"): every write after hung.  The
# ballast keeps the count above zero by a hundred times that (it costs its
# size in the OSD's memory).
BALLAST_BYTES=67108864
put_ballast() {
    ceph_cli osd pool create pqv-ballast 1 1 >>"$D/log/mkfs.out" 2>&1 ||
        die "ceph osd pool create pqv-ballast failed"
    ceph_cli osd pool application enable pqv-ballast pqvault-test >>"$D/log/mkfs.out" 2>&1 ||
        die "ceph osd pool application enable failed"
    # (From a pipe: no 64 MiB file to write and remove on each way out.)
    head -c "$BALLAST_BYTES" /dev/zero |
        timeout 120 rados -c "$CONF" -p pqv-ballast put ballast - >>"$D/log/mkfs.out" 2>&1 ||
        die "rados put of the ballast failed"
}

osd_up() {
    ceph_cli osd stat -f json 2>/dev/null | grep -q '"num_up_osds":1[,}]'
}

load_state() {
    [ -f "$D/state" ] || die "$D: no cluster state (not started?)"
    # shellcheck disable=SC1091
    . "$D/state"
}

start_rgw() {
    spawn client.rgw radosgw -c "$CONF" -n client.rgw
    wait_for "radosgw on 127.0.0.1:$RGW_PORT" rgw_serves
}

cmd_start() {
    t0=$(date +%s)
    FSID=$(cat /proc/sys/kernel/random/uuid)
    MON_PORT=$(free_port)
    RGW_PORT=$(free_port)
    while [ "$RGW_PORT" = "$MON_PORT" ]; do RGW_PORT=$(free_port); done
    # The state file first: it marks DIR as a cluster's (stop removes such a
    # DIR only).
    cat >"$D/state" <<EOF
MON_PORT=$MON_PORT
RGW_PORT=$RGW_PORT
FSID=$FSID
EOF
    mkdir -p "$D/run" "$D/log" "$D/mon/a" "$D/osd/0" "$D/rgw" "$D/crash" "$D/proxy"
    cat >"$CONF" <<EOF
# Single-node test cluster of tests/s3/rgw.sh; everything lives in $D.
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
mon initial members = a
public addr = 127.0.0.1
ms bind ipv6 = false
ms bind msgr1 = false
auth cluster required = none
auth service required = none
auth client required = none
# Auth "none" only speaks crc mode; radosgw asks the monitor for "secure"
# only by default and then never connects (EACCES, "get_initial_auth_request
# returned -13").
ms mon client mode = crc secure
ms client mode = crc secure
keyring = $D/keyring
run dir = $D/run
admin socket = $D/run/\$name.asok
pid file = $D/run/\$name.pid
log file = $D/log/\$name.log
mon cluster log file = $D/log/cluster.log
crash dir = $D/crash
log to stderr = false
err to stderr = false
mon data = $D/mon/\$id
osd data = $D/osd/\$id
osd objectstore = memstore
memstore device bytes = $MEMSTORE_BYTES
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
mon data avail warn = 2
mon data avail crit = 1
osd op num shards = 2
osd op num threads per shard = 2

[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $D/rgw
rgw thread pool size = 64
EOF

    monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" \
        "$D/monmap" >"$D/log/mkfs.out" 2>&1 || { cat "$D/log/mkfs.out" >&2; die "monmaptool failed"; }
    ceph-mon -c "$CONF" -i a --mkfs --monmap "$D/monmap" >>"$D/log/mkfs.out" 2>&1 ||
        { cat "$D/log/mkfs.out" >&2; die "ceph-mon --mkfs failed"; }
    spawn mon.a ceph-mon -c "$CONF" -i a
    wait_for "monitor on 127.0.0.1:$MON_PORT" mon_ready

    uuid=$(cat /proc/sys/kernel/random/uuid)
    id=$(ceph_cli osd create "$uuid" 2>>"$D/log/mkfs.out") || die "ceph osd create failed"
    [ "$id" = 0 ] || die "ceph osd create gave id '$id', expected 0"
    # The OSD's uuid must be the one the monitor knows, or it never boots.
    ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$uuid" >>"$D/log/mkfs.out" 2>&1 ||
        { cat "$D/log/mkfs.out" >&2; die "ceph-osd --mkfs failed"; }
    ceph_cli osd crush add osd.0 1.0 host=localhost root=default >>"$D/log/mkfs.out" 2>&1 ||
        die "ceph osd crush add failed"
    spawn osd.0 ceph-osd -c "$CONF" -i 0
    wait_for "osd.0 up" osd_up
    put_ballast

    start_rgw || exit 1
    for u in "pqvtest $ACCESS_KEY $SECRET_KEY" "pqvwriter $WRITER_ACCESS_KEY $WRITER_SECRET_KEY"; do
        # shellcheck disable=SC2086
        set -- $u
        rgw_admin user create --uid "$1" --display-name "pqvault test user $1" \
            --access-key "$2" --secret-key "$3" >>"$D/log/users.out" 2>&1 ||
            { cat "$D/log/users.out" >&2; die "radosgw-admin user create $1 failed"; }
    done

    cat >"$D/env" <<EOF
export AWS_ENDPOINT_URL='http://127.0.0.1:$RGW_PORT'
export AWS_ACCESS_KEY_ID='$ACCESS_KEY'
export AWS_SECRET_ACCESS_KEY='$SECRET_KEY'
export AWS_REGION='$REGION'
export AWS_DEFAULT_REGION='$REGION'
export PQV_S3_BUCKET='$BUCKET'
export PQV_S3_WRITER_ACCESS_KEY_ID='$WRITER_ACCESS_KEY'
export PQV_S3_WRITER_SECRET_ACCESS_KEY='$WRITER_SECRET_KEY'
export PQV_RGW_DIR='$D'
export PQV_RGW_PORT='$RGW_PORT'
export PQV_RGW_MON_PORT='$MON_PORT'
EOF
    # The bucket, with a signed request (user creation may take a moment to
    # be visible to the gateway: poll).
    wait_for "PUT /$BUCKET" bucket_created
    echo "rgw.sh: cluster up in $(($(date +%s) - t0)) s: S3 at http://127.0.0.1:$RGW_PORT (monitor port $MON_PORT), env in $D/env" >&2
}

bucket_created() {
    st=$(cmd_s3curl PUT "/$BUCKET" -o "$D/log/bucket.out" -w '%{http_code}') || return 1
    [ "$st" = 200 ] || [ "$st" = 409 ]
}

# check_store_count: says so on stderr when the OSD's count of bytes held
# is above its store's size, the memstore fault put_ballast works around
# (a write hangs from then on, and the test sees only its timeout); run
# by stop while the OSD is up.
check_store_count() {
    sock=$D/run/osd.0.asok
    [ -S "$sock" ] || return 0
    timeout 20 ceph --admin-daemon "$sock" perf dump 2>/dev/null | python3 -c '
import json, sys
try:
    osd = json.load(sys.stdin)["osd"]
    used, size = osd["stat_bytes_used"], osd["stat_bytes"]
except Exception:
    sys.exit(0)
if used > size:
    print("rgw.sh: the OSD counts %d bytes held in a store of %d: Ceph memstore'"'"'s "
          "count fell below zero (see put_ballast in tests/s3/rgw.sh); writes hang "
          "from then on" % (used, size), file=sys.stderr)
' || true
}

cmd_stop() {
    [ -d "$D" ] || return 0
    check_store_count
    # Proxies first, then the gateway, the OSD, the monitor.
    pids=""
    for f in "$D"/proxy/*.pid; do
        [ -s "$f" ] || continue
        p=$(cat "$f")
        case $p in '' | *[!0-9]*) continue ;; esac
        pid_alive "$p" && owned "$p" && pids="$pids $p"
    done
    # shellcheck disable=SC2086
    stop_pids $pids
    for n in client.rgw osd.0 mon.a; do
        p=$(daemon_pid "$n") && stop_pids "$p"
    done
    # Anything else with our ceph.conf (a start that failed before its pid
    # file was written).
    # shellcheck disable=SC2046
    stop_pids $(pids_of_dir)
    case ${PQV_RGW_KEEP:-0} in
    1)
        say "kept $D"
        return 0
        ;;
    quiet) return 0 ;;
    esac
    if [ -f "$D/state" ]; then
        rm -rf "$D"
    else
        say "$D holds no cluster state: nothing removed"
    fi
}

cmd_stop_rgw() {
    load_state
    if p=$(daemon_pid client.rgw); then
        if [ "${1:-}" = -9 ]; then
            kill -KILL "$p" 2>/dev/null || true
        fi
        stop_pids "$p"
    fi
    rm -f "$D/run/client.rgw.pid" "$D/run/client.rgw.spawned"
}

cmd_start_rgw() {
    load_state
    daemon_pid client.rgw >/dev/null && die "radosgw of $D already runs"
    t0=$(date +%s)
    EXPECT="mon.a osd.0"
    check_daemons || { log_tails; die "the cluster of $D is not running"; }
    start_rgw || { log_tails; exit 1; }
    say "radosgw serving in $(($(date +%s) - t0)) s"
}

# cmd_s3curl METHOD PATH [curl args...] (DIR already in $D)
cmd_s3curl() {
    method=$1
    path=$2
    shift 2
    [ -f "$D/state" ] || die "$D: no cluster"
    # shellcheck disable=SC1091
    . "$D/state"
    case $path in /*) ;; *) die "s3curl: path must start with /" ;; esac
    case $path in
    *\?*)
        q=${path#*\?}
        path=${path%%\?*}
        q=$("$PYTHON" -c '
import sys, urllib.parse as u
ps = []
for kv in sys.argv[1].split("&"):
    if kv:
        k, _, v = kv.partition("=")
        ps.append((u.quote(u.unquote(k), safe="-_.~"), u.quote(u.unquote(v), safe="-_.~")))
print("&".join(k + "=" + v for k, v in sorted(ps)))' "$q")
        path="$path?$q"
        ;;
    esac
    ak=$ACCESS_KEY
    sk=$SECRET_KEY
    [ "${S3CURL_USER:-}" = writer ] && { ak=$WRITER_ACCESS_KEY; sk=$WRITER_SECRET_KEY; }
    sk=${S3CURL_SECRET:-$sk}
    ep=${S3CURL_ENDPOINT:-http://127.0.0.1:$RGW_PORT}
    curl -sS --aws-sigv4 "aws:amz:$REGION:s3" --user "$ak:$sk" \
        -H "x-amz-content-sha256: ${S3CURL_SHA256:-UNSIGNED-PAYLOAD}" \
        -X "$method" "$@" "$ep$path"
}

cmd_proxy_start() {
    name=${1:-proxy}
    load_state
    case $name in *[!A-Za-z0-9_-]*) die "proxy name: letters, digits, - and _ only" ;; esac
    pf=$D/proxy/$name
    mkdir -p "$D/proxy"
    [ -e "$pf.pid" ] && p=$(cat "$pf.pid") && pid_alive "$p" && owned "$p" &&
        die "proxy $name already runs (pid $p)"
    rm -f "$pf.port"
    : >"$pf.rules"
    : >"$pf.log"
    "$PYTHON" "$HERE/faultproxy.py" --upstream "127.0.0.1:$RGW_PORT" \
        --port-file "$pf.port" --rules "$pf.rules" --log "$pf.log" \
        --tag "$CONF" </dev/null >>"$pf.out" 2>&1 &
    echo $! >"$pf.pid"
    end=$(($(date +%s) + TIMEOUT))
    until [ -s "$pf.port" ]; do
        pid_alive "$(cat "$pf.pid")" || { cat "$pf.out" >&2; die "faultproxy exited"; }
        [ "$(date +%s)" -lt "$end" ] || die "faultproxy: no port after $TIMEOUT s"
        sleep 0.1
    done
    echo "http://127.0.0.1:$(cat "$pf.port")"
}

cmd_proxy_stop() {
    name=${1:-proxy}
    f=$D/proxy/$name.pid
    [ -s "$f" ] || return 0
    p=$(cat "$f")
    if pid_alive "$p" && owned "$p"; then stop_pids "$p"; fi
    rm -f "$f"
}

available() {
    for c in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph rados curl "$PYTHON"; do
        command -v "$c" >/dev/null 2>&1 || return 1
    done
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
available)
    available
    exit
    ;;
start | stop | restart-rgw | stop-rgw | start-rgw | alive | s3curl | proxy-start | proxy-stop | env) ;;
-h | --help | help) usage ;;
*) usage ;;
esac
[ $# -ge 1 ] || usage
D=$1
shift
if [ "$cmd" = start ]; then
    available || die "Ceph is not installed (sh scripts/install-deps.sh installs it)"
    mkdir -p "$D"
    [ -z "$(ls -A "$D")" ] || die "$D is not empty (start wants a new or empty directory)"
fi
if [ "$cmd" = stop ] && [ ! -d "$D" ]; then exit 0; fi
D=$(absdir "$D") || die "$1: no such directory"
CONF=$D/ceph.conf

case $cmd in
start)
    # On any failure: show the logs and stop what was started; DIR stays
    # for inspection until `stop`.
    trap 'st=$?; if [ $st -ne 0 ]; then log_tails; say "start failed; stopping its daemons (logs stay in $D until rgw.sh stop)"; PQV_RGW_KEEP=quiet cmd_stop; fi' EXIT
    trap 'exit 130' INT TERM HUP
    cmd_start
    ;;
stop) cmd_stop ;;
restart-rgw)
    cmd_stop_rgw
    cmd_start_rgw
    ;;
stop-rgw) cmd_stop_rgw "$@" ;;
start-rgw) cmd_start_rgw ;;
alive)
    load_state
    rgw_serves
    ;;
env) cat "$D/env" ;;
s3curl)
    [ $# -ge 2 ] || usage
    cmd_s3curl "$@"
    ;;
proxy-start) cmd_proxy_start "$@" ;;
proxy-stop) cmd_proxy_stop "$@" ;;
esac
