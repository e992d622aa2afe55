/* term_in_write: a SIGTERM that arrives while the runtime writes its exit
 * profile (multiprocessing's Pool.terminate() to workers that are exiting)
 * ends the process with SIGTERM, as natively, and the profile is kept.
 *
 * The program defines renameat and rename, which the runtime calls to put
 * its finished temporary file in place (profdir.c): the executable's
 * definitions come first in symbol lookup (-rdynamic), so that call comes
 * here, sends SIGTERM to the process and only then renames.  Natively
 * nothing calls them and the program exits 0; under the runtime it must
 * die of SIGTERM (status 143 from the shell) with its profile renamed in
 * place and no temporary file left.  Before fatal.h's hold, the runtime's
 * stand-in for SIGTERM found the exit already claimed and ended the
 * process there: no profile, a p-PID.prof.tmp.PID left.  run_same_status.sh
 * checks it (SAME_STATUS_PROFILED=143, SAME_STATUS_PROFILE=1).
 *
 * "thread": a second thread, blocked in pause() with SIGTERM open, is
 * alive at exit, so the kernel gives the signal to it rather than to the
 * writing thread: its stand-in must wait for the write and leave the
 * process to end with SIGTERM when the write is done.
 */
#include "ka.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#define N (1u << 20)

static atomic_int sent;

static void term_once(const char *from)
{
	/* Only the runtime's own rename of its temporary profile. */
	if (strstr(from, ".tmp.") && !atomic_exchange(&sent, 1))
		kill(getpid(), SIGTERM);
}

int renameat(int olddirfd, const char *from, int newdirfd, const char *to)
{
	int (*real)(int, const char *, int, const char *) =
		(int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
	term_once(from);
	return real(olddirfd, from, newdirfd, to);
}

int rename(const char *from, const char *to)
{
	int (*real)(const char *, const char *) =
		(int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	term_once(from);
	return real(from, to);
}

KA_FN void fill(uint32_t *p, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(v);
		p[i] = KA_HI(v);
	}
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 1 && !strcmp(argv[1], "thread")) {
		sigset_t term;
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		pthread_sigmask(SIG_UNBLOCK, &term, NULL);
		if (pthread_create(&t, NULL, idle, NULL) != 0)
			return 2;
	}
	uint32_t *a = ka_alloc((size_t)N * sizeof *a);
	for (int r = 0; r < 40; r++)
		fill(a, (uint64_t)r);
	printf("term_in_write: checksum %08x\n", a[N / 2]);
	fflush(stdout);
	return 0;
}
