/* thread_count.c: the threads of the process, as the kernel and the C
 * library count them, before and after the program's first thread and in a
 * child forked after it (issue 13: the periodic writer is a thread, and a
 * process that ever had two threads stays on the C library's multi-threaded
 * paths, 3-4% of sqlite3's time; see flush.h).
 *
 * Prints three lines:
 *   before tasks=N single=S   (tasks in /proc/self/task; S = __libc_single_threaded)
 *   after tasks=N single=S    (the program's thread joined, so it is gone)
 *   child tasks=N             (in a child forked after that)
 * Natively: 1 1 / 1 0 / 1.  run_flush_threads.sh has what each WITCH_FLUSH
 * setting must print. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <unistd.h>

static int tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static volatile pid_t idle_tid;

static void *idle(void *arg)
{
	idle_tid = gettid();
	return arg;
}

/* pthread_join returns when the kernel clears the thread's tid, before
 * the thread has left the process's task list: wait (up to 2 s) until its
 * /proc/self/task entry is gone, or a count right after the join may
 * still include it (a fresh-clone CI run read "after tasks=3"). */
static void wait_gone(pid_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	for (int i = 0; i < 2000 && access(path, F_OK) == 0; i++)
		usleep(1000);
}

static volatile char sink[1 << 16];

int main(void)
{
	pthread_t th;
	for (int r = 0; r < 200; r++) /* some stores, so the runtime has work */
		memset((char *)sink, r, sizeof(sink));
	printf("before tasks=%d single=%d\n", tasks(), (int)__libc_single_threaded);
	if (pthread_create(&th, NULL, idle, NULL) != 0 || pthread_join(th, NULL) != 0)
		return 2;
	wait_gone(idle_tid);
	printf("after tasks=%d single=%d\n", tasks(), (int)__libc_single_threaded);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		printf("child tasks=%d\n", tasks());
		fflush(stdout);
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 4;
	return 0;
}
