/*
 * s3_xml.h: the two XML documents the S3 backend reads, parsed with expat:
 * a ListObjectsV2 result page and an error body.  Both parsers are strict
 * and bounded: no DTD or entity declarations, limited sizes and counts, a
 * document that does not have the expected shape is refused.
 */
#ifndef PQV_S3_XML_H
#define PQV_S3_XML_H

#include <stddef.h>
#include <stdint.h>

/* Bounds (S3 keys are at most 1024 bytes; a page at most 1000 keys). */
#define S3_XML_MAX_DOC (8u << 20)     /* bytes in one list page */
#define S3_XML_MAX_KEY 1024
#define S3_XML_MAX_TOKEN 4096
#define S3_XML_MAX_ENTRIES 10000

struct s3_list_entry {
    char *key;
    uint64_t size;
};

struct s3_list_page {
    struct s3_list_entry *entries;
    size_t n;
    int truncated;          /* IsTruncated was "true" */
    char *next_token;       /* NextContinuationToken, or NULL */
};

/* s3_xml_parse_list(xml, len, page): parse a ListObjectsV2 result
 * (ListBucketResult: Contents/Key, Contents/Size, IsTruncated,
 * NextContinuationToken; other elements ignored).  A truncated page must
 * carry a token.  0 or PQV_E_INTEGRITY (malformed, too large) /
 * PQV_E_NOMEM.  Free with s3_xml_list_page_clear. */
int s3_xml_parse_list(const char *xml, size_t len, struct s3_list_page *page);

/* s3_xml_list_page_clear(page): free ${page}'s contents; safe twice. */
void s3_xml_list_page_clear(struct s3_list_page *page);

struct s3_error_info {
    char code[64];          /* "NoSuchKey", "" if none */
    char message[160];
    char request_id[80];
};

/* s3_xml_parse_error(xml, len, info): the Code, Message and RequestId of an
 * S3 error body (root element Error), each cut to its field's size and
 * with control characters replaced.  0 or PQV_E_INTEGRITY if ${xml} is not
 * such a document (${info} is then all empty). */
int s3_xml_parse_error(const char *xml, size_t len, struct s3_error_info *info);

#endif
