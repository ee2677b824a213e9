/*
 * src/cli/passphrase.c: passphrase sources (file, descriptor, command,
 * environment, terminal prompt without echo), the strength estimate of a
 * new passphrase, and the recovery code input (echoed on the terminal).
 * Secrets live in page-aligned buffers locked in memory where allowed,
 * excluded from core dumps, and wiped before they are freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli.h"

int
secret_alloc(struct secret *s)
{
    void *p = NULL;
    s->buf = NULL;
    s->len = 0;
    s->cap = SECRET_MAX;
    if (posix_memalign(&p, 4096, SECRET_MAX) != 0) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    (void)mlock(p, SECRET_MAX);
    (void)madvise(p, SECRET_MAX, MADV_DONTDUMP);
    memset(p, 0, SECRET_MAX);
    s->buf = p;
    s->eol_len = 0;
    s->from_env = 0;
    return EXIT_OK;
}

void
secret_free(struct secret *s)
{
    if (s->buf) {
        OPENSSL_cleanse(s->buf, s->cap);
        (void)munlock(s->buf, s->cap);
        free(s->buf);
    }
    s->buf = NULL;
    s->len = 0;
}

/* end_line(s, lf): ${s} was read up to a "\n" (${lf} 1) or to the end of
 * its input: drop a "\r" before that point too, and keep what was dropped
 * in s->eol.  The one rule for every source: one "\n", "\r\n" or "\r"
 * ending the line is not part of the passphrase. */
static void
end_line(struct secret *s, int lf)
{
    int cr = s->len > 0 && s->buf[s->len - 1] == '\r';

    if (cr)
        s->buf[--s->len] = '\0';
    s->eol_len = 0;
    if (cr)
        s->eol[s->eol_len++] = '\r';
    if (lf)
        s->eol[s->eol_len++] = '\n';
}

/* strip_eol(s): end_line for a value read whole (the environment). */
static void
strip_eol(struct secret *s)
{
    int lf = s->len > 0 && s->buf[s->len - 1] == '\n';

    if (lf)
        s->buf[--s->len] = '\0';
    end_line(s, lf);
}

/* Read one line (up to "\n") from ${fd} a byte at a time, so nothing past
 * the line is consumed; its line end is dropped (end_line).  Returns 0, or
 * -1 with errno, or -2 when the line is too long. */
static int
read_line_fd(int fd, struct secret *s)
{
    int lf = 0;

    s->len = 0;
    s->from_env = 0;
    for (;;) {
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        if (c == '\n') {
            lf = 1;
            break;
        }
        if (s->len + 1 >= s->cap)
            return -2;
        s->buf[s->len++] = c;
    }
    s->buf[s->len] = '\0';
    end_line(s, lf);
    return 0;
}

/* The first line of ${path}. */
static int
read_file_line(const char *path, struct secret *s, const char *what)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        err_msg("%s: %s", path, strerror(errno));
        return EXIT_ERR;
    }
    int rc = read_line_fd(fd, s);
    int e = errno;
    close(fd);
    if (rc == -2) {
        err_msg("%s: %s too long (at most %d bytes)", path, what, SECRET_MAX - 1);
        return EXIT_ERR;
    }
    if (rc != 0) {
        err_msg("%s: %s", path, strerror(e));
        return EXIT_ERR;
    }
    return EXIT_OK;
}

static int
read_fd_line(int fd, struct secret *s, const char *what)
{
    int rc = read_line_fd(fd, s);
    if (rc == -2) {
        err_msg("descriptor %d: %s too long", fd, what);
        return EXIT_ERR;
    }
    if (rc != 0) {
        err_msg("descriptor %d: %s", fd, strerror(errno));
        return EXIT_ERR;
    }
    return EXIT_OK;
}

/* What the passphrase command's environment lacks (docs/CLI.md): pqvault's
 * own secrets, and the S3 credentials of the vault's storage (issue 17:
 * they were inherited).  The access key id goes with its secret (half a
 * pair of credentials is an error to the AWS tools); a command that needs
 * AWS itself takes its credentials from its own configuration (a profile,
 * AWS_SHARED_CREDENTIALS_FILE). */
static const char *const scrubbed_env[] = {
    "PQVAULT_PASSPHRASE", "PQVAULT_NEW_PASSPHRASE", "PQVAULT_RECOVERY_CODE",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
};

extern char **environ;

/* child_environ(): the environment less scrubbed_env (the strings are the
 * process's own; the array is to be freed), or NULL. */
static char **
child_environ(void)
{
    size_t n = 0, k = 0;
    char **env;

    while (environ != NULL && environ[n] != NULL)
        n++;
    if ((env = calloc(n + 1, sizeof(*env))) == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int keep = 1;
        for (size_t j = 0; keep && j < sizeof(scrubbed_env) / sizeof(scrubbed_env[0]); j++) {
            size_t len = strlen(scrubbed_env[j]);
            if (strncmp(environ[i], scrubbed_env[j], len) == 0 && environ[i][len] == '=')
                keep = 0;
        }
        if (keep)
            env[k++] = environ[i];
    }
    env[k] = NULL;
    return env;
}

/* The first line of the standard output of "/bin/sh -c ${cmd}". */
static int
read_command_line(const char *cmd, struct secret *s)
{
    int pfd[2];
    /* Made before the fork: the child only calls what is safe there
     * (another thread, an S3 lease's renewer, may hold a lock of libc). */
    char **env = child_environ();
    char *argv[] = { "sh", "-c", (char *)cmd, NULL };
    if (env == NULL) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        err_msg("passphrase command: %s", strerror(errno));
        free(env);
        return EXIT_ERR;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        err_msg("passphrase command: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        free(env);
        return EXIT_ERR;
    }
    if (pid == 0) {
        if (dup2(pfd[1], STDOUT_FILENO) < 0)
            _exit(127);
        execve("/bin/sh", argv, env);
        _exit(127);
    }
    free(env);
    close(pfd[1]);
    int rc = read_line_fd(pfd[0], s);
    int e = errno;
    /* Drain the rest so the command is not killed by SIGPIPE. */
    char junk[4096];
    for (;;) {
        ssize_t n = read(pfd[0], junk, sizeof(junk));
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        break;
    }
    OPENSSL_cleanse(junk, sizeof(junk));
    close(pfd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            err_msg("passphrase command: %s", strerror(errno));
            return EXIT_ERR;
        }
    }
    if (WIFSIGNALED(status)) {
        err_msg("passphrase command: killed by signal %d", WTERMSIG(status));
        return EXIT_ERR;
    }
    if (WEXITSTATUS(status) != 0) {
        err_msg("passphrase command: exited with status %d", WEXITSTATUS(status));
        return EXIT_ERR;
    }
    if (rc == -2) {
        err_msg("passphrase command: passphrase too long");
        return EXIT_ERR;
    }
    if (rc != 0) {
        err_msg("passphrase command: %s", strerror(e));
        return EXIT_ERR;
    }
    return EXIT_OK;
}

/* Take the value of ${env} and remove it from the environment. */
static int
take_env(const char *env, struct secret *s, int *found)
{
    const char *v = getenv(env);
    *found = 0;
    if (!v)
        return EXIT_OK;
    *found = 1;
    size_t n = strlen(v);
    if (n >= s->cap) {
        err_msg("$%s too long", env);
        unsetenv(env);
        return EXIT_ERR;
    }
    memcpy(s->buf, v, n + 1);
    s->len = n;
    OPENSSL_cleanse((char *)v, n);
    unsetenv(env);
    strip_eol(s);
    s->from_env = 1;
    return EXIT_OK;
}

/* ---- terminal ---- */

static volatile sig_atomic_t tty_fd_saved = -1;
static struct termios tty_saved;
static struct secret *volatile tty_secret;

static void
tty_signal(int sig)
{
    if (tty_fd_saved >= 0) {
        tcsetattr(tty_fd_saved, TCSAFLUSH, &tty_saved);
        (void)!write(tty_fd_saved, "\n", 1);
    }
    if (tty_secret && tty_secret->buf)
        explicit_bzero(tty_secret->buf, tty_secret->cap);
    signal(sig, SIG_DFL);
    raise(sig);
}

int
tty_available(void)
{
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

void
tty_say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int n = snprintf(line, sizeof(line), "pqvault: %s: ", g_cli.cmd ? g_cli.cmd : "");
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    int fd = open("/dev/tty", O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        err_msg("%s", line + n);
    } else {
        (void)!write(fd, line, strlen(line));
        (void)!write(fd, "\n", 1);
        close(fd);
    }
    OPENSSL_cleanse(line, sizeof(line));
}

/* Prompt on /dev/tty, with echo off unless ${echo} (a recovery code: it is
 * read off paper, and seeing it catches typos); read one line.  1: no
 * terminal. */
static int
tty_prompt(const char *prompt, struct secret *s, int echo)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP };
    struct sigaction sa, old[5];
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return 1;
    struct termios t;
    int have_termios = tcgetattr(fd, &t) == 0;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = tty_signal;
    sigemptyset(&sa.sa_mask);
    if (have_termios) {
        tty_saved = t;
        tty_secret = s;
        tty_fd_saved = fd;
        for (int i = 0; i < 5; i++)
            sigaction(sigs[i], &sa, &old[i]);
        if (echo) {
            /* Typeahead is kept: the code may be pasted early. */
            t.c_lflag |= ECHO | ICANON;
            tcsetattr(fd, TCSANOW, &t);
        } else {
            t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
            t.c_lflag |= ICANON;
            tcsetattr(fd, TCSAFLUSH, &t);
        }
    }
    (void)!write(fd, prompt, strlen(prompt));
    int rc = read_line_fd(fd, s);
    int e = errno;
    if (!echo)
        (void)!write(fd, "\n", 1);   /* the one the user typed was not shown */
    if (have_termios) {
        tcsetattr(fd, echo ? TCSANOW : TCSAFLUSH, &tty_saved);
        tty_fd_saved = -1;
        tty_secret = NULL;
        for (int i = 0; i < 5; i++)
            sigaction(sigs[i], &old[i], NULL);
    }
    close(fd);
    if (rc == -2) {
        err_msg("passphrase too long (at most %d bytes)", SECRET_MAX - 1);
        return -1;
    }
    if (rc != 0) {
        err_msg("terminal: %s", strerror(e));
        return -1;
    }
    return 0;
}

static int
no_source(void)
{
    err_msg("no passphrase source: use --passphrase-file, --passphrase-fd, "
        "--passphrase-command or PQVAULT_PASSPHRASE");
    return EXIT_ERR;
}

static int
read_from_source(const struct pass_source *src, struct secret *s)
{
    switch (src->kind) {
    case PASS_FILE:
        return read_file_line(src->arg, s, "passphrase");
    case PASS_FD:
        return read_fd_line(src->fd, s, "passphrase");
    case PASS_COMMAND:
        return read_command_line(src->arg, s);
    }
    return EXIT_ERR;
}

int
read_passphrase(struct secret *s, const char *prompt, int *from_tty)
{
    int found, rc;
    *from_tty = 0;
    if (g_cli.pass.kind != PASS_NONE)
        return read_from_source(&g_cli.pass, s);
    if ((rc = take_env("PQVAULT_PASSPHRASE", s, &found)) != EXIT_OK || found)
        return rc;
    rc = tty_prompt(prompt, s, 0);
    if (rc == 1)
        return no_source();
    if (rc != 0)
        return EXIT_ERR;
    *from_tty = 1;
    return EXIT_OK;
}

/* refuse_new(s): whether ${s} may be set as a passphrase: not empty, and
 * no line break inside (a file, a command or the terminal gives its
 * first line only: such a passphrase could only ever be entered through
 * the environment). */
static int
refuse_new(struct secret *s)
{
    if (s->len == 0) {
        err_msg("empty passphrase refused");
        return EXIT_ERR;
    }
    if (memchr(s->buf, '\n', s->len) != NULL) {
        err_msg("passphrase with a line break refused (a file or terminal gives its "
            "first line only)");
        return EXIT_ERR;
    }
    return EXIT_OK;
}

/* log2_of(x): log2 of ${x} >= 1, to about 1e-6 (no libm: the program
 * links none). */
static double
log2_of(double x)
{
    double whole = 0, frac = 0, bit = 0.5;
    while (x >= 2) {
        x /= 2;
        whole++;
    }
    for (int i = 0; i < 24; i++, bit /= 2) {
        x *= x;
        if (x >= 2) {
            x /= 2;
            frac += bit;
        }
    }
    return whole + frac;
}

int
passphrase_strength(const char *p, size_t len, unsigned *chars, unsigned *bits)
{
    int lower = 0, upper = 0, digit = 0, other = 0;
    unsigned char seen[32];
    unsigned n = 0, distinct = 0;

    memset(seen, 0, sizeof(seen));
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c & 0xc0) != 0x80)
            n++;   /* a UTF-8 continuation byte is part of the character before */
        if (!(seen[c >> 3] & (1u << (c & 7)))) {
            seen[c >> 3] |= (unsigned char)(1u << (c & 7));
            distinct++;
        }
        if (c >= 'a' && c <= 'z')
            lower = 1;
        else if (c >= 'A' && c <= 'Z')
            upper = 1;
        else if (c >= '0' && c <= '9')
            digit = 1;
        else
            other = 1;
    }
    unsigned pool = 26u * (unsigned)lower + 26u * (unsigned)upper + 10u * (unsigned)digit +
        33u * (unsigned)other;
    /* Characters repeated do not add as much: at most two per distinct one
     * count ("aaaaaaaaaaaa" is two characters' worth). */
    unsigned effective = n < 2 * distinct ? n : 2 * distinct;
    OPENSSL_cleanse(seen, sizeof(seen));
    *chars = n;
    *bits = pool > 1 ? (unsigned)((double)effective * log2_of((double)pool)) : 0;
    return n < WEAK_PASSPHRASE_CHARS || *bits < WEAK_PASSPHRASE_BITS;
}

/* warn_if_weak(s): a word on stderr about a weak new passphrase, once per
 * run (also when the terminal asks again after a mismatch); it is set all
 * the same: the choice is the user's. */
static void
warn_if_weak(const struct secret *s)
{
    static int warned;
    unsigned chars, bits;

    if (warned || !passphrase_strength(s->buf, s->len, &chars, &bits))
        return;
    warned = 1;
    err_msg("warning: weak passphrase (%u character%s, about %u bits by a simple estimate; "
        "at least %d characters and %d bits are advised): whoever gets a copy of the key "
        "file can try passphrases offline; several random words (five or more, picked with "
        "dice or a password manager) make one that is strong and easy to type", chars,
        chars == 1 ? "" : "s", bits, WEAK_PASSPHRASE_CHARS, WEAK_PASSPHRASE_BITS);
}

int
read_new_passphrase(struct secret *s, const struct pass_source *src,
    const char *env)
{
    int found, rc;
    if (src->kind != PASS_NONE) {
        if ((rc = read_from_source(src, s)) != EXIT_OK)
            return rc;
        if ((rc = refuse_new(s)) == EXIT_OK)
            warn_if_weak(s);
        return rc;
    }
    if ((rc = take_env(env, s, &found)) != EXIT_OK)
        return rc;
    if (found) {
        if ((rc = refuse_new(s)) == EXIT_OK)
            warn_if_weak(s);
        return rc;
    }
    struct secret again;
    if ((rc = secret_alloc(&again)) != EXIT_OK)
        return rc;
    for (int attempt = 0; attempt < 3; attempt++) {
        rc = tty_prompt("New passphrase: ", s, 0);
        if (rc == 1) {
            secret_free(&again);
            return no_source();
        }
        if (rc != 0)
            break;
        if (s->len == 0) {
            err_msg("empty passphrase refused");
            continue;
        }
        /* Before it is repeated: there is still time to type another. */
        warn_if_weak(s);
        rc = tty_prompt("Repeat new passphrase: ", &again, 0);
        if (rc != 0)
            break;
        if (again.len == s->len && CRYPTO_memcmp(again.buf, s->buf, s->len) == 0) {
            secret_free(&again);
            return EXIT_OK;
        }
        err_msg("passphrases do not match");
    }
    secret_free(&again);
    s->len = 0;
    if (rc == 0)
        err_msg("no passphrase set");
    return EXIT_ERR;
}

int
read_recovery_code(struct secret *s, const char *file, int *from_tty)
{
    int found, rc;
    *from_tty = 0;
    if (file) {
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            err_msg("%s: %s", file, strerror(errno));
            return EXIT_ERR;
        }
        /* The whole file: white space (also newlines) is ignored. */
        s->len = 0;
        for (;;) {
            ssize_t n = read(fd, s->buf + s->len, s->cap - 1 - s->len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                err_msg("%s: %s", file, strerror(errno));
                close(fd);
                return EXIT_ERR;
            }
            if (n == 0)
                break;
            s->len += (size_t)n;
            if (s->len >= s->cap - 1) {
                err_msg("%s: too long for a recovery code", file);
                close(fd);
                return EXIT_AUTH;
            }
        }
        close(fd);
        s->buf[s->len] = '\0';
        strip_eol(s);
        return EXIT_OK;
    }
    if ((rc = take_env("PQVAULT_RECOVERY_CODE", s, &found)) != EXIT_OK || found)
        return rc;
    rc = tty_prompt("Recovery code: ", s, 1);
    if (rc == 1) {
        err_msg("no recovery code source: use --recovery-file or "
            "PQVAULT_RECOVERY_CODE");
        return EXIT_ERR;
    }
    *from_tty = rc == 0;
    return rc == 0 ? EXIT_OK : EXIT_ERR;
}
