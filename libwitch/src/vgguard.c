/* vgguard: a program run under Valgrind (see vgguard.h). */
#include "witch/vgguard.h"

#include <link.h>
#include <string.h>

int vgguard_under_valgrind(void)
{
	/* Valgrind preloads its core into every program it runs, whatever the
	 * tool; the name alone tells, with no client request. */
	static const char core[] = "vgpreload_core-";
	for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next) {
		const char *base = m->l_name ? strrchr(m->l_name, '/') : NULL;
		base = base ? base + 1 : m->l_name;
		if (base && strncmp(base, core, sizeof(core) - 1) == 0)
			return 1;
	}
	return 0;
}
