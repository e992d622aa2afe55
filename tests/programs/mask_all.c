/* mask_all: a program that blocks every signal halfway through its work,
 * as a daemon that takes its signals by signalfd or sigwait does.
 *
 *   phase_one()  REPS passes of stores and loads over 1 MiB
 *   the mask, as WAY says; the program reads it back and checks it holds
 *   what it asked
 *   phase_two()  the same work again, then the checksum on stdout, exit 0
 *
 * Before sigguard.h kept its signal open under such a mask, the runtime's
 * ticks stopped at the mask: phase_two had none of the profile's bytes.
 *
 * WAY: sigprocmask      sigprocmask(SIG_BLOCK, sigfillset)
 *      pthread_sigmask  pthread_sigmask(SIG_BLOCK, sigfillset)
 *      setmask          sigprocmask(SIG_SETMASK, sigfillset)
 *      signalfd         as sigprocmask, then a signalfd for SIGUSR1, a
 *                       raise(SIGUSR1) and its read from the signalfd
 *      rt_some          every real-time signal but the first three: a mask
 *                       that names the runtime's signal (SIGRTMIN+6 up)
 *                       without all the others is the program's to keep
 *                       (it may wait for that signal itself): phase_two
 *                       has none of the bytes
 *
 * Usage: mask_all WAY [REPS]     default REPS = 150 (~0.3 s a phase)
 * Exit 0, or 1 with a line on stderr saying what did not hold.
 */
#include "ka.h"

#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define N (1u << 18)

static uint32_t buf[N];

KA_FN uint64_t phase_one(uint32_t *p, long reps)
{
	return ka_phase_work(p, N, reps, 1);
}

KA_FN uint64_t phase_two(uint32_t *p, long reps)
{
	return ka_phase_work(p, N, reps, 2);
}

static int failed(const char *what)
{
	fprintf(stderr, "mask_all: %s\n", what);
	return 1;
}

int main(int argc, char **argv)
{
	const char *way = argc > 1 ? argv[1] : "sigprocmask";
	long reps = ka_reps(argc - 1, argv + 1, 150);
	sigset_t asked, back;
	sigfillset(&asked);
	uint64_t sum = phase_one(buf, reps);
	int rc = 0;
	if (!strcmp(way, "sigprocmask") || !strcmp(way, "signalfd")) {
		rc = sigprocmask(SIG_BLOCK, &asked, NULL);
	} else if (!strcmp(way, "pthread_sigmask")) {
		rc = pthread_sigmask(SIG_BLOCK, &asked, NULL);
	} else if (!strcmp(way, "setmask")) {
		rc = sigprocmask(SIG_SETMASK, &asked, NULL);
	} else if (!strcmp(way, "rt_some")) {
		sigemptyset(&asked);
		for (int sig = SIGRTMIN + 3; sig <= SIGRTMAX; sig++)
			sigaddset(&asked, sig);
		rc = sigprocmask(SIG_BLOCK, &asked, NULL);
	} else {
		return failed("WAY: sigprocmask, pthread_sigmask, setmask, signalfd or rt_some");
	}
	if (rc != 0)
		return failed("the mask was refused");
	if (pthread_sigmask(SIG_BLOCK, NULL, &back) != 0)
		return failed("cannot read the mask back");
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sigismember(&asked, sig) == 1 &&
		    sigismember(&back, sig) != 1) {
			fprintf(stderr, "mask_all: signal %d is not in the mask read back\n", sig);
			return 1;
		}
	if (!strcmp(way, "signalfd")) {
		sigset_t usr1;
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		int fd = signalfd(-1, &usr1, SFD_CLOEXEC);
		struct signalfd_siginfo si;
		if (fd < 0 || raise(SIGUSR1) != 0 || read(fd, &si, sizeof(si)) != sizeof(si) ||
		    si.ssi_signo != SIGUSR1)
			return failed("SIGUSR1 did not come by the signalfd");
		close(fd);
	}
	sum += phase_two(buf, reps);
	printf("mask_all checksum %016llx\n", (unsigned long long)sum);
	return 0;
}
