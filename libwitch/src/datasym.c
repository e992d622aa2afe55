/* STUB until the datasym branch merges. */
#include "witch/datasym.h"
#include <errno.h>
int datasym_init(void) { return 0; }
void datasym_refresh(void) {}
int datasym_static(uint64_t addr, struct datasym_hit *hit) { (void)addr; (void)hit; return -ENOENT; }
int datasym_tls(uint64_t addr, uint64_t tp, struct datasym_hit *hit) { (void)addr; (void)tp; (void)hit; return -ENOENT; }
void datasym_prefork(void) {}
void datasym_postfork_parent(void) {}
void datasym_postfork_child(void) {}
