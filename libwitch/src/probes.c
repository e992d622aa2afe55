/* probes: the machine's measurements handed down a process tree (see probes.h). */
#include "witch/probes.h"
#include "witch/config.h"
#include "witch/costmodel.h"
#include "witch/drcost.h"
#include "witch/memlat.h"
#include "witch/pmu_sysfs.h"
#include "witch/watchpoint.h"
#include "witch/fdguard.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Bump when a number is added, removed or reordered. */
#define PROBES_FORMAT "p7"
#define BOOT_ID_LEN 36 /* 8-4-4-4-12 hex digits and dashes */
#define PROBES_HEX 16  /* digits of a 64-bit number */

/* This boot's id, the kernel's: the machine and its boot, as a line. */
static int probes_boot_id(char out[BOOT_ID_LEN + 1])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, out, BOOT_ID_LEN);
	fdguard_close(fd);
	if (n != BOOT_ID_LEN)
		return -EINVAL;
	out[BOOT_ID_LEN] = '\0';
	return 0;
}

/* When this boot began, by the wall clock (CLOCK_REALTIME less
 * CLOCK_BOOTTIME, both read in the vDSO), in ns.  A line whose boot began
 * within PROBES_EPOCH_SLACK_NS of this one's is this boot's without
 * reading boot_id (an open, a read and a close of procfs: ~20-40 us of
 * every process's start here); further off (the wall clock stepped since,
 * or another boot), boot_id decides. */
#define PROBES_EPOCH_SLACK_NS 1000000000ll
static uint64_t probes_boot_epoch_ns(void)
{
	struct timespec wall, up;
	if (clock_gettime(CLOCK_REALTIME, &wall) < 0 || clock_gettime(CLOCK_BOOTTIME, &up) < 0)
		return 0;
	return (uint64_t)((int64_t)(wall.tv_sec - up.tv_sec) * 1000000000ll +
			  (wall.tv_nsec - up.tv_nsec));
}

/* PROBES_HEX hex digits at s: 0 and *out, else -EINVAL. */
static int probes_parse_hex(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	for (int i = 0; i < PROBES_HEX; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
						  : 16u;
		if (d == 16u)
			return -EINVAL;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

/* The line's boot (its id at id, its epoch) is this one. */
static int probes_same_boot(const char *id, uint64_t epoch)
{
	uint64_t now = probes_boot_epoch_ns();
	int64_t off = (int64_t)(now - epoch);
	if (now != 0 && epoch != 0 && off > -PROBES_EPOCH_SLACK_NS && off < PROBES_EPOCH_SLACK_NS)
		return 1;
	char boot[BOOT_ID_LEN + 1];
	return probes_boot_id(boot) == 0 && strncmp(id, boot, BOOT_ID_LEN) == 0;
}

/* The numbers: costmodel's, then memlat's (all 0 where it measured
 * nothing), then what an armed debug register adds to a page fault and to
 * a byte copied (drcost.h; -1 both where not priced), then a watchpoint
 * hit's price (0 where not probed), each its double's 64 bits in 16 hex
 * digits (exact both ways; strtod of C's hexadecimal floats was ~40 us of
 * a process's start). */
#define PROBES_DR (COSTMODEL_PROBES + MEMLAT_PROBES)
#define PROBES_HIT (PROBES_DR + 2)
#define PROBES_N (PROBES_HIT + 1)

/* PROBES_HEX hex digits at s, a finite double: 0, else -EINVAL. */
static int probes_parse_bits(const char *s, double *out)
{
	uint64_t bits;
	/* not hex, an infinity or a NaN */
	if (probes_parse_hex(s, &bits) < 0 || (bits >> 52 & 0x7ff) == 0x7ff)
		return -EINVAL;
	memcpy(out, &bits, sizeof(bits));
	return 0;
}

/* A one-character field: '-' (-1), '0' or '1'; else -2. */
static int probes_flag(char c)
{
	return c == '-' ? -1 : c == '0' ? 0 : c == '1' ? 1 : -2;
}

static char probes_flag_char(int v)
{
	return v < 0 ? '-' : v ? '1' : '0';
}

/* PROBES_FORMAT " " boot_id " " epoch (16 hex digits, ns) " " pmu (1: the
 * kernel drives a CPU PMU, 0: none) " " traps (watchpoint_probe: 1
 * breakpoints trap, 0 never, '-' not probed) " " sigtrap (1: SIGTRAP
 * breakpoints open, 0: not, '-' not asked), then the PROBES_N numbers, a
 * space before each */
int probes_take_inherited(void)
{
	const char *v = getenv(PROBES_ENV);
	double n[PROBES_N];
	uint64_t epoch;
	if (!v)
		return -ENOENT;
	size_t flen = strlen(PROBES_FORMAT);
	/* the boot id, " " and the epoch, then " " and the rest */
	const char *id = v + flen + 1, *at = id + BOOT_ID_LEN;
	if (strncmp(v, PROBES_FORMAT " ", flen + 1) != 0 ||
	    strnlen(id, BOOT_ID_LEN + 2 + PROBES_HEX) < BOOT_ID_LEN + 2 + PROBES_HEX ||
	    at[0] != ' ' || probes_parse_hex(at + 1, &epoch) < 0 || !probes_same_boot(id, epoch))
		return -EINVAL;
	at += 1 + PROBES_HEX;
	if (at[0] != ' ' || (at[1] != '0' && at[1] != '1') || at[2] != ' ' || at[4] != ' ')
		return -EINVAL;
	int pmu = at[1] == '1', traps = probes_flag(at[3]), sigtrap = probes_flag(at[5]);
	if (traps < -1 || sigtrap < -1)
		return -EINVAL;
	at += 6;
	if (*at == 0 && traps == 0) { /* probes_hand_down_no_traps's line */
		if (watchpoint_probe_set(0, sigtrap, 0) < 0)
			return -EINVAL;
		pmu_sysfs_note_cpu_pmu(pmu);
		return -ENODATA;
	}
	for (int i = 0; i < PROBES_N; i++, at += 1 + PROBES_HEX) {
		if (*at != ' ' || strnlen(at + 1, PROBES_HEX) < PROBES_HEX ||
		    probes_parse_bits(at + 1, &n[i]) < 0)
			return -EINVAL;
	}
	if (*at)
		return -EINVAL;
	/* Where memlat's or the watchpoints' are refused after costmodel's
	 * were taken, the caller measures all, which overwrites them. */
	if (costmodel_probes_set(n) < 0 ||
	    (n[COSTMODEL_PROBES] != 0 && memlat_probes_set(n + COSTMODEL_PROBES) < 0) ||
	    (traps >= 0 && watchpoint_probe_set(traps, sigtrap, n[PROBES_HIT]) < 0) ||
	    (n[PROBES_DR] >= 0 && drcost_price_set(n[PROBES_DR], n[PROBES_DR + 1]) < 0))
		return -EINVAL;
	pmu_sysfs_note_cpu_pmu(pmu);
	return 0;
}

/* PROBES_FORMAT, the boot, the PMU's flag, then "0 -": the trap answer
 * alone (probes_take_inherited's short form). */
int probes_hand_down_no_traps(void)
{
	char boot[BOOT_ID_LEN + 1], line[128];
	int rc = probes_boot_id(boot);
	if (rc < 0)
		return rc;
	snprintf(line, sizeof(line), PROBES_FORMAT " %s %016llx %d 0 -", boot,
		 (unsigned long long)probes_boot_epoch_ns(), pmu_sysfs_has_cpu_pmu());
	return config_env_hand_down(PROBES_ENV, line);
}

int probes_hand_down(void)
{
	char boot[BOOT_ID_LEN + 1], line[1024];
	double n[PROBES_N] = {0};
	int rc = probes_boot_id(boot);
	if (rc < 0)
		return rc;
	int traps = -1, sigtrap = -1;
	costmodel_probes_get(n);
	if (memlat_probes_get(n + COSTMODEL_PROBES) < 0)
		memset(n + COSTMODEL_PROBES, 0, MEMLAT_PROBES * sizeof(double));
	if (watchpoint_probe_get(&traps, &sigtrap, &n[PROBES_HIT]) < 0)
		traps = sigtrap = -1;
	if (drcost_price_get(&n[PROBES_DR], &n[PROBES_DR + 1]) < 0)
		n[PROBES_DR] = n[PROBES_DR + 1] = -1;
	size_t len = (size_t)snprintf(line, sizeof(line), PROBES_FORMAT " %s %016llx %d %c %c", boot,
				      (unsigned long long)probes_boot_epoch_ns(),
				      pmu_sysfs_has_cpu_pmu(), probes_flag_char(traps),
				      probes_flag_char(sigtrap));
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
