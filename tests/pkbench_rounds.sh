#!/bin/sh
# pkbench_rounds.sh PKBENCH - pkbench latency --rounds: every burst and
# throughput row is run once per round, the rounds table shows each row's
# median of that many p50s, the throughput table each row's median rate,
# the JSON carries every round's p50 and rate, and bad counts are refused.
set -eu
pkbench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

fail() { echo "pkbench_rounds: $*" >&2; exit 1; }

# Refused counts: exit 2 and a message naming the option.
for bad in 0 16 x -1; do
	if "$pkbench" latency --rounds "$bad" >"$dir/out" 2>&1; then
		fail "--rounds $bad accepted"
	else
		rc=$?
	fi
	[ "$rc" -eq 2 ] || fail "--rounds $bad: exit $rc, want 2"
	grep -q -- "--rounds" "$dir/out" || fail "--rounds $bad: no message naming the option"
done

TMPDIR=$dir "$pkbench" latency --threads 1 --burst 300 --sustained 0.02 --rounds 3 \
	--json "$dir/lat.json" >"$dir/out" 2>&1 || { cat "$dir/out" >&2; fail "run failed"; }
grep -q "p50 of the burst runs over 3 rounds" "$dir/out" || fail "no rounds table"
# Each libprintk store row ran three times and has a ratio line.
n=$(grep -c "^libprintk handoff  *store only .* 3$" "$dir/out" || true)
[ "$n" -eq 1 ] || fail "store-only handoff row without 3 rounds"
grep -q "libprintk handoff, store only: median p50 " "$dir/out" || fail "no ratio line"
# The JSON: three p50s for each burst row that ran.
python3 - "$dir/lat.json" <<'PY' || fail "JSON rounds"
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["latency"] if r["variant"] == "burst" and r["status"] == 0]
assert rows, "no burst rows"
for r in rows:
    p = r["round_p50_ns"]
    assert len(p) == 3, (r["logger"], p)
    assert p[0] == r["call_ns"]["p50_ns"], (r["logger"], p)
    q = r["round_p999_ns"]
    assert len(q) == 3 and q[0] == r["call_ns"]["p999_ns"], (r["logger"], q)
    assert all(v > 0 for v in p), (r["logger"], p)
# Throughput rows ran once per round too; the median is of those rates.
rows = [r for r in d["latency"] if r["variant"] == "throughput" and r["status"] == 0]
assert rows, "no throughput rows"
for r in rows:
    c = r["round_calls_per_s"]
    assert len(c) == 3 and all(v > 0 for v in c), (r["logger"], c)
    # wall_s is printed to the microsecond: the first rate agrees to 0.1 %
    assert abs(c[0] - r["calls"] / r["wall_s"]) <= 1e-3 * c[0], (r["logger"], c)
    assert r["median_calls_per_s"] == sorted(c)[1], (r["logger"], c)
PY
grep -q "median of the rounds run" "$dir/out" || fail "throughput table not of medians"
grep -q "libprintk handoff, store only: median throughput .*the LTTng-UST tracepoint's at 1 thread" \
	"$dir/out" || { grep -q "lttng-ust.*skipped\|lttng-ust tracepoint (recording) .* -" "$dir/out" ||
			fail "no throughput ratio line"; }
echo "pkbench_rounds: ok"
