/*
 * run: `witch run [-c dead|silent|load] [-o FILE] [--json] [--top N]
 *       [--] PROG ARGS...` - run a program under libwitch.so and report.
 *
 * Finds libwitch.so ($WITCH_LIB, else next to the witch executable, else
 * ../lib/libwitch.so relative to it), prepends it to LD_PRELOAD, sets
 * WITCH_CLIENT (-c, else $WITCH_CLIENT, else dead) and WITCH_OUTPUT (-o,
 * else $WITCH_OUTPUT, else witch-<prog basename>-%p.prof; made absolute
 * against the current directory so a program that changes directory
 * still writes where witch looks), then fork+execvp, waits, and prints
 * the report of the profile(s) written to stdout, after the program's own
 * output. Profiles: the pattern with %p = the program's pid, plus files
 * matching the pattern for other pids (its descendants) if they were
 * written after the run started; %e matches any file name part.
 *
 * While the program runs, SIGINT and SIGQUIT are ignored by witch (the
 * terminal delivers them to the program too; witch must survive to
 * report), and SIGTERM and SIGHUP are forwarded to the program.
 */
#ifndef WITCH_TOOL_RUN_H
#define WITCH_TOOL_RUN_H

/* The subcommand; argv[0] is "run". Returns the exit status: the program's, or
 * 128 + signal if it was killed; 127 (not found) or 126 (not executable) if it
 * could not be started; 2 for bad usage or when libwitch.so cannot be found. */
int witch_run_main(int argc, char **argv);

#endif
