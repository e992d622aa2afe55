#!/bin/bash
# tcg_guest.sh: a Debian 12 guest under QEMU's software emulation (TCG), for
# machines whose debug registers never trap (Firecracker-like VMs, no
# /dev/kvm).  TCG emulates DR0-DR7 itself (a watched page's accesses take
# its slow path and raise #DB), so perf_event breakpoints trap in the guest
# and the tests and benchmarks that need verdicts can run there.  Timing in
# the guest is not a CPU's: verdicts and pairs carry over, weights and
# overhead do not, so compare builds there, not against a real machine's
# figures (docs/no-traps.md).
#
#   tcg_guest.sh image DIR          debootstrap DIR/root with the packages CI
#                                   installs, the real programs' (bench/
#                                   real_programs.packages) and a kernel;
#                                   DIR/root.img from it
#   tcg_guest.sh run DIR CMD...     boot it, run CMD (a shell line) with the
#                                   host's TCG_SHARE (/work: the build trees'
#                                   absolute paths) at the same path (9p),
#                                   print its output, exit with its status
#   tcg_guest.sh quirks DIR         show the two ways TCG's debug registers
#                                   part from a real x86's (tools/tcg/dr_quirks.c):
#                                   two breakpoints on one word count for the
#                                   first only, and a single step over a
#                                   watched write never ends (the guest's
#                                   kernel loops in exc_debug).  The runtime
#                                   steers clear of the second for its own
#                                   watchpoints (watchpoint_step_over_hangs);
#                                   soak's own-breakpoint row under silent
#                                   fails there and not on hardware
#                                   (bench/results/tcg_guest.md, 2026-12-04)
#
# Settings: TCG_ICOUNT (1), TCG_SMP (2, with TCG_ICOUNT=0), TCG_MEM (8G),
# TCG_TIMEOUT (3600 s).  `info registers` on the run's monitor socket
# (TCG_SHARE/.tcg-run.*/monitor.sock, socat) shows where a guest that seems stuck is (nokaslr: /proc/kallsyms of any
# boot names the address).  Needs qemu-system-x86, debootstrap and
# e2fsprogs (apt-get install -y qemu-system-x86 debootstrap).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)

guest_init() {
	# The guest's init: no systemd, just what the tests use, then the command.
	cat <<'EOF'
#!/bin/sh
# the initramfs may have mounted some of these already
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sys /sys 2>/dev/null
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -o remount,rw /
hostname tcg-guest
modprobe 9pnet_virtio && modprobe 9p
share=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^tcg_share=//p')
mkdir -p "$share"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576,cache=mmap share "$share"
ip link set lo up 2>/dev/null
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
run=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^tcg_run=//p')
cd "$share"
sh "$run/cmd.sh" </dev/null
echo $? >"$run/rc"
sync
echo o >/proc/sysrq-trigger
sleep 10
EOF
}

image() {
	local dir=$1 pkgs
	mkdir -p "$dir"
	# CI's packages but the browser (the HTML tests' screenshots stay on the
	# host), with a kernel and the tools the tests call.
	pkgs=$(tr ' ' '\n' <"$here/.ci/packages" | grep -v -e '^chromium' -e '^$' | paste -sd,)
	if [ ! -x "$dir/root/usr/bin/cmake" ]; then
		# debootstrap's resolver misses a virtual package of gdb's
		# (libboost-regex): it leaves it unconfigured and fails; apt mends it.
		debootstrap --variant=minbase \
			--include="linux-image-amd64,kmod,iproute2,procps,$pkgs" \
			bookworm "$dir/root" http://deb.debian.org/debian || true
		echo 'deb http://deb.debian.org/debian bookworm main' >"$dir/root/etc/apt/sources.list"
		chroot "$dir/root" apt-get update -q
		chroot "$dir/root" apt-get -f install -y
		chroot "$dir/root" apt-get install -y gdb
	fi
	# The real programs the benchmarks run (bench/real_programs.packages),
	# no daemon started in the chroot (policy-rc.d).  Already there: quick.
	printf '#!/bin/sh\nexit 101\n' >"$dir/root/usr/sbin/policy-rc.d"
	chmod 755 "$dir/root/usr/sbin/policy-rc.d"
	# shellcheck disable=SC2046
	chroot "$dir/root" apt-get install -y $(cat "$here/bench/real_programs.packages")
	rm -f "$dir/root/usr/sbin/policy-rc.d"
	guest_init >"$dir/root/sbin/tcg-init"
	chmod 755 "$dir/root/sbin/tcg-init"
	cp "$dir"/root/boot/vmlinuz-* "$dir/vmlinuz"
	cp "$dir"/root/boot/initrd.img-* "$dir/initrd.img"
	rm -f "$dir/root.img.new"
	mke2fs -q -t ext4 -d "$dir/root" "$dir/root.img.new" 8G
	mv "$dir/root.img.new" "$dir/root.img"
}

run() {
	local dir=$1 rundir rc
	shift
	local share=${TCG_SHARE:-/work}
	rundir=$(mktemp -d "$share/.tcg-run.XXXXXX")
	# TCG_ICOUNT=1: the guest's clocks count instructions (1 ns each), so
	# CPU time, and with it a tick's weight, follows what the code executes,
	# not how fast TCG translates it (a watched page's accesses run TCG's
	# slow path, and its stores cost more than its ALU ops).  One vCPU then
	# (with two, QEMU 7.2's guest booted no further than its scheduler).
	# Without it two vCPUs run at once; two such runs of the suite stopped
	# in the guest's kernel, not understood.
	local accel=(-accel tcg,thread=single -icount shift=0) smp=1
	if [ "${TCG_ICOUNT:-1}" = 0 ]; then
		accel=(-accel tcg,thread=multi)
		smp=${TCG_SMP:-2}
	fi
	printf '%s\n' "$*" >"$rundir/cmd.sh"
	# TCG_TIMEOUT seconds (3600) end a guest whatever it does; a soft lockup
	# in its kernel ends it at once, with the stack on the console
	timeout "${TCG_TIMEOUT:-3600}" qemu-system-x86_64 -machine q35 "${accel[@]}" -cpu max \
		-smp "$smp" -m "${TCG_MEM:-8G}" -display none -no-reboot \
		-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 quiet loglevel=5 nokaslr softlockup_panic=1 panic=-1 init=/sbin/tcg-init tcg_run=$rundir tcg_share=$share" \
		-drive "file=$dir/root.img,if=virtio,format=raw,snapshot=on" \
		-virtfs "local,path=$share,mount_tag=share,security_model=passthrough,id=share" \
		-serial stdio -monitor "unix:$rundir/monitor.sock,server=on,wait=off" </dev/null || true
	rc=$(cat "$rundir/rc" 2>/dev/null || echo 125)
	rm -rf "$rundir"
	return "$rc"
}

# The quirks, each run in the guest; a step that never ends holds the guest
# until TCG_TIMEOUT (120 s here), so it runs last.
quirks() {
	local dir=$1 share=${TCG_SHARE:-/work} tmp
	tmp=$(mktemp -d "$share/.tcg-quirks.XXXXXX")
	cc -O2 -o "$tmp/dr_quirks" "$here/tools/tcg/dr_quirks.c"
	local q="$tmp/dr_quirks" out="$tmp/out"
	TCG_TIMEOUT=${TCG_TIMEOUT:-120} run "$dir" \
		"$q two >$out 2>&1; $q kernel >>$out 2>&1; $q step 1 >>$out 2>&1; $q step 2 >>$out 2>&1; $q step 3 >>$out 2>&1; echo ended >>$out" \
		>/dev/null 2>&1 || true
	cat "$out" 2>/dev/null || echo "(no output: the guest did not start)"
	if grep -q '^two: 1000 and 1000 ' "$out" 2>/dev/null; then
		echo "two breakpoints on one word: both counted every write, as on x86"
	elif grep -q '^two: ' "$out" 2>/dev/null; then
		echo "two breakpoints on one word: only one counted them (x86 counts both)"
	fi
	if grep -q '^step 3: [0-9]' "$out" 2>/dev/null; then
		echo "a step over a watched write: ended, as on x86"
	elif grep -q '^step 3: stepping' "$out" 2>/dev/null; then
		echo "a step over a watched write: never ended (the guest's kernel loops in exc_debug)"
	fi
	rm -rf "$tmp"
}

case ${1:-} in
image) image "$2" ;;
quirks) quirks "$2" ;;
run)
	shift
	run "$@"
	;;
*)
	echo "usage: tcg_guest.sh image DIR | run DIR CMD... | quirks DIR" >&2
	exit 2
	;;
esac
