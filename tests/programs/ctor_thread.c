/* ctor_thread: dlopen of a library whose constructor starts a thread and
 * joins it (ctor_thread_lib.c), first thing in main.
 *
 * The constructor runs with the loader's lock held by main, which waits in
 * pthread_join; the new thread ticks first, before any tick of main's.  A
 * runtime that loaded its decoder and unwinder at that tick (a dlopen)
 * waited for the loader's lock for ever: the program hung (bench/zoo.py's
 * gcc_ctor_thread, every run at 2000/s).  deps.h now loads them in the
 * pthread_create interposer, in the creating thread, whose lock it is.
 * Prints "answer 42" natively and profiled; run_same_status.sh kills a
 * hang after SAME_STATUS_TIMEOUT. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	int (*answer)(void) = (int (*)(void))dlsym(h, "ctor_thread_answer");
	printf("answer %d\n", answer ? answer() : -1);
	return 0;
}
