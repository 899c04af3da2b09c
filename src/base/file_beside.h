/* Files written whole and never through what is already there (docs/results.md, "Writing"): a
 * file is made fresh beside its target, filled, and renamed over the target. An existing
 * TARGET.tmp, a symbolic link planted beside the target, or a user's own file is never opened,
 * truncated or removed; a target that is a symbolic link is replaced by the new file, as rename(2)
 * does, not written through. */
#ifndef WL_FILE_BESIDE_H
#define WL_FILE_BESIDE_H

#include <stddef.h>

/* Creates a new file in target's directory, named TARGET.XXXXXX.tmp (6 random letters and
 * digits), open for writing: O_CREAT|O_EXCL|O_NOFOLLOW, with the mode of any new file under the
 * umask. Its name goes into tmp[size]. The descriptor, or -1 with errno set. */
int wl_create_beside(const char *target, char *tmp, size_t size);

#endif
