/* export: what the runtime shows the program.  The library is built with
 * hidden visibility; the interposed C library functions (bulk, dlguard,
 * execguard, fdguard, limitguard, perfguard, profdir, sandboxguard,
 * sigguard, thread) are exported with this, and nothing else. */
#ifndef WITCH_EXPORT_H
#define WITCH_EXPORT_H

#define WITCH_EXPORT __attribute__((visibility("default")))

#endif
