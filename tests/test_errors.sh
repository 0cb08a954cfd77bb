#!/bin/sh
# SPDX-License-Identifier: MIT
# Errors name the cause that applies (rule R10 of the reliability contract;
# TAP, as root). tests/errcases tries each cause, and runs here as root and
# as nobody (setpriv); each line it prints must name that cause, and a fix
# that does not apply must not be offered. Cases that only an unprivileged
# user can hit must start as root. The largest ring the library allows (1 GiB
# on 4 KiB pages) is mapped for real, as root.

top_builddir=${top_builddir:-.}
E="$top_builddir/tests/errcases"
T=$(mktemp -d "${TMPDIR:-/tmp}/test_errors.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root (runs cases as root and as nobody)"
	exit 0
fi
# nobody must reach the program and a tracefs copy: the build tree and
# /sys/kernel/tracing may be closed to it.
chmod 755 "$T"
cp "$E" "$T/errcases" || exit 1
TRACEFS=/sys/kernel/tracing
[ -d $TRACEFS/events ] || TRACEFS=/sys/kernel/debug/tracing
for tp in syscalls/sys_enter_getpid ftrace/function; do
	mkdir -p "$T/tracefs/events/$tp"
	cp "$TRACEFS/events/$tp/id" "$TRACEFS/events/$tp/format" "$T/tracefs/events/$tp/" \
		2>/dev/null
done
chmod -R a+rX "$T"
AS_NOBODY=""
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	AS_NOBODY="setpriv --reuid=nobody --regid=$(id -gn nobody) --clear-groups"
fi
PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid)
MAXRATE=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
PAGE=$(getconf PAGESIZE)

n=0
out=""
run() { # USER CASE [ARG]: the case's output in $out
	u=$1
	shift
	if [ "$u" = root ]; then
		out=$(cd "$T" && ./errcases "$@" 2>&1)
	else
		out=$(cd "$T" && PERFRING_TRACEFS="$T/tracefs" $AS_NOBODY ./errcases "$@" 2>&1)
	fi
}
# expect USER CASE PATTERN...: each extended regex must match the output,
# each !PATTERN must not. ARG= as the first pattern passes an argument.
expect() {
	u=$1 c=$2
	shift 2
	n=$((n + 1))
	if [ "$u" = nobody ] && [ -z "$AS_NOBODY" ]; then
		echo "ok $n - $c as $u # SKIP no setpriv or no user nobody"
		return
	fi
	run "$u" "$c"
	bad=""
	for p in "$@"; do
		case $p in
		!*) printf '%s\n' "$out" | grep -Eq -- "${p#!}" && bad="$bad [matches ${p#!}]" ;;
		*) printf '%s\n' "$out" | grep -Eq -- "$p" || bad="$bad [lacks $p]" ;;
		esac
	done
	if [ -z "$bad" ]; then
		echo "ok $n - $c as $u"
	else
		echo "not ok $n - $c as $u:$bad"
	fi
	printf '%s\n' "$out" | sed 's/^/# /'
}
# As expect, when the shell condition COND holds, else a skip saying why.
expect_if() {
	cond=$1 why=$2
	shift 2
	if eval "$cond"; then
		expect "$@"
	else
		n=$((n + 1))
		echo "ok $n - $2 as $1 # SKIP $why"
	fi
}


for u in root nobody; do
	# A filter of a page or more: the kernel's limit and the length.
	expect $u filter_page "rc=-7:" "at most $((PAGE - 1))" "$PAGE bytes" "!syntax"
	# ring_pages above the kernel's largest ring: the largest value,
	# which is itself accepted; an address-space ENOMEM: not the mlock fix.
	expect $u ring_above_kernel "ring_pages [0-9]+ accepted" "rc=-22: .*at most [0-9]+ pages"
	expect $u mmap_enomem "rc=-12: mmap" "RLIMIT_AS" "!RLIMIT_MEMLOCK"
	# EMFILE from any call, epoll_create1 included: RLIMIT_NOFILE.
	expect $u emfile_open "rc=-24: perf_event_open" "RLIMIT_NOFILE \(ulimit -n"
	expect $u emfile_epoll "rc=-24: epoll_create1" "RLIMIT_NOFILE \(ulimit -n"
	# A bare EINVAL: the attr field.
	expect $u einval_freq "rc=-22:" "sample_freq $((MAXRATE + 1)) Hz" \
		"perf_event_max_sample_rate \($MAXRATE\)"
	expect $u einval_backward "rc=-22:" "write_backward"
	# The fixes the sentences give work as nobody too.
	expect $u user_samples "^user_samples ok"
	expect $u restart "^restart ok"
done
expect root filter_page_minus_one "^filter_page_minus_one ok"
expect root einval_ftrace "rc=-22:" "exclude_callchain_user"
# A long filter the kernel refuses: the fix still fits in the sentence.
expect root filter_long_refused "rc=-22:" "$((PAGE - 1)) bytes" "check its syntax"
# Causes only an unprivileged user meets: root starts each of them.
for c in mmap_memlock kernel_samples system_wide other_user other_user_kernel; do
	expect root $c "^$c ok"
done
expect_if '[ "$PARANOID" -ge 0 ]' "perf_event_paranoid is $PARANOID" \
	nobody mmap_memlock "rc=-1: mmap" "RLIMIT_MEMLOCK"
expect_if '[ "$PARANOID" -ge 2 ]' "perf_event_paranoid is $PARANOID" \
	nobody kernel_samples "rc=-13:" "set exclude_kernel" "!CAP_SYS_PTRACE"
expect_if '[ "$PARANOID" -ge 1 ]' "perf_event_paranoid is $PARANOID" \
	nobody system_wide "rc=-13:" "watching every task" "opts.pid"
expect nobody other_user "rc=-13:" "belongs to uid" "same uid" "CAP_SYS_PTRACE" "!paranoid \(now"
expect_if '[ "$PARANOID" -ge 2 ]' "perf_event_paranoid is $PARANOID" \
	nobody other_user_kernel "rc=-13:" "CAP_SYS_PTRACE" "also exclude_kernel"
expect_if '[ "$PARANOID" -ge 2 ]' "perf_event_paranoid is $PARANOID" \
	nobody filter_page_minus_one "rc=-13:" "!rc=-7" "tracepoint fires in the kernel"
expect_if '[ "$PARANOID" -ge 2 ]' "perf_event_paranoid is $PARANOID" \
	nobody einval_ftrace "rc=-13:" "paranoid to -1"

# The largest ring named above, mapped for real (1 GiB, about 2 s).
n=$((n + 1))
run root ring_above_kernel
max=$(printf '%s\n' "$out" | sed -n 's/.*ring_pages \([0-9]*\) accepted.*/\1/p')
if [ -z "$max" ]; then
	echo "not ok $n - ring_max_maps as root: no largest ring named: $out"
else
	run root ring_max_maps "$max"
	case $out in
	*" ok") echo "ok $n - ring_max_maps $max as root" ;;
	*) echo "not ok $n - ring_max_maps $max as root: $out" ;;
	esac
fi
echo "1..$n"
