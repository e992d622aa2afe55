/* objects_cases: one exact case per way witch-oracle finds an object
 * (tools/oracle/objects.c), checked by check_objects.py.
 *
 * Every case runs kill() on its object: each 8-byte word stored twice, then
 * loaded, so the dead client's waste on the object is exactly 8 bytes per
 * word (the first store, killed by the second) and its use as much:
 *
 *   regrow   a calloc'd block (site make_block) grown by realloc (site
 *            regrow): the block is the realloc call's     1000 words   8000
 *   gwords   a static array, by its symbol (size 512)       64 words    512
 *            named "gwords", no module: the test runs this program
 *            through a symlink, which names another file than the one
 *            mapped (python3 -> python3.11), and it is still the executable
 *   cwords   an exported array in a section of its own, as python3's
 *            _PyRuntime is in .PyRuntime (Valgrind names data in the
 *            sections it knows only; the runtime, in any loaded segment):
 *            by its .dynsym symbol (size 256)                32 words    256
 *   twords   a thread-local array: "tls"                    32 words    256
 *   loc      an array in frame_user's frame: "stack of frame_user",
 *            stored by kill(), called from frame_user       32 words    256
 *   mapping  an anonymous mmap (site map_site) moved and grown by mremap
 *            (site remap_site): one word a page of 32 pages  32 words    256
 *   freed    a block from site short_lived, freed: its stores, killed by
 *            a later block's at the same address, stay short_lived's;
 *            the later block's are long_lived's
 *                                                       128 words each 1024
 *            (short_lived's total is 2040, not 2048: glibc's free reads
 *            the block's second word, the tcache key, before it reuses it)
 * Build: -O2 -g -fno-inline -fno-tree-vectorize (no vector stores, each
 * function its own frame).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define NOTAIL(x) __asm__ volatile("" : "+r"(x))

uint64_t gwords[64];
/* Exported (the program links with -rdynamic) and in its own section. */
__attribute__((section(".cwords_section"), used, aligned(64))) uint64_t cwords[32] = { 1 };
__thread uint64_t twords[32];

__attribute__((noipa)) static uint64_t kill(volatile uint64_t *p, size_t n, size_t stride)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		p[i * stride] = i;
	for (size_t i = 0; i < n; i++)
		p[i * stride] = i + 1;
	for (size_t i = 0; i < n; i++)
		s += p[i * stride];
	return s;
}

__attribute__((noipa)) static uint64_t *make_block(void)
{
	uint64_t *p = calloc(10, 100);
	NOTAIL(p);
	return p;
}

__attribute__((noipa)) static uint64_t *regrow(uint64_t *p)
{
	p = realloc(p, 1000 * sizeof(uint64_t));
	NOTAIL(p);
	return p;
}

__attribute__((noipa)) static uint64_t frame_user(void)
{
	uint64_t loc[32];
	return kill(loc, 32, 1);
}

__attribute__((noipa)) static char *map_site(void)
{
	char *m = mmap(NULL, 16 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	NOTAIL(m);
	return m;
}

__attribute__((noipa)) static char *remap_site(char *m)
{
	m = mremap(m, 16 << 12, 32 << 12, MREMAP_MAYMOVE);
	NOTAIL(m);
	return m;
}

__attribute__((noipa)) static uint64_t *short_lived(void)
{
	uint64_t *p = malloc(128 * sizeof(uint64_t));
	NOTAIL(p);
	return p;
}

__attribute__((noipa)) static uint64_t *long_lived(void)
{
	uint64_t *p = malloc(128 * sizeof(uint64_t));
	NOTAIL(p);
	return p;
}

/* The freed case: short_lived's first stores are killed by its own second
 * ones (kill), and its last ones by long_lived's block's first: so
 * short_lived's waste is 2 x 1024 (less the word free reads, above) and
 * long_lived's 1024. */
__attribute__((noipa)) static uint64_t reuse(void)
{
	volatile uint64_t *p = short_lived();
	for (size_t i = 0; i < 128; i++)
		p[i] = i;
	for (size_t i = 0; i < 128; i++)
		p[i] = i + 1;
	free((void *)p);
	uint64_t *q = long_lived();
	if ((volatile uint64_t *)q != p)
		return 1ull << 40; /* not reused: check_objects.py says so */
	return kill(q, 128, 1);
}

int main(void)
{
	uint64_t s = 0;
	uint64_t *b = regrow(make_block());
	s += kill(b, 1000, 1);
	s += kill(gwords, 64, 1);
	s += kill(cwords, 32, 1);
	s += kill(twords, 32, 1);
	s += frame_user();
	char *m = remap_site(map_site());
	if (m == MAP_FAILED)
		return 2;
	s += kill((uint64_t *)m, 32, 4096 / sizeof(uint64_t));
	uint64_t r = reuse();
	printf("objects_cases %llu %s\n", (unsigned long long)s, r >> 40 ? "not-reused" : "reused");
	free(b);
	return 0;
}
