/* perf_fd: the runtime's own perf_event file descriptors (see perf_fd.h). */
#include "witch/perf_fd.h"
#include "witch/fdguard.h"
#include "witch/rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>

struct perf_fd_args {
	const struct perf_event_attr *attr;
	pid_t tid;
};

static long perf_fd_syscall(const void *arg)
{
	const struct perf_fd_args *a = arg;
	return rawsys6(SYS_perf_event_open, (long)a->attr, (long)a->tid, -1L, -1L /* group_fd */,
		       PERF_FLAG_FD_CLOEXEC, 0); /* -errno straight from the kernel */
}

int perf_fd_open(const struct perf_event_attr *attr, pid_t tid)
{
	struct perf_fd_args a = {attr, tid};
	return fdguard_open(perf_fd_syscall, &a);
}

int perf_fd_route(int fd, int sig, pid_t tid)
{
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
	if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0 || fcntl(fd, F_SETSIG, sig) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) < 0)
		return -errno;
	return 0;
}
