#!/bin/sh
# test_runtime_closes.sh SOURCE_DIR: the runtime closes descriptors through
# fdguard_close only.  Under LD_PRELOAD its plain close() is the program's
# (fdguard.c interposes it), which keeps the runtime's own descriptors open:
# a close() of one of them in the runtime would leak it, quietly.  Lines
# inside comments (starting with " *" or "/*") are not calls.
src=$1/libwitch/src
[ -d "$src" ] || { echo "FAIL: no $src"; exit 1; }
hits=$(grep -nE '(^|[^_[:alnum:].>])close[[:space:]]*\(' "$src"/*.c "$src"/*.h 2>/dev/null |
	grep -v '^[^:]*/fdguard\.c:' | grep -vE '^[^:]*:[0-9]+:[[:space:]]*(\*|/\*)')
if [ -n "$hits" ]; then
	echo "FAIL: close() in the runtime, where fdguard_close belongs:"
	echo "$hits"
	exit 1
fi
echo "PASS runtime_closes"
