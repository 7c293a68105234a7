#!/bin/sh
# lttng-session.sh - start an LTTng session daemon for pkbench's LTTng-UST
# row, if none answers.  pkbench never starts one itself.
#
# As root it starts the system's daemon (any user in the "tracing" group
# can use it); as another user, a daemon of that user's own, which traces
# that user's processes.  It keeps running after pkbench; stop it with
# "kill PID" (the pid is printed).  With lttng-tools installed from Debian's
# package under systemd, "systemctl start lttng-sessiond" does the same as root.
set -e
if ! command -v lttng >/dev/null || ! command -v lttng-sessiond >/dev/null; then
	echo "lttng-session.sh: lttng-tools is not installed (scripts/deps.sh bench)" >&2
	exit 1
fi
if lttng --no-sessiond list >/dev/null 2>&1; then
	echo "lttng-session.sh: a session daemon already answers; nothing started"
	exit 0
fi
lttng-sessiond --daemonize
for i in 1 2 3 4 5 6 7 8 9 10; do
	lttng --no-sessiond list >/dev/null 2>&1 && break
	sleep 0.5
done
if ! lttng --no-sessiond list >/dev/null 2>&1; then
	echo "lttng-session.sh: lttng-sessiond started but does not answer" >&2
	exit 1
fi
echo "lttng-session.sh: started lttng-sessiond (pid $(pgrep -u "$(id -u)" -x lttng-sessiond | head -n1)); stop it with kill"
