/* datasym: data symbols of the loaded modules, for naming static and TLS objects (docs/objects.md). */
#ifndef WITCH_DATASYM_H
#define WITCH_DATASYM_H
#include <stdint.h>
struct datasym_hit {
	uint64_t start;
	uint64_t size;
	const char *name;
	const char *module;
};
int datasym_init(void);
void datasym_refresh(void);
int datasym_static(uint64_t addr, struct datasym_hit *hit);
int datasym_tls(uint64_t addr, uint64_t tp, struct datasym_hit *hit);
void datasym_prefork(void);
void datasym_postfork_parent(void);
void datasym_postfork_child(void);
#endif
