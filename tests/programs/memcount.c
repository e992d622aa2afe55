/* memcount: a preload after libwitch.so that counts what reaches the C
 * library's memset and memmove/memcpy (bulk_pieces.sh).  Each call: count
 * it and its size, then the C library's own (found at the first call;
 * before that a byte loop, which dlsym's own calls may need). */

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

typedef void *(*set_fn)(void *, int, size_t);
typedef void *(*move_fn)(void *, const void *, size_t);

struct memcount {
	uint64_t calls, largest;
};
static struct memcount set_count, move_count;
static set_fn real_set;
static move_fn real_cpy, real_move;
static int resolving;

static void resolve(void)
{
	if (real_set || resolving)
		return;
	resolving = 1;
	real_cpy = (move_fn)dlsym(RTLD_NEXT, "memcpy");
	real_move = (move_fn)dlsym(RTLD_NEXT, "memmove");
	real_set = (set_fn)dlsym(RTLD_NEXT, "memset");
	resolving = 0;
}

static void note(struct memcount *c, size_t n)
{
	c->calls++;
	if (n > c->largest)
		c->largest = n;
}

/* What the program reads and clears between its steps. */
__attribute__((visibility("default"))) void memcount_take(uint64_t *set_calls,
							  uint64_t *set_largest,
							  uint64_t *move_calls,
							  uint64_t *move_largest)
{
	*set_calls = set_count.calls;
	*set_largest = set_count.largest;
	*move_calls = move_count.calls;
	*move_largest = move_count.largest;
	set_count.calls = set_count.largest = move_count.calls = move_count.largest = 0;
}

__attribute__((visibility("default"))) void *memset(void *d, int c, size_t n)
{
	resolve();
	note(&set_count, n);
	if (real_set)
		return real_set(d, c, n);
	for (size_t i = 0; i < n; i++)
		((volatile unsigned char *)d)[i] = (unsigned char)c;
	return d;
}

static void *move_with(move_fn fn, void *d, const void *s, size_t n)
{
	note(&move_count, n);
	if (fn)
		return fn(d, s, n);
	unsigned char *dd = d;
	const unsigned char *ss = s;
	if (dd < ss)
		for (size_t i = 0; i < n; i++)
			dd[i] = ss[i];
	else
		for (size_t i = n; i-- > 0;)
			dd[i] = ss[i];
	return d;
}

__attribute__((visibility("default"))) void *memcpy(void *d, const void *s, size_t n)
{
	resolve();
	return move_with(real_cpy, d, s, n);
}

__attribute__((visibility("default"))) void *memmove(void *d, const void *s, size_t n)
{
	resolve();
	return move_with(real_move, d, s, n);
}
