/* faultaround: one page a read fault, not 16, where only the runtime reads.
 *
 * A read fault in a file mapping maps the page and up to 15 neighbours
 * already in the page cache (the kernel's fault-around, 64 KiB), and all
 * of them count in the program's resident set.  The runtime's reads are
 * sparse: each unwind binary-searches a module's .eh_frame_hdr and reads
 * one FDE, so node's whole 593 KiB header and 1.5 of its 2.7 MiB of
 * .eh_frame came in for a run's few thousand unwinds (ehpages.h).
 *
 * The kernel maps one page a fault in a range registered with a
 * userfaultfd for write-protect tracking (it turns fault-around off there,
 * mm/memory.c: uffd_disable_fault_around).  With UFFD_FEATURE_WP_ASYNC
 * (Linux 6.7) that registration is allowed on any mapping, and the kernel
 * resolves any write-protect fault itself, so nothing ever waits on the
 * descriptor: it only holds the registration.  UFFD_USER_MODE_ONLY makes
 * it allowed without privilege (vm.unprivileged_userfaultfd = 0).
 *
 * Where the kernel is older, or a seccomp filter refuses userfaultfd,
 * faults map 16 pages as before; nothing else changes.  A program that
 * closes the descriptor ends the registrations the same way.
 *
 * Not in a signal handler; callers serialize (the runtime's start-up,
 * then ehpages' lock).
 */
#ifndef WITCH_FAULTAROUND_H
#define WITCH_FAULTAROUND_H

#include <stdint.h>

/* Once per process (and again in a fork child, lazily): 0, or a negative
 * errno when the kernel cannot (-ENOSYS, -EPERM, -EINVAL: no
 * UFFD_FEATURE_WP_ASYNC).  Later calls return the first one's answer. */
int faultaround_init(void);

/* 1 when this process's faultaround_init succeeded, else 0 (never tries). */
int faultaround_active(void);

/* Read faults in the whole pages around [at, at + size) map one page
 * each from now on.  0, -ENODEV when faultaround_init failed, -EBADF when
 * the program closed or replaced the descriptor, or the kernel's errno
 * (-EINVAL: a mapping there that cannot be registered, -EBUSY: the
 * program registered it with its own userfaultfd). */
int faultaround_off(const void *at, uint64_t size);

/* faultaround_off on each read-only PT_LOAD (text and constants) of the
 * module holding addr, for the libraries only the runtime runs (Zydis's
 * 421 KiB of decoder tables came in whole for a few hundred decodes):
 * now if faultaround_init has succeeded, else at each success of it (a
 * fork child's too); the pages that came in before are given back
 * (filepages.h).  0, -ENODEV when faultaround_init failed, -ENOSPC
 * past 4 modules, -ENOENT when no module holds addr, or faultaround_off's
 * error. */
int faultaround_add_module(const void *addr);

/* Registrations are the parent's alone (no UFFD_FEATURE_EVENT_FORK, whose
 * fork would wait for a reader of the parent's descriptor): the child's
 * mappings fault around again, and its descriptor still names the
 * parent's.  This closes that one; the next faultaround_init in the child
 * makes its own and registers faultaround_add_module's modules again; the
 * callers of faultaround_off register their ranges again. */
void faultaround_postfork_child(void);

#endif
