# bench/compare_lib.sh: helpers shared by bench/compare.sh and
# bench/compare_s3.sh (sourced, POSIX sh).  The caller sets W (its scratch
# directory, absolute) before using them; results go to $W/res/STEP, one
# line per run: "seconds seconds_until_durable peak_rss_kib".

# timed STEP CMD...: run CMD under GNU time (peak RSS, %M: the largest
# process of the command, pipelines included when CMD is `sh -c`), then a
# `sync`.  Records the wall time of CMD alone (the tool's own default
# durability) and of CMD + sync (until durable).  A `sync` runs untimed
# first, so writes of earlier steps are not counted.  Wall times come from
# the nanosecond clock (GNU time's %e has 10 ms steps).  CMD's stdout is
# discarded (or written to $TIMED_STDOUT when set); a failure prints its
# stderr and stops the script.
timed() {
    _step=$1
    shift
    sync
    _t0=$(date +%s%N)
    if ! /usr/bin/time -o "$W/.time" -f "%M" "$@" >"${TIMED_STDOUT:-/dev/null}" 2>"$W/.err"; then
        echo "$(basename "$0"): step $_step failed: $*" >&2
        cat "$W/.err" >&2
        exit 1
    fi
    _t1=$(date +%s%N)
    sync
    _t2=$(date +%s%N)
    mkdir -p "$W/res"
    echo "$_t0 $_t1 $_t2 $(tail -1 "$W/.time")" |
        awk '{printf "%.6f %.6f %s\n", ($2 - $1) / 1e9, ($3 - $1) / 1e9, $4}' >>"$W/res/$_step"
}

# have STEP: the step has results.
have() { [ -s "$W/res/$1" ]; }

# again STEP: true unless STEP's last run took more than STEP_BUDGET
# seconds (default 60): a step that slow is not repeated, so that a slow
# build (format 1 over a slow link) keeps the run's time bounded.
again() {
    have "$1" || return 0
    tail -1 "$W/res/$1" | awk -v b="${STEP_BUDGET:-60}" '{exit !($1 <= b)}'
}

# med STEP [COL]: median of column COL (1: seconds, 2: until durable).
med() {
    awk -v c="${2:-1}" '{print $c}' "$W/res/$1" | sort -n |
        awk '{v[NR]=$1} END{printf "%.6f", NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}

# median_of X...: the middle value of the arguments (the lower of the two
# middle ones), for values gathered in a variable rather than $W/res.
median_of() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# secs X: seconds with 3 significant-ish digits (ms below 1 s).
secs() {
    awk -v x="$1" 'BEGIN{if (x < 1) printf "%.3f", x; else if (x < 100) printf "%.2f", x; else printf "%.0f", x}'
}

# cell STEP [COL]: "median (min-max)" in seconds, or "-" without results.
cell() {
    have "$1" || { printf -- "-"; return; }
    _c=${2:-1}
    _m=$(med "$1" "$_c")
    _lo=$(awk -v c="$_c" '{print $c}' "$W/res/$1" | sort -n | head -1)
    _hi=$(awk -v c="$_c" '{print $c}' "$W/res/$1" | sort -n | tail -1)
    _n=$(wc -l <"$W/res/$1")
    if [ "$_n" -eq 1 ] && [ "${RUNS:-1}" -gt 1 ]; then
        printf "%s (1 run: over the %s s budget)" "$(secs "$_m")" "${STEP_BUDGET:-60}"
    elif [ "$_n" -lt "${RUNS:-1}" ]; then
        printf "%s (%s-%s, %s runs: over the %s s budget)" "$(secs "$_m")" "$(secs "$_lo")" "$(secs "$_hi")" "$_n" "${STEP_BUDGET:-60}"
    else
        printf "%s (%s-%s)" "$(secs "$_m")" "$(secs "$_lo")" "$(secs "$_hi")"
    fi
}

# rss STEP: peak RSS over all runs of STEP, MiB.
rss() {
    have "$1" || { printf -- "-"; return; }
    awk 'BEGIN{m=0} $3>m{m=$3} END{printf "%.0f MiB", m/1024}' "$W/res/$1"
}

# ratio A B: A / B as "1.23x".
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if (b > 0) printf "%.2fx", a / b; else printf "-"}'; }

# minus A B: A - B in seconds (3 decimals) and ms below 1 s.
minus() {
    awk -v a="$1" -v b="$2" 'BEGIN{d = a - b; if (d < 1 && d > -1) printf "%+.0f ms", d * 1000; else printf "%+.2f s", d}'
}

# met OK: "met" or "**not met**" (OK: an awk condition already evaluated
# to 1 or 0).
met() { if [ "$1" = 1 ]; then printf "met"; else printf "**not met**"; fi; }

# le A B: 1 if A <= B (numbers), else 0.
le() { awk -v a="$1" -v b="$2" 'BEGIN{print (a <= b) ? 1 : 0}'; }

# mib BYTES: "123.4 MiB".
mib() { awk -v b="$1" 'BEGIN{printf "%.1f MiB", b / 1048576}'; }

# The checkout's commit when the run started (HERE: the bench directory).
BENCH_GIT=$(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null || echo '?')
[ -z "$(git -C "$HERE/.." status --porcelain --untracked-files=no 2>/dev/null | head -1)" ] ||
    BENCH_GIT="$BENCH_GIT (modified tree)"

# header TITLE (LOAD0: the load average when the run started): the machine
# and the tools' versions (a Markdown list).
header() {
    echo "## $1, $(date -u '+%Y-%m-%d %H:%M UTC'), pqvault $BENCH_GIT"
    echo
    echo "- pqvault: $("$PQVAULT" --version 2>&1 | head -1), git $BENCH_GIT"
    echo "- CPU: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $(nproc) CPUs available; kernel $(uname -sr)"
    echo "- Scratch directory file system: $(df -T "$W" | awk 'NR==2{print $2}'); load at start: ${LOAD0:-?}"
}

# ver CMD...: first line of a version command, or "missing".
ver() { "$@" 2>&1 | head -1 || true; }
