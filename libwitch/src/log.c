/* log: async-signal-safe formatting of `witch:` lines (see log.h). */
#include "witch/log.h"
#include "witch/fdguard.h"
#include "witch/rawsys.h"
#include "witch/sigguard.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static int log_level;

void log_set_verbosity(int level) { log_level = level; }

static size_t put_str(char *buf, size_t pos, size_t size, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++)
		if (pos + 1 < size)
			buf[pos++] = s[i];
	return pos;
}

static size_t put_num(char *buf, size_t pos, size_t size, unsigned long long v,
		      unsigned base, int negative)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (negative && pos + 1 < size)
		buf[pos++] = '-';
	while (n > 0 && pos + 1 < size)
		buf[pos++] = tmp[--n];
	return pos;
}

int log_format(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t pos = 0;
	if (size == 0)
		return 0;
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			if (pos + 1 < size)
				buf[pos++] = *p;
			continue;
		}
		p++;
		size_t prec = (size_t)-1;
		if (*p == '.' && p[1] == '*') {
			prec = (size_t)va_arg(ap, int);
			p += 2;
		}
		int longs = 0;
		while (*p == 'l') {
			longs++;
			p++;
		}
		if (*p == 'z') {
			longs = 1;
			p++;
		}
		switch (*p) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			pos = put_str(buf, pos, size, s ? s : "(null)", prec);
			break;
		}
		case 'c':
			if (pos + 1 < size)
				buf[pos++] = (char)va_arg(ap, int);
			break;
		case 'd': {
			long long v = longs ? va_arg(ap, long) : va_arg(ap, int);
			pos = put_num(buf, pos, size, v < 0 ? -(unsigned long long)v : (unsigned long long)v,
				      10, v < 0);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v = longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			pos = put_num(buf, pos, size, v, *p == 'x' ? 16 : 10, 0);
			break;
		}
		case 'p':
			pos = put_str(buf, pos, size, "0x", 2);
			pos = put_num(buf, pos, size, (uintptr_t)va_arg(ap, void *), 16, 0);
			break;
		case '%':
			if (pos + 1 < size)
				buf[pos++] = '%';
			break;
		default:
			pos = put_str(buf, pos, size, "%?", 2);
			break;
		}
		if (!*p)
			break;
	}
	buf[pos] = '\0';
	return (int)pos;
}

int log_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = log_format(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* Format "witch: " + text + "\n" into buf: its length. */
static int log_compose(char *buf, size_t size, const char *fmt, va_list ap)
{
	memcpy(buf, "witch: ", 7);
	int n = 7 + log_format(buf + 7, size - 8, fmt, ap);
	buf[n++] = '\n';
	return n;
}

/* What standard error was at the start: a daemon that closes it and
 * opens a file (its data, a socket) gets number 2 for it, and a witch:
 * line written there later (the memory cap's, a profile's failed write)
 * went into that file.  0: not noted (before log_note_stderr). */
static int log_err_noted; /* 1: open then, 2: closed then */
static uint64_t log_err_dev, log_err_ino;

static int log_err_id(uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	/* (newfstatat, as the C library's fstat: the call a sandbox allows) */
	if (rawsys6(SYS_newfstatat, STDERR_FILENO, (long)"", (long)&st, AT_EMPTY_PATH, 0, 0) != 0)
		return -1;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

void log_note_stderr(void)
{
	log_err_noted = log_err_id(&log_err_dev, &log_err_ino) == 0 ? 1 : 2;
}

/* Standard error is still what it was at the start. */
static int log_err_same(void)
{
	uint64_t dev, ino;
	if (!log_err_noted)
		return 1;
	return log_err_noted == 1 && log_err_id(&dev, &ino) == 0 && dev == log_err_dev &&
	       ino == log_err_ino;
}

static void log_write(const char *buf, int n)
{
	if (!log_err_same())
		return; /* the program's file now, not the user's terminal */
	/* Standard error a pipe whose reader is gone (`prog 2>&1 | head`):
	 * the line's SIGPIPE would end a program that wrote nothing more. */
	struct sigguard_held pipe;
	sigguard_hold(SIGPIPE, &pipe);
	for (int off = 0; off < n;) {
		ssize_t w = write(STDERR_FILENO, buf + off, (size_t)(n - off));
		if (w <= 0)
			break; /* stderr closed: nothing else to tell */
		off += (int)w;
	}
	(void)sigguard_release(&pipe);
}

/* Said once per process tree.  A line is about the machine or the
 * settings, which a program's children (make's compilers, a script's
 * commands) share: each would print it again.  The process that prints
 * a line binds an abstract socket named by its pid and the line's hash
 * and keeps it while it lives (close-on-exec; the kernel frees the name
 * at exit, nothing is left behind); a process whose ancestor holds the
 * name stays quiet.  Sequential runs each still say it. */
#define LOG_HELD_MAX 8    /* distinct lines a process holds */
#define LOG_ANCESTORS 64  /* how far up the parents are asked */

static unsigned log_held_n; /* names bound: their sockets stay open, unread */

static uint64_t log_hash(const char *s, int n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (int i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static socklen_t log_said_name(struct sockaddr_un *a, long pid, uint64_t hash)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n = log_snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "witch-said-%ld-%llx", pid,
			     (unsigned long long)hash);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The parent of pid, from /proc/PID/stat ("pid (comm) S ppid ..."; comm
 * may hold spaces and parentheses: the last ')' ends it), or -1. */
static long log_parent_of(long pid)
{
	char path[40], buf[512];
	log_snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	fdguard_close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	long ppid = 0;
	for (p += 4; *p >= '0' && *p <= '9'; p++)
		ppid = ppid * 10 + (*p - '0');
	return ppid;
}

/* An ancestor of this process holds the line: a datagram socket connects
 * to a bound name and is refused where there is none. */
static int log_said_above(uint64_t hash)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int said = 0;
	long pid = (long)getppid();
	for (int i = 0; i < LOG_ANCESTORS && pid > 1 && !said; i++) {
		struct sockaddr_un a;
		socklen_t len = log_said_name(&a, pid, hash);
		said = connect(fd, (struct sockaddr *)&a, len) == 0;
		pid = log_parent_of(pid);
	}
	fdguard_close(fd);
	return said;
}

static void log_hold(uint64_t hash)
{
	unsigned i = __atomic_fetch_add(&log_held_n, 1, __ATOMIC_RELAXED);
	if (i >= LOG_HELD_MAX)
		return; /* its children say it again: no harm */
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	struct sockaddr_un a;
	socklen_t len = log_said_name(&a, (long)getpid(), hash);
	if (bind(fd, (struct sockaddr *)&a, len) < 0)
		fdguard_close(fd); /* held already (a forked copy said it too) */
	else
		(void)fdguard_take(fd); /* kept for the process's life: out of its way */
}

void log_line(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = log_compose(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	int saved_errno = errno; /* the sockets' and /proc's calls are not the program's */
	uint64_t hash = log_hash(buf, n);
	if (!log_said_above(hash)) {
		log_write(buf, n);
		log_hold(hash);
	}
	errno = saved_errno;
}

void log_verbose(int level, const char *fmt, ...)
{
	if (log_level < level)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = log_compose(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_write(buf, n);
}
