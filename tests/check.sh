#!/bin/sh
# Everything CI runs (`make check`): every header compiled alone, no build
# output tracked in git, the test suite built with gcc, the same
# under ASan+UBSan, a clang build with -Werror, the symbol check, the
# constant-time checks
# under valgrind, valgrind memcheck over the crypto tests, the fuzz corpora
# replayed and each target fuzzed briefly,
# and an install round trip.  Ends with one line "N passed, N failed" over
# all of it (each test of the two suites, each other step counting one).
MAKE=${MAKE:-make}
passed=0
failed=0
failing=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# suite NAME MAKEARGS...: run the test suite, add its summary line up.
suite() {
    name=$1
    shift
    echo "=== $name"
    start=$(date +%s)
    $MAKE "$@" test 2>&1 | tee "$log"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
    f=$(echo "$line" | sed -n 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/p')
    if [ -z "$p" ]; then
        echo "FAIL - $name: no summary line (build or runner failure)"
        failed=$((failed + 1))
        failing="$failing $name"
    else
        passed=$((passed + p))
        failed=$((failed + f))
        [ "$f" -eq 0 ] || failing="$failing $name"
    fi
    echo "=== $name: ${line:-no summary} ($(( $(date +%s) - start )) s)"
}

# step NAME CMD...: one pass or fail.
step() {
    name=$1
    shift
    echo "=== $name"
    start=$(date +%s)
    if "$@"; then
        passed=$((passed + 1))
        echo "=== $name: ok ($(( $(date +%s) - start )) s)"
    else
        failed=$((failed + 1))
        failing="$failing $name"
        echo "=== $name: FAILED ($(( $(date +%s) - start )) s)"
    fi
}

step "every header compiles on its own" sh tests/headers.sh
step "no build output tracked in git" sh tests/tracked.sh
suite "tests (gcc)"
suite "tests (ASan+UBSan)" SAN=1
step "clang build (-Wall -Wextra -Werror)" $MAKE -s CC=clang BUILD=build-clang clang-build
step "symbols: the API only, module prefixes, constants once, no test hook" $MAKE -s symbols
step "constant time (valgrind)" $MAKE -s ct
step "valgrind memcheck of the crypto tests" sh tests/valgrind_crypto.sh
step "fuzz corpora and short fuzzing" $MAKE -s fuzz-ci
step "install round trip" sh tests/install.sh

[ -n "$failing" ] && echo "failing:$failing"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
