/*
 * panicgate.pml - SPIN model of the store gate against a panic
 * (src/core/gate.c: pk__gate_enter, pk__gate_exit, pk__gates_quiesce;
 * src/printk.c: vprintk's panic check; src/flush/panic.c: panic_begin,
 * flush_everything).
 *
 * The promise checked: when the panicking thread ends (abort()), every
 * record whose pk_printk() had returned success has been printed.
 *
 * A writer (pk_vprintk): enter the gate (the seq_cst increment), load the
 * panic word (seq_cst); if a panic is under way, leave the gate and
 * return -EBUSY (nothing stored).  Otherwise reserve its record (take a
 * seq), commit it (two steps: a flush can meet the record in between),
 * leave the gate (release decrement), return success.  Between any two
 * steps the writer may be preempted for any number of steps: the
 * interleavings include all of them.
 *
 * The panicking thread: set the panic word (seq_cst CAS), wait until no
 * other thread is inside a gate, note the store's head, flush, and flush
 * again if the head moved; then die.  A flush reads the records in turn
 * and moves the console's position past each record it meets: one that is
 * committed is printed, one that is only reserved is waited for or (the
 * code's 5 ms stall bound) skipped and counted as dropped; either way the
 * position never comes back to it.  A record not yet reserved is beyond
 * the head: a later flush can still reach it.
 *
 * Abstractions.  SPIN is sequentially consistent; the C code gets the same
 * outcome for this store-then-load pattern (gate:D in printk.c) from
 * seq_cst on all four accesses, which C11 orders in one total order, or,
 * for a caller counted in a slot of its own (gate:E), from the waiter's
 * membarrier(2) between its store and its loads, which makes the caller's
 * compiler barrier act as a full one.  The
 * gate counters (16, by thread) are one counter here: the wait reads them
 * all, and a sum is zero exactly when each is.  The records are visited in
 * writer order, not seq order: what matters is only whether each is
 * reserved or committed when the flush meets it.  The wait is unbounded
 * here; in the code it is bounded (QUIESCE_MS), and a writer preempted
 * longer than the bound is the one case left: its record may be skipped
 * (counted), and its pk_printk() return just before the process dies.
 * SELF=1: the panic runs on a thread that is itself inside a gate (a crash
 * handler interrupting pk_printk()), whose own entry the wait discounts.
 *
 * Mutants that must fail (verify/run_spin.sh):
 *   QUIESCE=0  no wait (the code before the fix)
 *   QFIRST=0   flush first, then wait, then flush again if the head moved:
 *              a record reserved before the panic and committed after the
 *              first flush skipped it is counted but never printed
 *   BUG=1      the writer looks at the panic word before it enters the
 *              gate (a load before the store: the Dekker pattern broken)
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
#ifndef QFIRST
#define QFIRST 1
#endif

#define NREC (NW * R)

byte gate;		/* threads inside a gate */
bit panic;		/* pk__panic_tid != 0 */
byte nres;		/* the store's head: records reserved */
byte st[NREC];		/* 0 not reserved, 1 reserved, 2 committed */
bit passed[NREC];	/* the console's position is past it */
bit accepted[NREC];	/* pk_printk() returned success */
bit printed[NREC];
bit dropped[NREC];	/* skipped in progress, counted */

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
		d_step { st[k] = 1; nres++ };	/* reserve: the seq is taken */
		st[k] = 2;	/* commit */
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
		:: passed[i]
		:: !passed[i] && st[i] == 2 -> printed[i] = 1; passed[i] = 1
		:: !passed[i] && st[i] == 1 -> (st[i] == 2); printed[i] = 1; passed[i] = 1
		:: !passed[i] && st[i] == 1 -> dropped[i] = 1; passed[i] = 1	/* stall bound */
		:: !passed[i] && st[i] == 0	/* beyond the head */
		fi;
		i++
	:: else -> break
	od
}

inline quiesce()
{
#if QUIESCE
	(gate <= mine);	/* pk__gates_quiesce(): seq_cst loads */
#else
	skip
#endif
}

proctype panicker()
{
	byte i, head, mine = 0;

#if SELF
	gate++;		/* interrupted inside its own pk_printk() */
	mine = 1;
#endif
	panic = 1;	/* panic_begin(): seq_cst CAS */
#if QFIRST
	quiesce();
#endif
	head = nres;
	flush();
#if !QFIRST
	quiesce();
#endif
	if
	:: nres != head -> flush()
	:: else
	fi;
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
