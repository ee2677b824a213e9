/*
 * s3_sign.h: AWS Signature Version 4 over OpenSSL (HMAC-SHA256, SHA-256),
 * for the S3 backend.  Only the header form ("Authorization:
 * AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...") is
 * made; no presigned URLs, no chunked payload signing.
 *
 * The caller gives the query as decoded (key, value) pairs; s3_sign_query
 * encodes and sorts them, and the same text goes on the wire and into the
 * canonical request, so the two cannot disagree.
 */
#ifndef PQV_S3_SIGN_H
#define PQV_S3_SIGN_H

#include <stddef.h>
#include <stdint.h>

/* 64 hex digits and a NUL. */
#define S3_HEX_HASH_LEN 65
/* "20150830T123600Z" and a NUL. */
#define S3_AMZ_DATE_LEN 17
/* Room for an Authorization header value (without the name). */
#define S3_AUTH_MAX 1024

struct s3_param {
    const char *key;    /* decoded; never NULL */
    const char *value;  /* decoded; NULL or "" both sign as "key=" */
};

struct s3_header {
    const char *name;   /* any case: signed in lower case */
    const char *value;  /* trimmed, inner runs of spaces collapsed */
};

struct s3_sign_input {
    const char *method;             /* "GET", "PUT", ... */
    const char *path;               /* canonical URI, already encoded */
    const struct s3_param *query;
    size_t nquery;
    const struct s3_header *headers; /* every header to sign, host and
                                        x-amz-date included */
    size_t nheaders;
    const char *payload_hash;       /* hex SHA-256 or "UNSIGNED-PAYLOAD" */
    const char *amz_date;           /* "YYYYMMDDTHHMMSSZ" */
    const char *region;
    const char *service;            /* "s3" */
    const char *access_key;
    const char *secret_key;
};

struct s3_sign_output {
    char *canonical_request;        /* malloc'd (tests compare it) */
    char *string_to_sign;           /* malloc'd */
    char signature[S3_HEX_HASH_LEN];
    char authorization[S3_AUTH_MAX];
};

/* s3_sign_uri_encode(out, outlen, in, inlen, encode_slash): RFC 3986
 * percent-encoding of the ${inlen} bytes at ${in} as S3 wants it: letters,
 * digits and "-._~" kept, every other byte as %XX (upper-case hex), "/"
 * kept unless ${encode_slash}.  Writes a NUL-terminated string; returns
 * its length, or -1 if ${outlen} is too small. */
long s3_sign_uri_encode(char *out, size_t outlen, const char *in, size_t inlen, int encode_slash);

/* s3_sign_query(query, n, out): the canonical query string of the ${n}
 * pairs ${query}: each key and value encoded (slashes too), sorted by key
 * then value, joined as "k=v&k2=v2" ("k=" for an empty value).  *${out} is
 * malloc'd ("" for none).  0 or PQV_E_NOMEM / PQV_E_INVAL. */
int s3_sign_query(const struct s3_param *query, size_t n, char **out);

/* s3_sign_sha256_hex(data, len, hex): the hex SHA-256 of ${len} bytes. */
int s3_sign_sha256_hex(const void *data, size_t len, char hex[S3_HEX_HASH_LEN]);

/* s3_sign_amz_date(t, out): ${t} (seconds since the epoch) as "YYYYMMDDTHHMMSSZ". */
void s3_sign_amz_date(int64_t t, char out[S3_AMZ_DATE_LEN]);

/* s3_sign(in, out): the canonical request, string to sign, signature and
 * Authorization value of ${in}.  The signing key is derived from the
 * secret key and wiped before return.  Free ${out} with
 * s3_sign_output_clear.  0 or a negative PQV_E_* code. */
int s3_sign(const struct s3_sign_input *in, struct s3_sign_output *out);

/* s3_sign_output_clear(out): free and wipe ${out}; safe twice. */
void s3_sign_output_clear(struct s3_sign_output *out);

#endif
