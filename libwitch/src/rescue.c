/* rescue: a fault inside a handler run ends the run (see rescue.h). */
#include "witch/rescue.h"
#include "witch/rawsys.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <ucontext.h>

static __thread struct rescue_point *rescue_current __attribute__((tls_model("initial-exec")));

static void (*rescue_handler)(int, siginfo_t *, void *);

void rescue_set_fault_handler(void (*fn)(int, siginfo_t *, void *))
{
	rescue_handler = fn;
}

void rescue_arm(struct rescue_point *p)
{
	p->covered = -1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rescue_current = p;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void rescue_disarm(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rescue_current = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

int rescue_fault(int sig, siginfo_t *si, void *ucv)
{
	struct rescue_point *p = rescue_current;
	if (!p || !si || si->si_code <= 0 || (sig != SIGSEGV && sig != SIGBUS))
		return 0;
	rescue_current = NULL;
	/* The mask the faulting handler ran with: sigsetjmp did not save one,
	 * and this handler's own (everything blocked) must not stay. */
	const ucontext_t *uc = ucv;
	pthread_sigmask(SIG_SETMASK, &uc->uc_sigmask, NULL);
	siglongjmp(p->env, 1);
}

/* The kernel's struct for rt_sigaction on x86-64 (not glibc's). */
struct rescue_ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static int rescue_ask_kernel(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS};
	uint64_t blocked;
	if (!rescue_handler ||
	    rawsys6(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&blocked, 8, 0, 0) != 0)
		return 0;
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct rescue_ksigaction k;
		if (blocked & (1ull << (sigs[i] - 1)) ||
		    rawsys6(SYS_rt_sigaction, sigs[i], 0, (long)&k, 8, 0, 0) != 0 ||
		    k.handler != (void *)rescue_handler || !(k.flags & SA_SIGINFO))
			return 0;
	}
	return 1;
}

int rescue_covers_faults(void)
{
	struct rescue_point *p = rescue_current;
	if (!p)
		return 0;
	if (p->covered < 0)
		p->covered = rescue_ask_kernel();
	return p->covered;
}
