/*
 * create.c: creating a vault: seed, identity, key file, config (the config
 * last: a vault exists once its config does).
 *
 * A failed init leaves nothing behind (issue 17: a failure after the key
 * file left it and segments/ without a config, refused by every command and
 * by init alone): what this run created is removed again, in reverse order
 * (the key file, segment 1, the local state, inbox/, the directories it
 * made).  What a killed init (or a failed removal) leaves is only ever what
 * an init writes before its config: the next init finds exactly that (the
 * vault's own key file, an empty base as segment 1, temporaries, empty
 * directories, no config) and starts over; anything more is a vault's, and
 * refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/io.h"
#include "util/util.h"
#include "vault/config.h"
#include "vault/inbox.h"
#include "vault/localstate.h"
#include "vault/reserve.h"
#include "vault/segment.h"
#include "vault/state.h"
#include "vault/txn.h"
#include "vault/vault_internal.h"

/* What a create attempted, for undo (each may or may not exist). */
struct made {
    int keyfile, segment, state, config;
};

/* undo(v, m): remove what this create attempted (best effort; the
 * failure that led here is the one reported). */
static void
undo(pqv_vault *v, const struct made *m)
{
    char sname[STORAGE_NAME_MAX];
    struct error_saved saved;
    int config_left = 0;

    error_save(&saved);
    segment_name(1, sname);
    if (m->config) {
        int d = v->storage->ops->del(v->storage, CONFIG_NAME);
        config_left = d != 0 && d != PQV_E_NOTFOUND;
    }
    if (m->state)
        localstate_forget(v);
    if (m->segment)
        (void)v->storage->ops->del(v->storage, sname);
    if (m->keyfile)
        (void)v->key_storage->ops->del(v->key_storage, v->key_name);
    (void)v->storage->ops->barrier(v->storage);
    if (v->key_storage != v->storage)
        (void)v->key_storage->ops->barrier(v->key_storage);
    error_restore(&saved);
    if (config_left) {
        /* A vault whose recovery code nobody saw: say so. */
        char why[PQV_ERROR_REASON_MAX];
        const struct pqv_error *e = pqv_error_last();
        int code = e->code;
        snprintf(why, sizeof(why), "%.200s%s%.700s", e->subject, e->subject[0] ? ": " : "",
            e->reason);
        error_set(code, NULL, "%s (and the vault made could not be removed again: remove it "
            "before running init again)", why);
    }
}

/* An empty base as segment 1 is at most this large (no entry, no block). */
#define EMPTY_BASE_MAX 4096

struct leftovers {
    pqv_storage *s;
    struct names_list del;       /* to remove when starting over */
    int foreign;                 /* something an init does not write first */
    char what[STORAGE_NAME_MAX]; /* (the first such name) */
};

static int
leftover(void *ctx, const char *name, uint64_t size)
{
    struct leftovers *l = ctx;
    uint8_t h[SEGMENT_HEADER_BYTES];
    int ok = 0;

    if (strstr(name, PQV_STORAGE_TEMP_MARK) != NULL) {
        ok = size != PQV_STORAGE_NOT_A_BLOB;
    } else if (strcmp(name, "segments/0000000000000001") == 0 && size <= EMPTY_BASE_MAX &&
        size >= SEGMENT_HEADER_BYTES &&
        l->s->ops->get_range(l->s, name, 0, h, sizeof(h)) == 0) {
        /* An empty base of epoch 1: its header says so (no block). */
        ok = segment_check_header(h, sizeof(h), 1, NULL) == 0 && h[5] == SEGMENT_BASE &&
            util_load_be32(h + 68) == 0;
        pqv_error_clear();
    }
    if (!ok) {
        if (!l->foreign)
            snprintf(l->what, sizeof(l->what), "%s", name);
        l->foreign = 1;
        return 0;
    }
    return names_list_add(&l->del, name);
}

/* start_over(v, report, ctx): no config here.  If nothing of a vault is
 * here either, 0.  If only what an init writes before its config is (the
 * key file in the vault, an empty base as segment 1, temporaries), it is
 * removed and 0 returned; else PQV_E_EXISTS. */
static int
start_over(pqv_vault *v, const struct pqv_init_options *opt)
{
    static const char *const prefixes[] = { "segments", "packs", "objects", "records", "inbox" };
    struct leftovers l;
    int rc = 0, keyfile = 0;

    memset(&l, 0, sizeof(l));
    l.s = v->storage;
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && rc == 0; i++)
        rc = v->storage->ops->list(v->storage, prefixes[i], leftover, &l);
    if (rc == 0)
        rc = v->key_storage->ops->stat(v->key_storage, v->key_name, NULL);
    if (rc == 0)
        keyfile = 1;
    else if (rc == PQV_E_NOTFOUND)
        rc = 0;
    if (rc != 0)
        goto out;
    if (!keyfile && l.del.n == 0 && !l.foreign)
        goto out; /* a fresh place */
    if (keyfile && v->key_storage != v->storage) {
        /* A key file elsewhere (--keyfile) may be another vault's. */
        rc = error_set(PQV_E_EXISTS, v->keyfile_path, "key file already exists (if a failed "
            "init left it, remove it)");
        goto out;
    }
    if (l.foreign) {
        rc = error_set(PQV_E_EXISTS, NULL, "%s is here but no config: the files of a vault "
            "(damaged?), not what an interrupted init leaves; init will not start over here",
            l.what);
        goto out;
    }
    vault_report(opt->report, opt->report_ctx, PQV_REPORT_WARNING, NULL, "removing what an "
        "interrupted init left here (%s%zu file%s), starting over", keyfile ? "its key file, " : "",
        l.del.n, l.del.n == 1 ? "" : "s");
    for (size_t i = 0; i < l.del.n && rc == 0; i++)
        if ((rc = v->storage->ops->del(v->storage, l.del.names[i])) == PQV_E_NOTFOUND)
            rc = 0;
    if (rc == 0 && keyfile && (rc = v->key_storage->ops->del(v->key_storage, v->key_name)) ==
        PQV_E_NOTFOUND)
        rc = 0;
    if (rc == 0)
        rc = v->storage->ops->barrier(v->storage);
out:
    names_list_free(&l.del);
    return rc;
}

/* vault_create(v, pass, passlen, opt, inbox_dir, recovery, fingerprint):
 * create the vault in ${v}'s storages (a local one's inbox/ at ${inbox_dir};
 * NULL: none); on failure what it made is removed. */
static int make_inbox(const char *dir);
static int share_inbox(const char *dir);

static int
vault_create(pqv_vault *v, const uint8_t *pass, size_t passlen, const struct pqv_init_options *opt,
    const char *inbox_dir, char recovery[PQV_RECOVERY_CHARS],
    char fingerprint[PQV_FINGERPRINT_CHARS])
{
    struct pqv_init_options defaults = { NULL, 0, NULL, 0, NULL, NULL, NULL , 0};
    struct vault_config *config = &v->config;
    struct made made = { 0, 0, 0, 0 };
    pqv_identity *id = NULL;
    uint8_t seed[PQV_SEED_BYTES], config_key[32];
    uint8_t *text = NULL;
    size_t textlen;
    int rc;

    if (recovery == NULL || fingerprint == NULL || (pass == NULL && passlen > 0))
        return PQV_E_INVAL;
    if (passlen == 0)
        return error_set(PQV_E_INVAL, NULL, "empty passphrase");
    if (opt == NULL)
        opt = &defaults;
    if ((opt->flags & PQV_INIT_SHARED_INBOX) != 0 && inbox_dir == NULL)
        return error_set(PQV_E_INVAL, NULL, "a shared inbox is for a local vault: on S3, a "
            "bucket policy lets writers put objects under inbox/ (docs/S3.md)");
    config->version = opt->format != 0 ? opt->format : PQV_FORMAT_DEFAULT;
    if (config->version < 1 || config->version > 3)
        return error_set(PQV_E_INVAL, NULL, "unknown format version %d", opt->format);
    config->kem = pqv_frodo_find(opt->kem != NULL ? opt->kem : pqv_default_kem());
    if (config->kem == NULL)
        return error_set(PQV_E_INVAL, NULL, "unknown KEM \"%s\"", opt->kem);
    config->aead = opt->aead != 0 ? opt->aead : pqv_aead_auto();
    if (pqv_aead_name(config->aead) == NULL)
        return error_set(PQV_E_INVAL, NULL, "unknown AEAD suite");
    config->created = (int64_t)time(NULL);

    rc = v->storage->ops->stat(v->storage, CONFIG_NAME, NULL);
    if (rc == 0)
        return error_set(PQV_E_EXISTS, NULL, "a vault already exists here");
    if (rc != PQV_E_NOTFOUND)
        return rc;
    /* Nothing of a vault here, or only an interrupted init's start. */
    if ((rc = start_over(v, opt)) != 0)
        return rc;
    if ((rc = util_random(seed, sizeof(seed))) != 0 ||
        (rc = util_random(config->vault_id, VAULT_ID_BYTES)) != 0)
        goto done;
    if ((rc = pqv_identity_derive(&id, config->kem, seed)) != 0)
        goto done;
    memcpy(config->identity_hash, pqv_identity_public_hash(id), 32);
    v->identity = id; /* (borrowed until the end) */
    if ((rc = vault_derive_keys(v, config_key)) != 0)
        goto done;
    if ((rc = config_build(config, config_key, &text, &textlen)) != 0)
        goto done;
    if ((rc = pqv_keyfile_create(&v->keyfile, id, seed, pass, passlen, opt->kdf)) != 0)
        goto done;
    /* The key file first, the config last: a vault exists once its config
     * does, and then everything it needs is there. */
    made.keyfile = 1;
    if ((rc = vault_store_keyfile(v, v->keyfile)) != 0)
        goto done;
    /* Format 2: the first epoch, an empty base, roots the chain. */
    if (config->version >= 2) {
        struct state st;
        struct txn t;
        memset(&st, 0, sizeof(st));
        st.format = config->version;
        if (opt->state_dir != NULL && (v->state_dir = strdup(opt->state_dir)) == NULL) {
            rc = PQV_E_NOMEM;
            goto done;
        }
        v->report = opt->report;
        v->report_ctx = opt->report_ctx;
        if ((rc = txn_begin(v, &st, &t)) != 0)
            goto done;
        made.segment = made.state = 1;
        rc = txn_commit(&t, SEGMENT_BASE, NULL, 0, NULL, 0);
        txn_free(&t);
        if (rc != 0)
            goto done;
    }
    /* A local vault's inbox/ before the config: the config is the last
     * thing written. */
    if (inbox_dir != NULL && (rc = make_inbox(inbox_dir)) != 0)
        goto done;
    made.config = 1;
    if ((rc = v->storage->ops->put(v->storage, CONFIG_NAME, text, textlen)) != 0 ||
        (rc = v->storage->ops->barrier(v->storage)) != 0)
        goto done;
    if ((opt->flags & PQV_INIT_SHARED_INBOX) != 0 && (rc = share_inbox(inbox_dir)) != 0)
        goto done;
    if ((rc = pqv_recovery_encode(seed, recovery)) != 0)
        goto done;
    pqv_identity_fingerprint(id, fingerprint);
    /* The reserve last, once the vault exists: a failure to make it is
     * no failure of init (a warning; the next writing command tries
     * again). */
    (void)reserve_ensure(v, opt->report, opt->report_ctx, 1);

done:
    if (rc != 0)
        undo(v, &made);
    v->identity = NULL;
    pqv_identity_free(id);
    util_wipe(seed, sizeof(seed));
    util_wipe(config_key, sizeof(config_key));
    free(text);
    return rc;
}

/* make_inbox(dir): the inbox directory of a local vault, mode 1733: other
 * users (write-only writers) may create files in it but neither list it
 * nor remove what they did not create (docs/SECURITY.md, deployment). */
static int
make_inbox(const char *dir)
{
    char path[4200];
    int rc;

    int fd;

    if (snprintf(path, sizeof(path), "%s/" INBOX_DIR, dir) >= (int)sizeof(path))
        return error_set(PQV_E_INVAL, dir, "path too long");
    if (io_mkdirat(AT_FDCWD, path, 0700, path) != 0 && errno != EEXIST)
        return error_errno(path, "mkdir", errno);
    if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return error_errno(path, "open", errno);
    rc = io_fchmod(fd, 01733, path) != 0 ? error_errno(path, "chmod", errno) : 0;
    close(fd);
    if (rc == 0)
        rc = fsutil_fsync_dir(dir);
    return rc;
}

/* share_inbox(dir): the permissions other users' writers need (see
 * PQV_INIT_SHARED_INBOX): the directory 0711, the config 0644. */
static int
share_inbox(const char *dir)
{
    int dfd, fd, rc = 0;

    if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return error_errno(dir, "open", errno);
    if ((fd = openat(dfd, CONFIG_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        rc = error_errno(CONFIG_NAME, "open", errno);
    else {
        if (io_fchmod(fd, 0644, CONFIG_NAME) != 0 || fsync(fd) != 0)
            rc = error_errno(CONFIG_NAME, "chmod", errno);
        close(fd);
    }
    if (rc == 0 && (io_fchmod(dfd, 0711, dir) != 0 || fsync(dfd) != 0))
        rc = error_errno(dir, "chmod", errno);
    close(dfd);
    return rc;
}

/* first_missing(dir, out): the outermost ancestor of ${dir} (or ${dir})
 * that does not exist yet, "" if it exists. */
static void
first_missing(const char *dir, char out[4096])
{
    char cur[4096], up[4096];
    struct stat st;

    out[0] = '\0';
    snprintf(cur, sizeof(cur), "%s", dir);
    while (cur[0] != '\0' && lstat(cur, &st) != 0 && errno == ENOENT) {
        snprintf(out, 4096, "%s", cur);
        fsutil_dirname(cur, up, sizeof(up));
        if (strcmp(up, cur) == 0)
            break;
        snprintf(cur, sizeof(cur), "%s", up);
    }
}

/* remove_dirs(dir, top): a failed create's directories: the vault's own
 * subdirectories, then ${dir} and its parents up to ${top} (those the
 * create made), each only if empty. */
static void
remove_dirs(const char *dir, const char *top)
{
    static const char *const subs[] = { "segments", "packs", INBOX_DIR };
    char path[4200], up[4096];

    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        if (snprintf(path, sizeof(path), "%s/%s", dir, subs[i]) < (int)sizeof(path))
            (void)rmdir(path);
    if (top[0] == '\0')
        return;
    snprintf(path, sizeof(path), "%s", dir);
    for (;;) {
        if (rmdir(path) != 0 && errno != ENOENT)
            break;
        if (strcmp(path, top) == 0)
            break;
        fsutil_dirname(path, up, sizeof(up));
        if (strcmp(up, path) == 0)
            break;
        snprintf(path, sizeof(path), "%s", up);
    }
    fsutil_dirname(top, up, sizeof(up));
    (void)fsutil_fsync_dir(up);
}

int
pqv_vault_create(const char *dir, const char *keyfile, const uint8_t *pass, size_t passlen,
    const struct pqv_init_options *opt, char recovery[PQV_RECOVERY_CHARS],
    char fingerprint[PQV_FINGERPRINT_CHARS])
{
    char top[4096];
    pqv_vault *v;
    int rc;

    if (dir == NULL)
        return PQV_E_INVAL;
    first_missing(dir, top);
    if ((rc = vault_new_local(&v, dir, keyfile, 1)) != 0) {
        struct error_saved saved;
        error_save(&saved);
        remove_dirs(dir, top);
        error_restore(&saved);
        return rc;
    }
    rc = vault_create(v, pass, passlen, opt, dir, recovery, fingerprint);
    if (rc == PQV_E_EXISTS) {
        struct error_saved saved;
        error_save(&saved); /* (the stat's own failure is not the news) */
        if (v->storage->ops->stat(v->storage, CONFIG_NAME, NULL) == 0)
            error_set(rc, dir, "a vault already exists here");
        else
            error_restore(&saved);
    }
    pqv_vault_close(v);
    /* What the create made is gone: now the directories it made (after a
     * refusal only if it made the vault's directory: nothing was there). */
    if (rc != 0 && (rc != PQV_E_EXISTS || top[0] != '\0')) {
        struct error_saved saved;
        error_save(&saved);
        remove_dirs(dir, top);
        error_restore(&saved);
    }
    return rc;
}

int
pqv_vault_create_storage(pqv_storage *storage, pqv_storage *key_storage, const char *key_name,
    const uint8_t *pass, size_t passlen, const struct pqv_init_options *opt,
    char recovery[PQV_RECOVERY_CHARS], char fingerprint[PQV_FINGERPRINT_CHARS])
{
    pqv_vault *v;
    int rc;

    if (storage == NULL)
        return PQV_E_INVAL;
    if ((rc = vault_new_over(&v, storage, key_storage, key_name)) != 0)
        return rc;
    rc = vault_create(v, pass, passlen, opt, NULL, recovery, fingerprint);
    pqv_vault_close(v);
    return rc;
}
