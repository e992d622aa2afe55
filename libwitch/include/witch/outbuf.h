/* outbuf: text written to a file descriptor through a buffer of its own.
 *
 * The profile's writer (profile.h).  Not stdio: fdopen's FILE and its
 * buffer come from malloc, and a profile is written from a fatal signal's
 * handler too (fatal.h), where a crash may have left the heap broken; and
 * in a short process fdopen, its fcntl and fstat, and the buffer's first
 * touch were ~0.1 ms of its exit here (bench/results/startup.md).  No
 * allocation, no lock; the formatting is vsnprintf's into the buffer.
 */
#ifndef WITCH_OUTBUF_H
#define WITCH_OUTBUF_H

#include <stddef.h>

#define OUTBUF_SIZE 4096

struct outbuf {
	int fd;
	int err; /* the first error: 0 or -errno */
	size_t len;
	char buf[OUTBUF_SIZE];
};

/* Writes go to fd (not closed here). */
void outbuf_init(struct outbuf *o, int fd);
/* A formatted piece of at most OUTBUF_SIZE - 1 bytes (a longer one is an
 * error, -EMSGSIZE: strings of any length go by outbuf_puts). */
void outbuf_printf(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A string of any length. */
void outbuf_puts(struct outbuf *o, const char *s);
/* Writes what is buffered: 0, or the first error any call met. */
int outbuf_flush(struct outbuf *o);

#endif
