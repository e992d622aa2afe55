/* iocount: bytes moved by the program's read and write calls (see iocount.h). */
#include "witch/iocount.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "witch/export.h"

static __thread uint64_t io_bytes __attribute__((tls_model("initial-exec")));
static __thread uint64_t io_limit __attribute__((tls_model("initial-exec"))) = UINT64_MAX;
static void (*io_hook)(void);

typedef ssize_t (*rw_fn)(int, void *, size_t);
typedef ssize_t (*prw_fn)(int, void *, size_t, off_t);
typedef ssize_t (*rwv_fn)(int, const struct iovec *, int);
typedef ssize_t (*prwv_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*from_fn)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
typedef ssize_t (*to_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sr_fn)(int, void *, size_t, int);
typedef ssize_t (*msg_fn)(int, struct msghdr *, int);
/* _FORTIFY_SOURCE's checked forms: the buffer's size last. */
typedef ssize_t (*rw_chk_fn)(int, void *, size_t, size_t);
typedef ssize_t (*prw_chk_fn)(int, void *, size_t, off_t, size_t);
typedef ssize_t (*sr_chk_fn)(int, void *, size_t, size_t, int);
typedef ssize_t (*from_chk_fn)(int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *);

/* One table, written once (a racing second lookup writes the same). */
static struct {
	rw_fn read, write;
	prw_fn pread, pread64, pwrite, pwrite64;
	rwv_fn readv, writev;
	prwv_fn preadv, preadv64, pwritev, pwritev64;
	sr_fn recv, send;
	from_fn recvfrom;
	to_fn sendto;
	msg_fn recvmsg, sendmsg;
	rw_chk_fn __read_chk;
	prw_chk_fn __pread_chk, __pread64_chk;
	sr_chk_fn __recv_chk;
	from_chk_fn __recvfrom_chk;
	int done;
} next;

int iocount_init(void)
{
	if (__atomic_load_n(&next.done, __ATOMIC_ACQUIRE))
		return 0;
#define NEXT(name) (*(void **)&next.name = dlsym(RTLD_NEXT, #name))
	NEXT(read), NEXT(write), NEXT(pread), NEXT(pread64), NEXT(pwrite), NEXT(pwrite64);
	NEXT(readv), NEXT(writev), NEXT(preadv), NEXT(preadv64), NEXT(pwritev), NEXT(pwritev64);
	NEXT(recv), NEXT(send), NEXT(recvfrom), NEXT(sendto), NEXT(recvmsg), NEXT(sendmsg);
	NEXT(__read_chk), NEXT(__pread_chk), NEXT(__pread64_chk), NEXT(__recv_chk);
	NEXT(__recvfrom_chk);
#undef NEXT
	__atomic_store_n(&next.done, 1, __ATOMIC_RELEASE);
	return next.read && next.write && next.pread64 && next.pwrite64 ? 0 : -ENOENT;
}

uint64_t iocount_bytes(void)
{
	return io_bytes;
}

void iocount_set_limit(uint64_t bytes)
{
	io_limit = bytes;
}

void iocount_set_hook(void (*fn)(void))
{
	__atomic_store_n(&io_hook, fn, __ATOMIC_RELEASE);
}

/* Outside the wrappers' section: the hook's run is the runtime's. */
__attribute__((noinline, cold)) static void iocount_passed(void)
{
	void (*fn)(void) = __atomic_load_n(&io_hook, __ATOMIC_ACQUIRE);
	int saved_errno = errno;
	io_limit = UINT64_MAX;
	if (fn)
		fn();
	errno = saved_errno;
}

static inline ssize_t counted(ssize_t r)
{
	if (r > 0) {
		io_bytes += (uint64_t)r;
		if (__builtin_expect(io_bytes > io_limit, 0))
			iocount_passed();
	}
	return r;
}

/* The wrappers, in a section of their own: a tick there is a system
 * call's (iocount_holds_pc). */
#define IOCOUNT_WRAPPER WITCH_EXPORT __attribute__((section("witch_io")))
extern char __start_witch_io[], __stop_witch_io[];

int iocount_holds_pc(uint64_t pc)
{
	return pc >= (uint64_t)(uintptr_t)__start_witch_io && pc < (uint64_t)(uintptr_t)__stop_witch_io;
}

/* A call before the constructor's lookup looks up first; a function the C
 * library lacks fails as the kernel would for an unknown call. */
#define CALL(name, ...)                                                          \
	do {                                                                     \
		if (!__atomic_load_n(&next.done, __ATOMIC_ACQUIRE))              \
			iocount_init();                                          \
		if (!next.name) {                                                \
			errno = ENOSYS;                                          \
			return -1;                                               \
		}                                                                \
		return counted(next.name(__VA_ARGS__));                          \
	} while (0)

IOCOUNT_WRAPPER ssize_t read(int fd, void *buf, size_t n) { CALL(read, fd, buf, n); }
IOCOUNT_WRAPPER ssize_t write(int fd, const void *buf, size_t n) { CALL(write, fd, (void *)buf, n); }
IOCOUNT_WRAPPER ssize_t pread(int fd, void *buf, size_t n, off_t off) { CALL(pread, fd, buf, n, off); }
IOCOUNT_WRAPPER ssize_t pread64(int fd, void *buf, size_t n, off_t off) { CALL(pread64, fd, buf, n, off); }
IOCOUNT_WRAPPER ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	CALL(pwrite, fd, (void *)buf, n, off);
}
IOCOUNT_WRAPPER ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	CALL(pwrite64, fd, (void *)buf, n, off);
}
IOCOUNT_WRAPPER ssize_t readv(int fd, const struct iovec *v, int n) { CALL(readv, fd, v, n); }
IOCOUNT_WRAPPER ssize_t writev(int fd, const struct iovec *v, int n) { CALL(writev, fd, v, n); }
IOCOUNT_WRAPPER ssize_t preadv(int fd, const struct iovec *v, int n, off_t off) { CALL(preadv, fd, v, n, off); }
IOCOUNT_WRAPPER ssize_t preadv64(int fd, const struct iovec *v, int n, off_t off)
{
	CALL(preadv64, fd, v, n, off);
}
IOCOUNT_WRAPPER ssize_t pwritev(int fd, const struct iovec *v, int n, off_t off) { CALL(pwritev, fd, v, n, off); }
IOCOUNT_WRAPPER ssize_t pwritev64(int fd, const struct iovec *v, int n, off_t off)
{
	CALL(pwritev64, fd, v, n, off);
}
IOCOUNT_WRAPPER ssize_t recv(int fd, void *buf, size_t n, int flags) { CALL(recv, fd, buf, n, flags); }
IOCOUNT_WRAPPER ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	CALL(send, fd, (void *)buf, n, flags);
}
IOCOUNT_WRAPPER ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from,
			      socklen_t *len)
{
	CALL(recvfrom, fd, buf, n, flags, from, len);
}
IOCOUNT_WRAPPER ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to,
			    socklen_t len)
{
	CALL(sendto, fd, buf, n, flags, to, len);
}
IOCOUNT_WRAPPER ssize_t recvmsg(int fd, struct msghdr *m, int flags) { CALL(recvmsg, fd, m, flags); }
IOCOUNT_WRAPPER ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	CALL(sendmsg, fd, (struct msghdr *)m, flags);
}
IOCOUNT_WRAPPER ssize_t __read_chk(int fd, void *buf, size_t n, size_t size)
{
	CALL(__read_chk, fd, buf, n, size);
}
IOCOUNT_WRAPPER ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t size)
{
	CALL(__pread_chk, fd, buf, n, off, size);
}
IOCOUNT_WRAPPER ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t size)
{
	CALL(__pread64_chk, fd, buf, n, off, size);
}
IOCOUNT_WRAPPER ssize_t __recv_chk(int fd, void *buf, size_t n, size_t size, int flags)
{
	CALL(__recv_chk, fd, buf, n, size, flags);
}
IOCOUNT_WRAPPER ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t size, int flags,
				    struct sockaddr *from, socklen_t *len)
{
	CALL(__recvfrom_chk, fd, buf, n, size, flags, from, len);
}
