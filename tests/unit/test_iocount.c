/* test_iocount: each interposed read and write call adds what it returned
 * to the thread's count (iocount.h), and a failed call adds nothing.
 *
 * Linked with the runtime's static library: this program's calls reach
 * iocount.c's definitions, which call the C library's.  Each row makes one
 * call on a pipe, a socket pair or a file holding 8 KiB, and expects the
 * count to move by the bytes the call moved (its return value).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "witch/iocount.h"

enum op { OP_WRITE, OP_READ, OP_PWRITE, OP_PREAD, OP_PREAD64, OP_WRITEV, OP_READV, OP_PREADV,
	  OP_SEND, OP_RECV, OP_SENDTO, OP_RECVFROM, OP_SENDMSG, OP_RECVMSG, OP_PREAD_CHK,
	  OP_READ_BADFD };

/* _FORTIFY_SOURCE's form, which a fortified program calls instead. */
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t size);

struct row {
	int line;
	enum op op;
	size_t n;      /* bytes asked */
	ssize_t want;  /* the call's return, and the count's move when > 0 */
};

static const struct row rows[] = {
	{__LINE__, OP_WRITE, 300, 300},    {__LINE__, OP_READ, 4096, 300},
	{__LINE__, OP_PWRITE, 5000, 5000}, {__LINE__, OP_PREAD, 8192, 8192},
	{__LINE__, OP_PREAD64, 100, 100},  {__LINE__, OP_WRITEV, 700, 700},
	{__LINE__, OP_READV, 700, 700},    {__LINE__, OP_PREADV, 1000, 1000},
	{__LINE__, OP_SEND, 64, 64},       {__LINE__, OP_RECV, 1000, 64},
	{__LINE__, OP_SENDTO, 33, 33},     {__LINE__, OP_RECVFROM, 1000, 33},
	{__LINE__, OP_SENDMSG, 77, 77},    {__LINE__, OP_RECVMSG, 1000, 77},
	{__LINE__, OP_PREAD_CHK, 100, 100}, {__LINE__, OP_READ_BADFD, 10, -1},
};

static int hook_calls;

static void hook(void)
{
	hook_calls++;
	errno = EIO; /* the program's errno must not see it */
}

/* A limit set 500 bytes on: writes of 200, each read back (a read counts
 * too), take the count to 200, 400, then 600 at the second write, which
 * runs the hook, once (the limit is then none: a third does not), with
 * the program's errno as it was.  A limit of none, or a failed call,
 * never runs it. */
static void check_limit(const int p[2])
{
	static const struct {
		int line;
		int limit; /* 1: set 500 bytes on before the first write */
		int writes, fd_bad;
		int calls;
	} cases[] = {
		{__LINE__, 1, 1, 0, 0},
		{__LINE__, 1, 2, 0, 1},
		{__LINE__, 1, 3, 0, 1},
		{__LINE__, 0, 3, 0, 0},
		{__LINE__, 1, 3, 1, 0},
	};
	static char buf[200];
	iocount_set_hook(hook);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hook_calls = 0;
		iocount_set_limit(cases[i].limit ? iocount_bytes() + 500 : UINT64_MAX);
		for (int w = 0; w < cases[i].writes; w++) {
			errno = ENOENT;
			ssize_t got = write(cases[i].fd_bad ? -1 : p[1], buf, sizeof(buf));
			if (got > 0 && read(p[0], buf, sizeof(buf)) != got) /* (a read counts too) */
				CHECK(cases[i].line, 0, "pipe read short");
			if (!cases[i].fd_bad)
				CHECK(cases[i].line, errno == ENOENT, "write %d: errno %d, want ENOENT", w,
				      errno);
		}
		CHECK(cases[i].line, hook_calls == cases[i].calls, "hook ran %d times, want %d",
		      hook_calls, cases[i].calls);
	}
	iocount_set_limit(UINT64_MAX);
	iocount_set_hook(NULL);
}

int main(void)
{
	static char buf[16384];
	int p[2], s[2];
	char path[] = "/tmp/test_iocount.XXXXXX";
	int file = mkstemp(path);
	if (file < 0 || pipe(p) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, s) < 0) {
		perror("setup");
		return 1;
	}
	unlink(path);
	memset(buf, 7, sizeof(buf));
	if (pwrite(file, buf, 8192, 0) != 8192) /* counted too: before the rows */
		return 1;
	CHECK(__LINE__, iocount_init() == 0, "iocount_init failed");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct iovec v = {buf, r->n};
		struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
		uint64_t before = iocount_bytes();
		ssize_t got = -2;
		switch (r->op) {
		case OP_WRITE: got = write(p[1], buf, r->n); break;
		case OP_READ: got = read(p[0], buf, r->n); break;
		case OP_PWRITE: got = pwrite(file, buf, r->n, 8192); break;
		case OP_PREAD: got = pread(file, buf, r->n, 0); break;
		case OP_PREAD64: got = pread64(file, buf, r->n, 10); break;
		case OP_WRITEV: got = writev(p[1], &v, 1); break;
		case OP_READV: got = readv(p[0], &v, 1); break;
		case OP_PREADV: got = preadv(file, &v, 1, 0); break;
		case OP_SEND: got = send(s[0], buf, r->n, 0); break;
		case OP_RECV: got = recv(s[1], buf, r->n, 0); break;
		case OP_SENDTO: got = sendto(s[0], buf, r->n, 0, NULL, 0); break;
		case OP_RECVFROM: got = recvfrom(s[1], buf, r->n, 0, NULL, NULL); break;
		case OP_SENDMSG: got = sendmsg(s[0], &m, 0); break;
		case OP_RECVMSG: got = recvmsg(s[1], &m, 0); break;
		case OP_PREAD_CHK: got = __pread_chk(file, buf, r->n, 0, sizeof(buf)); break;
		case OP_READ_BADFD: got = read(-1, buf, r->n); break;
		}
		uint64_t moved = iocount_bytes() - before;
		CHECK(r->line, got == r->want, "returned %zd, want %zd (%s)", got, r->want,
		      got < 0 ? strerror(errno) : "ok");
		CHECK(r->line, moved == (uint64_t)(r->want > 0 ? r->want : 0),
		      "count moved by %llu, want %zd", (unsigned long long)moved, r->want);
		if (r->op == OP_READ_BADFD)
			CHECK(r->line, errno == EBADF, "errno %d, want EBADF", errno);
	}
	check_limit(p);
	return check_failures != 0;
}
