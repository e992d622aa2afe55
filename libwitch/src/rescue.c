/* rescue: a fault inside a handler run ends the run (see rescue.h). */
#include "witch/rescue.h"
#include "witch/due.h"
#include "witch/rawsys.h"
#include "witch/sigguard.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>

static __thread struct rescue_point *rescue_current __attribute__((tls_model("initial-exec")));

static void (*rescue_handler)(int, siginfo_t *, void *);

void rescue_set_fault_handler(void (*fn)(int, siginfo_t *, void *))
{
	rescue_handler = fn;
}

void rescue_arm(struct rescue_point *p, const ucontext_t *uc)
{
	p->covered = -1;
	p->uc = uc;
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
	sigguard_mask(SIG_SETMASK, &uc->uc_sigmask, NULL);
	siglongjmp(p->env, 1);
}

/* The kernel's struct for rt_sigaction on x86-64 (not glibc's). */
struct rescue_ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static int rescue_fault_blocked(const struct rescue_point *p)
{
	uint64_t blocked;
	if (p->uc)
		memcpy(&blocked, &p->uc->uc_sigmask, sizeof(blocked));
	else if (rawsys6(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&blocked, 8, 0, 0) != 0)
		return 1;
	return (blocked & (1ull << (SIGSEGV - 1))) || (blocked & (1ull << (SIGBUS - 1)));
}

static int rescue_ask_actions(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS};
	if (!rescue_handler)
		return 0;
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct rescue_ksigaction k;
		if (rawsys6(SYS_rt_sigaction, sigs[i], 0, (long)&k, 8, 0, 0) != 0 ||
		    k.handler != (void *)rescue_handler || !(k.flags & SA_SIGINFO))
			return 0;
	}
	return 1;
}

/* The kernel's last answer, tagged with the generation it was asked in:
 * gen * 4 + 2 (asked) + 1 (ours).  A change (rescue_actions_changed) bumps
 * the generation, so an answer asked before it is never taken after. */
static uint64_t rescue_actions_gen, rescue_actions_answer, rescue_actions_asked_ns;

void rescue_actions_changed(void)
{
	__atomic_add_fetch(&rescue_actions_gen, 1, __ATOMIC_SEQ_CST);
}

static int rescue_actions_ours(void)
{
	uint64_t gen = __atomic_load_n(&rescue_actions_gen, __ATOMIC_SEQ_CST);
	uint64_t w = __atomic_load_n(&rescue_actions_answer, __ATOMIC_RELAXED);
	int due = due_claim(&rescue_actions_asked_ns, RESCUE_RECHECK_NS); /* (first: due) */
	if (!due && (w & 2) && w >> 2 == gen)
		return (int)(w & 1);
	int ours = rescue_ask_actions();
	__atomic_store_n(&rescue_actions_answer, gen * 4 + 2 + (uint64_t)ours, __ATOMIC_RELAXED);
	return ours;
}

int rescue_covers_faults(void)
{
	struct rescue_point *p = rescue_current;
	if (!p)
		return 0;
	if (p->covered < 0)
		p->covered = !rescue_fault_blocked(p) && rescue_actions_ours();
	return p->covered;
}
