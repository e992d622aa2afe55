/*
 * sink: where a report goes, a stream or an -o file.  The file is written
 * to a temp name beside it and renamed into place at the end, so it is
 * whole or absent, never half-written where a viewer finds it.
 */
#ifndef WITCH_TOOL_SINK_H
#define WITCH_TOOL_SINK_H

#include <stdio.h>

struct witch_sink {
	FILE *f;		/* write here */
	char *tmp;		/* the temp path while writing -o FILE, else NULL */
};

/* output NULL or "-": out itself. 0, or a negative errno after a "witch:" line. */
int witch_sink_open(struct witch_sink *k, const char *output, FILE *out);
/* Flushes, and renames the temp file into place when rc and the writes were
 * fine (else removes it). Returns rc, or a write error after a "witch:" line. */
int witch_sink_close(struct witch_sink *k, const char *output, int rc);

#endif
