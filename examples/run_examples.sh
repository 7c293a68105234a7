#!/usr/bin/env bash
# run_examples.sh CHECK PROGRAM [PKMSG]: run one example and check what it
# printed, not only its exit status.  CTest runs one CHECK per test
# (examples/CMakeLists.txt); PK_MODE comes from the test's environment.
#
# Each check fails with a message naming what was missing or wrong and
# shows the example's output.  Waits are bounded (WAIT_S seconds); no
# fixed sleep stands in for synchronisation.
set -u
check=$1 prog=$2
pkmsg=${3:-}
WAIT_S=${WAIT_S:-60}

# The examples' behaviour must not depend on the caller's environment:
# every PK_* variable but PK_MODE is dropped.
for v in $(compgen -e); do
	case $v in PK_MODE) ;; PK_*) unset "$v" ;; esac
done
ulimit -c 0 2>/dev/null	# the crash examples must not leave core files
export LC_ALL=C		# strsignal() and the C library speak English

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-example.XXXXXX") || exit 1
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	local f
	echo "FAIL: $check: $*" >&2
	for f in "$tmp"/*; do
		[ -f "$f" ] && [ "${f##*/}" != store ] || continue
		echo "---- ${f##*/}" >&2
		head -c 20000 "$f" >&2
	done
	exit 1
}

# expect FILE ERE [COUNT]: FILE has COUNT lines (default: exactly 1) matching ERE.
expect() {
	local n
	n=$(grep -cE -- "$2" "$1")
	[ "$n" -eq "${3:-1}" ] || fail "${1##*/}: $n lines match /$2/, expected ${3:-1}"
}

# absent FILE ERE: no line of FILE matches ERE.
absent() {
	! grep -qE -- "$2" "$1" || fail "${1##*/}: unexpected line: $(grep -m1 -E -- "$2" "$1")"
}

# texts FILE WANT: the lines of FILE with the time stamp (and thread id)
# removed are exactly the lines of WANT, in order.
texts() {
	sed -E 's/^\[ *[0-9]+\.[0-9]{6}\] (\[T[0-9]+\] )?//' "$1" >"$1.texts"
	printf '%s\n' "$2" | diff -u - "$1.texts" >"$tmp/diff" ||
		fail "${1##*/} differs from what was expected (- expected, + printed): $(cat "$tmp/diff")"
	rm -f "$1.texts" "$tmp/diff"
}

# wait_for SECONDS COMMAND...: run COMMAND until it succeeds or time is up.
wait_for() {
	local limit=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -le "$limit" ] || return 1
		sleep 0.05
	done
}

# run OUT ERR ARGS...: run the example with a hang bound; sets $rc.
run() {
	local out=$1 err=$2
	shift 2
	timeout -s KILL "$WAIT_S" "$prog" "$@" >"$out" 2>"$err"
	rc=$?
	[ "$rc" -ne 137 ] || fail "the example did not finish within $WAIT_S s"
}

# A line the library prints for records that a console lost.
dropped='printk messages dropped'

case $check in
hello)
	run "$tmp/out" "$tmp/err"
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	expect "$tmp/err" '^\[ *[0-9.]+\] Probing devices \.\.\. 2 found$'
	expect "$tmp/err" '^\[ *[0-9.]+\] signal 10 arrived; logging from the handler is fine$'
	for w in 0 1; do
		for s in 0 1 2; do expect "$tmp/err" "\] worker $w: step $s\$"; done
	done
	expect "$tmp/err" '.' 8
	;;

server)
	workers=4 requests=200
	run "$tmp/out" "$tmp/err" $workers $requests
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	[ ! -s "$tmp/err" ] || fail "output on stderr"
	# Every line has a syslog priority: facility user (8) + level.
	absent "$tmp/out" '^[^<]|^<([^1]|1[^0-5])'
	absent "$tmp/out" "$dropped"
	# Debug lines are stored but below the console's loglevel.
	absent "$tmp/out" '^<15>|cache miss|etag'
	expect "$tmp/out" "^<13>\[ *[0-9.]+\] server: $workers workers, $requests requests\$"
	expect "$tmp/out" '^<14>\[ *[0-9.]+\] worker [0-9]+: started$' $workers
	expect "$tmp/out" '^<14>\[ *[0-9.]+\] worker [0-9]+: stopped after [0-9]+ requests$' $workers
	# Each request exactly once, at the level its outcome gives.
	awk -v n=$requests '
		match($0, / req [0-9]+ GET /) {
			id = substr($0, RSTART + 5, RLENGTH - 9) + 0
			seen[id]++
			want = id % 13 == 0 ? "<11>" : id % 5 == 0 ? "<12>" : "<14>"
			code = id % 13 == 0 ? " 500 " : id % 5 == 0 ? " 404 " : " 200 "
			if (substr($0, 1, length(want)) != want || index($0, "/item/" id code) == 0) {
				print "wrong line for request " id ": " $0
				bad = 1
			}
		}
		END {
			for (i = 1; i <= n; i++)
				if (seen[i] != 1) {
					print "request " i " logged " seen[i] + 0 " times"
					bad = 1
				}
			for (i in seen)
				if (i + 0 < 1 || i + 0 > n) { print "unknown request " i; bad = 1 }
			exit bad
		}' "$tmp/out" >"$tmp/awk" || fail "$(cat "$tmp/awk")"
	# 200 requests: 15 multiples of 13 fail, 37 other multiples of 5 are not found.
	expect "$tmp/out" "^<13>\[ *[0-9.]+\] server: $requests requests served: 148 ok, 37 not found, 15 failed\$"
	expect "$tmp/out" '.' $((2 + 2 * workers + requests))
	;;

sighandler)
	run "$tmp/out" "$tmp/err" 10
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	absent "$tmp/err" "$dropped"
	done_line=$(grep -E '\] done: [0-9]+ units, [0-9]+ ticks$' "$tmp/err") ||
		fail "no 'done' line"
	units=$(echo "$done_line" | sed -E 's/.*done: ([0-9]+) units.*/\1/')
	ticks=$(echo "$done_line" | sed -E 's/.* ([0-9]+) ticks$/\1/')
	[ "$ticks" -ge 10 ] || fail "only $ticks ticks"
	# Units 1..N and ticks 1..T each once and in order; the status line
	# from the SIGUSR1 handler once.
	grep -oE '\] unit [0-9]+ done, checksum [0-9a-f]{4}$' "$tmp/err" |
		sed -E 's/\] unit ([0-9]+) .*/\1/' >"$tmp/units"
	seq 1 "$units" | cmp -s - "$tmp/units" || fail "unit lines are not 1..$units in order"
	grep -oE '\] tick [0-9]+: [0-9]+ units done$' "$tmp/err" |
		sed -E 's/\] tick ([0-9]+):.*/\1/' >"$tmp/ticks"
	seq 1 "$ticks" | cmp -s - "$tmp/ticks" || fail "tick lines are not 1..$ticks in order"
	expect "$tmp/err" '\] SIGUSR1: status: [0-9]+ units done, [0-9]+ ticks$'
	expect "$tmp/err" '.' $((units + ticks + 2))
	;;

crash)
	run "$tmp/out" "$tmp/err"
	[ "$rc" -eq 0 ] || fail "exit status $rc: the worker did not die of SIGSEGV"
	wpid=$(sed -nE 's/.*\] worker ([0-9]+): started$/\1/p' "$tmp/err")
	[ -n "$wpid" ] || fail "no 'worker started' line"
	expect "$tmp/err" '\] supervisor: starting a worker$'
	expect "$tmp/err" "\] worker $wpid: reading the listening port\$"
	# The report: signal, a small fault address (NULL->port), the
	# worker's thread, a backtrace naming the function that crashed.
	expect "$tmp/err" "\] Unable to handle SIGSEGV \(segmentation fault\) at address 0x[0-9a-f]{1,3} in thread $wpid \(code 1\)\$"
	expect "$tmp/err" '\] Call trace:$'
	expect "$tmp/err" '\]  #[0-9]+ 0x[0-9a-f]+ load_config_port\+0x[0-9a-f]+ \[printk_crash\]$'
	absent "$tmp/err" '\] worker [0-9]+: port '
	expect "$tmp/err" "\] supervisor: worker $wpid killed by signal 11 \(Segmentation fault\)(, core dumped)?\$"
	;;

crash_direct)
	run "$tmp/out" "$tmp/err" --direct
	[ "$rc" -eq $((128 + 11)) ] || fail "exit status $rc, not death by SIGSEGV (139)"
	expect "$tmp/err" '\] Unable to handle SIGSEGV \(segmentation fault\) at address 0x[0-9a-f]{1,3} in thread [0-9]+ \(code 1\)$'
	expect "$tmp/err" '\]  #[0-9]+ 0x[0-9a-f]+ load_config_port\+0x[0-9a-f]+ \[printk_crash\]$'
	absent "$tmp/err" '\] worker [0-9]+: port '
	;;

custom_console)
	run "$tmp/out" "$tmp/err"
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	[ ! -s "$tmp/err" ] || fail "output on stderr"
	# Normal records through write() ("app|"), the emergency through
	# write_atomic() ("app!"); debug filtered; release() called once.
	sed -E 's/^(app[|!] )\[ *[0-9]+\.[0-9]{6}\] /\1/' "$tmp/out" >"$tmp/lines"
	printf '%s\n' 'app| service starting' 'app| disk 93% full' \
		'app! temperature 97 C: shutting down' 'app| service stopped' \
		'console tagged: 4 records, BYTES bytes, 0 write errors' \
		'tagged console released: 3 normal writes, 1 atomic writes' >"$tmp/want"
	sed -i -E 's/^(console tagged: 4 records, )[0-9]+( bytes)/\1BYTES\2/' "$tmp/lines"
	diff -u "$tmp/want" "$tmp/lines" >"$tmp/diff" || fail "output differs: $(cat "$tmp/diff")"
	rm -f "$tmp/diff"
	# The byte count is what the console printed, tags excluded.
	bytes=$(sed -nE 's/^console tagged: 4 records, ([0-9]+) bytes.*/\1/p' "$tmp/out")
	printed=$(grep -E '^app[|!] ' "$tmp/out" | cut -c6- | wc -c)
	[ "$bytes" -eq "$printed" ] || fail "stats say $bytes bytes, the console printed $printed"
	;;

persist)
	[ -x "$pkmsg" ] || fail "no pkmsg program given"
	store=$tmp/store
	mkfifo "$tmp/jobs" || fail "mkfifo"
	# The worker reads jobs from a FIFO that this script feeds, so that it
	# is still running, with its store open, while pkmsg -w follows it.
	timeout -s KILL "$WAIT_S" "$prog" "$store" <"$tmp/jobs" >"$tmp/out" 2>"$tmp/err" &
	wpid=$!
	pids+=("$wpid")
	exec 3>"$tmp/jobs"
	echo "resize photo-1" >&3
	in_store() { "$pkmsg" -F "$store" 2>/dev/null | grep -q 'job 1: resize photo-1: done'; }
	wait_for "$WAIT_S" in_store || fail "job 1 never reached the store"
	# 3>&-: pkmsg must not hold the FIFO open, or the worker never sees EOF.
	"$pkmsg" -w -F "$store" >"$tmp/follow" 2>&1 3>&- &
	fpid=$!
	pids+=("$fpid")
	followed() { grep -q "$1" "$tmp/follow"; }
	wait_for "$WAIT_S" followed 'job 1: resize photo-1: done' ||
		fail "pkmsg -w did not print what was stored before it started"
	# Now records committed while pkmsg waits.
	echo "upload fail-over" >&3
	echo "compress logs" >&3
	exec 3>&-
	wait_for "$WAIT_S" followed 'exiting$' || fail "pkmsg -w did not follow the new records"
	wait "$wpid"
	rc=$?
	[ "$rc" -eq 0 ] || fail "the worker's exit status was $rc"
	kill "$fpid" 2>/dev/null
	wait "$fpid" 2>/dev/null
	[ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] || fail "the worker printed something"
	want="batch worker: store $store ready
job 1: resize photo-1: started
job 1: resize photo-1: done
job 2: upload fail-over: started
job 2: upload fail-over: failed
job 3: compress logs: started
job 3: compress logs: done
batch worker: 3 jobs, input closed, exiting"
	texts "$tmp/follow" "$want"
	# After the process is gone: the same records, and their levels.
	"$pkmsg" -F "$store" >"$tmp/after" 2>&1 || fail "pkmsg -F after exit failed"
	texts "$tmp/after" "$want"
	"$pkmsg" -F "$store" --level err >"$tmp/errors" 2>&1 || fail "pkmsg --level err failed"
	texts "$tmp/errors" "job 2: upload fail-over: failed"
	[ "$(stat -c %a "$store")" = 600 ] || fail "the store's mode is $(stat -c %a "$store"), not 600"
	;;

runtime_config)
	# A directory whose name has the characters PK_CONSOLE's syntax uses.
	dir="$tmp/logs, @ %1 \"q\" \\"
	mkdir "$dir" || fail "mkdir"
	run "$tmp/out" "$tmp/err" "$dir"
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	cp "$dir/app.log" "$dir/debug.log" "$tmp/" 2>/dev/null
	# stderr, the default console: every level but debug, and debug too
	# while the global loglevel was raised.
	texts "$tmp/err" "startup: listening on port 8080
running: configuration loaded
running: request served
running: cache 90% full
debug-on: request 17: parsed 3 headers
debug-on: request 17 served
json: request 18 served
quiet: request 19 served
quiet: request 19 slow (2 s)
after: debug log closed"
	# app.log (file:...@notice): notices and worse, from its backlog on.
	texts "$tmp/app.log" "running: configuration loaded
running: cache 90% full
quiet: request 19 slow (2 s)
after: debug log closed"
	# debug.log: human with thread ids (the backlog, debug lines of
	# startup included) until the switch to JSON, then warnings alone
	# after the loglevel change, and nothing after unregistering.
	expect "$tmp/debug.log" '^\[ *[0-9]+\.[0-9]{6}\] \[T[0-9]+\] ' 7
	expect "$tmp/debug.log" '^\{.*\}$' 3
	head -n 7 "$tmp/debug.log" >"$tmp/human"
	texts "$tmp/human" "startup: listening on port 8080
startup: 12 routes loaded
running: configuration loaded
running: request served
running: cache 90% full
debug-on: request 17: parsed 3 headers
debug-on: request 17 served"
	tail -n 3 "$tmp/debug.log" >"$tmp/json"
	expect "$tmp/json" '^\{"seq":[0-9]+,.*"level":7,.*"text":"json: request 18: parsed 5 headers"\}$'
	expect "$tmp/json" '^\{"seq":[0-9]+,.*"level":6,.*"text":"json: request 18 served"\}$'
	expect "$tmp/json" '^\{"seq":[0-9]+,.*"level":4,.*"text":"quiet: request 19 slow \(2 s\)"\}$'
	expect "$tmp/debug.log" '.' 10
	;;

*)
	echo "run_examples.sh: unknown check '$check'" >&2
	exit 2
	;;
esac
exit 0
