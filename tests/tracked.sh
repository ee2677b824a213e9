#!/bin/sh
# No build output is tracked in git: nothing under a build directory, no
# object, archive or executable binary (ELF) anywhere in the tree.  Run by
# `make check`; outside a git checkout there is nothing tracked to check.
cd "$(dirname "$0")/.." || exit 1
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "not a git checkout: no tracked files to check"
    exit 0
fi
bad=$(git ls-files -z | tr '\0' '\n' | while IFS= read -r f; do
    case $f in
        build/*|build-*/*|*.o|*.a|*.so|*.gcda|*.gcno) echo "$f"; continue ;;
    esac
    # An executable binary, whatever its name.
    if [ -f "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = "177ELF" ]; then
        echo "$f"
    fi
done)
if [ -n "$bad" ]; then
    echo "FAIL - build outputs are tracked in git (git rm --cached them):"
    echo "$bad" | sed -n '1,20s/^/#   /p'
    echo "#   ($(echo "$bad" | wc -l) in all)"
    exit 1
fi
echo "no build output tracked ($(git ls-files | wc -l) files)"
