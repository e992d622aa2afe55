/*
 * A stand-in for libwitch.so in the `witch run` tests: from a constructor,
 * it writes a small valid profile to $WITCH_OUTPUT (expanding %p, %e and
 * %% itself, temp file + rename like the runtime) whose two contexts are
 * the functions witch_fake_dead_store and witch_fake_killer of this very
 * library, so the report of `witch run` must symbolize them.
 *
 * Environment: WITCH_OUTPUT (required), WITCH_CLIENT (default dead),
 * FAKE_WITCH_SKIP=1 to write nothing (the "no profile" case).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline, used)) void witch_fake_dead_store(volatile int *p)
{
	*p = 1;
}

__attribute__((noinline, used)) void witch_fake_killer(volatile int *p)
{
	*p = 2;
}

struct self {
	uintptr_t addr;		/* an address inside this library */
	uintptr_t base, start, end;
	int found;
};

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self *s = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;

			if (a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
		}
	}
	if (s->addr >= lo && s->addr < hi) {
		s->base = info->dlpi_addr;
		s->start = lo;
		s->end = hi;
		s->found = 1;
		return 1;
	}
	return 0;
}

static void expand(const char *pat, char *out, size_t len)
{
	char exe[4096], num[32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *ename;
	size_t o = 0;

	exe[n > 0 ? n : 0] = '\0';
	ename = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	snprintf(num, sizeof(num), "%ld", (long)getpid());
	for (; *pat && o + 1 < len; pat++) {
		const char *ins = NULL;

		if (pat[0] == '%' && pat[1] == 'p')
			ins = num;
		else if (pat[0] == '%' && pat[1] == 'e')
			ins = ename;
		else if (pat[0] == '%' && pat[1] == '%')
			ins = "%";
		if (ins) {
			for (; *ins && o + 1 < len; ins++)
				out[o++] = *ins;
			pat++;
		} else {
			out[o++] = *pat;
		}
	}
	out[o] = '\0';
}

__attribute__((constructor)) static void fake_witch_init(void)
{
	const char *pat = getenv("WITCH_OUTPUT");
	const char *client = getenv("WITCH_CLIENT");
	char path[4096], tmp[4200], exe[4096];
	struct self s = { 0 };
	Dl_info di;
	FILE *f;
	ssize_t n;

	if (!pat || getenv("FAKE_WITCH_SKIP"))
		return;
	if (!client || !*client)
		client = "dead";
	s.addr = (uintptr_t)&witch_fake_dead_store;
	if (!dladdr((void *)s.addr, &di) || !dl_iterate_phdr(find_self, &s) ||
	    !s.found)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	expand(pat, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "witch-profile 1\nclient %s\nsampler soft\nperiod 1000000\n",
		client);
	fprintf(f, "stat samples 10\nstat watchpoints_armed 4\nstat traps 3\n");
	fprintf(f, "pid %ld\nexe %s\n", (long)getpid(), exe);
	fprintf(f, "module 1 %#lx %#lx %#lx - %s\n", (unsigned long)s.base,
		(unsigned long)s.start, (unsigned long)s.end, di.dli_fname);
	fprintf(f, "node 1 0 %#lx\n",
		(unsigned long)(uintptr_t)&witch_fake_dead_store);
	fprintf(f, "node 2 0 %#lx\n",
		(unsigned long)(uintptr_t)&witch_fake_killer);
	fprintf(f, "pair 1 2 64 16 3\nend\n");
	if (fclose(f) == 0)
		rename(tmp, path);
}
