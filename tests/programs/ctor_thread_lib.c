/* ctor_thread_lib: a library whose constructor runs its set-up on a thread
 * of its own and waits for it (ctor_thread.c).  The constructor runs under
 * the loader's lock, held by the thread that called dlopen. */
#include <pthread.h>

static volatile long sink;

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < 40000000; i++) /* ~0.1 s of CPU: ticks on this thread */
		sink += i % 3;
	return 0;
}

__attribute__((constructor)) static void init(void)
{
	pthread_t t;
	if (pthread_create(&t, 0, work, 0) == 0)
		pthread_join(t, 0);
}

int ctor_thread_answer(void)
{
	return 42;
}
