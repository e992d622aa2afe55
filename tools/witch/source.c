/* source: lines around a source line, files read once; see source.h. */
#include "source.h"
#include "profile_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SOURCE_MAX_BYTES (64u << 20)

struct source_file {
	char *path;
	int err;		/* 0, or why it cannot be read (-errno) */
	char *text;		/* the whole file, line ends made NULs */
	char **lines;
	size_t nlines;
};

struct witch_source {
	struct source_file *files;
	size_t n, cap;
};

int witch_source_new(struct witch_source **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void witch_source_free(struct witch_source *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].path);
		free(s->files[i].text);
		free(s->files[i].lines);
	}
	free(s->files);
	free(s);
}

/* The whole of path into f->text and f->lines. 0 or -errno. */
static int source_read(struct source_file *f)
{
	struct stat st;
	size_t len, cap = 0;
	FILE *in;
	int rc = 0;

	in = fopen(f->path, "r");
	if (!in)
		return -errno;
	if (fstat(fileno(in), &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > SOURCE_MAX_BYTES) {
		fclose(in);
		return -ENOENT;
	}
	f->text = malloc((size_t)st.st_size + 1);
	if (!f->text) {
		fclose(in);
		return -ENOMEM;
	}
	len = fread(f->text, 1, (size_t)st.st_size, in);
	if (ferror(in))
		rc = -EIO;
	fclose(in);
	if (rc)
		return rc;
	f->text[len] = '\0';
	for (char *p = f->text; p < f->text + len;) {
		char *nl = memchr(p, '\n', (size_t)(f->text + len - p));

		if (f->nlines == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			char **nv = realloc(f->lines, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			f->lines = nv;
			cap = ncap;
		}
		f->lines[f->nlines++] = p;
		if (!nl)
			break;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		p = nl + 1;
	}
	return 0;
}

/* The cached file of path, read now if new. NULL: out of memory. */
static struct source_file *source_file(struct witch_source *s, const char *path)
{
	struct source_file *f;

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->files[i].path, path))
			return &s->files[i];
	if (profile_grow((void **)&s->files, &s->cap, s->n, sizeof(*s->files)) < 0)
		return NULL;
	f = &s->files[s->n];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	s->n++;
	f->err = strcmp(path, "??") ? source_read(f) : -ENOENT;
	if (f->err) {
		free(f->text);
		free(f->lines);
		f->text = NULL;
		f->lines = NULL;
		f->nlines = 0;
		if (f->err != -ENOMEM)
			f->err = -ENOENT;
	}
	return f;
}

int witch_source_excerpt(struct witch_source *s, const char *file, unsigned line,
			 unsigned context, struct witch_source_excerpt *ex)
{
	struct source_file *f = source_file(s, file);
	size_t first, last;

	if (!f)
		return -ENOMEM;
	if (f->err)
		return f->err;
	if (line == 0 || line > f->nlines)
		return -ERANGE;
	first = line > context ? line - context : 1;
	last = (size_t)line + context < f->nlines ? (size_t)line + context : f->nlines;
	ex->first = (unsigned)first;
	ex->mark = line;
	ex->n = last - first + 1;
	ex->lines = (const char *const *)&f->lines[first - 1];
	return 0;
}
