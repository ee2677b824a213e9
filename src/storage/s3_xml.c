/*
 * s3_xml.c: ListObjectsV2 pages and error bodies (see s3_xml.h).
 *
 * One small state machine per document: the path of open elements (at most
 * a few deep), the text of the current leaf (capped), and what was
 * gathered.  Expat is told to stop at the first DOCTYPE or entity
 * declaration, so nothing in a reply can expand.
 */
#include "storage/s3_xml.h"

#include <expat.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define MAX_DEPTH 8
#define TEXT_CAP (S3_XML_MAX_TOKEN + 1)

enum doc_kind { DOC_LIST, DOC_ERROR };

struct xml_state {
    XML_Parser parser;
    int kind;
    int depth;
    char path[MAX_DEPTH][32];  /* names of the open elements (cut) */
    char text[TEXT_CAP];
    size_t textlen;
    int text_overflow;
    int rc;                    /* first error */
    const char *why;           /* its reason */
    /* list */
    struct s3_list_page *page;
    size_t cap;
    char *key;
    uint64_t size;
    int have_key, have_size;
    /* error */
    struct s3_error_info *info;
    int saw_root;
};

static void
fail(struct xml_state *st, int rc, const char *why)
{
    if (st->rc == 0) {
        st->rc = rc;
        st->why = why;
    }
    XML_StopParser(st->parser, XML_FALSE);
}

/* at(st, d, name): whether the open element at depth ${d} (1 = root) is
 * ${name}. */
static int
at(const struct xml_state *st, int d, const char *name)
{
    return st->depth >= d && strcmp(st->path[d - 1], name) == 0;
}

static int
parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;

    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static void XMLCALL
on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    struct xml_state *st = ud;
    size_t n = strlen(name);

    (void)attrs;
    if (st->depth == MAX_DEPTH) {
        fail(st, PQV_E_INTEGRITY, "nested too deeply");
        return;
    }
    if (n >= sizeof(st->path[0]))
        n = sizeof(st->path[0]) - 1;
    memcpy(st->path[st->depth], name, n);
    st->path[st->depth][n] = '\0';
    st->depth++;
    st->textlen = 0;
    st->text_overflow = 0;
    if (st->depth == 1) {
        const char *root = st->kind == DOC_LIST ? "ListBucketResult" : "Error";
        if (strcmp(name, root) != 0)
            fail(st, PQV_E_INTEGRITY, "unexpected root element");
        st->saw_root = 1;
    }
    if (st->kind == DOC_LIST && st->depth == 2 && at(st, 2, "Contents")) {
        free(st->key);
        st->key = NULL;
        st->have_key = st->have_size = 0;
    }
}

static void XMLCALL
on_text(void *ud, const XML_Char *s, int len)
{
    struct xml_state *st = ud;

    if (len <= 0)
        return;
    if (st->textlen + (size_t)len >= TEXT_CAP) {
        st->text_overflow = 1;
        return;
    }
    memcpy(st->text + st->textlen, s, (size_t)len);
    st->textlen += (size_t)len;
}

/* copy_field(dst, cap, text): ${text} cut to ${cap} with control
 * characters as '?' (it ends up in messages). */
static void
copy_field(char *dst, size_t cap, const char *text)
{
    size_t i;

    for (i = 0; i + 1 < cap && text[i] != '\0'; i++)
        dst[i] = ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) ? '?' : text[i];
    dst[i] = '\0';
}

static void
end_list(struct xml_state *st)
{
    struct s3_list_page *pg = st->page;

    if (st->depth == 3 && at(st, 2, "Contents")) {
        if (at(st, 3, "Key")) {
            if (st->text_overflow || st->textlen > S3_XML_MAX_KEY || st->textlen == 0 ||
                memchr(st->text, '\0', st->textlen) != NULL) {
                fail(st, PQV_E_INTEGRITY, "bad Key");
                return;
            }
            free(st->key);
            if ((st->key = strdup(st->text)) == NULL) {
                fail(st, PQV_E_NOMEM, "out of memory");
                return;
            }
            st->have_key = 1;
        } else if (at(st, 3, "Size")) {
            if (st->text_overflow || parse_u64(st->text, &st->size) != 0) {
                fail(st, PQV_E_INTEGRITY, "bad Size");
                return;
            }
            st->have_size = 1;
        }
    } else if (st->depth == 2 && at(st, 2, "Contents")) {
        if (!st->have_key || !st->have_size) {
            fail(st, PQV_E_INTEGRITY, "Contents without Key or Size");
            return;
        }
        if (pg->n == S3_XML_MAX_ENTRIES) {
            fail(st, PQV_E_INTEGRITY, "too many entries");
            return;
        }
        if (pg->n == st->cap) {
            size_t cap = st->cap ? 2 * st->cap : 64;
            struct s3_list_entry *e = realloc(pg->entries, cap * sizeof(*e));
            if (e == NULL) {
                fail(st, PQV_E_NOMEM, "out of memory");
                return;
            }
            pg->entries = e;
            st->cap = cap;
        }
        pg->entries[pg->n].key = st->key;
        pg->entries[pg->n].size = st->size;
        pg->n++;
        st->key = NULL;
        st->have_key = st->have_size = 0;
    } else if (st->depth == 2 && at(st, 2, "IsTruncated")) {
        if (strcmp(st->text, "true") == 0)
            pg->truncated = 1;
        else if (strcmp(st->text, "false") == 0)
            pg->truncated = 0;
        else
            fail(st, PQV_E_INTEGRITY, "bad IsTruncated");
    } else if (st->depth == 2 && at(st, 2, "NextContinuationToken")) {
        if (st->text_overflow || st->textlen == 0 || st->textlen > S3_XML_MAX_TOKEN) {
            fail(st, PQV_E_INTEGRITY, "bad NextContinuationToken");
            return;
        }
        free(pg->next_token);
        if ((pg->next_token = strdup(st->text)) == NULL)
            fail(st, PQV_E_NOMEM, "out of memory");
    }
}

static void
end_error(struct xml_state *st)
{
    struct s3_error_info *e = st->info;

    if (st->depth != 2)
        return;
    if (at(st, 2, "Code"))
        copy_field(e->code, sizeof(e->code), st->text);
    else if (at(st, 2, "Message"))
        copy_field(e->message, sizeof(e->message), st->text);
    else if (at(st, 2, "RequestId"))
        copy_field(e->request_id, sizeof(e->request_id), st->text);
}

static void XMLCALL
on_end(void *ud, const XML_Char *name)
{
    struct xml_state *st = ud;

    (void)name;
    st->text[st->textlen] = '\0';
    if (st->kind == DOC_LIST)
        end_list(st);
    else
        end_error(st);
    st->depth--;
    st->textlen = 0;
    st->text_overflow = 0;
}

static void XMLCALL
on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid, const XML_Char *pubid,
    int has_internal_subset)
{
    (void)name;
    (void)sysid;
    (void)pubid;
    (void)has_internal_subset;
    fail(ud, PQV_E_INTEGRITY, "DOCTYPE refused");
}

static void XMLCALL
on_entity(void *ud, const XML_Char *name, int is_param, const XML_Char *value, int value_len,
    const XML_Char *base, const XML_Char *sysid, const XML_Char *pubid, const XML_Char *notation)
{
    (void)name;
    (void)is_param;
    (void)value;
    (void)value_len;
    (void)base;
    (void)sysid;
    (void)pubid;
    (void)notation;
    fail(ud, PQV_E_INTEGRITY, "entity declaration refused");
}

/* run(st, xml, len): parse the whole document ${xml} with ${st}. */
static int
run(struct xml_state *st, const char *xml, size_t len)
{
    int ok;

    if (len > S3_XML_MAX_DOC)
        return PQV_E_INTEGRITY;
    if ((st->parser = XML_ParserCreate("UTF-8")) == NULL)
        return PQV_E_NOMEM;
    XML_SetUserData(st->parser, st);
    XML_SetElementHandler(st->parser, on_start, on_end);
    XML_SetCharacterDataHandler(st->parser, on_text);
    XML_SetStartDoctypeDeclHandler(st->parser, on_doctype);
    XML_SetEntityDeclHandler(st->parser, on_entity);
    XML_SetParamEntityParsing(st->parser, XML_PARAM_ENTITY_PARSING_NEVER);
    ok = XML_Parse(st->parser, xml, (int)len, XML_TRUE) == XML_STATUS_OK;
    XML_ParserFree(st->parser);
    st->parser = NULL;
    if (st->rc != 0)
        return st->rc;
    if (!ok || !st->saw_root)
        return PQV_E_INTEGRITY;
    return 0;
}

int
s3_xml_parse_list(const char *xml, size_t len, struct s3_list_page *page)
{
    struct xml_state *st;
    int rc;

    memset(page, 0, sizeof(*page));
    if ((st = calloc(1, sizeof(*st))) == NULL)
        return PQV_E_NOMEM;
    st->kind = DOC_LIST;
    st->page = page;
    rc = run(st, xml, len);
    free(st->key);
    if (rc == 0 && page->truncated && page->next_token == NULL)
        rc = PQV_E_INTEGRITY;
    if (rc != 0) {
        s3_xml_list_page_clear(page);
        rc = error_set(rc, NULL, "S3 listing: %s", rc == PQV_E_NOMEM ? "out of memory"
            : st->why != NULL ? st->why : "malformed XML");
    }
    free(st);
    return rc;
}

void
s3_xml_list_page_clear(struct s3_list_page *page)
{
    if (page == NULL)
        return;
    for (size_t i = 0; i < page->n; i++)
        free(page->entries[i].key);
    free(page->entries);
    free(page->next_token);
    memset(page, 0, sizeof(*page));
}

int
s3_xml_parse_error(const char *xml, size_t len, struct s3_error_info *info)
{
    struct xml_state *st;
    int rc;

    memset(info, 0, sizeof(*info));
    if ((st = calloc(1, sizeof(*st))) == NULL)
        return PQV_E_NOMEM;
    st->kind = DOC_ERROR;
    st->info = info;
    rc = run(st, xml, len);
    free(st);
    if (rc != 0)
        memset(info, 0, sizeof(*info));
    return rc;
}
