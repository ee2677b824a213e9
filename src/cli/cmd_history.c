/*
 * src/cli/cmd_history.c: history (docs/CLI.md "History"): log, diff,
 * versions, forget, pin and unpin, and the --at option of the reading
 * commands.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int
apply_at(pqv_vault *v, const char *spec)
{
    uint64_t epoch;
    int rc;

    if (spec == NULL)
        return EXIT_OK;
    pqv_error_clear();
    if ((rc = pqv_vault_resolve_snapshot(v, spec, &epoch)) == PQV_E_INVAL)
        return usage_error("--at: %s", pqv_error_last()->reason);
    if (rc != 0)
        return lib_error("--at", rc);
    pqv_vault_set_at(v, epoch);
    return EXIT_OK;
}

/* snap_line(s): one snapshot, as log prints it. */
static void
snap_line(const struct pqv_snapshot *s)
{
    char when[64], bytes[32];

    format_local_time(when, sizeof(when), s->time, "%Y-%m-%d %H:%M:%S");
    format_bytes(bytes, sizeof(bytes), s->bytes_new);
    printf("%-6llu %s  %s@%s  %s", (unsigned long long)s->epoch, when, s->user, s->host,
        s->command);
    for (size_t i = 0; i < s->noperands && i < 4; i++) {
        putchar(' ');
        print_name(stdout, s->operands[i], 1);
    }
    if (s->noperands > 4)
        printf(" (+%zu more)", s->noperands - 4);
    printf("  +%llu ~%llu -%llu, %s new%s\n", (unsigned long long)s->added,
        (unsigned long long)s->changed, (unsigned long long)s->removed, bytes,
        s->pinned ? "  [pinned]" : "");
}

static void
snap_json(const struct pqv_snapshot *s, int first)
{
    char when[64];

    format_utc_rfc3339(when, sizeof(when), s->time, 0);
    printf("%s{\"epoch\": %llu, \"time\": \"%s\", \"host\": ", first ? "" : ",\n ",
        (unsigned long long)s->epoch, when);
    json_string(stdout, s->host);
    printf(", \"user\": ");
    json_string(stdout, s->user);
    printf(", \"command\": ");
    json_string(stdout, s->command);
    printf(", \"operands\": [");
    for (size_t i = 0; i < s->noperands; i++) {
        if (i > 0)
            printf(", ");
        json_string(stdout, s->operands[i]);
    }
    printf("], \"added\": %llu, \"changed\": %llu, \"removed\": %llu, \"bytes_new\": %llu, "
        "\"pinned\": %s}", (unsigned long long)s->added, (unsigned long long)s->changed,
        (unsigned long long)s->removed, (unsigned long long)s->bytes_new,
        s->pinned ? "true" : "false");
}

/* log_name(v, name, json, count): the snapshots that changed ${name}. */
static int
log_name(pqv_vault *v, const char *name, int json, unsigned long long count)
{
    struct pqv_version *ver = NULL;
    struct pqv_snapshot *s = NULL;
    size_t nver = 0, ns = 0, shown = 0;
    int rc;

    pqv_error_clear();
    if ((rc = pqv_vault_versions(v, name, &ver, &nver)) != 0 ||
        (rc = pqv_vault_snapshots(v, &s, &ns)) != 0) {
        pqv_versions_free(ver, nver);
        return lib_error(name, rc);
    }
    if (json)
        printf("[");
    for (size_t i = nver; i-- > 0 && (count == 0 || shown < count);) {
        /* (Absent from the first kept snapshot on: no change there.) */
        if (i == 0 && !ver[i].present)
            continue;
        for (size_t k = 0; k < ns; k++)
            if (s[k].epoch == ver[i].epoch) {
                if (json)
                    snap_json(&s[k], shown == 0);
                else
                    snap_line(&s[k]);
                shown++;
            }
    }
    if (json)
        printf("]\n");
    pqv_versions_free(ver, nver);
    pqv_snapshots_free(s, ns);
    return EXIT_OK;
}

int
cmd_log(struct args *a)
{
    const char *val, *name = NULL;
    unsigned long long count = 0;
    int id, json = 0;

    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: return arg_stop(a, id);
        case OPT_JSON: json = 1; break;
        case OPT_COUNT:
            if (parse_uint(val, UINT32_MAX, &count) != 0 || count == 0)
                return usage_error("-n: not a count: '%s'", val);
            break;
        case ARG_OPERAND:
            if (name != NULL)
                return usage_error("one NAME at most");
            name = val;
            break;
        }
    }
    pqv_vault *v;
    int status = session(&v, 0);
    if (status != EXIT_OK)
        return status;
    if (name != NULL) {
        status = log_name(v, name, json, count);
        pqv_vault_close(v);
        return status;
    }
    struct pqv_snapshot *s = NULL;
    size_t n = 0, shown = 0;
    pqv_error_clear();
    int rc = pqv_vault_snapshots(v, &s, &n);
    if (rc != 0) {
        status = lib_error(NULL, rc);
    } else {
        if (json)
            printf("[");
        for (size_t i = n; i-- > 0 && (count == 0 || shown < count); shown++) {
            if (json)
                snap_json(&s[i], shown == 0);
            else
                snap_line(&s[i]);
        }
        if (json)
            printf("]\n");
        else if (!g_cli.quiet)
            fprintf(stderr, "%zu snapshot%s kept\n", n, n == 1 ? "" : "s");
    }
    pqv_snapshots_free(s, n);
    pqv_vault_close(v);
    return status;
}

/* ---- diff ---- */

static const char *
kind_letter(int type)
{
    switch (type) {
    case PQV_ENTRY_DIR: return "d";
    case PQV_ENTRY_SYMLINK: return "l";
    case PQV_ENTRY_FIFO: return "p";
    case PQV_ENTRY_CHARDEV: return "c";
    case PQV_ENTRY_BLOCKDEV: return "b";
    default: return "f";
    }
}

/* resolve(v, spec, epoch): a SNAP operand (malformed: a usage error, as
 * --at's). */
static int
resolve(pqv_vault *v, const char *spec, uint64_t *epoch)
{
    int rc;

    pqv_error_clear();
    if ((rc = pqv_vault_resolve_snapshot(v, spec, epoch)) == PQV_E_INVAL)
        return usage_error("%s", pqv_error_last()->reason);
    return rc != 0 ? lib_error(spec, rc) : EXIT_OK;
}

static void
fields_text(unsigned f, char *out, size_t n)
{
    static const struct { unsigned bit; const char *word; } w[] = {
        { PQV_CHANGED_KIND, "kind" }, { PQV_CHANGED_CONTENT, "content" },
        { PQV_CHANGED_TARGET, "target" }, { PQV_CHANGED_MODE, "mode" },
        { PQV_CHANGED_OWNER, "owner" }, { PQV_CHANGED_TIME, "time" },
        { PQV_CHANGED_DEVICE, "device" },
    };
    size_t l = 0;

    out[0] = '\0';
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
        if (f & w[i].bit)
            l += (size_t)snprintf(out + l, l < n ? n - l : 0, "%s%s", l > 0 ? "," : "", w[i].word);
}

int
cmd_diff(struct args *a)
{
    const char *val, *specs[2] = { NULL, NULL }, *prefix = NULL;
    int id, json = 0, nspec = 0;

    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: return arg_stop(a, id);
        case OPT_JSON: json = 1; break;
        case OPT_PREFIX: prefix = val; break;
        case ARG_OPERAND:
            if (nspec == 2)
                return usage_error("two snapshots at most (the second defaults to the newest "
                    "state)");
            specs[nspec++] = val;
            break;
        }
    }
    if (nspec == 0)
        return usage_error("missing SNAP operand (an epoch, latest~N, a date or time)");
    pqv_vault *v;
    int status = session(&v, 0);
    if (status != EXIT_OK)
        return status;
    uint64_t e[2] = { 0, 0 };
    struct pqv_change *c = NULL;
    size_t n = 0;
    int rc = 0;
    pqv_error_clear();
    for (int i = 0; i < nspec && rc == 0; i++)
        if ((status = resolve(v, specs[i], &e[i])) != EXIT_OK)
            rc = -1;
    if (rc == 0 && (pqv_error_clear(), rc = pqv_vault_diff(v, e[0], e[1], prefix, &c, &n)) != 0)
        status = lib_error(NULL, rc);
    if (rc == 0) {
        uint64_t added = 0, removed = 0, changed = 0;
        if (json)
            printf("[");
        for (size_t i = 0; i < n; i++) {
            const struct pqv_entry *en = c[i].what == PQV_DIFF_REMOVED ? &c[i].before : &c[i].after;
            char f[80];
            fields_text(c[i].fields, f, sizeof(f));
            added += c[i].what == PQV_DIFF_ADDED;
            removed += c[i].what == PQV_DIFF_REMOVED;
            changed += c[i].what == PQV_DIFF_CHANGED;
            if (json) {
                printf("%s{\"change\": \"%s\", \"name\": ", i > 0 ? ",\n " : "",
                    c[i].what == PQV_DIFF_ADDED ? "added" : c[i].what == PQV_DIFF_REMOVED ?
                    "removed" : "changed");
                json_string(stdout, en->name);
                printf(", \"type\": \"%s\", \"size\": %llu, \"fields\": ",
                    pqv_entry_type_name(en->type), (unsigned long long)en->size);
                json_string(stdout, f);
                printf("}");
                continue;
            }
            printf("%c %s ", c[i].what == PQV_DIFF_ADDED ? '+' : c[i].what == PQV_DIFF_REMOVED ?
                '-' : 'M', kind_letter(en->type));
            print_name(stdout, en->name, 1);
            if (c[i].what == PQV_DIFF_CHANGED)
                printf("  (%s)", f);
            putchar('\n');
        }
        if (json)
            printf("]\n");
        else if (!g_cli.quiet)
            fprintf(stderr, "%llu added, %llu removed, %llu changed\n",
                (unsigned long long)added, (unsigned long long)removed,
                (unsigned long long)changed);
    }
    pqv_changes_free(c, n);
    pqv_vault_close(v);
    return status;
}

/* ---- versions ---- */

int
cmd_versions(struct args *a)
{
    const char *val, *name = NULL;
    int id, json = 0;

    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: return arg_stop(a, id);
        case OPT_JSON: json = 1; break;
        case ARG_OPERAND:
            if (name != NULL)
                return usage_error("one NAME");
            name = val;
            break;
        }
    }
    if (name == NULL)
        return usage_error("missing NAME operand");
    pqv_vault *v;
    int status = session(&v, 0);
    if (status != EXIT_OK)
        return status;
    struct pqv_version *ver = NULL;
    size_t n = 0;
    pqv_error_clear();
    int rc = pqv_vault_versions(v, name, &ver, &n);
    if (rc != 0) {
        status = lib_error(name, rc);
    } else {
        if (json)
            printf("[");
        for (size_t i = 0; i < n; i++) {
            char when[64], size[64];
            format_local_time(when, sizeof(when), ver[i].time, "%Y-%m-%d %H:%M:%S");
            if (json) {
                printf("%s{\"epoch\": %llu, \"last\": %llu, \"present\": %s", i > 0 ? ",\n " : "",
                    (unsigned long long)ver[i].epoch, (unsigned long long)ver[i].last,
                    ver[i].present ? "true" : "false");
                if (ver[i].present)
                    printf(", \"type\": \"%s\", \"size\": %llu, \"mode\": \"%04o\"",
                        pqv_entry_type_name(ver[i].entry.type),
                        (unsigned long long)ver[i].entry.size, (unsigned)ver[i].entry.mode);
                printf("}");
                continue;
            }
            switch (ver[i].entry.type) {
            case PQV_ENTRY_DIR: snprintf(size, sizeof(size), "directory"); break;
            case PQV_ENTRY_SYMLINK: snprintf(size, sizeof(size), "symbolic link"); break;
            case PQV_ENTRY_FIFO: snprintf(size, sizeof(size), "FIFO"); break;
            case PQV_ENTRY_CHARDEV:
            case PQV_ENTRY_BLOCKDEV:
                snprintf(size, sizeof(size), "%s device %u, %u",
                    ver[i].entry.type == PQV_ENTRY_CHARDEV ? "character" : "block",
                    (unsigned)ver[i].entry.rdev_major, (unsigned)ver[i].entry.rdev_minor);
                break;
            default:
                snprintf(size, sizeof(size), "%llu", (unsigned long long)ver[i].entry.size);
            }
            printf("%-6llu %s  %s\n", (unsigned long long)ver[i].epoch, when,
                !ver[i].present ? "(absent)" : size);
        }
        if (json)
            printf("]\n");
        else if (!g_cli.quiet)
            fprintf(stderr, "%zu version%s\n", n, n == 1 ? "" : "s");
    }
    pqv_versions_free(ver, n);
    pqv_vault_close(v);
    return status;
}

/* ---- forget, pin ---- */

/* parse_within(s, sec): restic's durations: a sequence of N followed by
 * y (365 days), m (30 days), w, d or h: "1y5m7d2h". */
static int
parse_within(const char *s, int64_t *sec)
{
    int64_t total = 0;

    if (*s == '\0')
        return -1;
    while (*s != '\0') {
        char *end;
        unsigned long long n;
        int64_t unit;
        if (!isdigit((unsigned char)*s))
            return -1;
        n = strtoull(s, &end, 10);
        switch (*end) {
        case 'y': unit = 365 * 86400; break;
        case 'm': unit = 30 * 86400; break;
        case 'w': unit = 7 * 86400; break;
        case 'd': unit = 86400; break;
        case 'h': unit = 3600; break;
        default: return -1;
        }
        if (n > (unsigned long long)(INT64_MAX / unit) || total > INT64_MAX - (int64_t)n * unit)
            return -1;
        total += (int64_t)n * unit;
        s = end + 1;
    }
    *sec = total;
    return 0;
}

static void
decided(void *ctx, const struct pqv_snapshot *s, int kept, const char *why)
{
    char when[64];

    (void)ctx;
    format_local_time(when, sizeof(when), s->time, "%Y-%m-%d %H:%M:%S");
    printf("%-6s %-6llu %s  %s\n", kept ? "keep" : "forget", (unsigned long long)s->epoch, when,
        why[0] != '\0' ? why : "-");
}

int
cmd_forget(struct args *a)
{
    struct pqv_forget_options opt;
    const char *val;
    uint64_t *epochs = calloc((size_t)a->argc + 1, sizeof(*epochs));
    const char **specs = calloc((size_t)a->argc + 1, sizeof(*specs));
    unsigned long long u;
    size_t nspecs = 0;
    int id, status = EXIT_OK;

    memset(&opt, 0, sizeof(opt));
    if (epochs == NULL || specs == NULL) {
        free(epochs);
        free(specs);
        err_msg("out of memory");
        return EXIT_ERR;
    }
    while ((id = next_arg(a, &val)) != ARG_END && status == EXIT_OK) {
        unsigned *keep = NULL;
        switch (id) {
        case ARG_ERROR: case ARG_HELP:
            free(epochs);
            free(specs);
            return arg_stop(a, id);
        case OPT_DRYRUN: opt.dry_run = 1; break;
        case OPT_KEEP_LAST: keep = &opt.last; break;
        case OPT_KEEP_HOURLY: keep = &opt.hourly; break;
        case OPT_KEEP_DAILY: keep = &opt.daily; break;
        case OPT_KEEP_WEEKLY: keep = &opt.weekly; break;
        case OPT_KEEP_MONTHLY: keep = &opt.monthly; break;
        case OPT_KEEP_YEARLY: keep = &opt.yearly; break;
        case OPT_KEEP_WITHIN:
            if (parse_within(val, &opt.within) != 0 || opt.within == 0)
                status = usage_error("--keep-within: not a duration: '%s' (as 7d, 2w, 1y6m, 36h)",
                    val);
            break;
        case ARG_OPERAND: specs[nspecs++] = val; break;
        }
        if (keep != NULL) {
            if (parse_uint(val, UINT32_MAX, &u) != 0)
                status = usage_error("not a count: '%s'", val);
            else
                *keep = (unsigned)u;
        }
    }
    if (status == EXIT_OK && nspecs > 0 && (opt.last || opt.hourly || opt.daily || opt.weekly ||
        opt.monthly || opt.yearly || opt.within))
        status = usage_error("either SNAP operands or --keep-* rules, not both");
    if (status == EXIT_OK && nspecs == 0 && !(opt.last || opt.hourly || opt.daily || opt.weekly ||
        opt.monthly || opt.yearly || opt.within))
        status = usage_error("say what to keep (--keep-last N, --keep-daily N, ...) or which "
            "snapshots to forget");
    pqv_vault *v = NULL;
    if (status == EXIT_OK)
        status = session(&v, !opt.dry_run);
    for (size_t i = 0; status == EXIT_OK && i < nspecs; i++)
        status = resolve(v, specs[i], &epochs[i]);
    if (status == EXIT_OK) {
        uint64_t n = 0;
        int rc;
        opt.epochs = epochs;
        opt.nepochs = nspecs;
        opt.decided = decided;
        pqv_error_clear();
        if ((rc = pqv_vault_forget(v, &opt, &n)) != 0)
            status = lib_error(NULL, rc);
        else if (!g_cli.quiet)
            fprintf(stderr, "%s %llu snapshot%s%s\n", opt.dry_run ? "would forget" : "forgot",
                (unsigned long long)n, n == 1 ? "" : "s",
                opt.dry_run || n == 0 ? "" : " (gc frees what no kept snapshot needs)");
    }
    if (v != NULL)
        pqv_vault_close(v);
    free(epochs);
    free(specs);
    return status;
}

/* pin_common(a, pinned): pin or unpin SNAP. */
static int
pin_common(struct args *a, int pinned)
{
    const char *val, *spec = NULL;
    int id;

    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: return arg_stop(a, id);
        case ARG_OPERAND:
            if (spec != NULL)
                return usage_error("one SNAP");
            spec = val;
            break;
        }
    }
    if (spec == NULL)
        return usage_error("missing SNAP operand");
    pqv_vault *v;
    int status = session(&v, 1);
    if (status != EXIT_OK)
        return status;
    uint64_t e;
    int rc;
    if ((status = resolve(v, spec, &e)) != EXIT_OK) {
        pqv_vault_close(v);
        return status;
    }
    pqv_error_clear();
    if ((rc = pqv_vault_pin(v, e, pinned)) != 0)
        status = lib_error(spec, rc);
    else if (!g_cli.quiet)
        fprintf(stderr, "snapshot %llu %s\n", (unsigned long long)e, pinned ? "pinned: forget "
            "keeps it" : "unpinned");
    pqv_vault_close(v);
    return status;
}

int cmd_pin(struct args *a) { return pin_common(a, 1); }
int cmd_unpin(struct args *a) { return pin_common(a, 0); }
