/* profdir: the directory the profile goes to, held from the start.
 *
 * A program that chroots (sshd's privilege-separated child, vsftpd, bind,
 * postfix, ntpd) can no longer reach the path WITCH_OUTPUT names: its
 * profile was lost at exit, with a `witch:` line blaming the path.  So the
 * directory of this process's profile is opened at start (O_PATH, a
 * descriptor of the runtime's: fdguard.h) and the profile is created and
 * renamed relative to it, wherever the program has moved its root or its
 * working directory since.  A path in another directory (a pattern whose
 * directory has %p, in a fork child), or a held directory deleted since
 * (the path may name a new one), goes by the path as before.
 */
#ifndef WITCH_PROFDIR_H
#define WITCH_PROFDIR_H

#include <sys/types.h>

/* Holds the directory of path (a profile's full path).  0 or -errno (the
 * directory does not exist yet: writes go by the path). */
int profdir_hold(const char *path);

/* open(path, flags, mode), relative to the held directory where path is
 * in it.  A descriptor or -errno. */
int profdir_open(const char *path, int flags, mode_t mode);

/* rename(from, to), both in one directory, relative to the held one where
 * it is theirs.  0 or -errno. */
int profdir_rename(const char *from, const char *to);

/* unlink(path), likewise.  0 or -errno. */
int profdir_unlink(const char *path);

#endif
