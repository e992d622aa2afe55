/* sanguard: programs built with an intercepting sanitizer (see
 * sanguard.h). */
#include "witch/sanguard.h"
#include "witch/bulk.h"
#include "witch/export.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

/* Read by ASan at its start, before any constructor of the program's or
 * the runtime's; a definition in the executable comes first. */
WITCH_EXPORT const char *__asan_default_options(void)
{
	return "verify_asan_link_order=0";
}

/* A sanitizer's runtime as a library (GCC's, and clang's with
 * -shared-libsan), by its file name. */
static const char *sg_by_library(void)
{
	static const struct {
		const char *part, *name;
	} libs[] = {
		{"libasan.so", "AddressSanitizer"},        {"libclang_rt.asan", "AddressSanitizer"},
		{"libtsan.so", "ThreadSanitizer"},         {"libclang_rt.tsan", "ThreadSanitizer"},
		{"libclang_rt.msan", "MemorySanitizer"},   {"libhwasan.so", "HWAddressSanitizer"},
		{"libclang_rt.hwasan", "HWAddressSanitizer"},
	};
	for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next) {
		const char *base = m->l_name ? strrchr(m->l_name, '/') : NULL;
		base = base ? base + 1 : m->l_name;
		for (size_t i = 0; base && i < sizeof(libs) / sizeof(libs[0]); i++)
			if (strncmp(base, libs[i].part, strlen(libs[i].part)) == 0)
				return libs[i].name;
	}
	return NULL;
}

/* One linked into the executable (clang's default), which then defines
 * the memcpy every caller finds first, before this library's: named by
 * its start function. */
static const char *sg_in_executable(void)
{
	static const struct {
		const char *init, *name;
	} sans[] = {
		{"__asan_init", "AddressSanitizer"},
		{"__tsan_init", "ThreadSanitizer"},
		{"__msan_init", "MemorySanitizer"},
		{"__hwasan_init", "HWAddressSanitizer"},
	};
	/* memcpy's address as the loader bound it for this library: the first
	 * definition in the process, no lookup.  (A missing name costs dlsym
	 * ~0.1 ms, formatting its error: asked only of such an executable.) */
	void *(*volatile first)(void *, const void *, size_t) = memcpy;
	if ((const void *)first == bulk_own_memcpy())
		return NULL;
	for (size_t i = 0; i < sizeof(sans) / sizeof(sans[0]); i++)
		if (dlsym(RTLD_DEFAULT, sans[i].init))
			return sans[i].name;
	return NULL;
}

const char *sanguard_intercepting(void)
{
	const char *name = sg_by_library();
	return name ? name : sg_in_executable();
}
