# table.sh: the end of a row and of the table, for the table-driven shell
# tests (sourced: `. "$(dirname "$0")/table.sh"`), and a row that runs a
# program natively and profiled (row_profiled, below).
#
#   row_end LABEL BAD DETAIL   BAD empty: "ok   [LABEL]: DETAIL";
#                              else "FAIL [LABEL]:BAD", counted, status 1
#                              (the caller may print more of what went wrong)
#   table_end NAME ROWS        "PASS NAME" and exit 0 if no row failed,
#                              else "FAIL NAME: n of ROWS rows" and exit 1
#   table_begin, row_profiled, row_limited  below
table_fails=0

# table_begin BUILD_DIR NAME: sets build (absolute), here (tests/programs)
# and tmp (a directory of the test's, removed at exit), and leaves no
# LD_PRELOAD or WITCH_* setting of the caller's in the environment.
table_begin() {
	build=$(cd "$1" && pwd) || exit 1
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	tmp=$(mktemp -d "/tmp/witch-$2.XXXXXX") || exit 1
	trap 'rm -rf "$tmp"' EXIT
	unset LD_PRELOAD
	for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
}

# row_stayed_out PATTERN: for a row where the runtime must not start:
# one witch: line in $tmp/err, matching PATTERN (grep), and no profile in
# $tmp/p; what is wrong is added to bad.
row_stayed_out() {
	[ "$(grep -c '^witch: ' "$tmp/err")" = 1 ] && grep -q "$1" "$tmp/err" ||
		bad="$bad witch: lines: $(grep '^witch: ' "$tmp/err" | head -c 300)"
	local profiles
	profiles=$(ls "$tmp/p" | grep -c '\.prof$')
	[ "$profiles" = 0 ] || bad="$bad $profiles profile(s)"
}

row_end() {
	if [ -n "$2" ]; then
		echo "FAIL [$1]:$2"
		table_fails=$((table_fails + 1))
		return 1
	fi
	echo "ok   [$1]: $3"
}

table_end() {
	[ "$table_fails" = 0 ] && { echo "PASS $1"; exit 0; }
	echo "FAIL $1: $table_fails of $2 rows"
	exit 1
}

# row_profiled PROG ARGS...: for the rows that run one program natively
# and profiled and read its profiles.  Runs PROG ARGS natively, then under
# $build/libwitch.so with the row_env array's settings (the caller's: e.g.
# WITCH_WATCHPOINTS=0), WITCH_RATE=2000 and WITCH_SEED=7, profiles in
# $tmp/p; sets row_bad to what went wrong: stdout and status unlike
# native's (unless row_own_stdout=1: the caller compares them), anything on stderr, not row_profiles profiles (if set), and
# check_report.py's failures on the profiles' report with the row_checks
# array's arguments.  Needs build, tmp and here (tests/programs) set.
row_profiled() {
	rm -rf "$tmp/p" && mkdir "$tmp/p" || exit 1
	"$@" >"$tmp/native.out" 2>&1
	echo "status $?" >>"$tmp/native.out"
	env LD_PRELOAD="$build/libwitch.so" "${row_env[@]}" WITCH_RATE=2000 WITCH_SEED=7 \
		WITCH_OUTPUT="$tmp/p/s-%p.prof" "$@" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	row_bad=""
	[ "${row_own_stdout-0}" = 1 ] || cmp -s "$tmp/native.out" "$tmp/out" ||
		row_bad="$row_bad stdout/status: $(tr '\n' ' ' <"$tmp/out")(native: $(tr '\n' ' ' <"$tmp/native.out"))"
	[ -s "$tmp/err" ] && row_bad="$row_bad stderr: $(head -c 300 "$tmp/err")"
	local profiles=("$tmp"/p/*.prof)
	if [ ! -f "${profiles[0]}" ] ||
		{ [ -n "${row_profiles-}" ] && [ ${#profiles[@]} != "$row_profiles" ]; }; then
		row_bad="$row_bad profiles: $(ls "$tmp/p" | tr '\n' ' ')"
	elif ! "$build/witch" report --json "${profiles[@]}" >"$tmp/r.json" 2>"$tmp/r.err"; then
		row_bad="$row_bad witch report: $(head -c 200 "$tmp/r.err")"
	elif ! python3 "$here/check_report.py" "$tmp/r.json" --client dead "${row_checks[@]}" \
		>"$tmp/check" 2>&1; then
		row_bad="$row_bad $(grep -h FAIL "$tmp/check" | head -n 3 | tr '\n' ' ')"
	fi
}

# row_limited LIMIT PROG ARGS...: for the rows of a program under a limit
# that bash sets (LIMIT: a ulimit command) before it execs PROG ARGS, run
# natively and under $build/libwitch.so (WITCH_WATCHPOINTS=0, the row_env
# array's settings, profiles $tmp/p/r-%e-%p.prof: the program's named by
# it, bash's too where bash took a tick before its exec).  Stdout and
# status in $tmp/native.out and $tmp/out, the profiled run's stderr in
# $tmp/err; sets row_bad to the stdout/status difference, if any.
row_limited() {
	local limit=$1
	shift
	rm -rf "$tmp/p" && mkdir "$tmp/p" || exit 1
	bash -c "$limit && exec \"\$@\"" limited "$@" >"$tmp/native.out" 2>&1
	echo "status $?" >>"$tmp/native.out"
	env LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 ${row_env[@]+"${row_env[@]}"} \
		WITCH_OUTPUT="$tmp/p/r-%e-%p.prof" \
		bash -c "$limit && exec \"\$@\"" limited "$@" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	row_bad=""
	cmp -s "$tmp/native.out" "$tmp/out" ||
		row_bad=" stdout/status: $(tr '\n' ' ' <"$tmp/out")(native: $(tr '\n' ' ' <"$tmp/native.out"))"
}
