/*
 * profile_parse: one profile file (docs/profile-format.md, version 1) into
 * its raw form, checked whole (references, required records, the closing
 * `end`) before profile_read.c merges any of it into the model, so a bad
 * file never leaves half of itself behind.  Messages name "FILE:LINE".
 */
#ifndef WITCH_TOOL_PROFILE_PARSE_H
#define WITCH_TOOL_PROFILE_PARSE_H

#include "index_table.h"
#include "profile_read.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PROFILE_MAGIC "witch-profile"
#define PROFILE_VERSION 1
/* Merged indices are uint32_t; the largest one is reserved (WITCH_NO_MODULE). */
#define MAX_ENTRIES ((size_t)UINT32_MAX - 1)

struct raw_module {
	uint64_t id;
	uint64_t base, start, end;
	char *build_id;		/* NULL for "-" */
	char *path;
	size_t line;		/* for messages about it */
	uint32_t merged;	/* index in the model, set while merging */
};

struct raw_node {
	uint64_t id;
	uint32_t parent;	/* raw index + 1; 0 is the root */
	uint64_t pc;
	uint32_t merged;
};

struct raw_pair {
	uint64_t watch_id, trap_id;
	uint32_t watch, trap;	/* raw node index + 1, resolved at the end */
	double waste, use, waste_approx;
	bool has_waste_approx;
	uint64_t traps;
	size_t line;
};

/* `sampled <node> <bytes>`: what the samples taken in a context stand for. */
struct raw_sampled {
	uint64_t node_id;
	uint32_t node;		/* raw node index + 1, resolved at the end */
	double bytes;
	size_t line;
};

/* `object <id> <kind> ...`; see docs/objects.md. */
struct raw_object {
	uint64_t id;
	enum witch_object_kind kind;
	uint64_t size;
	uint64_t alloc_id;	/* heap */
	uint32_t alloc;		/* heap: raw node index + 1, resolved at the end */
	uint64_t addr;		/* static address, tls offset, stack pc */
	char *symbol;		/* static, tls; NULL for "-" */
	char *module;		/* static, tls */
	size_t line;
	uint32_t merged;
};

/* `object_sampled <id> <bytes>`. */
struct raw_object_sampled {
	uint64_t object_id;
	uint32_t object;	/* raw object index + 1; 0: unknown (id 0) */
	double bytes;
	size_t line;
};

/* `pair_object <watch-node> <trap-node> <object-id> <waste> <use> <waste_approx>`. */
struct raw_pair_object {
	uint64_t watch_id, trap_id, object_id;
	uint32_t watch, trap;	/* raw node index + 1, resolved at the end */
	uint32_t object;	/* raw object index + 1; 0: unknown (id 0) */
	double waste, use, waste_approx;
	size_t line;
};

struct raw_profile {
	const char *path;
	char *err;
	size_t errlen;
	size_t line;

	bool has_client, has_sampler, has_pid, has_exe;
	enum witch_client client;
	char *sampler;
	uint64_t period;
	bool has_period;
	double tolerance;
	bool has_tolerance;
	uint64_t pid;
	char *exe;
	char *sampler_why;
	char *verdicts;		/* the `verdicts` record's word, or NULL (traps) */

	struct witch_stat *stats;
	size_t nstats, capstats;
	struct raw_module *modules;
	size_t nmodules, capmodules;
	struct raw_node *nodes;
	size_t nnodes, capnodes;
	struct raw_pair *pairs;
	size_t npairs, cappairs;
	struct raw_sampled *sampled;
	size_t nsampled, capsampled;
	struct raw_object *objects;
	size_t nobjects, capobjects;
	struct raw_object_sampled *object_sampled;
	size_t nobject_sampled, capobject_sampled;
	struct raw_pair_object *pair_objects;
	size_t npair_objects, cappair_objects;

	struct index_table module_ids;	/* id -> raw module index */
	struct index_table node_ids;	/* id -> raw node index */
	struct index_table object_ids;	/* id -> raw object index */
};

/* An empty raw form; messages go to err (errlen bytes) and name path. */
void raw_init(struct raw_profile *r, const char *path, char *err, size_t errlen);
/* Reads and checks every line of f, up to and including `end`. */
int raw_parse(struct raw_profile *r, FILE *f);
/* After raw_parse: resolves pair and object references, checks the required records and
 * that executable ranges do not overlap; by_start (nmodules entries) gets
 * the module indices sorted by start. */
int raw_finish(struct raw_profile *r, uint32_t *by_start);
void raw_free(struct raw_profile *r);
/* Grows a dynamic array so that one more element fits (the model's too). */
int profile_grow(void **arr, size_t *cap, size_t n, size_t elem);

#endif
