/*
 * src/cli/recovery_code.c: what is wrong with a recovery code as typed, in
 * words a person can act on: which group (or character) is not in the
 * alphabet, which group is too short or long, or that the checksum does
 * not match.  The rules are the decoder's (docs/FORMAT.md section 5,
 * pqv_recovery_decode): '-', space, tab, CR and LF are skipped anywhere,
 * case is ignored, O reads as 0 and I, L as 1; 56 symbols in all.
 *
 * The code is a secret: a character's validity is computed without a
 * branch or a table indexed by it, and only the verdicts this file reports
 * (a group or character is bad) steer the control flow.  The separators'
 * positions are not secret (the decoder branches on them too).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "pqvault/recovery.h"

#define GROUP_SYMBOLS 4

/* in_range(c, lo, hi): 1 if lo <= c <= hi, else 0; no branch. */
static uint32_t
in_range(uint32_t c, uint32_t lo, uint32_t hi)
{
    /* Both differences are non-negative exactly in range: the sign bit of
     * their OR is clear then. */
    return (~((c - lo) | (hi - c)) >> 31) & 1;
}

/* symbol_ok(c): 1 if the decoder reads ${c} as a symbol: a digit or a
 * letter but U, either case (I, L and O are read as 1 and 0). */
static uint32_t
symbol_ok(unsigned char ch)
{
    uint32_t c = ch;
    uint32_t upper = c - (in_range(c, 'a', 'z') << 5);
    uint32_t is_u = 1 ^ (((upper ^ 'U') | (0u - (upper ^ 'U'))) >> 31);
    return in_range(c, '0', '9') | (in_range(upper, 'A', 'Z') & (1 ^ is_u));
}

static int
is_separator(char c)
{
    return c == '-' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* show_char(out, n, c): ${c} for a message: 'U', or a byte's value. */
static void
show_char(char *out, size_t n, unsigned char c)
{
    if (c > 0x20 && c < 0x7f)
        snprintf(out, n, "'%c'", c);
    else
        snprintf(out, n, "byte 0x%02x", c);
}

/* group_text(out, n, s, len, show): " (ABCD)" when ${show}, else "". */
static void
group_text(char *out, size_t n, const char *s, size_t len, int show)
{
    if (show && len < n - 3)
        snprintf(out, n, " (%.*s)", (int)len, s);
    else
        out[0] = '\0';
}

int
recovery_code_problem(const char *code, char *why, size_t n, int show_group)
{
    static const char alphabet_note[] = "(the code has digits and letters other than U)";
    const char *p;
    size_t symbols = 0, groups = 0;
    char shown[64], c_text[32];
    int rc = 0;

    /* Groups: runs of symbols between separators. */
    for (p = code; *p; ) {
        while (*p && is_separator(*p))
            p++;
        if (*p == '\0')
            break;
        groups++;
        while (*p && !is_separator(*p)) {
            p++;
            symbols++;
        }
    }
    /* The first group (or, in a code typed without separators, the first
     * character) that is not in the alphabet. */
    size_t g = 0;
    for (p = code; *p; ) {
        while (*p && is_separator(*p))
            p++;
        if (*p == '\0')
            break;
        const char *start = p;
        uint32_t ok = 1;
        g++;
        while (*p && !is_separator(*p))
            ok &= symbol_ok((unsigned char)*p++);
        if (ok)
            continue;
        /* This group is reported: finding its bad character may branch. */
        size_t len = (size_t)(p - start), k = 0;
        while (k < len && symbol_ok((unsigned char)start[k]))
            k++;
        show_char(c_text, sizeof(c_text), (unsigned char)start[k]);
        if (groups == 1)
            snprintf(why, n, "character %zu is not in the code's alphabet: %s %s",
                k + 1, c_text, alphabet_note);
        else {
            group_text(shown, sizeof(shown), start, len, show_group);
            snprintf(why, n, "group %zu%s has a character that is not in the code's "
                "alphabet: %s %s", g, shown, c_text, alphabet_note);
        }
        OPENSSL_cleanse(shown, sizeof(shown));
        return 1;
    }
    if (symbols != PQV_RECOVERY_SYMBOLS) {
        /* Typed in groups: the first group of another length. */
        g = 0;
        for (p = code; groups > 1 && *p; ) {
            while (*p && is_separator(*p))
                p++;
            if (*p == '\0')
                break;
            const char *start = p;
            g++;
            while (*p && !is_separator(*p))
                p++;
            if ((size_t)(p - start) == GROUP_SYMBOLS)
                continue;
            group_text(shown, sizeof(shown), start, (size_t)(p - start), show_group);
            snprintf(why, n, "group %zu%s has %zu character%s, not %d (the code has %zu of "
                "%d)", g, shown, (size_t)(p - start), p - start == 1 ? "" : "s",
                GROUP_SYMBOLS, symbols, PQV_RECOVERY_SYMBOLS);
            OPENSSL_cleanse(shown, sizeof(shown));
            return 1;
        }
        snprintf(why, n, "the code has %zu character%s, not %d (%d groups of %d)", symbols,
            symbols == 1 ? "" : "s", PQV_RECOVERY_SYMBOLS,
            PQV_RECOVERY_SYMBOLS / GROUP_SYMBOLS, GROUP_SYMBOLS);
        return 1;
    }
    /* Well formed: the checksum (the library's constant-time decoder). */
    uint8_t seed[PQV_SEED_BYTES];
    pqv_error_clear();
    if (pqv_recovery_decode(code, seed) != 0) {
        snprintf(why, n, "the checksum does not match: check the groups (a mistyped "
            "character, or two swapped)");
        rc = 1;
    }
    OPENSSL_cleanse(seed, sizeof(seed));
    return rc;
}
