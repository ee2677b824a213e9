#!/bin/sh
# Installs the Debian 12 packages pqvault needs to build, test and
# benchmark.  Run as root (or through sudo).  Safe to run again.
set -eu
# Build and test tools; libcurl + expat for the S3 backend; a single-node
# Ceph (mon, memstore OSD, radosgw) that tests/s3/rgw.sh starts as a real S3
# server; curl signs the harness's own requests; python3 modules for other
# tests (attr: setfattr, getfattr for extended attributes; libcap2-bin:
# setcap, getcap for file capabilities, tests/cli/restore_caps.sh); rclone and
# restic (Debian 12 main) for the S3 benchmark comparison; borgbackup, age,
# time (GNU time, peak RSS) and hyperfine for the side-by-side benchmarks
# (bench/compare.sh, bench/compare_s3.sh); linux-source-6.1 for the
# kernel-tree scenarios (bench/kernel.sh, bench/versions.sh: they unpack
# /usr/src/linux-source-6.1.tar.xz into their own scratch directory);
# libfuse3-dev and fuse3 (fusermount3) for `pqvault mount` and its tests
# (tests/cli/mount.sh, bench/mount.sh; fuse3 replaces Debian's fuse 2 tools,
# which restic and borg's mounts do not need: fusermount stays a link).
PACKAGES="build-essential clang libssl-dev libargon2-dev pkg-config valgrind python3 libclang-rt-14-dev strace e2fsprogs attr libcap2-bin
curl libcurl4-openssl-dev libexpat1-dev libzstd-dev
ceph-mon ceph-osd radosgw ceph-common
python3-cryptography python3-numpy
rclone restic
borgbackup age time hyperfine faketime
libfuse3-dev fuse3
linux-source-6.1"
missing=""
for p in $PACKAGES; do
    case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) in
    "install ok installed") ;;
    *) missing="$missing $p" ;;
    esac
done
if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq $missing >/dev/null
fi
echo "dependencies installed"
