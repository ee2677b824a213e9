#!/bin/sh
# valgrind memcheck over the crypto unit tests (uninitialised reads, leaks
# of definitely lost memory, invalid accesses), on the plain build: AEAD
# and STREAM, FrodoKEM known answers and rejection, the hybrid wrap, the key
# file and recovery code, Argon2id and BLAKE2b vectors.  valgrind masks
# AVX-512 in cpuid, so the AVX2 and portable kernels are what run here.
# Usage: sh tests/valgrind_crypto.sh   (BUILD: build directory, default build)
BUILD=${BUILD:-build}
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
status=0
run() {
    prog=$1
    filter=${2:-}
    log=$(mktemp)
    # shellcheck disable=SC2086
    $VG "$BUILD/tests/$prog" $filter >"$log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "valgrind ok: $prog ${filter} ($(tail -n 1 "$log"))"
    else
        echo "valgrind FAILED (exit $rc): $prog ${filter}"
        sed -n '1,40p' "$log"
        status=1
    fi
    rm -f "$log"
}
run test_aead
run test_frodo kat_files
run test_frodo implicit_rejection
run test_frodo bad_arguments
run test_identity round_trip
run test_identity all_zero
run test_keyfile create_unlock
run test_keyfile change_and_clear
run test_keyfile tampering
run test_keyfile substituted
run test_keyfile recovery
run test_argon2id rfc9106
run test_argon2id blake2b
exit $status
