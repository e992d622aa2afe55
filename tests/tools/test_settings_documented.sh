#!/bin/sh
# test_settings_documented.sh WITCH SOURCE_DIR: every setting libwitch.so
# reads (config.c's config_names) is in `witch --help` and in README.md's
# Settings table, and neither names a setting it does not read.  Both had
# drifted: --help still listed WITCH_SPREAD, gone, and lacked WITCH_BUDGET,
# WITCH_FLUSH, WITCH_MEMORY_MB, WITCH_OBJECTS and WITCH_SIGTRAP.
witch=$1
src=$2
tmp=$(mktemp -d /tmp/witch-settings.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# the runtime's names, from the list config_from_env walks
sed -n '/^static const char \*const config_names\[\] = {/,/^};/p' "$src/libwitch/src/config.c" |
	grep -o '"WITCH_[A-Z_]*"' | tr -d '"' | sort -u >"$tmp/read"
[ -s "$tmp/read" ] || { echo "FAIL settings: no names found in config.c"; exit 1; }
"$witch" --help | grep -o '^  WITCH_[A-Z_]*' | tr -d ' ' | grep -vx WITCH_LIB | sort -u >"$tmp/help"
grep -o '^| `WITCH_[A-Z_]*`' "$src/README.md" | grep -o 'WITCH_[A-Z_]*' | sort -u >"$tmp/readme"
fail=0
for where in help readme; do
	if ! cmp -s "$tmp/read" "$tmp/$where"; then
		echo "FAIL settings: $where differs from what config.c reads (< read, > $where):"
		diff "$tmp/read" "$tmp/$where" | grep '^[<>]' | sed 's/^/    /'
		fail=1
	fi
done
[ $fail = 0 ] && echo "PASS settings: $(wc -l <"$tmp/read") settings in --help and README.md"
exit $fail
