/*
 * test_segment_cache.c: what a reading handle reads of the catalogue
 * (src/vault/segment_cache.c, segment_fetch_part in src/vault/segment.c).
 * A command that opens the state more than once (resolving --at, looking a
 * name up, then reading it) reads each segment once; a large segment's
 * blocks are read only as needed (one block for a lookup, one part whole
 * for a walk); a writer holding the lock reads from the storage every
 * time; and a segment a writer commits while a reader is open is seen by
 * the reader's next lookup; a damaged block of a large segment, read on
 * its own, costs its entries only.  Bytes are counted by a storage that
 * forwards to the local backend.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "storage_wrap.h"
#include "pqvault/aead.h"
#include "pqvault/recovery.h"
#include "pqvault/storage.h"
#include "pqvault/vault.h"
#include "vault/entry.h"
#include "vault/segment.h"
#include "vault/state.h"
#include "vault_fixture.h"

static const struct pqv_kdf_params cheap = { 1, 256, 1 };
static const char pass[] = "correct horse";

/* Enough entries for a segment well over the 1 MiB read whole. */
#define FILES 12000

static char dir[64], src[96], vdir[96];

/* ---- a storage that counts what is read of the segments ---- */

static struct sw_storage wrap;
static struct {
    pqv_storage *inner;
    uint64_t seg_bytes, seg_reads;
} counted;

static void
count(struct sw_storage *w, const char *name, size_t len)
{
    (void)w;
    if (strncmp(name, "segments/", 9) == 0) {
        counted.seg_bytes += len;
        counted.seg_reads++;
    }
}

/* ---- the vault ---- */

static void
write_src(const char *name, const char *text)
{
    char path[200];

    snprintf(path, sizeof(path), "%s/%s", src, name);
    vf_write_path(path, (const uint8_t *)text, strlen(text));
}

static void
add_src(void)
{
    pqv_vault *w;

    SETUP(vf_open_vault(NULL, vdir, pass, &w, 1) == 0);
    SETUP(pqv_vault_add_path(w, src, "t", NULL) == 0);
    pqv_vault_close(w);
}

/* file_name(i, out): the name of file ${i} under src (names that do not
 * compress, so that the segment is large). */
static void
file_name(unsigned i, char *out, size_t n)
{
    uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;

    h ^= h >> 29;
    snprintf(out, n, "d%02u/f%05u-%016llx", i % 60, i, (unsigned long long)h);
}

/* The vault: FILES small files, added; then "changing" added twice more,
 * each time with other content (three snapshots). */
static void
make_vault(void)
{
    struct pqv_init_options opt = { "FrodoKEM-640-SHAKE", PQV_AEAD_AES256GCM, &cheap,
        0, NULL, NULL, NULL, 0 };
    char recovery[PQV_RECOVERY_CHARS], fp[PQV_FINGERPRINT_CHARS], path[200], name[64],
        text[64];

    snprintf(dir, sizeof(dir), "/tmp/pqvsegc.XXXXXX");
    SETUP(mkdtemp(dir) != NULL);
    snprintf(src, sizeof(src), "%s/src", dir);
    snprintf(vdir, sizeof(vdir), "%s/v", dir);
    SETUP(mkdir(src, 0700) == 0);
    for (unsigned d = 0; d < 60; d++) {
        snprintf(path, sizeof(path), "%s/d%02u", src, d);
        SETUP(mkdir(path, 0755) == 0);
    }
    for (unsigned i = 0; i < FILES; i++) {
        file_name(i, name, sizeof(name));
        snprintf(text, sizeof(text), "file %u\n", i);
        write_src(name, text);
    }
    write_src("changing", "version one\n");
    SETUP(pqv_vault_create(vdir, NULL, (const uint8_t *)pass, strlen(pass), &opt, recovery,
        fp) == 0);
    add_src();
    write_src("changing", "version two\n");
    add_src();
    write_src("changing", "version three\n");
    add_src();
}

static void
remove_vault(void)
{
    char cmd[128];

    if (dir[0] != '\0' && getenv("PQV_KEEP") == NULL) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", dir);
    }
}

/* largest_segment(): the size of the largest segment file. */
static uint64_t
largest_segment(void)
{
    char cmd[200];
    unsigned long long size = 0;
    FILE *f;

    snprintf(cmd, sizeof(cmd), "find '%s/segments' -type f -printf '%%s\\n' | sort -n | tail -1",
        vdir);
    if ((f = popen(cmd, "r")) != NULL) {
        if (fscanf(f, "%llu", &size) != 1)
            size = 0;
        pclose(f);
    }
    return size;
}

/* open_counted(out, lock): the vault over the counting storage. */
static int
open_counted(pqv_vault **out, int lock)
{
    if (counted.inner == NULL) {
        if (pqv_storage_local_open(&counted.inner, vdir, 0) != 0)
            return -1;
        sw_init(&wrap, counted.inner, 0);
        wrap.after = count;
    }
    return vf_open_vault(&wrap.base, NULL, pass, out, lock);
}

/* get_text(v, name, out, n): the file ${name} read through pqv_vault_get_fd. */
static int
get_text(pqv_vault *v, const char *name, char *out, size_t n)
{
    char path[128];
    ssize_t got;
    int fd, rc;

    snprintf(path, sizeof(path), "%s/out", dir);
    if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0)
        return -1;
    rc = pqv_vault_get_fd(v, name, fd, NULL);
    got = pread(fd, out, n - 1, 0);
    close(fd);
    out[got > 0 ? got : 0] = '\0';
    return rc;
}

static void
ensure_vault(void)
{
    if (dir[0] != '\0')
        return;
    make_vault();
    atexit(remove_vault);
}

/* A lookup, three more, and a get, over the newest state and over an
 * older snapshot: each segment is read once, and of the large segment
 * only its head and the blocks looked at. */
static void
test_lookups_read_little(void)
{
    struct pqv_entry e;
    char name[80], text[64];
    uint64_t large, epoch;
    pqv_vault *v;

    ensure_vault();
    large = largest_segment();
    REQUIRE(large > (3u << 19)); /* over 1.5 MiB */
    REQUIRE(open_counted(&v, 0) == 0);
    counted.seg_bytes = counted.seg_reads = 0;
    for (unsigned i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "t/");
        file_name(i * 2999, name + 2, sizeof(name) - 2);
        CHECK_EQ_INT(pqv_vault_lookup(v, name, &e), 0);
        pqv_entry_clear(&e);
    }
    CHECK_EQ_INT(get_text(v, "t/changing", text, sizeof(text)), 0);
    CHECK(strcmp(text, "version three\n") == 0);
    /* (Before: the large segment read whole at each of the five.) */
    if (counted.seg_bytes >= large / 2)
        fprintf(stderr, "  read %llu bytes of segments, the largest has %llu\n",
            (unsigned long long)counted.seg_bytes, (unsigned long long)large);
    CHECK(counted.seg_bytes < large / 2);

    /* An older snapshot (--at): the same, and its version. */
    CHECK_EQ_INT(pqv_vault_resolve_snapshot(v, "latest~2", &epoch), 0);
    pqv_vault_set_at(v, epoch);
    counted.seg_bytes = 0;
    CHECK_EQ_INT(get_text(v, "t/changing", text, sizeof(text)), 0);
    CHECK(strcmp(text, "version one\n") == 0);
    snprintf(name, sizeof(name), "t/");
    file_name(FILES - 1, name + 2, sizeof(name) - 2);
    CHECK_EQ_INT(pqv_vault_lookup(v, name, &e), 0);
    pqv_entry_clear(&e);
    CHECK(counted.seg_bytes < large / 2);
    pqv_vault_close(v);
}

/* A list reads each part it walks once, and a second list nothing more. */
static void
test_walks_read_once(void)
{
    struct pqv_entry *es;
    size_t n;
    uint64_t large, first;
    pqv_vault *v;

    ensure_vault();
    large = largest_segment();
    REQUIRE(open_counted(&v, 0) == 0);
    counted.seg_bytes = 0;
    CHECK_EQ_INT(pqv_vault_list(v, NULL, NULL, &es, &n), 0);
    CHECK_EQ_INT(n, FILES + 60 + 1 + 1); /* the files, their directories, changing, t */
    pqv_entries_free(es, n);
    first = counted.seg_bytes;
    CHECK(first > large / 4);  /* the entry blocks were read ... */
    CHECK(first < 2 * large);  /* ... once */
    CHECK_EQ_INT(pqv_vault_list(v, "t/d07", NULL, &es, &n), 0);
    CHECK_EQ_INT(n, FILES / 60 + 1);
    pqv_entries_free(es, n);
    CHECK_EQ_INT(counted.seg_bytes, first);
    pqv_vault_close(v);
}

/* The writer lock reads from the storage each time; a reader sees what a
 * writer committed after the reader read the state. */
static void
test_writer_and_fresh_segments(void)
{
    struct pqv_entry e;
    char text[64];
    uint64_t before;
    pqv_vault *r, *w;

    ensure_vault();
    REQUIRE(open_counted(&w, 1) == 0);
    CHECK_EQ_INT(pqv_vault_lookup(w, "t/changing", &e), 0);
    pqv_entry_clear(&e);
    before = counted.seg_bytes;
    CHECK_EQ_INT(pqv_vault_lookup(w, "t/changing", &e), 0);
    pqv_entry_clear(&e);
    CHECK(counted.seg_bytes > before);
    pqv_vault_close(w);

    REQUIRE(open_counted(&r, 0) == 0);
    CHECK_EQ_INT(get_text(r, "t/changing", text, sizeof(text)), 0);
    CHECK(strcmp(text, "version three\n") == 0);
    CHECK_EQ_INT(pqv_vault_lookup(r, "t/new", &e), PQV_E_NOTFOUND);
    write_src("new", "a new file\n");
    write_src("changing", "version four\n");
    add_src();
    CHECK_EQ_INT(get_text(r, "t/new", text, sizeof(text)), 0);
    CHECK(strcmp(text, "a new file\n") == 0);
    CHECK_EQ_INT(get_text(r, "t/changing", text, sizeof(text)), 0);
    CHECK(strcmp(text, "version four\n") == 0);
    pqv_vault_close(r);
}

/* block_names(v, s, b, names, max): up to ${max} names of block ${b}. */
static size_t
block_names(pqv_vault *v, const struct segment *s, size_t b, char names[][80], size_t max)
{
    struct entry *es;
    size_t n, k = 0;

    if (segment_block(v, s, b, &es, &n) != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (k < max && strlen(es[i].name) < 80)
            snprintf(names[k++], 80, "%s", es[i].name);
        entry_clear(&es[i]);
    }
    free(es);
    return k;
}

/* A byte flipped in the middle block of the large segment (in a copy of
 * the vault): a lookup of a name in it fails authentication, one in
 * another block does not, and list gives every other entry. */
static void
test_damaged_block_alone(void)
{
    char copy[160], cmd[400], path[200], inside[4][80], outside[4][80], (*lost_names)[80] = NULL;
    struct pqv_entry e, *es, *before;
    struct state st;
    size_t n, total, lost = 0, nin = 0, nout = 0, nlost = 0, kept = 0, matched = 0;
    uint64_t where = 0, epoch = 0;
    pqv_vault *v;
    FILE *f;
    int c;

    ensure_vault();
    snprintf(copy, sizeof(copy), "%s/damaged", dir);
    snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", vdir, copy);
    REQUIRE(system(cmd) == 0);
    REQUIRE(vf_open_vault(NULL, copy, pass, &v, 0) == 0);
    REQUIRE(pqv_vault_list(v, NULL, NULL, &before, &total) == 0);
    REQUIRE(state_current(v, &st, NULL) == 0);
    for (size_t i = 0; i < st.nsegs; i++) {
        struct segment *s = &st.segs[i];
        if (s->blockdata == NULL && s->nblocks >= 3) {
            size_t b = s->nblocks / 2;
            nin = block_names(v, s, b, inside, 4);
            nout = block_names(v, s, 0, outside, 4);
            lost = s->blocks[b].n;
            free(lost_names);
            REQUIRE((lost_names = calloc(lost, sizeof(*lost_names))) != NULL);
            nlost = block_names(v, s, b, lost_names, lost);
            where = s->data_off + s->blocks[b].off + s->blocks[b].len / 2;
            epoch = s->epoch;
        }
    }
    state_free(&st);
    pqv_vault_close(v);
    REQUIRE(epoch != 0 && nin > 0 && nout > 0);
    snprintf(path, sizeof(path), "%s/segments/%016llx", copy, (unsigned long long)epoch);
    REQUIRE((f = fopen(path, "r+b")) != NULL);
    REQUIRE(fseek(f, (long)where, SEEK_SET) == 0 && (c = fgetc(f)) != EOF);
    REQUIRE(fseek(f, (long)where, SEEK_SET) == 0 && fputc(c ^ 0x20, f) != EOF);
    REQUIRE(fclose(f) == 0);

    REQUIRE(vf_open_vault(NULL, copy, pass, &v, 0) == 0);
    for (size_t i = 0; i < nin; i++) {
        CHECK_EQ_INT(pqv_vault_lookup(v, inside[i], &e), PQV_E_INTEGRITY);
        CHECK(strstr(pqv_error_detail(), "failed authentication") != NULL);
    }
    for (size_t i = 0; i < nout; i++) {
        CHECK_EQ_INT(pqv_vault_lookup(v, outside[i], &e), 0);
        pqv_entry_clear(&e);
    }
    CHECK_EQ_INT(pqv_vault_list(v, NULL, NULL, &es, &n), PQV_E_INTEGRITY);
    /* What lists is what listed before but names of the lost block: every
     * other name, and none that was not there.  A name of the lost block
     * that an older segment also holds may still list (its older entry),
     * so the count is between total - lost and total. */
    CHECK(nlost == lost);
    CHECK(n >= total - lost && n < total);
    for (size_t i = 0; i < total; i++) {
        int listed = 0, in_lost = 0;
        for (size_t k = kept; k < n && !listed; k++)
            if (strcmp(es[k].name, before[i].name) == 0) {
                listed = 1;
                matched++;
                kept = k + 1; /* (both lists are in name order) */
            }
        for (size_t k = 0; k < nlost && !listed && !in_lost; k++)
            in_lost = strcmp(lost_names[k], before[i].name) == 0;
        CHECK(listed || in_lost);
    }
    CHECK_EQ_INT(matched, n);
    for (size_t k = 1; k < n; k++)
        CHECK(strcmp(es[k - 1].name, es[k].name) < 0);
    pqv_entries_free(before, total);
    free(lost_names);
    pqv_entries_free(es, n);
    pqv_vault_close(v);
}

TEST_MAIN(test_lookups_read_little, test_walks_read_once, test_writer_and_fresh_segments,
    test_damaged_block_alone)
