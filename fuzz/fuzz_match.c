/*
 * fuzz_match.c: libFuzzer target for the gitignore-style matcher
 * (src/util/match.c).  The input is a pattern file, then a NUL, then names
 * one a line (a name ending in "/" is asked as a directory).  Checked: a
 * refused file leaves the set unchanged; answers are 0 or 1; a name
 * excluded by itself is excluded with its parents too; and every name is
 * matched by the pattern that escapes each of its bytes (anchored).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/match.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* literal(name, n, out): a pattern matching exactly ${name}: every byte
 * escaped but the slashes. */
static void
literal(const char *name, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (name[i] != '/')
            out[k++] = '\\';
        out[k++] = name[i];
    }
    out[k] = '\0';
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *d = (const char *)data;
    const char *nul = memchr(d, '\0', size);
    size_t plen = nul ? (size_t)(nul - d) : size;
    struct match_set s, lit;
    char name[PQV_MATCH_LINE_MAX / 2 + 2], pat[PQV_MATCH_LINE_MAX + 1];

    match_init(&s, 0);
    if (match_add(&s, "sentinel") != 0)
        abort();
    if (match_load_buf(&s, d, plen, "fuzz") != 0 && s.n != 1)
        abort();
    if (nul == NULL)
        goto done;
    size_t i = plen + 1, count = 0;
    while (i < size && count++ < 64) {
        const char *l = d + i, *nl = memchr(l, '\n', size - i);
        size_t n = nl ? (size_t)(nl - l) : size - i;
        i += n + 1;
        if (n == 0 || n >= sizeof(name) - 1 || memchr(l, '\0', n) != NULL)
            continue;
        int is_dir = l[n - 1] == '/';
        memcpy(name, l, n - (size_t)is_dir);
        name[n - (size_t)is_dir] = '\0';
        int alone = match_excluded(&s, name, is_dir);
        int tree = match_excluded_tree(&s, name, is_dir);
        if ((alone != 0 && alone != 1) || (tree != 0 && tree != 1) || (alone && !tree))
            abort();
        size_t nn = strlen(name);
        if (nn == 0 || name[0] == '/' || name[nn - 1] == '/')
            continue;
        literal(name, nn, pat);
        match_init(&lit, PQV_MATCH_ANCHORED);
        if (match_add(&lit, pat) != 0 || match_excluded(&lit, name, is_dir) != 1)
            abort();
        match_clear(&lit);
    }
done:
    match_clear(&s);
    return 0;
}
