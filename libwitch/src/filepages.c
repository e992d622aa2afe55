/* filepages: give back a read-only file mapping's pages (see filepages.h). */
#include "witch/filepages.h"
#include "witch/fdio.h"
#include "witch/fdguard.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#define PM_FILE (1ull << 61)    /* file page or shared anonymous */
#define PM_PRESENT (1ull << 63)
#define PAGE 4096ull

int filepages_release(const void *at, uint64_t size)
{
	uint64_t lo = ((uint64_t)(uintptr_t)at + PAGE - 1) & ~(PAGE - 1);
	uint64_t hi = ((uint64_t)(uintptr_t)at + size) & ~(PAGE - 1);
	uint64_t pm[512];
	if (hi <= lo)
		return 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = 0;
	for (uint64_t chunk = lo; chunk < hi && rc == 0; chunk += 512 * PAGE) {
		uint64_t n = (hi - chunk) / PAGE < 512 ? (hi - chunk) / PAGE : 512;
		rc = fdio_pread_all(fd, pm, n * sizeof(pm[0]), chunk / PAGE * sizeof(pm[0]));
		if (rc < 0)
			break;
		/* Runs of pages still the file's (absent ones too: fewer
		 * calls), each given back with one call. */
		uint64_t run = chunk;
		for (uint64_t i = 0; i <= n; i++) {
			uint64_t page = chunk + i * PAGE;
			if (i < n && (!(pm[i] & PM_PRESENT) || (pm[i] & PM_FILE)))
				continue;
			if (page > run && madvise((void *)(uintptr_t)run, page - run, MADV_DONTNEED) < 0) {
				rc = -errno;
				break;
			}
			run = page + PAGE;
		}
	}
	fdguard_close(fd);
	return rc;
}
