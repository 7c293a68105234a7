#!/bin/sh
# torture-long.sh TORTURE [SECONDS] - run the torture program over every
# scenario and every mode, again and again with new seeds, until SECONDS
# (default $TORTURE_SECONDS, else 3600: an hour) are up; `make
# torture-long` runs it.  Each step is one scenario in one mode
# (`torture --ci --scenario S --mode M --seed N`), so the time is checked
# often and new scenarios are picked up from `torture --list`.  Failing
# runs are printed as torture prints them (with the seed to repeat one:
# torture --one SCENARIO:MODE:SEED); at the end one summary line:
#   torture-long: T s, R rounds, N runs (scenario runs ...), F failures
# Exit 1 if any run failed.  Extra arguments for torture: TORTURE_FLAGS.
set -u
torture=${1:?usage: torture-long.sh TORTURE [SECONDS]}
secs=${2:-${TORTURE_SECONDS:-3600}}
case $secs in ''|*[!0-9]*) echo "torture-long: SECONDS must be a number" >&2; exit 2;; esac
seed=${PK_TORTURE_SEED:-$(date +%s)}
scens=$("$torture" --list | awk '{ print $1 }')
[ -n "$scens" ] || { echo "torture-long: $torture --list gave no scenarios" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
end=$((start + secs))
rounds=0
echo "torture-long: $secs s, first seed $seed, scenarios: $(echo $scens)"
while [ "$(date +%s)" -lt "$end" ]; do
	for sc in $scens; do
		for mode in handoff legacy thread; do
			[ "$(date +%s)" -lt "$end" ] || break 3
			# shellcheck disable=SC2086
			"$torture" --ci --scenario "$sc" --mode "$mode" --seed "$seed" \
				${TORTURE_FLAGS:-} >"$out" 2>&1
			rc=$?
			seed=$((seed + 1))
			# "<scenario> <mode>: N runs, F failures ..." and FAIL lines.
			grep -E '^FAIL ' "$out" || true
			line=$(grep -E "^$sc $mode: [0-9]+ runs, [0-9]+ failures" "$out" | tail -n 1)
			if [ -z "$line" ]; then
				echo "torture-long: $sc $mode seed $seed: no summary (exit $rc):"
				tail -n 20 "$out"
				line="$sc $mode: 0 runs, 1 failures"
			fi
			echo "$line" >>"$out.all"
		done
	done
	rounds=$((rounds + 1))
done
now=$(date +%s)
awk -v t=$((now - start)) -v rounds="$rounds" '
	{ runs[$1] += $3; fails[$1] += $5; total += $3; failed += $5
	  if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
	END {
		per = ""
		for (i = 0; i < n; i++)
			per = per (i ? ", " : "") order[i] " " runs[order[i]] \
			      (fails[order[i]] ? " (" fails[order[i]] " failed)" : "")
		printf "torture-long: %d s, %d full rounds, %d runs (%s), %d failures\n",
		       t, rounds, total, per, failed
		exit failed ? 1 : 0
	}' "$out.all"
rc=$?
rm -f "$out.all"
exit $rc
