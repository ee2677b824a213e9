#!/bin/sh
# Symbol hygiene (make symbols, part of make check):
#  1. the shipped library exports the API and nothing else: every global
#     symbol of $BUILD/libpqvault.a is declared in include/pqvault/;
#  2. each module exports only its own names (spiped's rule: foo.c exports
#     foo_*) besides the pqv_* API it implements;
#  3. each constant is defined once: no macro name is #defined in two files
#     (kernel template parameters SIMD_*, K4_* aside: they are per kernel).
BUILD=${BUILD:-build}
failed=0
fail() { echo "FAIL - $*"; failed=$((failed + 1)); }

api=$(grep -rhoE '\bpqv_[a-z0-9_]+' include/pqvault | sort -u)
is_api() { echo "$api" | grep -qx "$1"; }

before=$failed
n=0
for sym in $(nm -g --defined-only "$BUILD/libpqvault.a" | awk 'NF==3 {print $3}'); do
    n=$((n + 1))
    is_api "$sym" || fail "libpqvault.a exports $sym, which include/pqvault/ does not declare"
done
[ "$failed" -eq "$before" ] && echo "ok - libpqvault.a exports $n symbols, all declared in include/pqvault/"

before=$failed
m=0
for o in $(find "$BUILD/obj/src" -name '*.o' ! -path '*/cli/*' | sort); do
    mod=$(basename "$o" .o)
    for sym in $(nm -g --defined-only "$o" | awk 'NF==3 {print $3}'); do
        m=$((m + 1))
        case $sym in
        "${mod}" | "${mod}"_*) ;;
        pqv_*) is_api "$sym" || fail "$o exports $sym: pqv_ but not in include/pqvault/" ;;
        *) fail "$o exports $sym: neither ${mod}_* nor the API" ;;
        esac
    done
done
[ "$failed" -eq "$before" ] && echo "ok - $m global symbols of the modules all carry their module's prefix or are API"

# (names counted once per file: #if/#else alternatives are one definition)
dups=$(grep -roE '^[[:space:]]*#[[:space:]]*define[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' src include |
    awk '{print $1 " " $NF}' | sed 's/:.* / /' | sort -u | awk '{print $2}' |
    grep -vE '^(SIMD|K4)_' | sort | uniq -d)
for d in $dups; do
    fail "$d is defined in more than one place: $(grep -rlE "define[[:space:]]+$d\\b" src include | tr '\n' ' ')"
done
[ -z "$dups" ] && echo "ok - every constant is defined once"
# 4. no test hook in the shipped program
if [ -x "$BUILD/pqvault" ]; then
    if strings "$BUILD/pqvault" | grep -q PQVAULT_TEST_; then
        fail "$BUILD/pqvault contains a test hook ($(strings "$BUILD/pqvault" | grep PQVAULT_TEST_ | head -1))"
    else
        echo "ok - $BUILD/pqvault has no test hook (no PQVAULT_TEST_* string)"
    fi
fi
[ "$failed" -eq 0 ]
