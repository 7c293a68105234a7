#!/bin/sh
# pkbench_rounds.sh PKBENCH - pkbench latency --rounds: every burst row is
# run once per round, the rounds table shows each row's median of that
# many p50s, the JSON carries every round's p50, and bad counts are refused.
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
PY
echo "pkbench_rounds: ok"
