/* stderr_reuse: a daemon that closes its standard streams and opens files
 * of its own, which get numbers 0, 1 and 2.
 *
 * Usage: stderr_reuse DIR    (reports on descriptor 9, which the caller
 *                             opens: 9>&1)
 *   closes 0, 1 and 2, opens DIR/in, DIR/out and DIR/data (numbers 0, 1,
 *   2), writes a line of its own to DIR/data, starts and joins three
 *   threads one after another, and reports each file's size on 9.
 *        stderr_reuse pipe   (the same report channel)
 *   sleeps 0.3 s (its standard error a pipe whose reader has gone by
 *   then: `prog 2>&1 | head -1`), starts and joins three threads, and
 *   reports "threads ran" on 9.
 * Under WITCH_MEMORY_MB=16 the third thread meets the runtime's memory
 * cap, which says so in one witch: line: before log.c noted standard
 * error at the start, that line went to descriptor 2, DIR/data here
 * (a daemon's database or log file), which then held 141 bytes more; and
 * to the pipe, whose SIGPIPE ended the program (141 for 0).
 * Exit 0, or 1 where a step failed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void *spin(void *arg)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 20000000; i++)
		x += i;
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 2 || fcntl(9, F_GETFD) < 0)
		return 1;
	if (strcmp(argv[1], "pipe") == 0) {
		struct timespec wait = {0, 300000000};
		nanosleep(&wait, NULL);
		for (int i = 0; i < 3; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, spin, NULL) != 0 || pthread_join(t, NULL) != 0)
				return 1;
		}
		dprintf(9, "threads ran\n");
		return 0;
	}
	static const char *names[3] = {"in", "out", "data"};
	char path[3][4096];
	close(0);
	close(1);
	close(2);
	for (int i = 0; i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%s", argv[1], names[i]);
		if (open(path[i], O_RDWR | O_CREAT | O_TRUNC, 0644) != i)
			return 1;
	}
	static const char own[] = "the program's own line\n";
	if (write(2, own, sizeof(own) - 1) != (ssize_t)sizeof(own) - 1)
		return 1;
	for (int i = 0; i < 3; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spin, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
	}
	for (int i = 0; i < 3; i++) {
		struct stat st;
		if (fstat(i, &st) != 0)
			return 1;
		dprintf(9, "%s %lld bytes\n", names[i], (long long)st.st_size);
	}
	return 0;
}
