/*
 * names.c: stored names (normalised, hashed, prefixes) and the names of
 * blobs in the storage (valid, temporary, or something else).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/kdf.h"
#include "util/util.h"
#include "vault/names.h"
#include "vault/vault_internal.h"

int
pqv_name_normalize(const char *in, char *out, size_t outlen)
{
    size_t n = 0;
    const char *p = in;

    if (in == NULL || out == NULL || outlen == 0)
        return PQV_E_INVAL;
    while (*p != '\0') {
        const char *start;
        size_t len;

        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        start = p;
        while (*p != '\0' && *p != '/')
            p++;
        len = (size_t)(p - start);
        if (len == 1 && start[0] == '.')
            continue; /* "./" adds nothing */
        if (len == 2 && start[0] == '.' && start[1] == '.')
            return error_set(PQV_E_INVAL, in, "names may not contain \"..\"");
        if (n + (n > 0) + len + 1 > outlen || n + (n > 0) + len > PQV_NAME_MAX)
            return error_set(PQV_E_INVAL, NULL, "name too long");
        if (n > 0)
            out[n++] = '/';
        memcpy(out + n, start, len);
        n += len;
    }
    if (n == 0)
        return error_set(PQV_E_INVAL, NULL, "empty name");
    out[n] = '\0';
    return 0;
}

int
names_hash(const pqv_vault *v, const char *name, uint8_t hash[NAME_HASH_BYTES])
{
    return kdf_hmac_sha256(hash, v->names_key, 32, (const uint8_t *)name, strlen(name));
}

int
names_under(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);

    if (n == 0)
        return 1;
    return strncmp(name, prefix, n) == 0 && (name[n] == '\0' || name[n] == '/');
}

static int
collect_name(void *ctx, const char *name, uint64_t size)
{
    struct names_list *l = ctx;

    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        void *p = realloc(l->names, cap * STORAGE_NAME_MAX);
        void *q;
        if (p == NULL)
            return PQV_E_NOMEM;
        l->names = p;
        if ((q = realloc(l->sizes, cap * sizeof(uint64_t))) == NULL)
            return PQV_E_NOMEM;
        l->sizes = q;
        l->cap = cap;
    }
    snprintf(l->names[l->n], STORAGE_NAME_MAX, "%s", name);
    l->sizes[l->n] = size;
    l->n++;
    return 0;
}

int
names_list(pqv_storage *s, const char *prefix, struct names_list *l)
{
    memset(l, 0, sizeof(*l));
    return s->ops->list(s, prefix, collect_name, l);
}

int
names_list_add(struct names_list *l, const char *name)
{
    return collect_name(l, name, 0);
}

void
names_list_free(struct names_list *l)
{
    free(l->names);
    free(l->sizes);
    memset(l, 0, sizeof(*l));
}

void
names_sharded(char out[STORAGE_NAME_MAX], const char *kind, const uint8_t *id, size_t idlen)
{
    char hex[2 * 48 + 1];

    util_hex_encode(hex, id, idlen > 48 ? 48 : idlen);
    snprintf(out, STORAGE_NAME_MAX, "%s/%.2s/%s", kind, hex, hex);
}

int
names_classify(const char *name, const char *kind, uint8_t *id, size_t idlen)
{
    size_t k = strlen(kind);
    /* Segments are few and named by epoch: not sharded. */
    int sharded = strcmp(kind, "segments") != 0;
    const char *hex;

    if (strstr(name, PQV_STORAGE_TEMP_MARK) != NULL)
        return NAME_TEMPORARY;
    /* "kind/xx/<hex>", the shard being the first two digits; or
     * "kind/<hex>". */
    if (strncmp(name, kind, k) != 0 || name[k] != '/')
        return NAME_MALFORMED;
    if (sharded) {
        if (strlen(name) != k + 4 + 2 * idlen || name[k + 3] != '/')
            return NAME_MALFORMED;
        hex = name + k + 4;
        if (hex[0] != name[k + 1] || hex[1] != name[k + 2])
            return NAME_MALFORMED;
    } else {
        if (strlen(name) != k + 1 + 2 * idlen)
            return NAME_MALFORMED;
        hex = name + k + 1;
    }
    /* Only the lowercase spelling the vault writes: an uppercase copy
     * would otherwise load as a second record or hide as an object. */
    for (size_t i = 0; i < 2 * idlen; i++)
        if (hex[i] >= 'A' && hex[i] <= 'F')
            return NAME_MALFORMED;
    return util_hex_decode(id, idlen, hex) == 0 ? NAME_VALID : NAME_MALFORMED;
}

int
names_walk(pqv_storage *s, const char *prefix, size_t idlen, const struct names_walk *w,
    names_fn fn, void *ctx)
{
    struct names_list names;
    uint8_t id[64];
    int rc;

    if (idlen > sizeof(id))
        return PQV_E_INVAL;
    if ((rc = names_list(s, prefix, &names)) != 0)
        return rc;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        const char *name = names.names[i];
        int cls = idlen > 0 ? names_classify(name, prefix, id, idlen)
            : strstr(name, PQV_STORAGE_TEMP_MARK) != NULL ? NAME_TEMPORARY : NAME_VALID;
        if (names.sizes[i] == PQV_STORAGE_NOT_A_BLOB) {
            if (w == NULL || w->damaged == NULL) {
                rc = error_set(PQV_E_INTEGRITY, name, "not a regular file");
            } else {
                (*w->damaged)++;
                vault_report(w->report, w->report_ctx, PQV_REPORT_ERROR, name,
                    "not a regular file (a link, FIFO or device put in the vault)");
            }
        } else if (cls == NAME_VALID) {
            if (fn != NULL)
                rc = fn(ctx, name, id, names.sizes[i]);
        } else if (cls == NAME_TEMPORARY) {
            /* A writer's, or a leftover: judged only by a walker that counts
             * them (check, gc), never by a reader (list, get), which may run
             * beside a writer that took the lock after it looked. */
            if (w == NULL || w->temporaries == NULL)
                continue;
            if (w->writer_running != NULL && w->writer_running[0] != '\0') {
                if (w->in_flight != NULL)
                    (*w->in_flight)++;
                vault_report(w->report, w->report_ctx, PQV_REPORT_INFO, name,
                    "being written (a writer, %s, is running)", w->writer_running);
                continue;
            }
            if (w->temporaries != NULL)
                (*w->temporaries)++;
            /* Not damage: what an interrupted command left (check counts
             * them in one line; --verbose lists them). */
            vault_report(w->report, w->report_ctx, PQV_REPORT_INFO, name,
                "leftover temporary file (gc removes it)");
            if (w->leftovers != NULL)
                rc = names_list_add(w->leftovers, name);
        } else if (w == NULL || w->damaged == NULL) {
            rc = error_set(PQV_E_INTEGRITY, name, "unexpected file in %s/", prefix);
        } else {
            (*w->damaged)++;
            vault_report(w->report, w->report_ctx, PQV_REPORT_ERROR, name,
                "unexpected file in %s/", prefix);
        }
    }
    names_list_free(&names);
    return rc;
}
