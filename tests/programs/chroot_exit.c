/* chroot_exit: a program that moves its root, or loses the directory its
 * profile goes to, before it exits.
 *
 * Usage: chroot_exit WAY DIR
 *   exit      chroot(DIR), chdir("/"), then exit(7)
 *   _exit     the same, then _exit(7)
 *   fork      the same, then a fork child prints and exits 0; the parent
 *             waits, then exit(7)
 *   replaced  rmdir(DIR) and mkdir(DIR) (the profile's directory, empty),
 *             then exit(7)
 * Each prints "chroot_exit WAY" first.  A program that chroots (sshd's
 * privilege-separated child, vsftpd, bind) cannot reach WITCH_OUTPUT's path
 * any more: its profile was lost at exit (profdir.h).  Exit 77 where
 * chroot is not allowed (not root).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: chroot_exit exit|_exit|fork|replaced DIR\n");
		return 2;
	}
	const char *way = argv[1], *dir = argv[2];
	printf("chroot_exit %s\n", way);
	fflush(stdout);
	if (!strcmp(way, "replaced")) {
		if (rmdir(dir) != 0 || mkdir(dir, 0755) != 0) {
			perror("chroot_exit: rmdir/mkdir");
			return 1;
		}
		return 7;
	}
	if (chroot(dir) != 0) {
		fprintf(stderr, "chroot_exit: cannot chroot: %s\n", strerror(errno));
		return errno == EPERM ? 77 : 1;
	}
	if (chdir("/") != 0)
		return 1;
	if (!strcmp(way, "_exit"))
		_exit(7);
	if (!strcmp(way, "fork")) {
		pid_t pid = fork();
		if (pid == 0) {
			printf("child\n");
			return 0;
		}
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
			return 1;
	}
	return 7;
}
