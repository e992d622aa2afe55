/* small_altstack: a program whose signal stack is a small one of its own,
 * or none, while the profiler's handlers run.
 *
 * The kernel delivers a signal with SA_ONSTACK on the thread's registered
 * sigaltstack.  The runtime registers a 128 KiB one at each thread's start;
 * a program that registers its own after (CPython's faulthandler, on under
 * pytest: 16 KiB; Go's runtime, by raw system call) had the handler's
 * deepest frames (~25 KiB) written past it, into the program's memory
 * below: here, the pattern around the stack.  thread_on_own_stack moves a
 * run that came on another stack to the thread's own.
 *
 * WAY: libc     sigaltstack(16 KiB of a malloc'd block), as faulthandler
 *      raw      the same by syscall(SYS_sigaltstack), as Go's runtime
 *      thread   a thread of a 24 KiB stack turns its sigaltstack off
 *               (SS_DISABLE): the handler came on the thread's own stack,
 *               and ran into its guard page (the old runtime: SIGSEGV)
 * Each then runs stores for ~0.5 s of CPU and checks that the bytes around
 * the 16 KiB stack (1 MiB each side) are as it left them, and that its
 * sigaltstack reads back as it set it.  Exit 0, or 1 with a line saying
 * what did not hold.
 *
 * Usage: small_altstack WAY
 */
#include "ka.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALT (16u << 10)
#define PAD (1u << 20)
#define N (1u << 14)

static uint32_t buf[N];

KA_FN uint64_t work(double seconds)
{
	struct timespec a, b;
	uint64_t v = 1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (uint32_t i = 0; i < N; i++) {
			KA_LCG(v);
			buf[i] = KA_HI(v);
			v += KA_LOAD(buf, (i * 7) & (N - 1));
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 < seconds);
	return v;
}

static int failed(const char *what)
{
	fprintf(stderr, "small_altstack: %s\n", what);
	return 1;
}

static void *thread_work(void *arg)
{
	stack_t off = {.ss_flags = SS_DISABLE}, back;
	if (sigaltstack(&off, NULL) != 0 || sigaltstack(NULL, &back) != 0 ||
	    !(back.ss_flags & SS_DISABLE)) {
		*(int *)arg = failed("cannot turn the thread's sigaltstack off");
		return NULL;
	}
	work(0.5);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *way = argc > 1 ? argv[1] : "libc";
	if (!strcmp(way, "thread")) {
		pthread_attr_t attr;
		pthread_t th;
		int rc = 0;
		if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 24u << 10) != 0 ||
		    pthread_create(&th, &attr, thread_work, &rc) != 0 || pthread_join(th, NULL) != 0)
			return failed("cannot run a thread of a 24 KiB stack");
		if (rc == 0)
			printf("small_altstack thread done\n");
		return rc;
	}
	unsigned char *mem = malloc(PAD + ALT + PAD);
	if (!mem)
		return failed("no memory");
	memset(mem, 0xa5, PAD + ALT + PAD);
	stack_t ss = {.ss_sp = mem + PAD, .ss_size = ALT, .ss_flags = 0}, back;
	int rc;
	if (!strcmp(way, "libc"))
		rc = sigaltstack(&ss, NULL);
	else if (!strcmp(way, "raw"))
		rc = (int)syscall(SYS_sigaltstack, &ss, NULL);
	else
		return failed("WAY: libc, raw or thread");
	if (rc != 0)
		return failed("sigaltstack refused");
	work(0.5);
	if (sigaltstack(NULL, &back) != 0 || back.ss_sp != ss.ss_sp || back.ss_size != ALT)
		return failed("the sigaltstack does not read back as set");
	for (size_t i = 0; i < PAD; i++)
		if (mem[i] != 0xa5 || mem[PAD + ALT + i] != 0xa5) {
			fprintf(stderr, "small_altstack: %zu bytes %s the stack were written\n",
				i < PAD ? PAD - i : i, mem[i] != 0xa5 ? "below" : "above");
			return 1;
		}
	printf("small_altstack %s done\n", way);
	return 0;
}
