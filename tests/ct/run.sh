#!/bin/sh
# Constant-time checks under valgrind memcheck, which reports any branch or
# memory index that depends on (undefined-marked) secret data.  Builds
# against build/libpqvault.a (run `make build/libpqvault.a` first):
#   ct_frodo  FrodoKEM decapsulation (every parameter set, both code paths);
#   ct_misc   util_ct_equal, AEAD open (both suites), the config MAC check,
#             the key file checksum compare and recovery code decoding.  The
#             modules holding their verdicts are recompiled with
#             -DPQV_CT_DECLASSIFY (util_declassify live) and linked ahead of
#             the library.
# Exits non-zero on errors.
set -e
cd "$(dirname "$0")/../.."
mkdir -p build/tests build/ct
CFLAGS="-std=c11 -D_GNU_SOURCE -O1 -g -Iinclude -Isrc"
LIBS="build/libpqvault.a -lcrypto -largon2 -lpthread"
cc $CFLAGS tests/ct/ct_frodo.c $LIBS -o build/tests/ct_frodo
objs=""
for src in src/crypto/aead.c src/vault/config.c src/keys/keyfile.c src/keys/recovery.c; do
    o=build/ct/$(basename "$src" .c).o
    cc $CFLAGS -DPQV_CT_DECLASSIFY -c "$src" -o "$o"
    objs="$objs $o"
done
cc $CFLAGS tests/ct/ct_misc.c $objs $LIBS -o build/tests/ct_misc
supp=""
[ -f tests/ct/ct.supp ] && supp="--suppressions=tests/ct/ct.supp"
[ "${CT_SKIP_FRODO:-0}" = 1 ] || valgrind -q --error-exitcode=1 --track-origins=yes $supp build/tests/ct_frodo
valgrind -q --error-exitcode=1 --track-origins=yes $supp build/tests/ct_misc
