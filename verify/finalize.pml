/*
 * finalize.pml - SPIN model of how an OPEN record is finalized
 * (src/store/ringbuf.c: pk__ring_write's write:A, write:F, write:H, write:E,
 * write:G; finalize(); open_done(); pk__ring_extend()).
 *
 * The promise checked: once every writer is done, no record but the
 * newest is left OPEN (invisible to live readers although newer records
 * exist), and open_count equals the number of OPEN records.
 *
 * A writer stores R records.  For each: take a seq (A: seq_head++), claim
 * its descriptor, then look at its predecessor (F): load open_count, and
 * only if it is not 0 load the predecessor's descriptor and, if that is
 * OPEN, CAS it to FINAL (and lower the count).  Then commit the record:
 * FINAL (E), or OPEN: raise the count (H), CAS RESERVED -> OPEN (E), load
 * seq_head (G) and finalize the record itself if a newer seq exists.  A
 * writer that committed OPEN may then extend it (pk_cont): CAS OPEN ->
 * RESERVED (reopen), give up if it is no longer the newest (commit FINAL,
 * lower the count), or else commit it again as OPEN (E, then G again) or
 * as FINAL (lower the count).  Every load, RMW and CAS is one atomic step;
 * between any two a writer may be preempted for any number of steps.
 *
 * Abstractions.  SPIN is sequentially consistent; the C code gets the
 * same outcome from seq_cst on the accesses of the store-buffering
 * pattern (A and F's loads in one writer; H, E and G in the other), which
 * C11 orders in one total order, and from open_count's decrements being
 * RMWs in its modification order.  Each seq has a descriptor of its own
 * (no lap: a lap only overruns records, which are then counted lost).  The
 * data blocks are left out: the state of the descriptor is all the
 * promise is about.  Lowering the count is a separate step after the CAS,
 * as in the code.
 *
 * Mutants that must fail (verify/run_spin.sh):
 *   BUG=1  raise the count after the OPEN commit instead of before (H
 *          after E): another record's decrement, done before its own raise,
 *          lets a writer read 0 after the raise
 *   BUG=2  no G: the OPEN writer never looks at seq_head after its commit
 *   BUG=3  F trusts a count of 1 as "only my own": looks only when > 1
 */
#ifndef NW
#define NW 3		/* writer threads */
#endif
#ifndef R
#define R 1		/* records each writer stores */
#endif
#ifndef BUG
#define BUG 0
#endif
#ifndef EXTEND
#define EXTEND 1	/* OPEN writers may extend their record */
#endif

#define NREC	(NW * R)
#define FREE	0
#define RES	1
#define OPEN	2
#define FIN	3

byte st[NREC];		/* descriptor states, by seq */
byte head = 0;		/* seq_head */
short count = 0;	/* open_count (may dip below 0 only in mutant 1) */
byte done = 0;

/* Finalize @x if it is OPEN: load, then CAS, then lower the count. */
inline finalize(x) {
	d = st[x];
	if
	:: d == OPEN ->
		atomic {
			if
			:: st[x] == OPEN -> st[x] = FIN; won = 1
			:: else -> won = 0
			fi
		};
		if
		:: won -> count--
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* Commit the record OPEN, then G (finalize it ourselves if not newest). */
inline commit_open() {
#if BUG == 1
	st[s] = OPEN;
	count++;
#else
	count++;		/* write:H */
	st[s] = OPEN;		/* write:E (the only one who can change RES) */
#endif
#if BUG != 2
	h = head;		/* write:G */
	if
	:: h != s + 1 -> finalize(s)
	:: else -> skip
	fi
#endif
}

proctype writer() {
	byte i = 0, s, h, d;
	short c;
	bit won;

	do
	:: i < R ->
		atomic { s = head; head++ };	/* write:A */
		st[s] = RES;			/* write:C */
		if				/* write:F */
		:: s > 0 ->
			c = count;
#if BUG == 3
			if
			:: c > 1 -> finalize(s - 1)
			:: else -> skip
			fi
#else
			if
			:: c != 0 -> finalize(s - 1)
			:: else -> skip
			fi
#endif
		:: else -> skip
		fi;
		if
		:: st[s] = FIN			/* a whole line */
		:: commit_open();
#if EXTEND
			/* pk_cont: reopen, then commit again */
			if
			:: atomic {
				if
				:: st[s] == OPEN -> st[s] = RES; won = 1
				:: else -> won = 0
				fi
			   };
			   if
			   :: won ->
				h = head;
				if
				:: h != s + 1 ->
					st[s] = FIN;	/* no longer the newest */
					count--
				:: else ->
					if
					:: st[s] = FIN; count--	/* the line ends */
					:: st[s] = OPEN;	/* still open: G again */
#if BUG != 2
					   h = head;
					   if
					   :: h != s + 1 -> finalize(s)
					   :: else -> skip
					   fi
#endif
					fi
				fi
			   :: else -> skip
			   fi
			:: skip
			fi
#endif
		fi;
		i++
	:: else -> break
	od;
	atomic { done++ }
}

init {
	byte k, open_left, open_all;

	atomic {
		k = 0;
		do
		:: k < NW -> run writer(); k++
		:: else -> break
		od
	};
	(done == NW);
	k = 0;
	open_left = 0;
	open_all = 0;
	do
	:: k < NREC ->
		if
		:: st[k] == OPEN ->
			open_all++;
			if
			:: k + 1 < head -> open_left++
			:: else -> skip
			fi
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	assert(open_left == 0);
	assert(count == open_all)
}
