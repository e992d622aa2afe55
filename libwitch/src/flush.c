/* flush: the periodic profile writer (see flush.h). */
#include "witch/flush.h"
#include "witch/datasym.h"
#include "witch/ehpages.h"
#include "witch/phdrs.h"
#include "witch/profile.h"
#include "witch/thread.h"
#include "witch/sigguard.h"

#include "witch/rawsys.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t flush_seconds;
static int flush_always;  /* WITCH_FLUSH set: not waiting for the program's first thread */
static int flush_started; /* this process has its flusher (or is starting it) */
static int flush_stopped; /* under flush_lock */
/* flush_end: the flusher is told to return (under flush_lock), and is
 * joined; its handle. */
static pthread_cond_t flush_wake; /* on CLOCK_MONOTONIC: flush_wake_init */
static int flush_quit;
static pthread_t flush_thread;
static int flush_joinable; /* flush_thread is a flusher that runs */

/* (the monotonic clock: a wall clock set back would stretch a wait) */
static void flush_wake_init(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&flush_wake, &a);
	pthread_condattr_destroy(&a);
}

/* A quarter of a second, or less if told to return: 1 then. */
static int flush_wait_quarter(void)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += 250000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&flush_lock);
	while (!flush_quit && pthread_cond_timedwait(&flush_wake, &flush_lock, &until) != ETIMEDOUT)
		;
	int quit = flush_quit;
	pthread_mutex_unlock(&flush_lock);
	return quit;
}

static void *flush_main(void *arg)
{
	/* Signals sent to the process must go to the program's threads. */
	sigset_t all;
	sigfillset(&all);
	sigguard_mask(SIG_BLOCK, &all, NULL);
	/* Told apart from the program's threads in top -H, ps -L and
	 * /proc/PID/task (raw: prctl is the program's, sandboxguard.h). */
	rawsys6(SYS_prctl, PR_SET_NAME, (long)"witch-flush", 0, 0, 0, 0);
	/* Wakes four times a second: a library the C library loaded by itself
	 * joins the unwinders' module snapshot soon after a miss (phdrs.h),
	 * and a dlopen'd one the data symbol index (datasym.h; a no-op when
	 * no module came or went); the unwind tables' pages go back
	 * (ehpages.h). */
	for (uint64_t quarters = 0;; quarters++) {
		if (flush_wait_quarter())
			return NULL;
		phdrs_refresh_if_stale();
		datasym_refresh();
		ehpages_release_due();
		if ((quarters + 1) % (4ull * flush_seconds) != 0)
			continue;
		pthread_mutex_lock(&flush_lock);
		if (!flush_stopped) {
			thread_flush_all();
			profile_write();
		}
		pthread_mutex_unlock(&flush_lock);
	}
	return NULL;
}

static int flush_spawn(void)
{
	pthread_t th;
	if (flush_seconds == 0 || __atomic_exchange_n(&flush_started, 1, __ATOMIC_ACQ_REL))
		return 0;
	int rc = thread_create_unprofiled(&th, flush_main, NULL);
	if (rc < 0)
		return rc;
	flush_thread = th; /* joined by flush_end, if ever */
	flush_joinable = 1;
	return 0;
}

int flush_end(void)
{
	if (!flush_joinable)
		return 0;
	pthread_mutex_lock(&flush_lock);
	flush_quit = 1;
	pthread_cond_signal(&flush_wake);
	pthread_mutex_unlock(&flush_lock);
	pthread_join(flush_thread, NULL);
	flush_joinable = 0;
	flush_quit = 0;
	__atomic_store_n(&flush_started, 0, __ATOMIC_RELEASE);
	return 1;
}

void flush_program_gone(void)
{
	pthread_mutex_lock(&flush_lock);
	flush_quit = 1;
	pthread_cond_signal(&flush_wake);
	pthread_mutex_unlock(&flush_lock);
}

int flush_restart(void)
{
	return flush_spawn();
}

int flush_start(uint32_t seconds, int always)
{
	flush_wake_init();
	flush_seconds = seconds;
	flush_always = always;
	return always ? flush_spawn() : 0;
}

int flush_program_thread(void)
{
	if (__atomic_load_n(&flush_started, __ATOMIC_ACQUIRE))
		return 0;
	return flush_spawn();
}

void flush_stop(void)
{
	pthread_mutex_lock(&flush_lock);
	flush_stopped = 1;
	pthread_mutex_unlock(&flush_lock);
}

void flush_resume(void)
{
	pthread_mutex_lock(&flush_lock);
	flush_stopped = 0;
	pthread_mutex_unlock(&flush_lock);
}

void flush_prefork(void)
{
	pthread_mutex_lock(&flush_lock);
}

void flush_postfork_parent(void)
{
	pthread_mutex_unlock(&flush_lock);
}

void flush_postfork_child(void)
{
	pthread_mutex_init(&flush_lock, NULL);
	flush_wake_init();
	flush_started = flush_joinable = 0; /* the parent's flusher is not in the child */
}

int flush_start_in_child(void)
{
	return flush_stopped || !flush_always ? 0 : flush_spawn();
}
