/* pmu_sysfs: what the kernel says about its PMUs (see pmu_sysfs.h). */
#include "witch/pmu_sysfs.h"
#include "witch/fdguard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *sysfs_root = "/sys";
static int has_cpu_pmu = -1; /* pmu_sysfs_has_cpu_pmu's answer; -1: not asked yet */

void pmu_sysfs_set_root(const char *root)
{
	sysfs_root = root ? root : "/sys";
	has_cpu_pmu = -1;
}

const char *pmu_sysfs_root(void)
{
	return sysfs_root;
}

/* A small sysfs or procfs file, NUL-terminated, trailing newline dropped. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int rc = n < 0 ? -errno : 0;
	fdguard_close(fd);
	if (rc < 0)
		return rc;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int parse_int(const char *s, long long *out)
{
	char *end;
	if (!*s)
		return -EINVAL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The perf type of a sysfs PMU: <root>/bus/event_source/devices/<pmu>/type. */
int pmu_sysfs_type(const char *pmu, uint32_t *type)
{
	char path[1024], buf[32];
	long long v;
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/type", sysfs_root, pmu);
	int rc = read_small(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	if (parse_int(buf, &v) < 0 || v < 0 || v > UINT32_MAX)
		return -EINVAL;
	*type = (uint32_t)v;
	return 0;
}

/* A one-bit format of a sysfs PMU ("config:19", "config2:0") set in attr.
 * 1 when set, 0 when the PMU has no such format, negative when unreadable. */
int pmu_sysfs_format_bit(const char *pmu, const char *format, struct perf_event_attr *attr)
{
	char path[1024], buf[64];
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/format/%s", sysfs_root, pmu,
		 format);
	int rc = read_small(path, buf, sizeof(buf));
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	char *colon = strchr(buf, ':');
	long long bit;
	if (!colon || parse_int(colon + 1, &bit) < 0 || bit < 0 || bit > 63)
		return -EINVAL;
	*colon = '\0';
	uint64_t mask = 1ull << bit;
	if (strcmp(buf, "config") == 0)
		attr->config |= mask;
	else if (strcmp(buf, "config1") == 0)
		attr->config1 |= mask;
	else if (strcmp(buf, "config2") == 0)
		attr->config2 |= mask;
	else
		return -EINVAL;
	return 1;
}

int pmu_sysfs_read_int(const char *path, long long *v)
{
	char buf[32];
	int rc = read_small(path, buf, sizeof(buf));
	return rc < 0 ? rc : parse_int(buf, v);
}

/* Does the kernel drive any PMU that could give precise memory samples?
 * Without one there is no reason to load libpfm4 at all. */
int pmu_sysfs_has_cpu_pmu(void)
{
	static const char *const names[] = {"cpu", "cpu_core", "cpu_atom", "ibs_op"};
	char path[512];
	if (has_cpu_pmu >= 0)
		return has_cpu_pmu;
	has_cpu_pmu = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !has_cpu_pmu; i++) {
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", sysfs_root, names[i]);
		has_cpu_pmu = access(path, F_OK) == 0;
	}
	return has_cpu_pmu;
}

void pmu_sysfs_note_cpu_pmu(int has)
{
	has_cpu_pmu = has != 0;
}
