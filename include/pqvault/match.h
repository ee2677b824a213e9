/*
 * pqvault/match.h: gitignore-style patterns over stored names (the rules in
 * docs/CLI.md, "Patterns"): what a program leaves out of a tree it adds,
 * or which names it lists.  A set is built from patterns (one at a time,
 * or from a file of them) and asked about one '/'-separated relative name
 * at a time; the last pattern that matches a name decides.
 *
 *   *, ?, [...]   match within one component ([!...] and [^...] negate,
 *                 ranges, [:alpha:] classes; an unterminated [ is literal)
 *   **            as a whole component: zero or more components (as
 *                 the last component after a slash: one or more)
 *   a/b, /a       a slash other than a trailing one anchors the pattern to
 *                 the root; otherwise it matches the last component at any
 *                 depth
 *   a/            a trailing slash matches directories only
 *   !a            re-includes what an earlier pattern excluded
 *   \x            the character x itself
 */
#ifndef PQVAULT_MATCH_H
#define PQVAULT_MATCH_H

#include <stddef.h>

#include "pqvault/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds of what a set accepts: the bytes of one pattern (a line of a file,
 * without its line end), and of a pattern file. */
#define PQV_MATCH_LINE_MAX 4096u
#define PQV_MATCH_FILE_MAX (1u << 20)

/* Flags of pqv_match_new. */
/* Every pattern is matched against whole names from the root, as a shell
 * glob is ("*.pdf": top-level names only; "**" for any depth), and a
 * leading "!" is an ordinary character: for choosing names to show. */
#define PQV_MATCH_ANCHORED 1u

typedef struct pqv_match pqv_match;

/* pqv_match_new(out, flags): an empty set (matching nothing) with
 * ${flags} (0 or PQV_MATCH_ANCHORED).  PQV_E_INVAL for an unknown flag,
 * PQV_E_NOMEM. */
PQV_API int pqv_match_new(pqv_match **out, unsigned flags) PQV_WARN_UNUSED;

/* pqv_match_add(m, pattern): append one ${pattern} (taken as is: no
 * comment, no trimming).  PQV_E_INVAL for an empty pattern (also "!" or
 * "/" alone) or one longer than PQV_MATCH_LINE_MAX; PQV_E_NOMEM. */
PQV_API int pqv_match_add(pqv_match *m, const char *pattern) PQV_WARN_UNUSED;

/* pqv_match_load_file(m, path): append the patterns of the file ${path},
 * one a line: empty lines and lines starting with "#" are skipped, trailing
 * spaces (unless escaped with "\") and a "\r" before the "\n" dropped.
 * Strict: PQV_E_INVAL (subject ${path}, the reason naming the line) for a
 * file larger than PQV_MATCH_FILE_MAX, a line longer than
 * PQV_MATCH_LINE_MAX, a NUL byte or a pattern that is empty once parsed
 * ("!" alone); the set is then unchanged.  PQV_E_NOTFOUND, PQV_E_IO. */
PQV_API int pqv_match_load_file(pqv_match *m, const char *path) PQV_WARN_UNUSED;

/* pqv_match_test(m, name, is_dir): 1 if the last pattern of ${m} that
 * matches the name ${name} (a directory if ${is_dir}) is not a "!" one,
 * else 0.  Only ${name} itself is tested: a program walking a tree does not
 * descend into a directory that tests 1 (so, as in git, nothing below an
 * excluded directory can be re-included). */
PQV_API int pqv_match_test(const pqv_match *m, const char *name, int is_dir);

/* pqv_match_is_glob(s): whether ${s} contains "*", "?" or "[" (a
 * backslash alone does not make a pattern of a name). */
PQV_API int pqv_match_is_glob(const char *s);

/* pqv_match_free(m): free; NULL is a no-op. */
PQV_API void pqv_match_free(pqv_match *m);

#ifdef __cplusplus
}
#endif
#endif
