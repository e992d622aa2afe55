/* probes: the machine's measurements handed down a process tree (see probes.h). */
#include "witch/probes.h"
#include "witch/costmodel.h"
#include "witch/memlat.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bump when a field is added, removed or reordered. */
#define PROBES_FORMAT "p1"
#define BOOT_ID_LEN 36 /* 8-4-4-4-12 hex digits and dashes */

/* This boot's id, the kernel's: the machine and its boot, as a line. */
static int probes_boot_id(char out[BOOT_ID_LEN + 1])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, out, BOOT_ID_LEN);
	close(fd);
	if (n != BOOT_ID_LEN)
		return -EINVAL;
	out[BOOT_ID_LEN] = '\0';
	return 0;
}

/* PROBES_FORMAT " " boot_id " | " costmodel's " | " memlat's or "-" */
int probes_take_inherited(void)
{
	const char *v = getenv(PROBES_ENV);
	char boot[BOOT_ID_LEN + 1], part[512];
	if (!v)
		return -ENOENT;
	size_t flen = strlen(PROBES_FORMAT);
	if (strncmp(v, PROBES_FORMAT " ", flen + 1) != 0 || probes_boot_id(boot) < 0 ||
	    strncmp(v + flen + 1, boot, BOOT_ID_LEN) != 0 ||
	    strncmp(v + flen + 1 + BOOT_ID_LEN, " | ", 3) != 0)
		return -EINVAL;
	const char *cm = v + flen + 1 + BOOT_ID_LEN + 3, *bar = strstr(cm, " | ");
	if (!bar || (size_t)(bar - cm) >= sizeof(part))
		return -EINVAL;
	memcpy(part, cm, (size_t)(bar - cm));
	part[bar - cm] = '\0';
	const char *ml = bar + 3;
	/* Where one part is refused after the other was taken, the caller
	 * measures both, which overwrites it. */
	if (costmodel_probes_parse(part) < 0 || (strcmp(ml, "-") != 0 && memlat_probes_parse(ml) < 0))
		return -EINVAL;
	return 0;
}

int probes_hand_down(void)
{
	char boot[BOOT_ID_LEN + 1], cm[512], ml[128], line[700];
	int rc = probes_boot_id(boot);
	if (rc < 0)
		return rc;
	if ((rc = costmodel_probes_format(cm, sizeof(cm))) < 0)
		return rc;
	if (memlat_probes_format(ml, sizeof(ml)) < 0)
		strcpy(ml, "-");
	int n = snprintf(line, sizeof(line), PROBES_FORMAT " %s | %s | %s", boot, cm, ml);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -ENAMETOOLONG;
	/* The C library's: a shell's own setenv would keep it from its children
	 * (profile.c, profile_name_descendants). */
	int (*libc_setenv)(const char *, const char *, int) =
		(int (*)(const char *, const char *, int))dlsym(RTLD_NEXT, "setenv");
	if (!libc_setenv)
		return -ENOSYS;
	return libc_setenv(PROBES_ENV, line, 1) < 0 ? -errno : 0;
}
