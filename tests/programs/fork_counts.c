/* fork_counts: target program for fork_counts.sh.
 *
 * The parent spends PARENT_MS of CPU time, sleeps SLEEP_MS (a periodic
 * profile write, WITCH_FLUSH=1, folds its thread into the process's
 * profile meanwhile), then forks; the child spends CHILD_MS and exits 0;
 * the parent waits and exits with the child's status.  Prints nothing.
 *
 * Usage: fork_counts PARENT_MS CHILD_MS SLEEP_MS
 */
#include "ka.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t buf[1024];

static void spend(double ms)
{
	ka_spend_ms(ms, buf); /* (one thread: its CPU time is the process's) */
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: fork_counts PARENT_MS CHILD_MS SLEEP_MS\n");
		return 2;
	}
	spend(atof(argv[1]));
	usleep((useconds_t)(atof(argv[3]) * 1000));
	pid_t pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		spend(atof(argv[2]));
		return 0;
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 4;
	return WEXITSTATUS(status);
}
