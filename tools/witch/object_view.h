/*
 * object_view: the objects of a profile model as every report shows them
 * (docs/objects.md, issue #15): named, merged by name, with their waste,
 * use and sampled bytes, and each pair's part on each of them.
 *
 * Names: heap "heap from FUNCTION (FILE:LINE)", from the allocation
 * context's leaf, the program's call of the allocator (FILE the source
 * file's name, without its directory, as the oracle and the HTML page's
 * sentences write it; "heap from FUNCTION" when the frame has no line); when
 * the leaf is library code - a frame outside the main executable
 * (operator new in libstdc++, a library's wrapper) or from a system header
 * (/usr/include/, /usr/local/include/, /usr/lib/gcc/, /usr/lib/llvm-*:
 * std::vector's allocate inlined into the program) - the first frame of
 * the program's own code names it, when the context has one; static
 * "SYMBOL", "SYMBOL (MODULE)" outside the executable, "[data in MODULE]"
 * without a symbol; tls "SYMBOL (tls)" ("[tls in MODULE]" without one);
 * stack "stack of FUNCTION"; "unknown" (object id 0). MODULE is the
 * module's file name ("[data]", "[tls]" and a bare SYMBOL when the
 * profile wrote the module as "-"); the main executable is the profile's
 * `exe` (else its first module).  Objects of one kind and name are one
 * row, however many objects, files or processes they came from; a heap
 * row shows the
 * allocation context of its part with the most waste (then sampled bytes).
 */
#ifndef WITCH_TOOL_OBJECT_VIEW_H
#define WITCH_TOOL_OBJECT_VIEW_H

#include "profile_read.h"
#include "symbolize.h"

#include <stddef.h>
#include <stdint.h>

struct witch_object_row {
	enum witch_object_kind kind;
	char *name;
	uint32_t alloc;		/* heap: the allocation node shown; 0 otherwise */
	uint64_t size;		/* the largest of its objects */
	double waste, use;	/* sums of its pair_object parts */
	double sampled;		/* object_sampled bytes */
};

/* A pair's part on one row. */
struct witch_object_part {
	uint32_t row;
	double waste, use;
};

struct witch_objects {
	struct witch_object_row *rows;	/* by waste, largest first (ties: sampled,
					 * use, then name) */
	size_t n;
	struct witch_object_part *parts;	/* grouped by pair, by waste in each */
	size_t *pair_first;	/* pair i: parts[pair_first[i] .. pair_first[i + 1]) */
	double sampled_total;	/* over all rows */
};

/* The rows of p's objects, named with s. 0, -ENOMEM or the symbolizer's
 * negative errno; o is freeable either way.  No objects: o->n == 0. */
int witch_objects_build(const struct witch_profile *p, struct witch_symbolizer *s,
			struct witch_objects *o);
void witch_objects_free(struct witch_objects *o);
/* A malloc'd array of the row indices with sampled bytes, largest first, and
 * their count. 0 or -ENOMEM. */
int witch_objects_by_sampled(const struct witch_objects *o, uint32_t **order, size_t *n);

#endif
