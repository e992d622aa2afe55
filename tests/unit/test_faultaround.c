/* test_faultaround: a read fault in a registered range maps one page
 * (faultaround.h), in the process and, after its fork hook, in a child.
 *
 * A 64-page file is written (its pages in the page cache) and mapped
 * read-only, private, several times; each case empties its mapping
 * (MADV_DONTNEED), reads page 8, and counts the mapping's present pages
 * (/proc/self/pagemap).  The kernel's fault-around maps up to 16 cached
 * pages around a read fault (fault_around_bytes, 64 KiB by default), so:
 *   - unregistered: more than 1 (else this kernel does not fault around,
 *     and nothing here can tell: skipped, 77);
 *   - registered: exactly 1, and reading page 20 then makes it 2;
 *   - in a fork child, the parent's registration: more than 1 (the child's
 *     mappings lose it, which is why faultaround_postfork_child exists);
 *     after it, faultaround_init and faultaround_off again: 1.
 * Then the errors: faultaround_add_module of an address no module holds
 * is -ENOENT; with the descriptor's number taken by another file,
 * faultaround_off is -EBADF, and the fork hook leaves that file open.  A kernel without UFFD_FEATURE_WP_ASYNC
 * (before Linux 6.7) or a seccomp filter that refuses userfaultfd: 77.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "witch/faultaround.h"

#define PAGE 4096ul
#define PAGES 64

static int pagemap_fd;

static int present_pages(const char *map)
{
	uint64_t e[PAGES];
	if (pread(pagemap_fd, e, sizeof e, (off_t)((uintptr_t)map / PAGE * 8)) != (ssize_t)sizeof e)
		return -1;
	int n = 0;
	for (int i = 0; i < PAGES; i++)
		n += (int)(e[i] >> 63);
	return n;
}

/* The mapping emptied, then page 8 read: how many pages are present.
 * The most of 5 tries: now and then (1 run in 10 here) a fault finds the
 * page's folio busy, passes fault-around by and maps the page alone. */
static int pages_after_one_read(const char *map)
{
	int most = -1;
	for (int i = 0; i < 5; i++) {
		if (madvise((void *)map, PAGES * PAGE, MADV_DONTNEED) < 0)
			return -1;
		volatile char c = map[8 * PAGE];
		(void)c;
		int n = present_pages(map);
		most = n > most ? n : most;
	}
	return most;
}

static int userfaultfd_number(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int found = -1;
	char path[300], link[64];
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n > 0 && (link[n] = 0, strstr(link, "userfaultfd")))
			found = atoi(de->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

static const char *atexit_unlink;

static void unlink_file(void)
{
	unlink(atexit_unlink);
}

int main(void)
{
	static char file[] = "/tmp/witch_faultaround.XXXXXX";
	int fd = mkstemp(file);
	static char block[PAGES * PAGE];
	memset(block, 0x5a, sizeof block);
	if (fd < 0 || write(fd, block, sizeof block) != (ssize_t)sizeof block) {
		printf("test_faultaround: SKIP: cannot write %s\n", file);
		return 77;
	}
	/* Unlinked, its pages fault in one at a time anyway (ext4, Linux
	 * 6.18): the file goes at the end. */
	atexit_unlink = file;
	atexit(unlink_file);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	char *plain = mmap(NULL, PAGES * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	char *reg = mmap(NULL, PAGES * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	if (pagemap_fd < 0 || plain == MAP_FAILED || reg == MAP_FAILED) {
		printf("test_faultaround: SKIP: pagemap or mmap unavailable\n");
		return 77;
	}
	int around = pages_after_one_read(plain);
	if (around <= 1) {
		printf("test_faultaround: SKIP: a read fault here maps %d page(s) without "
		       "registration: this kernel does not fault around\n", around);
		return 77;
	}
	int rc = faultaround_init();
	if (rc < 0) {
		printf("test_faultaround: SKIP: faultaround_init: %s (before Linux 6.7, or "
		       "userfaultfd refused)\n", strerror(-rc));
		return 77;
	}
	CHECK(__LINE__, faultaround_init() == 0, "a second faultaround_init is not 0");

	rc = faultaround_off(reg + 1, PAGES * PAGE - 2); /* whole pages around it */
	CHECK(__LINE__, rc == 0, "faultaround_off: %d", rc);
	int one = pages_after_one_read(reg);
	CHECK(__LINE__, one == 1, "registered: one read fault mapped %d pages (unregistered %d)", one,
	      around);
	volatile char c = reg[20 * PAGE];
	(void)c;
	CHECK(__LINE__, present_pages(reg) == 2, "registered: two reads mapped %d pages",
	      present_pages(reg));
	int still = pages_after_one_read(plain);
	CHECK(__LINE__, still > 1, "the unregistered mapping changed: %d pages a fault, was %d", still,
	      around);

	pid_t pid = fork();
	if (pid == 0) {
		/* The parent's pagemap descriptor reads the parent's pages. */
		close(pagemap_fd);
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		int inherited = pages_after_one_read(reg);
		faultaround_postfork_child();
		int rc1 = faultaround_init(), rc2 = faultaround_off(reg, PAGES * PAGE);
		int again = pages_after_one_read(reg);
		int bad = 0;
		if (inherited <= 1) {
			fprintf(stderr, "child: the parent's registration still held (%d page)\n", inherited);
			bad = 1;
		}
		if (rc1 != 0 || rc2 != 0 || again != 1) {
			fprintf(stderr, "child: init %d, off %d, then %d pages a fault\n", rc1, rc2, again);

			bad = 1;
		}
		_exit(bad);
	}
	int status = -1;
	CHECK(__LINE__, pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0,
	      "fork child: status %#x", status);
	CHECK(__LINE__, pages_after_one_read(reg) == 1, "the child's hook changed the parent's: %d pages",
	      pages_after_one_read(reg));

	CHECK(__LINE__, faultaround_add_module((const void *)16) == -ENOENT,
	      "faultaround_add_module of no module: %d", faultaround_add_module((const void *)16));
	CHECK(__LINE__, faultaround_add_module((const void *)&main) == 0,
	      "faultaround_add_module of this program: %d", faultaround_add_module((const void *)&main));

	/* The program closes the descriptor and its number is reused. */
	int ufd = userfaultfd_number();
	CHECK(__LINE__, ufd >= 0, "no userfaultfd among this process's descriptors");
	if (ufd >= 0) {
		CHECK(__LINE__, dup2(fd, ufd) == ufd, "dup2: %s", strerror(errno));
		rc = faultaround_off(plain, PAGES * PAGE);
		CHECK(__LINE__, rc == -EBADF, "faultaround_off through another file: %d", rc);
		int after = pages_after_one_read(reg);
		CHECK(__LINE__, after > 1, "registration after its descriptor closed: %d page a fault, "
		      "unregistered %d", after, around);
		/* A fork child's hook must not close the program's file there. */
		faultaround_postfork_child();
		CHECK(__LINE__, fcntl(ufd, F_GETFD) >= 0, "faultaround_postfork_child closed the "
		      "program's descriptor %d", ufd);
	}
	printf("test_faultaround: a read fault maps 1 page registered, %d not\n", around);
	return check_failures != 0;
}
