/*
 * fuzz_args.c: libFuzzer target for the command line's argument parser
 * (next_arg, parse_uint, parse_kdf in src/cli/args.c).  The input is split
 * on NUL bytes into argv; the first byte picks the command's option table.
 * Global options are applied to g_cli, which is reset for every input.
 * The CLI's sources are linked with main renamed (-Dmain=pqvault_cli_main).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct optdef get_defs[] = {
    { "output", 'o', 1, 1 }, { "force", 'f', 0, 2 }, { NULL, 0, 0, 0 }
};
static const struct optdef init_defs[] = {
    { "kem", 0, 1, 1 }, { "aead", 0, 1, 2 }, { "kdf", 0, 1, 3 }, { NULL, 0, 0, 0 }
};
static const struct optdef list_defs[] = {
    { "long", 'l', 0, 1 }, { "json", 0, 0, 2 }, { NULL, 0, 0, 0 }
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct optdef *tables[4] = { NULL, get_defs, init_defs, list_defs };
    char *copy, **argv;
    int argc = 1;
    const char *val;
    struct pqv_kdf_params kdf;
    unsigned long long u;

    if (size < 1 || size > 4096)
        return 0;
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

    memset(&g_cli, 0, sizeof(g_cli));
    struct args a = { argc, argv, 1, 0, NULL };
    const struct optdef *defs = tables[data[0] & 3];
    for (int steps = 0; steps < 10000; steps++) {
        int id = next_arg(&a, defs, &val);
        if (id == ARG_END || id == ARG_ERROR)
            break;
        if (id == ARG_OPERAND || (id > 0 && id < 1000 && defs != NULL)) {
            if (val != NULL) {
                (void)parse_kdf(val, &kdf);
                (void)parse_uint(val, 0xffffffffull, &u);
            }
        }
        if (a.i > a.argc)
            abort();
    }
    free(argv);
    free(copy);
    return 0;
}
