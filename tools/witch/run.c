/* run: run a program under libwitch.so and report; see run.h. */
#include "run.h"

#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIB_NAME "libwitch.so"

/*
 * Slack for the program's own profile: on file systems with coarse
 * timestamps its mtime may read as slightly before the start of the run.
 * Only that one file gets it; a stale file with the same pid within two
 * seconds would need pid wrap-around.
 */
#define OWN_PROFILE_SLACK_S 2

static const char run_usage[] =
	"Usage: witch run [-c dead|silent|load] [-o FILE] [--json] [--top N] [--] PROG [ARGS...]\n";

static volatile sig_atomic_t child_pid;

static int usage_error(const char *fmt, const char *arg)
{
	fputs("witch: run: ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s(see 'witch --help')\n", run_usage);
	return 2;
}

/* ---- finding libwitch.so ---- */

static int readable_file(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EISDIR;
	if (access(path, R_OK))
		return -errno;
	return 0;
}

/* Resolve lib into an absolute path that LD_PRELOAD can carry; says why not. */
static int absolute_lib(const char *path, char *out, size_t outlen)
{
	char *abs = realpath(path, NULL);
	int rc = 0;

	if (!abs) {
		rc = -errno;
		fprintf(stderr, "witch: run: %s: %s\n", path, strerror(errno));
		return rc;
	}
	/* ld.so splits LD_PRELOAD at spaces and colons. */
	if (strpbrk(abs, " :")) {
		fprintf(stderr,
			"witch: run: %s: the library path contains a space or colon, which LD_PRELOAD cannot express\n",
			abs);
		rc = -EINVAL;
	} else if (strlen(abs) >= outlen) {
		fprintf(stderr, "witch: run: %s: path too long\n", abs);
		rc = -ENAMETOOLONG;
	} else {
		strcpy(out, abs);
	}
	free(abs);
	return rc;
}

static int find_lib(char *out, size_t outlen)
{
	const char *env = getenv("WITCH_LIB");
	char exe[PATH_MAX], c1[PATH_MAX + 32], c2[PATH_MAX + 32];
	ssize_t n;
	char *slash;
	int rc;

	if (env && *env) {
		/* An explicit choice that does not work is an error, not a
		 * reason to silently profile with some other library. */
		rc = readable_file(env);
		if (rc) {
			fprintf(stderr, "witch: run: WITCH_LIB=%s: %s\n", env,
				strerror(-rc));
			return rc;
		}
		return absolute_lib(env, out, outlen);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		rc = -errno;
		fprintf(stderr,
			"witch: run: cannot find %s: /proc/self/exe: %s; set WITCH_LIB\n",
			LIB_NAME, strerror(errno));
		return rc;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(c1, sizeof(c1), "%s/%s", exe, LIB_NAME);
	snprintf(c2, sizeof(c2), "%s/../lib/%s", exe, LIB_NAME);
	if (!readable_file(c1))
		return absolute_lib(c1, out, outlen);
	if (!readable_file(c2))
		return absolute_lib(c2, out, outlen);
	fprintf(stderr,
		"witch: run: cannot find %s (tried %s and %s); set WITCH_LIB to its path\n",
		LIB_NAME, c1, c2);
	return -ENOENT;
}

/* ---- output pattern ---- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Default pattern: witch-<prog basename>-%p.prof, '%' in the name doubled. */
static char *default_pattern(const char *prog)
{
	const char *b = base_name(prog);
	size_t len = strlen(b);
	char *out = malloc(2 * len + sizeof("witch--%p.prof"));
	char *o = out;

	if (!out)
		return NULL;
	o += sprintf(o, "witch-");
	for (; *b; b++) {
		*o++ = *b;
		if (*b == '%')
			*o++ = '%';
	}
	strcpy(o, "-%p.prof");
	return out;
}

/* Prefix relative patterns with the current directory. */
static char *absolute_pattern(const char *pat)
{
	char *cwd, *out;

	if (pat[0] == '/')
		return strdup(pat);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	/* '%' in the directory name must not read as a conversion. */
	out = malloc(2 * strlen(cwd) + strlen(pat) + 2);
	if (out) {
		char *o = out;

		for (const char *c = cwd; *c; c++) {
			*o++ = *c;
			if (*c == '%')
				*o++ = '%';
		}
		*o++ = '/';
		strcpy(o, pat);
	}
	free(cwd);
	return out;
}

/* The pattern as a glob(3) pattern: %p and %e become *, metacharacters quoted. */
static char *glob_of_pattern(const char *pat)
{
	char *out = malloc(2 * strlen(pat) + 1), *o = out;

	if (!out)
		return NULL;
	for (const char *c = pat; *c; c++) {
		if (c[0] == '%' && (c[1] == 'p' || c[1] == 'e')) {
			*o++ = '*';
			c++;
		} else if (c[0] == '%' && c[1] == '%') {
			*o++ = '%';
			c++;
		} else {
			if (strchr("*?[\\", *c))
				*o++ = '\\';
			*o++ = *c;
		}
	}
	*o = '\0';
	return out;
}

/*
 * Whether s is an expansion of pat: %p matches one or more digits (the
 * first one is stored in *pid), %e one or more characters other than '/',
 * %% a '%'; anything else is literal.
 */
static bool match_pattern(const char *pat, const char *s, long long *pid)
{
	while (*pat) {
		if (pat[0] == '%' && (pat[1] == 'p' || pat[1] == 'e')) {
			size_t max = pat[1] == 'p' ? strspn(s, "0123456789") :
						     strcspn(s, "/");

			for (size_t k = max; k >= 1; k--) {
				if (match_pattern(pat + 2, s + k, pid)) {
					if (pat[1] == 'p') {
						char num[32];

						if (k >= sizeof(num))
							return false;
						memcpy(num, s, k);
						num[k] = '\0';
						*pid = strtoll(num, NULL, 10);
					}
					return true;
				}
			}
			return false;
		}
		if (pat[0] == '%' && pat[1] == '%') {
			if (*s != '%')
				return false;
			pat += 2;
			s++;
			continue;
		}
		if (*pat != *s)
			return false;
		pat++;
		s++;
	}
	return *s == '\0';
}

static bool has_pid_conversion(const char *pat)
{
	for (const char *c = pat; *c; c++) {
		if (c[0] == '%' && c[1] == 'p')
			return true;
		if (c[0] == '%' && c[1] == '%')
			c++;
	}
	return false;
}

/* The pattern with %p = pid (for messages); %e and %% kept as written. */
static void expand_pid(const char *pat, pid_t pid, char *out, size_t outlen)
{
	size_t o = 0;

	for (const char *c = pat; *c && o + 1 < outlen; c++) {
		if (c[0] == '%' && c[1] == 'p') {
			int n = snprintf(out + o, outlen - o, "%ld", (long)pid);

			if (n < 0 || (size_t)n >= outlen - o)
				break;
			o += (size_t)n;
			c++;
		} else {
			out[o++] = *c;
		}
	}
	out[o] = '\0';
}

static bool written_since(const struct stat *st, const struct timespec *t,
			  time_t slack)
{
	time_t from = t->tv_sec - slack;

	if (st->st_mtim.tv_sec != from)
		return st->st_mtim.tv_sec > from;
	return st->st_mtim.tv_nsec >= t->tv_nsec;
}

struct found {
	char **paths;
	size_t n, cap;
};

static void found_free(struct found *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->paths[i]);
	free(f->paths);
	f->paths = NULL;
	f->n = f->cap = 0;
}

static int found_add(struct found *f, const char *path)
{
	if (f->n == f->cap) {
		size_t ncap = f->cap ? 2 * f->cap : 8;
		char **np = realloc(f->paths, ncap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		f->paths = np;
		f->cap = ncap;
	}
	f->paths[f->n] = strdup(path);
	if (!f->paths[f->n])
		return -ENOMEM;
	f->n++;
	return 0;
}

/*
 * Add the files that expand pat and were written during the run: with
 * own, the program's (%p = its pid; any name if pat has no %p), else
 * those of other pids.
 */
static int collect(const char *pat, pid_t pid, bool own,
		   const struct timespec *start, struct found *f)
{
	char *gpat = glob_of_pattern(pat);
	bool pid_conv = has_pid_conversion(pat);
	glob_t g;
	int grc, rc = 0;

	if (!gpat)
		return -ENOMEM;
	/* GLOB_PERIOD: %e may expand to a name that starts with a dot. */
	grc = glob(gpat, GLOB_PERIOD, NULL, &g);
	free(gpat);
	if (grc == GLOB_NOMATCH)
		return 0;
	if (grc == GLOB_NOSPACE)
		return -ENOMEM;
	if (grc == GLOB_ABORTED) {
		fprintf(stderr,
			"witch: warning: cannot search the directory of %s for profiles\n",
			pat);
		globfree(&g);
		return 0;
	}
	for (size_t i = 0; i < g.gl_pathc && !rc; i++) {
		const char *path = g.gl_pathv[i];
		long long fpid = -1;
		struct stat st;

		if (!match_pattern(pat, path, &fpid))
			continue;
		if (own != (!pid_conv || fpid == (long long)pid))
			continue;
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;	/* vanished, or not a profile */
		if (!written_since(&st, start, own ? OWN_PROFILE_SLACK_S : 0))
			continue;	/* left over from an earlier run */
		rc = found_add(f, path);
	}
	globfree(&g);
	return rc;
}

/*
 * The profiles of this run, the program's own first, then those of its
 * descendants. Without %p in the pattern, every exec'd process writes
 * the pattern's name itself, and libwitch appends ".<pid>" for a process
 * forked without exec (libwitch/src/profile.c), so those are looked for
 * too.
 */
static int find_profiles(const char *pat, pid_t pid,
			 const struct timespec *start, struct found *f)
{
	char *dotted;
	int rc;

	rc = collect(pat, pid, true, start, f);
	if (!rc && has_pid_conversion(pat))
		rc = collect(pat, pid, false, start, f);
	if (!rc && !has_pid_conversion(pat)) {
		if (asprintf(&dotted, "%s.%%p", pat) < 0)
			return -ENOMEM;
		rc = collect(dotted, pid, false, start, f);
		free(dotted);
	}
	return rc;
}

/* ---- running ---- */

static void forward_signal(int sig)
{
	pid_t pid = (pid_t)child_pid;

	if (pid > 0)
		kill(pid, sig);
}

struct saved_signals {
	struct sigaction sint, squit, sterm, shup;
	sigset_t mask;
};

static void restore_signals(const struct saved_signals *sv)
{
	/* Cannot fail with valid signal numbers and saved actions. */
	sigaction(SIGINT, &sv->sint, NULL);
	sigaction(SIGQUIT, &sv->squit, NULL);
	sigaction(SIGTERM, &sv->sterm, NULL);
	sigaction(SIGHUP, &sv->shup, NULL);
	sigprocmask(SIG_SETMASK, &sv->mask, NULL);
}

static int set_signals(struct saved_signals *sv)
{
	struct sigaction ign = { 0 }, fwd = { 0 };
	sigset_t block;
	int rc;

	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	fwd.sa_handler = forward_signal;
	sigemptyset(&fwd.sa_mask);
	fwd.sa_flags = SA_RESTART;
	/* Save everything first so that a failure can restore it all. */
	if (sigaction(SIGINT, NULL, &sv->sint) ||
	    sigaction(SIGQUIT, NULL, &sv->squit) ||
	    sigaction(SIGTERM, NULL, &sv->sterm) ||
	    sigaction(SIGHUP, NULL, &sv->shup) ||
	    sigprocmask(SIG_BLOCK, NULL, &sv->mask))
		return -errno;
	/* Block the forwarded signals until child_pid is known. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &block, NULL) ||
	    sigaction(SIGINT, &ign, NULL) || sigaction(SIGQUIT, &ign, NULL) ||
	    sigaction(SIGTERM, &fwd, NULL) || sigaction(SIGHUP, &fwd, NULL)) {
		rc = -errno;
		restore_signals(sv);
		return rc;
	}
	return 0;
}

static int prepend_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;
	int rc;

	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1) ? -errno : 0;
	if (asprintf(&val, "%s:%s", lib, old) < 0)
		return -ENOMEM;
	rc = setenv("LD_PRELOAD", val, 1) ? -errno : 0;
	free(val);
	return rc;
}

/*
 * While any debug register is armed the CPU runs `rep movsb/stosb` without
 * its fast-string microcode, 16-27x slower on our VMs
 * (bench/dr_fast_string.c), and Witch keeps samples watched most of the
 * time.  glibc picks rep movsb/stosb for mid-sized memcpy/memmove/memset;
 * these tunables make it use its vector loops instead, which run as fast
 * natively and do not slow down.  Tunables are read by ld.so at start-up,
 * so only the launcher can set them; one the user already set is kept.
 */
static const char *const run_tunables[] = {
	"glibc.cpu.x86_rep_movsb_threshold=4294967295",
	"glibc.cpu.x86_rep_stosb_threshold=4294967295",
};

static int add_tunables(void)
{
	const char *old = getenv("GLIBC_TUNABLES");
	char *val = strdup(old ? old : "");

	if (!val)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(run_tunables) / sizeof(run_tunables[0]); i++) {
		const char *eq = strchr(run_tunables[i], '=');
		size_t keylen = (size_t)(eq - run_tunables[i]);
		char *next;

		if (strstr(val, run_tunables[i]) || memmem(val, strlen(val), run_tunables[i], keylen))
			continue;
		if (asprintf(&next, "%s%s%s", val, *val ? ":" : "", run_tunables[i]) < 0) {
			free(val);
			return -ENOMEM;
		}
		free(val);
		val = next;
	}
	int rc = setenv("GLIBC_TUNABLES", val, 1) ? -errno : 0;
	free(val);
	return rc;
}

/* fork + execvp; exec failure comes back through a close-on-exec pipe. */
static int spawn(char **argv, const struct saved_signals *sv, pid_t *pid,
		 int *exec_errno)
{
	int fds[2], e = 0;
	ssize_t n;

	*exec_errno = 0;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	fflush(NULL);	/* nothing of ours may be written twice */
	*pid = fork();
	if (*pid < 0) {
		e = errno;
		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	if (*pid == 0) {
		close(fds[0]);
		/* The program gets the dispositions witch was started with. */
		restore_signals(sv);
		execvp(argv[0], argv);
		e = errno;
		/* If this write fails too, nobody is left to tell: the
		 * parent then sees a plain exit status 127. */
		if (write(fds[1], &e, sizeof(e)) != (ssize_t)sizeof(e))
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	child_pid = *pid;
	close(fds[1]);
	do
		n = read(fds[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == (ssize_t)sizeof(e))
		*exec_errno = e;
	return 0;
}

int witch_run_main(int argc, char **argv)
{
	struct witch_report_options ro = { 0 };
	const char *client = NULL, *output = NULL;
	char lib[PATH_MAX], expected[PATH_MAX + 64];
	char *pattern = NULL, *dflt = NULL;
	struct found profiles = { 0 };
	struct saved_signals sv;
	struct timespec start;
	int i, rc, status, exit_code, exec_errno;
	pid_t pid = -1, w;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;	/* the program; its own options follow */
		if (!strcmp(a, "-c") || !strcmp(a, "--client")) {
			if (i + 1 >= argc)
				return usage_error("%s needs a client name", a);
			client = argv[++i];
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 >= argc)
				return usage_error("%s needs a file name", a);
			output = argv[++i];
		} else if (!strcmp(a, "--top")) {
			if (i + 1 >= argc)
				return usage_error("%s needs a number", a);
			if (witch_parse_top(argv[++i], &ro.top))
				return usage_error("--top: '%s' is not a count (0 for all)",
						   argv[i]);
			ro.top_set = true;
		} else if (!strncmp(a, "--client=", 9)) {
			client = a + 9;
		} else if (!strncmp(a, "--output=", 9)) {
			output = a + 9;
		} else if (!strncmp(a, "--top=", 6)) {
			if (witch_parse_top(a + 6, &ro.top))
				return usage_error("--top: '%s' is not a count (0 for all)",
						   a + 6);
			ro.top_set = true;
		} else if (!strcmp(a, "--json")) {
			ro.json = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(run_usage, stdout);
			fputs("Runs PROG with libwitch.so preloaded and prints the report of its\n"
			      "profile(s) after it exits, with PROG's exit status. See 'witch --help'.\n",
			      stdout);
			return 0;
		} else {
			return usage_error("unknown option '%s'", a);
		}
	}
	if (i >= argc)
		return usage_error("%s", "no program given");
	if (client && strcmp(client, "dead") && strcmp(client, "silent") &&
	    strcmp(client, "load"))
		return usage_error("-c: unknown client '%s' (dead, silent or load)",
				   client);
	if (output && !*output)
		return usage_error("%s", "-o: empty file name");

	if (find_lib(lib, sizeof(lib)))
		return 2;
	if (!client) {
		client = getenv("WITCH_CLIENT");
		if (!client || !*client)
			client = "dead";
	}
	if (!output) {
		output = getenv("WITCH_OUTPUT");
		if (!output || !*output) {
			dflt = default_pattern(argv[i]);
			output = dflt;
		}
	}
	pattern = output ? absolute_pattern(output) : NULL;
	if (!pattern) {
		fprintf(stderr, "witch: run: cannot build the output path: %s\n",
			strerror(errno ? errno : ENOMEM));
		free(dflt);
		return 2;
	}
	if ((rc = prepend_preload(lib)) || (rc = add_tunables()) ||
	    (setenv("WITCH_CLIENT", client, 1) && (rc = -errno)) ||
	    (setenv("WITCH_OUTPUT", pattern, 1) && (rc = -errno))) {
		fprintf(stderr, "witch: run: cannot set the environment: %s\n",
			strerror(-rc));
		exit_code = 2;
		goto out;
	}

	/* Same clock as file timestamps, so "written since" is comparable. */
	if (clock_gettime(CLOCK_REALTIME_COARSE, &start)) {
		fprintf(stderr, "witch: run: cannot read the clock: %s\n",
			strerror(errno));
		exit_code = 2;
		goto out;
	}
	if ((rc = set_signals(&sv))) {
		fprintf(stderr, "witch: run: cannot set up signals: %s\n",
			strerror(-rc));
		exit_code = 2;
		goto out;
	}
	rc = spawn(argv + i, &sv, &pid, &exec_errno);
	/* Forwarded signals may arrive now that child_pid is set. */
	sigprocmask(SIG_SETMASK, &sv.mask, NULL);
	if (rc) {
		restore_signals(&sv);
		fprintf(stderr, "witch: run: cannot start %s: %s\n", argv[i],
			strerror(-rc));
		exit_code = 2;
		goto out;
	}
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	child_pid = 0;
	restore_signals(&sv);
	if (w < 0) {
		fprintf(stderr, "witch: run: waiting for %s: %s\n", argv[i],
			strerror(errno));
		exit_code = 2;
		goto out;
	}
	if (WIFSIGNALED(status))
		exit_code = 128 + WTERMSIG(status);
	else
		exit_code = WEXITSTATUS(status);
	if (exec_errno) {
		/* Like a shell: 127 when not found, 126 when not runnable. */
		fprintf(stderr, "witch: run: cannot execute %s: %s\n", argv[i],
			strerror(exec_errno));
		exit_code = exec_errno == ENOENT ? 127 : 126;
		goto out;
	}

	rc = find_profiles(pattern, pid, &start, &profiles);
	if (rc) {
		fprintf(stderr, "witch: run: looking for profiles: %s\n",
			strerror(-rc));
		goto out;
	}
	expand_pid(pattern, pid, expected, sizeof(expected));
	if (!profiles.n) {
		if (WIFSIGNALED(status))
			fprintf(stderr,
				"witch: no profile written (%s was killed by signal %d (%s); expected %s)\n",
				argv[i], WTERMSIG(status),
				strsignal(WTERMSIG(status)), expected);
		else
			fprintf(stderr,
				"witch: no profile written (expected %s; was %s loaded? WITCH_VERBOSE=1 tells)\n",
				expected, lib);
		goto out;
	}
	/* The report's own errors are printed by it; the program's status
	 * stays the exit status either way. */
	witch_report_files(profiles.paths, profiles.n, &ro, stdout, NULL);
out:
	found_free(&profiles);
	free(pattern);
	free(dflt);
	return exit_code;
}
