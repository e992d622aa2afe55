/*
 * profile_read: parse libwitch profile files (docs/profile-format.md,
 * version 1) into one in-memory model; reading several files merges them.
 *
 * Merging: profiles of different processes map the same code at
 * different addresses, so calling contexts are keyed by module-relative
 * code addresses, not by run-time pcs. Every node pc is turned into
 * (module, offset = pc - module base) using the module table of its own
 * file; modules are identified across files by (path, build-id). Two
 * paths are the same when their chains of (module, offset) tuples from
 * the leaf up to the root are equal, and pairs are the same when both of
 * their paths are. Metrics and stats are summed.
 */
#ifndef WITCH_TOOL_PROFILE_READ_H
#define WITCH_TOOL_PROFILE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum witch_client {
	WITCH_CLIENT_DEAD,	/* dead stores (DeadCraft) */
	WITCH_CLIENT_SILENT,	/* silent stores (SilentCraft) */
	WITCH_CLIENT_LOAD,	/* redundant loads (LoadCraft) */
};

/* Node.module for a pc that no module of its profile covered. */
#define WITCH_NO_MODULE UINT32_MAX

struct witch_module {
	char *path;
	char *build_id;		/* lowercase hex; NULL when the profile wrote "-" */
	uint64_t base;		/* load bias in the first file that mapped it */
	uint64_t start, end;	/* its executable range there (run time) */
};

struct witch_node {
	uint32_t parent;	/* node index; 0 is the root */
	uint32_t module;	/* module index or WITCH_NO_MODULE */
	uint64_t offset;	/* pc - module base; the absolute pc without module */
	uint64_t pc;		/* run-time pc, using the module's base above */
	double sampled;		/* bytes the samples taken here stand for (`sampled`) */
};

struct witch_pair {
	uint32_t watch, trap;	/* node indices, never 0 */
	double waste, use;	/* estimated bytes */
	double waste_approx;	/* part of waste; valid if has_waste_approx */
	bool has_waste_approx;
	uint64_t traps;
};

/* What an object is (docs/objects.md); UNKNOWN is object id 0 of a profile. */
enum witch_object_kind {
	WITCH_OBJECT_UNKNOWN,
	WITCH_OBJECT_HEAP,
	WITCH_OBJECT_STATIC,
	WITCH_OBJECT_TLS,
	WITCH_OBJECT_STACK,
};

/*
 * An object of the `object` records, merged across files by what it is
 * before symbolization: heap by allocation node, static and tls by
 * (module path, symbol), stack by the pc's (module, offset), unknown once.
 * object_view.h names them and merges the ones that read alike.
 */
struct witch_object {
	enum witch_object_kind kind;
	uint64_t size;		/* the largest any file wrote */
	uint32_t node;		/* heap: the allocation node; stack: a node
				 * child of the root holding the pc, so the
				 * symbolizer names it; 0 otherwise */
	char *symbol;		/* static, tls: NULL when the profile wrote "-" */
	char *module;		/* static, tls: the module's path */
	uint64_t addr;		/* static: run-time address; tls: offset (first file) */
	double sampled;		/* object_sampled bytes */
};

/* `pair_object`: the part of a pair's waste and use on one object. */
struct witch_pair_object {
	uint32_t pair, object;	/* model indices */
	double waste, use, waste_approx;
};

struct witch_stat {
	char *name;
	double value;
};

struct witch_file_id {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct witch_profile {
	size_t nfiles;
	struct witch_file_id *files;	/* nfiles entries, to refuse duplicates */
	enum witch_client client;
	char *sampler;		/* "mixed" when the files disagree */
	char *sampler_why;	/* why the PMU sampler did not run, or NULL */
	char *verdicts;		/* "traps" (also when unsaid), "window", "none"; "mixed" */
	uint64_t period;	/* of the first file with one */
	bool has_period;
	bool period_mixed;	/* files with different periods were merged */
	double tolerance;	/* silent/load: WITCH_FP_TOLERANCE of the first file */
	bool has_tolerance;
	bool tolerance_mixed;
	char *exe;		/* of the first file with an exe record */
	uint64_t *pids;		/* one per file that had a pid record */
	size_t npids;

	struct witch_module *modules;
	size_t nmodules;
	struct witch_node *nodes;	/* nodes[0] is the root */
	size_t nnodes;
	struct witch_pair *pairs;
	size_t npairs;
	struct witch_stat *stats;
	size_t nstats;
	struct witch_object *objects;	/* none in profiles older than objects */
	size_t nobjects;
	struct witch_pair_object *pair_objects;	/* one per (pair, object) */
	size_t npair_objects;

	/* Private: lookup of merged nodes and pairs by their keys. */
	struct witch_profile_index *index;
};

/* An empty model (no files yet). */
void witch_profile_init(struct witch_profile *p);
/* Parses the profile file at path and merges it into p. Returns 0, or a
 * negative errno with a one-line message in err, naming the file and, for
 * content errors, the line: "FILE:LINE: what is wrong". -EINVAL   malformed
 * content: bad magic, malformed or truncated file, bad ids or references, a
 * different client -EPROTONOSUPPORT  a profile version other than 1 -ENOMEM,
 * or the errno of open/read Records of unknown type are skipped (forward
 * compatibility). On -EINVAL and -EPROTONOSUPPORT p is unchanged; after
 * -ENOMEM it is valid (freeable) but may hold part of the file. */
int witch_profile_read(struct witch_profile *p, const char *path, char *err,
		       size_t errlen);
/* Releases everything; p is empty again. */
void witch_profile_free(struct witch_profile *p);
/* "heap", "static", "tls", "stack" or "unknown". */
const char *witch_object_kind_name(enum witch_object_kind k);
/* "dead", "silent" or "load". */
const char *witch_client_name(enum witch_client c);
/* Summed value of a stat counter, 0 if no file had it. */
double witch_profile_stat(const struct witch_profile *p, const char *name);

#endif
