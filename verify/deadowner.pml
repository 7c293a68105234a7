/*
 * deadowner.pml - SPIN model of a console lock owner that dies (an
 * asynchronous cancel, or pthread_exit() from a console's write()) and of
 * the takeover that recovers from it: src/conlock.c pk__cl_reap (cl:G),
 * pk__own_reap, and src/flush.c reap_dead() / reap_consoles(), called by
 * the rescue thread (rescue_main) and by pk_flush() (flush_wait loop),
 * against the callers of handoff mode (store, pk__cl_lock_spinning,
 * console_unlock()) and one console (pk__own_try, pk__con_emit's read /
 * still_ours / write / publish, pk__own_release).
 *
 * The promises checked (conlock.c cl:G, flush.c reap_consoles()):
 *  (1) a lock owner that is gone does not keep records from the console
 *      for good: once every caller has returned or died, a pk_flush()
 *      (bounded number of polls, each DEAD_OWNER_NS apart) catches up;
 *  (2) nothing is lost: every stored record is written whole at least
 *      once;
 *  (3) nothing is printed twice, except the one record the dead thread
 *      had begun to write and not yet published when it died ("printed
 *      again, never skipped": the position it published is where the
 *      takeover restarts);
 *  (4) two live threads never write to the console at once (a takeover
 *      never takes the lock or the console from a thread that is alive);
 *  (5) nobody waits for ever: every live thread returns (SPIN's end-state
 *      check): a waiter the takeover drops from the lock word withdraws
 *      at its wait bound.
 *
 * Processes.  NC callers (tid 1..NC), each storing ROUNDS records and
 * then taking part in printing; caller 1 may be cancelled at any point
 * between two of its atomic steps (a process `killer` sets the cancel at
 * any time; the victim's body is left by an `unless` at its next step),
 * also while it is the lock's waiter, owns the lock, owns the console or
 * is inside write().  Thread NC + 1 is the rescue thread while callers
 * run (trylock as BUDGET, else reap_dead(tid, false)), then pk_flush()
 * (trylock, else after DEAD_OWNER_NS without progress reap_dead(tid,
 * true)), K polls.
 *
 * Steps (each atomic block is one atomic instruction of the C code, or a
 * load with what the thread does with it before its next shared access):
 *   store      stored++ (the ring's commit; records are never overwritten)
 *   lock       pk__cl_lock_spinning: trylock CAS (cl:A); or SELF; or
 *              STUCK (known_stuck(): a free choice); LEFT if the owner is
 *              not ACTIVE, or a waiter or BUDGET is there; else CAS
 *              waiter = me; wait until owner == me (cl:B), or at the
 *              bound withdraw (CAS waiter -> 0, unless handed over)
 *   holder     console_unlock: behind? own_try (own:A); record_begin
 *              (ACTIVE, cl:F); emit: read the record at the console's
 *              position and move the position past it, still_ours, write
 *              (begin, end), still_ours, publish next_seq; own_release
 *              (own:B); record_end (ACTIVE off, progress++, hand over to
 *              the waiter, cl:C); loop while progress; unlock (handoff or
 *              CAS to 0, cl:D); re-check pending; trylock again
 *   reap       pk__cl_reap: load owner and progress; a first look (or a
 *              change) records seen_owner/seen_progress and returns; once
 *              the bound has passed (a free choice while callers run,
 *              always in pk_flush's polls), tid_gone(owner) (the kernel's
 *              view: exact here); if gone, CAS owner -> me (cl:G), the
 *              word's waiter, ACTIVE and BUDGET dropped; then
 *              reap_consoles: own_reap CAS (console owner -> me), restart
 *              the position at the published next_seq (pk__con_pos_init),
 *              own_release
 *
 * Abstractions.  SPIN is sequentially consistent.  Every change of the
 * lock word and of the ownership word is a CAS or RMW (SC and C11 agree
 * on their values); a relaxed load of them that is stale only makes a
 * later CAS fail or a look repeat.  The dead thread's writes (the
 * console's position, next_seq) reach the reaper through the kernel
 * (its exit and tgkill() take the task list's lock: cl:G); the reaper's
 * look at tid_gone and its CAS are then ordered after them, as here.
 * seen_ns, DEAD_OWNER_NS, the wait bound and the futex are time: free
 * choices (the lock-holder's waiter wakes when it becomes owner, or gives
 * up).  One console; records never overwritten (no drop counts: the
 * restart's count_gap has nothing to count); no budget, no rescue stint
 * bounds, no panic, no thread mode (the printers disable cancellation);
 * a tid is never reused (a reused tid reads as alive: the takeover waits,
 * as "alive (stuck in a console, or its tid reused)" says).  The lock's
 * progress counter is kept modulo PROG: a wrap can only make a look find
 * "no progress" early, which the free choice of the bound allows anyway
 * (and the tid_gone() look still decides).  The rescue thread looks only
 * while records are pending (it sleeps otherwise).
 *
 * Mutants that must fail (verify/run_spin.sh):
 *   BUG=1  no takeover (before pk__cl_reap): pk_flush never catches up
 *   BUG=2  takeover without asking whether the owner is gone (only the
 *          bound without progress): a live owner's console is taken
 *   BUG=3  the console is restarted at the dead owner's private position
 *          (c->pos, past the record it was writing) instead of the
 *          published next_seq: the half-written record is never printed
 */
#ifndef NC
#define NC 2		/* callers */
#endif
#ifndef ROUNDS
#define ROUNDS 1	/* records each caller stores */
#endif
#ifndef K
#define K 4		/* pk_flush's polls at the end */
#endif
#ifndef BUG
#define BUG 0
#endif

#ifndef PROG
#define PROG 4		/* progress is counted modulo PROG (see Abstractions) */
#endif

#define NR	(NC * ROUNDS)
#define FL	(NC + 1)	/* the rescue thread, then pk_flush's caller */
#define NONE	255

/* enum pk__cl_result */
#define R_OWNER		1
#define R_LEFT		2
#define R_SELF		3
#define R_STUCK		4
#define R_TIMEOUT	5
#define R_WAIT		6

/* The console lock word, and its counters. */
byte lk_owner = 0, lk_waiter = 0;
bit lk_active = 0, lk_budget = 0;
byte progress = 0;
byte seen_owner = 0, seen_prog = 0;
/* The store and the console. */
byte stored = 0;
byte con_owner = 0;	/* the ownership word's tid */
byte cpos = 0;		/* c->pos: the reader's position (owner's private state) */
byte next_seq = 0;	/* published (publish()) */
/* Ghosts. */
bit dead[FL + 1];
bit kill = 0;
byte writing = 0;	/* tid inside write() */
byte wseq = NONE;	/* the record it writes */
byte unpub[FL + 1];	/* the record a thread began to write and has not published */
byte inflight = NONE;	/* unpub[] of the thread that died */
byte starts[NR], ends[NR];
byte callers_done = 0;
bit final = 0;		/* pk_flush's polls: the bound has passed each time */

/*
 * console_unlock() for @me, holding the lock; @ho: handoff mode (the
 * rescue thread holds it as BUDGET and hands over too).  Leaves with the
 * lock released or handed over.
 */
inline console_unlock(me) {
    handed = 0;
    do
    :: /* again: */
	do
	:: /* one round over the (one) console */
		prog = 0;
		r = 0;
		if				/* pk__con_behind, then pk__own_try (own:A) */
		:: next_seq < stored ->
			atomic {
				if
				:: con_owner == 0 -> con_owner = me; got = 1
				:: else -> got = 0
				fi
			}
		:: else -> got = 0
		fi;
		if
		:: got ->
			lk_active = 1;		/* pk__cl_record_begin, LMM(cl:F) */
			/* pk__con_emit: read at the position, move it past */
			atomic {
				if
				:: cpos < stored -> x = cpos; cpos = x + 1
				:: else -> x = NONE
				fi
			};
			if
			:: x != NONE ->
				if
				:: con_owner == me ->	/* still_ours */
					atomic {	/* con_write begins */
						assert(writing == 0 || dead[writing]);
						writing = me; wseq = x; starts[x]++;
						unpub[me] = x
					};
					atomic { ends[x]++; writing = 0; wseq = NONE };
					if
					:: con_owner == me ->	/* publish */
						atomic { next_seq = cpos; unpub[me] = NONE };
						r = 1
					:: else -> unpub[me] = NONE	/* PK_EMIT_LOST */
					fi
				:: else -> skip		/* PK_EMIT_LOST */
				fi
			:: else -> skip			/* PK_EMIT_NONE */
			fi;
			atomic {			/* pk__own_release, LMM(own:B) */
				if
				:: con_owner == me -> con_owner = 0
				:: else -> skip
				fi
			};
			prog = r;
			/* pk__cl_record_end: LMM(cl:F), then handoff (cl:C) */
			atomic { lk_active = 0; progress = (progress + 1) % PROG };
			atomic {
				if
				:: lk_owner == me && lk_waiter != 0 ->
					lk_owner = lk_waiter; lk_waiter = 0; lk_budget = 0; handed = 1
				:: else -> handed = 0
				fi
			};
		:: else -> skip
		fi;
		if
		:: handed || !prog -> break	/* handed: the waiter holds it now */
		:: else -> skip
		fi
	od;
	if
	:: handed -> break
	:: else -> skip
	fi;
	/* pk__cl_unlock: handoff, or CAS to 0 (cl:D) */
	atomic {
		if
		:: lk_owner == me ->
			if
			:: lk_waiter != 0 -> lk_owner = lk_waiter; lk_waiter = 0
			:: else -> lk_owner = 0
			fi;
			lk_budget = 0
		:: else -> skip
		fi
	};
	/* re-check pending (fl:B), trylock again (cl:A) */
	if
	:: next_seq < stored ->
		atomic {
			if
			:: lk_owner == 0 -> lk_owner = me; got = 1
			:: else -> got = 0
			fi
		};
		if
		:: got -> skip			/* goto again */
		:: else -> break
		fi
	:: else -> break
	fi
    od
}

/* reap_consoles(dead, me): own_reap, restart at next_seq, release. */
inline reap_consoles(o, me) {
	atomic {				/* pk__own_reap, LMM(own:A) as cl:G */
		if
		:: con_owner == o -> con_owner = me; got = 1
		:: else -> got = 0
		fi
	};
	if
	:: got ->
#if BUG != 3
		cpos = next_seq;		/* pk__con_pos_init(next_seq, count_gap) */
#endif
		atomic {
			if
			:: con_owner == me -> con_owner = 0
			:: else -> skip
			fi
		}
	:: else -> skip
	fi
}

/* reap_dead(me, consoles): took = 1 if @me holds the lock now. */
inline reap_dead(me, consoles) {
	took = 0;
#if BUG != 1
	atomic { o = lk_owner; p = progress };	/* pk__cl_reap's relaxed loads */
	if
	:: o == 0 || o == me -> skip
	:: else ->
		if
		:: seen_owner != o || seen_prog != p ->
			atomic { seen_owner = o; seen_prog = p }	/* and seen_ns = now */
		:: else ->
			if
			:: !final -> skip	/* the bound has not passed yet */
			:: true ->
# if BUG == 2
				if :: true ->
# else
				if
				:: dead[o] ->	/* pk__tid_gone(o) */
# endif
					atomic {	/* LMM(cl:G) */
						if
						:: lk_owner == o ->
							lk_owner = me; lk_waiter = 0;
							lk_active = 0; lk_budget = 0;
							took = 1
						:: else -> skip
						fi
					}
				:: else -> skip	/* alive: seen_ns = now */
				fi
			fi
		fi
	fi;
	if
	:: took -> reap_consoles(o, me)
	:: else ->
		if
		:: consoles ->
			o = con_owner;
			if
			:: o != 0 && o != me && dead[o] -> reap_consoles(o, me)
			:: else -> skip
			fi
		:: else -> skip
		fi
	fi
#endif
}

/* pk__cl_lock_spinning(): res */
inline lock_spinning(me) {
	atomic {
		if
		:: lk_owner == 0 -> lk_owner = me; res = R_OWNER	/* cl:A */
		:: lk_owner == me || lk_waiter == me -> res = R_SELF
		:: lk_owner != 0 && lk_owner != me && lk_waiter != me ->
			if
			:: res = R_STUCK		/* known_stuck() */
			:: !lk_active || lk_waiter != 0 || lk_budget -> res = R_LEFT
			:: lk_active && lk_waiter == 0 && !lk_budget ->
				lk_waiter = me; res = R_WAIT
			fi
		fi
	};
	if
	:: res == R_WAIT ->
		if
		:: lk_owner == me -> res = R_OWNER	/* cl:B: handed over */
		:: true ->				/* the bound: withdraw */
			atomic {
				if
				:: lk_owner == me -> res = R_OWNER
				:: lk_owner != me && lk_waiter != me -> res = R_LEFT
				:: lk_owner != me && lk_waiter == me -> lk_waiter = 0; res = R_TIMEOUT
				fi
			}
		fi
	:: else -> skip
	fi
}

proctype caller(byte me) {
	byte i = 0, res, x, r, prog;
	bit got, handed;

	{
		do
		:: i < ROUNDS ->
			stored++;			/* the record's commit */
			lock_spinning(me);
			if
			:: res == R_OWNER -> console_unlock(me)
			:: else -> skip
			fi;
			i++
		:: else -> break
		od
	} unless {
		me == 1 && kill ->
		atomic {
			dead[me] = 1;
			inflight = unpub[me]
		}
	};
	atomic { callers_done++ }
}

proctype killer() {
	if
	:: kill = 1
	:: skip
	fi
}

proctype flusher() {
	byte me = FL, o, p, x, r, prog, k = 0, last_p;
	bit got, handed, took;

	/* The rescue thread, while callers run: it looks when records are pending. */
	do
	:: callers_done < NC && next_seq < stored ->
		atomic {
			if
			:: lk_owner == 0 -> lk_owner = me; lk_budget = 1; got = 1
			:: else -> got = 0
			fi
		};
		if
		:: got -> console_unlock(me)
		:: else ->
			reap_dead(me, 0);
			if
			:: took -> console_unlock(me)
			:: else -> skip
			fi
		fi
	:: callers_done == NC -> break
	od;
	/* pk_flush(): K polls, DEAD_OWNER_NS apart. */
	final = 1;
	last_p = progress;
	do
	:: k < K && next_seq < stored ->
		atomic {
			if
			:: lk_owner == 0 -> lk_owner = me; got = 1
			:: else -> got = 0
			fi
		};
		if
		:: got -> console_unlock(me)
		:: else -> skip
		fi;
		if
		:: next_seq < stored && progress == last_p ->
			reap_dead(me, 1);
			if
			:: took -> console_unlock(me)
			:: else -> skip
			fi
		:: else -> last_p = progress
		fi;
		k++
	:: else -> break
	od;
	/* (1) caught up */
	assert(next_seq == stored);
	/* (2) nothing lost, (3) printed twice only what the dead thread was writing */
	k = 0;
	do
	:: k < stored ->
		assert(ends[k] >= 1);
		assert(starts[k] <= 1 || (k == inflight && starts[k] == 2));
		k++
	:: else -> break
	od
}

init {
	byte i;

	atomic {
		i = 0;
		do
		:: i <= FL -> unpub[i] = NONE; i++
		:: else -> break
		od;
		i = 1;
		do
		:: i <= NC -> run caller(i); i++
		:: else -> break
		od;
		run killer();
		run flusher()
	}
}
