/*
 * source: the lines of source files around a line, for `witch report
 * --source` and the HTML page's top pairs, as perf annotate and
 * pprof -list show them. Files are read once (the path as the debug info
 * names it: libdw makes it absolute from the compilation directory) and
 * kept until witch_source_free; a file larger than 64 MiB is not read.
 */
#ifndef WITCH_TOOL_SOURCE_H
#define WITCH_TOOL_SOURCE_H

#include <stddef.h>

struct witch_source;

/* Lines shown each side of the marked one. */
#define WITCH_SOURCE_CONTEXT 3

/* Lines first .. first + n - 1 of a file, without their line ends; the
 * asked line is mark. Valid until witch_source_free. */
struct witch_source_excerpt {
	unsigned first, mark;
	size_t n;
	const char *const *lines;
};

/* An empty cache of files. 0 or -ENOMEM. */
int witch_source_new(struct witch_source **out);
void witch_source_free(struct witch_source *s);
/* The lines of file from line - context to line + context (cut at the
 * file's ends) into *ex. 0; -ENOENT when the file cannot be read (missing,
 * unreadable, too large, "??"), -ERANGE when it has fewer lines than line
 * (another version of the file) or line is 0, -ENOMEM. A file that failed
 * once is not tried again. */
int witch_source_excerpt(struct witch_source *s, const char *file, unsigned line,
			 unsigned context, struct witch_source_excerpt *ex);

#endif
