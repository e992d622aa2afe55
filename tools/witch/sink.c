/* sink: the report's stream or its -o file, made whole before rename (see sink.h). */
#include "sink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int witch_sink_open(struct witch_sink *k, const char *output, FILE *out)
{
	int fd;

	k->f = out;
	k->tmp = NULL;
	if (!output || !strcmp(output, "-"))
		return 0;
	/* A temp file next to the target, renamed at the end, so a failed
	 * run never leaves a half-written profile where a viewer finds it. */
	if (asprintf(&k->tmp, "%s.XXXXXX", output) < 0) {
		k->tmp = NULL;
		fprintf(stderr, "witch: out of memory\n");
		return -ENOMEM;
	}
	fd = mkstemp(k->tmp);
	if (fd >= 0) {
		/* mkstemp makes it 0600; the output is an ordinary file,
		 * so give it the mode creat() would (0666 less the umask). */
		mode_t mask = umask(0);

		umask(mask);
		if (fchmod(fd, 0666 & ~mask)) {
			close(fd);
			unlink(k->tmp);
			fd = -1;
		}
	}
	if (fd < 0 || !(k->f = fdopen(fd, "w"))) {
		int e = errno;

		fprintf(stderr, "witch: cannot create %s: %s\n", output,
			strerror(e));
		if (fd >= 0) {
			close(fd);
			unlink(k->tmp);
		}
		free(k->tmp);
		k->tmp = NULL;
		k->f = NULL;
		return -e;
	}
	return 0;
}

/* Finish the output: flush, and rename the temp file into place when ok. */
int witch_sink_close(struct witch_sink *k, const char *output, int rc)
{
	const char *name = k->tmp ? output : "the report";
	int e = 0;

	if (!k->f)
		return rc;
	/* Output errors stick in the stream; check once, at the end. */
	errno = 0;
	if (fflush(k->f) || ferror(k->f))
		e = errno ? errno : EIO;
	if (k->tmp) {
		if (fclose(k->f) && !e)
			e = errno ? errno : EIO;
		if (!rc && !e && rename(k->tmp, output))
			e = errno;
		if (rc || e)
			unlink(k->tmp);
		free(k->tmp);
	}
	k->f = NULL;
	k->tmp = NULL;
	if (!rc && e) {
		fprintf(stderr, "witch: cannot write %s: %s\n", name, strerror(e));
		rc = -e;
	}
	return rc;
}
