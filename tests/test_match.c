/*
 * test_match.c: the gitignore-style matcher (src/util/match.c).  The table
 * holds (patterns, name, is_dir, expected) as git check-ignore answers
 * them (nothing below an excluded directory is re-included: the table asks
 * match_excluded_tree); the cases marked "not git" are where this matcher
 * chose otherwise (match.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pqvault/match.h"
#include "util/match.h"

struct mcase {
    const char *patterns;   /* the lines of a pattern file */
    const char *name;
    int is_dir;
    int want;
};

static const struct mcase cases[] = {
    /* A pattern without a slash matches the last component at any depth. */
    { "foo", "foo", 0, 1 },
    { "foo", "a/foo", 0, 1 },
    { "foo", "a/b/foo", 1, 1 },
    { "foo", "foobar", 0, 0 },
    { "foo", "afoo", 0, 0 },
    { "foo", "foo/bar", 0, 1 },          /* below an excluded directory */
    { "foo", "Foo", 0, 0 },              /* case matters */
    /* A leading or middle slash anchors it. */
    { "/foo", "foo", 0, 1 },
    { "/foo", "a/foo", 0, 0 },
    { "a/b", "a/b", 0, 1 },
    { "a/b", "x/a/b", 0, 0 },
    { "a/b", "a/b/c", 0, 1 },
    { "*/b", "a/b", 0, 1 },
    { "*/b", "x/a/b", 0, 0 },
    { "a/*/b", "a/x/b", 0, 1 },
    { "a/*/b", "a/x/y/b", 0, 0 },
    { "a/*/b", "a/b", 0, 0 },
    { "d/*.c", "d/x.c", 0, 1 },
    { "d/*.c", "d/e/x.c", 0, 0 },
    { "d/*.c", "x/d/y.c", 0, 0 },
    { "doc/frotz/", "doc/frotz", 1, 1 },
    { "doc/frotz/", "a/doc/frotz", 1, 0 },
    { "frotz/", "a/frotz", 1, 1 },
    { "/.*", ".x", 0, 1 },
    { "/.*", "d/.x", 0, 0 },
    /* A trailing slash: directories only (and what is below them). */
    { "foo/", "foo", 1, 1 },
    { "foo/", "foo", 0, 0 },
    { "foo/", "a/foo", 1, 1 },
    { "foo/", "foo/x", 0, 1 },
    { "build/", "src/build/x", 0, 1 },
    { "build/", "src/build", 0, 0 },
    { "a/b/", "a/b", 1, 1 },
    { "a/b/", "a/b", 0, 0 },
    /* *, ? within one component. */
    { "*.txt", "a.txt", 0, 1 },
    { "*.txt", "d/a.txt", 0, 1 },
    { "*.txt", ".txt", 0, 1 },
    { "*.txt", "a.txt.bak", 0, 0 },
    { "*.txt", "a/b.TXT", 0, 0 },
    { "*", "anything", 0, 1 },
    { "*", ".hidden", 0, 1 },
    { "*", "d/e/f", 0, 1 },
    { "?", "a", 0, 1 },
    { "?", "ab", 0, 0 },
    { "?", "a/bc", 0, 1 },
    { "a?c", "abc", 0, 1 },
    { "a?c", "a/c", 0, 0 },
    { "a*c", "abbc", 0, 1 },
    { "a*c", "a/c", 0, 0 },
    { "a*c", "ac", 0, 1 },
    { "a*b*c", "aXbYbZc", 0, 1 },
    { "a*b*c", "aXbYbZ", 0, 0 },
    { "a**b", "axxb", 0, 1 },           /* stars inside a component: one star */
    { "a**b", "ax/xb", 0, 0 },
    { "*a", "b/ba", 0, 1 },
    /* ** as a whole component. */
    { "**/foo", "foo", 0, 1 },
    { "**/foo", "a/foo", 0, 1 },
    { "**/foo", "a/b/foo", 0, 1 },
    { "**/foo", "a/foox", 0, 0 },
    { "**/foo/bar", "foo/bar", 0, 1 },
    { "**/foo/bar", "x/y/foo/bar", 0, 1 },
    { "**/foo/bar", "foo/x/bar", 0, 0 },
    { "a/**", "a", 1, 0 },               /* one or more below a */
    { "a/**", "a/x", 0, 1 },
    { "a/**", "a/x/y", 0, 1 },
    { "a/**", "b/a/x", 0, 0 },
    { "a/**/b", "a/b", 0, 1 },
    { "a/**/b", "a/x/b", 0, 1 },
    { "a/**/b", "a/x/y/b", 0, 1 },
    { "a/**/b", "a/xb", 0, 0 },
    { "a/**/b", "ab", 0, 0 },
    { "a/**/b", "x/a/b", 0, 0 },
    { "a/**/**/b", "a/b", 0, 1 },
    { "a/**/x/**/b", "a/1/x/2/3/b", 0, 1 },
    { "a/**/x/**/b", "a/1/y/2/3/b", 0, 0 },
    { "**", "x", 0, 1 },
    { "**", "x/y/z", 1, 1 },
    { "/**", "x/y", 0, 1 },
    { "***", "x/y", 0, 1 },
    { "***/x", "a/b/x", 0, 1 },
    { "/**/x", "x", 0, 1 },
    { "/**/x", "a/x", 0, 1 },
    { "a/**/", "a/x", 1, 1 },
    { "a/**/", "a/x", 0, 0 },
    { "a/**/", "a/x/y", 0, 1 },
    { "**/", "x", 1, 1 },
    { "**/", "x", 0, 0 },
    { "**/", "d/f", 0, 1 },
    { "a/**/**", "a", 1, 0 },
    { "a/**/**", "a/x", 0, 1 },
    /* ! re-includes; the last matching pattern wins. */
    { "*.log\n!keep.log", "a.log", 0, 1 },
    { "*.log\n!keep.log", "keep.log", 0, 0 },
    { "*.log\n!keep.log", "d/keep.log", 0, 0 },
    { "!keep.log\n*.log", "keep.log", 0, 1 },
    { "d/\n!d/f", "d/f", 0, 1 },         /* not below an excluded directory */
    { "d/\n!d/f", "d", 1, 1 },
    { "d/*\n!d/f", "d/f", 0, 0 },
    { "d/*\n!d/f", "d/g", 0, 1 },
    { "d/*\n!d/f", "d", 1, 0 },
    { "/*\n!/foo\n/foo/*\n!/foo/bar", "foo/bar", 0, 0 },
    { "/*\n!/foo\n/foo/*\n!/foo/bar", "foo/baz", 0, 1 },
    { "/*\n!/foo\n/foo/*\n!/foo/bar", "x", 0, 1 },
    { "/*\n!/foo\n/foo/*\n!/foo/bar", "foo", 1, 0 },
    { "/*\n!/foo\n/foo/*\n!/foo/bar", "foo/bar/deep", 0, 0 },
    { "a/**\n!a/keep", "a/keep", 0, 0 },
    { "a/**\n!a/keep", "a/other", 0, 1 },
    { "*\n!*/\n!*.c", "d/e/x.c", 0, 0 },
    { "*\n!*/\n!*.c", "d/e/x.h", 0, 1 },
    { "*\n!*/\n!*.c", "d/e", 1, 0 },
    /* Escapes. */
    { "\\!important", "!important", 0, 1 },
    { "\\!important", "important", 0, 0 },
    { "\\#x", "#x", 0, 1 },
    { "\\*", "*", 0, 1 },
    { "\\*", "a", 0, 0 },
    { "x\\?", "x?", 0, 1 },
    { "x\\?", "xa", 0, 0 },
    { "\\a", "a", 0, 1 },
    { "\\[a]", "[a]", 0, 1 },
    { "\\[a]", "a", 0, 0 },
    { "a\\/b", "a/b", 0, 1 },            /* an escaped slash still separates */
    { "foo\\", "foo", 0, 0 },            /* a trailing backslash: never matches */
    { "foo\\", "foo\\", 0, 0 },
    /* Comments, blank lines, trailing spaces, CR LF. */
    { "#foo", "#foo", 0, 0 },
    { "#foo", "foo", 0, 0 },
    { "\n\nfoo\n\n", "foo", 0, 1 },
    { "   \nfoo", "foo", 0, 1 },
    { "foo   ", "foo", 0, 1 },
    { "foo   ", "foo ", 0, 0 },
    { "foo\\ ", "foo ", 0, 1 },
    { "foo\\ ", "foo", 0, 0 },
    { "foo\\  ", "foo ", 0, 1 },
    { "foo \\ ", "foo  ", 0, 1 },
    { " foo", " foo", 0, 1 },            /* leading spaces are kept */
    { "foo\r\nbar\r\n", "foo", 0, 1 },
    { "foo\r\nbar\r\n", "bar", 0, 1 },
    { "foo\nbar", "bar", 0, 1 },          /* no newline at the end */
    /* Bracket expressions. */
    { "[abc]", "a", 0, 1 },
    { "[abc]", "d", 0, 0 },
    { "[!abc]", "d", 0, 1 },
    { "[!abc]", "a", 0, 0 },
    { "[^abc]", "d", 0, 1 },
    { "[^abc]", "b", 0, 0 },
    { "[a-c]x", "bx", 0, 1 },
    { "[a-c]x", "dx", 0, 0 },
    { "[a-cx-z]", "y", 0, 1 },
    { "[a-cx-z]", "m", 0, 0 },
    { "[]a]", "]", 0, 1 },
    { "[]a]", "a", 0, 1 },
    { "[]a]", "b", 0, 0 },
    { "[!]]", "a", 0, 1 },
    { "[!]]", "]", 0, 0 },
    { "[a-]", "-", 0, 1 },
    { "[a-]", "a", 0, 1 },
    { "[a-]", "b", 0, 0 },
    { "[-a]", "-", 0, 1 },
    { "[\\]]", "]", 0, 1 },
    { "[a\\-c]", "-", 0, 1 },
    { "[a\\-c]", "b", 0, 0 },
    { "[z-a]", "m", 0, 0 },
    { "[z-a]", "z", 0, 1 },              /* as git: the low end is a member */
    { "[z-a]", "a", 0, 0 },
    { "[[:digit:]]*", "1a", 0, 1 },
    { "[[:digit:]]*", "a1", 0, 0 },
    { "[[:upper:]]", "A", 0, 1 },
    { "[[:upper:]]", "a", 0, 0 },
    { "[[:alpha:][:digit:]]", "a", 0, 1 },
    { "[[:alpha:][:digit:]]", "7", 0, 1 },
    { "[[:alpha:][:digit:]]", "-", 0, 0 },
    { "[![:space:]]", "x", 0, 1 },
    { "[[:xdigit:]][[:punct:]]", "f.", 0, 1 },
    { "[[]a]", "[a]", 0, 1 },
    { "[.]h", ".h", 0, 1 },
    { "[*]", "*", 0, 1 },
    { "[*]", "a", 0, 0 },
    { "[?]", "?", 0, 1 },
    { "[?]", "a", 0, 0 },
    { "\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9", 0, 1 },    /* bytes, not characters */
    { "[\xc3]?t*", "\xc3\xa9t\xc3\xa9", 0, 1 },
    { "[\x80-\xff]*", "\xff", 0, 1 },
    /* An unterminated "[" is an ordinary character (not git: it never matches). */
    { "a[b", "a[b", 0, 1 },
    { "a[b", "ab", 0, 0 },
    { "[", "[", 0, 1 },
    { "a[!", "a[!", 0, 1 },
    { "[]", "[]", 0, 1 },
    { "x[a-", "x[a-", 0, 1 },
    { "[a\\", "[a\\", 0, 0 },             /* and a trailing backslash matches nothing */
    /* An unknown class name is no class (not git: it never matches). */
    { "[[:foo:]]", "f]", 0, 1 },
    { "[[:foo:]]", "x", 0, 0 },
    /* A slash separates components, also inside brackets (not git: there
     * "[a/b]" is a one-component pattern anchored to the root). */
    { "[a/b]", "[a/b]", 0, 1 },
    { "[a/b]", "a", 0, 0 },
    /* Several patterns, several depths. */
    { "*.o\n*.a\n/build/\ntmp*\n!tmp.keep", "src/x.o", 0, 1 },
    { "*.o\n*.a\n/build/\ntmp*\n!tmp.keep", "src/x.c", 0, 0 },
    { "*.o\n*.a\n/build/\ntmp*\n!tmp.keep", "build/x.c", 0, 1 },
    { "*.o\n*.a\n/build/\ntmp*\n!tmp.keep", "src/build/x.c", 0, 0 },
    { "*.o\n*.a\n/build/\ntmp*\n!tmp.keep", "a/tmp.keep", 0, 0 },
    { "*.o\n*.a\n/build/\ntmp*\n!tmp.keep", "a/tmp1", 1, 1 },
    { "*.o\n*.a\n/build/\ntmp*\n!tmp.keep", "a/tmp1/tmp.keep", 0, 1 },
};

static void
test_table(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct mcase *c = &cases[i];
        struct match_set s;
        match_init(&s, 0);
        int rc = match_load_buf(&s, c->patterns, strlen(c->patterns), "table");
        int got = rc == 0 ? match_excluded_tree(&s, c->name, c->is_dir) : -1;
        if (got != c->want) {
            fprintf(stderr, "  case %zu: patterns \"%s\", %s \"%s\": got %d, expected %d\n", i,
                c->patterns, c->is_dir ? "directory" : "file", c->name, got, c->want);
            bad++;
        }
        match_clear(&s);
    }
    CHECK_EQ_INT(bad, 0);
}

/* match_excluded tests the name alone; the walker prunes. */
static void
test_name_alone(void)
{
    struct match_set s;
    match_init(&s, 0);
    REQUIRE(match_add(&s, "d/") == 0);
    CHECK_EQ_INT(match_excluded(&s, "d", 1), 1);
    CHECK_EQ_INT(match_excluded(&s, "d/f", 0), 0);
    CHECK_EQ_INT(match_excluded_tree(&s, "d/f", 0), 1);
    CHECK_EQ_INT(match_excluded_tree(&s, "x/d/f", 0), 1);
    CHECK_EQ_INT(match_excluded_tree(&s, "x/y/f", 0), 0);
    /* match_add takes a pattern as is: "#" is no comment there, spaces stay. */
    REQUIRE(match_add(&s, "#x") == 0);
    REQUIRE(match_add(&s, "sp ") == 0);
    CHECK_EQ_INT(match_excluded(&s, "#x", 0), 1);
    CHECK_EQ_INT(match_excluded(&s, "sp ", 0), 1);
    CHECK_EQ_INT(match_excluded(&s, "sp", 0), 0);
    CHECK_EQ_INT(s.n, 3);
    match_clear(&s);
    CHECK_EQ_INT(s.n, 0);
    match_clear(&s);                 /* twice is fine */
    CHECK_EQ_INT(match_excluded(&s, "d", 1), 0);   /* an empty set excludes nothing */
}

/* PQV_MATCH_ANCHORED: whole names from the root, as list's globs. */
static void
test_anchored(void)
{
    static const struct {
        const char *pattern, *name;
        int is_dir, want;
    } a[] = {
        { "*.pdf", "a.pdf", 0, 1 },
        { "*.pdf", "d/a.pdf", 0, 0 },
        { "docs/*.pdf", "docs/x.pdf", 0, 1 },
        { "docs/*.pdf", "docs/sub/x.pdf", 0, 0 },
        { "docs/*.pdf", "x/docs/x.pdf", 0, 0 },
        { "**/*.jpg", "a.jpg", 0, 1 },
        { "**/*.jpg", "x/y/a.jpg", 0, 1 },
        { "!x", "!x", 0, 1 },          /* "!" is an ordinary character */
        { "!x", "x", 0, 0 },
        { "d*/", "dir", 1, 1 },
        { "d*/", "dir", 0, 0 },
        { "/d?", "dx", 0, 1 },
        { "d/**", "d/x/y", 0, 1 },
        { "d/**", "d", 1, 0 },
    };
    for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
        struct match_set s;
        match_init(&s, PQV_MATCH_ANCHORED);
        REQUIRE(match_add(&s, a[i].pattern) == 0);
        if (match_excluded(&s, a[i].name, a[i].is_dir) != a[i].want) {
            fprintf(stderr, "  anchored %zu: \"%s\" vs \"%s\": expected %d\n", i,
                a[i].pattern, a[i].name, a[i].want);
            harness_failures++;
        }
        match_clear(&s);
    }
}

static void
test_bad_patterns(void)
{
    struct match_set s;
    static const char *bad[] = { "", "!", "/", "!/", "//", "!//" };
    char *big = malloc(PQV_MATCH_LINE_MAX + 2);
    REQUIRE(big != NULL);
    match_init(&s, 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        pqv_error_clear();
        CHECK_EQ_INT(match_add(&s, bad[i]), PQV_E_INVAL);
        CHECK_EQ_INT(pqv_error_last()->code, PQV_E_INVAL);
    }
    CHECK_EQ_INT(s.n, 0);
    /* "///": an empty component, which no name has: valid, matches nothing. */
    CHECK_EQ_INT(match_add(&s, "///"), 0);
    CHECK_EQ_INT(match_excluded(&s, "a", 1), 0);
    memset(big, 'a', PQV_MATCH_LINE_MAX + 1);
    big[PQV_MATCH_LINE_MAX + 1] = '\0';
    CHECK_EQ_INT(match_add(&s, big), PQV_E_INVAL);
    big[PQV_MATCH_LINE_MAX] = '\0';
    CHECK_EQ_INT(match_add(&s, big), 0);
    CHECK_EQ_INT(match_excluded(&s, big, 0), 1);
    big[0] = 'b';
    CHECK_EQ_INT(match_excluded(&s, big, 0), 0);
    match_clear(&s);
    free(big);
}

static void
test_load_buf_limits(void)
{
    struct match_set s;
    size_t max = PQV_MATCH_FILE_MAX;
    char *buf = malloc(max + 1);
    REQUIRE(buf != NULL);
    match_init(&s, 0);
    REQUIRE(match_add(&s, "first") == 0);

    /* A NUL byte, on line 2: refused, the set unchanged. */
    pqv_error_clear();
    CHECK_EQ_INT(match_load_buf(&s, "a\nb\0c\n", 6, "f"), PQV_E_INVAL);
    CHECK_EQ_INT(pqv_error_last()->code, PQV_E_INVAL);
    CHECK(strcmp(pqv_error_last()->subject, "f") == 0);
    CHECK_EQ_INT(s.n, 1);
    /* A "!" line after good ones: refused, the good ones dropped again. */
    CHECK_EQ_INT(match_load_buf(&s, "a\nb\n!\n", 6, "f"), PQV_E_INVAL);
    CHECK_EQ_INT(s.n, 1);
    CHECK_EQ_INT(match_excluded(&s, "a", 0), 0);

    /* Lines: 4096 bytes (and a CR) accepted, 4097 refused. */
    memset(buf, 'x', PQV_MATCH_LINE_MAX + 1);
    buf[PQV_MATCH_LINE_MAX] = '\r';
    CHECK_EQ_INT(match_load_buf(&s, buf, PQV_MATCH_LINE_MAX + 1, "f"), 0);
    CHECK_EQ_INT(s.n, 2);
    buf[PQV_MATCH_LINE_MAX] = 'x';
    CHECK_EQ_INT(match_load_buf(&s, buf, PQV_MATCH_LINE_MAX + 1, "f"), PQV_E_INVAL);
    CHECK_EQ_INT(s.n, 2);

    /* The file: 1 MiB of comments and patterns accepted, one byte more refused. */
    for (size_t i = 0; i < max; i++)
        buf[i] = (i % 64 == 63) ? '\n' : (i % 2048 < 64 ? 'p' : '#');
    CHECK_EQ_INT(match_load_buf(&s, buf, max, "f"), 0);
    CHECK(s.n > 2);
    size_t n = s.n;
    buf[max] = 'p';
    CHECK_EQ_INT(match_load_buf(&s, buf, max + 1, "f"), PQV_E_INVAL);
    CHECK_EQ_INT(s.n, n);
    /* Comments, blank lines and lines of spaces add nothing. */
    static const char blank[] = "# x\n\n   \n\r\n#!y\n";
    CHECK_EQ_INT(match_load_buf(&s, blank, strlen(blank), "f"), 0);
    CHECK_EQ_INT(s.n, n);
    match_clear(&s);
    free(buf);
}

static void
test_load_file(void)
{
    char dir[] = "/tmp/test_match.XXXXXX", path[64];
    struct match_set s;
    FILE *f;
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/ex", dir);
    REQUIRE((f = fopen(path, "w")) != NULL);
    fputs("# build output\n*.o\n/build/\n\n!keep.o\n", f);
    fclose(f);
    match_init(&s, 0);
    CHECK_EQ_INT(match_load_file(&s, path), 0);
    CHECK_EQ_INT(s.n, 3);
    CHECK_EQ_INT(match_excluded(&s, "src/a.o", 0), 1);
    CHECK_EQ_INT(match_excluded(&s, "src/keep.o", 0), 0);
    CHECK_EQ_INT(match_excluded(&s, "build", 1), 1);
    CHECK_EQ_INT(match_excluded(&s, "src/build", 1), 0);
    pqv_error_clear();
    CHECK_EQ_INT(match_load_file(&s, dir), PQV_E_INVAL);
    CHECK(strcmp(pqv_error_last()->subject, dir) == 0);
    snprintf(path, sizeof(path), "%s/missing", dir);
    CHECK_EQ_INT(match_load_file(&s, path), PQV_E_NOTFOUND);
    CHECK_EQ_INT(match_load_file(&s, "/dev/null"), 0);
    CHECK_EQ_INT(s.n, 3);
    match_clear(&s);
    snprintf(path, sizeof(path), "%s/ex", dir);
    unlink(path);
    rmdir(dir);
}

/* The public handle. */
static void
test_public(void)
{
    pqv_match *m = NULL;
    CHECK_EQ_INT(pqv_match_new(&m, 2), PQV_E_INVAL);
    CHECK_EQ_INT(pqv_match_new(NULL, 0), PQV_E_INVAL);
    REQUIRE(pqv_match_new(&m, 0) == 0);
    CHECK_EQ_INT(pqv_match_test(m, "x", 0), 0);
    CHECK_EQ_INT(pqv_match_add(m, "x*"), 0);
    CHECK_EQ_INT(pqv_match_add(m, NULL), PQV_E_INVAL);
    CHECK_EQ_INT(pqv_match_add(NULL, "x"), PQV_E_INVAL);
    CHECK_EQ_INT(pqv_match_add(m, "!"), PQV_E_INVAL);
    CHECK_EQ_INT(pqv_match_test(m, "d/xy", 0), 1);
    CHECK_EQ_INT(pqv_match_test(m, NULL, 0), 0);
    CHECK_EQ_INT(pqv_match_test(NULL, "x", 0), 0);
    CHECK_EQ_INT(pqv_match_load_file(m, "/nonexistent/x"), PQV_E_NOTFOUND);
    pqv_match_free(m);
    pqv_match_free(NULL);
    REQUIRE(pqv_match_new(&m, PQV_MATCH_ANCHORED) == 0);
    CHECK_EQ_INT(pqv_match_add(m, "x*"), 0);
    CHECK_EQ_INT(pqv_match_test(m, "d/xy", 0), 0);
    CHECK_EQ_INT(pqv_match_test(m, "xy", 0), 1);
    pqv_match_free(m);
    CHECK(pqv_match_is_glob("a*"));
    CHECK(pqv_match_is_glob("a?"));
    CHECK(pqv_match_is_glob("a[b"));
    CHECK(!pqv_match_is_glob("a\\b"));
    CHECK(!pqv_match_is_glob("docs/x.pdf"));
    CHECK(!pqv_match_is_glob(NULL));
}

/* Hostile shapes finish: matching is polynomial, never exponential.  (No
 * timing is asserted: a blow-up would make the test run for hours.) */
static void
test_no_blowup(void)
{
    struct match_set s;
    char *name = malloc(8192), *pat = malloc(PQV_MATCH_LINE_MAX + 1);
    REQUIRE(name != NULL && pat != NULL);
    match_init(&s, 0);
    /* Many stars in one component against a long component. */
    size_t k = 0;
    for (int i = 0; i < 1000; i++) {
        pat[k++] = '*';
        pat[k++] = 'a';
    }
    pat[k++] = 'b';
    pat[k] = '\0';
    REQUIRE(match_add(&s, pat) == 0);
    memset(name, 'a', 4000);
    name[4000] = '\0';
    CHECK_EQ_INT(match_excluded(&s, name, 0), 0);
    match_clear(&s);
    /* Many "**" components against a deep name: 800 "a" then "b". */
    k = 0;
    for (int i = 0; i < 800; i++) {
        memcpy(pat + k, "**/a/", 5);
        k += 5;
    }
    pat[k++] = 'b';
    pat[k] = '\0';
    REQUIRE(match_add(&s, pat) == 0);
    for (int i = 0; i < 4000; i++)
        name[i] = i % 2 ? '/' : 'a';
    name[3999] = '\0';                      /* 2000 "a" */
    CHECK_EQ_INT(match_excluded_tree(&s, name, 0), 0);
    name[3998] = 'b';                       /* 1999 "a", "b" */
    CHECK_EQ_INT(match_excluded_tree(&s, name, 0), 1);
    CHECK_EQ_INT(match_excluded(&s, name + 2400, 0), 0);   /* 799 "a", "b" */
    match_clear(&s);
    REQUIRE(match_add(&s, "**/a/**/a/**/b") == 0);
    CHECK_EQ_INT(match_excluded(&s, name, 0), 1);
    match_clear(&s);
    free(name);
    free(pat);
}

TEST_MAIN(test_table, test_name_alone, test_anchored, test_bad_patterns, test_load_buf_limits,
    test_load_file, test_public, test_no_blowup)
