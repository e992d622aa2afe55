/* lazy_deps: where the runtime loads its decoder and unwinder (deps.h).
 *
 * usage: lazy_deps MODE MS
 *   main     MS ms of CPU in main's own loop
 *   handler  MS ms of CPU, nearly all of it inside a SIGPROF handler of
 *            the program's (a setitimer(ITIMER_PROF) every 2 ms whose
 *            handler spins ~1.8 ms, and one raised first); between its
 *            runs, clock reads for the first half, user code for the
 *            second
 *   iterate  MS ms of CPU inside a dl_iterate_phdr callback (the loader's
 *            lock held)
 *   nofds    started with all but one of the numbers its soft
 *            RLIMIT_NOFILE gives it open (its shell opened them; the loader
 *            needs one to start it), takes the last one first thing, MS ms
 *            of CPU, the numbers from 3 up given back, MS ms more (a
 *            server at its limit for a while: a load meanwhile fails with
 *            EMFILE)
 * Prints "zydis=Z unwind=U lzma=L loaded_before=B loaded_inside=N":
 * whether each library is mapped at the end (/proc/self/maps), whether
 * the decoder was loaded already when the handler, iterate or nofds phase
 * began (a first tick in this program's few instructions before it), and
 * how many times the number
 * of loaded modules (the loader's r_debug list) grew while the program
 * was inside its handler or its callback, where the runtime must not
 * load them.  Natively: zydis=0 unwind=0 lzma=0 loaded_before=0 loaded_inside=0.
 * Then "names Z U L": the loader's names of the three (the path it was
 * given or found), "-" for one not loaded. */
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;
static volatile sig_atomic_t loaded_inside;
static int loaded_before; /* the decoder was there when the phase began */
static long want_ms;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The loader's list, read without its lock (a handler's own read). */
static int modules(void)
{
	int n = 0;
	for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next)
		n++;
	return n;
}

/* The loader's name of the loaded library whose file is soname, or "-". */
static const char *loaded_name(const char *soname)
{
	for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next) {
		const char *base = m->l_name ? strrchr(m->l_name, '/') : NULL;
		if (base && strcmp(base + 1, soname) == 0)
			return m->l_name;
	}
	return "-";
}

static void spin_for(double ms)
{
	double end = cpu_ms() + ms;
	static double a[1024];
	while (cpu_ms() < end) /* (the clock read rarely: the ticks land here) */
		for (int k = 0; k < 64; k++)
			for (int j = 0; j < 1024; j++) {
				a[j] = a[j] * 0.5 + j;
				sink += a[j];
			}
}

static void on_prof(int sig)
{
	(void)sig;
	int before = modules();
	spin_for(1.8);
	if (modules() != before)
		loaded_inside++;
}

/* libZydis in the loader's list (a read without its lock, as modules()). */
static int decoder_mapped(void)
{
	for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next)
		if (m->l_name && strstr(m->l_name, "libZydis"))
			return 1;
	return 0;
}

static int in_callback(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(void)arg;
	int before = modules();
	loaded_before = decoder_mapped();
	spin_for((double)want_ms);
	if (modules() != before)
		loaded_inside++;
	return 1; /* once */
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: lazy_deps main|handler|iterate|nofds MS\n");
		return 2;
	}
	want_ms = atol(argv[2]);
	if (!strcmp(argv[1], "main")) {
		spin_for((double)want_ms);
	} else if (!strcmp(argv[1], "handler")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_prof;
		sigaction(SIGPROF, &sa, NULL);
		/* The handler does the work: first one run raised at once (its
		 * ~3 ticks must wait); then, between the timer's runs, only the
		 * clock's system calls for the first half, where a tick outside
		 * the handler lands in the kernel; then the program's own user
		 * code, where one may load (with clock reads alone 0-9 ticks of
		 * 700 fell outside both, and 2 runs in 80 never loaded). */
		loaded_before = decoder_mapped();
		raise(SIGPROF);
		struct itimerval it = {{0, 2000}, {0, 2000}};
		setitimer(ITIMER_PROF, &it, NULL);
		double half = cpu_ms() + (double)want_ms / 2, end = half + (double)want_ms / 2;
		while (cpu_ms() < half)
			;
		while (cpu_ms() < end)
			for (int j = 0; j < 4096; j++)
				sink += j * 0.5;
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_PROF, &off, NULL);
	} else if (!strcmp(argv[1], "iterate")) {
		dl_iterate_phdr(in_callback, NULL);
	} else if (!strcmp(argv[1], "nofds")) {
		struct rlimit lim;
		while (open("/dev/null", O_RDONLY) >= 0)
			;
		loaded_before = decoder_mapped();
		spin_for((double)want_ms);
		for (int fd = 3; getrlimit(RLIMIT_NOFILE, &lim) == 0 && (rlim_t)fd < lim.rlim_cur; fd++)
			close(fd);
		spin_for((double)want_ms);
	} else {
		fprintf(stderr, "lazy_deps: unknown mode %s\n", argv[1]);
		return 2;
	}
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int zydis = 0, unwind = 0, lzma = 0;
	while (f && fgets(line, sizeof(line), f)) {
		zydis |= strstr(line, "libZydis") != NULL;
		unwind |= strstr(line, "libunwind") != NULL;
		lzma |= strstr(line, "liblzma") != NULL;
	}
	if (f)
		fclose(f);
	printf("zydis=%d unwind=%d lzma=%d loaded_before=%d loaded_inside=%d\n", zydis, unwind,
	       lzma, loaded_before, (int)loaded_inside);
	static const char *const sonames[3] = {"libZydis.so.4.0", "libunwind.so.8", "liblzma.so.5"};
	printf("names");
	for (int i = 0; i < 3; i++)
		printf(" %s", loaded_name(sonames[i]));
	printf("\n");
	return 0;
}
