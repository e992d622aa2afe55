/* STUB until the heap branch merges. */
#include "witch/heap.h"
#include <errno.h>
#include <string.h>
int heap_init(void) { return 0; }
int heap_lookup(uint64_t addr, uint32_t *site, uint64_t *start, uint64_t *size) { (void)addr; (void)site; (void)start; (void)size; return -ENOENT; }
int heap_site_path(uint32_t site, uint64_t *pcs, int max) { (void)site; (void)pcs; (void)max; return -ENOENT; }
void heap_get_stats(struct heap_stats *s) { memset(s, 0, sizeof(*s)); }
void heap_prefork(void) {}
void heap_postfork_parent(void) {}
void heap_postfork_child(void) {}
