/* elfdata: one ELF file's data symbols (STT_OBJECT, STT_TLS) and non-code
 * sections, read for datasym.h's index without malloc: pread into a
 * prefaulted scratch buffer (a loaded module's .dynsym is read where it is
 * loaded), the index into an arena of its own, never freed, so readers in
 * signal handlers may keep pointers into it.
 *
 * Not thread-safe: one writer at a time (datasym holds its lock), which may
 * be a signal handler reading a file's symbols (elfdata_file_symbols).
 */
#ifndef WITCH_ELFDATA_H
#define WITCH_ELFDATA_H

#include <stddef.h>
#include <stdint.h>

#define ELFDATA_LOADS 16 /* PT_LOADs a file may have to be indexed */

struct elfdata_sym {
	uint64_t value; /* static: link-time address; tls: offset in the TLS segment */
	uint64_t size;
	const char *name;
};

struct elfdata_sec {
	uint64_t addr; /* static: link-time address; tls: offset in the TLS segment */
	uint64_t size;
};

struct elfdata_load {
	uint64_t vaddr, memsz, flags;
};

/* Where a file's symbol table is, found when the file is indexed and read
 * at the first lookup that needs it (elfdata_file_symbols). */
struct elfdata_symsrc {
	const char *open_path; /* the file to read (the module's, or its debug file) */
	uint64_t dev, ino, fsize, mtime_ns; /* that file as found: a changed one is not read */
	uint64_t sym_off, sym_size, str_off, str_size;
	const void *msym, *mstr; /* non-NULL: in the loaded image, read there */
};

enum elfdata_syms_state { ELFDATA_SYMS_UNREAD, ELFDATA_SYMS_READ, ELFDATA_SYMS_NONE };

/* One file's index: never freed; immutable once a slot points to it but
 * for its symbols, filled in once (syms_state, published with release). */
struct elfdata_file {
	struct elfdata_file *next; /* the writer's cache list */
	uint64_t dev, ino, fsize, mtime_ns;
	const char *path;     /* as the caller named it (dl_iterate_phdr's) */
	const char *real;     /* the file itself, symlinks resolved: what reports call it */
	const struct elfdata_sym *syms, *tsyms; /* static and TLS symbols, sorted */
	const struct elfdata_sec *secs, *tsecs; /* non-code SHF_ALLOC sections, sorted */
	uint32_t nsyms, ntsyms, nsecs, ntsecs;
	uint32_t nloads;
	struct elfdata_load loads[ELFDATA_LOADS]; /* to check the loaded image is this file */
	uint32_t syms_state; /* enum elfdata_syms_state */
	struct elfdata_symsrc src;
};

/* The file open at fd, every symbolic link resolved (its /proc/self/fd
 * link): 0, or -errno (/proc not mounted, a name past size). */
int elfdata_fd_path(int fd, char *out, size_t size);

/* Reserve the arena (touched as used): 0 or -errno. */
int elfdata_init(size_t arena_bytes);
void elfdata_destroy(void);
/* Where the file is loaded (dl_iterate_phdr's view of it), if it is. */
struct elfdata_image {
	uint64_t base;
	const void *phdr; /* ElfW(Phdr)[phnum] */
	unsigned phnum;
	int stays; /* loaded at start: never unloaded, its image readable later */
};

/* The index of the file open at fd (cached by identity and path): its
 * PT_LOADs, sections, and where its symbols are (.symtab, else the
 * build-id debug file's, else .dynsym); NULL when unreadable, not ELF, or
 * past the arena.  open_path: how to open the file again for its symbols
 * (the main program's "/proc/self/exe"), NULL: by the file's own path,
 * every symbolic link resolved (a library loaded through a link that is
 * gone by then is still read).  With img (or NULL) the image of
 * it the caller keeps loaded meanwhile: a .dynsym is read there, not from
 * the file, when the image's PT_LOADs are the file's, at once unless the
 * image stays.
 *
 * The symbols wait for elfdata_file_symbols: a process that never looks
 * up a module's data never reads its table (libc's debug symbols were
 * ~2 ms of every process's start here). */
const struct elfdata_file *elfdata_file_get(int fd, const char *path, const char *open_path,
					    const struct elfdata_image *img);
/* Reads f's symbols if not yet (async-signal-safe: open, pread, mmap;
 * the writer's lock held, as for elfdata_file_get); 0 once they are in
 * (none is not an error), or -errno (f gets none).  Gives the scratch
 * buffer back itself. */
int elfdata_file_symbols(const struct elfdata_file *f);
/* Whether f's symbols were read (or found absent): acquire, for readers. */
int elfdata_file_symbols_done(const struct elfdata_file *f);
/* Give back the scratch buffer (after a walk over the modules). */
void elfdata_scratch_release(void);
/* in_image: of the files, those whose .dynsym was read where it was loaded. */
void elfdata_stats(uint64_t *files, uint64_t *symbols, uint64_t *bytes, uint64_t *in_image);

#endif
