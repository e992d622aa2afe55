/* limitguard: RLIMIT_AS raised by the runtime's reservations, and the
 * program's view of it as it set it (see limitguard.h). */
#include "witch/limitguard.h"
#include "witch/config.h"
#include "witch/export.h"
#include "witch/fdguard.h"
#include "witch/rawsys.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LIMIT_ENV "WITCH_AS_PROGRAM"

/* The kernel's soft limit is lim_prog + lim_held while lim_on.  Every
 * change bumps lim_gen, and lim_apply sets the limit again until no change
 * raced it: the last setting made is of the last values. */
static uint64_t lim_prog;  /* the program's soft limit, as it set it */
static uint64_t lim_hard;  /* the hard limit */
static uint64_t lim_held;  /* what the runtime holds: mappings and slack */
static uint64_t lim_gen;
static int lim_on;         /* a finite soft limit, raised by lim_held */

static long lim_sys(pid_t pid, int res, const struct rlimit *new, struct rlimit *old)
{
	return rawsys6(SYS_prlimit64, pid, res, (long)new, (long)old, 0, 0);
}

static uint64_t lim_load(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_SEQ_CST);
}

static void lim_changed(void)
{
	__atomic_add_fetch(&lim_gen, 1, __ATOMIC_SEQ_CST);
}

/* Room under the hard limit for the program's limit and held more. */
static int lim_room(uint64_t prog, uint64_t hard, uint64_t held)
{
	return hard == RLIM_INFINITY || (prog <= hard && hard - prog >= held);
}

/* The kernel's soft limit set to the program's plus what is held, again
 * until no change raced it.  0 or -errno. */
static long lim_apply(void)
{
	long rc = 0;
	for (int tries = 0; tries < 64; tries++) {
		uint64_t gen = lim_load(&lim_gen);
		if (!__atomic_load_n(&lim_on, __ATOMIC_SEQ_CST))
			return 0;
		uint64_t prog = lim_load(&lim_prog), hard = lim_load(&lim_hard);
		uint64_t cur = prog + lim_load(&lim_held);
		struct rlimit r = {hard != RLIM_INFINITY && cur > hard ? hard : cur, hard};
		rc = lim_sys(0, RLIMIT_AS, &r, NULL);
		if (lim_load(&lim_gen) == gen)
			break;
	}
	return rc;
}

int limitguard_init(uint64_t start_bytes, char *why, size_t len)
{
	struct rlimit r;
	/* Held whatever the limit: a limit the program sets later is raised
	 * by it too. */
	__atomic_add_fetch(&lim_held, LIMITGUARD_SLACK, __ATOMIC_SEQ_CST);
	lim_changed();
	long rc = lim_sys(0, RLIMIT_AS, NULL, &r);
	if (rc < 0)
		return (int)rc;
	if (r.rlim_cur == RLIM_INFINITY)
		return 0;
	/* An image the C library's posix_spawn or system started: the limit
	 * is still raised by what the image before held (an interposed exec
	 * put the program's back first); the program's is handed down. */
	uint64_t prog = r.rlim_cur;
	const char *env = getenv(LIMIT_ENV);
	uint64_t had = env ? strtoull(env, NULL, 10) : 0;
	if (had > 0 && had <= r.rlim_cur)
		prog = had;
	if (!lim_room(prog, r.rlim_max, start_bytes + LIMITGUARD_SLACK)) {
		snprintf(why, len,
			 "RLIMIT_AS (ulimit -v) is %" PRIu64 " MiB with no room under its hard limit "
			 "for the profiler's %" PRIu64 " MiB of address space, which it would take from "
			 "the program (raise the hard limit by that much, or set the soft one alone: "
			 "ulimit -S -v)",
			 prog >> 20, (uint64_t)((start_bytes + LIMITGUARD_SLACK) >> 20));
		return -ENOSPC;
	}
	__atomic_store_n(&lim_prog, prog, __ATOMIC_SEQ_CST);
	__atomic_store_n(&lim_hard, (uint64_t)r.rlim_max, __ATOMIC_SEQ_CST);
	__atomic_store_n(&lim_on, 1, __ATOMIC_SEQ_CST);
	lim_changed();
	if ((rc = lim_apply()) < 0) {
		__atomic_store_n(&lim_on, 0, __ATOMIC_SEQ_CST);
		return (int)rc;
	}
	char v[32];
	snprintf(v, sizeof(v), "%" PRIu64, prog);
	return config_env_hand_down(LIMIT_ENV, v);
}

int limitguard_reserve(uint64_t len)
{
	uint64_t held = __atomic_add_fetch(&lim_held, len, __ATOMIC_SEQ_CST);
	lim_changed();
	if (!__atomic_load_n(&lim_on, __ATOMIC_SEQ_CST))
		return 0;
	long rc = -ENOMEM;
	if (!lim_room(lim_load(&lim_prog), lim_load(&lim_hard), held) || (rc = lim_apply()) < 0) {
		limitguard_release(len);
		return (int)rc;
	}
	return 0;
}

void limitguard_release(uint64_t len)
{
	__atomic_sub_fetch(&lim_held, len, __ATOMIC_SEQ_CST);
	lim_changed();
	(void)lim_apply(); /* (a limit left higher than it need be: the program loses nothing) */
}

void limitguard_before_exec(void)
{
	if (!__atomic_load_n(&lim_on, __ATOMIC_SEQ_CST))
		return;
	struct rlimit r = {lim_load(&lim_prog), lim_load(&lim_hard)};
	(void)lim_sys(0, RLIMIT_AS, &r, NULL); /* (a failure: the new image reads the raised one) */
}

void limitguard_exec_failed(void)
{
	(void)lim_apply(); /* (a failure: the runtime's next mappings may find no room) */
}

static int lim_self(pid_t pid)
{
	return pid == 0 || pid == getpid();
}

/* prlimit as the program sees it: 0 or -errno. */
static long lim_program(pid_t pid, int res, const struct rlimit *new, struct rlimit *old)
{
	if (res == RLIMIT_NOFILE && lim_self(pid))
		return fdguard_program_limit(new, old); /* never inside a lift */
	if (res != RLIMIT_AS || !lim_self(pid) ||
	    (!new && !__atomic_load_n(&lim_on, __ATOMIC_SEQ_CST)))
		return lim_sys(pid, res, new, old);
	struct rlimit want, was;
	int on = __atomic_load_n(&lim_on, __ATOMIC_SEQ_CST), raise = 0;
	uint64_t prog = lim_load(&lim_prog);
	long rc;
	if (new) {
		/* Raised the same way where the new hard limit leaves room for
		 * what the runtime holds; else as given, and the runtime's share
		 * is the program's. */
		uint64_t held = lim_load(&lim_held);
		want = *new;
		raise = want.rlim_cur != RLIM_INFINITY &&
			lim_room(want.rlim_cur, want.rlim_max, held);
		if (raise)
			want.rlim_cur += held;
	}
	if ((rc = lim_sys(pid, res, new ? &want : NULL, &was)) < 0)
		return rc;
	if (old) {
		*old = was;
		if (on)
			old->rlim_cur = prog;
	}
	if (!new)
		return 0;
	if (raise) {
		__atomic_store_n(&lim_prog, (uint64_t)new->rlim_cur, __ATOMIC_SEQ_CST);
		__atomic_store_n(&lim_hard, (uint64_t)new->rlim_max, __ATOMIC_SEQ_CST);
		__atomic_store_n(&lim_on, 1, __ATOMIC_SEQ_CST);
		lim_changed();
		(void)lim_apply(); /* (what it held changed meanwhile) */
		char v[32];
		snprintf(v, sizeof(v), "%" PRIu64, (uint64_t)new->rlim_cur);
		/* (where it fails, an exec'd image takes the raised limit for the
		 * program's: the program loses nothing) */
		(void)config_env_hand_down(LIMIT_ENV, v);
		return 0;
	}
	__atomic_store_n(&lim_on, 0, __ATOMIC_SEQ_CST);
	lim_changed();
	unsetenv(LIMIT_ENV);
	return 0;
}

static int lim_ret(long rc)
{
	if (rc < 0) {
		errno = (int)-rc;
		return -1;
	}
	return 0;
}

WITCH_EXPORT int getrlimit(__rlimit_resource_t res, struct rlimit *r)
{
	return lim_ret(lim_program(0, (int)res, NULL, r));
}

WITCH_EXPORT int getrlimit64(__rlimit_resource_t res, struct rlimit64 *r)
{
	return lim_ret(lim_program(0, (int)res, NULL, (struct rlimit *)r));
}

WITCH_EXPORT int setrlimit(__rlimit_resource_t res, const struct rlimit *r)
{
	return lim_ret(lim_program(0, (int)res, r, NULL));
}

WITCH_EXPORT int setrlimit64(__rlimit_resource_t res, const struct rlimit64 *r)
{
	return lim_ret(lim_program(0, (int)res, (const struct rlimit *)r, NULL));
}

WITCH_EXPORT int prlimit(pid_t pid, __rlimit_resource_t res, const struct rlimit *new,
			 struct rlimit *old)
{
	return lim_ret(lim_program(pid, (int)res, new, old));
}

WITCH_EXPORT int prlimit64(pid_t pid, __rlimit_resource_t res, const struct rlimit64 *new,
			   struct rlimit64 *old)
{
	return lim_ret(lim_program(pid, (int)res, (const struct rlimit *)new, (struct rlimit *)old));
}
