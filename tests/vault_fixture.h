/*
 * vault_fixture.h: set-up shared by the crash, fault and corruption tests
 * (header-only; static inline functions, so that a test using only some
 * of them draws no unused-function warning).
 *
 * Always: opening a vault (over a storage or a directory) with unlock and
 * the writer lock, writing a file, comparing a file with expected bytes,
 * adding from a pipe.  With vaultcheck.h included first (the crash and
 * fault tests): the files of the starting vault and of the scenarios'
 * operations, the models of the scenarios both tests run, and running an
 * operation under the writer lock.
 */
#ifndef PQV_TEST_VAULT_FIXTURE_H
#define PQV_TEST_VAULT_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pqvault/vault.h"

/* SETUP(cond): set-up that cannot go on, not a check: exits 2 naming
 * ${cond} (usable in functions returning a value). */
#define SETUP(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "  %s:%d: set-up failed: %s\n", __FILE__,        \
                __LINE__, #cond);                                            \
            exit(2);                                                         \
        }                                                                    \
    } while (0)

/*
 * vf_open_vault(s, dir, pass, out, lock): open the vault over the storage
 * ${s} or, when ${s} is NULL, in the directory ${dir}; unlock with ${pass}
 * and, with ${lock}, take the writer lock (without waiting).  0 and the
 * vault in ${out}, or the error code of the first failure (nothing left
 * open, ${out} untouched).
 */
static inline int
vf_open_vault(pqv_storage *s, const char *dir, const char *pass, pqv_vault **out, int lock)
{
    pqv_vault *v;
    char holder[PQV_LOCK_HOLDER_MAX];
    int rc;

    rc = s != NULL ? pqv_vault_open_storage(&v, s, NULL, NULL) : pqv_vault_open(&v, dir, NULL);
    if (rc != 0)
        return rc;
    if ((rc = pqv_vault_unlock(v, (const uint8_t *)pass, strlen(pass))) != 0 ||
        (lock && (rc = pqv_vault_lock_writer(v, 0, holder, sizeof(holder))) != 0)) {
        pqv_vault_close(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* vf_write_path(path, data, len): create or replace ${path}; exits 2 on
 * failure (set-up that cannot go on). */
static inline void
vf_write_path(const char *path, const uint8_t *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
}

/* vf_file_holds(path, data, len, got): 1 if ${path} holds exactly the
 * ${len} bytes of ${data}, else 0; ${got} is the number of bytes read
 * (at most len + 1; 0 if it cannot be opened). */
static inline int
vf_file_holds(const char *path, const uint8_t *data, size_t len, size_t *got)
{
    uint8_t *buf = malloc(len + 1);
    FILE *f = fopen(path, "rb");

    *got = f != NULL ? fread(buf, 1, len + 1, f) : 0;
    if (f != NULL)
        fclose(f);
    int same = *got == len && memcmp(buf, data, len) == 0;
    free(buf);
    return same;
}

/* vf_add_pipe(v, name, data, len, mode): add ${data} under ${name} from a
 * pipe (pqv_vault_add_fd, mtime 1700000000); PQV_E_IO if the pipe fails. */
static inline int
vf_add_pipe(pqv_vault *v, const char *name, const uint8_t *data, size_t len, unsigned mode)
{
    int p[2], rc;

    if (pipe(p) != 0)
        return PQV_E_IO;
    if (write(p[1], data, len) != (ssize_t)len) {
        close(p[0]);
        close(p[1]);
        return PQV_E_IO;
    }
    close(p[1]);
    rc = pqv_vault_add_fd(v, p[0], name, mode, 1700000000, NULL);
    close(p[0]);
    return rc;
}

#ifdef PQV_TEST_VAULTCHECK_H

/* ---- the scenarios' files (deterministic, vc_data) ---- */

#define VF_KEEP_A_LEN 1000
#define VF_OLD_LEN 5000
#define VF_GONE_LEN 300
#define VF_ONE_LEN (PQV_OBJECT_MAX_PLAIN + 777)
#define VF_TX_LEN 100
#define VF_TY_LEN 6000
#define VF_PIPED_LEN 50000
#define VF_REPLACE_LEN 7000

/* The starting vault holds keep/a, keep/empty, old, gone/1 and gone/2; the
 * operations add "new" (one), a tree (tree_x, tree_y), "piped" and a
 * replacement of "old". */
static struct {
    uint8_t *keep_a, *keep_empty, *old, *gone1, *gone2;
    uint8_t *one, *tree_x, *tree_y, *piped, *replace;
} vf;

/* vf_make_files(gone2_seed): fill ${vf}.  gone/2 has the seed
 * ${gone2_seed}: 5 for contents of its own, 4 for those of gone/1. */
static inline void
vf_make_files(unsigned gone2_seed)
{
    vf.keep_a = vc_data(VF_KEEP_A_LEN, 1);
    vf.keep_empty = vc_data(0, 2);
    vf.old = vc_data(VF_OLD_LEN, 3);
    vf.gone1 = vc_data(VF_GONE_LEN, 4);
    vf.gone2 = vc_data(VF_GONE_LEN, gone2_seed);
    vf.one = vc_data(VF_ONE_LEN, 6);
    vf.tree_x = vc_data(VF_TX_LEN, 7);
    vf.tree_y = vc_data(VF_TY_LEN, 8);
    vf.piped = vc_data(VF_PIPED_LEN, 10);
    vf.replace = vc_data(VF_REPLACE_LEN, 11);
}

/* ---- models of the scenarios both tests run ---- */

/* The untouched starting files, minus "old" or the "gone" ones if named
 * in ${skip}. */
static inline void
vf_model_base(struct vc_model *m, const char *skip)
{
    memset(m, 0, sizeof(*m));
    vc_model_kept(m, "keep/a", vf.keep_a, VF_KEEP_A_LEN);
    vc_model_kept(m, "keep/empty", vf.keep_empty, 0);
    if (strstr(skip, "old") == NULL)
        vc_model_kept(m, "old", vf.old, VF_OLD_LEN);
    if (strstr(skip, "gone") == NULL) {
        vc_model_kept(m, "gone/1", vf.gone1, VF_GONE_LEN);
        vc_model_kept(m, "gone/2", vf.gone2, VF_GONE_LEN);
    }
}

/* add of "new" */
static inline void
vf_model_add_one(struct vc_model *m)
{
    vf_model_base(m, "");
    vc_model_file(m, "new", NULL, 0, 0, vf.one, VF_ONE_LEN, 1);
}

/* add of "piped" from a pipe */
static inline void
vf_model_add_fd(struct vc_model *m)
{
    vf_model_base(m, "");
    vc_model_file(m, "piped", NULL, 0, 0, vf.piped, VF_PIPED_LEN, 1);
}

/* add --force over "old" */
static inline void
vf_model_add_force(struct vc_model *m)
{
    vf_model_base(m, "old");
    vc_model_file(m, "old", vf.old, VF_OLD_LEN, 1, vf.replace, VF_REPLACE_LEN, 1);
}

/* rm of "old" */
static inline void
vf_model_rm(struct vc_model *m)
{
    vf_model_base(m, "old");
    vc_model_file(m, "old", vf.old, VF_OLD_LEN, 1, NULL, 0, 0);
}

/* rm of the directory "gone" */
static inline void
vf_model_rm_dir(struct vc_model *m)
{
    vf_model_base(m, "gone");
    vc_model_file(m, "gone/1", vf.gone1, VF_GONE_LEN, 1, NULL, 0, 0);
    vc_model_file(m, "gone/2", vf.gone2, VF_GONE_LEN, 1, NULL, 0, 0);
}

/* passwd, recover, gc: every starting file unchanged */
static inline void
vf_model_all(struct vc_model *m)
{
    vf_model_base(m, "");
}

/* vf_with_writer(s, dir, fn): open (vf_open_vault) with VC_PASS and the
 * writer lock, run ${fn}, close; the first error code. */
static inline int
vf_with_writer(pqv_storage *s, const char *dir, int (*fn)(pqv_vault *v))
{
    pqv_vault *v;
    int rc = vf_open_vault(s, dir, VC_PASS, &v, 1);

    if (rc != 0)
        return rc;
    rc = fn(v);
    pqv_vault_close(v);
    return rc;
}

#endif /* PQV_TEST_VAULTCHECK_H */

#endif
