/* dlguard: a library's code stays in the profile after dlclose.
 *
 * Interposed: dlclose.  Before the library goes, the profile records every
 * loaded module (profile_note_modules), so pcs sampled in it still map to
 * its file and symbols when the profile is written, and the unwinders'
 * module snapshot (phdrs.h) is retaken around it; after it, the data
 * symbol index (datasym.h) marks it unloaded.
 */
#include "witch/datasym.h"
#include "witch/phdrs.h"
#include "witch/deps.h"
#include "witch/profile.h"
#include "witch/runtime.h"
#include "witch/export.h"

#include <dlfcn.h>

WITCH_EXPORT int dlclose(void *handle)
{
	int (*real)(void *) = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	if (witch_rt.sealed) /* past a sandbox: no file of the module's is read */
		return real ? real(handle) : -1;
	profile_note_modules();
	/* No unwind may read the module's tables while it is unmapped. */
	phdrs_close_begin();
	deps_loader_enter(); /* its destructors run under the loader's lock (deps.h) */
	int rc = real ? real(handle) : -1;
	deps_loader_leave();
	phdrs_close_end();
	/* The data index marks the library's slot dead now, not at the next walk. */
	datasym_refresh();
	return rc;
}
