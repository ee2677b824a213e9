/*
 * match.c: gitignore-style pattern sets (see match.h).
 *
 * A pattern is compiled into tokens, one a component: a glob over one
 * component (TOK_GLOB) or "**" (TOK_ANY: zero or more components).  A
 * pattern without a slash gets a leading TOK_ANY (it matches the last
 * component at any depth); a trailing "**" after a slash becomes "*" then
 * TOK_ANY (one or more components: as in git, "a" followed by a slash
 * and "**" does not match "a" itself).
 * Both levels, characters within a component and components within a
 * name, are matched by the classic wildcard loop that remembers only the
 * last star: O(pattern x text) steps, never exponential.
 */
#include "util/match.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/util.h"

enum { TOK_GLOB = 0, TOK_ANY = 1 };

struct match_tok {
    int kind;
    const char *s;           /* TOK_GLOB: the component's pattern */
    size_t len;
};

/* Pattern flags. */
enum { PAT_NEGATE = 1, PAT_DIRONLY = 2 };

struct match_pattern {
    unsigned flags;
    size_t ntok;
    struct match_tok *tok;   /* in the same allocation, then the text */
};

/* ---- one component ---- */

/* class_test(name, len, c): -1 if ${name} is no class name, else whether
 * ${c} is in the class (C locale). */
static int
class_test(const char *name, size_t len, unsigned char c)
{
    static const struct {
        const char *name;
        int (*fn)(int);
    } classes[] = {
        { "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank },
        { "cntrl", iscntrl }, { "digit", isdigit }, { "graph", isgraph },
        { "lower", islower }, { "print", isprint }, { "punct", ispunct },
        { "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
    };
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
        if (strlen(classes[i].name) == len && memcmp(classes[i].name, name, len) == 0)
            return c < 0x80 && classes[i].fn(c) ? 1 : 0;
    return -1;
}

/* bracket(p, pn, i, c, next): the bracket expression at ${p}[${i}] == '['
 * against ${c}: 1 or 0 with *${next} after its ']', or -1 if it is not
 * terminated (the '[' is then an ordinary character). */
static int
bracket(const char *p, size_t pn, size_t i, unsigned char c, size_t *next)
{
    size_t j = i + 1;
    int neg = 0, matched = 0, first = 1;

    if (j < pn && (p[j] == '!' || p[j] == '^')) {
        neg = 1;
        j++;
    }
    for (;;) {
        if (j >= pn)
            return -1;
        unsigned char lo = (unsigned char)p[j];
        if (lo == ']' && !first)
            break;
        first = 0;
        if (lo == '[' && j + 1 < pn && p[j + 1] == ':') {
            size_t k = j + 2;
            while (k < pn && p[k] >= 'a' && p[k] <= 'z')
                k++;
            if (k + 1 < pn && p[k] == ':' && p[k + 1] == ']') {
                int t = class_test(p + j + 2, k - (j + 2), c);
                if (t >= 0) {
                    matched |= t;
                    j = k + 2;
                    continue;
                }
            }
            /* Not a known class: '[' is a member like any other. */
        }
        if (lo == '\\') {
            if (j + 1 >= pn)
                return -1;
            lo = (unsigned char)p[++j];
        }
        j++;
        if (j + 1 < pn && p[j] == '-' && p[j + 1] != ']') {
            unsigned char hi = (unsigned char)p[j + 1];
            j += 2;
            if (hi == '\\') {
                if (j >= pn)
                    return -1;
                hi = (unsigned char)p[j++];
            }
            /* As git: the low end is a member even when the range is empty. */
            if ((lo <= c && c <= hi) || lo == c)
                matched = 1;
        } else if (lo == c) {
            matched = 1;
        }
    }
    *next = j + 1;
    return matched ^ neg;
}

/* one(p, pn, i, c, next): whether the single-character item at ${p}[${i}]
 * (not '*') matches ${c}; *${next} is the index after it.  A backslash
 * ending the pattern matches nothing. */
static int
one(const char *p, size_t pn, size_t i, unsigned char c, size_t *next)
{
    switch (p[i]) {
    case '?':
        *next = i + 1;
        return 1;
    case '[': {
        int r = bracket(p, pn, i, c, next);
        if (r >= 0)
            return r;
        *next = i + 1;
        return c == '[';
    }
    case '\\':
        if (i + 1 >= pn)
            return 0;
        *next = i + 2;
        return (unsigned char)p[i + 1] == c;
    default:
        *next = i + 1;
        return (unsigned char)p[i] == c;
    }
}

/* glob(p, pn, s, sn): whether the component pattern ${p} matches the whole
 * component ${s}. */
static int
glob(const char *p, size_t pn, const char *s, size_t sn)
{
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0, next;

    while (si < sn) {
        if (pi < pn && p[pi] == '*') {
            while (pi < pn && p[pi] == '*')
                pi++;
            star_p = pi;
            star_s = si;
            continue;
        }
        if (pi < pn && one(p, pn, pi, (unsigned char)s[si], &next)) {
            pi = next;
            si++;
            continue;
        }
        if (star_p == SIZE_MAX)
            return 0;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

/* ---- components of a name ---- */

static size_t
comp_end(const char *s, size_t n, size_t i)
{
    while (i < n && s[i] != '/')
        i++;
    return i;
}

/* pattern_match(pat, s, n, is_dir): whether ${pat} matches the name ${s}
 * (${n} bytes, '/'-separated). */
static int
pattern_match(const struct match_pattern *pat, const char *s, size_t n, int is_dir)
{
    size_t ti = 0, si = 0, star_t = SIZE_MAX, star_s = 0;
    int done = n == 0;

    if ((pat->flags & PAT_DIRONLY) && !is_dir)
        return 0;
    while (!done) {
        size_t e = comp_end(s, n, si);
        if (ti < pat->ntok && pat->tok[ti].kind == TOK_ANY) {
            star_t = ++ti;
            star_s = si;
            continue;
        }
        if (ti < pat->ntok && glob(pat->tok[ti].s, pat->tok[ti].len, s + si, e - si)) {
            ti++;
            if (e >= n)
                done = 1;
            else
                si = e + 1;
            continue;
        }
        if (star_t == SIZE_MAX)
            return 0;
        /* The last "**" takes one more component. */
        ti = star_t;
        e = comp_end(s, n, star_s);
        if (e >= n) {
            done = 1;
        } else {
            star_s = e + 1;
            si = star_s;
        }
    }
    while (ti < pat->ntok && pat->tok[ti].kind == TOK_ANY)
        ti++;
    return ti == pat->ntok;
}

/* ---- compiling ---- */

/* compile(flags, pattern, len, out): the pattern of ${len} bytes. */
static int
compile(unsigned setflags, const char *pattern, size_t len, struct match_pattern **out)
{
    static const char star[] = "*";
    unsigned flags = 0;
    const char *p = pattern;
    size_t n = len, ncomp = 1;
    int anchored = (setflags & PQV_MATCH_ANCHORED) != 0;

    if (len == 0)
        return error_set(PQV_E_INVAL, NULL, "empty pattern");
    if (len > PQV_MATCH_LINE_MAX)
        return error_set(PQV_E_INVAL, NULL, "pattern longer than %u bytes", PQV_MATCH_LINE_MAX);
    if (!anchored && p[0] == '!') {
        flags |= PAT_NEGATE;
        p++;
        n--;
    }
    if (n > 0 && p[n - 1] == '/') {
        flags |= PAT_DIRONLY;
        n--;
    }
    if (memchr(p, '/', n) != NULL)
        anchored = 1;
    if (n > 0 && p[0] == '/') {
        p++;
        n--;
    }
    if (n == 0)
        return error_set(PQV_E_INVAL, NULL, "empty pattern");
    for (size_t i = 0; i < n; i++)
        if (p[i] == '/')
            ncomp++;

    /* Room for a leading "**" and a trailing "*" before "**". */
    size_t ntok_max = ncomp + 2;
    struct match_pattern *pat = malloc(sizeof(*pat) + ntok_max * sizeof(struct match_tok) + n + 1);
    if (pat == NULL)
        return error_set(PQV_E_NOMEM, NULL, NULL);
    pat->flags = flags;
    pat->tok = (struct match_tok *)(pat + 1);
    char *text = (char *)(pat->tok + ntok_max);
    memcpy(text, p, n);
    text[n] = '\0';

    size_t nt = 0, start = 0, ci = 0;
    if (!anchored)
        pat->tok[nt++] = (struct match_tok){ TOK_ANY, NULL, 0 };
    for (size_t i = 0; i <= n; i++) {
        size_t end;
        if (i + 1 < n && text[i] == '\\') {
            if (text[i + 1] != '/') {
                i++;            /* an escaped character */
                continue;
            }
            end = i++;          /* "\/" separates as "/" does (git: it matches '/') */
        } else if (i == n || text[i] == '/') {
            end = i;
        } else {
            continue;
        }
        const char *c = text + start;
        size_t cl = end - start;
        if (cl >= 2 && strspn(c, "*") >= cl) {   /* "**", "***"...: as git */
            if (ci > 0 && i >= n)
                pat->tok[nt++] = (struct match_tok){ TOK_GLOB, star, 1 };
            if (nt == 0 || pat->tok[nt - 1].kind != TOK_ANY)
                pat->tok[nt++] = (struct match_tok){ TOK_ANY, NULL, 0 };
        } else {
            pat->tok[nt++] = (struct match_tok){ TOK_GLOB, c, cl };
        }
        ci++;
        start = i + 1;
    }
    pat->ntok = nt;
    *out = pat;
    return 0;
}

/* ---- sets ---- */

void
match_init(struct match_set *s, unsigned flags)
{
    s->p = NULL;
    s->n = s->cap = 0;
    s->flags = flags;
}

/* truncate(s, n): drop the patterns of ${s} from the ${n}th on. */
static void
truncate_set(struct match_set *s, size_t n)
{
    while (s->n > n)
        free(s->p[--s->n]);
}

void
match_clear(struct match_set *s)
{
    if (s == NULL)
        return;
    truncate_set(s, 0);
    free(s->p);
    s->p = NULL;
    s->cap = 0;
}

static int
add_len(struct match_set *s, const char *pattern, size_t len)
{
    struct match_pattern *pat = NULL;
    int rc;

    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct match_pattern **p = cap > SIZE_MAX / sizeof(*p) ? NULL :
            realloc(s->p, cap * sizeof(*p));
        if (p == NULL)
            return error_set(PQV_E_NOMEM, NULL, NULL);
        s->p = p;
        s->cap = cap;
    }
    if ((rc = compile(s->flags, pattern, len, &pat)) != 0)
        return rc;
    s->p[s->n++] = pat;
    return 0;
}

int
match_add(struct match_set *s, const char *pattern)
{
    size_t len = strnlen(pattern, PQV_MATCH_LINE_MAX + 1);
    int rc = add_len(s, pattern, len);

    if (rc == PQV_E_INVAL)
        error_subject(rc, pattern);
    return rc;
}

/* trim_spaces(l, n): ${n} without the trailing spaces of the line ${l},
 * except one escaped by a backslash (git's trim_trailing_spaces). */
static size_t
trim_spaces(const char *l, size_t n)
{
    size_t keep = n, i;
    int in_spaces = 0;

    for (i = 0; i < n; i++) {
        if (l[i] == ' ') {
            if (!in_spaces) {
                keep = i;
                in_spaces = 1;
            }
            continue;
        }
        if (l[i] == '\\')
            i++;
        in_spaces = 0;
    }
    return in_spaces ? keep : n;
}

int
match_load_buf(struct match_set *s, const char *buf, size_t len, const char *subject)
{
    size_t before = s->n, line = 0, i = 0;
    const char *nul;
    int rc;

    if (len > PQV_MATCH_FILE_MAX)
        return error_set(PQV_E_INVAL, subject, "larger than %u bytes", PQV_MATCH_FILE_MAX);
    if ((nul = memchr(buf, '\0', len)) != NULL) {
        for (const char *q = buf; q < nul; q++)
            line += *q == '\n';
        return error_set(PQV_E_INVAL, subject, "line %zu: NUL byte", line + 1);
    }
    while (i < len) {
        const char *l = buf + i, *nl = memchr(l, '\n', len - i);
        size_t n = nl ? (size_t)(nl - l) : len - i;
        i += n + (nl != NULL);
        line++;
        if (n > 0 && l[n - 1] == '\r')
            n--;
        if (n > PQV_MATCH_LINE_MAX) {
            rc = error_set(PQV_E_INVAL, subject, "line %zu: longer than %u bytes", line,
                PQV_MATCH_LINE_MAX);
            goto fail;
        }
        if (n == 0 || l[0] == '#' || (n = trim_spaces(l, n)) == 0)
            continue;
        if ((rc = add_len(s, l, n)) != 0) {
            /* The line's length is checked: the pattern is empty ("!"). */
            if (rc == PQV_E_INVAL)
                error_set(rc, subject, "line %zu: empty pattern", line);
            goto fail;
        }
    }
    return 0;
fail:
    truncate_set(s, before);
    return rc;
}

int
match_load_file(struct match_set *s, const char *path)
{
    struct stat st;
    char *buf = NULL;
    ssize_t got;
    int fd, rc;

    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return error_errno(path, "open", errno);
    if (fstat(fd, &st) != 0) {
        rc = error_errno(path, "fstat", errno);
        goto done;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = error_set(PQV_E_INVAL, path, "is a directory");
        goto done;
    }
    if ((buf = malloc(PQV_MATCH_FILE_MAX + 1)) == NULL) {
        rc = error_set(PQV_E_NOMEM, path, NULL);
        goto done;
    }
    if ((got = fsutil_read_all(fd, buf, PQV_MATCH_FILE_MAX + 1, path)) < 0) {
        rc = (int)got;
        goto done;
    }
    rc = match_load_buf(s, buf, (size_t)got, path);
done:
    free(buf);
    close(fd);
    return rc;
}

static int
excluded_len(const struct match_set *s, const char *name, size_t n, int is_dir)
{
    for (size_t i = s->n; i-- > 0;)
        if (pattern_match(s->p[i], name, n, is_dir))
            return !(s->p[i]->flags & PAT_NEGATE);
    return 0;
}

int
match_excluded(const struct match_set *s, const char *name, int is_dir)
{
    return excluded_len(s, name, strlen(name), is_dir);
}

int
match_excluded_tree(const struct match_set *s, const char *name, int is_dir)
{
    size_t n = strlen(name);

    for (size_t i = 1; i < n; i++)
        if (name[i] == '/' && excluded_len(s, name, i, 1))
            return 1;
    return excluded_len(s, name, n, is_dir);
}

int
match_is_glob(const char *str)
{
    return strpbrk(str, "*?[") != NULL;
}

/* ---- the public handle ---- */

int
pqv_match_new(pqv_match **out, unsigned flags)
{
    pqv_match *m;

    if (out == NULL || (flags & ~PQV_MATCH_ANCHORED) != 0)
        return error_set(PQV_E_INVAL, NULL, "unknown flags");
    if ((m = malloc(sizeof(*m))) == NULL)
        return error_set(PQV_E_NOMEM, NULL, NULL);
    match_init(&m->set, flags);
    *out = m;
    return 0;
}

int
pqv_match_add(pqv_match *m, const char *pattern)
{
    if (m == NULL || pattern == NULL)
        return error_set(PQV_E_INVAL, NULL, NULL);
    return match_add(&m->set, pattern);
}

int
pqv_match_load_file(pqv_match *m, const char *path)
{
    if (m == NULL || path == NULL)
        return error_set(PQV_E_INVAL, NULL, NULL);
    return match_load_file(&m->set, path);
}

int
pqv_match_test(const pqv_match *m, const char *name, int is_dir)
{
    return m != NULL && name != NULL && match_excluded(&m->set, name, is_dir);
}

int
pqv_match_is_glob(const char *s)
{
    return s != NULL && match_is_glob(s);
}

void
pqv_match_free(pqv_match *m)
{
    if (m == NULL)
        return;
    match_clear(&m->set);
    free(m);
}
