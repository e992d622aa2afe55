/* heap: the program's live heap blocks and their allocation sites (docs/objects.md). */
#ifndef WITCH_HEAP_H
#define WITCH_HEAP_H
#include <stdint.h>
#define HEAP_SITE_MAX_DEPTH 16
int heap_init(void);
int heap_lookup(uint64_t addr, uint32_t *site, uint64_t *start, uint64_t *size);
int heap_site_path(uint32_t site, uint64_t *pcs, int max);
struct heap_stats { uint64_t blocks_tracked, blocks_untracked, sites, sites_dropped, bytes_reserved; };
void heap_get_stats(struct heap_stats *s);
void heap_prefork(void);
void heap_postfork_parent(void);
void heap_postfork_child(void);
#endif
