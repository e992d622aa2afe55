/* rawsys: a system call without the C library.
 *
 * For the handlers (errno must stay the interrupted code's) and for the
 * interposers of functions the C library's own wrappers would reach again
 * (mmap, syscall).  Returns the kernel's value: a result, or -errno.
 */
#ifndef WITCH_RAWSYS_H
#define WITCH_RAWSYS_H

static inline long rawsys6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif
