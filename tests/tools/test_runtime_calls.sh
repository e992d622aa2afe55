#!/bin/sh
# test_runtime_calls.sh SOURCE_DIR: the runtime makes the calls it
# interposes for the program through its own path, never the interposer.
# Under LD_PRELOAD a plain call is the program's:
#   close()            fdguard.c keeps the runtime's descriptors open: a
#                      close of one in the runtime would leak it, quietly;
#                      fdguard_close belongs there
#   pthread_sigmask(), sigguard.c leaves the runtime's signal open under a
#   sigprocmask()      mask of every real-time signal: the runtime's own
#                      blocks (the flusher's, a handler's) would not hold;
#                      sigguard_mask belongs there
# Each row: the call, the file that may make it (its interposer).  Lines
# inside comments (starting with " *" or "/*") are not calls.
src=$1/libwitch/src
[ -d "$src" ] || { echo "FAIL: no $src"; exit 1; }
fails=0
while read -r call own want; do
	hits=$(grep -nE "(^|[^_[:alnum:].>])$call[[:space:]]*\\(" "$src"/*.c "$src"/*.h 2>/dev/null |
		grep -v "^[^:]*/$own:" | grep -vE '^[^:]*:[0-9]+:[[:space:]]*(\*|/\*)')
	if [ -n "$hits" ]; then
		echo "FAIL: $call() in the runtime, where $want belongs:"
		echo "$hits"
		fails=$((fails + 1))
	else
		echo "ok   $call: through $want only"
	fi
done <<'ROWS'
close fdguard.c fdguard_close
pthread_sigmask sigguard.c sigguard_mask
sigprocmask sigguard.c sigguard_mask
ROWS
[ $fails = 0 ] && { echo "PASS runtime_calls"; exit 0; }
exit 1
