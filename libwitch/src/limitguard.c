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

#define LIMIT_ENV "WITCH_AS_RAISED"

static uint64_t lim_extra; /* what the soft RLIMIT_AS holds for the runtime */

static long lim_sys(pid_t pid, int res, const struct rlimit *new, struct rlimit *old)
{
	return rawsys6(SYS_prlimit64, pid, res, (long)new, (long)old, 0, 0);
}

int limitguard_init(uint64_t extra, char *why, size_t len)
{
	struct rlimit r;
	long rc = lim_sys(0, RLIMIT_AS, NULL, &r);
	if (rc < 0)
		return (int)rc;
	if (r.rlim_cur == RLIM_INFINITY)
		return 0;
	/* The process that started this one raised it, and this one has it. */
	const char *env = getenv(LIMIT_ENV);
	uint64_t had = env ? strtoull(env, NULL, 10) : 0;
	if (had > 0 && had < r.rlim_cur) {
		lim_extra = had;
		return 0;
	}
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max - r.rlim_cur < extra) {
		snprintf(why, len,
			 "RLIMIT_AS (ulimit -v) is %" PRIu64 " MiB with no room under its hard limit "
			 "for the profiler's %" PRIu64 " MiB of address space, which it would take from "
			 "the program (raise the hard limit by that much, or set the soft one alone: "
			 "ulimit -S -v)",
			 (uint64_t)r.rlim_cur >> 20, extra >> 20);
		return -ENOSPC;
	}
	struct rlimit up = {r.rlim_cur + extra, r.rlim_max};
	if ((rc = lim_sys(0, RLIMIT_AS, &up, NULL)) < 0)
		return (int)rc;
	lim_extra = extra;
	char v[32];
	snprintf(v, sizeof(v), "%" PRIu64, extra);
	return config_env_hand_down(LIMIT_ENV, v);
}

static int lim_self(pid_t pid)
{
	return pid == 0 || pid == getpid();
}

/* The program's view of the real limit r. */
static void lim_view(struct rlimit *r)
{
	if (r->rlim_cur != RLIM_INFINITY)
		r->rlim_cur = r->rlim_cur > lim_extra ? r->rlim_cur - lim_extra : 0;
}

/* prlimit as the program sees it: 0 or -errno. */
static long lim_program(pid_t pid, int res, const struct rlimit *new, struct rlimit *old)
{
	uint64_t extra = __atomic_load_n(&lim_extra, __ATOMIC_RELAXED);
	if (res == RLIMIT_NOFILE && lim_self(pid))
		return fdguard_program_limit(new, old); /* never inside a lift */
	if (res != RLIMIT_AS || !extra || !lim_self(pid))
		return lim_sys(pid, res, new, old);
	struct rlimit want, was;
	long rc;
	if (new) {
		want = *new;
		/* Raised the same way where the new hard limit leaves room;
		 * else as given, and the runtime's share is the program's. */
		if (want.rlim_cur != RLIM_INFINITY && (want.rlim_max == RLIM_INFINITY ||
						       want.rlim_max - want.rlim_cur >= extra))
			want.rlim_cur += extra;
		else if (want.rlim_cur != RLIM_INFINITY)
			extra = 0;
	}
	rc = lim_sys(pid, res, new ? &want : NULL, &was);
	if (rc < 0)
		return rc;
	if (old) {
		*old = was;
		lim_view(old);
	}
	if (new && extra == 0) {
		__atomic_store_n(&lim_extra, 0, __ATOMIC_RELAXED);
		unsetenv(LIMIT_ENV);
	}
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
