/*
 * panicgate.pml - SPIN model of the store gate against a panic
 * (src/printk.c: pk__gate_enter, vprintk's panic check, pk__gate_exit,
 * pk__gates_quiesce; src/panic.c: panic_begin, flush_everything).
 *
 * The promise checked: when the panicking thread ends (abort()), every
 * record whose pk_printk() had returned success has been printed.
 *
 * A writer (pk_vprintk): enter the gate (the seq_cst increment), load the
 * panic word (seq_cst); if a panic is under way, leave the gate and
 * return -EBUSY (nothing stored).  Otherwise store the record (reserve to
 * commit, one step here: what matters is whether it is committed when a
 * flush reads), leave the gate (release decrement), return success.
 * Between the check and the store the writer may be preempted for any
 * number of steps: the interleavings include all of them.
 *
 * The panicking thread: set the panic word (seq_cst CAS), note the store's
 * head, flush (a read of each record, one step each: a record committed
 * after its read is missed by that flush), wait until no other thread is
 * inside a gate, and if the head moved, flush again; then die.
 *
 * Abstractions.  SPIN is sequentially consistent; the C code gets the same
 * outcome for this store-then-load pattern (gate:D in printk.c) from
 * seq_cst on all four accesses, which C11 orders in one total order.  The
 * gate counters (16, by thread) are one counter here: the wait reads them
 * all, and a sum is zero exactly when each is.  The wait is unbounded
 * here; in the code it is bounded (QUIESCE_MS), and a writer preempted
 * longer than the bound is the one case left: its record may be missed,
 * and its pk_printk() return after the process is gone, or just before.
 * SELF=1: the panic runs on a thread that is itself inside a gate (a crash
 * handler interrupting pk_printk()), whose own entry the wait discounts.
 *
 * Mutants that must fail (verify/run_spin.sh):
 *   QUIESCE=0  no wait and no second flush (the code before the fix)
 *   BUG=1      the writer looks at the panic word before it enters the
 *              gate (a load before the store: the Dekker pattern broken)
 *   BUG=2      the head noted after the first flush, not before: a record
 *              committed during that flush, after its read, is never
 *              printed again
 */
#ifndef NW
#define NW 2		/* writer threads */
#endif
#ifndef R
#define R 2		/* records each writer tries */
#endif
#ifndef QUIESCE
#define QUIESCE 1
#endif
#ifndef SELF
#define SELF 0
#endif
#ifndef BUG
#define BUG 0
#endif

#define NREC (NW * R)

byte gate;		/* threads inside a gate */
bit panic;		/* pk__panic_tid != 0 */
byte nstored;		/* the store's head: records committed */
bit stored[NREC];
bit accepted[NREC];	/* pk_printk() returned success */
bit printed[NREC];

proctype writer(byte me)
{
	byte r = 0, k;
	bit seen;

	do
	:: r < R ->
		k = me * R + r;
#if BUG == 1
		seen = panic;
		gate++;
#else
		gate++;		/* gate:A/D, seq_cst increment */
		seen = panic;	/* gate:D, seq_cst load */
#endif
		if
		:: seen ->
			gate--;
			break	/* -EBUSY: refused, not stored, not accepted */
		:: else
		fi;
		/* any preemption here: the interleavings cover it */
		d_step { stored[k] = 1; nstored++ };
		gate--;		/* gate:C, release */
		accepted[k] = 1;
		r++
	:: else -> break
	od
}

inline flush()
{
	i = 0;
	do
	:: i < NREC ->
		if
		:: stored[i] -> printed[i] = 1
		:: else
		fi;
		i++
	:: else -> break
	od
}

proctype panicker()
{
	byte i, head, mine = 0;

#if SELF
	gate++;		/* interrupted inside its own pk_printk() */
	mine = 1;
#endif
	panic = 1;	/* panic_begin(): seq_cst CAS */
#if BUG == 2
	flush();
	head = nstored;
#else
	head = nstored;
	flush();
#endif
#if QUIESCE
	(gate <= mine);	/* pk__gates_quiesce(): seq_cst loads */
	if
	:: nstored != head -> flush()
	:: else
	fi;
#endif
	/* abort(): every record accepted so far is out */
	i = 0;
	do
	:: i < NREC ->
		assert(!accepted[i] || printed[i]);
		i++
	:: else -> break
	od
}

init
{
	byte w;

	atomic {
		w = 0;
		do
		:: w < NW -> run writer(w); w++
		:: else -> break
		od;
		run panicker()
	}
}
