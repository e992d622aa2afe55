/* Unit test of outbuf.h: what is written is what was asked, across the
 * buffer's end and past its size, and errors come back as the first
 * -errno (a piece longer than the buffer, a descriptor that cannot be
 * written).  Each row writes its pieces to a memfd and reads the file back.
 * Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "witch/outbuf.h"

#include "check.h"

/* A piece: 'p' printf("%s%d", text, number), 's' puts(text), or 'r' a
 * string of `number` copies of text[0] by puts. */
struct piece {
	char how;
	const char *text;
	int number;
};

#define PIECES_MAX 4
static const struct {
	int line;
	struct piece pieces[PIECES_MAX];
	int bad_fd; /* write to a descriptor opened read-only */
	int want_rc;
	size_t want_bytes; /* the file's size (checked when want_rc == 0) */
} rows[] = {
	{__LINE__, {{'p', "stat x ", 12}, {'s', "\n", 0}}, 0, 0, 10},
	{__LINE__, {{'s', "", 0}}, 0, 0, 0},
	/* pieces that end past the buffer's end: drained, then the rest */
	{__LINE__, {{'r', "a", OUTBUF_SIZE - 3}, {'p', "xyz", 12345}}, 0, 0, OUTBUF_SIZE + 5},
	{__LINE__, {{'r', "b", OUTBUF_SIZE - 1}, {'s', "cd", 0}}, 0, 0, OUTBUF_SIZE + 1},
	/* a path of any length by puts, three buffers' worth */
	{__LINE__, {{'s', "module ", 0}, {'r', "/", 3 * OUTBUF_SIZE + 17}, {'s', "\n", 0}}, 0, 0,
	 3 * OUTBUF_SIZE + 25},
	/* exactly one buffer, then one more byte */
	{__LINE__, {{'r', "c", OUTBUF_SIZE}, {'s', "d", 0}}, 0, 0, OUTBUF_SIZE + 1},
	/* a formatted piece of the buffer's size or more is refused, and
	 * nothing after it is written */
	{__LINE__, {{'p', "%", OUTBUF_SIZE}, {'s', "tail", 0}}, 0, -EMSGSIZE, 0},
	/* the descriptor's error, kept past later pieces */
	{__LINE__, {{'r', "e", 2 * OUTBUF_SIZE}, {'s', "more", 0}}, 1, -EBADF, 0},
	{__LINE__, {{'s', "short", 0}}, 1, -EBADF, 0},
};

/* The bytes row r asked for, in order (malloc'd), and their count. */
static char *expected(const struct piece *ps, size_t *len)
{
	size_t cap = 4 * OUTBUF_SIZE + 64, n = 0;
	char *e = malloc(cap);
	for (int i = 0; i < PIECES_MAX && ps[i].how; i++) {
		const struct piece *p = &ps[i];
		if (p->how == 'p')
			n += (size_t)snprintf(e + n, cap - n, "%s%d", p->text, p->number);
		else if (p->how == 's')
			n += (size_t)snprintf(e + n, cap - n, "%s", p->text);
		else
			for (int k = 0; k < p->number; k++)
				e[n++] = p->text[0];
	}
	*len = n;
	return e;
}

static void write_pieces(struct outbuf *o, const struct piece *ps)
{
	for (int i = 0; i < PIECES_MAX && ps[i].how; i++) {
		const struct piece *p = &ps[i];
		if (p->how == 'p' && p->text[0] == '%') { /* a piece of number bytes */
			outbuf_printf(o, "%*d", p->number, 7);
		} else if (p->how == 'p') {
			outbuf_printf(o, "%s%d", p->text, p->number);
		} else if (p->how == 's') {
			outbuf_puts(o, p->text);
		} else {
			char *s = malloc((size_t)p->number + 1);
			memset(s, p->text[0], (size_t)p->number);
			s[p->number] = '\0';
			outbuf_puts(o, s);
			free(s);
		}
	}
}

int main(void)
{
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		int line = rows[r].line;
		int fd = memfd_create("outbuf", 0);
		CHECK(line, fd >= 0, "memfd_create: %s", strerror(errno));
		if (fd < 0)
			continue;
		int wfd = fd;
		if (rows[r].bad_fd) {
			char self[64];
			snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
			wfd = open(self, O_RDONLY);
			CHECK(line, wfd >= 0, "reopen read-only: %s", strerror(errno));
		}
		struct outbuf *o = malloc(sizeof(*o));
		outbuf_init(o, wfd);
		write_pieces(o, rows[r].pieces);
		int rc = outbuf_flush(o);
		CHECK(line, rc == rows[r].want_rc, "outbuf_flush: %d, want %d", rc, rows[r].want_rc);
		CHECK(line, outbuf_flush(o) == rc, "a second flush: not the first error again");
		if (rc == 0 && rows[r].want_rc == 0) {
			size_t want_len;
			char *want = expected(rows[r].pieces, &want_len);
			off_t size = lseek(fd, 0, SEEK_END);
			CHECK(line, (size_t)size == rows[r].want_bytes && want_len == rows[r].want_bytes,
			      "file %lld bytes, pieces %zu, want %zu", (long long)size, want_len,
			      rows[r].want_bytes);
			char *got = malloc(want_len + 1);
			CHECK(line, pread(fd, got, want_len, 0) == (ssize_t)want_len && !memcmp(got, want, want_len),
			      "the bytes written differ from the pieces");
			free(got);
			free(want);
		}
		if (rows[r].want_rc == -EMSGSIZE)
			CHECK(line, lseek(fd, 0, SEEK_END) == 0, "bytes written after a refused piece");
		free(o);
		if (wfd != fd)
			close(wfd);
		close(fd);
	}
	return check_failures != 0;
}
