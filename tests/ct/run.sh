#!/bin/sh
# Constant-time check of FrodoKEM decapsulation: builds tests/ct/ct_frodo.c
# against build/libpqvault.a (run `make build/libpqvault.a` first) and runs
# it under valgrind memcheck, which reports any branch or memory index that
# depends on the (undefined-marked) secret key.  Exits non-zero on errors.
set -e
cd "$(dirname "$0")/../.."
mkdir -p build/tests
cc -std=c11 -D_GNU_SOURCE -O1 -g -Iinclude -Isrc tests/ct/ct_frodo.c \
    build/libpqvault.a -lcrypto -largon2 -lpthread -o build/tests/ct_frodo
supp=""
[ -f tests/ct/ct.supp ] && supp="--suppressions=tests/ct/ct.supp"
valgrind -q --error-exitcode=1 --track-origins=yes $supp build/tests/ct_frodo
