/* realfn: the definition an interposer passes a call on to, found once.
 *
 * dlsym(RTLD_NEXT) takes the loader's lock and searches the modules in
 * order: found at every call, it was ~1% of an exec'ing fork child's
 * time before the exec (bench/results/startup.md, stop 70).  The slot
 * keeps what was found, and a fork child inherits it.
 */
#ifndef WITCH_REALFN_H
#define WITCH_REALFN_H

/* *slot, or dlsym(RTLD_NEXT, name) stored there first; NULL when there is
 * none.  Threads racing store the same value. */
void *realfn_next(void **slot, const char *name);

#endif
