/* wording: bytes and pair headings for people (see wording.h). */
#include "wording.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

/* Bytes for people: exact-ish number, and a binary-unit hint when large. */
void witch_print_bytes(FILE *out, double v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double h = v;
	int u = -1;

	if (v >= 100 || v == (double)(uint64_t)v)
		fprintf(out, "%.0f bytes", v);
	else
		fprintf(out, "%.2f bytes", v);
	while (h >= 1024 && u < 4) {
		h /= 1024;
		u++;
	}
	if (u >= 0)
		fprintf(out, " (%.1f %s)", h, units[u]);
}

const char *witch_client_what(enum witch_client c)
{
	switch (c) {
	case WITCH_CLIENT_DEAD:
		return "dead stores";
	case WITCH_CLIENT_SILENT:
		return "silent stores";
	case WITCH_CLIENT_LOAD:
		return "redundant loads";
	}
	return "?";
}

const char *witch_verdicts_what(const char *verdicts)
{
	if (!strcmp(verdicts, "traps"))
		return "watchpoint traps";
	if (!strcmp(verdicts, "window"))
		return "the run-ahead alone (no watchpoint traps): waste farther than a few "
		       "hundred instructions from its access is not seen";
	if (!strcmp(verdicts, "none"))
		return "none (WITCH_WATCHPOINTS=0: the samples are weighed only)";
	return "differ between the profiles";
}

const char *witch_no_pairs_why(const char *verdicts)
{
	if (!strcmp(verdicts, "window"))
		return "no sample's deciding access lay within the run-ahead's reach";
	if (!strcmp(verdicts, "none"))
		return "nothing was decided (WITCH_WATCHPOINTS=0)";
	return "no watchpoint trap was attributed to a pair of contexts";
}

/* A pair with no waste is a useful access: word it so. */
const char *witch_watch_words(enum witch_client c, bool wasted)
{
	if (!wasted)
		return c == WITCH_CLIENT_LOAD ? "load" : "store";
	switch (c) {
	case WITCH_CLIENT_DEAD:
		return "dead store";
	case WITCH_CLIENT_SILENT:
		return "silent store";
	case WITCH_CLIENT_LOAD:
		return "load";
	}
	return "?";
}

const char *witch_trap_words(enum witch_client c, bool wasted)
{
	if (!wasted) {
		switch (c) {
		case WITCH_CLIENT_DEAD:
			return "read by";
		case WITCH_CLIENT_SILENT:
			return "overwritten with a different value by";
		case WITCH_CLIENT_LOAD:
			return "different value loaded by";
		}
	}
	switch (c) {
	case WITCH_CLIENT_DEAD:
		return "killed by";
	case WITCH_CLIENT_SILENT:
		return "overwritten with the same value by";
	case WITCH_CLIENT_LOAD:
		return "same value loaded again by";
	}
	return "?";
}

void witch_print_pids(FILE *out, const struct witch_profile *p)
{
	if (!p->npids)
		return;
	fprintf(out, " (pid%s", p->npids > 1 ? "s" : "");
	for (size_t i = 0; i < p->npids && i < 8; i++)
		fprintf(out, "%s%" PRIu64, i ? ", " : " ", p->pids[i]);
	fprintf(out, "%s)", p->npids > 8 ? ", ..." : "");
}
