/*
 * cli: what the subcommands share in reading their arguments: options
 * given as "--name VALUE" or "--name=VALUE", counts, the terminal's width,
 * and the one usage-error format ("witch: CMD: what\nUSAGE(see 'witch
 * --help')", exit status 2).
 */
#ifndef WITCH_TOOL_CLI_H
#define WITCH_TOOL_CLI_H

#include <stdbool.h>
#include <stddef.h>

struct witch_cli {
	const char *cmd;	/* "report" */
	const char *usage;	/* its "Usage: ..." line, newline-terminated */
	int argc;
	char **argv;
	int i;			/* the argument being read */
};

/* The message (fmt with arg) and the usage on stderr; returns 2, the exit status. */
int witch_cli_usage_error(const struct witch_cli *c, const char *fmt, const char *arg);
/* Whether argv[i] is option `name`: 1 with *val its value ("--name=VALUE",
 * or the next argument, which it consumes), 0 if it is not that option,
 * -EINVAL when the value is missing (after a usage error "ARG needs
 * <needs>"). Only long names ("--...") take "=VALUE". */
int witch_cli_option(struct witch_cli *c, const char *name, const char *needs, const char **val);
/* --top N: 1 with *top set, 0 if argv[i] is not --top, -EINVAL after a usage error. */
int witch_cli_top(struct witch_cli *c, size_t *top);
/* A decimal count (--top, --width, $COLUMNS): 0 or -EINVAL. */
int witch_parse_top(const char *s, size_t *out);
/* The column count of the terminal on fd (TIOCGWINSZ, else a positive
 * $COLUMNS), or 0 (no limit) when fd is no terminal or neither tells. */
size_t witch_terminal_width(int fd);

#endif
