/* densetab: a lock-free hash index whose records are kept densely.
 *
 * The process-wide tables of allocation sites and objects are sized for
 * their caps (4096 sites, 8192 objects), but most programs fill a few
 * hundred entries.  Open addressing over the records themselves spread
 * those few over every page of the table (records of 72-144 bytes: 0.5 MiB
 * each, all resident); here the hash slots hold 4-byte ids and the records
 * are taken in order, so the resident part is what is used.
 *
 * Ids run from 1 to cap.  An insert takes the next id, has the caller fill
 * its record, then publishes it in an empty slot by CAS; when another
 * thread published the same key first, that id is returned and the one
 * taken stays a hole (never live).  No waiting, no lock: safe in signal
 * handlers and across fork (a thread the fork left behind leaves a hole).
 */
#ifndef WITCH_DENSETAB_H
#define WITCH_DENSETAB_H

#include <stdint.h>

struct densetab {
	uint32_t *slots;  /* nslots ids, 0 empty */
	uint8_t *live;    /* cap + 1 bytes: the id was published */
	uint32_t nslots;  /* a power of two, at least 2 x cap */
	uint32_t cap;
	uint32_t taken;   /* ids handed out, holes included (atomic) */
};

/* Does the record of id hold the key arg stands for? */
typedef int (*densetab_match_fn)(uint32_t id, const void *arg);
/* Write the key arg stands for, and what goes with it, into id's record. */
typedef void (*densetab_fill_fn)(uint32_t id, const void *arg);

/* An index of nslots for ids 1..cap (mmap'd, pages touched as used).
 * 0 or -errno. */
int densetab_init(struct densetab *t, uint32_t cap, uint32_t nslots);

/* The live id whose record matches, probing from hash; 0 if none. */
uint32_t densetab_find(const struct densetab *t, uint64_t hash, densetab_match_fn match,
		       const void *arg);

/* As densetab_find, adding the key when it is not there: a new id whose
 * record fill writes before it is published.  0 when the table is full. */
uint32_t densetab_intern(struct densetab *t, uint64_t hash, densetab_match_fn match,
			 densetab_fill_fn fill, const void *arg);

/* Ids handed out so far: every live id is at most this. */
uint32_t densetab_taken(const struct densetab *t);

/* Was id published (a record, not a hole)? */
int densetab_is_live(const struct densetab *t, uint32_t id);

#endif
