/* runtime: the process's one runtime state (see runtime.h).  Apart from
 * witch.c, whose constructor fills it, so the unit tests link the modules
 * without starting the profiler in themselves. */
#include "witch/runtime.h"

struct witch_runtime witch_rt;
