/* flush: the periodic profile writer (see flush.h). */
#include "witch/flush.h"
#include "witch/datasym.h"
#include "witch/ehpages.h"
#include "witch/phdrs.h"
#include "witch/profile.h"
#include "witch/thread.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t flush_seconds;
static int flush_always;  /* WITCH_FLUSH set: not waiting for the program's first thread */
static int flush_started; /* this process has its flusher (or is starting it) */
static int flush_stopped; /* under flush_lock */

static void *flush_main(void *arg)
{
	/* Signals sent to the process must go to the program's threads. */
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* Wakes four times a second: a library the C library loaded by itself
	 * joins the unwinders' module snapshot soon after a miss (phdrs.h),
	 * and a dlopen'd one the data symbol index (datasym.h; a no-op when
	 * no module came or went); the unwind tables' pages go back
	 * (ehpages.h). */
	for (uint64_t quarters = 0;; quarters++) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 250000000};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
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
	rc = pthread_detach(th);
	return rc ? -rc : 0;
}

int flush_start(uint32_t seconds, int always)
{
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
	flush_started = 0; /* the parent's flusher is not in the child */
}

int flush_start_in_child(void)
{
	return flush_stopped || !flush_always ? 0 : flush_spawn();
}
