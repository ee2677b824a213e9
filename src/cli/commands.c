/*
 * src/cli/commands.c: the commands and their options, in one place: the
 * tables the parser reads (args.c), the help texts, and nothing that runs a
 * command (main.c maps command ids to the functions), so that the argument
 * parser and its tables link alone (fuzz/fuzz_args.c).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

const struct optdef global_opts[] = {
    { "vault", 'v', 1, G_VAULT },
    { "keyfile", 0, 1, G_KEYFILE },
    { "passphrase-file", 0, 1, G_PFILE },
    { "passphrase-fd", 0, 1, G_PFD },
    { "passphrase-command", 0, 1, G_PCMD },
    { "quiet", 'q', 0, G_QUIET },
    { "wait", 0, 0, G_WAIT },
    { "kdf-limit", 0, 1, G_KDFLIMIT },
    { "help", 'h', 0, G_HELP },
    { "s3-endpoint", 0, 1, G_S3_ENDPOINT },
    { "s3-ca-file", 0, 1, G_S3_CA_FILE },
    { "state-dir", 0, 1, G_STATE_DIR },
    { "at", 0, 1, G_AT },
    { NULL, 0, 0, 0 }
};

const struct optdef main_opts[] = {
    { "version", 0, 0, OPT_VERSION },
    { NULL, 0, 0, 0 }
};

static const struct optdef init_opts[] = {
    { "kem", 0, 1, OPT_KEM }, { "aead", 0, 1, OPT_AEAD }, { "kdf", 0, 1, OPT_KDF },
    { "kdf-time", 0, 1, OPT_KDFTIME }, { "force", 'f', 0, OPT_FORCE },
    { "shared-inbox", 0, 0, OPT_SHARED_INBOX }, { NULL, 0, 0, 0 }
};
static const struct optdef add_opts[] = {
    { "name", 0, 1, OPT_NAME }, { "force", 'f', 0, OPT_FORCE },
    { "no-compress", 0, 0, OPT_NOCOMPRESS }, { "follow-links", 'L', 0, OPT_FOLLOW },
    { "one-file-system", 'x', 0, OPT_ONEFS }, { "delete", 0, 0, OPT_DELETE },
    { "force-read", 0, 0, OPT_FORCEREAD }, { "dry-run", 'n', 0, OPT_DRYRUN },
    { "verbose", 0, 0, OPT_VERBOSE }, { "exclude", 0, 1, OPT_EXCLUDE },
    { "exclude-from", 0, 1, OPT_EXCLUDEFROM }, { "exclude-caches", 0, 0, OPT_EXCLUDECACHES },
    { "json", 0, 0, OPT_JSON }, { "recipient", 0, 1, OPT_RECIPIENT },
    { "files-from", 0, 1, OPT_FILESFROM }, { "null", '0', 0, OPT_NULL },
    { "exclude-larger-than", 0, 1, OPT_EXCLUDELARGER },
    { "exclude-if-present", 0, 1, OPT_EXCLUDEIFPRESENT }, { NULL, 0, 0, 0 }
};
static const struct optdef export_recipient_opts[] = {
    { "output", 'o', 1, OPT_OUT }, { "force", 'f', 0, OPT_FORCE },
    { "unverified", 0, 0, OPT_UNVERIFIED }, { NULL, 0, 0, 0 }
};
static const struct optdef inbox_opts[] = {
    { "long", 'l', 0, OPT_LONG }, { NULL, 0, 0, 0 }
};
static const struct optdef import_opts[] = {
    { "replace", 0, 0, OPT_REPLACE }, { "quarantine", 0, 0, OPT_QUARANTINE }, { NULL, 0, 0, 0 }
};
static const struct optdef writer_opts[] = {
    { "prefix", 0, 1, OPT_PREFIX }, { "output", 'o', 1, OPT_OUT }, { "force", 'f', 0, OPT_FORCE },
    { NULL, 0, 0, 0 }
};
static const struct optdef get_opts[] = {
    { "output", 'o', 1, OPT_OUT }, { "force", 'f', 0, OPT_FORCE },
    { "strip-components", 0, 1, OPT_STRIP }, { "skip-existing", 0, 0, OPT_SKIPEXISTING },
    { "to-original", 0, 0, OPT_TOORIGINAL }, { "dry-run", 'n', 0, OPT_DRYRUN },
    { "verbose", 0, 0, OPT_VERBOSE }, { "json", 0, 0, OPT_JSON },
    { "include", 0, 1, OPT_INCLUDE }, { "exclude", 0, 1, OPT_EXCLUDE }, { NULL, 0, 0, 0 }
};
static const struct optdef list_opts[] = {
    { "long", 'l', 0, OPT_LONG }, { "json", 0, 0, OPT_JSON }, { "bytes", 0, 0, OPT_BYTES },
    { "depth", 0, 1, OPT_DEPTH }, { NULL, 0, 0, 0 }
};
static const struct optdef rm_opts[] = {
    { "dry-run", 'n', 0, OPT_DRYRUN }, { "verbose", 0, 0, OPT_VERBOSE }, { NULL, 0, 0, 0 }
};
static const struct optdef check_opts[] = {
    { "read-data", 0, 0, OPT_READDATA }, { "no-key", 0, 0, OPT_NOKEY },
    { "repair-index", 0, 0, OPT_REPAIR_INDEX }, { "verbose", 0, 0, OPT_VERBOSE },
    { NULL, 0, 0, 0 }
};
static const struct optdef passwd_opts[] = {
    { "slot", 0, 1, OPT_SLOT }, { "clear", 0, 0, OPT_CLEAR }, { "kdf", 0, 1, OPT_KDF },
    { "kdf-time", 0, 1, OPT_KDFTIME },
    { "new-passphrase-file", 0, 1, OPT_NEWFILE }, { "new-passphrase-fd", 0, 1, OPT_NEWFD },
    { NULL, 0, 0, 0 }
};
static const struct optdef recover_opts[] = {
    { "recovery-file", 0, 1, OPT_RECFILE }, { "kdf", 0, 1, OPT_KDF },
    { "kdf-time", 0, 1, OPT_KDFTIME }, { NULL, 0, 0, 0 }
};
static const struct optdef info_opts[] = {
    { NULL, 0, 0, 0 }
};
static const struct optdef stats_opts[] = {
    { "json", 0, 0, OPT_JSON }, { NULL, 0, 0, 0 }
};
static const struct optdef speed_opts[] = {
    { "kdf-time", 0, 1, OPT_KDFTIME }, { "kdf-only", 0, 0, OPT_KDFONLY },
    { "quick", 0, 0, OPT_QUICK }, { NULL, 0, 0, 0 }
};
static const struct optdef gc_opts[] = {
    { NULL, 0, 0, 0 }
};
static const struct optdef help_opts[] = {
    { NULL, 0, 0, 0 }
};
static const struct optdef upgrade_opts[] = {
    { NULL, 0, 0, 0 }
};
static const struct optdef accept_opts[] = {
    { NULL, 0, 0, 0 }
};
static const struct optdef log_opts[] = {
    { "json", 0, 0, OPT_JSON }, { "count", 'n', 1, OPT_COUNT }, { NULL, 0, 0, 0 }
};
static const struct optdef diff_opts[] = {
    { "json", 0, 0, OPT_JSON }, { "prefix", 0, 1, OPT_PREFIX }, { NULL, 0, 0, 0 }
};
static const struct optdef versions_opts[] = {
    { "json", 0, 0, OPT_JSON }, { NULL, 0, 0, 0 }
};
static const struct optdef forget_opts[] = {
    { "keep-last", 0, 1, OPT_KEEP_LAST }, { "keep-hourly", 0, 1, OPT_KEEP_HOURLY },
    { "keep-daily", 0, 1, OPT_KEEP_DAILY }, { "keep-weekly", 0, 1, OPT_KEEP_WEEKLY },
    { "keep-monthly", 0, 1, OPT_KEEP_MONTHLY }, { "keep-yearly", 0, 1, OPT_KEEP_YEARLY },
    { "keep-within", 0, 1, OPT_KEEP_WITHIN }, { "dry-run", 'n', 0, OPT_DRYRUN },
    { NULL, 0, 0, 0 }
};
static const struct optdef pin_opts[] = {
    { NULL, 0, 0, 0 }
};
static const struct optdef mount_opts[] = {
    { "foreground", 'f', 0, OPT_FOREGROUND }, { "cache-size", 0, 1, OPT_CACHE_SIZE },
    { "allow-other", 0, 0, OPT_ALLOW_OTHER }, { NULL, 0, 0, 0 }
};
static const struct optdef copy_opts[] = {
    { "to", 0, 1, OPT_TO }, { "verbose", 0, 0, OPT_VERBOSE }, { NULL, 0, 0, 0 }
};

const struct command commands[] = {
    { "init", CMD_INIT, init_opts,
      "[--kem NAME] [--aead NAME] [--kdf t=N,m=KIB,p=N | --kdf-time DURATION] [--force]\n"
      "         [--shared-inbox]",
      "Create a vault and its key file, and print the recovery code once.\n"
      "The passphrase for slot 0 comes from the passphrase sources (asked\n"
      "twice on the terminal).  VAULT must be new, an empty directory, or\n"
      "--force.\n"
      "  -f, --force       create the vault in a directory that holds other files\n"
      "  --shared-inbox    let other Unix users' writers add (writer add): the\n"
      "                    vault directory 0711, its config 0644 (local only)\n"
      "  --kem NAME        FrodoKEM parameter set (FrodoKEM-640-AES, -640-SHAKE,\n"
      "                    -976-AES, -976-SHAKE, -1344-AES, -1344-SHAKE);\n"
      "                    default: FrodoKEM-976-AES with AES instructions,\n"
      "                    FrodoKEM-976-SHAKE otherwise\n"
      "  --aead NAME       default AEAD: AES-256-GCM, ChaCha20-Poly1305 or auto\n"
      "  --kdf t=N,m=KIB,p=N  Argon2id cost of slot 0 (default t=3,m=65536,p=4;\n"
      "                    above m=1048576 or t=16 unlocking needs --kdf-limit)\n"
      "  --kdf-time DURATION  instead of --kdf: measure here and pick the cost of\n"
      "                    slot 0 (p=4, m from 8 MiB up to 1 GiB or half the\n"
      "                    available memory, then t up to 16; within --kdf-limit\n"
      "                    when given) so that an unlock's Argon2id (slot 0, and\n"
      "                    slot 1 unused at the default cost) takes about DURATION\n"
      "                    (100ms to 60s: 500ms, 1s, 2.5s); said on stderr\n" },
    { "add", CMD_ADD, add_opts,
      "PATH... | --files-from FILE [--name NAME] [--delete] [--exclude PATTERN] [-n] ...",
      "Store files, symbolic links and directory trees (recursively), with\n"
      "owner, group, mode, times, extended attributes, hard links and holes;\n"
      "files of equal content are stored once.  A PATH is stored under its last\n"
      "component.  Adding a tree again updates it: what is new is added, what\n"
      "changed (size, mtime, ctime or inode) is stored again, the rest is left\n"
      "as it is.  An interrupted add continues when run again (large adds commit\n"
      "every 512 MiB or 20,000 entries).  '-' reads standard input and needs\n"
      "--name.  Devices, sockets and FIFOs are skipped; a file that cannot be\n"
      "read, or keeps changing, is reported and skipped, the rest stored (exit\n"
      "1).  The vault's own directory and key file are never stored.  Ends\n"
      "with a summary on stderr (not with -q): entries new, changed, unchanged,\n"
      "removed, excluded; data read (holes are not), stored (new packs).\n"
      "  --name NAME       store the single PATH under NAME\n"
      "  --files-from FILE PATH operands from FILE, one a line, as they are (no\n"
      "                    comments; empty lines skipped; a listed '-' is a\n"
      "                    file); FILE '-': standard input; repeatable\n"
      "  -0, --null        --files-from names are NUL-separated (find -print0)\n"
      "  -f, --force       replace a tree added from another place with this one\n"
      "  --delete          remove stored names below PATH that are gone from it\n"
      "                    (what an exclusion leaves out stays)\n"
      "  --force-read      read every file, even those recorded as unchanged; one\n"
      "                    that holds what is stored stays unchanged\n"
      "  --exclude PATTERN leave out names matching PATTERN (gitignore rules,\n"
      "                    relative to PATH; repeatable)\n"
      "  --exclude-from FILE  patterns from FILE, one a line\n"
      "  --exclude-caches  leave out directories holding a CACHEDIR.TAG\n"
      "  --exclude-if-present NAME[:HEADER]  leave out directories holding NAME\n"
      "                    (a file that begins with HEADER), whole; repeatable\n"
      "  --exclude-larger-than SIZE  leave out files larger than SIZE (bytes, or\n"
      "                    with K, M, G, T: 500K, 2G)\n"
      "  -x, --one-file-system  do not descend into other file systems\n"
      "  -L, --follow-links  store what symbolic links point to, not the links\n"
      "  --no-compress     store data uncompressed (zstd is used when it saves\n"
      "                    1/32 or more; compression reveals sizes, see pqvault(1))\n"
      "  -n, --dry-run     list what would change (new, changed, removed), change\n"
      "                    nothing; takes no lock; with -q the summary alone\n"
      "  --verbose         name every entry and what was done with it\n"
      "  --json            one JSON object per entry on stdout, then a summary\n"
      "  --recipient FILE  write-only add: with the vault's recipient alone (see\n"
      "                    export-recipient; no key file, no passphrase), into\n"
      "                    one inbox batch the owner imports (pqvault import);\n"
      "                    not with --delete\n" },
    { "export-recipient", CMD_EXPORT_RECIPIENT, export_recipient_opts,
      "[-o FILE] [--force] [--unverified]",
      "Write the vault's recipient (vault id, fingerprint, KEM and public key,\n"
      "about 21 KB) for write-only adds (add --recipient).  Read from the key\n"
      "file's public part and verified with the key: unlocks (a passphrase\n"
      "source, else a prompt on the terminal) and checks the config's MAC and\n"
      "the key file's identity against the seed's.\n"
      "  -o, --output FILE write to FILE (default, or '-': standard output)\n"
      "  -f, --force       replace an existing FILE\n"
      "  --unverified      without a passphrase source: export what the storage\n"
      "                    says, unverified (a warning says so)\n" },
    { "inbox", CMD_INBOX, inbox_opts, "[-l]",
      "List the batches write-only adds left in the inbox: id, time, bytes,\n"
      "packs, entries, writer, state.  Time, entries and the writer need the\n"
      "key: with a passphrase source (never a prompt) each batch is opened and\n"
      "verified as import would (exit 4 if one is damaged or refused).\n"
      "  -l, --long        also every entry each batch would import, as\n"
      "                    list -l shows them (kind, mode, owner, size, name)\n" },
    { "import", CMD_IMPORT, import_opts, "[--quarantine]",
      "Fold the inbox batches into the vault, one commit per batch.  A batch\n"
      "of a writer (pqvault writer add) is imported only if it authenticates\n"
      "as a writer registered and not revoked, and only under that writer's\n"
      "prefix: it is the writer's newer state of its own names (what it no\n"
      "longer has below the trees it added is removed).  A batch made with\n"
      "the bare recipient is refused, or with --quarantine imported under\n"
      "quarantine/ID/ with owners, set-id bits and system attributes dropped.\n"
      "A batch imported before is never imported again (a replay: exit 4).\n"
      "Refused and damaged batches are reported and left in place, the\n"
      "others imported (exit 4).  A batch's files are deleted once its commit\n"
      "is durable.\n"
      "  --quarantine      import bare-recipient batches, stripped, under\n"
      "                    quarantine/\n"
      "  --replace         (no effect: kept for scripts of pqvault 0.2)\n" },
    { "writer", CMD_WRITER, writer_opts, "add NAME [--prefix P] [-o FILE] | list | revoke NAME",
      "Write-only writers: machines that add to the vault (add --recipient\n"
      "CREDENTIAL) but can read, list, change or delete nothing.\n"
      "  writer add NAME   register NAME (or issue it again: its older\n"
      "                    credentials are refused from then on) and write its\n"
      "                    credential (secret: mode 0600; default standard\n"
      "                    output).  Its batches are imported under its prefix\n"
      "                    only.\n"
      "  writer list       the registered writers: name, prefix, generation,\n"
      "                    the epoch that issued it, revoked or not\n"
      "  writer revoke NAME  refuse NAME's batches from now on\n"
      "  --prefix P        where NAME's names go (default: NAME)\n"
      "  -o, --output FILE write the credential to FILE\n"
      "  -f, --force       replace an existing FILE\n" },
    { "log", CMD_LOG, log_opts, "[NAME] [--json] [-n COUNT]",
      "The kept snapshots, newest first: every epoch whose command changed\n"
      "names (add, rm, import) is one, with its time, user and host, command\n"
      "and operands, and what it changed (+added ~changed -removed names, bytes\n"
      "of new data).  With NAME, only those in which NAME changed.  Read them\n"
      "with --at SNAP; see also diff and versions.\n"
      "  -n, --count N     the newest N only\n"
      "  --json            one JSON array\n" },
    { "diff", CMD_DIFF, diff_opts, "SNAP [SNAP] [--prefix NAME] [--json]",
      "What was added (+), removed (-) and changed (M, with what: content,\n"
      "kind, target, mode, owner, time) from the first snapshot to the second\n"
      "(default: the newest state).\n"
      "  --prefix NAME     only NAME and what is below it\n"
      "  --json            one JSON array\n" },
    { "versions", CMD_VERSIONS, versions_opts, "NAME [--json]",
      "The distinct versions of NAME across the kept snapshots, oldest first:\n"
      "the first snapshot that has each, its time and size (or kind); a\n"
      "snapshot without NAME shows as (absent).  Restore one with\n"
      "'pqvault --at EPOCH get NAME'.\n"
      "  --json            one JSON array\n" },
    { "forget", CMD_FORGET, forget_opts,
      "[SNAP...] [--keep-last N] [--keep-hourly N] [--keep-daily N] ... [-n]",
      "Forget snapshots: those named, or those no rule keeps (restic's rules:\n"
      "a snapshot is kept if any rule keeps it; each --keep-UNIT N keeps the\n"
      "newest snapshot of each of the newest N hours, days, ISO weeks, months\n"
      "or years that have one, local time).  Pinned snapshots are kept.  One\n"
      "epoch records what was forgotten; gc then frees the data no kept\n"
      "snapshot needs.  Prints each snapshot's fate and why.\n"
      "  --keep-last N     the newest N\n"
      "  --keep-hourly N, --keep-daily N, --keep-weekly N, --keep-monthly N,\n"
      "  --keep-yearly N   one per hour, day, week, month, year, for N of them\n"
      "  --keep-within D   every one within D of the newest (7d, 2w, 1y6m, 36h)\n"
      "  -n, --dry-run     say what would be kept and forgotten, change nothing\n" },
    { "pin", CMD_PIN, pin_opts, "SNAP",
      "Pin a kept snapshot: forget never removes it (one epoch).\n" },
    { "unpin", CMD_UNPIN, pin_opts, "SNAP",
      "Unpin a pinned snapshot (one epoch).\n" },
    { "mount", CMD_MOUNT, mount_opts, "MOUNTPOINT [-f] [--cache-size SIZE] [--allow-other]",
      "Mount the vault read-only at MOUNTPOINT (FUSE): the newest state at the\n"
      "root (with --at SNAP, that snapshot), every kept snapshot under\n"
      "snapshots/EPOCH-TIME/ (latest: the newest), and under versions/NAME/ each\n"
      "distinct version of the file NAME, named by its first snapshot.  Owners,\n"
      "modes, times, links, hard links, holes and extended attributes as stored;\n"
      "a read decrypts only the chunks it touches.  Unlocks once; returns when\n"
      "the mount answers (the server stays in the background).  The mount shows\n"
      "the vault as it was when mounted.  Unmount with 'fusermount3 -u\n"
      "MOUNTPOINT' (or SIGTERM, SIGINT): the key and the cache are wiped.\n"
      "  -f, --foreground  stay in the foreground until unmounted\n"
      "  --cache-size SIZE memory for decrypted chunks (default 64M; 8M to 64G,\n"
      "                    K, M, G suffixes)\n"
      "  --allow-other     let other users in (as the stored modes allow; needs\n"
      "                    user_allow_other in /etc/fuse.conf unless root)\n" },
    { "get", CMD_GET, get_opts, "NAME... [-o OUT] [--force | --skip-existing] ...",
      "Restore stored files or directory trees.  A file goes to OUT unless OUT\n"
      "is an existing directory, then to OUT/NAME; a directory restores its\n"
      "tree under OUT (default: the current directory); several names go into\n"
      "the directory OUT (created if missing), all in one restore.  A NAME\n"
      "with *, ? or [ is a glob over whole names, as list's ('tree/*.txt',\n"
      "'**' for any depth), unless it is a stored name; a NAME naming nothing\n"
      "is an error (exit 1), the others are restored.  Existing files are\n"
      "refused before anything is written, unless --force or --skip-existing.\n"
      "A file that fails is reported and the rest restored (exit 1, or 4 for\n"
      "damage).  Ends with a summary on stderr (not with -q).\n"
      "  -o, --output OUT  destination; '-' writes regular files to stdout, in turn\n"
      "  -f, --force       replace existing files\n"
      "  --skip-existing   leave existing files as they are\n"
      "  --strip-components N  drop N leading components of each name (as tar)\n"
      "  --to-original     restore where the name was added from (no -o)\n"
      "  -n, --dry-run     say what would be restored, write nothing\n"
      "  --verbose         name every entry restored\n"
      "  --include PATTERN only the names matching PATTERN (whole names, as list's)\n"
      "                    and what is below them\n"
      "  --exclude PATTERN leave out the names matching PATTERN and what is below\n"
      "  --json            one JSON object per entry on stdout, then a summary\n" },
    { "list", CMD_LIST, list_opts, "[PATTERN...] [-l [--bytes]] [--json] [--depth N]",
      "List stored names (sorted).  Each PATTERN is a prefix (a stored name and\n"
      "what is under it) unless it has a *, ? or [, then a glob over whole names\n"
      "('docs/*.pdf', '**' for any depth); a PATTERN matching nothing is an error\n"
      "(exit 1), the others are listed.\n"
      "  -l, --long        mode, owner and group (when recorded), size, modification\n"
      "                    time and name ('name -> target' for a link), then a line\n"
      "                    'N entries, 2.4 MiB in M files'; sizes as 1.5K, 23M on a\n"
      "                    terminal\n"
      "  --bytes           sizes in bytes on a terminal too\n"
      "  --depth N         at most N levels under each prefix (1: like ls)\n"
      "  --json            one JSON array of objects (see pqvault(1))\n" },
    { "rm", CMD_RM, rm_opts, "NAME... [-n] [--verbose]",
      "Remove stored names (a directory name removes everything under it), every\n"
      "NAME in one commit (one epoch, one snapshot).  A NAME with *, ? or [ is a\n"
      "glob over whole names, as list's, unless it is a stored name; a NAME\n"
      "naming nothing is an error (exit 1), the others are removed.  The data\n"
      "stays in the snapshots before, until forget and gc.\n"
      "Ends with a summary on stderr (not with -q).\n"
      "  -n, --dry-run     say what would be removed, change nothing\n"
      "  --verbose         name every entry removed\n" },
    { "check", CMD_CHECK, check_opts, "[--read-data | --no-key] [--repair-index] [--verbose]",
      "Verify the config, the catalogue (every segment from the base up, its\n"
      "chain, the key file's history, this machine's last view of the vault)\n"
      "and the presence and size of every pack; report problems on stderr and\n"
      "a summary on stdout.  What interrupted commands left (leftovers,\n"
      "temporary files: not damage) is counted in one line on stderr.\n"
      "  --read-data       also every pack's hash and every extent's tags\n"
      "  --no-key          without the passphrase: the structure of the config,\n"
      "                    key file, segments and packs only\n"
      "  --verbose         also list each leftover (a pack or segment nothing\n"
      "                    refers to) and temporary file, which are otherwise\n"
      "                    counted in one line (gc removes them)\n"
      "  --repair-index    first, chunks whose records were lost (a damaged\n"
      "                    segment) looked for in the packs' own tables and\n"
      "                    recorded again (one epoch; takes the writer lock)\n" },
    { "passwd", CMD_PASSWD, passwd_opts,
      "[--slot 0|1] [--clear] [--kdf t=N,m=KIB,p=N | --kdf-time DURATION]",
      "Set or change the passphrase of a key slot (default: the slot that\n"
      "unlocked).  The current passphrase comes from the passphrase sources,\n"
      "the new one from --new-passphrase-file, --new-passphrase-fd,\n"
      "$PQVAULT_NEW_PASSPHRASE or the terminal (asked twice).\n"
      "  --slot 0|1        the slot to write\n"
      "  --clear           make --slot unused instead (not the slot that unlocked)\n"
      "  --kdf t=N,m=KIB,p=N  Argon2id cost of the slot (default t=3,m=65536,p=4;\n"
      "                    above m=1048576 or t=16 unlocking needs --kdf-limit)\n"
      "  --kdf-time DURATION  instead of --kdf: the cost whose unlock (this slot and\n"
      "                    the other at its own cost) takes about DURATION here,\n"
      "                    measured after unlocking (as init --kdf-time)\n"
      "  --new-passphrase-file FILE, --new-passphrase-fd N  source of the new one\n" },
    { "recover", CMD_RECOVER, recover_opts,
      "[--recovery-file FILE] [--kdf t=N,m=KIB,p=N | --kdf-time DURATION]",
      "Write a new key file from the recovery code, slot 0 sealed under a new\n"
      "passphrase (from the passphrase sources; asked twice on the terminal).\n"
      "The code comes from --recovery-file, $PQVAULT_RECOVERY_CODE or the\n"
      "terminal (shown as typed; case, spaces and dashes do not matter; three\n"
      "tries), and is checked before the new passphrase is asked for.\n"
      "  --recovery-file FILE  read the recovery code from FILE\n"
      "  --kdf t=N,m=KIB,p=N   Argon2id cost of slot 0 (as for init)\n"
      "  --kdf-time DURATION   instead of --kdf: measured here once the code is\n"
      "                        checked (as init --kdf-time)\n" },
    { "info", CMD_INFO, info_opts, "",
      "Show the vault's format version, id, suites, fingerprint, key slot\n"
      "parameters and counts.  Needs no passphrase and no key file: the config's\n"
      "lines are then marked unverified.  With --passphrase-file, -fd, -command\n"
      "or $PQVAULT_PASSPHRASE (never a prompt) it unlocks, verifies them, names\n"
      "the slot the passphrase opened and counts what gc would free\n"
      "(reclaimable).  A slot is known to be in use if it opened or its cost is\n"
      "not the default; otherwise that cannot be known (an unused slot is random\n"
      "bytes at the default cost).  See also stats.\n" },
    { "stats", CMD_STATS, stats_opts, "[--json]",
      "Count what the newest state (or --at SNAP's) holds and what it costs, as\n"
      "restic's stats: its entries, its files' logical size (and data, holes\n"
      "not stored), the distinct data they use (chunks) with the deduplication\n"
      "ratio, what that data takes stored with the compression ratio; the\n"
      "snapshots kept; the packs and segments in the storage, and what gc\n"
      "would free (leftovers).  Reads the catalogue, no data.\n"
      "  --json            one JSON object\n" },
    { "speed", CMD_SPEED, speed_opts, "[--kdf-time DURATION] [--kdf-only] [--quick]",
      "Measure the AEAD suites and the FrodoKEM parameter sets on this CPU\n"
      "and mark the choices of auto mode; then Argon2id (medians, ms) at init's\n"
      "default cost and at m = 64, 256, 1024 MiB (at most half the available\n"
      "memory) and t = 1..4 as time allows, and recommend the --kdf whose\n"
      "unlock takes about a target time here (as init --kdf-time picks it).\n"
      "About 15 s.  Needs no vault.\n"
      "  --kdf-time DURATION  the target (default 1s; 100ms to 60s)\n"
      "  --kdf-only        Argon2id only\n"
      "  --quick           a first look in a second or two: shorter buffers,\n"
      "                    fewer runs, the Argon2id table at m = 8, 16, 32 MiB\n" },
    { "gc", CMD_GC, gc_opts, "",
      "Fold the catalogue's chain into one base segment when it holds replaced\n"
      "or removed names, then remove what nothing refers to: packs, older\n"
      "segments, what an upgrade left, temporary files.\n" },
    { "upgrade", CMD_UPGRADE, upgrade_opts, "",
      "Upgrade a format-1 vault to format 2 (add does it too).  The data stays\n"
      "where it is; the records become one catalogue segment.\n" },
    { "copy", CMD_COPY, copy_opts, "--to DIR|s3://BUCKET[/PREFIX] [--verbose]",
      "Copy the vault to another place (a directory or a bucket, either way)\n"
      "without re-encrypting: what its current state refers to, every blob\n"
      "verified, the config last.  Run again after an interruption, it goes on\n"
      "where it stopped.  A key file kept outside the vault stays where it is.\n"
      "  --to WHERE        the destination (created if missing)\n"
      "  --verbose         name every blob copied\n" },
    { "accept", CMD_ACCEPT, accept_opts, "",
      "Take the vault as it is now as the current state on this machine, after\n"
      "a rollback or fork error whose cause you know (a vault you restored from\n"
      "a copy).  The vault's own chain must still verify.\n" },
    { "help", CMD_HELP, help_opts, "[COMMAND]",
      "Show the general help or the help of COMMAND.\n" },
    { NULL, 0, NULL, NULL, NULL }
};

const struct command *
command_find(const char *name)
{
    for (const struct command *c = commands; c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* Words other tools use for what a command does (restic, borg, tar, git,
 * the shell): suggested as that command. */
static const struct {
    const char *word, *command;
} command_aliases[] = {
    { "ls", "list" }, { "dir", "list" }, { "show", "list" },
    { "restore", "get" }, { "extract", "get" }, { "cat", "get" }, { "checkout", "get" },
    { "backup", "add" }, { "put", "add" }, { "store", "add" }, { "save", "add" },
    { "remove", "rm" }, { "delete", "rm" }, { "del", "rm" }, { "forget", "rm" },
    { "verify", "check" }, { "fsck", "check" }, { "password", "passwd" },
    { "passphrase", "passwd" }, { "key", "passwd" }, { "status", "info" },
    { "statistics", "stats" }, { "du", "stats" }, { "benchmark", "speed" }, { "bench", "speed" },
    { "prune", "gc" }, { "clean", "gc" }, { "migrate", "upgrade" }, { "clone", "copy" },
    { "snapshots", "log" }, { "history", "log" },
    { "sync", "copy" }, { "create", "init" }, { "new", "init" },
};

/* edit_distance(a, b): optimal string alignment distance (insertions,
 * deletions, substitutions, swaps of two neighbours), ASCII case ignored;
 * words longer than 31 characters count as far from everything. */
static size_t
edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t d[32][32];

    if (la >= 32 || lb >= 32)
        return (size_t)-1;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int ca = a[i - 1] | 0x20, cb = b[j - 1] | 0x20;   /* letters: lower */
            size_t best = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == (b[j - 2] | 0x20) && (a[i - 2] | 0x20) == cb &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

const char *
command_suggest(const char *word)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1, len = strlen(word);

    for (size_t i = 0; i < sizeof(command_aliases) / sizeof(command_aliases[0]); i++)
        if (strcasecmp(word, command_aliases[i].word) == 0)
            return command_aliases[i].command;
    for (const struct command *c = commands; c->name != NULL; c++) {
        size_t dist = edit_distance(word, c->name);
        if (dist < best_d) {
            best_d = dist;
            best = c->name;
        }
    }
    /* A typo, not another word: at most 2 edits, and fewer than half of
     * the word's letters (so "gx" does not become "gc"). */
    if (best == NULL || best_d > 2 || best_d * 2 >= len)
        return NULL;
    return best;
}

void
command_print_help(const struct command *c, FILE *f)
{
    fprintf(f, "usage: pqvault [GLOBAL OPTIONS] %s%s%s\n\n%s", c->name,
        *c->usage ? " " : "", c->usage, c->help);
    fprintf(f, "\nGlobal options: see 'pqvault --help'.\n");
}

void
commands_print_general_help(FILE *f)
{
    fprintf(f,
        "usage: pqvault [-v VAULT] [--keyfile FILE] [--passphrase-file FILE |\n"
        "               --passphrase-fd N | --passphrase-command CMD] [-q] [--wait]\n"
        "               [--kdf-limit m=KIB,t=N] [--s3-endpoint URL] [--s3-ca-file FILE]\n"
        "               [--state-dir DIR] [--at SNAP]\n"
        "               COMMAND [ARGS...]\n\n"
        "pqvault keeps files encrypted at rest with post-quantum hybrid keys.\n"
        "Global options may come before or after the command; a value beginning\n"
        "with '-' is given attached (--name=-x).\n\n"
        "Commands:\n");
    for (const struct command *c = commands; c->name != NULL; c++)
        fprintf(f, "  %-8s %s\n", c->name, c->usage);
    fprintf(f,
        "\nGlobal options:\n"
        "  -v, --vault DIR|s3://BUCKET[/PREFIX]\n"
        "                              vault directory or S3 location (default\n"
        "                              $PQVAULT_DIR, else\n"
        "                              ${XDG_DATA_HOME:-$HOME/.local/share}/pqvault)\n"
        "  --keyfile FILE              key file (default $PQVAULT_KEYFILE, else\n"
        "                              VAULT/keyfile)\n"
        "  --passphrase-file FILE      passphrase: first line of FILE\n"
        "  --passphrase-fd N           passphrase: read from descriptor N\n"
        "  --passphrase-command CMD    passphrase: first line of CMD's output\n"
        "                              (else $PQVAULT_PASSPHRASE, else a prompt)\n"
        "  --s3-endpoint URL           S3 endpoint (default $AWS_ENDPOINT_URL_S3, else\n"
        "                              $AWS_ENDPOINT_URL, else AWS in $AWS_REGION or\n"
        "                              $AWS_DEFAULT_REGION); credentials from\n"
        "                              $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY and\n"
        "                              $AWS_SESSION_TOKEN, else ~/.aws/credentials\n"
        "                              ($AWS_SHARED_CREDENTIALS_FILE; $AWS_PROFILE)\n"
        "  --s3-ca-file FILE           CA bundle for an https:// endpoint (default\n"
        "                              $AWS_CA_BUNDLE, else the system's)\n"
        "  -q, --quiet                 no progress bar or informational messages\n"
        "  --wait                      wait for another writer's lock\n"
        "  --kdf-limit m=KIB,t=N       compute key file slots up to this Argon2id cost\n"
        "                              (default m=1048576,t=16: a forged key file\n"
        "                              cannot make an unlock cost more)\n"
        "  --state-dir DIR             where this machine remembers the vaults' epochs\n"
        "                              (default $PQVAULT_STATE_DIR, else\n"
        "                              ${XDG_STATE_HOME:-$HOME/.local/state}/pqvault;\n"
        "                              without one, rollbacks are not detected)\n"
        "  --at SNAP                   reading commands (list, get, check, stats,\n"
        "                              mount) read the kept snapshot SNAP: an epoch,\n"
        "                              latest, latest~N, a date YYYY-MM-DD (that day's\n"
        "                              newest)\n"
        "                              or a time YYYY-MM-DDTHH:MM[:SS] (the newest at or\n"
        "                              before it), local time ('pqvault log' lists them)\n"
        "  -h, --help                  this help ('pqvault help COMMAND': a command's)\n"
        "  --version                   print the version\n\n"
        "Exit status: 0 success, 1 error, 2 usage, 3 wrong passphrase or recovery\n"
        "code, 4 integrity failure, 5 no vault, 6 locked by another writer.\n"
        "See pqvault(1).\n");
}
