#!/bin/sh
# Runs every unit-test program and every shell test, then prints one summary
# line "N passed, N failed" (read by CI).  BUILD names the build directory.
BUILD=${BUILD:-build}
export PQV_SAN=${PQV_SAN:-0}
export PQV_BIN="$PWD/$BUILD/pqvault"
export PQV_TEST_BIN="$PWD/$BUILD/pqvault-test"
# No test may hang the run (CI stops at 90 minutes): each gets at most
# PQV_TEST_TIMEOUT seconds (the slowest takes about 3 minutes under ASan on
# a loaded 2-core machine), then fails as "timed out".
TEST_TIMEOUT=${PQV_TEST_TIMEOUT:-1200}
passed=0
failed=0
skipped=0
failed_names=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    echo "== $t"
    start=$(date +%s)
    timeout -k 30 "$TEST_TIMEOUT" "$t" >"$log" 2>&1
    status=$?
    [ "$status" -eq 124 ] && echo "FAIL - $t timed out after $TEST_TIMEOUT s" >>"$log"
    cat "$log"
    echo "== $t: $(( $(date +%s) - start )) s"
    result=$(grep '^RESULT ' "$log" | tail -n 1)
    if [ -z "$result" ]; then
        echo "FAIL - $t crashed or exited early (status $status)"
        failed=$((failed + 1))
        failed_names="$failed_names $t"
        continue
    fi
    p=$(echo "$result" | cut -d' ' -f2)
    f=$(echo "$result" | cut -d' ' -f3)
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -ne 0 ] || [ "$status" -ne 0 ]; then
        [ "$f" -eq 0 ] && failed=$((failed + 1))
        failed_names="$failed_names $t"
    fi
done

for t in tests/cli/*.sh; do
    [ -f "$t" ] || continue
    echo "== $t"
    start=$(date +%s)
    timeout -k 30 "$TEST_TIMEOUT" sh "$t" >"$log" 2>&1
    status=$?
    [ "$status" -eq 124 ] && echo "FAIL - $t timed out after $TEST_TIMEOUT s" >>"$log"
    cat "$log"
    echo "== $t: $(( $(date +%s) - start )) s"
    p=$(grep -c '^ok - ' "$log")
    f=$(grep -c '^FAIL - ' "$log")
    skipped=$((skipped + $(grep -c '^# SKIP - ' "$log")))
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL - $t exited with status $status"
        failed=$((failed + 1))
    fi
    [ "$status" -ne 0 ] && failed_names="$failed_names $t"
done

[ -n "$failed_names" ] && echo "failing:$failed_names"
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
