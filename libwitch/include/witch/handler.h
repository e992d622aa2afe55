/* handler: what runs in the runtime's signal handlers.
 *
 * API
 *   void handler_init(const struct witch_config *cfg, const struct craft *craft);
 *   void handler_on_signal(int sig, siginfo_t *si, void *uc);   the runtime's RT signal
 *   int  handler_on_sigtrap(siginfo_t *si, void *uc);           1 if the trap was ours
 *
 * The path, top to bottom: sampler tick -> decode (single-step to the next
 * wanted access) -> calling context -> client -> reservoir -> watchpoint;
 * and watchpoint trap -> precise PC -> client verdict -> proportional
 * attribution (Witch 4.4.2) -> pair.  No malloc, stdio or locks.
 */
#ifndef WITCH_HANDLER_H
#define WITCH_HANDLER_H

#include <signal.h>

#include "witch/config.h"
#include "witch/craft.h"

void handler_init(const struct witch_config *cfg, const struct craft *craft);
void handler_on_signal(int sig, siginfo_t *si, void *uc);
int handler_on_sigtrap(siginfo_t *si, void *uc);

#endif
