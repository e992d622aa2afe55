/* as_limit: a program under an address-space limit (RLIMIT_AS, ulimit -v)
 * that uses most of it.
 *
 * Usage: as_limit MIB [exec | set KIB]
 *   prints its limit as it reads it ("soft=KIB hard=KIB", "inf" for none),
 *   mallocs MIB MiB and touches every page ("malloc MIB MiB: ok" or
 *   "failed"); then
 *   exec     runs itself again with MIB (its child prints the same)
 *   set KIB  sets its own soft limit to KIB, prints the limit again, and
 *            mallocs MIB MiB once more
 *   threads N  runs N threads at once, each ~10 ms of work, and prints
 *            "threads N: ok" once all have joined (a profiled thread's map
 *            must find room under the limit, or the thread runs unprofiled)
 * The runtime reserves ~140 MB of address space, and the limit counts
 * reservations: before limitguard.h, under a soft limit of 320 MiB, a
 * malloc of 250 MiB that succeeds natively failed profiled.  Exit 0, or 1
 * where a malloc failed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void say_limit(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_AS, &r) != 0) {
		printf("getrlimit failed\n");
		return;
	}
	char s[32], h[32];
	snprintf(s, sizeof(s), "%llu", (unsigned long long)r.rlim_cur >> 10);
	snprintf(h, sizeof(h), "%llu", (unsigned long long)r.rlim_max >> 10);
	printf("soft=%s hard=%s\n", r.rlim_cur == RLIM_INFINITY ? "inf" : s,
	       r.rlim_max == RLIM_INFINITY ? "inf" : h);
}

static int use(size_t mib)
{
	char *p = malloc(mib << 20);
	if (!p) {
		printf("malloc %zu MiB: failed\n", mib);
		return 1;
	}
	memset(p, 1, mib << 20);
	free(p);
	printf("malloc %zu MiB: ok\n", mib);
	return 0;
}

static void *spin(void *arg)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 20000000; i++)
		x += i;
	return arg;
}

static int run_threads(int n)
{
	pthread_t t[64];
	int made = 0;
	for (; made < n && made < 64; made++)
		if (pthread_create(&t[made], NULL, spin, NULL) != 0)
			break;
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	printf("threads %d: %s\n", n, made == n ? "ok" : "failed");
	return made == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	size_t mib = strtoul(argv[1], NULL, 10);
	say_limit();
	int rc = use(mib);
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "exec")) {
		execl("/proc/self/exe", argv[0], argv[1], (char *)NULL);
		return 3;
	}
	if (argc > 3 && !strcmp(argv[2], "threads"))
		rc |= run_threads(atoi(argv[3]));
	if (argc > 3 && !strcmp(argv[2], "set")) {
		struct rlimit r;
		getrlimit(RLIMIT_AS, &r);
		r.rlim_cur = (rlim_t)strtoull(argv[3], NULL, 10) << 10;
		if (setrlimit(RLIMIT_AS, &r) != 0)
			printf("setrlimit failed\n");
		say_limit();
		rc |= use(mib);
	}
	return rc;
}
