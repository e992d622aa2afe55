/* probes: the machine's measurements handed down a process tree (see probes.h). */
#include "witch/probes.h"
#include "witch/config.h"
#include "witch/costmodel.h"
#include "witch/memlat.h"
#include "witch/pmu_sysfs.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bump when a number is added, removed or reordered. */
#define PROBES_FORMAT "p4"
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
 * nothing), each its double's 64 bits in 16 hex digits (exact both ways;
 * strtod of C's hexadecimal floats was ~40 us of a process's start). */
#define PROBES_N (COSTMODEL_PROBES + MEMLAT_PROBES)
#define PROBES_HEX 16

/* 16 hex digits at s, a finite double: 0, else -EINVAL. */
static int probes_parse_bits(const char *s, double *out)
{
	uint64_t bits = 0;
	for (int i = 0; i < PROBES_HEX; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
						  : 16u;
		if (d == 16u)
			return -EINVAL;
		bits = bits << 4 | d;
	}
	if ((bits >> 52 & 0x7ff) == 0x7ff) /* an infinity or a NaN */
		return -EINVAL;
	memcpy(out, &bits, sizeof(bits));
	return 0;
}

/* PROBES_FORMAT " " boot_id " " pmu (1: the kernel drives a CPU PMU, 0:
 * none), then the PROBES_N numbers, a space before each */
int probes_take_inherited(void)
{
	const char *v = getenv(PROBES_ENV);
	char boot[BOOT_ID_LEN + 1];
	double n[PROBES_N];
	if (!v)
		return -ENOENT;
	size_t flen = strlen(PROBES_FORMAT);
	if (strncmp(v, PROBES_FORMAT " ", flen + 1) != 0 || probes_boot_id(boot) < 0 ||
	    strncmp(v + flen + 1, boot, BOOT_ID_LEN) != 0)
		return -EINVAL;
	const char *at = v + flen + 1 + BOOT_ID_LEN;
	if (at[0] != ' ' || (at[1] != '0' && at[1] != '1'))
		return -EINVAL;
	int pmu = at[1] == '1';
	at += 2;
	for (int i = 0; i < PROBES_N; i++, at += 1 + PROBES_HEX) {
		if (*at != ' ' || strnlen(at + 1, PROBES_HEX) < PROBES_HEX ||
		    probes_parse_bits(at + 1, &n[i]) < 0)
			return -EINVAL;
	}
	if (*at)
		return -EINVAL;
	/* Where memlat's are refused after costmodel's were taken, the caller
	 * measures both, which overwrites them. */
	if (costmodel_probes_set(n) < 0 ||
	    (n[COSTMODEL_PROBES] != 0 && memlat_probes_set(n + COSTMODEL_PROBES) < 0))
		return -EINVAL;
	pmu_sysfs_note_cpu_pmu(pmu);
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
	size_t len = (size_t)snprintf(line, sizeof(line), PROBES_FORMAT " %s %d", boot,
				      pmu_sysfs_has_cpu_pmu());
	for (int i = 0; i < PROBES_N && len < sizeof(line); i++) {
		uint64_t bits;
		memcpy(&bits, &n[i], sizeof(bits));
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %016llx",
					(unsigned long long)bits);
	}
	if (len >= sizeof(line))
		return -ENAMETOOLONG;
	return config_env_hand_down(PROBES_ENV, line);
}
