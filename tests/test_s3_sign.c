/*
 * test_s3_sign.c: the S3 backend's pieces that need no server: the SigV4
 * signer against published examples, s3:// URL and endpoint parsing, the
 * shared credentials file, the configuration from the environment, and
 * the XML of ListObjectsV2 pages and error bodies.
 *
 * Expected values are facts from two published sources:
 *  - the AWS Signature Version 4 test suite (service "service", region
 *    us-east-1, key AKIDEXAMPLE, 2015-08-30T12:36:00Z);
 *  - the Amazon S3 API reference's SigV4 examples (bucket examplebucket,
 *    key AKIAIOSFODNN7EXAMPLE, 2013-05-24T00:00:00Z): GET Object with a
 *    Range, PUT Object, GET Bucket lifecycle, GET Bucket (list objects).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "pqvault/storage.h"
#include "storage/s3_config.h"
#include "storage/s3_http.h"
#include "storage/s3_sign.h"
#include "storage/s3_xml.h"
#include "util/util.h"

#define EMPTY_HASH "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* ---- the AWS SigV4 test suite ---- */

#define SUITE_KEY "AKIDEXAMPLE"
#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_DATE "20150830T123600Z"
#define SUITE_SCOPE "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"

struct suite_case {
    const char *name;
    const char *method;
    const char *path;            /* canonical (encoded) */
    struct s3_param query[2];
    size_t nquery;
    struct s3_header extra[4];   /* besides host and x-amz-date */
    size_t nextra;
    const char *payload;
    const char *signed_headers;
    const char *signature;
};

static const struct suite_case suite[] = {
    { "get-vanilla", "GET", "/", { { 0 } }, 0, { { 0 } }, 0, "", "host;x-amz-date",
      "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
    { "get-vanilla-query-order-key-case", "GET", "/",
      { { "Param2", "value2" }, { "Param1", "value1" } }, 2, { { 0 } }, 0, "",
      "host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500" },
    { "get-vanilla-empty-query-key", "GET", "/", { { "Param1", "value1" } }, 1, { { 0 } }, 0,
      "", "host;x-amz-date", "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb" },
    { "get-vanilla-query-unreserved", "GET", "/",
      { { "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
          "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" } }, 1,
      { { 0 } }, 0, "", "host;x-amz-date",
      "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197" },
    { "get-vanilla-utf8-query", "GET", "/", { { "\xe1\x88\xb4", "bar" } }, 1, { { 0 } }, 0, "",
      "host;x-amz-date", "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04" },
    { "get-unreserved", "GET",
      "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", { { 0 } }, 0,
      { { 0 } }, 0, "", "host;x-amz-date",
      "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f" },
    { "get-utf8", "GET", "/%E1%88%B4", { { 0 } }, 0, { { 0 } }, 0, "", "host;x-amz-date",
      "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85" },
    { "get-header-value-trim", "GET", "/", { { 0 } }, 0,
      { { "My-Header1", " value1" }, { "My-Header2", " \"a   b   c\"" } }, 2, "",
      "host;my-header1;my-header2;x-amz-date",
      "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736" },
    { "get-header-key-duplicate", "GET", "/", { { 0 } }, 0,
      { { "My-Header1", "value2" }, { "My-Header1", "value2" }, { "My-Header1", "value1" } }, 3,
      "", "host;my-header1;x-amz-date",
      "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea" },
    { "get-header-value-order", "GET", "/", { { 0 } }, 0,
      { { "My-Header1", "value4" }, { "My-Header1", "value1" }, { "My-Header1", "value3" },
        { "My-Header1", "value2" } }, 4, "", "host;my-header1;x-amz-date",
      "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01" },
    { "post-vanilla", "POST", "/", { { 0 } }, 0, { { 0 } }, 0, "", "host;x-amz-date",
      "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b" },
    { "post-vanilla-empty-query-value", "POST", "/", { { "Param1", "value1" } }, 1, { { 0 } },
      0, "", "host;x-amz-date", "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11" },
    { "post-header-key-sort", "POST", "/", { { 0 } }, 0, { { "My-Header1", "value1" } }, 1, "",
      "host;my-header1;x-amz-date",
      "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c" },
    { "post-header-value-case", "POST", "/", { { 0 } }, 0, { { "My-Header1", "VALUE1" } }, 1, "",
      "host;my-header1;x-amz-date",
      "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d" },
    { "post-sts-header-before", "POST", "/", { { 0 } }, 0,
      { { "X-Amz-Security-Token",
          "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMi"
          "cRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZamp"
          "KsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD"
          "0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLx"
          "BA==" } }, 1, "", "host;x-amz-date;x-amz-security-token",
      "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead" },
    { "post-x-www-form-urlencoded", "POST", "/", { { 0 } }, 0,
      { { "Content-Type", "application/x-www-form-urlencoded" } }, 1, "Param1=value1",
      "content-type;host;x-amz-date",
      "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a" },
};

/* sign_suite(c, out): sign test-suite case ${c}. */
static int
sign_suite(const struct suite_case *c, struct s3_sign_output *out)
{
    struct s3_header h[8];
    struct s3_sign_input in;
    char hash[S3_HEX_HASH_LEN];
    size_t n = 0;

    h[n++] = (struct s3_header){ "Host", "example.amazonaws.com" };
    h[n++] = (struct s3_header){ "X-Amz-Date", SUITE_DATE };
    for (size_t i = 0; i < c->nextra; i++)
        h[n++] = c->extra[i];
    if (s3_sign_sha256_hex(c->payload, strlen(c->payload), hash) != 0)
        return -1;
    memset(&in, 0, sizeof(in));
    in.method = c->method;
    in.path = c->path;
    in.query = c->query;
    in.nquery = c->nquery;
    in.headers = h;
    in.nheaders = n;
    in.payload_hash = hash;
    in.amz_date = SUITE_DATE;
    in.region = "us-east-1";
    in.service = "service";
    in.access_key = SUITE_KEY;
    in.secret_key = SUITE_SECRET;
    return s3_sign(&in, out);
}

static void
test_sigv4_suite(void)
{
    for (size_t i = 0; i < sizeof(suite) / sizeof(suite[0]); i++) {
        const struct suite_case *c = &suite[i];
        struct s3_sign_output out;
        char authz[600];

        REQUIRE(sign_suite(c, &out) == 0);
        snprintf(authz, sizeof(authz),
            "AWS4-HMAC-SHA256 Credential=" SUITE_SCOPE ", SignedHeaders=%s, Signature=%s",
            c->signed_headers, c->signature);
        if (strcmp(out.signature, c->signature) != 0)
            fprintf(stderr, "  %s: signature %s\n", c->name, out.signature);
        CHECK(strcmp(out.signature, c->signature) == 0);
        CHECK(strcmp(out.authorization, authz) == 0);
        s3_sign_output_clear(&out);
    }
}

/* The intermediate steps, where the suite publishes them. */
static void
test_sigv4_suite_steps(void)
{
    struct s3_sign_output out;

    /* get-vanilla */
    REQUIRE(sign_suite(&suite[0], &out) == 0);
    CHECK(strcmp(out.canonical_request,
        "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
        "host;x-amz-date\n" EMPTY_HASH) == 0);
    CHECK(strcmp(out.string_to_sign,
        "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63") == 0);
    s3_sign_output_clear(&out);

    /* get-unreserved */
    REQUIRE(sign_suite(&suite[5], &out) == 0);
    CHECK(strcmp(out.canonical_request,
        "GET\n/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\n\n"
        "host:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
        EMPTY_HASH) == 0);
    CHECK(strstr(out.string_to_sign,
        "6a968768eefaa713e2a6b16b589a8ea192661f098f37349f4e2c0082757446f9") != NULL);
    s3_sign_output_clear(&out);

    /* get-vanilla-query-order-key-case: the query is sorted */
    REQUIRE(sign_suite(&suite[1], &out) == 0);
    CHECK(strstr(out.canonical_request, "\n/\nParam1=value1&Param2=value2\n") != NULL);
    s3_sign_output_clear(&out);

    /* post-x-www-form-urlencoded */
    REQUIRE(sign_suite(&suite[15], &out) == 0);
    CHECK(strcmp(out.canonical_request,
        "POST\n/\n\ncontent-type:application/x-www-form-urlencoded\n"
        "host:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
        "content-type;host;x-amz-date\n"
        "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e") == 0);
    CHECK(strcmp(out.string_to_sign,
        "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
        "42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281") == 0);
    s3_sign_output_clear(&out);

    /* get-header-value-trim: trimmed, inner runs collapsed */
    REQUIRE(sign_suite(&suite[7], &out) == 0);
    CHECK(strstr(out.canonical_request, "\nmy-header1:value1\nmy-header2:\"a b c\"\n") != NULL);
    s3_sign_output_clear(&out);

    /* get-header-key-duplicate: one line, values in order */
    REQUIRE(sign_suite(&suite[8], &out) == 0);
    CHECK(strstr(out.canonical_request, "\nmy-header1:value2,value2,value1\n") != NULL);
    s3_sign_output_clear(&out);
}

/* ---- the S3 documentation's examples ---- */

#define S3_KEY "AKIAIOSFODNN7EXAMPLE"
#define S3_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define S3_DATE "20130524T000000Z"
#define S3_HOST "examplebucket.s3.amazonaws.com"

static int
sign_s3(const char *method, const char *key, const struct s3_param *q, size_t nq,
    const struct s3_header *extra, size_t nextra, const char *payload, struct s3_sign_output *out)
{
    struct s3_header h[8];
    struct s3_sign_input in;
    char hash[S3_HEX_HASH_LEN], path[256];
    size_t n = 0;

    if (s3_sign_sha256_hex(payload, strlen(payload), hash) != 0)
        return -1;
    path[0] = '/';
    if (s3_sign_uri_encode(path + 1, sizeof(path) - 1, key, strlen(key), 0) < 0)
        return -1;
    h[n++] = (struct s3_header){ "Host", S3_HOST };
    h[n++] = (struct s3_header){ "x-amz-date", S3_DATE };
    h[n++] = (struct s3_header){ "x-amz-content-sha256", hash };
    for (size_t i = 0; i < nextra; i++)
        h[n++] = extra[i];
    memset(&in, 0, sizeof(in));
    in.method = method;
    in.path = path;
    in.query = q;
    in.nquery = nq;
    in.headers = h;
    in.nheaders = n;
    in.payload_hash = hash;
    in.amz_date = S3_DATE;
    in.region = "us-east-1";
    in.service = "s3";
    in.access_key = S3_KEY;
    in.secret_key = S3_SECRET;
    return s3_sign(&in, out);
}

static void
test_s3_get_object_range(void)
{
    const struct s3_header range = { "Range", "bytes=0-9" };
    struct s3_sign_output out;

    REQUIRE(sign_s3("GET", "test.txt", NULL, 0, &range, 1, "", &out) == 0);
    CHECK(strcmp(out.canonical_request,
        "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
        "x-amz-content-sha256:" EMPTY_HASH "\nx-amz-date:20130524T000000Z\n\n"
        "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY_HASH) == 0);
    CHECK(strcmp(out.string_to_sign,
        "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
        "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972") == 0);
    CHECK(strcmp(out.signature,
        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41") == 0);
    CHECK(strcmp(out.authorization,
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41") == 0);
    s3_sign_output_clear(&out);
}

static void
test_s3_put_object(void)
{
    const struct s3_header h[2] = { { "Date", "Fri, 24 May 2013 00:00:00 GMT" },
        { "x-amz-storage-class", "REDUCED_REDUNDANCY" } };
    struct s3_sign_output out;
    char hash[S3_HEX_HASH_LEN];

    CHECK(s3_sign_sha256_hex("Welcome to Amazon S3.", 21, hash) == 0);
    CHECK(strcmp(hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072") == 0);
    /* The key "test$file.text": '$' is encoded once, as %24. */
    REQUIRE(sign_s3("PUT", "test$file.text", NULL, 0, h, 2, "Welcome to Amazon S3.", &out) == 0);
    CHECK(strncmp(out.canonical_request, "PUT\n/test%24file.text\n\n", 23) == 0);
    CHECK(strstr(out.canonical_request,
        "\ndate;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n") != NULL);
    CHECK(strstr(out.string_to_sign,
        "\n9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d") != NULL);
    CHECK(strcmp(out.signature,
        "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd") == 0);
    s3_sign_output_clear(&out);
}

static void
test_s3_get_lifecycle(void)
{
    /* "?lifecycle": a key without a value signs as "lifecycle=". */
    const struct s3_param q = { "lifecycle", NULL };
    struct s3_sign_output out;

    REQUIRE(sign_s3("GET", "", &q, 1, NULL, 0, "", &out) == 0);
    CHECK(strncmp(out.canonical_request, "GET\n/\nlifecycle=\n", 17) == 0);
    CHECK(strcmp(out.signature,
        "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543") == 0);
    s3_sign_output_clear(&out);
}

static void
test_s3_list_objects(void)
{
    /* Given in the other order: sorted when signed. */
    const struct s3_param q[2] = { { "prefix", "J" }, { "max-keys", "2" } };
    struct s3_sign_output out;

    REQUIRE(sign_s3("GET", "", q, 2, NULL, 0, "", &out) == 0);
    CHECK(strncmp(out.canonical_request, "GET\n/\nmax-keys=2&prefix=J\n", 26) == 0);
    CHECK(strcmp(out.signature,
        "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == 0);
    s3_sign_output_clear(&out);
}

static void
test_sign_query_encoding(void)
{
    const struct s3_param q[4] = { { "prefix", "a b/c+d" }, { "list-type", "2" },
        { "continuation-token", "1/x=y" }, { "b", "" } };
    char *s = NULL;

    REQUIRE(s3_sign_query(q, 4, &s) == 0);
    CHECK(strcmp(s, "b=&continuation-token=1%2Fx%3Dy&list-type=2&prefix=a%20b%2Fc%2Bd") == 0);
    free(s);
    REQUIRE(s3_sign_query(NULL, 0, &s) == 0);
    CHECK(strcmp(s, "") == 0);
    free(s);
}

static void
test_uri_encode(void)
{
    char out[32];

    CHECK(s3_sign_uri_encode(out, sizeof(out), "a b/c", 5, 0) == 7);
    CHECK(strcmp(out, "a%20b/c") == 0);
    CHECK(s3_sign_uri_encode(out, sizeof(out), "a b/c", 5, 1) == 9);
    CHECK(strcmp(out, "a%20b%2Fc") == 0);
    CHECK(s3_sign_uri_encode(out, sizeof(out), "\xc3\xb1-_.~", 6, 1) > 0);
    CHECK(strcmp(out, "%C3%B1-_.~") == 0);
    CHECK(s3_sign_uri_encode(out, 4, "abcd", 4, 1) == -1);
    CHECK(s3_sign_uri_encode(out, 5, "abcd", 4, 1) == 4);
    CHECK(s3_sign_uri_encode(out, 3, "%", 1, 1) == -1);
}

static void
test_sign_refuses_incomplete(void)
{
    struct s3_sign_input in;
    struct s3_sign_output out;

    memset(&in, 0, sizeof(in));
    in.method = "GET";
    in.path = "/";
    CHECK(s3_sign(&in, &out) == PQV_E_INVAL);
    in.payload_hash = EMPTY_HASH;
    in.amz_date = "2013";
    in.region = "us-east-1";
    in.service = "s3";
    in.access_key = "A";
    in.secret_key = "B";
    CHECK(s3_sign(&in, &out) == PQV_E_INVAL);
    CHECK(out.canonical_request == NULL);
}

/* ---- s3:// URLs and endpoints ---- */

static void
test_url_parse(void)
{
    static const char *bad[] = {
        "s3:/bucket", "S3://bucket", "s3://", "s3://ab", "s3://Bucket", "s3://-bucket",
        "s3://bucket-", "s3://buc..ket", "s3://192.168.1.1", "s3://bu_cket",
        "s3://bucket//x", "s3://bucket/a//b", "s3://bucket/a/../b", "s3://bucket/./a",
        "s3://bucket/..", "s3://bucket/a/.", "s3://bucket/a\nb", "s3://bucket/a\\b",
        "s3://bucket/\x7f", "http://bucket/x",
        "s3://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    };
    char bucket[S3_BUCKET_MAX], prefix[S3_PREFIX_MAX], big[700];

    CHECK(s3_config_url_parse("s3://bucket", bucket, prefix) == 0);
    CHECK(strcmp(bucket, "bucket") == 0 && strcmp(prefix, "") == 0);
    CHECK(s3_config_url_parse("s3://bucket/", bucket, prefix) == 0);
    CHECK(strcmp(prefix, "") == 0);
    CHECK(s3_config_url_parse("s3://my-bucket.x1/pre/fix", bucket, prefix) == 0);
    CHECK(strcmp(bucket, "my-bucket.x1") == 0 && strcmp(prefix, "pre/fix") == 0);
    CHECK(s3_config_url_parse("s3://abc/v/", bucket, prefix) == 0);
    CHECK(strcmp(prefix, "v") == 0);
    CHECK(s3_config_url_parse("s3://abc/a.b/..c/d e", bucket, prefix) == 0);
    CHECK(strcmp(prefix, "a.b/..c/d e") == 0);
    CHECK(s3_config_url_parse("s3://1.2.3/x", bucket, prefix) == 0);
    CHECK(s3_config_url_parse("s3://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", bucket,
        prefix) == 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = s3_config_url_parse(bad[i], bucket, prefix);
        if (rc != PQV_E_INVAL)
            fprintf(stderr, "  accepted: %s\n", bad[i]);
        CHECK(rc == PQV_E_INVAL);
    }
    memcpy(big, "s3://bucket/", 12);
    memset(big + 12, 'p', sizeof(big) - 13);
    big[sizeof(big) - 1] = '\0';
    CHECK(s3_config_url_parse(big, bucket, prefix) == PQV_E_INVAL);
    CHECK(pqv_s3_is_url("s3://x") && !pqv_s3_is_url("/tmp/s3://x") && !pqv_s3_is_url(NULL));
}

static void
test_endpoint_parse(void)
{
    static const char *bad[] = {
        "ftp://host", "host:80", "https://", "https://:80", "https://host:", "https://host:0",
        "https://host:70000", "https://host:8a", "https://user@host", "https://host/path",
        "https://host?x=1", "https://[::1", "https://[::1]x", "https://ho st", "http://h#f",
    };
    struct s3_endpoint ep;

    CHECK(s3_config_endpoint_parse("http://127.0.0.1:7480", &ep) == 0);
    CHECK(!ep.https && strcmp(ep.host, "127.0.0.1") == 0 && ep.port == 7480);
    CHECK(s3_config_endpoint_parse("https://s3.eu-west-1.amazonaws.com/", &ep) == 0);
    CHECK(ep.https && strcmp(ep.host, "s3.eu-west-1.amazonaws.com") == 0 && ep.port == 0);
    CHECK(s3_config_endpoint_parse("http://[::1]:9000", &ep) == 0);
    CHECK(strcmp(ep.host, "[::1]") == 0 && ep.port == 9000);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = s3_config_endpoint_parse(bad[i], &ep);
        if (rc != PQV_E_INVAL)
            fprintf(stderr, "  accepted: %s\n", bad[i]);
        CHECK(rc == PQV_E_INVAL);
    }
}

/* ---- the shared credentials file ---- */

static int
parse_creds(const char *text, const char *profile, char **ak, char **sk, char **tok)
{
    return s3_config_credentials_parse(text, strlen(text), profile, ak, sk, tok);
}

static void
free3(char **a, char **b, char **c)
{
    free(*a);
    free(*b);
    free(*c);
    *a = *b = *c = NULL;
}

static void
test_credentials_file(void)
{
    const char *text =
        "# comment\n"
        "; another\n"
        "\n"
        "[default]\n"
        "aws_access_key_id = AKDEFAULT\n"
        "aws_secret_access_key=SECRETDEFAULT  \n"
        "region = eu-west-1\n"
        "  [ work ]  \r\n"
        "\taws_access_key_id\t=\tAKWORK\r\n"
        "aws_secret_access_key = SECRET/WORK+=\r\n"
        "aws_session_token = TOKEN==\r\n"
        "[other]\n"
        "aws_access_key_id = AKOTHER\n";
    char *ak, *sk, *tok;

    REQUIRE(parse_creds(text, "default", &ak, &sk, &tok) == 0);
    CHECK(strcmp(ak, "AKDEFAULT") == 0 && strcmp(sk, "SECRETDEFAULT") == 0 && tok == NULL);
    free3(&ak, &sk, &tok);
    REQUIRE(parse_creds(text, "work", &ak, &sk, &tok) == 0);
    CHECK(strcmp(ak, "AKWORK") == 0 && strcmp(sk, "SECRET/WORK+=") == 0);
    CHECK(tok != NULL && strcmp(tok, "TOKEN==") == 0);
    free3(&ak, &sk, &tok);
    /* A profile without a secret, and a missing profile. */
    CHECK(parse_creds(text, "other", &ak, &sk, &tok) == PQV_E_NOTFOUND);
    CHECK(ak == NULL && sk == NULL && tok == NULL);
    CHECK(parse_creds(text, "nope", &ak, &sk, &tok) == PQV_E_NOTFOUND);
    CHECK(parse_creds("", "default", &ak, &sk, &tok) == PQV_E_NOTFOUND);
    /* No final newline is fine. */
    CHECK(parse_creds("[p]\naws_access_key_id=a\naws_secret_access_key=b", "p", &ak, &sk, &tok)
        == 0);
    free3(&ak, &sk, &tok);
}

static void
test_credentials_malformed(void)
{
    static const struct {
        const char *text;
        const char *detail;
    } bad[] = {
        { "aws_access_key_id = AK\n", "line 1: key outside a section" },
        { "[default]\naws_secret_access_key TOPSECRET\n", "line 2: expected key = value" },
        { "[default\naws_access_key_id = AK\n", "line 1: bad section header" },
        { "[]\n", "line 1: bad section header" },
        { "[default]\n = TOPSECRET\n", "line 2: empty key" },
        { "[default]\naws_secret_access_key = TOPSECRET\naws_secret_access_key = TOPSECRET2\n",
          "line 3: repeated key" },
    };
    char *ak, *sk, *tok;
    char *big;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK(parse_creds(bad[i].text, "default", &ak, &sk, &tok) == PQV_E_INVAL);
        CHECK(strstr(pqv_error_detail(), bad[i].detail) != NULL);
        /* Messages never quote the file's contents. */
        CHECK(strstr(pqv_error_detail(), "TOPSECRET") == NULL);
        CHECK(ak == NULL && sk == NULL && tok == NULL);
    }
    CHECK(s3_config_credentials_parse("[default]\naws_access_key_id = A\0B\n", 34, "default", &ak, &sk,
        &tok) == PQV_E_INVAL);
    /* Oversized input is refused before parsing. */
    REQUIRE((big = malloc(S3_CREDENTIALS_MAX + 2)) != NULL);
    memset(big, '#', S3_CREDENTIALS_MAX + 1);
    big[S3_CREDENTIALS_MAX + 1] = '\0';
    CHECK(s3_config_credentials_parse(big, S3_CREDENTIALS_MAX + 1, "default", &ak, &sk, &tok) ==
        PQV_E_INVAL);
    CHECK(s3_config_credentials_parse(big, S3_CREDENTIALS_MAX, "default", &ak, &sk, &tok) ==
        PQV_E_NOTFOUND);
    free(big);
}

/* ---- the configuration from the environment ---- */

static void
clear_env(void)
{
    static const char *vars[] = { "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION",
        "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
        "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CA_BUNDLE" };

    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
}

static void
test_config_from_env(void)
{
    struct pqv_s3_config c;
    char dir[] = "/tmp/pqv-s3-test.XXXXXX", path[256];
    FILE *f;

    clear_env();
    setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "SECRETENV", 1);
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:7480", 1);
    setenv("AWS_DEFAULT_REGION", "eu-central-1", 1);
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == 0);
    CHECK(strcmp(c.endpoint, "http://127.0.0.1:7480") == 0);
    CHECK(strcmp(c.region, "eu-central-1") == 0);
    CHECK(strcmp(c.access_key, "AKENV") == 0 && strcmp(c.secret_key, "SECRETENV") == 0);
    CHECK(c.session_token == NULL && c.ca_file == NULL && c.path_style == -1);
    pqv_s3_config_clear(&c);
    CHECK(c.secret_key == NULL && c.endpoint == NULL);

    /* Options win over the environment; AWS_REGION over the default. */
    setenv("AWS_REGION", "us-west-2", 1);
    setenv("AWS_CA_BUNDLE", "/env/ca.pem", 1);
    CHECK(pqv_s3_config_from_env(&c, "https://s3.example.net", "/opt/ca.pem") == 0);
    CHECK(strcmp(c.endpoint, "https://s3.example.net") == 0);
    CHECK(strcmp(c.region, "us-west-2") == 0 && strcmp(c.ca_file, "/opt/ca.pem") == 0);
    pqv_s3_config_clear(&c);
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == 0);
    CHECK(strcmp(c.ca_file, "/env/ca.pem") == 0);
    pqv_s3_config_clear(&c);

    /* Half a key pair, a bad endpoint, a bad region. */
    unsetenv("AWS_SECRET_ACCESS_KEY");
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == PQV_E_INVAL);
    CHECK(strstr(pqv_error_detail(), "AWS_SECRET_ACCESS_KEY is not") != NULL);
    pqv_s3_config_clear(&c);
    setenv("AWS_SECRET_ACCESS_KEY", "SECRETENV", 1);
    CHECK(pqv_s3_config_from_env(&c, "ftp://x", NULL) == PQV_E_INVAL);
    pqv_s3_config_clear(&c);
    setenv("AWS_REGION", "Bad Region", 1);
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == PQV_E_INVAL);
    pqv_s3_config_clear(&c);
    unsetenv("AWS_REGION");
    setenv("AWS_SECRET_ACCESS_KEY", "has space", 1);
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == PQV_E_INVAL);
    CHECK(strstr(pqv_error_detail(), "has space") == NULL);
    pqv_s3_config_clear(&c);

    /* The shared credentials file, with a profile. */
    clear_env();
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/credentials", dir);
    REQUIRE((f = fopen(path, "w")) != NULL);
    fputs("[default]\naws_access_key_id = AKFILE\naws_secret_access_key = SKFILE\n"
        "[ci]\naws_access_key_id = AKCI\naws_secret_access_key = SKCI\n"
        "aws_session_token = TOKCI\n", f);
    fclose(f);
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == 0);
    CHECK(c.access_key != NULL && strcmp(c.access_key, "AKFILE") == 0);
    CHECK(c.endpoint == NULL && strcmp(c.region, "us-east-1") == 0);
    pqv_s3_config_clear(&c);
    setenv("AWS_PROFILE", "ci", 1);
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == 0);
    CHECK(c.session_token != NULL && strcmp(c.session_token, "TOKCI") == 0);
    pqv_s3_config_clear(&c);
    setenv("AWS_PROFILE", "missing", 1);
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == PQV_E_INVAL);
    CHECK(strstr(pqv_error_detail(), "[missing]") != NULL);
    pqv_s3_config_clear(&c);
    /* Environment keys come before the file. */
    setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "SECRETENV", 1);
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == 0);
    CHECK(strcmp(c.access_key, "AKENV") == 0);
    pqv_s3_config_clear(&c);
    unlink(path);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    CHECK(pqv_s3_config_from_env(&c, NULL, NULL) == PQV_E_INVAL);
    CHECK(strstr(pqv_error_detail(), "no S3 credentials") != NULL);
    pqv_s3_config_clear(&c);
    rmdir(dir);
    clear_env();
}

/* ---- XML ---- */

#define LIST_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" \
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" \
    "<Name>bucket</Name><Prefix>v/records/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"

static void
test_xml_list_pages(void)
{
    const char *page1 = LIST_HEAD
        "<IsTruncated>true</IsTruncated>"
        "<Contents><Key>v/records/ab/cd</Key><LastModified>2026-11-30T21:15:37.000Z"
        "</LastModified><ETag>&quot;764e&quot;</ETag><Size>123</Size>"
        "<StorageClass>STANDARD</StorageClass></Contents>"
        "<Contents><Size>0</Size><Key>v/records/a&amp;b</Key></Contents>"
        "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="
        "</NextContinuationToken></ListBucketResult>";
    const char *page2 = LIST_HEAD
        "<Contents><Key>v/records/zz</Key><Size>18446744073709551615</Size></Contents>"
        "<IsTruncated>false</IsTruncated></ListBucketResult>";
    const char *empty = LIST_HEAD "<IsTruncated>false</IsTruncated></ListBucketResult>";
    struct s3_list_page pg;

    REQUIRE(s3_xml_parse_list(page1, strlen(page1), &pg) == 0);
    CHECK(pg.n == 2 && pg.truncated == 1);
    CHECK(pg.n == 2 && strcmp(pg.entries[0].key, "v/records/ab/cd") == 0 &&
        pg.entries[0].size == 123);
    CHECK(pg.n == 2 && strcmp(pg.entries[1].key, "v/records/a&b") == 0 &&
        pg.entries[1].size == 0);
    CHECK(pg.next_token != NULL &&
        strcmp(pg.next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=") == 0);
    s3_xml_list_page_clear(&pg);
    s3_xml_list_page_clear(&pg);
    REQUIRE(s3_xml_parse_list(page2, strlen(page2), &pg) == 0);
    CHECK(pg.n == 1 && !pg.truncated && pg.next_token == NULL);
    CHECK(pg.n == 1 && pg.entries[0].size == UINT64_MAX);
    s3_xml_list_page_clear(&pg);
    REQUIRE(s3_xml_parse_list(empty, strlen(empty), &pg) == 0);
    CHECK(pg.n == 0 && !pg.truncated);
    s3_xml_list_page_clear(&pg);
}

static void
test_xml_list_malformed(void)
{
    static const char *bad[] = {
        "",
        "<ListBucketResult>",
        "<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents>",
        "<Error><Code>x</Code></Error>",
        LIST_HEAD "<IsTruncated>true</IsTruncated></ListBucketResult>",
        LIST_HEAD "<IsTruncated>maybe</IsTruncated></ListBucketResult>",
        LIST_HEAD "<Contents><Key>a</Key></Contents></ListBucketResult>",
        LIST_HEAD "<Contents><Size>1</Size></Contents></ListBucketResult>",
        LIST_HEAD "<Contents><Key>a</Key><Size>12a</Size></Contents></ListBucketResult>",
        LIST_HEAD "<Contents><Key>a</Key><Size>-1</Size></Contents></ListBucketResult>",
        (LIST_HEAD "<Contents><Key>a</Key><Size>18446744073709551616</Size></Contents>"
            "</ListBucketResult>"),
        LIST_HEAD "<Contents><Key></Key><Size>1</Size></Contents></ListBucketResult>",
        LIST_HEAD "<Contents><Key>a</Key><Size>1</Size></Contents></ListBucketResultX>",
        ("<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
            "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>"
            "<ListBucketResult><Contents><Key>&lol2;</Key><Size>1</Size></Contents>"
            "</ListBucketResult>"),
        "<!DOCTYPE x SYSTEM \"file:///etc/passwd\"><ListBucketResult></ListBucketResult>",
        ("<ListBucketResult><a><b><c><d><e><f><g><h><i>x</i></h></g></f></e></d></c></b></a>"
            "</ListBucketResult>"),
    };
    struct s3_list_page pg;
    char *doc;
    size_t n;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = s3_xml_parse_list(bad[i], strlen(bad[i]), &pg);
        if (rc != PQV_E_INTEGRITY)
            fprintf(stderr, "  accepted #%zu (%d)\n", i, rc);
        CHECK(rc == PQV_E_INTEGRITY);
        CHECK(pg.n == 0 && pg.entries == NULL && pg.next_token == NULL);
    }
    /* A key over 1024 bytes, a token over 4096. */
    REQUIRE((doc = malloc(16384)) != NULL);
    n = (size_t)snprintf(doc, 16384, LIST_HEAD "<Contents><Key>");
    memset(doc + n, 'k', 1025);
    n += 1025;
    n += (size_t)snprintf(doc + n, 16384 - n, "</Key><Size>1</Size></Contents></ListBucketResult>");
    CHECK(s3_xml_parse_list(doc, n, &pg) == PQV_E_INTEGRITY);
    n = (size_t)snprintf(doc, 16384, LIST_HEAD "<IsTruncated>true</IsTruncated>"
        "<NextContinuationToken>");
    memset(doc + n, 't', 4097);
    n += 4097;
    n += (size_t)snprintf(doc + n, 16384 - n, "</NextContinuationToken></ListBucketResult>");
    CHECK(s3_xml_parse_list(doc, n, &pg) == PQV_E_INTEGRITY);
    free(doc);
    /* More entries than any page may have. */
    REQUIRE((doc = malloc((S3_XML_MAX_ENTRIES + 1) * 64 + 1024)) != NULL);
    n = (size_t)sprintf(doc, LIST_HEAD);
    for (int i = 0; i <= (int)S3_XML_MAX_ENTRIES; i++)
        n += (size_t)sprintf(doc + n, "<Contents><Key>k%d</Key><Size>1</Size></Contents>", i);
    n += (size_t)sprintf(doc + n, "</ListBucketResult>");
    CHECK(s3_xml_parse_list(doc, n, &pg) == PQV_E_INTEGRITY);
    free(doc);
}

static void
test_xml_error_body(void)
{
    const char *rgw = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>PreconditionFailed"
        "</Code><Message></Message><BucketName>devbucket</BucketName><RequestId>tx00000"
        "1a7b-default</RequestId><HostId>100a-default-default</HostId></Error>";
    const char *aws = "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature "
        "we calculated does not match&#10;the signature you provided.</Message>"
        "<StringToSign>AWS4-HMAC-SHA256</StringToSign></Error>";
    struct s3_error_info e;
    char *big;

    REQUIRE(s3_xml_parse_error(rgw, strlen(rgw), &e) == 0);
    CHECK(strcmp(e.code, "PreconditionFailed") == 0 && e.message[0] == '\0');
    CHECK(strcmp(e.request_id, "tx000001a7b-default") == 0);
    REQUIRE(s3_xml_parse_error(aws, strlen(aws), &e) == 0);
    CHECK(strcmp(e.code, "SignatureDoesNotMatch") == 0);
    /* Control characters never reach a message. */
    CHECK(strstr(e.message, "match?the signature") != NULL);
    CHECK(s3_xml_parse_error("<Error><Code>x", 14, &e) == PQV_E_INTEGRITY);
    CHECK(e.code[0] == '\0');
    CHECK(s3_xml_parse_error("<html>502</html>", 16, &e) == PQV_E_INTEGRITY);
    CHECK(s3_xml_parse_error("", 0, &e) == PQV_E_INTEGRITY);
    /* Long fields are cut to their size. */
    REQUIRE((big = malloc(2000)) != NULL);
    strcpy(big, "<Error><Code>");
    memset(big + 13, 'C', 500);
    strcpy(big + 513, "</Code></Error>");
    REQUIRE(s3_xml_parse_error(big, strlen(big), &e) == 0);
    CHECK(strlen(e.code) == sizeof(e.code) - 1);
    free(big);
}

static void
test_http_date(void)
{
    int64_t t;

    CHECK(s3_http_parse_date("Mon, 30 Nov 2026 21:15:37 GMT", &t) == 0);
    CHECK(t == 1796073337);
    CHECK(s3_http_parse_date("Sun, 06 Nov 1994 08:49:37 GMT", &t) == 0);
    CHECK(t == 784111777);
    CHECK(s3_http_parse_date("Sun, 06 Nov 1994 08:49:37 UTC", &t) == -1);
    CHECK(s3_http_parse_date("Sun, 06 Foo 1994 08:49:37 GMT", &t) == -1);
    CHECK(s3_http_parse_date("Sun, 06 Nov 1994 08:49:37 GMTx", &t) == -1);
    CHECK(s3_http_parse_date("", &t) == -1);
    CHECK(s3_http_parse_date(NULL, &t) == -1);
}

TEST_MAIN(test_sigv4_suite, test_sigv4_suite_steps, test_s3_get_object_range,
    test_s3_put_object, test_s3_get_lifecycle, test_s3_list_objects, test_sign_query_encoding,
    test_uri_encode, test_sign_refuses_incomplete, test_url_parse, test_endpoint_parse,
    test_credentials_file, test_credentials_malformed, test_config_from_env,
    test_xml_list_pages, test_xml_list_malformed, test_xml_error_body, test_http_date)
