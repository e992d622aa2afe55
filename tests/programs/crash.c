/* crash: stores for a while under the profiler, then dies the way argv[1]
 * says: "segv" (a store through a null pointer: SIGSEGV), "abort"
 * (SIGABRT), "term" (SIGTERM, as services are stopped), or "handler" (the
 * program's own SIGTERM handler, which puts the default action back and
 * raises it again), or "quick" (quick_exit(5), after which its
 * at_quick_exit handler prints a line: the C library's _exit that follows
 * is its own, which the runtime's _exit does not see, so the profile was
 * lost before the runtime's own at_quick_exit hook, registered first and so
 * run last).  Before that it prints what sigaction reads back for
 * SIGTERM, which must be the default under the profiler too.
 * run_same_status.sh checks that the profiled run dies the same way, with
 * the same output, as the native one (issue 6), and that it leaves a
 * profile (issue 14).
 */
#include "ka.h"

#include <signal.h>

#define N (4u << 20)

KA_FN void fill(uint32_t *p, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(v);
		p[i] = KA_HI(v);
	}
}

static void on_quick(void)
{
	printf("crash: at_quick_exit ran\n");
	fflush(stdout);
}

static void on_term(int sig)
{
	signal(sig, SIG_DFL); /* fall through to the default action */
	raise(sig);
}

int main(int argc, char **argv)
{
	struct sigaction now;
	if (sigaction(SIGTERM, NULL, &now) == 0)
		printf("crash: SIGTERM is %s\n", now.sa_handler == SIG_DFL ? "default" : "handled");
	uint32_t *a = ka_alloc((size_t)N * sizeof *a);
	for (int r = 0; r < 20; r++)
		fill(a, (uint64_t)r);
	printf("crash: filled, checksum %08x; now %s\n", a[N / 2], argc > 1 ? argv[1] : "exit");
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "segv"))
		*(volatile uint32_t *)(uintptr_t)(a[0] & 0) = 1;
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	if (argc > 1 && !strcmp(argv[1], "term"))
		raise(SIGTERM);
	if (argc > 1 && !strcmp(argv[1], "quick")) {
		at_quick_exit(on_quick);
		quick_exit(5);
	}
	if (argc > 1 && !strcmp(argv[1], "handler")) {
		signal(SIGTERM, on_term);
		raise(SIGTERM);
	}
	return 0;
}
