#!/bin/bash
# run_unprivileged.sh BUILD_DIR PROGRAM NO_PERF: an unprivileged user under
# the profiler (issue 6), at kernel.perf_event_paranoid 2 and 3, and with
# perf_event_open forbidden (NO_PERF: a seccomp filter, as in containers).
#   2: a user may watch its own threads (user-space only): the program is
#      profiled, no `witch:` line, one profile.
#   3: Debian's kernels read 3 as "no perf events for unprivileged users";
#      upstream kernels treat it as 2.  Either the program is profiled as
#      at 2, or stderr is exactly the one line naming the setting to change
#      and there is no profile; which one, the output says.
#   forbidden: exactly the line saying perf_event_open is refused although
#      the paranoid level allows it, unprofiled, no profile.
# In every case the program's stdout and exit status are its own.
# Needs root to set the sysctl and switch user (setpriv); the old value is
# restored on exit.  Without root it reports "skip" (ctest SKIP_RETURN_CODE 77).
set -u
BUILD=$1 PROGRAM=$2 NO_PERF=$3
[ "$(id -u)" = 0 ] || { echo "skip: needs root to change kernel.perf_event_paranoid"; exit 77; }
command -v setpriv >/dev/null || { echo "FAIL unprivileged: setpriv (util-linux) not found"; exit 1; }
knob=/proc/sys/kernel/perf_event_paranoid
old=$(cat "$knob")
tmp=$(mktemp -d /tmp/witch-unpriv.XXXXXX)
chmod 755 "$tmp"
trap 'echo "$old" >"$knob"; rm -rf "$tmp"' EXIT
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
fail() { echo "FAIL unprivileged: $*"; exit 1; }

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

as_nobody "$PROGRAM" >"$tmp/native.out" 2>/dev/null; nrc=$?
run_case() { # name sysctl-level [wrapper]: run, check status and stdout; sets out, nprof
	local name=$1 level=$2
	shift 2
	echo "$level" >"$knob" || fail "cannot set $knob to $level"
	out="$tmp/$name"
	mkdir -m 1777 "$out"
	as_nobody "$@" env LD_PRELOAD="$BUILD/libwitch.so" WITCH_SAMPLER=soft \
		WITCH_OUTPUT="$out/p-%p.prof" "$PROGRAM" >"$out/stdout" 2>"$out/stderr"
	local rc=$?
	[ "$rc" = "$nrc" ] || fail "$name: status $rc, native $nrc"
	cmp -s "$out/stdout" "$tmp/native.out" || fail "$name: stdout differs"
	nprof=$(ls "$out" | grep -c '\.prof$')
}
profiled() { # name: no runtime line, one readable profile
	! grep -q '^witch: ' "$out/stderr" || fail "$1: $(cat "$out/stderr")"
	[ "$nprof" = 1 ] || fail "$1: $nprof profiles, expected 1"
	"$BUILD/witch" report --json "$out"/p-*.prof >/dev/null || fail "$1: profile unreadable"
}
refused() { # name expected-line: exactly that line, no profile
	[ "$(cat "$out/stderr")" = "$2" ] || fail "$1: stderr is '$(cat "$out/stderr")', want '$2'"
	[ "$nprof" = 0 ] || fail "$1: $nprof profiles, expected none"
}
fix='run `sysctl kernel.perf_event_paranoid=2` as root, or give the program CAP_PERFMON'

run_case paranoid2 2
profiled paranoid2
echo "ok paranoid 2: profiled"

run_case paranoid3 3
if [ -s "$out/stderr" ]; then
	refused paranoid3 "witch: cannot use hardware watchpoints: perf_event_open: EACCES: kernel.perf_event_paranoid is 3, which refuses perf events to programs without CAP_PERFMON; $fix; running without profiling"
	echo "ok paranoid 3: this kernel refuses; one line, unprofiled"
else
	profiled paranoid3
	echo "ok paranoid 3: this kernel treats 3 as 2; profiled"
fi

run_case forbidden 2 "$NO_PERF"
refused forbidden "witch: cannot use hardware watchpoints: perf_event_open: EACCES although kernel.perf_event_paranoid is 2: a seccomp filter, container or security module refuses it; allow perf_event_open there, or give the program CAP_PERFMON; running without profiling"
echo "ok perf_event_open forbidden: one line, unprofiled"
echo "PASS unprivileged"
