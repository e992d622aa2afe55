/* log: async-signal-safe formatting of `witch:` lines (see log.h). */
#include "witch/log.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

static int log_level;

void log_set_verbosity(int level) { log_level = level; }

static size_t put_str(char *buf, size_t pos, size_t size, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++)
		if (pos + 1 < size)
			buf[pos++] = s[i];
	return pos;
}

static size_t put_num(char *buf, size_t pos, size_t size, unsigned long long v,
		      unsigned base, int negative)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (negative && pos + 1 < size)
		buf[pos++] = '-';
	while (n > 0 && pos + 1 < size)
		buf[pos++] = tmp[--n];
	return pos;
}

int log_format(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t pos = 0;
	if (size == 0)
		return 0;
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			if (pos + 1 < size)
				buf[pos++] = *p;
			continue;
		}
		p++;
		size_t prec = (size_t)-1;
		if (*p == '.' && p[1] == '*') {
			prec = (size_t)va_arg(ap, int);
			p += 2;
		}
		int longs = 0;
		while (*p == 'l') {
			longs++;
			p++;
		}
		if (*p == 'z') {
			longs = 1;
			p++;
		}
		switch (*p) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			pos = put_str(buf, pos, size, s ? s : "(null)", prec);
			break;
		}
		case 'c':
			if (pos + 1 < size)
				buf[pos++] = (char)va_arg(ap, int);
			break;
		case 'd': {
			long long v = longs ? va_arg(ap, long) : va_arg(ap, int);
			pos = put_num(buf, pos, size, v < 0 ? -(unsigned long long)v : (unsigned long long)v,
				      10, v < 0);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v = longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			pos = put_num(buf, pos, size, v, *p == 'x' ? 16 : 10, 0);
			break;
		}
		case 'p':
			pos = put_str(buf, pos, size, "0x", 2);
			pos = put_num(buf, pos, size, (uintptr_t)va_arg(ap, void *), 16, 0);
			break;
		case '%':
			if (pos + 1 < size)
				buf[pos++] = '%';
			break;
		default:
			pos = put_str(buf, pos, size, "%?", 2);
			break;
		}
		if (!*p)
			break;
	}
	buf[pos] = '\0';
	return (int)pos;
}

int log_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = log_format(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

static void log_emit(const char *fmt, va_list ap)
{
	char buf[512];
	memcpy(buf, "witch: ", 7);
	int n = 7 + log_format(buf + 7, sizeof(buf) - 8, fmt, ap);
	buf[n++] = '\n';
	for (int off = 0; off < n;) {
		ssize_t w = write(STDERR_FILENO, buf + off, (size_t)(n - off));
		if (w <= 0)
			return; /* stderr closed: nothing else to tell */
		off += (int)w;
	}
}

void log_line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_emit(fmt, ap);
	va_end(ap);
}

void log_verbose(int level, const char *fmt, ...)
{
	if (log_level < level)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_emit(fmt, ap);
	va_end(ap);
}
