/* demangle: C++ and Rust symbol names for people; see demangle.h. */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stddef.h>

char *witch_demangle(const char *sym)
{
	/* Only names in a mangling scheme start like this: _Z (Itanium,
	 * and Rust's legacy scheme inside it) or _R (Rust v0). Anything
	 * else is a C name, and libiberty need not see it. */
	if (!sym || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return NULL;
	return cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
