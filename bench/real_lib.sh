# bench/real_lib.sh: the setup shared by the real-data scenarios
# (bench/kernel.sh, bench/versions.sh, bench/steps.sh, bench/history.sh),
# sourced after the caller has set NAME (its scratch directory's suffix) and
# HERE (the bench directory).  POSIX sh.  Builds on bench/compare_lib.sh
# (timed, medians, cells, ratios), which it sources.
#
# Environment (every scenario):
#   RUNS       repetitions (default 3); medians with min-max
#   PQVAULT    the binary (default build/pqvault of this checkout)
#   BENCH_DIR  scratch directory (default build/bench-$NAME; removed at the
#              start and at the end); it is the file system measured
#   PQ_KDF     pqvault init's --kdf (default t=3,m=65536,p=4, the default)
#   BORG_ENCRYPTION  borg init's mode (default repokey, as compare.sh)
#   BENCH_PASSPHRASE the passphrase of every repository (default a fixed
#              phrase); PQVAULT_PASSPHRASE, RESTIC_PASSWORD and
#              BORG_PASSPHRASE, when set, take precedence for their tool
#   PQ_ADD_OPTS extra options of every `pqvault add` (default none: the
#              tool's default, which keeps names gone from the source)
#   BENCH_FRESH_FS  (kernel.sh, versions.sh) yes: every repetition's
#              repositories and restores on an ext4 file system of their
#              own, made anew (a sparse image in the scratch directory,
#              loop-mounted), so that no repetition or tool pays for the
#              inodes another one freed (ext4 skips recently freed inodes
#              when it allocates, and discards them at commit); no: in the
#              scratch directory; auto (default): yes when run as root with
#              mkfs.ext4 and a free loop device, else no
#
# Each tool keeps its state and cache in the scratch directory: HOME,
# XDG_*, RESTIC_CACHE_DIR, BORG_BASE_DIR.  Tools run with their defaults;
# restic and borg are made durable by the `sync` that `timed` adds (column
# 2, "until durable"), which is also measured after pqvault.

RUNS=${RUNS:-3}
ROOT=$(cd "$HERE/.." && pwd)
PQVAULT=${PQVAULT:-$ROOT/build/pqvault}
BENCH_DIR=${BENCH_DIR:-$ROOT/build/bench-$NAME}
PQ_KDF=${PQ_KDF:-t=3,m=65536,p=4}
BORG_ENCRYPTION=${BORG_ENCRYPTION:-repokey}
PQ_ADD_OPTS=${PQ_ADD_OPTS:-}
KERNEL_TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
KERNEL_SUBSET=${KERNEL_SUBSET:-}

. "$HERE/compare_lib.sh"

SELF=$(basename "$0")
case $PQVAULT in /*) ;; *) PQVAULT=$(pwd)/$PQVAULT ;; esac

# need TOOL...: stop with a message unless every tool is there.
need() {
    _miss=""
    [ -x "$PQVAULT" ] || _miss="$_miss $PQVAULT"
    for _t in "$@"; do
        command -v "$_t" >/dev/null 2>&1 || _miss="$_miss $_t"
    done
    [ -z "$_miss" ] || {
        echo "$SELF: missing:$_miss (make -j2; sh scripts/install-deps.sh as root)" >&2
        exit 1
    }
}

# scratch: the scratch directory $W (removed at exit), the tools' private
# state, the passphrases, LOAD0 and T_START.
scratch() {
    case $BENCH_DIR in "" | / | "$ROOT" | "$ROOT/" | "${HOME:-/}")
        echo "$SELF: refusing BENCH_DIR=$BENCH_DIR" >&2
        exit 2
        ;;
    esac
    rm -rf "$BENCH_DIR"
    mkdir -p "$BENCH_DIR"
    W=$(cd "$BENCH_DIR" && pwd)
    trap 'cd /; rm -rf "$W"' EXIT
    trap 'exit 130' INT TERM HUP
    mkdir -p "$W/home" "$W/xdg/state" "$W/xdg/cache" "$W/xdg/config" "$W/xdg/data" \
        "$W/src" "$W/out" "$W/repo"
    _pass=${BENCH_PASSPHRASE:-correct horse battery staple}
    export PQVAULT_PASSPHRASE="${PQVAULT_PASSPHRASE:-$_pass}"
    export RESTIC_PASSWORD="${RESTIC_PASSWORD:-$_pass}"
    export BORG_PASSPHRASE="${BORG_PASSPHRASE:-$_pass}"
    export HOME="$W/home" XDG_STATE_HOME="$W/xdg/state" XDG_CACHE_HOME="$W/xdg/cache" \
        XDG_CONFIG_HOME="$W/xdg/config" XDG_DATA_HOME="$W/xdg/data"
    export RESTIC_CACHE_DIR="$W/xdg/cache/restic" BORG_BASE_DIR="$W/home"
    export BORG_RELOCATED_REPO_ACCESS_IS_OK=yes BORG_CHECK_I_KNOW_WHAT_I_AM_DOING=NO
    unset PQVAULT_DIR PQVAULT_KEYFILE RESTIC_REPOSITORY BORG_REPO RESTIC_PASSWORD_FILE \
        RESTIC_PASSWORD_COMMAND BORG_PASSCOMMAND BORG_PASSPHRASE_FD 2>/dev/null || true
    PQ="$PQVAULT -q"
    LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
    T_START=$(date +%s)
    echo "$SELF: load average at start: $LOAD0" >&2
}

pq_init() { $PQ -v "$1" init --kdf "$PQ_KDF" >/dev/null; }
restic_init() { restic -q -r "$1" init >/dev/null; }
borg_init() { borg init -e "$BORG_ENCRYPTION" "$1" >/dev/null 2>&1; }
# timed_try STEP CMD...: timed, but a failure returns 1 (its stderr in
# $W/.err) instead of stopping the script.
# fresh_fs_init: after scratch, for fresh_fs: F (the file system of a
# repetition's repositories and restores) is the scratch directory until
# fresh_fs makes one; the exit trap unmounts it.
fresh_fs_init() {
    BENCH_FRESH_FS=${BENCH_FRESH_FS:-auto}
    if [ "$BENCH_FRESH_FS" = auto ]; then
        BENCH_FRESH_FS=no
        if [ "$(id -u)" -eq 0 ] && command -v mkfs.ext4 >/dev/null &&
            command -v losetup >/dev/null && losetup -f >/dev/null 2>&1; then
            BENCH_FRESH_FS=yes
        fi
    fi
    F=$W
    trap 'cd /; [ "$F" = "$W" ] || umount "$F"; rm -rf "$W"' EXIT
    fs_note="in the scratch directory's file system"
    [ "$BENCH_FRESH_FS" = no ] ||
        fs_note="on a new ext4 file system for each repetition (BENCH_FRESH_FS)"
}
# fresh_fs: a new, empty F for the repetition about to start (BENCH_FRESH_FS).
fresh_fs() {
    [ "$BENCH_FRESH_FS" = yes ] || return 0
    [ "$F" = "$W" ] || umount "$F"
    F=$W
    rm -f "$W/fs.img"
    truncate -s 24G "$W/fs.img"
    mkfs.ext4 -q -F "$W/fs.img" >/dev/null
    mkdir -p "$W/fs"
    mount -o loop "$W/fs.img" "$W/fs"
    F=$W/fs
}
timed_try() { (trap - EXIT; timed "$@"); }
# warm DIR...: every regular file under DIR read once (untimed), so that
# each tool's add starts with its source in the page cache.  Without it the
# tool after borg reads from the disk: borg drops what it read from the
# page cache (posix_fadvise POSIX_FADV_DONTNEED on every file, seen with
# strace), and this machine's kernel pages out page cache unused for a
# minute (DAMON).  Which tool paid depended on the order of the turn.
warm() { find "$@" -type f -exec cat {} + >/dev/null; }
fresh_out() { rm -rf "$W/out"; mkdir "$W/out"; }
# size_of DIR: its apparent bytes (du -sb); a pqvault vault's without its
# reserve (DIR/reserve: 16 MiB of free space held so that rm and gc work on
# a full disk, DESIGN.md section 3; no data), said where the sizes are.
size_of() {
    _s=$(du -sb "$1" | cut -f1)
    [ ! -f "$1/reserve" ] || [ ! -f "$1/config" ] || _s=$((_s - $(stat -c %s "$1/reserve")))
    echo "$_s"
}

# kernel_tree DEST: unpack the kernel tarball ($KERNEL_TARBALL, any
# compression tar recognises) into DEST (a new directory named after the
# tree, e.g. $W/src/linux), with `tar -xf`, never in place.  KERNEL_SUBSET=N
# keeps the files at the top of the tree and only the first N top-level
# directories in the tarball's (sorted) order: 1 is Documentation, 2 adds
# LICENSES, 3 arch; KERNEL_SUBSET="block crypto" (names) keeps those.
kernel_tree() {
    DEST=$1
    [ -f "$KERNEL_TARBALL" ] || {
        echo "$SELF: no $KERNEL_TARBALL (linux-source-6.1: sh scripts/install-deps.sh, or set KERNEL_TARBALL)" >&2
        exit 1
    }
    mkdir -p "$W/unpack"
    if [ -z "$KERNEL_SUBSET" ]; then
        tar -xf "$KERNEL_TARBALL" -C "$W/unpack"
    else
        # The members to extract: top-level files, and the chosen directories.
        tar -tf "$KERNEL_TARBALL" >"$W/.members"
        top=$(head -1 "$W/.members" | cut -d/ -f1)
        awk -F/ -v top="$top" -v sub_="$KERNEL_SUBSET" '
            BEGIN { n = split(sub_, want, " "); num = (sub_ ~ /^[0-9]+$/) }
            $1 != top { next }
            NF == 2 && $2 != "" { print; next }             # a top-level file
            NF >= 2 && $2 != "" && !($2 in seen) {
                seen[$2] = 1
                if (num) { if (++k <= sub_ + 0) keep[$2] = 1 }
                else for (i = 1; i <= n; i++) if (want[i] == $2) keep[$2] = 1
            }
            NF >= 3 && ($2 in keep) && !($2 in done) { done[$2] = 1; print top "/" $2 }
        ' "$W/.members" >"$W/.want"
        rm -f "$W/.members"
        tar -xf "$KERNEL_TARBALL" -C "$W/unpack" --no-wildcards -T "$W/.want"
        rm -f "$W/.want"
    fi
    set -- "$W"/unpack/*
    [ $# -eq 1 ] && [ -d "$1" ] || { echo "$SELF: $KERNEL_TARBALL: not one top directory" >&2; exit 1; }
    mv "$1" "$DEST"
    rmdir "$W/unpack"
}

# tree_stats DIR: sets t_files, t_links, t_dirs, t_bytes (regular files'
# apparent bytes).
tree_stats() {
    t_files=$(find "$1" -type f | wc -l)
    t_links=$(find "$1" -type l | wc -l)
    t_dirs=$(find "$1" -type d | wc -l)
    t_bytes=$(find "$1" -type f -printf '%s\n' | awk '{s+=$1} END{printf "%.0f", s+0}')
}

# tree_sums DIR NAME: md5 of every regular file under DIR/NAME (paths
# relative to DIR, sorted) on stdout.
tree_sums() {
    (cd "$1" && find "$2" -type f -print0 | sort -z | xargs -0r md5sum)
}

# verify TOOL SUMS DIR NAME: one Markdown list line comparing the regular
# files restored under DIR/NAME with SUMS (tree_sums of the source), and the
# symbolic links restored against the source's ($t_links_src).
verify() {
    tree_sums "$3" "$4" >"$W/.restored.md5"
    _links=$(find "$3/$4" -type l 2>/dev/null | wc -l)
    _v=$(awk '
        { h = substr($0, 1, 32); p = substr($0, 35) }
        NR == FNR { a[p] = h; n++; next }
        { seen[p] = 1; if (!(p in a)) extra++; else if (a[p] != h) diff++; else same++ }
        END {
            for (p in a) if (!(p in seen)) miss++
            if (same == n && !extra) printf "all %d regular files identical", n
            else {
                printf "%d of %d regular files identical", same, n
                if (diff) printf ", **%d differ**", diff
                if (miss) printf ", **%d missing**", miss
                if (extra) printf ", %d extra (names not in the source)", extra
            }
        }' "$2" "$W/.restored.md5")
    echo "- $1: $_v; symbolic links restored: $_links of ${t_links_src:-?}"
    rm -f "$W/.restored.md5"
}

# Table helpers.  row LABEL STEP [COL]: "| LABEL | pq | restic | borg |
# pqvault / restic |" from the results pq_STEP, restic_STEP, borg_STEP.
row() {
    _c=${3:-1}
    _r="-"
    have "pq_$2" && have "restic_$2" && _r=$(ratio "$(med "pq_$2" "$_c")" "$(med "restic_$2" "$_c")")
    echo "| $1 | $(cell "pq_$2" "$_c") | $(cell "restic_$2" "$_c") | $(cell "borg_$2" "$_c") | $_r |"
}
# rssrow LABEL STEP: peak RSS of each tool in STEP.
rssrow() {
    echo "| $1 | $(rss "pq_$2") | $(rss "restic_$2") | $(rss "borg_$2") | $(rss_ratio "$2") |"
}
rss_ratio() {
    have "pq_$1" && have "restic_$1" || { printf -- "-"; return; }
    ratio "$(awk 'BEGIN{m=0} $3>m{m=$3} END{print m}' "$W/res/pq_$1")" \
        "$(awk 'BEGIN{m=0} $3>m{m=$3} END{print m}' "$W/res/restic_$1")"
}
# maxrss TOOL STEP...: the largest peak RSS of TOOL over STEPs, MiB.
maxrss() {
    _t=$1
    shift
    _m=0
    for _s in "$@"; do
        have "${_t}_$_s" || continue
        _m=$(awk -v m="$_m" '$3>m{m=$3} END{print m}' "$W/res/${_t}_$_s")
    done
    awk -v m="$_m" 'BEGIN{printf "%.0f MiB", m/1024}'
}
# srow LABEL PQ RESTIC BORG: sizes in bytes as MiB cells, with the ratio.
srow() {
    echo "| $1 | $(mib "$2") | $(mib "$3") | $(mib "$4") | $(ratio "$2" "$3") |"
}
# mb BYTES: "123.4 MB" (10^6 bytes).
mb() { awk -v b="$1" 'BEGIN{printf "%.1f MB", b / 1e6}'; }

# tools_line: the versions and settings, a Markdown list item.
tools_line() {
    echo "- Tools: $(ver restic version), $(ver borg --version); borg \`init -e $BORG_ENCRYPTION\` (default lz4 compression), restic repository v2 (default auto compression), pqvault \`init --kdf $PQ_KDF\`${PQ_ADD_OPTS:+, \`add $PQ_ADD_OPTS\`}"
}
# footer: load and duration at the end.
footer() {
    echo "- $RUNS repetitions, tools interleaved in each (pqvault, restic, borg at every step); seconds, median (min-max); \"until durable\": the command and then \`sync\` (every tool, pqvault too); run took $(($(date +%s) - T_START)) s; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
}
