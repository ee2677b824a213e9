/*
 * src/cli/output.c: formatting of modes, times, sizes and JSON strings.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

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

void
print_name(FILE *f, const char *name, int escape)
{
    /* On a terminal, a name must not drive it (escape sequences, carriage
     * returns): control characters and backslashes are shown escaped, as
     * ls does on a terminal; a pipe gets the name as stored. */
    if (!escape) {
        fputs(name, f);
        return;
    }
    for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
        switch (*s) {
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*s < 0x20 || *s == 0x7f)
                fprintf(f, "\\%03o", *s);
            else
                putc(*s, f);
        }
    }
}
