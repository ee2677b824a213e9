/*
 * vault/select.h: which entries of a loaded state the operands of rm and
 * get name (select.c): a stored name with everything below it, or a
 * pattern over whole names as list's operands are (pqvault/match.h,
 * PQV_MATCH_ANCHORED), a directory it matches with everything below it;
 * and the --include and --exclude rules of get over whole names.
 */
#ifndef PQV_VAULT_SELECT_H
#define PQV_VAULT_SELECT_H

#include <stddef.h>

#include "pqvault/match.h"
#include "vault/state.h"

struct select_op {
    const char *arg;             /* as given, for messages */
    char *norm;                  /* the stored name it is; NULL: a pattern */
    pqv_match *pattern;
};

/* select_op_init(op, arg, glob, st): ${arg} as an operand: a pattern when
 * ${glob} is set, ${arg} has glob characters (pqv_match_is_glob) and ${st}
 * (loaded; NULL: not consulted) holds no entry that is ${arg} or below it
 * (so "photo[1].jpg" stored is that name); else a stored name, normalised.
 * PQV_E_INVAL (said) for a malformed name or pattern, PQV_E_NOMEM. */
int select_op_init(struct select_op *op, const char *arg, int glob, const struct state *st);
void select_op_free(struct select_op *op);

/* select_each(st, op, fn, ctx): ${fn}(${ctx}, i, root_len) for every
 * entry i of ${st} (loaded) that ${op} names, in ascending order (parents
 * before what is below them), each once; the entry's first ${root_len}
 * bytes are the name it is named by (the operand's, or the highest
 * directory above it that the pattern matches, or its own).  The first
 * nonzero return of ${fn} ends the walk and is returned. */
int select_each(const struct state *st, const struct select_op *op,
    int (*fn)(void *ctx, size_t i, size_t root_len), void *ctx);

/* select_keep(include, exclude, name, is_dir): whether get keeps the
 * entry ${name} (a directory if ${is_dir}): not when ${exclude} (NULL:
 * none) matches it or a directory above it (as in git: nothing below an
 * excluded directory comes back); with ${include} (NULL: everything), only
 * when it matches the name or a directory above it.  Patterns see whole
 * stored names (gitignore rules: one without a slash matches the last
 * component at any depth). */
int select_keep(const pqv_match *include, const pqv_match *exclude, const char *name,
    int is_dir);

#endif
