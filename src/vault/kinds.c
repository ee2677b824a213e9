/*
 * kinds.c: the kinds of entries (vault/kinds.h), one row each.
 */
#include <stddef.h>
#include <sys/stat.h>

#include "vault/get_internal.h"
#include "vault/kinds.h"

static const struct entry_kind kinds[] = {
    { KIND_FILE, "file", "file", '-', S_IFREG, 1, 1, entry_file_encode, entry_file_decode,
      get_restore_file },
    { KIND_DIR, "directory", "dir", 'd', S_IFDIR, 1, 1, NULL, NULL, get_restore_dir },
    { KIND_SYMLINK, "symbolic link", "symlink", 'l', S_IFLNK, 1, 1, entry_symlink_encode,
      entry_symlink_decode, get_restore_symlink },
    { KIND_REMOVED, "removed entry", "removed", '?', 0, 0, 1, NULL, NULL, NULL },
    /* Format 3 only: a format-2 segment holding one is damage. */
    { KIND_FIFO, "FIFO", "fifo", 'p', S_IFIFO, 1, 0, NULL, NULL, get_restore_special },
    { KIND_CHARDEV, "character device", "chardev", 'c', S_IFCHR, 1, 0, entry_device_encode,
      entry_device_decode, get_restore_special },
    { KIND_BLOCKDEV, "block device", "blockdev", 'b', S_IFBLK, 1, 0, entry_device_encode,
      entry_device_decode, get_restore_special },
    /* Not stored: reported and skipped by add (a socket is made by the
     * program that listens on it). */
    { 0, "socket", "socket", 's', S_IFSOCK, 0, 0, NULL, NULL, NULL },
};

const struct entry_kind *
kinds_find(int kind)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (kinds[i].kind == kind && kind != 0)
            return &kinds[i];
    return NULL;
}

const struct entry_kind *
kinds_of_mode(mode_t mode)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (kinds[i].type != 0 && (mode & S_IFMT) == kinds[i].type)
            return &kinds[i];
    return NULL;
}
