/*
 * src/cli/cmd_files.c: add, get, list, rm, check, gc.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pqvault/aead.h"

/* The first failure's status wins; later ones are reported too. */
static void
keep(int *status, int rc)
{
    if (*status == EXIT_OK)
        *status = rc;
}

/* ---- add ---- */

int
cmd_add(struct args *a)
{
    const char *val, *name = NULL;
    int force = 0, id, npaths = 0, stdin_used = 0, no_compress = 0, follow = 0, one_fs = 0;
    const char **paths = calloc((size_t)a->argc + 1, sizeof *paths);
    if (!paths) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: free(paths); return arg_stop(a, id);
        case OPT_NAME: name = val; break;
        case OPT_FORCE: force = 1; break;
        case OPT_NOCOMPRESS: no_compress = 1; break;
        case OPT_FOLLOW: follow = 1; break;
        case OPT_ONEFS: one_fs = 1; break;
        case ARG_OPERAND:
            if (strcmp(val, "-") == 0)
                stdin_used++;
            paths[npaths++] = val;
            break;
        }
    }
    int status = EXIT_OK;
    if (npaths == 0)
        status = usage_error("missing PATH operand");
    else if (name && npaths > 1)
        status = usage_error("--name needs exactly one PATH");
    else if (stdin_used && !name)
        status = usage_error("'-' (standard input) needs --name");
    else if (name && *name == '\0')
        status = usage_error("--name: empty name");
    if (status != EXIT_OK) {
        free(paths);
        return status;
    }

    pqv_vault *v;
    if ((status = session(&v, 1)) != EXIT_OK) {
        free(paths);
        return status;
    }
    g_cli.force_hint = !force;
    for (int i = 0; i < npaths; i++) {
        struct progress *p = progress_new("add");
        struct pqv_add_options opt = {
            .force = force, .progress = p ? progress_cb : NULL,
            .progress_ctx = p, .report = report_cb, .report_ctx = NULL,
            .no_compress = no_compress, .follow_links = follow, .one_file_system = one_fs
        };
        int rc;
        pqv_error_clear();
        if (strcmp(paths[i], "-") == 0) {
            mode_t um = umask(0);
            umask(um);
            rc = pqv_vault_add_fd(v, STDIN_FILENO, name, 0666u & ~(uint32_t)um,
                (int64_t)time(NULL), &opt);
        } else {
            rc = pqv_vault_add_path(v, paths[i], name, &opt);
        }
        progress_end(p);
        if (rc != 0)
            keep(&status, lib_error(name ? name : paths[i], rc));
    }
    pqv_vault_close(v);
    free(paths);
    return status;
}

/* ---- get ---- */

int
cmd_get(struct args *a)
{
    const char *val, *out = NULL;
    int force = 0, id, n = 0;
    const char **names = calloc((size_t)a->argc + 1, sizeof *names);
    if (!names) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: free(names); return arg_stop(a, id);
        case OPT_OUT: out = val; break;
        case OPT_FORCE: force = 1; break;
        case ARG_OPERAND: names[n++] = val; break;
        }
    }
    int status = EXIT_OK;
    int to_stdout = out && strcmp(out, "-") == 0;
    struct stat st;
    if (n == 0)
        status = usage_error("missing NAME operand");
    else if (out && *out == '\0')
        status = usage_error("-o: empty destination");
    else if (n > 1 && out && !to_stdout && (stat(out, &st) != 0 || !S_ISDIR(st.st_mode)))
        status = usage_error("-o %s: several names need an existing directory", out);
    if (status != EXIT_OK) {
        free(names);
        return status;
    }

    pqv_vault *v;
    if ((status = session(&v, 0)) != EXIT_OK) {
        free(names);
        return status;
    }
    g_cli.force_hint = !force;
    for (int i = 0; i < n; i++) {
        struct progress *p = progress_new("get");
        struct pqv_get_options opt = {
            .force = force, .progress = p ? progress_cb : NULL,
            .progress_ctx = p, .report = report_cb, .report_ctx = NULL
        };
        int rc;
        pqv_error_clear();
        if (to_stdout) {
            struct pqv_entry e;
            memset(&e, 0, sizeof(e));
            rc = pqv_vault_lookup(v, names[i], &e);
            if (rc == 0 && e.type == PQV_ENTRY_DIR) {
                err_msg("%s: is a directory (cannot write it to standard output)",
                    names[i]);
                pqv_entry_clear(&e);
                progress_end(p);
                keep(&status, EXIT_ERR);
                continue;
            }
            if (rc == 0)
                pqv_entry_clear(&e);
            pqv_error_clear();
            rc = pqv_vault_get_fd(v, names[i], STDOUT_FILENO, &opt);
        } else {
            rc = pqv_vault_get(v, names[i], out, &opt);
        }
        progress_end(p);
        if (rc != 0)
            keep(&status, lib_error(names[i], rc));
    }
    pqv_vault_close(v);
    free(names);
    return status;
}

/* ---- list ---- */

static void
list_json(const struct pqv_entry *e, size_t n)
{
    printf("[");
    for (size_t i = 0; i < n; i++) {
        char t[64];
        const char *aead = e[i].type == PQV_ENTRY_FILE ? pqv_aead_name(e[i].aead) : NULL;
        format_utc_rfc3339(t, sizeof(t), e[i].mtime_sec, e[i].mtime_nsec);
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_string(stdout, e[i].name);
        printf(", \"type\": \"%s\", \"size\": %llu, \"mode\": \"%04o\", "
            "\"mtime\": \"%s\", \"mtime_unix\": %lld, \"aead\": ",
            e[i].type == PQV_ENTRY_DIR ? "dir" : e[i].type == PQV_ENTRY_SYMLINK ? "symlink" : "file",
            (unsigned long long)e[i].size, (unsigned)(e[i].mode & 07777u), t,
            (long long)e[i].mtime_sec);
        if (aead)
            json_string(stdout, aead);
        else
            printf("null");
        printf(", \"objects\": %u, \"target\": ", (unsigned)e[i].nobjects);
        /* Keys of format 2 (after format 1's, which keep their order). */
        if (e[i].target)
            json_string(stdout, e[i].target);
        else
            printf("null");
        printf(", \"uid\": %u, \"gid\": %u, \"user\": ", (unsigned)e[i].uid, (unsigned)e[i].gid);
        if (e[i].user)
            json_string(stdout, e[i].user);
        else
            printf("null");
        printf(", \"group\": ");
        if (e[i].group)
            json_string(stdout, e[i].group);
        else
            printf("null");
        printf(", \"link_group\": %llu, \"holes\": %llu}", (unsigned long long)e[i].link_group,
            (unsigned long long)e[i].holes);
    }
    printf("%s]\n", n ? "\n" : "");
}

static void
list_long(const struct pqv_entry *e, size_t n, int escape)
{
    int w = 1;
    for (size_t i = 0; i < n; i++) {
        char b[32];
        int l = snprintf(b, sizeof(b), "%llu", (unsigned long long)e[i].size);
        if (l > w)
            w = l;
    }
    for (size_t i = 0; i < n; i++) {
        char mode[11], t[64];
        format_mode(mode, e[i].type, e[i].mode);
        format_local_time(t, sizeof(t), e[i].mtime_sec, "%Y-%m-%d %H:%M");
        printf("%s %*llu %s ", mode, w, (unsigned long long)e[i].size, t);
        print_name(stdout, e[i].name, escape);
        if (e[i].target != NULL) {
            fputs(" -> ", stdout);
            print_name(stdout, e[i].target, escape);
        }
        putchar('\n');
    }
}

int
cmd_list(struct args *a)
{
    const char *val, *prefix = NULL;
    int id, lng = 0, json = 0;
    while ((id = next_arg(a, &val)) != ARG_END) {
        switch (id) {
        case ARG_ERROR: case ARG_HELP: return arg_stop(a, id);
        case OPT_LONG: lng = 1; break;
        case OPT_JSON: json = 1; break;
        case ARG_OPERAND:
            if (prefix)
                return usage_error("too many operands (one PREFIX at most)");
            prefix = val;
            break;
        }
    }
    if (lng && json)
        return usage_error("-l and --json exclude each other");
    pqv_vault *v;
    int status = session(&v, 0);
    if (status != EXIT_OK)
        return status;
    struct pqv_entry *e = NULL;
    size_t n = 0;
    pqv_error_clear();
    int rc = pqv_vault_list(v, prefix, &(struct pqv_list_options){ report_cb, NULL }, &e, &n);
    if (rc == 0 || rc == PQV_E_INTEGRITY) {
        /* Damaged records were reported; the others are listed. */
        int escape = isatty(STDOUT_FILENO);
        if (json)
            list_json(e, n);
        else if (lng)
            list_long(e, n, escape);
        else
            for (size_t i = 0; i < n; i++) {
                print_name(stdout, e[i].name, escape);
                putchar('\n');
            }
        pqv_entries_free(e, n);
        if (rc == 0 && n == 0 && prefix != NULL) {
            err_msg("%s: not found", prefix);
            status = EXIT_ERR;
        }
    }
    if (rc != 0)
        status = lib_error(prefix, rc);
    pqv_vault_close(v);
    return status;
}

/* ---- rm ---- */

int
cmd_rm(struct args *a)
{
    const char *val;
    int id, n = 0;
    const char **names = calloc((size_t)a->argc + 1, sizeof *names);
    if (!names) {
        err_msg("out of memory");
        return EXIT_ERR;
    }
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP) {
            free(names);
            return arg_stop(a, id);
        }
        names[n++] = val;
    }
    if (n == 0) {
        free(names);
        return usage_error("missing NAME operand");
    }
    pqv_vault *v;
    int status = session(&v, 1);
    if (status == EXIT_OK) {
        for (int i = 0; i < n; i++) {
            pqv_error_clear();
            int rc = pqv_vault_rm(v, names[i], &(struct pqv_rm_options){ report_cb, NULL });
            if (rc != 0)
                keep(&status, lib_error(names[i], rc));
        }
        pqv_vault_close(v);
    }
    free(names);
    return status;
}

/* ---- check, gc ---- */

/* print_counts(r, no_key): the summary line; without the key, format 2's
 * has no entry count (entries are sealed). */
static void
print_counts(const struct pqv_check_result *r, int no_key)
{
    if (r->epoch > 0) {
        char entries[48] = "";
        if (!no_key)
            snprintf(entries, sizeof(entries), "entries: %llu, ", (unsigned long long)r->records);
        printf("epoch: %llu, segments: %llu, %spacks: %llu, bytes: %llu, "
            "damaged: %llu, missing: %llu, leftovers: %llu, temporaries: %llu\n",
            (unsigned long long)r->epoch, (unsigned long long)r->segments, entries,
            (unsigned long long)r->objects,
            (unsigned long long)r->bytes, (unsigned long long)r->damaged,
            (unsigned long long)r->missing, (unsigned long long)r->orphans,
            (unsigned long long)r->temporaries);
        if (r->in_flight > 0)
            printf("written by a running writer: %llu\n", (unsigned long long)r->in_flight);
        return;
    }
    printf("records: %llu, objects: %llu, bytes: %llu, damaged: %llu, "
        "missing: %llu, orphans: %llu, temporaries: %llu\n",
        (unsigned long long)r->records, (unsigned long long)r->objects,
        (unsigned long long)r->bytes, (unsigned long long)r->damaged,
        (unsigned long long)r->missing, (unsigned long long)r->orphans,
        (unsigned long long)r->temporaries);
    if (r->in_flight > 0)
        printf("objects of a running writer: %llu\n", (unsigned long long)r->in_flight);
}

int
cmd_check(struct args *a)
{
    const char *val;
    int id, read_data = 0, no_key = 0;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_READDATA)
            read_data = 1;
        else if (id == OPT_NOKEY)
            no_key = 1;
        else
            return usage_error("unexpected operand '%s'", val);
    }
    if (no_key && read_data)
        return usage_error("--read-data needs the key: not with --no-key");
    pqv_vault *v;
    /* Without the key: structure only, no passphrase asked. */
    int status = no_key ? open_vault(&v) : session(&v, 0);
    if (status != EXIT_OK)
        return status;
    struct pqv_check_result r;
    memset(&r, 0, sizeof(r));
    pqv_error_clear();
    int rc = pqv_vault_check(v, &(struct pqv_check_options){ read_data, report_cb, NULL }, &r);
    if (rc == 0 || rc == PQV_E_INTEGRITY)
        print_counts(&r, no_key);
    if (rc == PQV_E_INTEGRITY) {
        err_msg("vault damaged: %llu damaged, %llu missing",
            (unsigned long long)r.damaged, (unsigned long long)r.missing);
        status = EXIT_INTEGRITY;
    } else if (rc != 0) {
        status = lib_error(NULL, rc);
    }
    pqv_vault_close(v);
    return status;
}

int
cmd_gc(struct args *a)
{
    const char *val;
    int id;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        return usage_error("unexpected operand '%s'", val);
    }
    pqv_vault *v;
    int status = session(&v, 1);
    if (status != EXIT_OK)
        return status;
    struct pqv_check_result r;
    memset(&r, 0, sizeof(r));
    pqv_error_clear();
    int rc = pqv_vault_gc(v, &(struct pqv_check_options){ 0, report_cb, NULL }, &r);
    if (rc == 0 && r.epoch > 0)
        printf("removed: %llu (leftovers: %llu, temporaries: %llu)\n",
            (unsigned long long)r.removed, (unsigned long long)r.orphans,
            (unsigned long long)r.temporaries);
    else if (rc == 0)
        printf("removed: %llu (orphans: %llu, temporaries: %llu)\n",
            (unsigned long long)r.removed, (unsigned long long)r.orphans,
            (unsigned long long)r.temporaries);
    else
        status = lib_error(NULL, rc);
    pqv_vault_close(v);
    return status;
}
