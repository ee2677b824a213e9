/*
 * s3_config.c: S3 URLs, endpoints, credentials (see s3_config.h and
 * pqvault/storage.h).
 */
#include "storage/s3_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

#define KEY_ID_MAX 128
#define S3_SECRET_MAX 256
#define TOKEN_MAX 8192
#define REGION_MAX 64

int
pqv_s3_is_url(const char *location)
{
    return location != NULL && strncmp(location, "s3://", 5) == 0;
}

static int
is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* looks_like_ipv4(s): four dot-separated groups of digits. */
static int
looks_like_ipv4(const char *s)
{
    int groups = 0, digits = 0;

    for (; *s; s++) {
        if (*s >= '0' && *s <= '9') {
            digits++;
        } else if (*s == '.' && digits > 0) {
            groups++;
            digits = 0;
        } else {
            return 0;
        }
    }
    return digits > 0 && groups == 3;
}

int
s3_config_url_parse(const char *url, char bucket[S3_BUCKET_MAX], char prefix[S3_PREFIX_MAX])
{
    const char *b, *slash, *p;
    size_t blen, plen;

    if (!pqv_s3_is_url(url))
        return error_set(PQV_E_INVAL, NULL, "not an s3:// URL");
    b = url + 5;
    slash = strchr(b, '/');
    blen = slash != NULL ? (size_t)(slash - b) : strlen(b);
    if (blen < 3 || blen > 63)
        return error_set(PQV_E_INVAL, url, "bucket names have 3 to 63 characters");
    for (size_t i = 0; i < blen; i++) {
        char c = b[i];
        if (!is_lower_alnum(c) && c != '.' && c != '-')
            return error_set(PQV_E_INVAL, url, "a bucket name has only lower-case letters, digits, '.' and '-'");
        if (c == '.' && i > 0 && b[i - 1] == '.')
            return error_set(PQV_E_INVAL, url, "\"..\" in the bucket name");
    }
    if (!is_lower_alnum(b[0]) || !is_lower_alnum(b[blen - 1]))
        return error_set(PQV_E_INVAL, url, "a bucket name starts and ends with a letter or digit");
    memcpy(bucket, b, blen);
    bucket[blen] = '\0';
    if (looks_like_ipv4(bucket))
        return error_set(PQV_E_INVAL, url, "a bucket name is not an IP address");

    prefix[0] = '\0';
    if (slash == NULL)
        return 0;
    p = slash + 1;
    plen = strlen(p);
    if (plen > 0 && p[plen - 1] == '/')
        plen--; /* "s3://bucket/prefix/" names the same vault */
    if (plen >= S3_PREFIX_MAX)
        return error_set(PQV_E_INVAL, url, "prefix too long");
    /* Every component non-empty, not "." or "..", no control character. */
    for (size_t i = 0, start = 0; i <= plen; i++) {
        if (i < plen && ((unsigned char)p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\'))
            return error_set(PQV_E_INVAL, url, "control character or '\\' in the prefix");
        if (i == plen || p[i] == '/') {
            size_t n = i - start;
            if (plen > 0 && (n == 0 || (n == 1 && p[start] == '.') ||
                (n == 2 && p[start] == '.' && p[start + 1] == '.')))
                return error_set(PQV_E_INVAL, url, "empty, \".\" or \"..\" component in the prefix");
            start = i + 1;
        }
    }
    memcpy(prefix, p, plen);
    prefix[plen] = '\0';
    return 0;
}

int
s3_config_endpoint_parse(const char *url, struct s3_endpoint *ep)
{
    const char *h, *end, *port = NULL;
    size_t hlen;

    memset(ep, 0, sizeof(*ep));
    if (url == NULL)
        return PQV_E_INVAL;
    if (strncmp(url, "https://", 8) == 0) {
        ep->https = 1;
        h = url + 8;
    } else if (strncmp(url, "http://", 7) == 0) {
        h = url + 7;
    } else {
        return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: must start with https:// (or http://)", url);
    }
    end = h + strcspn(h, "/?#");
    if (*end == '/' && end[1] != '\0')
        return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: no path allowed", url);
    if (*end == '?' || *end == '#')
        return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: no query allowed", url);
    if (h[0] == '[') {
        const char *close = memchr(h, ']', (size_t)(end - h));
        if (close == NULL)
            return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: bad IPv6 address", url);
        for (const char *q = h + 1; q < close; q++)
            if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') ||
                (*q >= 'A' && *q <= 'F') || *q == ':' || *q == '.'))
                return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: bad IPv6 address", url);
        hlen = (size_t)(close + 1 - h);
        if (close + 1 < end) {
            if (close[1] != ':')
                return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: bad host", url);
            port = close + 2;
        }
    } else {
        const char *colon = memchr(h, ':', (size_t)(end - h));
        hlen = (size_t)((colon != NULL ? colon : end) - h);
        for (size_t i = 0; i < hlen; i++) {
            char c = h[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '-'))
                return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: bad host name", url);
        }
        if (colon != NULL)
            port = colon + 1;
    }
    if (hlen == 0 || hlen >= sizeof(ep->host))
        return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: bad host", url);
    memcpy(ep->host, h, hlen);
    ep->host[hlen] = '\0';
    if (port != NULL) {
        unsigned long v = 0;
        if (port == end)
            return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: empty port", url);
        for (const char *q = port; q < end; q++) {
            if (*q < '0' || *q > '9' || (v = v * 10 + (unsigned long)(*q - '0')) > 65535)
                return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: bad port", url);
        }
        if (v == 0)
            return error_set(PQV_E_INVAL, NULL, "S3 endpoint %.80s: bad port", url);
        ep->port = (unsigned)v;
    }
    return 0;
}

/* trim(s, n): strip spaces and tabs at both ends of the ${n} bytes at *${s}. */
static void
trim(const char **s, size_t *n)
{
    while (*n > 0 && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

static int
eq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static char *
dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);

    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static void
free_secret(char **p)
{
    if (*p != NULL) {
        util_wipe(*p, strlen(*p));
        free(*p);
        *p = NULL;
    }
}

int
s3_config_credentials_parse(const char *text, size_t len, const char *profile, char **ak, char **sk,
    char **token)
{
    const char *p = text, *end = text + len;
    int in_profile = 0, in_section = 0, found = 0, rc = 0;
    unsigned line = 0;
    char **slot;

    *ak = *sk = *token = NULL;
    if (len > S3_CREDENTIALS_MAX)
        return error_set(PQV_E_INVAL, NULL, "credentials file larger than %u bytes", S3_CREDENTIALS_MAX);
    if (memchr(text, '\0', len) != NULL)
        return error_set(PQV_E_INVAL, NULL, "credentials file: NUL byte");
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *s = p, *eqp;
        size_t n = (size_t)((nl != NULL ? nl : end) - p);

        p = nl != NULL ? nl + 1 : end;
        line++;
        if (n > 0 && s[n - 1] == '\r')
            n--;
        trim(&s, &n);
        if (n == 0 || s[0] == '#' || s[0] == ';')
            continue;
        if (s[0] == '[') {
            const char *name = s + 1;
            size_t nn = n - 1;
            if (n < 3 || s[n - 1] != ']') {
                rc = error_set(PQV_E_INVAL, NULL, "credentials file: line %u: bad section header", line);
                goto err;
            }
            nn--;
            trim(&name, &nn);
            in_section = 1;
            in_profile = nn > 0 && strlen(profile) == nn && memcmp(name, profile, nn) == 0;
            found |= in_profile;
            continue;
        }
        if ((eqp = memchr(s, '=', n)) == NULL) {
            rc = error_set(PQV_E_INVAL, NULL, "credentials file: line %u: expected key = value", line);
            goto err;
        }
        if (!in_section) {
            rc = error_set(PQV_E_INVAL, NULL, "credentials file: line %u: key outside a section", line);
            goto err;
        }
        {
            const char *k = s, *v = eqp + 1;
            size_t kn = (size_t)(eqp - s), vn = n - kn - 1;
            trim(&k, &kn);
            trim(&v, &vn);
            if (kn == 0) {
                rc = error_set(PQV_E_INVAL, NULL, "credentials file: line %u: empty key", line);
                goto err;
            }
            if (!in_profile)
                continue;
            if (eq(k, kn, "aws_access_key_id"))
                slot = ak;
            else if (eq(k, kn, "aws_secret_access_key"))
                slot = sk;
            else if (eq(k, kn, "aws_session_token"))
                slot = token;
            else
                continue;
            if (*slot != NULL) {
                rc = error_set(PQV_E_INVAL, NULL, "credentials file: line %u: repeated key", line);
                goto err;
            }
            if ((*slot = dup_n(v, vn)) == NULL) {
                rc = PQV_E_NOMEM;
                goto err;
            }
        }
    }
    if (!found || *ak == NULL || *sk == NULL || **ak == '\0' || **sk == '\0') {
        rc = error_set(PQV_E_NOTFOUND, NULL, "credentials file: no key pair in profile [%.64s]", profile);
        goto err;
    }
    /* Success! */
    return 0;

err:
    /* Failure! */
    free_secret(ak);
    free_secret(sk);
    free_secret(token);
    return rc;
}

/* printable(s, max): non-empty, at most ${max} bytes of printable ASCII
 * without spaces. */
static int
printable(const char *s, size_t max)
{
    size_t n = strlen(s);

    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return 0;
    return 1;
}

static const char *
env(const char *name)
{
    const char *v = getenv(name);

    return v != NULL && *v != '\0' ? v : NULL;
}

/* read_credentials_file(path, buf, len): the whole regular file ${path}
 * (at most S3_CREDENTIALS_MAX bytes).  PQV_E_NOTFOUND if absent. */
static int
read_credentials_file(const char *path, char **buf, size_t *len)
{
    struct stat st;
    ssize_t r;
    size_t n = 0;
    char *b;
    int fd, e;

    *buf = NULL;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
        e = errno;
        return error_set(e == ENOENT ? PQV_E_NOTFOUND : PQV_E_IO, NULL, "%.180s: %s", path, strerror(e));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)S3_CREDENTIALS_MAX) {
        close(fd);
        return error_set(PQV_E_INVAL, NULL, "%.180s: not a regular file of at most %u bytes", path, S3_CREDENTIALS_MAX);
    }
    if ((b = malloc(S3_CREDENTIALS_MAX + 1)) == NULL) {
        close(fd);
        return PQV_E_NOMEM;
    }
    while ((r = read(fd, b + n, S3_CREDENTIALS_MAX + 1 - n)) > 0 && n + (size_t)r <= S3_CREDENTIALS_MAX)
        n += (size_t)r;
    e = errno;
    close(fd);
    if (r != 0) {
        util_wipe(b, S3_CREDENTIALS_MAX + 1);
        free(b);
        if (r > 0)
            return error_set(PQV_E_INVAL, NULL, "%.180s: larger than %u bytes", path, S3_CREDENTIALS_MAX);
        return error_set(PQV_E_IO, NULL, "%.180s: %s", path, strerror(e));
    }
    *buf = b;
    *len = n;
    return 0;
}

static int
set_str(char **dst, const char *src)
{
    if ((*dst = strdup(src)) == NULL)
        return PQV_E_NOMEM;
    return 0;
}

/* credentials_from_file(c): the key pair of $AWS_PROFILE in the shared
 * credentials file. */
static int
credentials_from_file(struct pqv_s3_config *c)
{
    const char *file = env("AWS_SHARED_CREDENTIALS_FILE"), *profile = env("AWS_PROFILE");
    char path[4096], *text = NULL;
    size_t len = 0;
    int rc;

    if (profile == NULL)
        profile = "default";
    if (file == NULL) {
        const char *home = env("HOME");
        if (home == NULL)
            return error_set(PQV_E_INVAL, NULL, "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (HOME is not set, so no ~/.aws/credentials)");
        if (snprintf(path, sizeof(path), "%s/.aws/credentials", home) >= (int)sizeof(path))
            return error_set(PQV_E_INVAL, NULL, "HOME too long");
        file = path;
    }
    rc = read_credentials_file(file, &text, &len);
    if (rc == PQV_E_NOTFOUND)
        return error_set(PQV_E_INVAL, NULL, "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or write %.150s", file);
    if (rc != 0)
        return rc;
    rc = s3_config_credentials_parse(text, len, profile, &c->access_key, &c->secret_key,
        &c->session_token);
    util_wipe(text, S3_CREDENTIALS_MAX + 1);
    free(text);
    if (rc == PQV_E_NOTFOUND)
        return error_set(PQV_E_INVAL, NULL, "no S3 credentials: %.100s has no aws_access_key_id and aws_secret_access_key in [%.40s]", file, profile);
    if (rc != 0) {
        /* "credentials file: line 3: ..." becomes "FILE: line 3: ...". */
        char why[160];
        const char *d = pqv_error_detail();
        if (strncmp(d, "credentials file: ", 18) == 0)
            d += 18;
        snprintf(why, sizeof(why), "%s", d);
        return error_set(rc, NULL, "%.90s: %s", file, why);
    }
    return 0;
}

int
pqv_s3_config_from_env(struct pqv_s3_config *c, const char *endpoint_opt, const char *ca_opt)
{
    const char *endpoint, *region, *ak, *sk, *tok, *ca;
    struct s3_endpoint ep;
    int rc;

    if (c == NULL)
        return PQV_E_INVAL;
    memset(c, 0, sizeof(*c));
    c->path_style = -1;
    endpoint = endpoint_opt != NULL ? endpoint_opt : env("AWS_ENDPOINT_URL_S3");
    if (endpoint == NULL)
        endpoint = env("AWS_ENDPOINT_URL");
    if (endpoint != NULL) {
        if ((rc = s3_config_endpoint_parse(endpoint, &ep)) != 0)
            return rc;
        if ((rc = set_str(&c->endpoint, endpoint)) != 0)
            return rc;
    }
    region = env("AWS_REGION");
    if (region == NULL)
        region = env("AWS_DEFAULT_REGION");
    if (region == NULL)
        region = "us-east-1";
    for (const char *q = region; *q; q++)
        if (!is_lower_alnum(*q) && *q != '-')
            return error_set(PQV_E_INVAL, NULL, "AWS_REGION: invalid region name");
    if (strlen(region) > REGION_MAX)
        return error_set(PQV_E_INVAL, NULL, "AWS_REGION: region name too long");
    if ((rc = set_str(&c->region, region)) != 0)
        return rc;

    ak = env("AWS_ACCESS_KEY_ID");
    sk = env("AWS_SECRET_ACCESS_KEY");
    tok = env("AWS_SESSION_TOKEN");
    if ((ak == NULL) != (sk == NULL))
        return error_set(PQV_E_INVAL, NULL, "%s is set but %s is not", ak != NULL ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY", ak != NULL ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    if (ak != NULL) {
        if ((rc = set_str(&c->access_key, ak)) != 0 || (rc = set_str(&c->secret_key, sk)) != 0 ||
            (tok != NULL && (rc = set_str(&c->session_token, tok)) != 0))
            return rc;
    } else if ((rc = credentials_from_file(c)) != 0) {
        return rc;
    }
    if (!printable(c->access_key, KEY_ID_MAX))
        return error_set(PQV_E_INVAL, NULL, "S3 access key id: empty, too long or not printable");
    if (!printable(c->secret_key, S3_SECRET_MAX))
        return error_set(PQV_E_INVAL, NULL, "S3 secret key: empty, too long or not printable");
    if (c->session_token != NULL && !printable(c->session_token, TOKEN_MAX))
        return error_set(PQV_E_INVAL, NULL, "S3 session token: too long or not printable");

    ca = ca_opt != NULL ? ca_opt : env("AWS_CA_BUNDLE");
    if (ca != NULL && (rc = set_str(&c->ca_file, ca)) != 0)
        return rc;
    return 0;
}

void
pqv_s3_config_clear(struct pqv_s3_config *c)
{
    if (c == NULL)
        return;
    free(c->endpoint);
    free(c->region);
    free(c->access_key);
    free_secret(&c->secret_key);
    free_secret(&c->session_token);
    free(c->ca_file);
    memset(c, 0, sizeof(*c));
    c->path_style = -1;
}
