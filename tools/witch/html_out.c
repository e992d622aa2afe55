/* html_out: strings and numbers into HTML; see html_out.h. */
#include "html_out.h"

#include "json_out.h"

/*
 * s as HTML text or a quoted attribute value. Names and paths come from
 * files and DWARF and may hold any bytes: markup characters become
 * entities, and bytes that are not UTF-8 (the page says it is) or control
 * characters (which HTML does not allow) become U+FFFD.
 */
void html_out_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n;

		switch (*p) {
		case '&':
			fputs("&amp;", out);
			p++;
			continue;
		case '<':
			fputs("&lt;", out);
			p++;
			continue;
		case '>':
			fputs("&gt;", out);
			p++;
			continue;
		case '"':
			fputs("&quot;", out);
			p++;
			continue;
		case '\'':
			fputs("&#39;", out);
			p++;
			continue;
		}
		if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f) {
			fputs("&#xfffd;", out);
			p++;
			continue;
		}
		n = json_out_utf8_len(p);
		if (!n) {
			fputs("&#xfffd;", out);
			p++;
			continue;
		}
		fwrite(p, 1, n, out);
		p += n;
	}
}

/* A number as the JSON report writes it, for data-* attributes. */
void html_out_num_attr(FILE *out, const char *name, double v)
{
	fprintf(out, " %s=\"", name);
	json_out_num(out, v);
	fputc('"', out);
}

/*
 * Copies JSON text into a <script> element. json_out_str already made it
 * valid UTF-8 JSON; '<', '>' and '&' can only occur inside its strings,
 * where \u escapes mean the same, and without them no "</script>" or
 * "<!--" inside a name can end or confuse the element.
 */
void html_out_script_json(FILE *out, const char *json, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (json[i]) {
		case '<':
			fputs("\\u003c", out);
			break;
		case '>':
			fputs("\\u003e", out);
			break;
		case '&':
			fputs("\\u0026", out);
			break;
		default:
			fputc(json[i], out);
		}
	}
}
