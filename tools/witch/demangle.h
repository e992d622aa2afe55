/*
 * demangle: the name people read for a symbol as a binary spells it.
 * C++ (Itanium ABI, as g++ and clang emit it) and Rust (legacy and v0)
 * names go through libiberty's cplus_demangle, with parameters and
 * qualifiers (DMGL_PARAMS | DMGL_ANSI) and the style left to libiberty's
 * automatic choice, which tries Rust first and then C++ (DMGL_RUST alone
 * would leave C++ names mangled). Clone suffixes stay, as
 * "[clone .constprop.0]".
 */
#ifndef WITCH_TOOL_DEMANGLE_H
#define WITCH_TOOL_DEMANGLE_H

/* A malloc'd demangled copy of sym, or NULL when sym is not a mangled
 * name (a C symbol) or memory ran out: the caller then shows sym as is. */
char *witch_demangle(const char *sym);

#endif
