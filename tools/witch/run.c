/* run: run a program under libwitch.so and report; see run.h. */
#include "run.h"

#include "run_profiles.h"

#include "cli.h"
#include "report.h"
#include "witch/watchpoint.h"

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

static const char run_usage[] =
	"Usage: witch run [-c dead|silent|load] [-o FILE] [--json] [--top N] [--] PROG [ARGS...]\n";

static volatile sig_atomic_t child_pid;


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
	struct run_found profiles = { 0 };
	struct saved_signals sv;
	struct timespec start;
	int i, rc, status, exit_code, exec_errno;
	pid_t pid = -1, w;
	struct witch_cli c = {.cmd = "run", .usage = run_usage, .argc = argc, .argv = argv};

	for (c.i = 1; c.i < argc; c.i++) {
		const char *a = argv[c.i];

		if (!strcmp(a, "--")) {
			c.i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;	/* the program; its own options follow */
		if ((rc = witch_cli_option(&c, "-c", "a client name", &client)) ||
		    (rc = witch_cli_option(&c, "--client", "a client name", &client))) {
			if (rc < 0)
				return 2;
		} else if ((rc = witch_cli_option(&c, "-o", "a file name", &output)) ||
			   (rc = witch_cli_option(&c, "--output", "a file name", &output))) {
			if (rc < 0)
				return 2;
		} else if ((rc = witch_cli_top(&c, &ro.top))) {
			if (rc < 0)
				return 2;
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
			return witch_cli_usage_error(&c, "unknown option '%s'", a);
		}
	}
	i = c.i;
	if (i >= argc)
		return witch_cli_usage_error(&c, "%s", "no program given");
	if (client && strcmp(client, "dead") && strcmp(client, "silent") &&
	    strcmp(client, "load"))
		return witch_cli_usage_error(&c, "-c: unknown client '%s' (dead, silent or load)",
				   client);
	if (output && !*output)
		return witch_cli_usage_error(&c, "%s", "-o: empty file name");

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
			dflt = run_default_pattern(argv[i]);
			output = dflt;
		}
	}
	pattern = output ? run_absolute_pattern(output) : NULL;
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

	rc = run_find_profiles(pattern, pid, &start, &profiles);
	if (rc) {
		fprintf(stderr, "witch: run: looking for profiles: %s\n",
			strerror(-rc));
		goto out;
	}
	run_expand_pid(pattern, pid, expected, sizeof(expected));
	if (!profiles.n) {
		if (WIFSIGNALED(status))
			fprintf(stderr,
				"witch: no profile written (%s was killed by signal %d (%s); expected %s)\n",
				argv[i], WTERMSIG(status),
				strsignal(WTERMSIG(status)), expected);
		else if (watchpoint_probe(0) != -EOPNOTSUPP) /* else the runtime said why */
			fprintf(stderr,
				"witch: no profile written (expected %s; was %s loaded? WITCH_VERBOSE=1 tells)\n",
				expected, lib);
		goto out;
	}
	/* The report's own errors are printed by it; the program's status
	 * stays the exit status either way. */
	witch_report_files(profiles.paths, profiles.n, &ro, stdout, NULL);
out:
	run_found_free(&profiles);
	free(pattern);
	free(dflt);
	return exit_code;
}
