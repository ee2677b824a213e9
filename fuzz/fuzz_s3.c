/*
 * fuzz_s3.c: libFuzzer target for what the S3 backend parses from outside:
 * ListObjectsV2 pages and error bodies (s3_xml.c, expat), the shared
 * credentials file, s3:// URLs and endpoints (s3_config.c), and HTTP dates.
 * The first byte picks the parser.  Every parser must stay within its
 * bounds and leave a page it refused empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/s3_config.h"
#include "storage/s3_http.h"
#include "storage/s3_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;
    size_t n;

    if (size < 1)
        return 0;
    n = size - 1;
    if ((text = malloc(n + 1)) == NULL)
        return 0;
    memcpy(text, data + 1, n);
    text[n] = '\0';
    switch (data[0] % 5) {
    case 0: {
        struct s3_list_page pg;
        if (s3_xml_parse_list(text, n, &pg) == 0) {
            if (pg.n > S3_XML_MAX_ENTRIES || (pg.truncated && pg.next_token == NULL))
                abort();
            for (size_t i = 0; i < pg.n; i++)
                if (pg.entries[i].key == NULL || strlen(pg.entries[i].key) > S3_XML_MAX_KEY)
                    abort();
        } else if (pg.n != 0 || pg.entries != NULL || pg.next_token != NULL) {
            abort();
        }
        s3_xml_list_page_clear(&pg);
        break;
    }
    case 1: {
        struct s3_error_info e;
        (void)s3_xml_parse_error(text, n, &e);
        if (strlen(e.code) >= sizeof(e.code) || strlen(e.message) >= sizeof(e.message))
            abort();
        break;
    }
    case 2: {
        char *ak, *sk, *tok;
        if (s3_config_credentials_parse(text, n, "default", &ak, &sk, &tok) == 0) {
            if (ak == NULL || sk == NULL || *ak == '\0' || *sk == '\0')
                abort();
            free(ak);
            free(sk);
            free(tok);
        } else if (ak != NULL || sk != NULL || tok != NULL) {
            abort();
        }
        break;
    }
    case 3: {
        char bucket[S3_BUCKET_MAX], prefix[S3_PREFIX_MAX];
        struct s3_endpoint ep;
        if (s3_config_url_parse(text, bucket, prefix) == 0 &&
            (strlen(bucket) < 3 || strlen(bucket) > 63 || strstr(prefix, "//") != NULL))
            abort();
        (void)s3_config_endpoint_parse(text, &ep);
        break;
    }
    default: {
        int64_t t;
        (void)s3_http_parse_date(text, &t);
        break;
    }
    }
    free(text);
    return 0;
}
