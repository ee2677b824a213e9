/*
 * src/cli/cmd_info.c: info (the vault, its key slots, what gc would free)
 * and stats (restic's: data, deduplication, compression).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "pqvault/aead.h"
#include "pqvault/frodo.h"

/* ---- info ---- */

/* What a slot line says about use.  An unused slot is random bytes at
 * the default cost (init and passwd --clear write it so: FORMAT.md section
 * 4), the shape of a used one by design: the slot a passphrase opened is
 * known to be in use, and so is a slot at another cost (only sealing a
 * passphrase into a slot sets one); of a slot at the default cost that did
 * not open, nobody without its passphrase can tell. */
#define SLOT_UNKNOWN "in use or unused: not knowable without its passphrase (an unused " \
    "slot is random bytes at the default cost, by design the same as a used one)"
#define SLOT_COSTED "in use (its cost is not the default an unused slot has)"

static int
default_cost(const struct pqv_kdf_params *p)
{
    return p->t_cost == pqv_kdf_default.t_cost && p->m_kib == pqv_kdf_default.m_kib &&
        p->lanes == pqv_kdf_default.lanes;
}

/* print_leftovers(r): "reclaimable:" and what check found to reclaim
 * (the line goes on: the caller ends it). */
static void
print_leftovers(const struct pqv_check_result *r)
{
    char b[32];

    format_bytes(b, sizeof(b), r->orphan_bytes);
    printf("reclaimable:     %s in %llu leftover%s", b, (unsigned long long)r->orphans,
        r->orphans == 1 ? "" : "s");
    if (r->temporaries > 0)
        printf(" and %llu temporar%s", (unsigned long long)r->temporaries,
            r->temporaries == 1 ? "y" : "ies");
    if (r->orphans + r->temporaries > 0)
        printf(" ('pqvault gc' removes them)");
}

/* reclaimable_line(v, verified): what gc would free, when the catalogue
 * can be read (unlocked): check's structural pass, quietly. */
static void
reclaimable_line(pqv_vault *v, int verified)
{
    struct pqv_check_result r;
    int rc;

    if (!verified) {
        printf("reclaimable:     not known without the key (the catalogue says which packs "
            "are used: info with a passphrase source counts them, check lists them)\n");
        return;
    }
    memset(&r, 0, sizeof(r));
    pqv_error_clear();
    rc = pqv_vault_check(v, NULL, &r);
    pqv_error_clear();
    if (rc != 0 && rc != PQV_E_INTEGRITY) {
        printf("reclaimable:     not known (%s)\n", pqv_strerror(rc));
        return;
    }
    print_leftovers(&r);
    if (r.in_flight > 0)
        printf("; %llu being written by a running writer", (unsigned long long)r.in_flight);
    if (rc == PQV_E_INTEGRITY)
        printf("; the vault is damaged: run 'pqvault check'");
    printf("\n");
}

int
cmd_info(struct args *a)
{
    const char *val;
    int id, rc;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        return no_operands(val);
    }
    pqv_vault *v;
    /* Without the key file too: it may be kept elsewhere, or lost. */
    if ((rc = open_vault(&v)) != EXIT_OK)
        return rc;
    struct pqv_error kerr;
    int kstatus = pqv_vault_keyfile_status(v, &kerr);
    /* With a passphrase source that asks nobody (never a prompt), verify
     * what the config says by unlocking. */
    if (kstatus == 0 && passphrase_given() &&
        (rc = unlock_vault(v)) != EXIT_OK) {
        pqv_vault_close(v);
        return rc;
    }
    struct pqv_info in;
    memset(&in, 0, sizeof(in));
    pqv_error_clear();
    int lrc = pqv_vault_info(v, &in);
    if (lrc != 0) {
        rc = lib_error(g_cli.vault_dir, lrc);
        pqv_vault_close(v);
        return rc;
    }
    const char *mark = in.verified ? " (verified)" : " (unverified: unlock to verify)";
    char created[64], rb[32], ob[32];
    format_local_time(created, sizeof(created), in.created, "%Y-%m-%d %H:%M:%S %z");
    format_bytes(rb, sizeof(rb), in.record_bytes);
    format_bytes(ob, sizeof(ob), in.object_bytes);
    printf("vault:           %s\n", g_cli.vault_dir);
    if (g_cli.keyfile)
        printf("key file:        %s", g_cli.keyfile);
    else
        printf("key file:        %s/keyfile", g_cli.vault_dir);
    if (kstatus == PQV_E_NOTFOUND)
        printf(" (not found: if it is kept elsewhere, name it with --keyfile; if it is "
            "lost, 'pqvault recover' writes a new one from the recovery code)\n");
    else if (kstatus != 0)
        printf(" (%s: %s)\n", kstatus == PQV_E_UNSUPPORTED ? "unsupported" : "damaged",
            kerr.reason[0] ? kerr.reason : pqv_strerror(kstatus));
    else
        printf("\n");
    printf("format version:  %d\n", in.format_version);
    printf("vault id:        %s%s\n", in.vault_id, mark);
    printf("KEM:             %s%s\n", in.kem, mark);
    printf("default AEAD:    %s%s\n", in.aead, mark);
    printf("fingerprint:     %s%s\n", in.fingerprint, mark);
    printf("created:         %s%s\n", created, mark);
    for (int i = 0; i < PQV_KEYFILE_SLOTS; i++) {
        const struct pqv_kdf_params *p = &in.slot_params[i];
        if (kstatus != 0) {
            printf("slot %d:          unknown (no key file)\n", i);
            continue;
        }
        printf("slot %d:          Argon2id t=%u, m=%u KiB, p=%u", i, (unsigned)p->t_cost,
            (unsigned)p->m_kib, (unsigned)p->lanes);
        if (!pqv_kdf_within_limit(p, g_cli.have_kdf_limit ? &g_cli.kdf_limit : NULL))
            printf(", above the Argon2id limit (unlocking it needs --kdf-limit)");
        if (in.opened_slot == i)
            printf(" (opened by this passphrase)\n");
        else
            printf(", %s\n", default_cost(p) ? SLOT_UNKNOWN : SLOT_COSTED);
    }
    if (in.format_version >= 2) {
        char sb[32], pb[32];
        format_bytes(sb, sizeof(sb), in.segment_bytes);
        format_bytes(pb, sizeof(pb), in.pack_bytes);
        printf("epoch:           %llu\n", (unsigned long long)in.epoch);
        printf("segments:        %llu (%s)\n", (unsigned long long)in.segments, sb);
        printf("packs:           %llu (%s)\n", (unsigned long long)in.packs, pb);
        if (in.records > 0)
            printf("records:         %llu (%s, left by the upgrade: gc removes them)\n",
                (unsigned long long)in.records, rb);
        if (in.objects > 0)
            printf("objects:         %llu (%s, format-1 data)\n", (unsigned long long)in.objects,
                ob);
    } else {
        printf("records:         %llu (%s)\n", (unsigned long long)in.records, rb);
        printf("objects:         %llu (%s)\n", (unsigned long long)in.objects, ob);
    }
    printf("temporaries:     %llu\n", (unsigned long long)in.temporaries);
    fflush(stdout);
    reclaimable_line(v, in.verified);
    pqv_vault_close(v);
    return EXIT_OK;
}

/* ---- stats ---- */

/* ratio(out, a, b): a/b as "1.87x", or "-" when b is 0. */
static void
ratio(char out[32], uint64_t a, uint64_t b)
{
    if (b == 0)
        snprintf(out, 32, "-");
    else
        snprintf(out, 32, "%.2fx", (double)a / (double)b);
}

static void
json_ratio(uint64_t a, uint64_t b)
{
    if (b == 0)
        printf("null");
    else
        printf("%.4f", (double)a / (double)b);
}

int
cmd_stats(struct args *a)
{
    const char *val;
    int id, json = 0, rc;
    while ((id = next_arg(a, &val)) != ARG_END) {
        if (id == ARG_ERROR || id == ARG_HELP)
            return arg_stop(a, id);
        if (id == OPT_JSON)
            json = 1;
        else
            return no_operands(val);
    }
    pqv_vault *v;
    if ((rc = session(&v, 0)) != EXIT_OK)
        return rc;
    struct pqv_stats st;
    struct pqv_check_result r;
    int crc = 0;
    memset(&r, 0, sizeof(r));
    pqv_error_clear();
    if ((rc = pqv_vault_stats(v, &st)) != 0) {
        rc = lib_error(NULL, rc);
        pqv_vault_close(v);
        return rc;
    }
    /* What gc frees: check's structural pass, quietly (not at a
     * snapshot: leftovers are the whole vault's). */
    if (g_cli.at == NULL) {
        crc = pqv_vault_check(v, NULL, &r);
        pqv_error_clear();
    }
    int leftovers_known = g_cli.at == NULL && (crc == 0 || crc == PQV_E_INTEGRITY);
    if (json) {
        printf("{\"format\": %d, \"epoch\": %llu, \"newest\": %s, \"snapshots\": %llu, "
            "\"entries\": %llu, \"files\": %llu, \"directories\": %llu, \"symlinks\": %llu, "
            "\"size\": %llu, \"data\": %llu, \"chunks\": %llu, \"unique_bytes\": %llu, "
            "\"stored_bytes\": %llu, \"dedup_ratio\": ", st.format,
            (unsigned long long)st.epoch, g_cli.at == NULL ? "true" : "false",
            (unsigned long long)st.snapshots, (unsigned long long)st.entries,
            (unsigned long long)st.files, (unsigned long long)st.dirs,
            (unsigned long long)st.symlinks, (unsigned long long)st.size,
            (unsigned long long)st.data, (unsigned long long)st.pieces,
            (unsigned long long)st.unique_bytes, (unsigned long long)st.stored_bytes);
        json_ratio(st.data, st.unique_bytes);
        printf(", \"compression_ratio\": ");
        json_ratio(st.unique_bytes, st.stored_bytes);
        printf(", \"unlocated_chunks\": %llu, \"packs\": %llu, \"pack_bytes\": %llu, "
            "\"segments\": %llu, \"segment_bytes\": %llu, \"leftovers\": ",
            (unsigned long long)st.unlocated, (unsigned long long)st.packs,
            (unsigned long long)st.pack_bytes, (unsigned long long)st.segments,
            (unsigned long long)st.segment_bytes);
        if (leftovers_known)
            printf("%llu, \"reclaimable_bytes\": %llu, \"temporaries\": %llu}\n",
                (unsigned long long)r.orphans, (unsigned long long)r.orphan_bytes,
                (unsigned long long)r.temporaries);
        else
            printf("null, \"reclaimable_bytes\": null, \"temporaries\": null}\n");
        pqv_vault_close(v);
        return EXIT_OK;
    }
    char n1[32], n2[32], n3[32], n4[32], b1[32], b2[32], b3[32], r1[32], r2[32];
    if (g_cli.at == NULL)
        printf("state:           epoch %llu, the newest", (unsigned long long)st.epoch);
    else
        printf("state:           epoch %llu (snapshot, --at)", (unsigned long long)st.epoch);
    if (st.format >= 3)
        printf("; %llu snapshot%s kept\n", (unsigned long long)st.snapshots,
            st.snapshots == 1 ? "" : "s");
    else
        printf("; no history (format %d)\n", st.format);
    format_count(n1, st.entries);
    format_count(n2, st.files);
    format_count(n3, st.dirs);
    format_count(n4, st.symlinks);
    printf("entries:         %s: %s file%s, %s director%s, %s symbolic link%s\n", n1, n2,
        st.files == 1 ? "" : "s", n3, st.dirs == 1 ? "y" : "ies", n4, st.symlinks == 1 ? "" : "s");
    format_bytes(b1, sizeof(b1), st.size);
    format_bytes(b2, sizeof(b2), st.data);
    printf("logical size:    %s in files (%llu bytes)", b1, (unsigned long long)st.size);
    if (st.data != st.size)
        printf(", %s of data (holes are not stored)", b2);
    printf("\n");
    format_bytes(b1, sizeof(b1), st.unique_bytes);
    format_count(n1, st.pieces);
    ratio(r1, st.data, st.unique_bytes);
    printf("distinct data:   %s in %s %s: deduplication %s\n", b1, n1,
        st.format >= 3 ? (st.pieces == 1 ? "chunk" : "chunks") :
                         (st.pieces == 1 ? "extent" : "extents"), r1);
    format_bytes(b2, sizeof(b2), st.stored_bytes);
    ratio(r2, st.unique_bytes, st.stored_bytes);
    printf("stored:          %s for it (compressed, sealed): compression %s", b2, r2);
    if (st.unlocated > 0)
        printf("; %llu chunk%s without a recorded place (damage: run 'pqvault check')",
            (unsigned long long)st.unlocated, st.unlocated == 1 ? "" : "s");
    printf("\n");
    format_bytes(b1, sizeof(b1), st.pack_bytes);
    format_count(n1, st.packs);
    format_bytes(b3, sizeof(b3), st.segment_bytes);
    printf("packs:           %s, %s (the data of every kept snapshot, padded; leftovers too)\n",
        n1, b1);
    printf("segments:        %llu, %s (the catalogue)\n", (unsigned long long)st.segments, b3);
    if (leftovers_known) {
        print_leftovers(&r);
        if (crc == PQV_E_INTEGRITY)
            printf("; the vault is damaged: run 'pqvault check'");
        printf("\n");
    }
    pqv_vault_close(v);
    return EXIT_OK;
}
