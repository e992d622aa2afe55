/* log: the runtime's only way to talk to the user: one `witch:` line on stderr.
 *
 * Formatting is done by hand into a stack buffer and written with one
 * write(2), so every function here is async-signal-safe and never mallocs.
 * Conversions: %s %d %u %ld %lu %lld %llu %zu %x %lx %llx %p %c %%, and %.*s
 * (no floating point: print a double as a whole number).
 */
#ifndef WITCH_LOG_H
#define WITCH_LOG_H

#include <stdarg.h>
#include <stddef.h>

/* "witch: " + the formatted text + "\n", in one write(2); once per
 * process tree: not where an ancestor process printed the same line (a
 * program's children share its machine and settings). */
void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, only when WITCH_VERBOSE >= level. */
void log_verbose(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_set_verbosity(int level);
/* At start: which file standard error is.  A line is written only while
 * it still is (a daemon that closed it may have a file of its own at 2). */
void log_note_stderr(void);
int log_format(char *buf, size_t size, const char *fmt, va_list ap);
int log_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
