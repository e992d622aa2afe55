/* probes: the machine's measurements handed down a process tree (see probes.h). */
#include "witch/probes.h"
#include "witch/config.h"
#include "witch/costmodel.h"
#include "witch/memlat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bump when a number is added, removed or reordered. */
#define PROBES_FORMAT "p3"
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

/* The numbers: costmodel's, then memlat's (all 0 where it measured
 * nothing), in C's hexadecimal floats (exact both ways). */
#define PROBES_N (COSTMODEL_PROBES + MEMLAT_PROBES)

/* PROBES_FORMAT " " boot_id, then the PROBES_N numbers, a space before each */
int probes_take_inherited(void)
{
	const char *v = getenv(PROBES_ENV);
	char boot[BOOT_ID_LEN + 1], *end;
	double n[PROBES_N];
	if (!v)
		return -ENOENT;
	size_t flen = strlen(PROBES_FORMAT);
	if (strncmp(v, PROBES_FORMAT " ", flen + 1) != 0 || probes_boot_id(boot) < 0 ||
	    strncmp(v + flen + 1, boot, BOOT_ID_LEN) != 0)
		return -EINVAL;
	const char *at = v + flen + 1 + BOOT_ID_LEN;
	for (int i = 0; i < PROBES_N; i++, at = end) {
		if (*at != ' ')
			return -EINVAL;
		n[i] = strtod(at, &end);
		if (end == at)
			return -EINVAL;
	}
	if (*at)
		return -EINVAL;
	/* Where memlat's are refused after costmodel's were taken, the caller
	 * measures both, which overwrites them. */
	if (costmodel_probes_set(n) < 0 ||
	    (n[COSTMODEL_PROBES] != 0 && memlat_probes_set(n + COSTMODEL_PROBES) < 0))
		return -EINVAL;
	return 0;
}

int probes_hand_down(void)
{
	char boot[BOOT_ID_LEN + 1], line[1024];
	double n[PROBES_N] = {0};
	int rc = probes_boot_id(boot);
	if (rc < 0)
		return rc;
	costmodel_probes_get(n);
	if (memlat_probes_get(n + COSTMODEL_PROBES) < 0)
		memset(n + COSTMODEL_PROBES, 0, MEMLAT_PROBES * sizeof(double));
	size_t len = (size_t)snprintf(line, sizeof(line), PROBES_FORMAT " %s", boot);
	for (int i = 0; i < PROBES_N && len < sizeof(line); i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %a", n[i]);
	if (len >= sizeof(line))
		return -ENAMETOOLONG;
	return config_env_hand_down(PROBES_ENV, line);
}
