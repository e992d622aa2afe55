/* profdir: the profile's directory, held from the start (see profdir.h). */
#include "witch/profdir.h"
#include "witch/export.h"
#include "witch/fdguard.h"
#include "witch/rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int dir_fd = -1;
static void (*before_chroot)(void);
static char dir_path[PATH_MAX]; /* as the pattern named it, no trailing '/' */

/* The length of path's directory part ("/a/b" of "/a/b/c"; 1 for "/c"),
 * or 0 where it has none. */
static size_t profdir_dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return 0;
	return slash == path ? 1 : (size_t)(slash - path);
}

int profdir_hold(const char *path)
{
	size_t len = profdir_dir_len(path);
	if (len == 0 || len >= sizeof(dir_path))
		return -ENAMETOOLONG;
	char dir[PATH_MAX];
	memcpy(dir, path, len);
	dir[len] = '\0';
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (dir_fd >= 0)
		fdguard_close(dir_fd);
	dir_fd = fdguard_take(fd);
	memcpy(dir_path, dir, len + 1);
	return 0;
}

/* path's name within the held directory, or NULL where it is elsewhere, or
 * the program has taken the descriptor's number (a dup2 onto it:
 * fdguard.h). */
static const char *profdir_name_in(const char *path)
{
	size_t len = profdir_dir_len(path);
	if (dir_fd < 0 || len == 0 || strlen(dir_path) != len || memcmp(path, dir_path, len) ||
	    !fdguard_held(dir_fd))
		return NULL;
	return path + (len == 1 ? 1 : len + 1);
}

int profdir_open(const char *path, int flags, mode_t mode)
{
	const char *name = profdir_name_in(path);
	int fd = name ? openat(dir_fd, name, flags, mode) : -1;
	/* ENOENT: the held directory was deleted; the path may name a new one. */
	if (!name || (fd < 0 && errno == ENOENT))
		fd = open(path, flags, mode);
	return fd < 0 ? -errno : fd;
}

int profdir_rename(const char *from, const char *to)
{
	const char *a = profdir_name_in(from), *b = profdir_name_in(to);
	int rc = a && b ? renameat(dir_fd, a, dir_fd, b) : -1;
	if (!(a && b) || (rc < 0 && errno == ENOENT))
		rc = rename(from, to);
	return rc < 0 ? -errno : 0;
}

int profdir_unlink(const char *path)
{
	const char *name = profdir_name_in(path);
	int rc = name ? unlinkat(dir_fd, name, 0) : -1;
	if (!name || (rc < 0 && errno == ENOENT))
		rc = unlink(path);
	return rc < 0 ? -errno : 0;
}

int profdir_lstat(const char *path, struct stat *st)
{
	const char *name = profdir_name_in(path);
	int rc = name ? fstatat(dir_fd, name, st, AT_SYMLINK_NOFOLLOW) : -1;
	if (!name || (rc < 0 && errno == ENOENT))
		rc = lstat(path, st);
	return rc < 0 ? -errno : 0;
}

void profdir_set_before_chroot(void (*hook)(void))
{
	before_chroot = hook;
}

WITCH_EXPORT int chroot(const char *path)
{
	if (before_chroot)
		before_chroot();
	long rc = rawsys6(SYS_chroot, (long)path, 0, 0, 0, 0, 0);
	if (rc < 0) {
		errno = (int)-rc;
		return -1;
	}
	return 0;
}
