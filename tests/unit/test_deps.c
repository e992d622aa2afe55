/* test_deps: which interrupted code a tick may load the decoder and
 * unwinder in (deps.h): never the C library's, the loader's, the vDSO's
 * or the runtime's own; the program's code and code in anonymous memory
 * (a JIT's) yes.  A first version took the C library's range for the
 * loader's (_dl_find_object is the C library's): a tick in ld.so's
 * _dl_fini, counting the modules under its lock, loaded them there, and
 * the count's assertion ended the program (exit 127).
 *
 * Each row: an address and whether a tick there may load.  The runtime's
 * text is set to this file's runtime_stand_in (deps_init reads it).
 */
#include "check.h"
#include "witch/context.h"
#include "witch/deps.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) static int program_code(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int runtime_stand_in(int x)
{
	return x * 5 + 2;
}

enum where { LIBC, LOADER, VDSO, RUNTIME, PROGRAM, ANON };

static uint64_t address_of(enum where w)
{
	static void *anon;
	switch (w) {
	case LIBC:
		return (uint64_t)(uintptr_t)&getpid;
	case LOADER: /* exported by ld.so, as _dl_find_object is not */
		return (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "__tls_get_addr");
	case VDSO:
		return getauxval(AT_SYSINFO_EHDR) + 0x100;
	case RUNTIME:
		return (uint64_t)(uintptr_t)&runtime_stand_in + 4;
	case PROGRAM:
		return (uint64_t)(uintptr_t)&program_code + 4;
	case ANON:
		if (!anon)
			anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return anon == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)anon + 64;
	}
	return 0;
}

static const struct row {
	int line;
	enum where where;
	int may_load;
} rows[] = {
	{__LINE__, LIBC, 0},
	{__LINE__, LOADER, 0},
	{__LINE__, VDSO, 0},
	{__LINE__, RUNTIME, 0},
	{__LINE__, PROGRAM, 1},
	{__LINE__, ANON, 1},
};

int main(void)
{
	uint64_t rt = (uint64_t)(uintptr_t)&runtime_stand_in;
	context_set_runtime_text(rt, rt + 16);
	int rc = deps_init();
	CHECK(__LINE__, rc == 0, "deps_init: %d", rc);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		uint64_t at = address_of(r->where);
		CHECK(r->line, at != 0, "no address for case %d", (int)r->where);
		int got = deps_pc_may_load(at);
		CHECK(r->line, got == r->may_load, "pc 0x%llx: may load %d, want %d",
		      (unsigned long long)at, got, r->may_load);
	}
	/* The runtime's own small copies (context.h CONTEXT_PROGRAM: this
	 * program's memcpy is the runtime's wrapper, linked in) hold nothing
	 * dlopen needs: with the runtime's text around them, a tick there may
	 * load, and one elsewhere in that text still may not. */
	uint64_t copy = (uint64_t)(uintptr_t)&memcpy;
	context_set_runtime_text(rt < copy ? rt : copy, (rt > copy ? rt : copy) + 64);
	CHECK(__LINE__, context_pc_program(copy + 4), "memcpy is not in the program's section");
	CHECK(__LINE__, deps_pc_may_load(copy + 4) == 1, "a tick in the wrapper's copy may not load");
	CHECK(__LINE__, deps_pc_may_load(rt + 4) == 0, "a tick in the runtime's code may load");
	(void)program_code(1);
	(void)runtime_stand_in(1);
	return check_failures != 0;
}
