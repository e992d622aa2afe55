/* Unit test of profile_expand_path and profile_anchor_pattern:
 * table-driven like libpfm4's validate_x86.c.  Each row of the first is
 * (pattern, pid, exe, add_pid, buffer size) and the expected result: the
 * path, or -ENAMETOOLONG.  Failures print the row's line number.  Exit
 * status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "witch/profile.h"

#include "check.h"

struct row {
	int line;
	const char *pattern;
	int pid;
	const char *exe;
	int add_pid;
	size_t size; /* 0: a large buffer */
	int rc;      /* 0 or -ENAMETOOLONG */
	const char *want;
};

#define BIG 0

static const struct row rows[] = {
	/* the three escapes */
	{__LINE__, "%p", 1234, "prog", 0, BIG, 0, "1234"},
	{__LINE__, "%e", 1234, "prog", 0, BIG, 0, "prog"},
	{__LINE__, "%%", 1234, "prog", 0, BIG, 0, "%"},
	{__LINE__, "a-%e-%p.prof", 1234, "prog", 0, BIG, 0, "a-prog-1234.prof"},
	{__LINE__, "witch-%e-%p.prof", 42, "a.out", 0, BIG, 0, "witch-a.out-42.prof"},
	{__LINE__, "/tmp/%e/%e.%p.%p", 7, "x", 0, BIG, 0, "/tmp/x/x.7.7"},
	{__LINE__, "%%p", 1234, "prog", 0, BIG, 0, "%p"},
	{__LINE__, "%%%p", 1234, "prog", 0, BIG, 0, "%1234"},
	{__LINE__, "100%%.prof", 1, "prog", 0, BIG, 0, "100%.prof"},
	{__LINE__, "plain.prof", 1234, "prog", 0, BIG, 0, "plain.prof"},
	{__LINE__, "", 1234, "prog", 0, BIG, 0, ""},
	{__LINE__, "%p", 1, "prog", 0, BIG, 0, "1"},
	{__LINE__, "%p", 4194304, "prog", 0, BIG, 0, "4194304"},
	{__LINE__, "%p", 2147483647, "prog", 0, BIG, 0, "2147483647"},
	{__LINE__, "%e", 1, "", 0, BIG, 0, ""},
	{__LINE__, "%e.prof", 1, "my prog%p", 0, BIG, 0, "my prog%p.prof"}, /* exe not expanded */
	/* unknown escapes are kept as written */
	{__LINE__, "%x", 1234, "prog", 0, BIG, 0, "%x"},
	{__LINE__, "a%xb", 1234, "prog", 0, BIG, 0, "a%xb"},
	{__LINE__, "%P%E", 1234, "prog", 0, BIG, 0, "%P%E"},
	{__LINE__, "%x%p", 1234, "prog", 0, BIG, 0, "%x1234"},
	{__LINE__, "%", 1234, "prog", 0, BIG, 0, "%"},
	{__LINE__, "a%", 1234, "prog", 0, BIG, 0, "a%"},
	{__LINE__, "%-%p", 1234, "prog", 0, BIG, 0, "%-1234"},
	/* add_pid: ".<pid>" when the pattern has no %p */
	{__LINE__, "out.prof", 1234, "prog", 1, BIG, 0, "out.prof.1234"},
	{__LINE__, "%e.prof", 1234, "prog", 1, BIG, 0, "prog.prof.1234"},
	{__LINE__, "%%p.prof", 1234, "prog", 1, BIG, 0, "%p.prof.1234"}, /* %%p is no %p */
	{__LINE__, "%x", 1234, "prog", 1, BIG, 0, "%x.1234"},
	{__LINE__, "", 1234, "prog", 1, BIG, 0, ".1234"},
	/* add_pid with %p present: no suffix */
	{__LINE__, "out-%p.prof", 1234, "prog", 1, BIG, 0, "out-1234.prof"},
	{__LINE__, "a-%e-%p.prof", 1234, "prog", 1, BIG, 0, "a-prog-1234.prof"},
	{__LINE__, "%p%p", 5, "prog", 1, BIG, 0, "55"},
	/* buffer size: the result and its NUL must fit */
	{__LINE__, "abcd", 1, "prog", 0, 5, 0, "abcd"},
	{__LINE__, "abcde", 1, "prog", 0, 5, -ENAMETOOLONG, NULL},
	{__LINE__, "%p", 12345, "prog", 0, 6, 0, "12345"},
	{__LINE__, "%p", 123456, "prog", 0, 6, -ENAMETOOLONG, NULL},
	{__LINE__, "%e", 1, "prog", 0, 5, 0, "prog"},
	{__LINE__, "%e", 1, "progr", 0, 5, -ENAMETOOLONG, NULL},
	{__LINE__, "a%e", 1, "prog", 0, 5, -ENAMETOOLONG, NULL},
	{__LINE__, "%%%%", 1, "prog", 0, 3, 0, "%%"},
	{__LINE__, "%%%%%%", 1, "prog", 0, 3, -ENAMETOOLONG, NULL},
	{__LINE__, "ab", 1234, "prog", 1, 8, 0, "ab.1234"},
	{__LINE__, "abc", 1234, "prog", 1, 8, -ENAMETOOLONG, NULL}, /* the suffix does not fit */
	{__LINE__, "", 1, "prog", 0, 1, 0, ""},
	{__LINE__, "a", 1, "prog", 0, 1, -ENAMETOOLONG, NULL},
};

/* Never a byte past size, whatever the result (buf was filled with 'Z'). */
static void check_untouched(int line, const char *pattern, const char *buf, size_t size,
			    size_t cap)
{
	for (size_t k = size; k < cap; k++)
		if (buf[k] != 'Z') {
			FAIL(line, "\"%s\" size %zu: byte %zu written", pattern, size, k);
			return;
		}
}

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		char buf[4096 + 16];
		size_t size = r->size ? r->size : 4096;
		memset(buf, 'Z', sizeof(buf));
		int rc = profile_expand_path(r->pattern, (pid_t)r->pid, r->exe, r->add_pid, buf, size);
		CHECK(r->line, rc == r->rc, "\"%s\" (pid %d exe \"%s\" add_pid %d size %zu): rc %d, want %d",
		      r->pattern, r->pid, r->exe, r->add_pid, size, rc, r->rc);
		if (r->rc == 0 && rc == 0)
			CHECK(r->line, memchr(buf, '\0', size) && strcmp(buf, r->want) == 0,
			      "\"%s\": got \"%.*s\", want \"%s\"", r->pattern, (int)size, buf, r->want);
		check_untouched(r->line, r->pattern, buf, size, sizeof(buf));
	}
}

/* Long patterns against the runtime's own buffer size (PATH_MAX-like
 * CONFIG_PATH_MAX patterns expand into larger paths). */
static void test_long(void)
{
	static char pattern[8192], buf[8192], want[8192];
	/* 1023 bytes of pattern into 1024: fits exactly */
	memset(pattern, 'a', 1023);
	pattern[1023] = '\0';
	int rc = profile_expand_path(pattern, 1, "prog", 0, buf, 1024);
	CHECK(__LINE__, rc == 0 && strcmp(buf, pattern) == 0, "1023 bytes into 1024: rc %d", rc);
	/* 1024 bytes into 1024: too long */
	memset(pattern, 'a', 1024);
	pattern[1024] = '\0';
	rc = profile_expand_path(pattern, 1, "prog", 0, buf, 1024);
	CHECK(__LINE__, rc == -ENAMETOOLONG, "1024 bytes into 1024: rc %d, want -ENAMETOOLONG", rc);
	/* a short pattern that expands past the buffer: many %e */
	pattern[0] = '\0';
	for (int i = 0; i < 300; i++)
		strcat(pattern, "%e");
	rc = profile_expand_path(pattern, 1, "abcd", 0, buf, 1024);
	CHECK(__LINE__, rc == -ENAMETOOLONG, "300 x %%e of 4 bytes into 1024: rc %d", rc);
	/* ... and that fits in a larger buffer */
	want[0] = '\0';
	for (int i = 0; i < 300; i++)
		strcat(want, "abcd");
	rc = profile_expand_path(pattern, 1, "abcd", 0, buf, sizeof(buf));
	CHECK(__LINE__, rc == 0 && strcmp(buf, want) == 0, "300 x %%e into 8192: rc %d", rc);
	/* a long exe name */
	static char exe[2048];
	memset(exe, 'e', 2000);
	exe[2000] = '\0';
	rc = profile_expand_path("%e.prof", 1, exe, 0, buf, 1024);
	CHECK(__LINE__, rc == -ENAMETOOLONG, "2000-byte exe into 1024: rc %d", rc);
	/* the suffix of add_pid pushes a fitting pattern over */
	memset(pattern, 'a', 1020);
	pattern[1020] = '\0';
	rc = profile_expand_path(pattern, 1234, "prog", 0, buf, 1024);
	CHECK(__LINE__, rc == 0, "1020 bytes, no add_pid: rc %d", rc);
	rc = profile_expand_path(pattern, 1234, "prog", 1, buf, 1024);
	CHECK(__LINE__, rc == -ENAMETOOLONG, "1020 bytes + \".1234\": rc %d, want -ENAMETOOLONG",
	      rc);
	rc = profile_expand_path(pattern, 12, "prog", 1, buf, 1024);
	CHECK(__LINE__, rc == 0 && strlen(buf) == 1023 && strcmp(buf + 1020, ".12") == 0,
	      "1020 bytes + \".12\" into 1024: rc %d", rc);
}

/* profile_anchor_pattern: a relative pattern under the tree's first
 * directory.  Each row: pattern, directory, buffer size, and the result:
 * the anchored pattern, or -ENAMETOOLONG. */
struct anchor_row {
	int line;
	const char *pattern, *dir;
	size_t size; /* 0: a large buffer */
	int rc;
	const char *want;
};

static const struct anchor_row anchor_rows[] = {
	{__LINE__, "witch-%e-%p.prof", "/home/u/src", BIG, 0, "/home/u/src/witch-%e-%p.prof"},
	{__LINE__, "out/p.prof", "/tmp", BIG, 0, "/tmp/out/p.prof"},
	{__LINE__, "../p-%p", "/a/b", BIG, 0, "/a/b/../p-%p"},
	/* absolute: as written, whatever the directory */
	{__LINE__, "/var/tmp/p-%p", "/tmp", BIG, 0, "/var/tmp/p-%p"},
	{__LINE__, "/p", "/100%p", 3, 0, "/p"},
	/* the root directory has its slash already */
	{__LINE__, "p.prof", "/", BIG, 0, "/p.prof"},
	/* '%' in the directory is doubled: a directory named 100%p must not
	 * expand to the pid */
	{__LINE__, "p-%p", "/tmp/100%p", BIG, 0, "/tmp/100%%p/p-%p"},
	{__LINE__, "x", "/%%", BIG, 0, "/%%%%/x"},
	/* the result and its NUL must fit */
	{__LINE__, "ab", "/d", 6, 0, "/d/ab"},
	{__LINE__, "abc", "/d", 6, -ENAMETOOLONG, NULL},
	{__LINE__, "a", "/%", 6, 0, "/%%/a"},
	{__LINE__, "a", "/%", 5, -ENAMETOOLONG, NULL}, /* its doubled % took the room */
	{__LINE__, "/abc", "/", 4, -ENAMETOOLONG, NULL},
};

static void test_anchor(void)
{
	for (size_t i = 0; i < sizeof(anchor_rows) / sizeof(anchor_rows[0]); i++) {
		const struct anchor_row *r = &anchor_rows[i];
		char buf[4096 + 16];
		size_t size = r->size ? r->size : 4096;
		memset(buf, 'Z', sizeof(buf));
		int rc = profile_anchor_pattern(r->pattern, r->dir, buf, size);
		CHECK(r->line, rc == r->rc, "\"%s\" under \"%s\" (size %zu): rc %d, want %d",
		      r->pattern, r->dir, size, rc, r->rc);
		if (r->rc == 0 && rc == 0)
			CHECK(r->line, memchr(buf, '\0', size) && strcmp(buf, r->want) == 0,
			      "\"%s\" under \"%s\": got \"%.*s\", want \"%s\"", r->pattern, r->dir,
			      (int)size, buf, r->want);
		check_untouched(r->line, r->pattern, buf, size, sizeof(buf));
	}
}

int main(void)
{
	test_table();
	test_long();
	test_anchor();
	if (check_failures) {
		fprintf(stderr, "test_profile_path: %d failure(s)\n", check_failures);
		return 1;
	}
	printf("test_profile_path: %zu rows, all passed\n",
	       sizeof(rows) / sizeof(rows[0]) + sizeof(anchor_rows) / sizeof(anchor_rows[0]));
	return 0;
}
