/* outbuf: text written to a file descriptor through a buffer of its own
 * (see outbuf.h). */
#include "witch/outbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void outbuf_init(struct outbuf *o, int fd)
{
	o->fd = fd;
	o->err = 0;
	o->len = 0;
}

/* The buffer's bytes to the file: 0 or -errno (kept as the first error). */
static int outbuf_drain(struct outbuf *o)
{
	size_t done = 0;
	while (!o->err && done < o->len) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	o->len = 0;
	return o->err;
}

void outbuf_printf(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	if (o->err)
		return;
	for (int tries = 0; tries < 2; tries++) {
		size_t room = sizeof(o->buf) - o->len;
		va_start(ap, fmt);
		int n = vsnprintf(o->buf + o->len, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->err = -EINVAL;
			return;
		}
		if ((size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		/* (vsnprintf wrote a cut piece past len: the drain ignores it) */
		if (outbuf_drain(o) < 0)
			return;
	}
	o->err = -EMSGSIZE; /* longer than the whole buffer */
}

void outbuf_puts(struct outbuf *o, const char *s)
{
	size_t left = strlen(s);
	while (!o->err && left > 0) {
		size_t room = sizeof(o->buf) - o->len, n = left < room ? left : room;
		memcpy(o->buf + o->len, s, n);
		o->len += n;
		s += n;
		left -= n;
		if (o->len == sizeof(o->buf))
			outbuf_drain(o);
	}
}

int outbuf_flush(struct outbuf *o)
{
	return o->err ? o->err : outbuf_drain(o);
}
