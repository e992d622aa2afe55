/* realfn: the next definition, found once (see realfn.h). */
#include "witch/realfn.h"

#include <dlfcn.h>

void *realfn_next(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}
