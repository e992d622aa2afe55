/* deps_backend: how this build reaches Zydis and libunwind (deps.h).
 *
 * libwitch.so names neither library: deps_forward.c defines the functions
 * the runtime calls, each a jump through a pointer that deps_backend_bind
 * fills from dlopen's handles.  The unit tests' static library links both
 * as before: deps_linked.c binds nothing and says they are there.
 */
#ifndef WITCH_DEPS_BACKEND_H
#define WITCH_DEPS_BACKEND_H

/* 1 in libwitch.so (loaded by dlopen), 0 where linked. */
extern const int deps_backend_lazy;
/* Every name the forwarders need, from the two handles: 0, or -ENOENT
 * with the missing name in *missing. */
int deps_backend_bind(void *zydis, void *unwind, const char **missing);
/* A function of each library (an address in its text), NULL before
 * deps_backend_bind where lazy. */
const void *deps_backend_decoder_fn(void);
const void *deps_backend_unwinder_fn(void);

#endif
