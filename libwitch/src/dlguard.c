/* dlguard: a library's code stays in the profile after dlclose.
 *
 * Interposed: dlclose.  Before the library goes, the profile records every
 * loaded module (profile_note_modules), so pcs sampled in it still map to
 * its file and symbols when the profile is written.
 */
#include "witch/profile.h"
#include "witch/export.h"

#include <dlfcn.h>

WITCH_EXPORT int dlclose(void *handle)
{
	int (*real)(void *) = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	profile_note_modules();
	return real ? real(handle) : -1;
}
