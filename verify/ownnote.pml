/*
 * ownnote.pml - SPIN model of a writer's own-table note and the reader
 * that counts lost records by it, across a fork of a shared store
 * (src/ringbuf.c, "OWN RECORDS": pk__ring_write's write:A, own:A,
 * write:C, write:E; read_next() with give_up_undecided(), lost_one(),
 * decide_undecided() (own:C) and pk__ring_lost_counted() (own:B);
 * src/console.c pk__con_atfork_child()).
 *
 * The promise checked (issue 22, "the fork-storm flake"): every record a
 * process takes a seq for is printed by that process's console, or
 * counted by it as dropped, or its pk__ring_write() call failed (the
 * caller is told: -ENOBUFS, a newer record took its descriptor before it
 * claimed it).  And no record is both printed and counted, or counted
 * twice, and no other process's record is counted (with a list of
 * undecided seqs long enough not to overflow).
 *
 * Processes.  A parent with one writer thread (PW records) and a thread
 * that forks.  The fork (one step, the store being a shared mapping):
 * the child gets a copy of the parent's own table, and its console starts
 * at the store's head (pk__con_atfork_child).  After the fork the forking
 * thread stores FW records in the parent and its copy CW records in the
 * child; each process's console reads the shared store through its own
 * table (filter own, not sole: another process stores into it).
 *
 * A writer (pk__ring_write):
 *   write:A  s = seq_head++                               one step
 *   own:A    own[view][s] = 1 (own_note)                   one step
 *   write:C  CAS desc[s mod N]: older seq -> (s, RESERVED), or fail
 *            if a newer seq holds it (-ENOBUFS)             one step
 *   write:E  CAS (s, RESERVED) -> (s, FINAL), or fail if overrun
 * Any number of other steps may fall between two of them (the window
 * write:A .. own:A is where a preemption, or after a fork the
 * copy-on-write fault of the table's page, lands).
 *
 * A console's read (read_next, filter: own, not sole, its pid):
 *   decide_undecided: for each kept seq u, load desc (own:C, acquire);
 *            if claimed by u or newer, count u if the table names it
 *   loop: load seq_head (acquire); nothing to do if r >= head;
 *     lapped (head - r > N): pk__ring_lost_counted [r, head - N): loads
 *            of the descriptors, acquire fence (own:B), then the table:
 *            count each seq the table names; r = head - N
 *     read:A load desc[r]:
 *       newer seq: lost_one(r) (count it if the table names it); r++
 *       FINAL: the record (printed if the process's own, else filtered)
 *       in progress (unclaimed or RESERVED): wait (return), or, if later
 *            records exist (head > r + 1: stall_limit_ns or N/2 behind),
 *            give up: give_up_undecided() keeps r if d is unclaimed and
 *            the table does not name r (its writer may be between
 *            write:A and own:A); else lost_one(r).  A full list passes
 *            its oldest on, counted as unknown.  r++
 * The console reads until its process's writers are done, it has reached
 * seq_head and nothing is undecided.
 *
 * Abstractions.  SPIN is sequentially consistent.  The own-table stores
 * (own:A) and loads are relaxed in C; each load the reader acts on is
 * ordered after an acquire load of the seq's descriptor (read:A, own:C)
 * or an acquire fence after relaxed descriptor loads (own:B), and the
 * note is ordered before the writer's release claim (write:C, and every
 * later RMW of the descriptor is in its release sequence): a reader that
 * sees the descriptor claimed by s or newer sees s's note, as in SC.
 * give_up_undecided()'s look at the table follows an acquire load that
 * found the descriptor unclaimed: a stale "not noted" there is the SC run
 * in which the look came before own:A (the writer's steps from own:A to
 * write:C touch nothing the reader has read).  The table has one word per
 * seq (W > every seq: the "newer seq of the class" case is not modelled);
 * levels are two (LEVELS=1, the default: each record is printable or
 * filtered, chosen when its seq is taken; LEVELS=0: all printable); block
 * data, checksums and
 * torn reads are left out (the descriptor decides); OPEN records,
 * pk_cont and finalization are in finalize.pml.
 *
 * Known finding (LAP_STRICT=1, "Not covered" in ringbuf.c): a reader
 * lapped past a seq whose writer is still between write:A and own:A
 * passes it unnoted; the writer then claims and commits it before the
 * newer seq of its descriptor does.  The pass checks assert the promise
 * for every seq but those (lapwin[]); LAP_STRICT=1 asserts it for all.
 *
 * The own filtered skip (OWNSKIP=1, the default; ringbuf.c "OWN FILTERED
 * SKIP"): before it loads a seq's descriptor, the reader passes over a
 * seq its table names at a filtered level, counted skipped, whatever the
 * descriptor says (a writer still before its claim or commit).  A
 * filtered record read whole is skipped too, and one lost is counted as
 * lost->filtered, which a console adds to skipped: the checks below
 * count it skipped.  The promise with levels: every record is printed
 * (printable ones only), counted as dropped (printable ones) or skipped
 * (filtered ones) once, or its call failed.
 *
 * Mutants that must fail (verify/run_spin.sh):
 *   BUG=1  the reader passes a seq it gave up on, unclaimed and unnoted,
 *          as another process's at once (lost_one: not counted), the code
 *          before undecided seqs: the fork-storm flake
 *   BUG=2  the writer notes its seq after claiming the descriptor
 *          (own:A after write:C): a reader that gives up on it while
 *          RESERVED finds it claimed and unnoted
 *   BUG=3  the own filtered skip ignores the level: a printable record
 *          named by the table is skipped
 */
#ifndef N
#define N 2		/* descriptors */
#endif
#ifndef PW
#define PW 1		/* records of the parent's other thread */
#endif
#ifndef FW
#define FW 1		/* records of the forking thread in the parent, after the fork */
#endif
#ifndef CW
#define CW 1		/* records of the child */
#endif
#ifndef UND
#define UND 4		/* PK_RING_UNDECIDED */
#endif
#ifndef PCON
#define PCON 1		/* 0: the parent's console is left out (its records unchecked) */
#endif
#ifndef BUG
#define BUG 0
#endif
#ifndef LAP_STRICT
#define LAP_STRICT 0
#endif
#ifndef LEVELS
#define LEVELS 1
#endif
#ifndef OWNSKIP
#define OWNSKIP 1
#endif

#define NS	(PW + FW + CW)	/* seqs taken in all */
#define FREE	0
#define RES	1
#define FIN	3

/* The shared store. */
byte head = 0;			/* seq_head */
short dseq[N];			/* descriptor: seq that claimed it (first use - N at format) */
byte dst[N];			/* descriptor state */
/* Per view (0 parent, 1 child): the own table, a bit per seq. */
bit own[2 * NS];
/* Ghosts. */
byte owner[NS];			/* view + 1 of the writer that took seq s, 0: none yet */
bit failed[NS];			/* its pk__ring_write() returned -ENOBUFS */
byte printed[2 * NS];		/* by view's console */
byte counted[2 * NS];		/* by view's console, as dropped */
byte skipped[2 * NS];		/* by view's console, as filtered */
bit filt[NS];			/* seq s's record is filtered (its level, noted with it) */
bit lapwin[2 * NS];		/* passed by a lap while its writer was before own:A */
bit overflow[2];		/* the view's undecided list passed one on as unknown */
bit forked = 0;
byte forkhead;			/* seq_head at the fork */
byte wdone[2];			/* writers of the view done */

#define CLAIMED(s)	(dseq[(s) % N] >= (s))

/* pk__ring_write() for view v. */
inline ring_write(v) {
	atomic {						/* LMM(write:A) */
		s = head; head++; owner[s] = v + 1;
#if LEVELS
		if
		:: filt[s] = 1
		:: skip
		fi
#endif
	};
#if BUG != 2
	own[v * NS + s] = 1;					/* LMM(own:A) */
#endif
	atomic {						/* LMM(write:C) */
		if
		:: dseq[s % N] > s -> failed[s] = 1
		:: else -> dseq[s % N] = s; dst[s % N] = RES
		fi
	};
#if BUG == 2
	own[v * NS + s] = 1;					/* own:A, too late */
#endif
	atomic {						/* LMM(write:E) */
		if
		:: !failed[s] && dseq[s % N] == s && dst[s % N] == RES -> dst[s % N] = FIN
		:: else -> skip	/* overrun: counted by whoever took it */
		fi
	}
}

proctype writer(byte v; byte nrec) {
	byte i = 0, s;

	do
	:: i < nrec -> ring_write(v); i++
	:: else -> break
	od;
	atomic { wdone[v]++ }
}

/*
 * own_count() for one seq x: count it if the table names it, as dropped
 * or (filtered: lost->filtered) as skipped.
 */
inline own_count(v, x) {
	if
	:: own[v * NS + x] && !filt[x] -> counted[v * NS + x]++
	:: own[v * NS + x] && filt[x] -> skipped[v * NS + x]++
	:: else -> skip
	fi
}

/*
 * The console of view v, from seq r0.  Each atomic block is one load of
 * the store or the table with what the reader does with it before its
 * next load (its own variables only).
 */
proctype console(byte v; byte r0; byte nwriters) {
	byte r = r0, h, x, k, n_und = 0, i;
	short d;
	byte und[UND];

	do
	:: /* one read_next() */
		/*
		 * decide_undecided(), LMM(own:C): the acquire load of each
		 * kept seq's descriptor, and (one step with it: the note
		 * precedes the claim) the table's word.
		 */
		do
		:: atomic {
			i < n_und ->
			x = und[i];
			if
			:: CLAIMED(x) -> own_count(v, x)
			:: else -> und[k] = x; k++
			fi;
			i++
		   }
		:: atomic { else -> n_und = k; i = 0; k = 0; x = 0; break }
		od;
		do
		:: atomic {
		   h = head;
		   if
		   :: r >= h -> break		/* nothing now */
		   :: else -> skip
		   fi
		   };
		   if
		   :: h - r > N ->
			/* pk__ring_lost_counted(), LMM(own:B), a seq a step */
			do
			:: atomic {
				r < h - N ->
				if
				:: owner[r] == v + 1 && !own[v * NS + r] -> lapwin[v * NS + r] = 1
				:: else -> skip
				fi;
				own_count(v, r);
				r++
			   }
			:: else -> break
			od
		   :: else -> skip
		   fi;
#if OWNSKIP
		   /* own_filtered(): the table's word, one load */
		   if
#if BUG == 3
		   :: own[v * NS + r] -> skipped[v * NS + r]++; r++; goto next
#else
		   :: own[v * NS + r] && filt[r] -> skipped[v * NS + r]++; r++; goto next
#endif
		   :: else -> skip
		   fi;
#endif
		   d = dseq[r % N];		/* LMM(read:A) */
		   if
		   :: d > r ->			/* overwritten by a newer record */
			own_count(v, r); r++	/* lost_one() */
		   :: d == r && dst[r % N] == FIN ->
			if
			:: owner[r] == v + 1 && !filt[r] ->
				atomic { printed[v * NS + r]++; r++ };
				break		/* one record per read */
			:: owner[r] == v + 1 && filt[r] ->
				skipped[v * NS + r]++; r++	/* BLK_FILTERED */
			:: else -> r++		/* another process's: filtered */
			fi
		   :: else ->			/* in progress */
			if
			:: break		/* stall: look again later */
			:: h > r + 1 ->		/* give up on it */
#if BUG == 1
				own_count(v, r)	/* lost_one() */
#else
				if		/* give_up_undecided(): own_names() */
				:: d < r && !own[v * NS + r] ->
					atomic {
					if
					:: n_und == UND ->
						counted[v * NS + und[0]]++;
						overflow[v] = 1;
						i = 1;
						do
						:: i < UND -> und[i - 1] = und[i]; i++
						:: else -> break
						od;
						i = 0;
						n_und--
					:: else -> skip
					fi;
					und[n_und] = r; n_und++
					}
				:: else -> own_count(v, r)	/* lost_one() */
				fi;
#endif
				r++
			fi
		   fi;
next:		   skip
		od;
		atomic { h = 0; d = 0 }
	:: wdone[v] == nwriters && r == head && n_und == 0 -> break
	od
}

proctype forker() {
	byte i = 0, s, x;

	do
	:: i < FW -> ring_write(0); i++
	:: else -> break
	od;
	atomic { wdone[0]++ }
}

init {
	byte x, v;

	atomic {
		x = 0;
		do
		:: x < N -> dseq[x] = x - N; x++
		:: else -> break
		od;
		run writer(0, PW);
#if PCON
		run console(0, 0, 2)
#endif
	};
	/* The fork: the child's copy of the table, its console at the head. */
	atomic {
		forkhead = head;
		x = 0;
		do
		:: x < NS -> own[NS + x] = own[x]; x++
		:: else -> break
		od;
		forked = 1;
		run writer(1, CW);
		run console(1, forkhead, 1);
		run forker()
	};
	(_nr_pr == 1);
	/* Every process's records: printed, counted, or the call failed. */
	x = 0;
	do
	:: x < NS ->
		if
		:: owner[x] && (PCON || owner[x] == 2) ->
			v = owner[x] - 1;
#if LAP_STRICT
			assert(printed[v * NS + x] + counted[v * NS + x] + skipped[v * NS + x] == 1 ||
			       failed[x]);
#else
			assert(printed[v * NS + x] + counted[v * NS + x] + skipped[v * NS + x] == 1 ||
			       failed[x] || lapwin[v * NS + x]);
#endif
			assert(printed[v * NS + x] + counted[v * NS + x] + skipped[v * NS + x] <= 1);
			/* printed only if printable, skipped only if filtered */
			assert(!printed[v * NS + x] || !filt[x]);
			assert(!skipped[v * NS + x] || filt[x]);
			assert(!counted[v * NS + x] || !filt[x] || overflow[v]);
			/* the other view never counts it (unless its list overflowed) */
			assert(counted[(1 - v) * NS + x] == 0 || overflow[1 - v] ||
			       (1 - v == 1 && x < forkhead))
		:: else -> skip
		fi;
		x++
	:: else -> break
	od
}
