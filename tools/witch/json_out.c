/* json_out: JSON strings and numbers; see json_out.h. */
#include "json_out.h"

#include <stdlib.h>
#include <string.h>

/* Shortest of %.15g / %.17g that reads back as the same double. */
void json_out_num(FILE *out, double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, out);
}

/* Length of a valid UTF-8 sequence at s, or 0 if it is not one. */
size_t json_out_utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * A JSON string. Paths and names come from files and DWARF and may hold
 * any bytes; JSON must be valid UTF-8, so invalid bytes become U+FFFD.
 */
void json_out_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	while (*p) {
		size_t n;

		switch (*p) {
		case '"':
			fputs("\\\"", out);
			p++;
			continue;
		case '\\':
			fputs("\\\\", out);
			p++;
			continue;
		case '\n':
			fputs("\\n", out);
			p++;
			continue;
		case '\r':
			fputs("\\r", out);
			p++;
			continue;
		case '\t':
			fputs("\\t", out);
			p++;
			continue;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p);
			p++;
			continue;
		}
		n = json_out_utf8_len(p);
		if (!n) {
			fputs("\\ufffd", out);
			p++;
			continue;
		}
		fwrite(p, 1, n, out);
		p += n;
	}
	fputc('"', out);
}
