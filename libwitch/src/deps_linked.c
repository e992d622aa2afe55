/* deps_linked: Zydis and libunwind linked in (the unit tests' static
 * library): nothing to bind (deps_backend.h). */
#define UNW_LOCAL_ONLY
#include "witch/deps_backend.h"

#include <Zydis/Zydis.h>
#include <libunwind.h>
#include <stddef.h>

const int deps_backend_lazy = 0;

int deps_backend_bind(void *zydis, void *unwind, const char **missing)
{
	(void)zydis;
	(void)unwind;
	*missing = NULL;
	return 0;
}

const void *deps_backend_decoder_fn(void)
{
	return (const void *)&ZydisDecoderDecodeFull;
}

const void *deps_backend_unwinder_fn(void)
{
	return (const void *)&unw_step;
}
