/* datasym: data symbols of the loaded modules, for naming static and TLS
 * objects (docs/objects.md).
 *
 * Index (datasym_init, datasym_refresh, datasym_refresh_due; never in a
 * signal handler): for each module dl_iterate_phdr lists (the vDSO and
 * modules without a file skipped), the ELF file is read (pread: a new
 * mapping's page faults cost more than the copy) and parsed by hand: its
 * program headers (checked against the loaded ones: a file replaced since
 * the load gives no names), its sections and one symbol table: .symtab
 * when the file has it, else the .symtab of its separate debug file
 * (/usr/lib/debug/.build-id/xx/yyyy.debug, e.g. libc6-dbg's), else .dynsym
 * (read where the loader mapped it, elfdata.h).  Lazily: a module loaded
 * at start is read at the first lookup in its bounds (its PT_LOADs'), and
 * any module's symbol table at the first lookup in its data
 * (elfdata_file_symbols): most processes never sample most modules' data,
 * and reading them was most of every process's start-up (libc's debug
 * symbols ~2 ms, the files' headers and sections ~0.4-0.9 ms here).  A
 * module dlopen'd later is read by the walk that finds it, while the
 * loader holds it.
 * Hand-parsed, not libelf: ~150 lines, and libwitch.so, preloaded into
 * every program, gains no library and calls no malloc at all (libelf
 * mallocs, and the heap module interposes malloc).
 *
 * Kept: STT_OBJECT and STT_TLS symbols of a defined section, sorted, in
 * memory this module maps.  Overlaps keep the outer symbol (an array, not
 * an alias placed inside it); aliases of one object keep one name (fewest
 * leading underscores, then global over weak over local, then shortest).
 * Zero-size symbols are points: they name their address only, and only
 * where no sized symbol does.  The strings are copied (the file is closed),
 * less any symbol version binutils appends in .symtab ("environ@GLIBC_2.2.5"
 * of a copy relocation is "environ").
 *
 * Memory: one 16 MiB MAP_NORESERVE arena for symbols, names and paths
 * (only the pages used cost memory: ~70 KiB for a C program with libc's
 * debug symbols, ~600 KiB for python3 with 60 modules), and 4096 module
 * slots (224 bytes each, touched as used).  A module whose index does not
 * fit, or that finds no free slot, is left unindexed and counted
 * (datasym_stats); its addresses give -ENOENT.  A file's index is built
 * once and shared by every load of it (dlopen, dlclose, dlopen again).
 * While a walk reads files it holds a prefaulted scratch buffer the size
 * of the largest symbol table read (its strings and data symbols too),
 * unmapped when the walk ends.
 *
 * Cost (this project's VM): reading the symbols was ~2.5 ms CPU in a C
 * program (most of it libc's 15000-entry debug symbol table), ~5 ms in
 * python3 at start, ~7 ms with 60 modules imported; now datasym_init
 * reads no file and each module's first lookup pays for it (the
 * handler's time, which the budget counts).  A refresh with no
 * module loaded or unloaded since ~1 us (the loader's add/sub counts
 * compared).
 *
 * Lookups are lock-free and async-signal-safe: a lookup reads only this
 * module's memory, never a module's.  A new module's slot is filled, then
 * published by a release store of the slot count.  dlclose marks a
 * module's slot dead (dlguard calls datasym_refresh after the real
 * dlclose; between the two, an address there still names the module's
 * symbol); a later load may reuse a dead slot, under a per-slot sequence
 * count: a lookup that sees the slot change under it skips it (never
 * spins, so a handler that interrupts the writer in its own thread goes
 * on).  File indexes, names and paths are never freed: a hit's strings
 * stay valid for the process's life (the profile writer prints them).
 *
 * Static TLS (x86-64 variant II): each module's block sits at a fixed
 * offset below the thread pointer, the same in every thread.  The offset
 * is dlpi_tls_data - tp, if that block lies in the static area below tp
 * (bound: the TLS segments of the modules loaded at datasym_init, plus
 * 64 KiB), not in a malloc'd one.  Modules indexed by datasym_init (run
 * from the constructor: loaded at start) are looked at in the calling
 * thread.  A module with TLS found by a later walk is looked at in a new
 * thread the walk starts and joins (signals blocked, the C library's
 * pthread_create, not the runtime's): the indexing thread's view of a
 * module loaded since it started is not current (dlpi_tls_data NULL),
 * and a new thread gets, at creation, exactly the static blocks: those of
 * modules dlopen'd with initial-exec TLS.  Other dlopen'd modules' TLS is
 * dynamic (malloc'd blocks, the heap module's): -ENOENT here.
 */
#ifndef WITCH_DATASYM_H
#define WITCH_DATASYM_H

#include <stdint.h>

struct datasym_hit {
	uint64_t start;        /* static: run-time address of the symbol (or of the section when name is NULL); tls: offset of the symbol in its module's TLS segment */
	uint64_t size;         /* symbol size (0 when unknown) */
	const char *name;      /* symbol name (mangled, as in the ELF file), NULL when no symbol holds the address */
	const char *module;    /* the module's file, symlinks resolved (libsqlite3.so.0.8.6, not
	                          the soname link dl_iterate_phdr names; frames are named so too) */
};

struct datasym_stats {
	uint64_t modules;      /* modules indexed (live or dead), loads counted */
	uint64_t unindexed;    /* modules left out: arena or slots full, file unreadable or not ELF */
	uint64_t files;        /* distinct files indexed */
	uint64_t symbols;      /* symbols kept, over all files */
	uint64_t bytes;        /* arena bytes used */
	uint64_t in_image;     /* files whose .dynsym was read in the loaded image, not the file */
};

/* From the runtime constructor: preallocate, index the modules loaded
 * now.  0 or -errno. */
int datasym_init(void);
/* Index modules loaded since, mark those unloaded dead.  Cheap when no
 * module came or went (the loader's add/sub counts are compared).  Not in
 * a signal handler. */
void datasym_refresh(void);
/* datasym_refresh from the program's allocations (heap.c), at most every
 * DATASYM_DUE_NS: where no flusher thread refreshes (a program with no
 * threads, flush.h), a library dlopen'd since is named within a quarter
 * second of its first allocation after that.  Never waits for the index's
 * lock, and starts no thread: a new module's static TLS is probed at the
 * next datasym_refresh. */
#define DATASYM_DUE_NS 250000000ull
void datasym_refresh_due(void);
/* Static data (.data, .bss, .rodata and the like: any PT_LOAD that is not
 * executable, and the non-code sections of one that is): 0 and *hit when
 * addr is in some module's data; -ENOENT otherwise; -EAGAIN while another
 * thread reads the module's symbols (this lookup's object is unknown).
 * Async-signal-safe; the first lookup in a module reads its symbol table
 * under the index's lock, tried, never waited for. */
int datasym_static(uint64_t addr, struct datasym_hit *hit);
/* Static TLS: addr in the calling thread's static TLS block; tp is the
 * thread pointer (fs base).  0 and *hit, -ENOENT or -EAGAIN, as
 * datasym_static. */
int datasym_tls(uint64_t addr, uint64_t tp, struct datasym_hit *hit);
/* Counts so far (for the profile's stat lines).  Async-signal-safe. */
void datasym_stats(struct datasym_stats *st);
/* Fork: no index is half-built in the child. */
void datasym_prefork(void);
void datasym_postfork_parent(void);
void datasym_postfork_child(void);

#endif
