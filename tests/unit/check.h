/* check.h: the failure reporting every unit test shares.
 *
 *   FAIL(line, fmt, ...)        print "<file>:<line>: message", count it
 *   CHECK(line, cond, fmt, ...) FAIL unless cond
 *   check_failures              the count; main returns it != 0
 *
 * `line` is the table row's __LINE__ (libpfm4 validate_x86.c style), so a
 * failure points at its case.  At most 100 messages are printed: a broken
 * statistical test fails in millions of trials.
 */
#ifndef WITCH_TEST_CHECK_H
#define WITCH_TEST_CHECK_H

#include <stdio.h>

static int check_failures;

#define FAIL(line, ...)                                                   \
	do {                                                              \
		if (check_failures < 100) {                               \
			fprintf(stderr, "%s:%d: ", __FILE__, (line));     \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
		}                                                         \
		check_failures++;                                         \
	} while (0)

#define CHECK(line, cond, ...)                                            \
	do {                                                              \
		if (!(cond))                                              \
			FAIL(line, __VA_ARGS__);                          \
	} while (0)

#endif
