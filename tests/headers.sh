#!/bin/sh
# Every header compiles on its own (as libcperciva's tests/buildsingles
# checks): each includes what it uses, so a module can include just the
# headers of the subsystems it calls.  Run by `make check`.
CC=${CC:-cc}
FLAGS="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Iinclude -Isrc -fsyntax-only"
failed=0
n=0
for h in include/pqvault/*.h src/*/*.h; do
    n=$((n + 1))
    case $h in
        include/*) inc=${h#include/} ;;
        src/*) inc=${h#src/} ;;
    esac
    # Twice: the include guard must work too.
    if ! printf '#include "%s"\n#include "%s"\n' "$inc" "$inc" | $CC $FLAGS -x c - 2>/tmp/pqv-headers.$$; then
        echo "FAIL - $h does not compile on its own:"
        sed -n '1,10s/^/#   /p' /tmp/pqv-headers.$$
        failed=$((failed + 1))
    fi
done
rm -f /tmp/pqv-headers.$$
echo "$n headers, $failed failing"
[ "$failed" -eq 0 ]
