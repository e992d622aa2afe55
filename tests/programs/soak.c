/* soak: a random mix of what processes do, for the soak test (issue 14).
 *
 *   soak SEED [DEPTH]
 *
 * SEED draws a plan of 3-7 steps, each one of:
 *   compute     the main thread computes (~20 ms)
 *   threads     2-4 threads compute, then each sends the next SIGUSR1 a few
 *               times, waiting for each to be handled (so the counts are
 *               exact), and they are joined; one may end by pthread_exit
 *   fork        a child computes and ends by return, exit, _exit, SIGSEGV,
 *               abort, raise(SIGTERM), SIGTERM from the parent, or a
 *               SIGSEGV in a second thread; the parent prints its status
 *   exec        a forked child execs this program with a new seed, DEPTH+1
 *   spawn       posix_spawn of this program with a new seed, DEPTH+1
 *   dlopen      dlopen SOAK_DL (dlwork.c), run it, dlclose
 *   breakpoint  the program's own hardware write breakpoint on a variable
 *               written 1000 times: whether the count it reads back is
 *               within 10 of it (a VM that loses a #DB's DR6 bit now and
 *               then, as an Emerald Rapids guest did about once in a few
 *               10^5 hits, counts one less and sends an icebp's SIGTRAP,
 *               which ended this step's process natively: a handler of
 *               its own takes it, so natively and profiled alike the line
 *               holds)
 * and then the process ends by return, exit, _exit or (below depth 0) a
 * fatal signal.  Every step prints one line whose content follows from
 * SEED alone, children through their own lines and their parent's status
 * line, and stdout is line-buffered, so the output is the same natively
 * and under the profiler, crashes included.
 *
 * SOAK_LOG=DIR: every process writes DIR/PID ("cpu_ns threads signals
 * forks execs spawns crashes") before it ends, so the driver
 * (bench/soak.py) knows which processes ran and must have left a profile.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SOAK_MAX_DEPTH 2
#define SOAK_WORDS (64u << 10)

extern char **environ;

static uint64_t soak_rng;
static int *volatile soak_null; /* a SIGSEGV the compiler cannot see coming */
static int soak_depth;
static struct {
	int threads, signals, forks, execs, spawns, crashes;
} soak_count;

static uint64_t soak_next(void)
{
	/* splitmix64 */
	uint64_t z = (soak_rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned soak_pick(unsigned n)
{
	return (unsigned)(soak_next() % n);
}

/* Dead stores, silent stores and redundant loads for every client:
 * fill, overwrite (half the time with the same values), sum. */
static __attribute__((noinline)) uint64_t compute(uint64_t seed, int reps)
{
	static __thread uint32_t *buf;
	if (!buf && !(buf = malloc(SOAK_WORDS * sizeof(*buf))))
		abort();
	uint64_t s = 0, v = seed | 1;
	for (int r = 0; r < reps; r++) {
		for (uint32_t i = 0; i < SOAK_WORDS; i++)
			buf[i] = (uint32_t)(v = v * 6364136223846793005ull + 1442695040888963407ull);
		for (uint32_t i = 0; i < SOAK_WORDS; i++)
			buf[i] = (r & 1) ? buf[i] : (uint32_t)(v += i);
		for (uint32_t i = 0; i < SOAK_WORDS; i++)
			s += buf[i];
	}
	return s;
}

static void log_process(void)
{
	const char *dir = getenv("SOAK_LOG");
	if (!dir)
		return;
	char path[4096], line[256];
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid());
	int n = snprintf(line, sizeof(line), "%lld %d %d %d %d %d %d\n",
			 (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec, soak_count.threads,
			 soak_count.signals, soak_count.forks, soak_count.execs, soak_count.spawns,
			 soak_count.crashes);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, line, (size_t)n) != n)
			perror("soak: log");
		close(fd);
	}
}

/* --- threads that signal each other ---------------------------------------- */

#define SOAK_MAX_THREADS 4

struct soak_team {
	int n, rounds;
	pthread_t th[SOAK_MAX_THREADS];
	pthread_barrier_t ready, done;
	uint64_t sum[SOAK_MAX_THREADS];
};

static volatile int soak_received[SOAK_MAX_THREADS];
static __thread int soak_self = -1;

static void on_usr1(int sig)
{
	(void)sig;
	if (soak_self >= 0)
		__atomic_add_fetch(&soak_received[soak_self], 1, __ATOMIC_RELAXED);
}

struct soak_member {
	struct soak_team *team;
	int index, exit_early;
	uint64_t seed;
};

static void *member_main(void *p)
{
	struct soak_member *m = p;
	struct soak_team *t = m->team;
	soak_self = m->index;
	t->sum[m->index] = compute(m->seed, 40);
	pthread_barrier_wait(&t->ready); /* every thread exists to be signalled */
	int to = (m->index + 1) % t->n;
	for (int r = 0; r < t->rounds; r++) {
		int want = r + 1;
		pthread_kill(t->th[to], SIGUSR1);
		while (__atomic_load_n(&soak_received[to], __ATOMIC_RELAXED) < want)
			sched_yield();
	}
	pthread_barrier_wait(&t->done); /* no thread ends while it may be signalled */
	if (m->exit_early)
		pthread_exit(NULL);
	return NULL;
}

static void step_threads(void)
{
	struct soak_team t = {.n = 2 + (int)soak_pick(3), .rounds = 1 + (int)soak_pick(20)};
	struct soak_member m[SOAK_MAX_THREADS];
	struct sigaction sa = {.sa_handler = on_usr1};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_barrier_init(&t.ready, NULL, (unsigned)t.n);
	pthread_barrier_init(&t.done, NULL, (unsigned)t.n);
	memset((void *)soak_received, 0, sizeof(soak_received));
	for (int i = 0; i < t.n; i++) {
		m[i] = (struct soak_member){&t, i, soak_pick(4) == 0, soak_next()};
		if (pthread_create(&t.th[i], NULL, member_main, &m[i]) != 0)
			abort();
	}
	uint64_t s = 0;
	int got = 0;
	for (int i = 0; i < t.n; i++) {
		pthread_join(t.th[i], NULL);
		s += t.sum[i];
		got += soak_received[i];
	}
	pthread_barrier_destroy(&t.ready);
	pthread_barrier_destroy(&t.done);
	soak_count.threads += t.n;
	soak_count.signals += got;
	printf("threads %d: %d signals handled, sum %016llx\n", t.n, got, (unsigned long long)s);
}

/* --- children ---------------------------------------------------------------- */

enum soak_end { END_RETURN, END_EXIT, END__EXIT, END_SEGV, END_ABORT, END_TERM, END_TERM_BY_PARENT,
		END_THREAD_SEGV, END_KINDS };

static void *crash_main(void *arg)
{
	(void)arg;
	compute(7, 20);
	log_process();
	*soak_null = 1;
	return NULL;
}

/* Ends this process as `how` says; returns only for END_RETURN. */
static void end_process(enum soak_end how, int code)
{
	if (how >= END_SEGV)
		soak_count.crashes++;
	if (how != END_THREAD_SEGV)
		log_process();
	fflush(stdout);
	switch (how) {
	case END_RETURN:
		return;
	case END_EXIT:
		exit(code);
	case END__EXIT:
		_exit(code);
	case END_SEGV:
		*soak_null = 1;
		break;
	case END_ABORT:
		abort();
	case END_TERM:
	case END_TERM_BY_PARENT:
		raise(SIGTERM);
		break;
	case END_THREAD_SEGV: {
		pthread_t th;
		if (pthread_create(&th, NULL, crash_main, NULL) == 0)
			pthread_join(th, NULL);
		break;
	}
	default:
		break;
	}
	_exit(99); /* not reached: the signal ended the process */
}

static void print_status(const char *what, int status)
{
	if (WIFEXITED(status))
		printf("%s: exit %d\n", what, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("%s: signal %d\n", what, WTERMSIG(status));
	else
		printf("%s: status %#x\n", what, status);
}

static void step_fork(void)
{
	enum soak_end how = (enum soak_end)soak_pick(END_KINDS);
	int code = 1 + (int)soak_pick(100);
	uint64_t seed = soak_next();
	int ready[2];
	if (pipe(ready) < 0)
		abort();
	fflush(stdout);
	soak_count.forks++;
	pid_t pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		memset(&soak_count, 0, sizeof(soak_count));
		close(ready[0]);
		compute(seed, 40);
		if (how == END_TERM_BY_PARENT) {
			log_process();
			if (write(ready[1], "r", 1) != 1)
				_exit(98);
			for (;;)
				compute(seed, 1);
		}
		end_process(how == END_RETURN ? END_EXIT : how, code);
	}
	close(ready[1]);
	if (how == END_TERM_BY_PARENT) {
		char c;
		if (read(ready[0], &c, 1) == 1)
			kill(pid, SIGTERM);
	}
	close(ready[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	print_status("fork", status);
}

static void child_argv(char *seed, char *depth, size_t len)
{
	snprintf(seed, len, "%llu", (unsigned long long)soak_next());
	snprintf(depth, len, "%d", soak_depth + 1);
}

static void step_exec(void)
{
	char seed[32], depth[32];
	child_argv(seed, depth, sizeof(seed));
	fflush(stdout);
	soak_count.forks++;
	soak_count.execs++;
	pid_t pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		execl("/proc/self/exe", "soak", seed, depth, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	print_status("exec", status);
}

static void step_spawn(void)
{
	char seed[32], depth[32];
	child_argv(seed, depth, sizeof(seed));
	char *argv[] = {"soak", seed, depth, NULL};
	fflush(stdout);
	soak_count.spawns++;
	pid_t pid;
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) != 0) {
		printf("spawn: failed\n");
		return;
	}
	int status = 0;
	waitpid(pid, &status, 0);
	print_status("spawn", status);
}

/* --- libraries and the program's own perf events ------------------------------ */

static void step_dlopen(void)
{
	const char *lib = getenv("SOAK_DL");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
	uint64_t (*run)(int) = h ? (uint64_t(*)(int))dlsym(h, "dlwork_run") : NULL;
	if (!run) {
		printf("dlopen: unavailable\n");
		if (h)
			dlclose(h);
		return;
	}
	uint64_t s = run(1);
	printf("dlopen: %016llx, dlclose %d\n", (unsigned long long)s, dlclose(h));
}

static volatile uint64_t soak_watched;

static void on_lost_trap(int sig)
{
	(void)sig;
}

static void step_breakpoint(void)
{
	struct sigaction lost = {.sa_handler = on_lost_trap}, old_trap;
	sigemptyset(&lost.sa_mask);
	sigaction(SIGTRAP, &lost, &old_trap);
	struct perf_event_attr a = {.type = PERF_TYPE_BREAKPOINT, .size = sizeof(a),
				    .bp_type = HW_BREAKPOINT_W, .bp_addr = (uintptr_t)&soak_watched,
				    .bp_len = HW_BREAKPOINT_LEN_8, .sample_period = 1, .disabled = 1,
				    .exclude_kernel = 1, .exclude_hv = 1};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		sigaction(SIGTRAP, &old_trap, NULL);
		printf("breakpoint: unavailable\n");
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 1000; i++)
		soak_watched = (uint64_t)i;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t n = 0;
	if (read(fd, &n, sizeof(n)) != sizeof(n))
		n = 0;
	close(fd);
	sigaction(SIGTRAP, &old_trap, NULL);
	if (n >= 990 && n <= 1000)
		printf("breakpoint: 1000 writes counted\n");
	else
		printf("breakpoint: %llu writes counted\n", (unsigned long long)n);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: soak SEED [DEPTH]\n");
		return 2;
	}
	soak_rng = strtoull(argv[1], NULL, 10);
	soak_depth = argc > 2 ? atoi(argv[2]) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("soak %s at depth %d\n", argv[1], soak_depth);
	int steps = 3 + (int)soak_pick(5);
	for (int i = 0; i < steps; i++) {
		/* Below the deepest level any step; at it, none that makes a process tree deeper. */
		unsigned kind = soak_pick(soak_depth < SOAK_MAX_DEPTH ? 7 : 5);
		switch (kind) {
		case 0:
			printf("compute: %016llx\n", (unsigned long long)compute(soak_next(), 40));
			break;
		case 1:
			step_threads();
			break;
		case 2:
			step_fork();
			break;
		case 3:
			step_dlopen();
			break;
		case 4:
			step_breakpoint();
			break;
		case 5:
			step_exec();
			break;
		default:
			step_spawn();
			break;
		}
	}
	enum soak_end how = (enum soak_end)soak_pick(soak_depth > 0 ? END_ABORT + 1 : END__EXIT + 1);
	int code = (int)soak_pick(50);
	printf("end: %d\n", (int)how);
	end_process(how, code);
	return code;
}
