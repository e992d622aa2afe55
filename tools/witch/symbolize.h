/*
 * symbolize: map the pcs of a profile model to source frames with
 * elfutils libdwfl, offline (the profiled process is gone).
 *
 * Each module of the model is opened lazily, on the first pc that needs
 * it, in a Dwfl of its own at the load bias recorded in the profile: after
 * merging, modules of different processes may claim overlapping address
 * ranges, which one Dwfl would refuse. Results are cached per
 * (module, module-relative pc). A module whose file cannot be opened, or
 * whose build-id differs from the profile's, yields unknown frames that
 * keep the module path and address; it is reported once on stderr as
 * "witch: warning: ...".
 *
 * Names are made here, once, for every renderer: C++ and Rust symbols are
 * demangled (demangle.h; the symbol as the binary spells it stays in
 * `raw`), a frame nothing names is "[unknown in MODULE]" (the module's
 * file name) and a pc outside every module (anonymous executable memory:
 * JIT code) is "[JIT]". Debug info is found as libdwfl's standard
 * callbacks find it: in the file itself, a separate file by build-id
 * under /usr/lib/debug/.build-id or by .gnu_debuglink (next to the file,
 * in its .debug/ and under /usr/lib/debug), and, when DEBUGINFOD_URLS is
 * set, from debuginfod servers through libdw's debuginfod client.
 */
#ifndef WITCH_TOOL_SYMBOLIZE_H
#define WITCH_TOOL_SYMBOLIZE_H

#include "profile_read.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct witch_frame {
	const char *function;	/* as people read it: demangled, or
				 * "[unknown in MODULE]" / "[JIT]" */
	const char *raw;	/* the symbol as mangled in the binary; NULL
				 * when function is not a demangled name */
	const char *file;	/* "??" when unknown */
	unsigned line;		/* 0 when unknown */
	const char *module;	/* module path; "??" outside every module */
	uint64_t address;	/* run-time pc (see struct witch_node) */
	uint64_t offset;	/* pc - module base; the pc without a module */
	bool inlined;		/* an inlined call, inside the next frame */
	bool unknown;		/* no name: function is "[unknown in ...]" or "[JIT]" */
};

struct witch_symbolizer;

/* A symbolizer for the model p, which must outlive it. 0 or -ENOMEM. */
int witch_symbolizer_new(const struct witch_profile *p,
			 struct witch_symbolizer **out);
void witch_symbolizer_free(struct witch_symbolizer *s);
/* The frames of one calling-context node (its pc), innermost first: the
 * inlined calls (inlined = true) before the function that physically contains
 * the pc. Always at least one frame. The array and its strings stay valid
 * until witch_symbolizer_free. 0, -EINVAL (node out of range) or -ENOMEM. */
int witch_symbolize_node(struct witch_symbolizer *s, uint32_t node,
			 const struct witch_frame **frames, size_t *n);

#endif
