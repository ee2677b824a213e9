#!/bin/sh
# bench/run.sh (make bench): the micro-benchmark and the end-to-end script,
# printed as Markdown ready for docs/BENCHMARKS.md, with the machine.
# Environment: RUNS, BIG_MB, SMALL (see bench/e2e.sh), SCALE (samples of the
# micro-benchmark, default 1), BUILD (build), NO_CIRCL=1 to skip CIRCL.
set -eu
BUILD=${BUILD:-build}
SCALE=${SCALE:-1}

echo "## Run of $(date -u '+%Y-%m-%d %H:%M UTC'), pqvault $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo
echo "- CPU: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $(nproc) CPUs available"
echo "- Kernel: $(uname -sr); file system of the scratch directory: $(df -T "${BENCH_DIR:-$BUILD}" 2>/dev/null | awk 'NR==2{print $2}')"
echo "- Load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- OpenSSL $(openssl version 2>/dev/null | cut -d' ' -f2), $(${CC:-cc} --version | head -1)"
echo

# CIRCL (Go) FrodoKEM-640-SHAKE, measured in this run when possible.
circl=""
note="skipped (NO_CIRCL=1)"
if [ "${NO_CIRCL:-0}" != 1 ]; then
    s=../shared/bench/circl-frodo.sh
    if [ -f "$s" ] && circl=$(bash "$s" 2>/dev/null) &&
        echo "$circl" | awk '{exit !($1 > 0)}'; then
        note=""
    else
        circl=""
        note="CIRCL could not be measured (needs ../shared/bench/circl-frodo.sh, root for apt-get, golang-go)"
    fi
fi
CIRCL="${circl:-$note}" "$BUILD/bench/bench_micro" "$SCALE"
echo
PQVAULT="$BUILD/pqvault" sh bench/e2e.sh
echo

# Binary sizes: the dynamic build as built and stripped, and `make static`.
dyn=$(stat -c %s "$BUILD/pqvault")
strip -o "$BUILD/pqvault.stripped" "$BUILD/pqvault"
dyns=$(stat -c %s "$BUILD/pqvault.stripped")
rm -f "$BUILD/pqvault.stripped"
if make -s static >/dev/null 2>&1 && [ -f build-static/pqvault ]; then
    st="$(awk -v b="$(stat -c %s build-static/pqvault)" 'BEGIN{printf "%.2f MB", b / 1e6}') (static, glibc + libcrypto + libargon2, stripped)"
else
    st="make static failed"
fi
echo "### Binary size"
echo
echo "| build | size | Rust 0.6 |"
echo "| --- | --- | --- |"
echo "| dynamic (\`make\`, -O2 -g) | $(awk -v b="$dyn" 'BEGIN{printf "%.2f MB", b / 1e6}'), stripped $(awk -v b="$dyns" 'BEGIN{printf "%.2f MB", b / 1e6}') | |"
echo "| \`make static\` | $st | 3.4 MB (musl, static) |"
