/*
 * s3_sign.c: AWS Signature Version 4 (see s3_sign.h).
 *
 *   CanonicalRequest = Method \n CanonicalURI \n CanonicalQuery \n
 *                      CanonicalHeaders \n SignedHeaders \n PayloadHash
 *   StringToSign     = "AWS4-HMAC-SHA256" \n AmzDate \n Scope \n
 *                      hex(SHA-256(CanonicalRequest))
 *   Scope            = Date/Region/Service/"aws4_request"
 *   SigningKey       = HMAC(HMAC(HMAC(HMAC("AWS4" || Secret, Date),
 *                      Region), Service), "aws4_request")
 *   Signature        = hex(HMAC(SigningKey, StringToSign))
 */
#include "storage/s3_sign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "util/util.h"

/* Bounds on what is signed: far above anything the backend sends. */
#define S3_SIGN_MAX_HEADERS 32
#define S3_SIGN_MAX_PARAMS 32
#define S3_SIGN_MAX_FIELD 8192

/* A growing NUL-terminated string; ${failed} sticks after an error. */
struct sbuf {
    char *p;
    size_t len, cap;
    int failed;
};

static void
sb_addn(struct sbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *np;
        while (cap < b->len + n + 1)
            cap *= 2;
        if ((np = realloc(b->p, cap)) == NULL) {
            b->failed = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void
sb_add(struct sbuf *b, const char *s)
{
    sb_addn(b, s, strlen(s));
}

/* sb_take(b, out): hand the string over (an empty one if nothing was
 * added); PQV_E_NOMEM after a failed append. */
static int
sb_take(struct sbuf *b, char **out)
{
    if (!b->failed && b->p == NULL)
        sb_addn(b, "", 0);
    if (b->failed) {
        free(b->p);
        b->p = NULL;
        return PQV_E_NOMEM;
    }
    *out = b->p;
    b->p = NULL;
    return 0;
}

static int
unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
        c == '-' || c == '.' || c == '_' || c == '~';
}

long
s3_sign_uri_encode(char *out, size_t outlen, const char *in, size_t inlen, int encode_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    for (size_t i = 0; i < inlen; i++) {
        unsigned char c = (unsigned char)in[i];
        if (unreserved(c) || (c == '/' && !encode_slash)) {
            if (n + 2 > outlen)
                return -1;
            out[n++] = (char)c;
        } else {
            if (n + 4 > outlen)
                return -1;
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    if (n + 1 > outlen)
        return -1;
    out[n] = '\0';
    return (long)n;
}

/* encode_alloc(s): a malloc'd encoding of ${s} (slashes encoded). */
static char *
encode_alloc(const char *s)
{
    size_t n = strlen(s);
    char *out;

    if (n > S3_SIGN_MAX_FIELD || (out = malloc(3 * n + 1)) == NULL)
        return NULL;
    (void)s3_sign_uri_encode(out, 3 * n + 1, s, n, 1);
    return out;
}

struct enc_param {
    char *k, *v;
};

static int
cmp_param(const void *a, const void *b)
{
    const struct enc_param *x = a, *y = b;
    int c = strcmp(x->k, y->k);

    return c != 0 ? c : strcmp(x->v, y->v);
}

int
s3_sign_query(const struct s3_param *query, size_t n, char **out)
{
    struct enc_param enc[S3_SIGN_MAX_PARAMS];
    struct sbuf b = { NULL, 0, 0, 0 };
    size_t i, done = 0;
    int rc = 0;

    *out = NULL;
    if (n > S3_SIGN_MAX_PARAMS)
        return error_set(PQV_E_INVAL, NULL, "S3 request: too many query parameters");
    for (i = 0; i < n; i++, done++) {
        enc[i].k = encode_alloc(query[i].key);
        enc[i].v = encode_alloc(query[i].value != NULL ? query[i].value : "");
        if (enc[i].k == NULL || enc[i].v == NULL) {
            free(enc[i].k);
            free(enc[i].v);
            rc = PQV_E_NOMEM;
            goto out;
        }
    }
    /* Sorted by encoded key, then value: byte order, as AWS specifies. */
    util_sort(enc, n, sizeof(enc[0]), cmp_param);
    for (i = 0; i < n; i++) {
        if (i > 0)
            sb_add(&b, "&");
        sb_add(&b, enc[i].k);
        sb_add(&b, "=");
        sb_add(&b, enc[i].v);
    }
    rc = sb_take(&b, out);
out:
    for (i = 0; i < done; i++) {
        free(enc[i].k);
        free(enc[i].v);
    }
    return rc;
}

int
s3_sign_sha256_hex(const void *data, size_t len, char hex[S3_HEX_HASH_LEN])
{
    uint8_t md[32];
    unsigned int mdlen = 0;

    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
        return error_set(PQV_E_CRYPTO, NULL, "SHA-256 failed");
    util_hex_encode(hex, md, 32);
    return 0;
}

void
s3_sign_amz_date(int64_t t, char out[S3_AMZ_DATE_LEN])
{
    time_t tt = (time_t)t;
    struct tm tm;

    if (gmtime_r(&tt, &tm) == NULL || strftime(out, S3_AMZ_DATE_LEN, "%Y%m%dT%H%M%SZ", &tm) == 0)
        snprintf(out, S3_AMZ_DATE_LEN, "19700101T000000Z");
}

/* hmac(key, keylen, msg, out): HMAC-SHA256. */
static int
hmac(const void *key, size_t keylen, const char *msg, uint8_t out[32])
{
    unsigned int len = 0;

    if (HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)msg, strlen(msg), out,
            &len) == NULL || len != 32)
        return error_set(PQV_E_CRYPTO, NULL, "HMAC-SHA256 failed");
    return 0;
}

struct canon_header {
    char *name;   /* lower case */
    char *value;  /* trimmed, spaces collapsed */
    size_t order; /* input position: equal names keep their order */
};

static int
cmp_header(const void *a, const void *b)
{
    const struct canon_header *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* canon_value(v): ${v} without leading and trailing whitespace, inner runs
 * of spaces and tabs as one space (malloc'd). */
static char *
canon_value(const char *v)
{
    size_t n = strlen(v), j = 0;
    char *out;
    int space = 0;

    if (n > S3_SIGN_MAX_FIELD || (out = malloc(n + 1)) == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if (c == ' ' || c == '\t') {
            space = j > 0;
            continue;
        }
        if (space)
            out[j++] = ' ';
        space = 0;
        out[j++] = c;
    }
    out[j] = '\0';
    return out;
}

/* canonical_headers(in, ch, signed_headers): the canonical header block
 * (each "name:value\n", repeated names joined with ",") and the signed
 * header list ("a;b;c"). */
static int
canonical_headers(const struct s3_sign_input *in, char **block, char **signed_list)
{
    struct canon_header h[S3_SIGN_MAX_HEADERS];
    struct sbuf b = { NULL, 0, 0, 0 }, s = { NULL, 0, 0, 0 };
    size_t i, done = 0;
    int rc = 0;

    *block = *signed_list = NULL;
    if (in->nheaders > S3_SIGN_MAX_HEADERS)
        return error_set(PQV_E_INVAL, NULL, "S3 request: too many headers");
    for (i = 0; i < in->nheaders; i++, done++) {
        h[i].name = strdup(in->headers[i].name);
        h[i].value = canon_value(in->headers[i].value);
        h[i].order = i;
        if (h[i].name == NULL || h[i].value == NULL) {
            free(h[i].name);
            free(h[i].value);
            rc = PQV_E_NOMEM;
            goto out;
        }
        for (char *p = h[i].name; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
    }
    util_sort(h, in->nheaders, sizeof(h[0]), cmp_header);
    for (i = 0; i < in->nheaders; i++) {
        int repeat = i > 0 && strcmp(h[i].name, h[i - 1].name) == 0;
        if (repeat) {
            sb_add(&b, ",");
        } else {
            if (i > 0) {
                sb_add(&b, "\n");
                sb_add(&s, ";");
            }
            sb_add(&b, h[i].name);
            sb_add(&b, ":");
            sb_add(&s, h[i].name);
        }
        sb_add(&b, h[i].value);
    }
    if (in->nheaders > 0)
        sb_add(&b, "\n");
    if ((rc = sb_take(&b, block)) != 0 || (rc = sb_take(&s, signed_list)) != 0)
        goto out;
out:
    if (rc != 0) {
        free(b.p);
        free(s.p);
        free(*block);
        *block = NULL;
    }
    for (i = 0; i < done; i++) {
        free(h[i].name);
        free(h[i].value);
    }
    return rc;
}

int
s3_sign(const struct s3_sign_input *in, struct s3_sign_output *out)
{
    struct sbuf cr = { NULL, 0, 0, 0 }, sts = { NULL, 0, 0, 0 };
    char *query = NULL, *hblock = NULL, *hlist = NULL;
    char date[9], scope[256], crhash[S3_HEX_HASH_LEN];
    uint8_t k[32], sig[32];
    char *kinit = NULL;
    size_t slen = 0;
    int rc, n;

    memset(out, 0, sizeof(*out));
    if (in == NULL || in->method == NULL || in->path == NULL || in->payload_hash == NULL ||
        in->amz_date == NULL || strlen(in->amz_date) != 16 || in->region == NULL ||
        in->service == NULL || in->access_key == NULL || in->secret_key == NULL)
        return error_set(PQV_E_INVAL, NULL, "S3 request: incomplete signing input");
    memcpy(date, in->amz_date, 8);
    date[8] = '\0';
    n = snprintf(scope, sizeof(scope), "%s/%s/%s/aws4_request", date, in->region, in->service);
    if (n < 0 || (size_t)n >= sizeof(scope))
        return error_set(PQV_E_INVAL, NULL, "S3 request: region name too long");

    /* Task 1: the canonical request. */
    if ((rc = s3_sign_query(in->query, in->nquery, &query)) != 0 ||
        (rc = canonical_headers(in, &hblock, &hlist)) != 0)
        goto err;
    sb_add(&cr, in->method);
    sb_add(&cr, "\n");
    sb_add(&cr, in->path);
    sb_add(&cr, "\n");
    sb_add(&cr, query);
    sb_add(&cr, "\n");
    sb_add(&cr, hblock);
    sb_add(&cr, "\n");
    sb_add(&cr, hlist);
    sb_add(&cr, "\n");
    sb_add(&cr, in->payload_hash);
    if ((rc = sb_take(&cr, &out->canonical_request)) != 0)
        goto err;

    /* Task 2: the string to sign. */
    if ((rc = s3_sign_sha256_hex(out->canonical_request, strlen(out->canonical_request), crhash)) != 0)
        goto err;
    sb_add(&sts, "AWS4-HMAC-SHA256\n");
    sb_add(&sts, in->amz_date);
    sb_add(&sts, "\n");
    sb_add(&sts, scope);
    sb_add(&sts, "\n");
    sb_add(&sts, crhash);
    if ((rc = sb_take(&sts, &out->string_to_sign)) != 0)
        goto err;

    /* Task 3: the signing key, then the signature. */
    slen = strlen(in->secret_key);
    if ((kinit = malloc(slen + 5)) == NULL) {
        rc = PQV_E_NOMEM;
        goto err;
    }
    memcpy(kinit, "AWS4", 4);
    memcpy(kinit + 4, in->secret_key, slen + 1);
    if ((rc = hmac(kinit, slen + 4, date, k)) != 0 ||
        (rc = hmac(k, 32, in->region, k)) != 0 ||
        (rc = hmac(k, 32, in->service, k)) != 0 ||
        (rc = hmac(k, 32, "aws4_request", k)) != 0 ||
        (rc = hmac(k, 32, out->string_to_sign, sig)) != 0)
        goto err;
    util_hex_encode(out->signature, sig, 32);
    n = snprintf(out->authorization, sizeof(out->authorization),
        "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s", in->access_key,
        scope, hlist, out->signature);
    if (n < 0 || (size_t)n >= sizeof(out->authorization)) {
        rc = error_set(PQV_E_INVAL, NULL, "S3 request: authorization header too long");
        goto err;
    }

    /* Success! */
    util_wipe(kinit, slen + 5);
    free(kinit);
    util_wipe(k, sizeof(k));
    free(query);
    free(hblock);
    free(hlist);
    return 0;

err:
    /* Failure! */
    if (kinit != NULL)
        util_wipe(kinit, slen + 5);
    free(kinit);
    util_wipe(k, sizeof(k));
    free(cr.p);
    free(sts.p);
    free(query);
    free(hblock);
    free(hlist);
    s3_sign_output_clear(out);
    return rc;
}

void
s3_sign_output_clear(struct s3_sign_output *out)
{
    if (out == NULL)
        return;
    free(out->canonical_request);
    free(out->string_to_sign);
    out->canonical_request = out->string_to_sign = NULL;
    util_wipe(out->signature, sizeof(out->signature));
    util_wipe(out->authorization, sizeof(out->authorization));
}
