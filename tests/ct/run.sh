#!/bin/sh
# Constant-time checks under valgrind memcheck, which reports any branch or
# memory index that depends on (undefined-marked) secret data.  `make ct`
# builds the programs with the project's warning flags, then runs this:
#   ct_frodo  FrodoKEM decapsulation (every parameter set, both code paths);
#   ct_misc   util_ct_equal, AEAD open (both suites), the config MAC check,
#             the key file checksum compare and recovery code decoding.  The
#             modules holding their verdicts are recompiled with
#             -DPQV_CT_DECLASSIFY (util_declassify live) and linked ahead of
#             the library.
# Exits non-zero on errors.
set -e
cd "$(dirname "$0")/../.."
for p in build/ct/ct_frodo build/ct/ct_misc; do
    [ -x "$p" ] || { echo "$p missing: run 'make ct'"; exit 1; }
done
supp=""
[ -f tests/ct/ct.supp ] && supp="--suppressions=tests/ct/ct.supp"
[ "${CT_SKIP_FRODO:-0}" = 1 ] || valgrind -q --error-exitcode=1 --track-origins=yes $supp build/ct/ct_frodo
valgrind -q --error-exitcode=1 --track-origins=yes $supp build/ct/ct_misc
