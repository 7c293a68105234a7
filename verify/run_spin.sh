#!/bin/sh
# run_spin.sh - exhaustive SPIN checks of verify/conlock.pml (see
# docs/conlock-model.md), verify/panicgate.pml (the store gate against
# a panic), verify/finalize.pml (how an OPEN record of the store is
# finalized), verify/ownnote.pml (a writer's own-table note and the
# reader that counts lost records by it, across a fork),
# verify/deadowner.pml (a console lock owner that dies, and the
# takeover) and verify/lanes.pml (the per-CPU lanes of the record store:
# writers, the merging reader and its seals, the clock; see
# docs/lanes-model.md); each header says what it models.  Each check:
# spin -a with its -D options, gcc pan.c, ./pan.  A "pass" check must
# finish with errors: 0; an "xfail" check is a known finding (or a
# mutant) and must fail with the given assertion text: if it passes, the
# model or the expectation changed.
# Exit status: 0 when every check came out as expected, 1 otherwise.
#
# Usage: verify/run_spin.sh [NAME...]   (default: all checks)
# SPIN_JOBS: checks run at once (default: the number of CPUs, at most 4);
# each needs up to about 700 MB, lanes_sig_three about 1.1 GB.
set -u

here=$(cd "$(dirname "$0")" && pwd)
SPIN=${SPIN:-spin}
CC=${CC_PAN:-gcc}
command -v "$SPIN" >/dev/null 2>&1 || { echo "run_spin.sh: spin not found" >&2; exit 1; }
jobs=${SPIN_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
case $jobs in ''|*[!0-9]*|0) jobs=1 ;; esac
[ "$jobs" -le 4 ] || jobs=4

work=$(mktemp -d "${TMPDIR:-/tmp}/pk-spin.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

# name | spin -D options | expect ("pass" or text pan prints for the violation)
#      | model file in verify/ (default conlock.pml)
checks='
m1_n3|-DMODEL=1 -DN=3|pass
m1_n3_nogiveup|-DMODEL=1 -DN=3 -DGIVEUP=0|pass
m1_n2_rounds2|-DMODEL=1 -DN=2 -DROUNDS=2|pass
m1_n4_nogiveup|-DMODEL=1 -DN=4 -DGIVEUP=0 -DSIGNAL=0|pass
m1_mutant_norecheck|-DMODEL=1 -DN=3 -DBUG=1|assertion violated (printed==stored)
m1_mutant_lostwake|-DMODEL=1 -DN=3 -DBUG=2 -DGIVEUP=0|invalid end state
m1_rec_n3_one|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=1 -DOPENREC=2|pass
m1_rec_n3_two|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DOPENREC=2 -DGIVEUP_REC=1|pass
m1_rec_n2_rounds2|-DMODEL=1 -DRECS=1 -DN=2 -DROUNDS=2 -DOPENREC=3|pass
m1_rec_writerclear_n3_two|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DOPENREC=2 -DGIVEUP_REC=1 -DSTALL_CLEAR=0|pass
m1_rec_mutant_filtered_returns|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DBUG=3|assertion violated  !(stranded)
m1_rec_mutant_norecheck|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DBUG=4|assertion violated  !(stranded)
m1_rec_mutant_stall_load_first|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DBUG=5|assertion violated  !(stranded)
m1_rec_printhi_off_n3_two|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DOPENREC=2 -DGIVEUP_REC=1 -DPRINT_HI=0|pass
m1_rec_mutant_no_print_hi|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DBUG=6|assertion violated  !(stranded)
m1_rec_mutant_print_hi_late|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DBUG=7|assertion violated  !(stranded)
m1_rec_finding_no_publish_after_unlock|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DSTALL_RECHECK=0|assertion violated  !(stranded)
m1_rec_finding_dead_writer|-DMODEL=1 -DRECS=1 -DN=3 -DLEVELS=5 -DDEAD=1 -DGIVEUP_REC=1|assertion violated  !(stranded)
m2_prio|-DMODEL=2 -DN=2 -DSTRAND_CHECK=0|pass
m2_n2|-DMODEL=2 -DN=2|pass
m2_panic|-DMODEL=2 -DN=1 -DPANIC=1|pass
m2_mutant_norecheck|-DMODEL=2 -DN=2 -DFIX_DIRECT=0 -DFIX_TRY=0|assertion violated (printed==stored)
m2_mutant_emit_after_takeover|-DMODEL=2 -DN=1 -DPANIC=1 -DFIX_DIRECT=0 -DFIX_TRY=0|assertion violated  !(late)
m2_mutant_try_unsafe|-DMODEL=2 -DN=2 -DPANIC=1 -DOWNER_CHECK=0 -DFIX_DIRECT=0 -DFIX_TRY=0|assertion violated ((nwrite==1)||(o_unsafe&&(o_prio==3)))
gate_n2|-DNW=2 -DR=2|pass|panicgate.pml
gate_n3|-DNW=3 -DR=2|pass|panicgate.pml
gate_self|-DNW=2 -DR=2 -DSELF=1|pass|panicgate.pml
gate_mutant_noquiesce|-DQUIESCE=0|assertion violated ( !(accepted[i])|panicgate.pml
gate_mutant_check_first|-DBUG=1|assertion violated ( !(accepted[i])|panicgate.pml
gate_mutant_flush_first|-DQFIRST=0|assertion violated ( !(accepted[i])|panicgate.pml
fin_n3|-DNW=3 -DR=1|pass|finalize.pml
fin_n2_r2|-DNW=2 -DR=2|pass|finalize.pml
fin_mutant_raise_after_commit|-DNW=2 -DR=2 -DBUG=1|assertion violated (open_left==0)|finalize.pml
fin_mutant_no_recheck|-DNW=2 -DBUG=2|assertion violated (open_left==0)|finalize.pml
fin_mutant_count_one|-DNW=3 -DBUG=3|assertion violated (open_left==0)|finalize.pml
own_fork_n2|-DFW=0|pass|ownnote.pml
own_fork_child3|-DPCON=0|pass|ownnote.pml
own_fork_child3_und1|-DPCON=0 -DUND=1|pass|ownnote.pml
own_lap_n1|-DFW=0 -DN=1|pass|ownnote.pml
own_mutant_old_reader|-DFW=0 -DBUG=1|assertion violated (((((printed[|ownnote.pml
own_mutant_note_after_claim|-DFW=0 -DBUG=2|assertion violated (((((printed[|ownnote.pml
own_finding_lapped_window|-DFW=0 -DN=1 -DLAP_STRICT=1|assertion violated ((((printed[|ownnote.pml
own_noskip_n2|-DFW=0 -DOWNSKIP=0|pass|ownnote.pml
own_mutant_skip_printable|-DFW=0 -DBUG=3|assertion violated ( !(skipped[|ownnote.pml
dead_n2|-DNC=2|pass|deadowner.pml
dead_mutant_no_takeover|-DBUG=1|assertion violated (next_seq==stored)|deadowner.pml
dead_mutant_no_lookup|-DBUG=2|assertion violated ((starts[k]<=1)|deadowner.pml
dead_mutant_private_pos|-DBUG=3|assertion violated (ends[k]>=1)|deadowner.pml
lanes_migrate_causal|-DNA=2 -DCAUSAL=1 -DNC=0 -DBLOCKS=1|pass|lanes.pml
lanes_migrate_indep|-DNA=2 -DCAUSAL=0 -DNC=1 -DBLOCKS=1|pass|lanes.pml
lanes_three|-DNA=1 -DCAUSAL=1 -DNC=1 -DBLOCKS=1|pass|lanes.pml
lanes_sig|-DNA=0 -DCAUSAL=0 -DNC=1 -DSIG=1 -DBLOCKS=1|pass|lanes.pml
lanes_sig_three|-DNA=1 -DCAUSAL=0 -DNC=1 -DSIG=1|pass|lanes.pml
lanes_loss|-DNA=2 -DCAUSAL=1 -DNC=0 -DLOSS=1 -DBLOCKS=1|pass|lanes.pml
lanes_loss_sig|-DNA=0 -DCAUSAL=0 -DNC=1 -DSIG=1 -DLOSS=1|pass|lanes.pml
lanes_ipfloor|-DNA=1 -DCAUSAL=1 -DNC=1 -DIPFLOOR=1|pass|lanes.pml
lanes_ipfloor2|-DNA=1 -DCAUSAL=1 -DNC=1 -DIPFLOOR=2|pass|lanes.pml
lanes_ipfloor2_loss|-DNA=2 -DCAUSAL=1 -DNC=0 -DIPFLOOR=2 -DLOSS=1|pass|lanes.pml
lanes_other_readers|-DNA=1 -DCAUSAL=0 -DNC=1 -DOTHERSEAL=1 -DIPFLOOR=1|pass|lanes.pml
lanes_ipfloor_passes_inprogress|-DNA=1 -DCAUSAL=1 -DNC=1 -DIPFLOOR=1 -DBLOCKS=1|assertion violated  !(passed_ip)|lanes.pml
lanes_mutant_no_seal|-DNC=0 -DBUG=1|assertion violated key_order|lanes.pml
lanes_mutant_ts_no_max|-DNC=0 -DBUG=2|assertion violated key_order|lanes.pml
lanes_mutant_seal_plain_store|-DNC=0 -DBUG=3|assertion violated head_ok|lanes.pml
lanes_mutant_idle_bound_last_emitted|-DNC=0 -DBUG=4|assertion violated seal_helps|lanes.pml
lanes_mutant_idle_ts_le|-DNC=0 -DBUG=5|assertion violated key_order|lanes.pml
lanes_mutant_inprogress_head_ts|-DNA=1 -DBUG=6|assertion violated key_order|lanes.pml
lanes_mutant_commit_before_ts|-DNC=0 -DBUG=7|assertion violated intact|lanes.pml
lanes_mutant_emit_after_seal|-DNC=0 -DBUG=8|assertion violated key_order|lanes.pml
lanes_mutant_lost_keeps_pos|-DNC=0 -DLOSS=1 -DBUG=9|assertion violated once|lanes.pml
lanes_mutant_clock_before_look|-DNC=0 -DBUG=10|assertion violated seal_helps|lanes.pml
lanes_mutant_inprogress_exact_head|-DNA=1 -DCAUSAL=0 -DOTHERSEAL=1 -DBUG=11|assertion violated key_order|lanes.pml
lanes_finding_seal_t_plus_1|-DNA=1 -DCAUSAL=1 -DNC=1 -DSEALT=1|assertion violated causal|lanes.pml
lanes_finding_seal_t_plus_1_migrate|-DNA=2 -DCAUSAL=0 -DNC=1 -DSEALT=1|assertion violated prog_order|lanes.pml
lanes_finding_no_clock_assumption|-DNA=2 -DCAUSAL=1 -DNC=0 -DCLOCK=0|assertion violated causal|lanes.pml
lanes_finding_no_clock_assumption_migrate|-DNA=2 -DCAUSAL=0 -DNC=1 -DCLOCK=0|assertion violated prog_order|lanes.pml
lanes_head_two_loads|-DNA=1 -DCAUSAL=1 -DNC=1 -DHEAD2=1|pass|lanes.pml
lanes_mutant_head_seq_first|-DNA=1 -DCAUSAL=1 -DNC=1 -DHEAD2=1 -DBUG=12|assertion violated key_order|lanes.pml
lanes_reader_clock_ties|-DNA=1 -DCAUSAL=1 -DNC=1 -DRCLOCK=0|pass|lanes.pml
lanes_finding_seal_kts_plus_1|-DNA=1 -DCAUSAL=1 -DNC=1 -DSEALT=2 -DRCLOCK=0|assertion violated causal|lanes.pml
'

t_start=$(date +%s)
want=" $* "

# One check; its line goes to stdout, "ok" or "bad" to $work/result.
run_check() {
	name=$1 opts=$2 expect=$3 pml=${4:-conlock.pml}
	d="$work/$name"
	mkdir -p "$d"
	cp "$here/$pml" "$d/$pml"
	log="$d/pan.out"
	t0=$(date +%s)
	# shellcheck disable=SC2086
	if ! (cd "$d" && "$SPIN" $opts -a "$pml" >spin.out 2>&1); then
		echo "FAIL $name: spin -a failed"; cat "$d/spin.out"
		echo "bad" >>"$work/result"; return
	fi
	if ! (cd "$d" && "$CC" -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c >cc.out 2>&1); then
		echo "FAIL $name: gcc pan.c failed"; cat "$d/cc.out"
		echo "bad" >>"$work/result"; return
	fi
	(cd "$d" && ./pan -m200000 >"$log" 2>&1)
	t1=$(date +%s)
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$log" | head -n 1)
	depth=$(sed -n 's/.*depth reached \([0-9]*\),.*/\1/p' "$log" | head -n 1)
	info="states=${states:-?} depth=${depth:-?} time=$((t1 - t0))s"
	if [ -z "$errors" ]; then
		echo "FAIL $name: no result from pan ($info)"; tail -n 20 "$log"
		echo "bad" >>"$work/result"; return
	fi
	if [ "$expect" = pass ]; then
		if [ "$errors" = 0 ] && ! grep -q "^pan:[0-9]*: \|max search depth too small" "$log"; then
			echo "ok   $name: errors: 0, $info"
			echo "ok" >>"$work/result"
		else
			echo "FAIL $name: errors: $errors, $info"
			grep "^pan:[0-9]*: \|too small" "$log" | head -n 5
			echo "bad" >>"$work/result"
		fi
	else
		if [ "$errors" != 0 ] && grep -qF "$expect" "$log"; then
			echo "ok   $name: known finding reproduced ($expect), $info"
			echo "ok" >>"$work/result"
		else
			echo "FAIL $name: expected '$expect', got errors: $errors, $info"
			grep "^pan:[0-9]*: \|too small" "$log" | head -n 5
			echo "bad" >>"$work/result"
		fi
	fi
}

# A token per job slot: a check takes one to start, gives it back when done.
mkfifo "$work/slots" || exit 1
exec 3<>"$work/slots"
i=0
while [ "$i" -lt "$jobs" ]; do
	echo >&3
	i=$((i + 1))
done

echo "$checks" | {
	while IFS='|' read -r name opts expect; do
		[ -n "$name" ] || continue
		# An expected text may hold '|': the model file is a last field
		# only when it names a .pml file.
		case $expect in
		*'|'*.pml) pml=${expect##*|} expect=${expect%|*} ;;
		*) pml=conlock.pml ;;
		esac
		if [ $# -gt 0 ] && [ "${want#* "$name" }" = "$want" ]; then
			continue
		fi
		# shellcheck disable=SC2034
		read -r tok <&3		# wait for a free slot
		{ run_check "$name" "$opts" "$expect" "$pml"; echo >&3; } </dev/null &
	done
	wait
}
exec 3>&-

ok=$(grep -c '^ok$' "$work/result" 2>/dev/null)
bad=$(grep -c '^bad$' "$work/result" 2>/dev/null)
ok=${ok:-0}
bad=${bad:-0}
echo "spin models: $ok checks as expected, $bad failed ($(( $(date +%s) - t_start ))s)"
[ "$bad" = 0 ] && [ "$ok" -gt 0 ]
