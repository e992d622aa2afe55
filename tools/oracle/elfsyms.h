/* elfsyms: which of a function's aliases names it, as libdwfl (witch
 * report) and perf pick: the global symbol over a weak one.  glibc
 * exports most of its functions twice, a global __snprintf and a weak
 * snprintf at one address; Valgrind's own choice (snprintf) would name the
 * same frames differently on the two sides.  Read once per module from
 * its .dynsym (the aliases are the exported names).
 *
 *   void elfsyms_prefer(const HChar *obj, Addr vaddr, HChar *fn, SizeT size);
Bool elfsyms_data(const HChar *path, Off64T off, const HChar **name, Addr *sym_off, SizeT *size);
Bool elfsyms_plt(const HChar *path, Off64T off, HChar *fn, SizeT size);
 *          fn (Valgrind's name of the function at file address vaddr of
 *          module obj) becomes the global alias at the same address, if
 *          fn is a weak one and there is one; else it is left alone
 *
 *   Bool elfsyms_data(const HChar *path, Off64T off, const HChar **name,
 *                     Addr *sym_off, SizeT *size);
 *          the exported data symbol (.dynsym STT_OBJECT) holding file
 *          offset off of module path: its name, off's offset in it and its
 *          size.  Valgrind names data only in the sections it knows
 *          (.data, .bss, .rodata, ...); the runtime names any symbol in a
 *          loaded segment, python3's _PyRuntime in its own .PyRuntime
 *          section among them, so the oracle asks here where Valgrind
 *          finds nothing.
 *
 *   Bool elfsyms_plt(const HChar *path, Off64T off, HChar *fn, SizeT size);
 *          fn = "SYMBOL@plt" when file offset off of module path is a PLT
 *          stub (its start or its jump through the GOT slot), named by
 *          the slot's .rela.plt symbol, as `witch report` and perf name
 *          it; Valgrind has no name there.
 */
#ifndef ORACLE_ELFSYMS_H
#define ORACLE_ELFSYMS_H

#include "pub_tool_basics.h"

void elfsyms_prefer(const HChar *obj, Addr vaddr, HChar *fn, SizeT size);
Bool elfsyms_data(const HChar *path, Off64T off, const HChar **name, Addr *sym_off, SizeT *size);
Bool elfsyms_plt(const HChar *path, Off64T off, HChar *fn, SizeT size);

#endif
