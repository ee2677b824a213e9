#!/bin/sh
# Installs the Debian 12 packages pqvault needs to build, test and
# benchmark.  Run as root (or through sudo).  Safe to run again.
set -eu
PACKAGES="build-essential clang libssl-dev libargon2-dev pkg-config valgrind python3 libclang-rt-14-dev strace e2fsprogs"
missing=""
# The S3 backend links libcurl (OpenSSL flavour) and expat.
PACKAGES="$PACKAGES libcurl4-openssl-dev libexpat1-dev"
for p in $PACKAGES; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
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
