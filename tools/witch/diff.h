/*
 * diff: `witch diff [--json] [--top N] BASE NEW` - compare two profiles
 * (e.g. before and after a change) pair by pair.
 *
 * Run-time addresses differ between builds and runs, so pairs are matched
 * by what they mean in the source: the symbolized frames of both calling
 * contexts, (function, file, line) for each frame leaf to root, inlined
 * frames included; a frame the symbolizer could not name is keyed by its
 * module path and module offset instead. Pairs of one profile with the
 * same key (several instructions of one line) are summed.
 *
 * Each matched pair is one of: appeared (only in NEW), vanished (only in
 * BASE), grew (more waste bytes in NEW), shrank (less), unchanged. The
 * listing is sorted by the size of the waste change, largest first, and
 * shows both wastes, the change and the pair's share of each profile's
 * waste; the summary gives both profiles' fractions (waste / (waste +
 * use)) and the change. Objects (docs/objects.md) are compared the same
 * way, matched by kind and name (object_view.h), listed after the pairs. Text lists the first N entries (default 10, 0 =
 * all); JSON (schema in diff.c) lists all unless --top is given.
 */
#ifndef WITCH_TOOL_DIFF_H
#define WITCH_TOOL_DIFF_H

/* The subcommand; argv[0] is "diff". Returns the exit status: 0 success, 1
 * output error, 2 bad usage or unreadable profile (one "witch: ..." line on
 * stderr), or profiles of different clients. */
int witch_diff_main(int argc, char **argv);

#endif
