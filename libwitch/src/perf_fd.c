/* perf_fd: the runtime's own perf_event file descriptors (see perf_fd.h). */
#include "witch/perf_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>

int perf_fd_open(const struct perf_event_attr *attr, pid_t tid)
{
	long ret;
	register long r10 __asm__("r10") = -1; /* group_fd */
	register long r8 __asm__("r8") = PERF_FLAG_FD_CLOEXEC;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_perf_event_open), "D"(attr), "S"((long)tid), "d"(-1L),
			   "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return (int)ret; /* the fd, or -errno straight from the kernel */
}

int perf_fd_route(int fd, int sig, pid_t tid)
{
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
	if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0 || fcntl(fd, F_SETSIG, sig) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) < 0)
		return -errno;
	return 0;
}
