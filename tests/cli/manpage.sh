# tests/cli/manpage.sh: the man page (docs/pqvault.1) agrees with the
# program: the version of --version, a section for every command --help
# lists and no other, every option of every command's help, and the
# environment variables --help names (the S3 ones both ways).
. "$(dirname "$0")/lib.sh"

MAN=$(dirname "$0")/../../docs/pqvault.1
if [ ! -f "$MAN" ]; then
    fail "docs/pqvault.1 not found next to the tests"
    finish
fi
# The page's text with roff's escaped dashes as plain ones.
sed 's/\\-/-/g' "$MAN" >"$T/man"

# ---- version ----
expect_status 0 "$PQV" --version
prog=$(sed -n 's/^pqvault \([^ ]*\) .*/\1/p' "$OUT")
page=$(sed -n 's/^\.TH PQVAULT 1 "[^"]*" "pqvault \([^"]*\)".*/\1/p' "$T/man")
check_ok "the man page's version ($page) is --version's ($prog)" test -n "$prog" -a "$page" = "$prog"

# ---- commands: --help's list and the page's COMMANDS sections ----
expect_status 0 "$PQV" --help
cp "$OUT" "$T/help"
sed -n '/^Commands:$/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p' "$T/help" | sort -u >"$T/help-commands"
# A command's section is a tagged paragraph ".TP" then ".B NAME ...";
# its options are tagged paragraphs too, but begin with "-".
awk '/^\.SH /{inside = ($0 ~ /^\.SH COMMANDS/); next}
    inside && prev == ".TP" && $1 == ".B" && $2 !~ /^-/ {print $2}
    {prev = $0}' "$T/man" | sort -u >"$T/man-commands"
check_ok "--help lists commands" test "$(wc -l <"$T/help-commands")" -ge 10
for c in $(comm -23 "$T/help-commands" "$T/man-commands"); do
    fail "command '$c' of --help has no section in the man page"
done
for c in $(comm -13 "$T/help-commands" "$T/man-commands"); do
    fail "the man page's command '$c' is not in --help"
done
check_ok "every command of --help has a man page section and every section a command" \
    cmp -s "$T/help-commands" "$T/man-commands"

# ---- options: every long option of every command's help is in the page ----
missing=""
for c in $(cat "$T/help-commands"); do
    "$PQV" help "$c" >"$T/cmdhelp" 2>&1
    for o in $(grep -o -- '--[a-z][a-z0-9-]*' "$T/cmdhelp" | sort -u); do
        grep -qF -- "$o" "$T/man" || missing="$missing $c:$o"
    done
done
for o in $(grep -o -- '--[a-z][a-z0-9-]*' "$T/help" | sort -u); do
    grep -qF -- "$o" "$T/man" || missing="$missing global:$o"
done
check_ok "every option of the help texts is in the man page (missing:${missing:- none})" \
    test -z "$missing"

# ---- environment variables ----
missing=""
for e in $(grep -o '\$[A-Z][A-Z0-9_]*' "$T/help" | tr -d '$' | sort -u); do
    grep -qw -- "$e" "$T/man" || missing="$missing $e"
done
check_ok "every variable --help names is in the man page (missing:${missing:- none})" \
    test -z "$missing"
check_ok "--help names the S3 endpoint variables" grep -q 'AWS_ENDPOINT_URL' "$T/help"
# The S3 variables of the page's ENVIRONMENT section, and --help's.
awk '/^\.SH /{inside = ($0 ~ /^\.SH ENVIRONMENT/); next} inside' "$T/man" |
    grep -o 'AWS_[A-Z0-9_]*' | sort -u >"$T/man-aws"
grep -o 'AWS_[A-Z0-9_]*' "$T/help" | sort -u >"$T/help-aws"
check_ok "the man page's ENVIRONMENT names S3 variables" test -s "$T/man-aws"
check_ok "--help and the man page name the same S3 variables (page only: $(comm -23 "$T/man-aws" "$T/help-aws" | tr '\n' ' '); help only: $(comm -13 "$T/man-aws" "$T/help-aws" | tr '\n' ' '))" \
    cmp -s "$T/man-aws" "$T/help-aws"
# The endpoint's order of precedence is the same in both.
help_order=$(tr '\n' ' ' <"$T/help" | sed 's/  */ /g' | grep -o 'AWS_ENDPOINT_URL[A-Z0-9_]*' | tr '\n' ' ')
man_order=$(awk '/^\.BI -\-s3-endpoint/,/^\.TP/' "$T/man" | grep -o 'AWS_ENDPOINT_URL[A-Z0-9_]*' | tr '\n' ' ')
check_ok "the endpoint variables come in the same order ('$help_order' in --help, '$man_order' in the page)" \
    test -n "$man_order" -a "$help_order" = "$man_order"

finish
