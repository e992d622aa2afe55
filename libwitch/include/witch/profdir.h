/* profdir: the directory the profile goes to, held across a chroot.
 *
 * A program that chroots (sshd's privilege-separated child, vsftpd, bind,
 * postfix, ntpd) can no longer reach the path WITCH_OUTPUT names: its
 * profile was lost at exit, with a `witch:` line blaming the path.  So
 * chroot is interposed, and just before it the directory of this
 * process's profile is opened (O_PATH, a descriptor of the runtime's:
 * fdguard.h); the profile is then created and renamed relative to it.
 * Held at the chroot, not at start: opening it cost every process a path
 * lookup (~30-80 us here) that only these few need.  A path in another
 * directory (a pattern whose directory has %p, in a fork child), or a
 * held directory deleted since (the path may name a new one), goes by the
 * path as before.  Not seen: syscall(SYS_chroot), pivot_root.
 */
#ifndef WITCH_PROFDIR_H
#define WITCH_PROFDIR_H

#include <sys/types.h>

/* Holds the directory of path (a profile's full path).  0 or -errno (the
 * directory does not exist yet: writes go by the path). */
int profdir_hold(const char *path);

/* What runs just before the program's chroot (profile.h's: hold the
 * directory, read the executable's path while /proc is there). */
void profdir_set_before_chroot(void (*hook)(void));

/* open(path, flags, mode), relative to the held directory where path is
 * in it.  A descriptor or -errno. */
int profdir_open(const char *path, int flags, mode_t mode);

/* rename(from, to), both in one directory, relative to the held one where
 * it is theirs.  0 or -errno. */
int profdir_rename(const char *from, const char *to);

/* unlink(path), likewise.  0 or -errno. */
int profdir_unlink(const char *path);

struct stat;
/* lstat(path) (a link is not followed), likewise.  0 or -errno. */
int profdir_lstat(const char *path, struct stat *st);

#endif
