/* output: one client's result as a JSON file in the schema of
 * `witch report --json` (tools/witch/report.c), so one script compares the
 * oracle with libwitch.  "sampler" is "oracle", frames are physical (no
 * inlined ones), and an "oracle" object adds what sampling cannot see.
 * Totals count every pair; the file lists the `top` largest (recursion
 * can make millions of distinct contexts: glibc's qsort).  "sampled" lists
 * the 200 contexts that accessed the most bytes, as libwitch's profile
 * lists what its samples stand for.  "objects" (docs/objects.md) lists the
 * objects by waste, and each pair its own: the pairs' watch side is a
 * <context, object> key (objects.h).
 *
 *   Int output_write(const HChar *path, const struct output_client *c);
 *       whole file through PATH.tmp renamed into place; 0 or -errno.
 */
#ifndef ORACLE_OUTPUT_H
#define ORACLE_OUTPUT_H

#include "pub_tool_basics.h"
#include "access.h"
#include "objects.h"
#include "pairs.h"
#include "simulate.h"

struct output_client {
	const HChar *name;        /* dead, silent, load */
	const struct pairs *pairs;
	const struct access_totals *totals;
	ULong decidable;          /* bytes stored (dead, silent) or loaded (load) */
	Bool values;              /* silent/load: print waste_approx and tolerance */
	const HChar *tolerance;   /* as given */
	UInt depth;               /* frames per context */
	UInt top;                 /* pairs written, largest waste first; 0 = all */
	ULong shadow_bytes;
	ULong wall_ms;
	const struct simulate_stats *sim; /* a simulated run: "sampler":"count"; NULL: exhaustive */
	const struct pairs *by_ctx; /* bytes accessed per context (<ctx, ctx>, waste): the
				     * "sampled" list; NULL: none */
	const struct object_bytes *by_obj; /* bytes sampled (exhaustive: accessed) per
					    * object: the objects' "sampled" */
};

Int output_write(const HChar *path, const struct output_client *c);

#endif
