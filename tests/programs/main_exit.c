/* main_exit: the main thread ends by pthread_exit while a worker goes on;
 * the process ends where the worker does (the C library's last thread).
 *
 * Usage: main_exit return | exit | detached
 *   the main thread fills 4 MiB 20 times, starts a worker that does the
 *   same and prints a line, and calls pthread_exit; the worker then
 *   returns (return), calls pthread_exit itself (exit), or returns having
 *   been detached (detached).  Exit status 0 with the worker's line.
 * Before thread.c counted the program's threads, the profiled process
 * never ended: the C library waited for its last thread, which was the
 * runtime's flusher (started with the program's first thread).
 */
#include "ka.h"
#include <pthread.h>

#define N (1u << 20)

KA_FN void fill(uint32_t *p, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(v);
		p[i] = KA_HI(v);
	}
}

static const char *how;

static void *worker(void *arg)
{
	uint32_t *a = ka_alloc((size_t)N * sizeof *a);
	for (int r = 0; r < 20; r++)
		fill(a, (uint64_t)r + 100);
	printf("main_exit: worker done, checksum %08x\n", a[N / 2]);
	fflush(stdout);
	if (!strcmp(how, "exit"))
		pthread_exit(arg);
	return arg;
}

int main(int argc, char **argv)
{
	how = argc > 1 ? argv[1] : "return";
	uint32_t *a = ka_alloc((size_t)N * sizeof *a);
	for (int r = 0; r < 20; r++)
		fill(a, (uint64_t)r);
	printf("main_exit: main filled, checksum %08x; now pthread_exit (%s)\n", a[N / 2], how);
	fflush(stdout);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	if (!strcmp(how, "detached"))
		pthread_detach(t);
	pthread_exit(NULL);
}
