/*
 * libFuzzer harness for the profile reader (tools/witch/profile_read.c):
 * whatever bytes a profile file holds, witch_profile_read must return 0
 * or a negative errno with a message - never crash, leak, read out of
 * bounds or hang - and a model it accepted must be consistent.
 *
 * The input is one profile file, or two separated by a line "%%" (the
 * second is merged into the first's model, which exercises merging).
 * Files are memfds read through /proc/self/fd/N, the path the reader
 * wants. Built with clang -fsanitize=fuzzer,address,undefined only when
 * that works (tests/tools/CMakeLists.txt); run by bench/fuzz_profile.sh.
 */
#include "profile_read.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fds[2] = { -1, -1 };
static char paths[2][64];

static void put(int i, const uint8_t *data, size_t size)
{
	if (ftruncate(fds[i], 0) || pwrite(fds[i], data, size, 0) != (ssize_t)size) {
		perror("fuzz: memfd");
		abort();
	}
}

/* What the rest of the witch command relies on in an accepted model. */
static void check_model(const struct witch_profile *p)
{
	if (p->nnodes == 0 || p->nodes[0].parent != 0)
		abort();
	for (size_t i = 1; i < p->nnodes; i++) {
		const struct witch_node *n = &p->nodes[i];

		if (n->parent >= i)
			abort();	/* walks to the root must end */
		if (n->module != WITCH_NO_MODULE && n->module >= p->nmodules)
			abort();
	}
	for (size_t i = 0; i < p->npairs; i++) {
		const struct witch_pair *q = &p->pairs[i];

		if (q->watch == 0 || q->trap == 0 || q->watch >= p->nnodes ||
		    q->trap >= p->nnodes || !(q->waste >= 0) || !(q->use >= 0))
			abort();
	}
	for (size_t i = 0; i < p->nobjects; i++) {
		const struct witch_object *o = &p->objects[i];

		if (o->node >= p->nnodes || !(o->sampled >= 0))
			abort();
		/* object_view names heap and stack objects by their node. */
		if ((o->kind == WITCH_OBJECT_HEAP || o->kind == WITCH_OBJECT_STACK) && o->node == 0)
			abort();
		if ((o->kind == WITCH_OBJECT_STATIC || o->kind == WITCH_OBJECT_TLS) && !o->module)
			abort();
	}
	for (size_t i = 0; i < p->npair_objects; i++) {
		const struct witch_pair_object *q = &p->pair_objects[i];

		if (q->pair >= p->npairs || q->object >= p->nobjects || !(q->waste >= 0) ||
		    !(q->use >= 0))
			abort();
	}
	if (!p->sampler || strlen(witch_client_name(p->client)) < 4)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char sep[] = "\n%%\n";
	struct witch_profile p;
	const uint8_t *second = NULL;
	size_t first = size;
	char err[512];
	int rc;

	if (fds[0] < 0) {
		for (int i = 0; i < 2; i++) {
			fds[i] = memfd_create("witch-fuzz", 0);
			if (fds[i] < 0) {
				perror("fuzz: memfd_create");
				abort();
			}
			snprintf(paths[i], sizeof(paths[i]), "/proc/self/fd/%d", fds[i]);
		}
	}
	second = memmem(data, size, sep, sizeof(sep) - 1);
	if (second) {
		first = (size_t)(second - data) + 1;	/* keeps its newline */
		second += sizeof(sep) - 1;
	}
	put(0, data, first);
	if (second)
		put(1, second, size - (size_t)(second - data));

	witch_profile_init(&p);
	rc = witch_profile_read(&p, paths[0], err, sizeof(err));
	if (rc == 0 && second)
		rc = witch_profile_read(&p, paths[1], err, sizeof(err));
	if (rc != 0 && (rc >= 0 || err[0] == '\0'))
		abort();	/* failures are negative errnos with a message */
	/* A file that fails leaves the model as it was (but for -ENOMEM). */
	if (p.nfiles > 0 && rc != -ENOMEM)
		check_model(&p);
	witch_profile_free(&p);
	return 0;
}
