/*
 * s3_config.h: parsing for the S3 backend: vault URLs, endpoints and the
 * shared credentials file (pqv_s3_config_from_env is built on these).
 */
#ifndef PQV_S3_CONFIG_H
#define PQV_S3_CONFIG_H

#include <stddef.h>

#include "pqvault/storage.h"

#define S3_BUCKET_MAX 64     /* 3..63 characters and a NUL */
#define S3_PREFIX_MAX 512    /* a vault's prefix, without the final "/" */
#define S3_HOST_MAX 256
#define S3_CREDENTIALS_MAX (64u << 10)

/* s3_config_url_parse(url, bucket, prefix): split "s3://BUCKET[/PREFIX][/]".  The
 * bucket follows the S3 naming rules (3-63 of [a-z0-9.-], starting and
 * ending with a letter or digit, no "..", not an IPv4 address); the prefix
 * has no empty, "." or ".." component and no control character ("" for
 * none).  0 or PQV_E_INVAL with a detail. */
int s3_config_url_parse(const char *url, char bucket[S3_BUCKET_MAX], char prefix[S3_PREFIX_MAX]);

struct s3_endpoint {
    int https;
    char host[S3_HOST_MAX];  /* "example.com", "127.0.0.1" or "[::1]" */
    unsigned port;           /* 0: the scheme's default */
};

/* s3_config_endpoint_parse(url, ep): strict "http[s]://HOST[:PORT][/]": no user
 * information, path, query or fragment.  0 or PQV_E_INVAL. */
int s3_config_endpoint_parse(const char *url, struct s3_endpoint *ep);

/*
 * s3_config_credentials_parse(text, len, profile, ak, sk, token): read the
 * aws_access_key_id, aws_secret_access_key and aws_session_token of the
 * section [${profile}] of a shared credentials file ${text} (INI: "[name]"
 * headers, "key = value" lines, '#' and ';' comments, blank lines).  A line
 * of any other shape, a key outside a section, a key repeated in a section,
 * a NUL byte or a text over S3_CREDENTIALS_MAX bytes is refused with the
 * line number (never its contents).  The three results are malloc'd
 * (${token} NULL if absent); PQV_E_NOTFOUND if the profile is absent or
 * has no key pair, PQV_E_INVAL if malformed.
 */
int s3_config_credentials_parse(const char *text, size_t len, const char *profile, char **ak,
    char **sk, char **token);

#endif
