/* daemonize: the classic double fork (issue 6).
 *
 *   daemonize OUTFILE   parent: fork, print "parent done", exit 0 at once.
 *                       child: setsid, fork again and exit.
 *                       grandchild (the daemon): chdir /, close stdio,
 *                       dead_two_loops' work (fraction 0.5, top pair
 *                       <fill, overwrite>; dead_two_loops.c), write its
 *                       checksum to OUTFILE, exit 0.
 * Every process that ran under the profiler writes its own profile; the
 * daemon's has the answer.  run_daemon.sh waits for OUTFILE.
 */
#include "ka.h"

#include <fcntl.h>
#include <unistd.h>

#define N (8u << 20)

#include "dead_loops.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s OUTFILE\n", argv[0]);
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid > 0) {
		printf("parent done\n");
		return 0;
	}
	setsid();
	if (fork() != 0)
		_exit(0);
	if (chdir("/") < 0)
		_exit(1);
	int null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	uint32_t *a = ka_alloc((size_t)N * sizeof(*a));
	uint64_t total = 0;
	for (int r = 0; r < 6; r++) {
		fill(a, 2 * (uint64_t)r + 1);
		overwrite(a, 2 * (uint64_t)r + 2);
		total += sum(a);
	}
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return 1;
	fprintf(f, "%016llx\n", (unsigned long long)total);
	fclose(f);
	rename(tmp, argv[1]);
	return 0;
}
