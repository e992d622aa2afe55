/* dead_fork: the dead_two_loops pattern, in a parent and in its forked child.
 *
 * Both processes run: fill() stores every element, overwrite() stores every
 * element again (killing fill's stores), sum() loads every element (using
 * overwrite's).  As in dead_two_loops, half the stores are dead and the two
 * store loops take the same time per store (one LCG step each), so each
 * process's own profile must show fraction 0.5 +- 0.1 with the top pair
 * <fill, overwrite>.  The child starts with a fresh profile (nothing the
 * parent measured before fork), writes its own file, and exits with 3; the
 * parent waits and exits with the child's status + 4 = 7.
 *
 * Usage: dead_fork [REPS [_exit]]   with "_exit" the child ends with _exit(3),
 * as forked workers do: no destructors run, and the runtime's _exit still
 * writes the child's profile.
 */
#include "ka.h"

#include <sys/wait.h>
#include <unistd.h>

#define N (4u << 20)

KA_FN void fill(uint32_t *p, uint64_t *v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(*v);
		p[i] = KA_HI(*v);
	}
}

KA_FN void overwrite(uint32_t *p, uint64_t *v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(*v);
		p[i] = KA_HI(*v);
	}
}

KA_FN uint64_t sum(const uint32_t *p)
{
	uint64_t s = 0;
	for (uint32_t i = 0; i < N; i++)
		s += KA_LOAD(p, i);
	return s;
}

static uint64_t work(uint32_t *p, long reps)
{
	uint64_t v = 1, s = 0;
	for (long r = 0; r < reps; r++) {
		fill(p, &v);
		overwrite(p, &v);
		s += sum(p);
	}
	return s;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 6);
	uint32_t *p = ka_alloc((size_t)N * sizeof(uint32_t));
	uint64_t s = work(p, reps);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		printf("child %016llx\n", (unsigned long long)work(p, reps));
		if (argc >= 3 && strcmp(argv[2], "_exit") == 0) {
			fflush(stdout);
			_exit(3);
		}
		return 3;
	}
	int status = 0;
	waitpid(pid, &status, 0);
	printf("parent %016llx\n", (unsigned long long)s);
	return WIFEXITED(status) ? WEXITSTATUS(status) + 4 : 1;
}
