/* Unit test of phdrs_in_code (phdrs.h): which addresses are code of a
 * loaded module, found without a system call.  The run ahead decodes in
 * place at such an address without asking the kernel whether its page is
 * mapped (emulate_code_readable); everything else is asked, so a wrong
 * "1" here could fault a handler run where no rescue covers it.
 * Table-driven, each row keeps its __LINE__.
 */
#include "witch/phdrs.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int some_data = 1;
static const char some_rodata[] = "not code";

enum where { THIS_CODE, LIBC_CODE, THIS_DATA, THIS_RODATA, HEAP, STACK, ANON_EXEC, NOWHERE };

static const struct {
	int line;
	enum where where;
	int want;
} rows[] = {
	{__LINE__, THIS_CODE, 1},   /* this binary's main */
	{__LINE__, LIBC_CODE, 1},   /* libc's write */
	{__LINE__, THIS_DATA, 0},   /* a module's writable data */
	{__LINE__, THIS_RODATA, 0}, /* ... and its read-only data */
	{__LINE__, HEAP, 0},
	{__LINE__, STACK, 0},
	{__LINE__, ANON_EXEC, 0},   /* a JIT's code: no module holds it */
	{__LINE__, NOWHERE, 0},     /* 0, the null page */
};

int main(void)
{
	int local = 0;
	void *heap = malloc(64);
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!heap || jit == MAP_FAILED) {
		FAIL(__LINE__, "setup failed");
		return 1;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t a = 0;
		switch (rows[i].where) {
		case THIS_CODE: a = (uint64_t)(uintptr_t)&main; break;
		case LIBC_CODE: a = (uint64_t)(uintptr_t)&write; break;
		case THIS_DATA: a = (uint64_t)(uintptr_t)&some_data; break;
		case THIS_RODATA: a = (uint64_t)(uintptr_t)some_rodata; break;
		case HEAP: a = (uint64_t)(uintptr_t)heap; break;
		case STACK: a = (uint64_t)(uintptr_t)&local; break;
		case ANON_EXEC: a = (uint64_t)(uintptr_t)jit; break;
		case NOWHERE: a = 0; break;
		}
		int got = phdrs_in_code(a);
		CHECK(rows[i].line, got == rows[i].want, "phdrs_in_code: %d, want %d", got, rows[i].want);
	}
	munmap(jit, 4096);
	free(heap);
	return check_failures != 0;
}
