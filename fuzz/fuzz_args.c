/*
 * fuzz_args.c: libFuzzer target for the command line's argument parser
 * (next_arg, parse_uint, parse_kdf, parse_duration in src/cli/args.c) over
 * the real option tables (src/cli/commands.c): only those two files are
 * linked.  The input is split on NUL bytes into argv; the first byte picks
 * the command whose options apply (or the options before a command).
 * Global options are applied to a struct cli reset for every input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cli g;
    struct args a;
    struct pqv_kdf_params kdf;
    unsigned long long u;
    uint64_t us;
    size_t ncommands = 0;
    char *copy, **argv;
    const char *val;
    int argc = 1;

    if (size < 1 || size > 4096)
        return 0;
    while (commands[ncommands].name != NULL)
        ncommands++;
    if ((copy = malloc(size)) == NULL)
        return 0;
    memcpy(copy, data + 1, size - 1);
    copy[size - 1] = '\0';
    for (size_t i = 0; i + 1 < size; i++)
        argc += copy[i] == '\0';
    if ((argv = calloc((size_t)argc + 2, sizeof(*argv))) == NULL) {
        free(copy);
        return 0;
    }
    argv[0] = (char *)"pqvault";
    argc = 1;
    for (size_t i = 0; i < size - 1; i += strlen(copy + i) + 1)
        argv[argc++] = copy + i;
    argv[argc] = NULL;

    memset(&g, 0, sizeof(g));
    memset(&a, 0, sizeof(a));
    a.argc = argc;
    a.argv = argv;
    a.i = 1;
    a.g = &g;
    a.defs = data[0] % (ncommands + 1) == ncommands ? main_opts
        : commands[data[0] % (ncommands + 1)].opts;
    for (int steps = 0; steps < 10000; steps++) {
        int id = next_arg(&a, &val);
        if (id == ARG_ERROR && memchr(a.error, '\0', sizeof(a.error)) == NULL)
            abort(); /* the message must be a string */
        if (id == ARG_END || id == ARG_ERROR)
            break;
        if (val != NULL) {
            (void)parse_kdf(val, &kdf);
            (void)parse_uint(val, 0xffffffffull, &u);
            if (parse_duration(val, &us) == 0 &&
                us >= ((uint64_t)DURATION_MAX_UNITS + 1) * 1000000)
                abort();
        }
        if (a.i > a.argc)
            abort();
    }
    free(argv);
    free(copy);
    return 0;
}
