#!/bin/sh
# make install into a temporary prefix, then build and run a program
# outside the tree against the installed library with pkg-config.
set -eu
D=$(mktemp -d "${TMPDIR:-/tmp}/pqvault-install.XXXXXX")
trap 'rm -rf "$D"' EXIT
make -s install PREFIX=/opt/pqv DESTDIR="$D" >/dev/null
for f in bin/pqvault lib/libpqvault.a include/pqvault/vault.h include/pqvault/frodo.h \
    lib/pkgconfig/pqvault.pc share/man/man1/pqvault.1; do
    [ -f "$D/opt/pqv/$f" ] || { echo "install: missing $f"; exit 1; }
done
cat >"$D/use.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pqvault/frodo.h>
#include <pqvault/aead.h>
int main(void)
{
    const pqv_frodo *p = pqv_frodo_find("FrodoKEM-640-SHAKE");
    if (p == NULL)
        return 1;
    size_t n = pqv_frodo_sharedsecret_bytes(p);
    unsigned char *pk = malloc(pqv_frodo_publickey_bytes(p)), *sk = malloc(pqv_frodo_secretkey_bytes(p));
    unsigned char *ct = malloc(pqv_frodo_ciphertext_bytes(p)), *ss = malloc(n), *ss2 = malloc(n);
    if (!pk || !sk || !ct || !ss || !ss2 || pqv_frodo_keypair(p, pk, sk) ||
        pqv_frodo_encaps(p, ct, ss, pk) || pqv_frodo_decaps(p, ss2, ct, sk) || memcmp(ss, ss2, n) != 0) {
        fprintf(stderr, "installed library: FrodoKEM round trip failed\n");
        return 1;
    }
    printf("installed library works (%s)\n", pqv_aead_name(pqv_aead_auto()));
    free(pk); free(sk); free(ct); free(ss); free(ss2);
    return 0;
}
C
export PKG_CONFIG_PATH="$D/opt/pqv/lib/pkgconfig"
# The prefix was /opt/pqv at install time; DESTDIR staged it under $D.
FLAGS=$(pkg-config --cflags --libs --static pqvault | sed "s|/opt/pqv|$D/opt/pqv|g")
cc -o "$D/use" "$D/use.c" $FLAGS
"$D/use"
man -l "$D/opt/pqv/share/man/man1/pqvault.1" >/dev/null 2>&1 || true
echo "install: ok"
