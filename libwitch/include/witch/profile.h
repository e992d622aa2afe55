/* profile: the process's measurements and the profile file (docs/profile-format.md).
 */
#ifndef WITCH_PROFILE_H
#define WITCH_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "witch/cct.h"
#include "witch/config.h"
#include "witch/pairtab.h"
#include "witch/stats.h"

int profile_init(const char *sampler, const char *sampler_why, uint64_t period);
/* Add one thread's pairs (re-rooting their paths in the process tree) and
 * counters.  Takes the profile lock: never from a signal handler. */
int profile_fold(struct cct *cct, struct pairtab *pairs, const struct witch_stats *st);
/* Write the profile whole: temp file in the same directory, then rename, so a
 * reader never sees half a file and a symlink at the target is replaced, not
 * followed.  On failure one `witch:` line. */
int profile_write(void);
/* The same, to the path with suffix appended (".exec": see witch.c). */
int profile_write_suffixed(const char *suffix);
/* Whether the threads folded so far took any tick or sample: a forked
 * shell that execs at once took none, and its profile would say nothing
 * the exec'd image's does not. */
int profile_has_ticks(void);
/* The path this process's profile gets if its executable is named exe
 * (basename; NULL: its own).  0 or -ENAMETOOLONG. */
int profile_path(const char *exe, char *path, size_t size);
/* The path a new image exec'd by this process as exe (basename) writes:
 * the WITCH_OUTPUT it will read, expanded with this pid.  0 or
 * -ENAMETOOLONG. */
int profile_path_after_exec(const char *exe, char *path, size_t size);
/* Every process started below this one names its profile apart, in the
 * same place: the environment gets this process's pattern (made absolute
 * by profile_anchor_output), with ".%p" added where it has no %p (an
 * exec'd image, whose own pid starts its profile, wrote the pattern's
 * very name: two programs a shell pipeline ran, and then the shell,
 * replaced each other's profiles).  Nothing is set where the environment
 * says so already.  This process's own name is unchanged.  0 or -errno. */
int profile_name_descendants(void);
/* A relative pattern names a file in the directory the process tree began
 * in, as `witch run` does: not in the directory each process happens to
 * exit from (a script's `cd tmp; prog; cd ..; rmdir tmp` failed on the
 * profile left in tmp, and a daemon's went to /).  Rewrites pattern, of
 * size bytes, against the current directory.  0 (also for an absolute
 * one), or -errno from getcwd, or -ENAMETOOLONG (pattern unchanged). */
int profile_anchor_output(char *pattern, size_t size);
/* pattern under dir, '%' in dir doubled so it reads as no conversion; an
 * absolute pattern as it is.  0 or -ENAMETOOLONG. */
int profile_anchor_pattern(const char *pattern, const char *dir, char *out, size_t size);
/* %p pid, %e executable basename, %% percent; add_pid appends ".<pid>" when
 * the pattern has no %p (a forked child must not overwrite its parent's
 * profile).  0 or -ENAMETOOLONG. */
int profile_expand_path(const char *pattern, pid_t pid, const char *exe, int add_pid,
			char *out, size_t size);
/* Remember the modules loaded now (before a dlclose), so the profile still
 * maps pcs in them. */
void profile_note_modules(void);
/* The runtime's fixed cost, written as `stat cost_startup_ns`: the
 * constructor's CPU time (from start_cpu_ns, cost_thread_cpu_ns() when it
 * began) and the exit's, from profile_exit_begins to the write. */
void profile_note_startup(double start_cpu_ns);
void profile_exit_begins(void);
/* The child of fork starts with an empty profile of its own. */
void profile_prefork(void);
void profile_postfork_parent(void);
void profile_postfork_child(void);
/* Just before the program's chroot (profdir.h): the profile's directory
 * held, and the executable's path read, while /proc is there. */
void profile_before_chroot(void);

#endif

