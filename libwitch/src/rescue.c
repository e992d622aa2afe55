/* rescue: a fault inside a handler run ends the run (see rescue.h). */
#include "witch/rescue.h"

#include <pthread.h>
#include <stddef.h>
#include <ucontext.h>

static __thread struct rescue_point *rescue_current __attribute__((tls_model("initial-exec")));

void rescue_arm(struct rescue_point *p)
{
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
