# tests/cli/restore_caps.sh: what a restore as root gives back (issue 17
# item 4): the kernel clears a file's capabilities (security.capability) and
# set-id bits when its owner changes, so the owner comes first, then the
# mode, then the extended attributes (security.capability among them), then
# the times.  A file with cap_net_raw+ep, a set-uid file of another owner,
# a file with user and trusted attributes and a directory with an
# attribute come back as they were, into a tree and as a single file.
# Needs root and setcap/getcap (libcap2-bin); CI runs as root.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v setcap >/dev/null 2>&1 ||
    ! command -v getcap >/dev/null 2>&1 || ! command -v setfattr >/dev/null 2>&1; then
    # Not counted as passed: say so, so a run without root shows it.
    echo "# SKIP - restoring capabilities needs root, setcap/getcap (libcap2-bin) and setfattr (attr)"
    finish
fi
init_vault || finish
S=$T/src
mkdir -p "$S/dir"
printf 'ping\n' >"$S/ping"
chmod 0755 "$S/ping"
printf 'suid\n' >"$S/suid"
if ! setcap cap_net_raw+ep "$S/ping" 2>/dev/null; then
    echo "# SKIP - this file system takes no file capabilities"
    finish
fi
chown 65534:65534 "$S/suid"
chmod 4755 "$S/suid"
setfattr -n user.note -v hello "$S/suid"
setfattr -n trusted.mark -v t1 "$S/suid"
setfattr -n user.dirnote -v d1 "$S/dir"
touch -d '2020-01-02 03:04:05.123456789' "$S/ping" "$S/suid"
touch -d '2019-05-06 07:08:09' "$S/dir"
caps_of() { getcap "$1" | sed 's/^[^ ]* *//'; }
WANT_CAPS=$(caps_of "$S/ping")
check_ok "the source has its capability ($WANT_CAPS)" [ -n "$WANT_CAPS" ]
expect_status 0 pq add "$S"

# A tree.
expect_status 0 pq get src -o "$T/out"
check_ok "tree: capability restored ($(caps_of "$T/out/src/ping"))" \
    [ "$(caps_of "$T/out/src/ping")" = "$WANT_CAPS" ]
check_ok "tree: set-uid file restored with its owner and mode 4755" \
    [ "$(stat -c '%u:%g %a' "$T/out/src/suid")" = "65534:65534 4755" ]
check_ok "tree: user and trusted attributes restored" \
    test "$(getfattr --only-values -n user.note "$T/out/src/suid" 2>/dev/null)" = hello -a \
    "$(getfattr --only-values -n trusted.mark "$T/out/src/suid" 2>/dev/null)" = t1
check_ok "tree: directory attribute restored" \
    [ "$(getfattr --only-values -n user.dirnote "$T/out/src/dir" 2>/dev/null)" = d1 ]
check_ok "tree: times restored after the attributes" \
    test "$(stat -c %y "$T/out/src/ping")" = "$(stat -c %y "$S/ping")" -a \
    "$(stat -c %y "$T/out/src/suid")" = "$(stat -c %y "$S/suid")" -a \
    "$(stat -c %Y "$T/out/src/dir")" = "$(stat -c %Y "$S/dir")"
# A single file.
expect_status 0 pq get src/ping -o "$T/one"
check_ok "single file: capability restored" [ "$(caps_of "$T/one")" = "$WANT_CAPS" ]
check_ok "single file: mode and time restored" \
    [ "$(stat -c '%a %y' "$T/one")" = "$(stat -c '%a %y' "$S/ping")" ]
# --force over an existing file.
expect_status 0 pq get src/ping -o "$T/one" --force
check_ok "--force: capability restored" [ "$(caps_of "$T/one")" = "$WANT_CAPS" ]
finish
