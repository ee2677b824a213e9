/*
 * match.h: gitignore-style pattern sets (man gitignore; the rules are
 * listed in pqvault/match.h and docs/CLI.md, "Patterns").  Patterns are
 * compiled once into components; a name is matched component by component,
 * "**" acting as a wildcard over whole components, so that matching is
 * polynomial (no backtracking blow-up on hostile patterns).
 *
 * Where git differs: an unterminated "[" is an ordinary character here (git's
 * wildmatch makes such a pattern match nothing); a "\r" ending a line of a
 * pattern file is dropped; a pattern that is empty once parsed ("!" or "/"
 * alone) is refused instead of ignored.
 */
#ifndef PQV_MATCH_H
#define PQV_MATCH_H

#include <stddef.h>

#include "pqvault/match.h"

struct match_pattern;

/* A set of patterns, in the order given (the last matching one decides). */
struct match_set {
    struct match_pattern **p;
    size_t n, cap;
    unsigned flags;          /* PQV_MATCH_ANCHORED */
};

/* The public handle is a set. */
struct pqv_match {
    struct match_set set;
};

/* match_init(s, flags): an empty set with ${flags} (0 or PQV_MATCH_ANCHORED). */
void match_init(struct match_set *s, unsigned flags);

/* match_clear(s): free the patterns of ${s} (it is then empty). */
void match_clear(struct match_set *s);

/* match_add(s, pattern): append ${pattern}, taken as is (see pqv_match_add).
 * PQV_E_INVAL (empty once parsed, or longer than PQV_MATCH_LINE_MAX),
 * PQV_E_NOMEM. */
int match_add(struct match_set *s, const char *pattern);

/* match_load_buf(s, buf, len, subject): append the patterns of the lines of
 * ${buf} (see pqv_match_load_file), errors about ${subject}; on failure
 * ${s} is unchanged.  PQV_E_INVAL, PQV_E_NOMEM. */
int match_load_buf(struct match_set *s, const char *buf, size_t len, const char *subject);

/* match_load_file(s, path): match_load_buf over the file ${path} (a FIFO or
 * /dev/stdin is read to its end, at most PQV_MATCH_FILE_MAX + 1 bytes).
 * PQV_E_INVAL, PQV_E_NOTFOUND, PQV_E_IO, PQV_E_NOMEM. */
int match_load_file(struct match_set *s, const char *path);

/* match_excluded(s, name, is_dir): 1 if the last pattern matching the
 * relative name ${name} (a directory if ${is_dir}) excludes it, else 0.
 * Only ${name} itself: a walker does not descend into an excluded
 * directory. */
int match_excluded(const struct match_set *s, const char *name, int is_dir);

/* match_excluded_tree(s, name, is_dir): 1 if ${name} or one of its parent
 * directories is excluded (what a walker that prunes excluded directories
 * ends up with), else 0.  For callers that test names without walking. */
int match_excluded_tree(const struct match_set *s, const char *name, int is_dir);

/* match_is_glob(str): whether ${str} contains "*", "?" or "[". */
int match_is_glob(const char *str);

#endif
