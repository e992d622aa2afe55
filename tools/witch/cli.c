/* cli: the subcommands' shared argument reading (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int witch_cli_usage_error(const struct witch_cli *c, const char *fmt, const char *arg)
{
	fprintf(stderr, "witch: %s: ", c->cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s(see 'witch --help')\n", c->usage);
	return 2;
}

int witch_cli_option(struct witch_cli *c, const char *name, const char *needs, const char **val)
{
	const char *a = c->argv[c->i];
	size_t l = strlen(name);

	if (strncmp(a, name, l))
		return 0;
	if (a[l] == '=' && name[1] == '-') {
		*val = a + l + 1;
		return 1;
	}
	if (a[l] != '\0')
		return 0;
	if (c->i + 1 >= c->argc) {
		char what[64];
		snprintf(what, sizeof(what), "%%s needs %s", needs);
		witch_cli_usage_error(c, what, a);
		return -EINVAL;
	}
	*val = c->argv[++c->i];
	return 1;
}

int witch_cli_top(struct witch_cli *c, size_t *top)
{
	const char *val;
	int rc = witch_cli_option(c, "--top", "a number", &val);

	if (rc <= 0)
		return rc;
	if (witch_parse_top(val, top)) {
		witch_cli_usage_error(c, "--top: '%s' is not a count (0 for all)", val);
		return -EINVAL;
	}
	return 1;
}

int witch_parse_top(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno || v > SIZE_MAX)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

size_t witch_terminal_width(int fd)
{
	struct winsize ws;
	const char *env;
	size_t cols;

	if (fd < 0 || !isatty(fd))
		return 0;
	if (!ioctl(fd, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		return ws.ws_col;
	/* A terminal that does not say its size (a serial line, some
	 * emulators): the shell's idea of it, if it exported one. */
	env = getenv("COLUMNS");
	if (env && !witch_parse_top(env, &cols) && cols > 0)
		return cols;
	return 0;
}
