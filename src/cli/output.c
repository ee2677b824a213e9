/*
 * src/cli/output.c: formatting of modes, times, sizes and JSON strings.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void
format_mode(char out[11], int type, uint32_t mode)
{
    static const char rwx[] = "rwxrwxrwx";
    out[0] = pqv_entry_type_letter(type);
    for (int i = 0; i < 9; i++)
        out[1 + i] = (mode & (0400u >> i)) ? rwx[i] : '-';
    if (mode & 04000)
        out[3] = (mode & 0100) ? 's' : 'S';
    if (mode & 02000)
        out[6] = (mode & 0010) ? 's' : 'S';
    if (mode & 01000)
        out[9] = (mode & 0001) ? 't' : 'T';
    out[10] = '\0';
}

void
format_local_time(char *out, size_t outlen, int64_t sec, const char *fmt)
{
    time_t t = (time_t)sec;
    struct tm tm;
    if (!localtime_r(&t, &tm) || strftime(out, outlen, fmt, &tm) == 0)
        snprintf(out, outlen, "%lld", (long long)sec);
}

void
format_utc_rfc3339(char *out, size_t outlen, int64_t sec, uint32_t nsec)
{
    time_t t = (time_t)sec;
    struct tm tm;
    char base[64];
    if (!gmtime_r(&t, &tm) || strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        snprintf(base, sizeof(base), "1970-01-01T00:00:00");
    snprintf(out, outlen, "%s.%09uZ", base, (unsigned)(nsec % 1000000000u));
}

void
format_bytes(char *out, size_t outlen, uint64_t n)
{
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(out, outlen, "%llu B", (unsigned long long)n);
    else
        snprintf(out, outlen, "%.1f %s", v, units[u]);
}

void
format_count(char out[32], uint64_t n)
{
    char digits[24];
    int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n), k = 0;

    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[k++] = ',';
        out[k++] = digits[i];
    }
    out[k] = '\0';
}

void
format_size_human(char *out, size_t outlen, uint64_t n)
{
    static const char units[] = "KMGTPE";

    if (n < 1024) {
        snprintf(out, outlen, "%llu", (unsigned long long)n);
        return;
    }
    /* As ls -lh and du -h: rounded up, one decimal below 10. */
    for (int k = 1; k <= 6; k++) {
        uint64_t base = 1ull << (10 * k), whole = n / base, rest = n % base;
        if (whole >= 1024 && k < 6)
            continue;
        if (whole < 10) {
            uint64_t tenths = whole * 10 + (rest * 10 + base - 1) / base;
            if (tenths < 100) {
                snprintf(out, outlen, "%llu.%llu%c", (unsigned long long)(tenths / 10),
                    (unsigned long long)(tenths % 10), units[k - 1]);
                return;
            }
            whole = 10;
        } else if (rest != 0) {
            whole++;
        }
        if (whole >= 1024 && k < 6)
            continue;
        snprintf(out, outlen, "%llu%c", (unsigned long long)whole, units[k - 1]);
        return;
    }
}

/* Length of the valid UTF-8 sequence at ${s}, or 0 (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF). */
static int
utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
            (s[3] & 0xc0) == 0x80 ? 4 : 0;
    }
    return 0;
}

void
json_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', f);
    while (*s) {
        unsigned char c = *s;
        if (c == '"' || c == '\\') {
            putc('\\', f);
            putc(c, f);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\r': fputs("\\r", f); break;
            case '\t': fputs("\\t", f); break;
            case '\b': fputs("\\b", f); break;
            case '\f': fputs("\\f", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
            s++;
        } else {
            int n = utf8_len(s);
            if (n == 0) {
                /* An invalid byte: a lone low surrogate U+DC80..U+DCFF, as
                 * Python's "surrogateescape" (lossless, never valid text). */
                fprintf(f, "\\udc%02x", c);
                s++;
            } else {
                fwrite(s, 1, (size_t)n, f);
                s += n;
            }
        }
    }
    putc('"', f);
}

/* shell_special(s, at_start): whether the character ${c} makes a shell
 * read the name otherwise than as written (GNU ls's list for its
 * shell-escape quoting): '#' and '~' only at the start. */
static int
shell_special(unsigned char c, int at_start)
{
    if (c == '#' || c == '~')
        return at_start;
    return c != '\0' && strchr(" !\"$&'()*;<=>?[\\^`|", c) != NULL;
}

/* escaped_len(s): the length of the unit at ${s} that a terminal must not
 * get raw (a C0 or C1 control, DEL, a byte that is not UTF-8, or a
 * character that reorders or breaks the line: the bidirectional
 * embeddings, overrides and isolates, U+2028, U+2029), else 0. */
static int
escaped_len(const unsigned char *s)
{
    int n = utf8_len(s);
    if (n == 0 || s[0] < 0x20 || s[0] == 0x7f)
        return 1;
    if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
        return 2;   /* U+0080..U+009F */
    if (n == 3 && s[0] == 0xe2 && ((s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9 ||
        (s[2] >= 0xaa && s[2] <= 0xae))) || (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)))
        return 3;   /* U+2028, U+2029, U+202A..U+202E, U+2066..U+2069 */
    return 0;
}

/* put_escape(f, c): byte ${c} inside $'...': by name where the shell has
 * one, else three octal digits. */
static void
put_escape(FILE *f, unsigned char c)
{
    static const char names[] = "abtnvfr";
    if (c >= 7 && c <= 13)
        fprintf(f, "\\%c", names[c - 7]);
    else
        fprintf(f, "\\%03o", c);
}

void
print_name(FILE *f, const char *name, int escape)
{
    const unsigned char *s = (const unsigned char *)name;
    int special = 0, control = 0, squote = 0, dq_unsafe = 0;

    /* A pipe gets the name as stored; --json escapes it its own way. */
    if (!escape) {
        fputs(name, f);
        return;
    }
    /* On a terminal a name must not drive it (escape sequences, carriage
     * returns), and should read back into a shell: GNU ls's default
     * shell-escape style.  Nothing to quote: as is.  Shell characters
     * only: in single quotes ('a b'), or double quotes for a name whose
     * only trouble is a single quote ("it's"); a ' inside single quotes
     * is '\''.  Controls and bytes that are not UTF-8: each run as $'\n',
     * $'\033', $'\377' between the quoted parts ('a'$'\n''b'). */
    for (size_t i = 0; s[i]; i++) {
        int e = escaped_len(s + i);
        if (e > 0) {
            control = 1;
            i += (size_t)e - 1;
            continue;
        }
        int n = utf8_len(s + i);
        if (n > 1) {
            i += (size_t)n - 1;   /* printable beyond ASCII: as is */
            continue;
        }
        if (shell_special(s[i], i == 0))
            special = 1;
        if (s[i] == '\'')
            squote = 1;
        if (strchr("\"$`\\!", s[i]) != NULL)
            dq_unsafe = 1;
    }
    if ((s[0] == '{' || s[0] == '}') && s[1] == '\0')
        special = 1;   /* alone, a brace is a shell word of its own */
    if (!special && !control) {
        fputs(name, f);
        return;
    }
    if (!control && squote && !dq_unsafe) {
        fprintf(f, "\"%s\"", name);
        return;
    }
    int quoted = 1, dollar = 0;
    putc('\'', f);
    while (*s) {
        int e = escaped_len(s);
        if (e > 0) {
            if (quoted) {
                putc('\'', f);
                quoted = 0;
            }
            if (!dollar) {
                fputs("$'", f);
                dollar = 1;
            }
            for (int k = 0; k < e; k++)
                put_escape(f, s[k]);
            s += e;
            continue;
        }
        if (dollar) {
            putc('\'', f);
            dollar = 0;
        }
        if (!quoted) {
            putc('\'', f);
            quoted = 1;
        }
        int n = utf8_len(s);
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fwrite(s, 1, (size_t)n, f);
        s += n;
    }
    if (dollar || quoted)
        putc('\'', f);
}

int
private_stdout(const char *what)
{
    struct stat st;

    if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode))
        return EXIT_OK;
    if (st.st_uid != geteuid()) {
        err_msg("standard output is a file of another user (uid %lu): it would hold %s; write "
            "it to a file of your own", (unsigned long)st.st_uid, what);
        return EXIT_ERR;
    }
    if ((st.st_mode & 077) != 0 &&
        (fchmod(STDOUT_FILENO, st.st_mode & 0700) != 0 ||
            fstat(STDOUT_FILENO, &st) != 0 || (st.st_mode & 077) != 0)) {
        err_msg("standard output is a file others can read (mode %04o) and cannot be made "
            "private: it would hold %s; write it to a file of mode 0600",
            (unsigned)(st.st_mode & 07777), what);
        return EXIT_ERR;
    }
    return EXIT_OK;
}
