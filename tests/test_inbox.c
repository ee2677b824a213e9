/*
 * test_inbox.c: write-only adds through the library (docs/FORMAT.md
 * section 18): the recipient's export and strict parse, a write-only
 * writer opened without its key file, a batch of several operands (one
 * commit point); the bare recipient's batch refused or quarantined; a
 * writer's credential: its batches under its prefix only, its newer state
 * replacing its names, another generation, a revoked writer and a replay
 * refused; a batch for another vault, the body parser on edge cases, and
 * refusals (format 1, a second commit, import while a write-only writer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pqvault/aead.h"
#include "pqvault/vault.h"
#include "vault/batch.h"
#include "vault/inbox.h"
#include "vault/state.h"

static const struct pqv_kdf_params cheap = { 1, 64, 1 };
static const uint8_t pass[] = "inbox test passphrase";
#define PASS pass, sizeof(pass) - 1

static char root[256];

static void
path_of(char *out, size_t n, const char *rel)
{
    snprintf(out, n, "%s/%s", root, rel);
}

static void
write_path(const char *rel, const char *text)
{
    char p[512];
    FILE *f;

    path_of(p, sizeof(p), rel);
    if ((f = fopen(p, "wb")) != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static int
make_vault(const char *rel, int format)
{
    char dir[512], rec[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS];
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", PQV_AEAD_CHACHA20POLY1305, &cheap,
        format, NULL, NULL, NULL , 0};

    path_of(dir, sizeof(dir), rel);
    return pqv_vault_create(dir, NULL, PASS, &opt, rec, fp);
}

static pqv_vault *
owner(const char *rel)
{
    char dir[512];
    pqv_vault *v = NULL;

    path_of(dir, sizeof(dir), rel);
    if (pqv_vault_open(&v, dir, NULL) != 0)
        return NULL;
    if (pqv_vault_unlock(v, PASS) != 0 || pqv_vault_lock_writer(v, 0, NULL, 0) != 0) {
        pqv_vault_close(v);
        return NULL;
    }
    return v;
}

static char *
recipient_of(const char *rel, size_t *len)
{
    char dir[512], *text = NULL;
    pqv_vault *v = NULL;

    path_of(dir, sizeof(dir), rel);
    if (pqv_vault_open_flags(&v, dir, NULL, PQV_OPEN_KEYFILE_OPTIONAL) != 0)
        return NULL;
    if (pqv_vault_export_recipient_unverified(v, &text, len) != 0)
        text = NULL;
    pqv_vault_close(v);
    return text;
}

/* writer(rel, recipient, len, out): a write-only writer over ${rel}. */
static int
writer(const char *rel, const char *recipient, size_t len, pqv_vault **out)
{
    char dir[512];
    pqv_vault *v = NULL;
    int rc;

    path_of(dir, sizeof(dir), rel);
    if ((rc = pqv_vault_open_flags(&v, dir, NULL, PQV_OPEN_NO_KEYFILE)) != 0)
        return rc;
    if ((rc = pqv_vault_inbox_begin(v, (const uint8_t *)recipient, len)) != 0) {
        pqv_vault_close(v);
        return rc;
    }
    *out = v;
    return 0;
}

static size_t
count_batches(const char *rel)
{
    char cmd[700], p[512];
    FILE *f;
    size_t n = 0;

    path_of(p, sizeof(p), rel);
    snprintf(cmd, sizeof(cmd), "find '%s/inbox' -name '*.batch' | wc -l", p);
    if ((f = popen(cmd, "r")) != NULL) {
        if (fscanf(f, "%zu", &n) != 1)
            n = 0;
        pclose(f);
    }
    return n;
}

static void
test_setup(void)
{
    snprintf(root, sizeof(root), "%s/pqv-inbox-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(root) != NULL);
    REQUIRE(make_vault("v", 2) == 0);
    REQUIRE(make_vault("w", 2) == 0);
}

static void
test_recipient(void)
{
    size_t len, publen;
    char *text = recipient_of("v", &len), *bad;
    uint8_t id[16], *pub = NULL;
    pqv_vault *v;

    REQUIRE(text != NULL);
    CHECK(strncmp(text, "pqvault-recipient 1\nvault-id: ", 30) == 0);
    CHECK_EQ_INT(strlen(text), len);
    CHECK(pqv_recipient_parse((const uint8_t *)text, len, id, &pub, &publen) == 0);
    CHECK_EQ_INT(publen, 2 + 32 + 9616);
    free(pub);
    /* The verified export needs the key (issue 17: without it, what the
     * storage says is exported, which a writer there may have forged). */
    {
        char dir[512], *none = NULL;
        size_t nlen = 0;
        pqv_vault *locked = NULL;
        path_of(dir, sizeof(dir), "v");
        REQUIRE(pqv_vault_open(&locked, dir, NULL) == 0);
        CHECK(pqv_vault_export_recipient(locked, &none, &nlen) == PQV_E_INVAL);
        CHECK(none == NULL);
        pqv_vault_close(locked);
    }
    /* The unlocked export is the same text. */
    REQUIRE((v = owner("v")) != NULL);
    char *again = NULL;
    size_t alen = 0;
    CHECK(pqv_vault_export_recipient(v, &again, &alen) == 0);
    CHECK(again != NULL && alen == len && memcmp(again, text, len) == 0);
    free(again);
    pqv_vault_close(v);
    /* Every truncation is refused, without a leak or an allocation beyond it. */
    for (size_t cut = 0; cut < len; cut += cut < 200 ? 1 : 997)
        CHECK(pqv_recipient_parse((const uint8_t *)text, cut, id, &pub, &publen) != 0 && pub == NULL);
    /* An altered key: its fingerprint line no longer matches. */
    REQUIRE((bad = malloc(len)) != NULL);
    memcpy(bad, text, len);
    bad[len - 10] = bad[len - 10] == 'A' ? 'B' : 'A';
    CHECK_EQ_INT(pqv_recipient_parse((const uint8_t *)bad, len, id, &pub, &publen), PQV_E_INTEGRITY);
    /* Upper-case hex, CRLF line ends, a trailing line: malformed. */
    memcpy(bad, text, len);
    for (size_t i = 30; i < 62; i++)
        if (bad[i] >= 'a' && bad[i] <= 'f') {
            bad[i] = (char)(bad[i] - 32);
            break;
        }
    CHECK_EQ_INT(pqv_recipient_parse((const uint8_t *)bad, len, id, &pub, &publen), PQV_E_INVAL);
    free(bad);
    /* Another vault's recipient: refused by this vault's writer. */
    size_t wlen;
    char *other = recipient_of("w", &wlen);
    REQUIRE(other != NULL);
    CHECK_EQ_INT(writer("v", other, wlen, &v), PQV_E_AUTH);
    free(other);
    free(text);
}

/* import_with(v, quarantine, r): import, the result in ${r}. */
static int
import_with(pqv_vault *v, int quarantine, struct pqv_import_result *r)
{
    memset(r, 0, sizeof(*r));
    return pqv_vault_import(v, &(struct pqv_import_options){ 0, NULL, NULL, r, quarantine });
}

/* write_batch(rel, text, len, what, name): one batch of the file ${what}
 * stored as ${name} by a writer over ${rel} holding ${text}; its id. */
static int
write_batch(const char *rel, const char *text, size_t len, const char *what, const char *name,
    char id[33])
{
    char src[512];
    pqv_vault *w = NULL;
    int rc;

    if ((rc = writer(rel, text, len, &w)) != 0)
        return rc;
    path_of(src, sizeof(src), what);
    if ((rc = pqv_vault_add_path(w, src, name, NULL)) == 0)
        rc = pqv_vault_inbox_commit(w, id);
    pqv_vault_close(w);
    return rc;
}

/* Proves a bare-recipient batch (anyone's) is refused unless quarantined,
 * and quarantined lands under quarantine/<id>/ stripped of set-id bits. */
static void
test_bare_recipient(void)
{
    size_t len, n;
    char *text = recipient_of("v", &len), src[512], dir[512], id[33], name[128];
    pqv_vault *w = NULL, *v;
    struct pqv_inbox_batch *b = NULL;
    struct pqv_import_result r;
    struct pqv_entry e;

    REQUIRE(text != NULL);
    write_path("one", "first file\n");
    write_path("two", "second file\n");
    path_of(src, sizeof(src), "two");
    REQUIRE(chmod(src, 04755) == 0);
    /* No key file anywhere: the writer never reads it. */
    path_of(dir, sizeof(dir), "v/keyfile");
    path_of(src, sizeof(src), "keyfile.away");
    REQUIRE(rename(dir, src) == 0);
    REQUIRE(writer("v", text, len, &w) == 0);
    path_of(src, sizeof(src), "one");
    CHECK(pqv_vault_add_path(w, src, NULL, NULL) == 0);
    path_of(src, sizeof(src), "two");
    CHECK(pqv_vault_add_path(w, src, "dir/two", NULL) == 0);
    CHECK_EQ_INT(count_batches("v"), 0); /* nothing committed yet */
    CHECK(pqv_vault_inbox_commit(w, id) == 0);
    CHECK_EQ_INT(strlen(id), 32);
    CHECK_EQ_INT(pqv_vault_inbox_commit(w, id), PQV_E_INVAL); /* once */
    CHECK_EQ_INT(pqv_vault_import(w, NULL), PQV_E_INVAL);
    pqv_vault_close(w);
    path_of(src, sizeof(src), "keyfile.away");
    REQUIRE(rename(src, dir) == 0);
    CHECK_EQ_INT(count_batches("v"), 1);

    REQUIRE((v = owner("v")) != NULL);
    CHECK(pqv_vault_inbox_list(v, &b, &n) == 0);
    CHECK_EQ_INT(n, 1);
    if (n == 1) {
        CHECK(strcmp(b[0].id, id) == 0);
        CHECK_EQ_INT(b[0].entries, 2);
        CHECK_EQ_INT(b[0].state, PQV_INBOX_PENDING);
        CHECK(b[0].writer[0] == '\0');
    }
    free(b);
    CHECK_EQ_INT(import_with(v, 0, &r), PQV_E_INTEGRITY);
    CHECK_EQ_INT(r.batches, 0);
    CHECK_EQ_INT(r.damaged, 1);
    CHECK_EQ_INT(count_batches("v"), 1); /* left */
    CHECK_EQ_INT(pqv_vault_lookup(v, "one", &e), PQV_E_NOTFOUND);
    CHECK(import_with(v, 1, &r) == 0);
    CHECK_EQ_INT(r.batches, 1);
    CHECK_EQ_INT(r.quarantined, 1);
    CHECK_EQ_INT(count_batches("v"), 0);
    snprintf(name, sizeof(name), "quarantine/%.16s/dir/two", id);
    CHECK(pqv_vault_lookup(v, name, &e) == 0);
    CHECK_EQ_INT(e.mode & 07000, 0); /* no set-id bit from a stranger */
    pqv_entry_clear(&e);
    CHECK_EQ_INT(pqv_vault_lookup(v, "one", &e), PQV_E_NOTFOUND);
    pqv_vault_close(v);
    free(text);
}

/* Proves a writer's batches land under its prefix only, its newer state
 * replacing its names (no copies), metadata kept; another generation,
 * a revoked writer and a replay are refused. */
static void
test_writer(void)
{
    char *cred = NULL, *old = NULL, id[33], id2[33], cmd[2400], vd[512], name[128];
    size_t clen = 0, olen = 0, n = 0;
    struct pqv_writer_info *wi = NULL;
    struct pqv_import_result r;
    struct pqv_entry e;
    pqv_vault *v;
    char src[512];

    REQUIRE((v = owner("v")) != NULL);
    REQUIRE(pqv_vault_writer_add(v, "web-1", "hosts/web", &old, &olen) == 0);
    REQUIRE(pqv_vault_writer_add(v, "web-1", "hosts/web", &cred, &clen) == 0); /* again */
    CHECK(strstr(cred, "pqvault-writer 1\n") == cred);
    CHECK(strstr(cred, "generation: 2\n") != NULL);
    char *none = NULL;
    size_t nlen = 0;
    CHECK_EQ_INT(pqv_vault_writer_add(v, "other", "hosts/web/x", &none, &nlen), PQV_E_EXISTS);
    CHECK(none == NULL);
    CHECK(pqv_vault_writers(v, &wi, &n) == 0);
    CHECK_EQ_INT(n, 1);
    if (n == 1)
        CHECK(strcmp(wi[0].prefix, "hosts/web") == 0 && wi[0].generation == 2);
    free(wi);
    pqv_vault_close(v);

    write_path("conf", "v1\n");
    path_of(src, sizeof(src), "conf");
    REQUIRE(chmod(src, 04700) == 0);
    REQUIRE(write_batch("v", cred, clen, "conf", NULL, id) == 0);
    /* A batch of the old generation's credential. */
    REQUIRE(write_batch("v", old, olen, "one", NULL, id2) == 0);
    path_of(vd, sizeof(vd), "v/inbox");
    snprintf(cmd, sizeof(cmd), "cp -a '%s/%s' '%s/%s.batch' '%s/..'", vd, id, vd, id, vd);
    CHECK(system(cmd) == 0); /* kept aside for the replay */
    REQUIRE((v = owner("v")) != NULL);
    CHECK_EQ_INT(import_with(v, 0, &r), PQV_E_INTEGRITY);
    CHECK_EQ_INT(r.batches, 1);
    CHECK_EQ_INT(r.damaged, 1); /* the old generation's */
    CHECK(pqv_vault_lookup(v, "hosts/web/conf", &e) == 0);
    CHECK_EQ_INT(e.mode & 07777, 04700); /* a writer's metadata is kept */
    pqv_entry_clear(&e);
    CHECK_EQ_INT(pqv_vault_lookup(v, "conf", &e), PQV_E_NOTFOUND);
    pqv_vault_close(v);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s' '%s/%s.batch'", vd, id2, vd, id2);
    CHECK(system(cmd) == 0);

    /* The newer state: replaced, never a copy beside it. */
    write_path("conf", "version two\n");
    REQUIRE(write_batch("v", cred, clen, "conf", NULL, id2) == 0);
    REQUIRE((v = owner("v")) != NULL);
    CHECK(import_with(v, 0, &r) == 0);
    CHECK_EQ_INT(r.replaced, 1);
    CHECK(pqv_vault_lookup(v, "hosts/web/conf", &e) == 0);
    CHECK_EQ_INT(e.size, strlen("version two\n"));
    pqv_entry_clear(&e);
    snprintf(name, sizeof(name), "hosts/web/conf (inbox %.8s)", id2);
    CHECK_EQ_INT(pqv_vault_lookup(v, name, &e), PQV_E_NOTFOUND);
    /* The first batch put back after its deletion was confirmed: a replay. */
    snprintf(cmd, sizeof(cmd), "cp -a '%s/../%s' '%s/../%s.batch' '%s/'", vd, id, vd, id, vd);
    CHECK(system(cmd) == 0);
    CHECK_EQ_INT(import_with(v, 1, &r), PQV_E_INTEGRITY);
    CHECK_EQ_INT(r.batches, 0);
    CHECK_EQ_INT(r.damaged, 1);
    CHECK(pqv_vault_lookup(v, "hosts/web/conf", &e) == 0);
    CHECK_EQ_INT(e.size, strlen("version two\n")); /* not the old one back */
    pqv_entry_clear(&e);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s' '%s/%s.batch'", vd, id, vd, id);
    CHECK(system(cmd) == 0);
    /* Revoked: its later batches are refused. */
    CHECK(pqv_vault_writer_revoke(v, "web-1") == 0);
    pqv_vault_close(v);
    REQUIRE(write_batch("v", cred, clen, "conf", NULL, id) == 0);
    REQUIRE((v = owner("v")) != NULL);
    CHECK_EQ_INT(import_with(v, 0, &r), PQV_E_INTEGRITY);
    CHECK_EQ_INT(r.damaged, 1);
    pqv_vault_close(v);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s' '%s/%s.batch'", vd, id, vd, id);
    CHECK(system(cmd) == 0);
    memset(cred, 0, clen);
    free(cred);
    free(old);
}

static void
test_foreign_batch(void)
{
    size_t wlen;
    char *other = recipient_of("w", &wlen), src[512], id[33], cmd[2400], vd[512], wd[512];
    pqv_vault *w = NULL, *v;

    REQUIRE(other != NULL);
    REQUIRE(writer("w", other, wlen, &w) == 0);
    path_of(src, sizeof(src), "one");
    CHECK(pqv_vault_add_path(w, src, "foreign", NULL) == 0);
    CHECK(pqv_vault_inbox_commit(w, id) == 0);
    pqv_vault_close(w);
    path_of(vd, sizeof(vd), "v/inbox");
    path_of(wd, sizeof(wd), "w/inbox");
    snprintf(cmd, sizeof(cmd), "cp -a '%s/%s' '%s/%s.batch' '%s/'", wd, id, wd, id, vd);
    CHECK(system(cmd) == 0);
    REQUIRE((v = owner("v")) != NULL);
    struct pqv_import_result r;
    memset(&r, 0, sizeof(r));
    CHECK_EQ_INT(import_with(v, 1, &r), PQV_E_INTEGRITY);
    CHECK_EQ_INT(r.damaged, 1);
    CHECK_EQ_INT(count_batches("v"), 1); /* left in place */
    struct pqv_entry e;
    CHECK_EQ_INT(pqv_vault_lookup(v, "foreign", &e), PQV_E_NOTFOUND);
    pqv_vault_close(v);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s' '%s/%s.batch'", vd, id, vd, id);
    CHECK(system(cmd) == 0);
    free(other);
}

static void
test_body_parser(void)
{
    static const char hex[] = "00112233445566778899aabbccddeeff";
    size_t n = 99;
    /* version 1, time, no strings, no packs, no entries: refused. */
    uint8_t empty[] = { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    CHECK_EQ_INT(batch_parse(hex, empty, sizeof(empty), &n), PQV_E_INTEGRITY);
    CHECK_EQ_INT(n, 0);
    /* A pack count larger than the bytes that follow: refused before any
     * allocation of that size. */
    uint8_t many[] = { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f };
    CHECK_EQ_INT(batch_parse(hex, many, sizeof(many), &n), PQV_E_INTEGRITY);
    uint8_t version[] = { 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    CHECK_EQ_INT(batch_parse(hex, version, sizeof(version), &n), PQV_E_INTEGRITY);
}

static void
test_format1_refused(void)
{
    size_t len;
    char *text = recipient_of("v", &len);
    pqv_vault *w;

    REQUIRE(text != NULL);
    REQUIRE(make_vault("f1", 1) == 0);
    CHECK_EQ_INT(writer("f1", text, len, &w), PQV_E_UNSUPPORTED);
    free(text);
}

static void
test_cleanup(void)
{
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

TEST_MAIN(test_setup, test_recipient, test_bare_recipient, test_writer, test_foreign_batch,
    test_body_parser, test_format1_refused, test_cleanup)
