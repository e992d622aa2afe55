/* sigchain: a caught signal handed on to the program's handler (sigchain.h). */
#include "witch/sigchain.h"
#include "witch/sigguard.h"

#include <errno.h>
#include <pthread.h>
#include <ucontext.h>

/* As the kernel tells them: by the handler's value alone (sa_handler and
 * sa_sigaction share it), whatever SA_SIGINFO says. */
int sigchain_is_default(const struct sigaction *act)
{
	return act->sa_handler == SIG_DFL;
}

int sigchain_is_handler(const struct sigaction *act)
{
	return act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
}

int sigchain_deliver(struct sigaction *act, int sig, siginfo_t *si, void *ucv)
{
	if (sigchain_is_default(act))
		return -EINVAL;
	if (!sigchain_is_handler(act))
		return 0; /* SIG_IGN */
	struct sigaction a = *act;
	if (a.sa_flags & SA_RESETHAND)
		act->sa_handler = SIG_DFL; /* the kernel's way: flags and mask stay */
	/* The mask the kernel would have set: the interrupted code's, the
	 * handler's own, the signal unless NODEFER (not the runtime's). */
	const ucontext_t *uc = ucv;
	sigset_t m = uc->uc_sigmask, old;
	sigorset(&m, &m, &a.sa_mask);
	if (!(a.sa_flags & SA_NODEFER))
		sigaddset(&m, sig);
	sigguard_mask(SIG_SETMASK, &m, &old);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, ucv);
	else
		a.sa_handler(sig);
	sigguard_mask(SIG_SETMASK, &old, NULL);
	return 0;
}
