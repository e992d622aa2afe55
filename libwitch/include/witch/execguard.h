/* execguard: a profile survives exec and _exit (interposes them).
 *
 * Interposed: _exit, _Exit, execve, execv, execvp, execvpe, execl, execlp, execle,
 * fexecve, execveat.  glibc's own exec functions call its internal
 * execve, past an execve interposer, so each is wrapped.  posix_spawn and
 * system() exec only in a new process: nothing to do there (the preload
 * carries on into the new image, which profiles itself).
 */
#ifndef WITCH_EXECGUARD_H
#define WITCH_EXECGUARD_H

/* before(file) runs in the process about to exec `file` (as given to the
 * call: a path, or a name execvp searches): the runtime writes what this
 * image measured, since exec runs no destructors.  It returns 1 if it
 * stopped profiling.  failed(stopped) runs if the exec returns (it
 * failed), with what before returned: to resume, and to undo what before
 * did in any case. */
void execguard_set_hooks(int (*before)(const char *file), void (*failed)(int stopped));

/* before_exit runs when the program ends with _exit or _Exit, which run no
 * destructors (forked workers, shells): the runtime writes the profile
 * there as at exit.  A vfork child's is not its own to write: the hook
 * tells by its pid. */
void execguard_set_exit_hook(void (*before_exit)(void));

/* Before a fork: the C library's exec and _exit found now, once, so that
 * a child that execs at once inherits them found (realfn.h). */
void execguard_prefork(void);

#endif
