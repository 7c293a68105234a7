/*
 * conlock.pml - SPIN models of libprintk's console ownership.
 *
 * MODEL 1 (default): the console lock of handoff mode, src/flush/conlock.c
 *   pk__cl_trylock / pk__cl_lock_spinning / pk__cl_record_begin /
 *   pk__cl_record_end / pk__cl_unlock, driven by the caller path of
 *   src/flush/flush.c: pk__flush_after_store() (store a record, then
 *   console_trylock_spinning) and console_unlock() (the holder's loop:
 *   record_begin, emit, record_end with handoff; unlock; re-check pending;
 *   trylock again).
 *
 * MODEL 1 with -DRECS=1: the same, over records in progress and loglevels
 *   (issue 8, "nothing strands").  The record store's write steps of
 *   src/store/ringbuf.c (reserve, finalize the OPEN predecessor, commit FINAL or
 *   OPEN, finalize itself), records printable or filtered by the console,
 *   the console's next_seq, and flush.c's stall_seq: a filtered writer
 *   takes part in printing only when a holder published that it stalled
 *   at or before the writer's record and (PRINT_HI, fl:J) a printable
 *   record's writer raised print_hi past the console's next_seq; a holder that can make no progress
 *   because the next record is in progress publishes stall_seq, unlocks
 *   and re-checks (and, STALL_RECHECK, publishes again if the re-check
 *   finds the next record in progress).  Not modelled: flush.c's rescue
 *   thread (a time-based retry) and low_water.  Legacy mode (trylock only) is covered: with
 *   STUCK_EXACT=0 every caller that finds the lock held may return at
 *   once, which is all a legacy caller does.
 *
 * MODEL 2 (-DMODEL=2): the per-console ownership word, src/flush/conlock.c
 *   pk__own_try / pk__own_acquire / pk__own_release, driven by
 *   console_unlock() (NORMAL, one record per ownership), pk__flush_direct()
 *   (EMERGENCY; with -DPANIC=1 also PANIC with hostile takeover).
 *
 * Build and run: verify/run_spin.sh (spin -a, gcc pan.c, ./pan).
 *
 * ATOMICITY.  Each atomic instruction of the C code (a CAS, fetch_or,
 * fetch_and, fetch_add, a load or a store of an atomic word) is one
 * d_step/atomic block or one Promela statement here; separate loads and
 * stores of the C code are separate statements.  The lock word's fields
 * (owner, waiter, ACTIVE) are separate variables that change only inside
 * one d_step, exactly where the C code changes the one 64-bit word.
 * compare_exchange_weak is modelled as the strong one: a spurious failure
 * only re-runs the loop with the same (reloaded) value, no new behaviour.
 *
 * MEMORY MODEL.  SPIN interleaves whole statements: the model is
 * sequentially consistent.  Why that is sound here for the properties
 * checked:
 *  - Every access to the lock word (or the ownership word) in the C code
 *    is an atomic RMW or a load of that one location.  RMWs always read
 *    the latest value in the word's modification order, whatever their
 *    memory_order, so for the RMWs (trylock, waiter CAS, fetch_or/and,
 *    handoff, unlock, withdraw) SC and C11 agree.  Plain loads of the word
 *    (relaxed in pk__cl_unlock / pk__own_try / pk__own_release, acquire in
 *    the waiter's loop) may return an older value in C11 than SPIN would:
 *    each such value is only used to decide whether to attempt a CAS that
 *    re-checks it, or (the waiter's loop) to notice a handoff later; an
 *    older value yields a failed CAS or one more loop round, behaviours
 *    the model already has.  One exception, see below: the model's
 *    decisions made on a relaxed load without a CAS (pending_any's
 *    pk__own_owner) are where the model can be stronger than the code.
 *  - The cross-location pattern that matters is the Dekker pair fl:B/cl:E:
 *    a caller commits its record (seq_cst, ringbuf write:E) then loads
 *    the lock word (seq_cst, first load in pk__cl_lock_spinning, or the
 *    seq_cst trylock CAS); the holder unlocks (seq_cst CAS, cl:D) then
 *    loads the ring (seq_cst loads in pk__ring_readable).  All four are
 *    seq_cst, so (C11 as amended by P0668/C23: S is consistent with
 *    coherence order for seq_cst accesses) one of them observes the other,
 *    as in SC.  The handoff CAS (cl:C, acq_rel) is not part of a Dekker
 *    pair: the holder that hands over does not re-check, the new owner
 *    does, with its own seq_cst unlock + load.
 *  - progress / stuck_at are relaxed in the code, SC here.  A stale read
 *    of them only changes whether a caller returns STUCK or LEFT or waits;
 *    every one of those outcomes is explored in the model anyway (the
 *    waiter may give up at any point), so the model does not depend on
 *    their ordering.
 *  - pending_any() in flush.c reads pk__own_owner() relaxed before the
 *    seq_cst ring loads.  In MODEL 2 that load is SC, i.e. stronger than
 *    the code; the finding reported by MODEL 2 exists even so.
 *  - RECS: the pair fl:D is a second Dekker pattern.  The holder stores
 *    stall_seq (seq_cst CAS), unlocks (seq_cst CAS) and loads the state of
 *    the stalled record (seq_cst); the writer commits it (seq_cst CAS,
 *    write:E, or finalizes it, write:F/G, seq_cst CAS) and then loads
 *    stall_seq (seq_cst).  All seq_cst: one sees the other, as in SC.
 *    The holder's look at its next record (seq_head, then the descriptor)
 *    is one step: both only move forward, so two loads answer what one
 *    look at the time of the second answers.  next_seq (written only by
 *    the lock holder) is loaded on its own before the re-check's look.
 *
 * ABSTRACTED AWAY.  Without RECS: record contents, loglevels and SKIPPED
 * records (a record is printed or not: `printed` counts the console's
 * next_seq); reserve/commit of the ring (one atomic commit, stored++).
 * With RECS: record contents; seq_head's fetch_add and the descriptor
 * claim are one step (a FREE descriptor below seq_head reads as
 * RESERVED); pk_cont's extension of an OPEN record (reopen, commit
 * again); overwriting, lost records and drop notices (except the reader's
 * give-up, GIVEUP_REC).  Always: the budget
 * printer thread and print_budget_us (callers never wait for it: the
 * BUDGET bit makes them LEFT); legacy mode (but see RECS above); several
 * consoles (one console);
 * time: spinning, the futex's 5 ms slices and the wait bound are
 * nondeterminism; FUTEX_WAKE is implicit (a sleeper waits for
 * handoff_seq to change, which is what FUTEX_WAIT's value check plus the
 * wake give).  In MODEL 1 pk__own_try always succeeds: only the console
 * lock holder takes the console there (no emergency printers).
 */

#ifndef MODEL
#define MODEL 1
#endif
#ifndef N
#define N 3		/* caller processes */
#endif
#ifndef ROUNDS
#define ROUNDS 1	/* records each caller stores (one flush each) */
#endif
#ifndef GIVEUP
#define GIVEUP 1	/* 1: a waiter may time out and give up (the wait bound) */
#endif
#ifndef RECS
#define RECS 0		/* MODEL 1: 1 = records in progress, loglevels, stall_seq */
#endif
#ifndef SIGNAL
#if RECS
#define SIGNAL 0	/* (the handler's store is not modelled with RECS) */
#else
#define SIGNAL 1	/* 1: process 1 takes one signal whose handler printk()s */
#endif
#endif
#ifndef BUG
#define BUG 0		/* MODEL 1 mutants that must fail: 1 no re-check after unlock,
			   2 futex value read after the word check (lost wake-up);
			   with RECS: 3 a filtered writer ignores stall_seq (returns
			   at once, the old code), 4 a holder that published
			   stall_seq unlocks and leaves without re-checking,
			   5 a writer loads stall_seq before its commit,
			   6 a printable writer does not raise print_hi,
			   7 a printable writer raises print_hi after its lock attempt */
#endif
#ifndef LEVELS
#define LEVELS 0	/* RECS: 0 each record's level is a free choice (printable
			   or filtered by the console); else bit me-1 set: caller
			   me writes printable records, clear: filtered ones */
#endif
#ifndef OPENREC
#define OPENREC 0	/* RECS: bit me-1 set: caller me's first record is a line
			   without '\n' (OPEN, finalized by the next writer) */
#endif
#ifndef GIVEUP_REC
#define GIVEUP_REC 0	/* RECS: 1 the reader may skip a record in progress when
			   later records exist (its time limit ran out) */
#endif
#ifndef DEAD
#define DEAD 0		/* RECS: 1 caller N stops for good after reserving its
			   first record (never commits it) */
#endif
#ifndef STALL_CLEAR
#define STALL_CLEAR 1	/* RECS: who clears stall_seq: 1 a holder whose last
			   round did not stall, when next_seq is past it
			   (stall_clear() in src/flush/flush.c), writers never; 0 a
			   filtered writer that takes part because of it
			   (CAS S -> NONE), the design as first given */
#endif
#ifndef STALL_RECHECK
#define STALL_RECHECK 1	/* RECS: 1 the re-check after unlock publishes stall_seq
			   too when it finds the next record in progress; 0 only
			   the loop's last look does (src/flush/flush.c as of ccfb06b:
			   finding F4, docs/conlock-model.md) */
#endif
#ifndef PRINT_HI
#define PRINT_HI 1	/* RECS: 1 a filtered writer at a stall takes part only if
			   print_hi (fl:J) is past the console's next_seq; 0 always */
#endif
#ifndef STUCK_EXACT
#define STUCK_EXACT 0	/* 1: model progress/stuck_at; 0: known_stuck() is a free choice */
#endif
#ifndef PANIC
#define PANIC 0		/* MODEL 2: add a PANIC printer with hostile takeover */
#endif
#ifndef STRAND_CHECK
#define STRAND_CHECK 1	/* MODEL 2: check (4) at the end */
#endif
#ifndef OWNER_CHECK
#define OWNER_CHECK 1	/* MODEL 2: pk__con_emit() only by the console's owner */
#endif
#ifndef FIX_DIRECT
#define FIX_DIRECT 1	/* MODEL 2: pk__flush_direct() as coded (0: before the fix) */
#endif
#ifndef FIX_TRY
#define FIX_TRY 1	/* MODEL 2: pk__own_try() as coded: fails while UNSAFE (0: before) */
#endif
#ifndef EMERG_TIMEOUT
#define EMERG_TIMEOUT 1	/* MODEL 2: the EMERGENCY printer may give up (-EBUSY) */
#endif

/* enum pk__cl_result */
#define R_NONE		0
#define R_OWNER		1
#define R_LEFT		2
#define R_SELF		3
#define R_STUCK		4
#define R_TIMEOUT	5

byte stored;		/* records committed to the ring */
byte printed;		/* records the console has printed (next_seq) */

#if RECS
/*
 * The record store and one console, as RECS=1 sees them: record seq's
 * descriptor state and level, seq_head, the console's next_seq, and
 * flush.c's stall_seq.
 */
#define NREC	(N * ROUNDS)
#define NONE	255		/* stall_seq: no stall published */

/* descriptor states (ringbuf.c); FREE with seq < head reads as RESERVED */
#define D_FREE		0
#define D_RESERVED	1
#define D_OPEN		2
#define D_FINAL		3

/* what one pk__con_emit() round found */
#define E_NONE		0	/* pos == head: nothing stored */
#define E_PRINT		1	/* printed a record (or a drop notice) */
#define E_STALL		2	/* the next record is in progress */

byte rst[NREC];		/* descriptor state of record seq */
bit plv[NREC];		/* level below the console's loglevel: printable */
byte head;		/* seq_head */
byte pos;		/* the console's next_seq */
byte stall = NONE;	/* stall_seq */
byte phi;		/* print_hi: the newest printable record's seq + 1 */
byte dead = NONE;	/* ghost: the record whose writer stopped (DEAD) */
#endif

#if MODEL == 1

/* ---- the console lock word: owner | waiter << 30 | ACTIVE ---- */
byte owner;		/* 0: free, else the caller's number 1..N */
byte waiter;		/* 0: none */
bit act;		/* CL_ACTIVE */
byte handoff_seq;	/* futex word */
byte progress;		/* records the holders completed (record_end) */
byte stuck_at;		/* progress + 1 when a waiter gave up */

/* ghost state for the properties */
byte inprint;		/* processes inside the print section */
byte nwait;		/* processes registered as the waiter */
bit sig_done;		/* the one signal was delivered */

/*
 * Invariants of the word, checked in every step that writes it:
 * (2) at most one waiter, and (3) a registered waiter always has an owner
 * that is somebody else: the word is never 0 while a waiter is present,
 * so no trylock (which needs word == 0) can jump in during a handoff.
 */
#define WORD_INV \
	assert(waiter == 0 || (owner != 0 && waiter != owner)); \
	assert(nwait == (waiter != 0)); \
	assert(!act || owner != 0)

/* atomic_load(&l->word) */
#define LOADW(o, w, a)	d_step { o = owner; w = waiter; a = act }

/*
 * compare_exchange(&l->word, &w, new): one step; on failure the expected
 * value is reloaded, as the C11 call does.
 */
#define CAS(eo, ew, ea, no, nw, na, ok) \
	d_step { \
		if \
		:: owner == eo && waiter == ew && act == ea -> \
			owner = no; waiter = nw; act = na; ok = 1 \
		:: else -> eo = owner; ew = waiter; ea = act; ok = 0 \
		fi \
	}

/*
 * handoff(l, w): hand the lock from its owner to the waiter in (ho, hw,
 * ha), a copy of the caller's w.  ok: handed over.
 */
inline handoff(ho, hw, ha, ok)
{
	ok = 0;
	do
	:: hw == 0 -> break
	:: else ->
		/* LMM(cl:C): owner := waiter, waiter := 0, ACTIVE := 0, one CAS */
		d_step {
			if
			:: owner == ho && waiter == hw && act == ha ->
				owner = hw; waiter = 0; act = 0; nwait--; ok = 1;
				WORD_INV
			:: else -> ho = owner; hw = waiter; ha = act
			fi
		}
		if
		:: ok -> break
		:: else -> skip
		fi
	od;
	if
	:: ok -> handoff_seq++	/* then FUTEX_WAKE: implicit */
	:: else -> skip
	fi
}

/*
 * The signal handler of process 1, delivered once, at points where the
 * process owns the lock or is (or was just made) the waiter: the handler
 * printk()s, i.e. stores a record and calls pk__cl_lock_spinning().  Its
 * first checks in C order: owner == 0 -> trylock (would need the nested
 * holder loop: must not happen here), owner == me || waiter == me ->
 * PK_CL_SELF.  Anything else would make the handler leave the record to,
 * or wait for, its own interrupted thread: property (5).
 */
inline sig_handler()
{
	sig_done = 1;
	stored++;
	LOADW(s_o, s_w, s_a);
	assert(s_o != 0);
	assert(s_o == me || s_w == me);	/* PK_CL_SELF */
	s_o = 0; s_w = 0; s_a = 0
}

#if SIGNAL
#define SIGPOINT \
	if \
	:: me == 1 && !sig_done -> sig_handler() \
	:: else -> skip \
	fi
#else
#define SIGPOINT skip
#endif

#if RECS
/*
 * pk__ring_write() of one record, then pk__flush_after_store()'s choice:
 * take part in printing (part = 1) or return at once.
 *   A+C  seq = fetch_add(seq_head), claim the descriptor (RESERVED).  One
 *        step: a reader treats a FREE descriptor below seq_head exactly as
 *        a RESERVED one (in progress), and nobody else acts on it.
 *   F    finalize seq - 1 if it is OPEN (seq_cst load + CAS; the CAS
 *        re-checks, so one step).
 *   E    commit: RESERVED -> FINAL, or OPEN for a line without '\n'
 *        (seq_cst CAS).
 *   G    OPEN: seq_cst load of seq_head; a later seq exists -> finalize
 *        itself (load + CAS re-checking OPEN: one step).
 * Then flush.c: printable -> take part.  Filtered: seq_cst load of
 * stall_seq; a holder stalled at or before our record -> take part (with
 * STALL_CLEAR=0 clearing it first, CAS); else return.
 */
inline write_record()
{
#if LEVELS == 0
	if
	:: mylv = 1
	:: mylv = 0
	fi;
#else
	mylv = (LEVELS >> (me - 1)) & 1;
#endif
	myopen = round == 1 && ((OPENREC >> (me - 1)) & 1);
	/* LMM(write:A), LMM(write:C) */
	d_step { myseq = head; head++; rst[myseq] = D_RESERVED; plv[myseq] = mylv };
#if DEAD
	if
	:: me == N && round == 1 -> dead = myseq; goto gone	/* preempted for good */
	:: else -> skip
	fi;
#endif
#if BUG == 5
	st = stall;	/* mutant: stall_seq loaded before the commit */
#endif
#if OPENREC
	/* LMM(write:F) */
	d_step {
		if
		:: myseq > 0 && rst[myseq - 1] == D_OPEN -> rst[myseq - 1] = D_FINAL
		:: else -> skip
		fi
	};
	/* LMM(write:E) */
	if
	:: myopen -> rst[myseq] = D_OPEN
	:: else -> rst[myseq] = D_FINAL
	fi;
	/* LMM(write:G) */
	d_step {
		if
		:: myopen && head != myseq + 1 && rst[myseq] == D_OPEN ->
			rst[myseq] = D_FINAL
		:: else -> skip
		fi
	};
#else
	/* LMM(write:E) */
	rst[myseq] = D_FINAL;
#endif
	/* pk__flush_after_store(level, seq) */
	if
	:: mylv ->
#if PRINT_HI && BUG != 6 && BUG != 7
		/* LMM(fl:J) raise print_hi: seq_cst CAS loop, its outcome */
		d_step { if :: phi < myseq + 1 -> phi = myseq + 1 :: else -> skip fi };
#endif
		part = 1
	:: else ->
#if BUG == 3
		/* mutant: the old code, a filtered record returns at once */
		part = 0
#else
#if BUG != 5
		/* LMM(fl:D) seq_cst load of stall_seq, after the commit */
		st = stall;
#endif
		if
		:: st != NONE && st <= myseq ->
#if STALL_CLEAR == 0
			/* CAS stall_seq: st -> NONE (seq_cst) */
			d_step { if :: stall == st -> stall = NONE :: else -> skip fi };
#endif
#if PRINT_HI
			/* LMM(fl:J) printable_pending(): seq_cst loads */
			rp = phi;
			rs = pos;
			if
			:: rp > rs -> part = 1
			:: else -> part = 0
			fi;
			rp = 0; rs = 0
#else
			part = 1
#endif
		:: else -> part = 0
		fi;
		st = 0
#endif
	fi
}

/* publish stall_seq = s (LMM(fl:D), seq_cst) */
inline publish_stall(s)
{
	/* a CAS loop that only lowers it or sets it from NONE: its outcome */
	d_step { if :: stall == NONE || stall > s -> stall = s :: else -> skip fi }
}

/*
 * Is the console's next record readable (1), in progress (2), or not
 * there (0)?  pk__ring_readable(): seq_cst loads of seq_head and of the
 * descriptor.  One step: seq_head only grows and a descriptor only moves
 * forward (FREE, RESERVED, OPEN, FINAL), so the answer of the two loads
 * is the answer of one atomic look at the time of the second.
 */
#define LOOKREC(rp, rs) \
	d_step { \
		if \
		:: rp >= head -> rs = 0 \
		:: rp < head && rst[rp] == D_FINAL -> rs = 1 \
		:: else -> rs = 2 \
		fi \
	}
#endif /* RECS */

proctype caller(byte me)
{
	byte w_o, w_w, h_o, h_w, s_o, s_w;
	bit w_a, h_a, s_a, ok, progressed;
	byte res, hs, prog0, p, round;
#if RECS
	byte myseq, st, er, rp, rs;
	bit mylv, myopen, part;
#endif

	do
	:: round < ROUNDS ->
		round++;
#if RECS
		write_record();
		if
		:: !part -> goto done
		:: else -> skip
		fi;
#else
		/* printk(): commit the record (seq_cst, ringbuf write:E) */
		stored++;
#endif

		/* ---- pk__cl_lock_spinning(l, me) ---- */
		res = R_NONE;
		LOADW(w_o, w_w, w_a);		/* seq_cst */
		do
		:: w_o == 0 ->
			/* LMM(cl:A) trylock */
			CAS(w_o, w_w, w_a, me, 0, 0, ok);
			if
			:: ok -> res = R_OWNER; break
			:: else -> skip
			fi
		:: w_o != 0 && (w_o == me || w_w == me) ->
			assert(false)	/* only the signal handler can get here */
		:: w_o != 0 && w_o != me && w_w != me ->
#if STUCK_EXACT
			/* known_stuck(): two relaxed loads */
			p = progress;
			if
			:: stuck_at == p + 1 -> res = R_STUCK; break
			:: else -> skip
			fi;
#else
			/* known_stuck(): may say yes whenever somebody holds the lock */
			if
			:: res = R_STUCK; break
			:: skip
			fi;
#endif
			if
			:: !w_a || w_w != 0 -> res = R_LEFT; break
			:: else ->
				/* become the waiter: same CAS checks ACTIVE, no waiter */
				d_step {
					if
					:: owner == w_o && waiter == w_w && act == w_a ->
						assert(nwait == 0);	/* (2) */
						waiter = me; nwait++; ok = 1;
						WORD_INV
					:: else ->
						w_o = owner; w_w = waiter; w_a = act; ok = 0
					fi
				}
				if
				:: ok -> break
				:: else -> skip
				fi
			fi
		od;

		if
		:: res == R_NONE ->
			/* the waiter: spin, then sleep on handoff_seq */
#if STUCK_EXACT
			prog0 = progress;
#endif
			do
			:: LOADW(w_o, w_w, w_a);	/* LMM(cl:B) acquire */
				if
				:: w_o == me -> res = R_OWNER; break
				:: else -> skip
				fi;
				SIGPOINT;
				if
				:: skip		/* spin: go round */
				::
#if BUG == 2
					/* mutant: check the word, then read handoff_seq */
					LOADW(w_o, w_w, w_a);
					if
					:: w_o == me -> res = R_OWNER; break
					:: else -> skip
					fi;
					hs = handoff_seq;
#else
					hs = handoff_seq;
					LOADW(w_o, w_w, w_a);
					if
					:: w_o == me -> res = R_OWNER; break
					:: else -> skip
					fi;
#endif
					/* FUTEX_WAIT(handoff_seq, hs): returns when it changed */
					if
					:: handoff_seq != hs -> skip
#if GIVEUP
					:: true -> skip	/* the 5 ms slice ran out */
#endif
					fi
#if GIVEUP
				:: break	/* wait_ns is over: give up */
#endif
				fi
			od;
			hs = 0;
			if
			:: res == R_NONE ->
				/* withdraw, unless the handoff wins the race */
				do
				:: w_o == me -> res = R_OWNER; break
				:: w_o != me && w_w != me -> res = R_LEFT; break
				:: w_o != me && w_w == me ->
					d_step {
						if
						:: owner == w_o && waiter == w_w && act == w_a ->
							waiter = 0; nwait--; ok = 1;
							WORD_INV
						:: else ->
							w_o = owner; w_w = waiter; w_a = act; ok = 0
						fi
					}
					if
					:: ok -> res = R_TIMEOUT; break
					:: else -> skip
					fi
				od;
#if STUCK_EXACT
				if
				:: res == R_TIMEOUT ->
					if
					:: progress == prog0 -> stuck_at = prog0 + 1
					:: else -> skip
					fi
				:: else -> skip
				fi
#else
				skip
#endif
			:: else -> skip
			fi;
			prog0 = 0
		:: else -> skip
		fi;
		p = 0;
#if RECS && BUG == 7
		/* mutant: print_hi raised only after the lock attempt */
		if
		:: mylv -> d_step { if :: phi < myseq + 1 -> phi = myseq + 1 :: else -> skip fi }
		:: else -> skip
		fi;
#endif

		/* ---- console_unlock(handoff = true, budget_ns = 0) ---- */
		if
		:: res == R_OWNER ->
again:
			do
			:: progressed = 0;
				/* pk__own_try(): always succeeds in this model */
				/* pk__cl_record_begin(): LMM(cl:F) fetch_or */
				d_step { act = 1; WORD_INV }
#if RECS
				/*
				 * pk__con_emit() until it returns other than
				 * SKIPPED: skip filtered records (publishing
				 * next_seq each time), print a printable one, or
				 * stop at a record in progress or at seq_head.
				 * One ACTIVE bracket around all of it: the code
				 * hands over only after a call that did not just
				 * skip (pk__cl_record_end(l, r != SKIPPED)).
				 */
				do
				:: LOOKREC(pos, rs);
					if
					:: rs == 1 && !plv[pos] -> pos++	/* SKIPPED */
					:: rs == 1 && plv[pos] ->
						inprint++;
						assert(inprint == 1 && owner == me);	/* (1) */
						pos++;
						inprint--;
						er = E_PRINT;
						break
					:: rs == 2 ->
						er = E_STALL;
#if GIVEUP_REC
						/* stall_limit_ns over, later records exist:
						   skip it (a drop notice, progress) */
						if
						:: head > pos + 1 -> pos++; er = E_PRINT
						:: true -> skip
						fi;
#endif
						break
					:: rs == 0 -> er = E_NONE; break
					fi
				od;
				if
				:: er == E_PRINT -> progressed = 1
				:: else -> skip
				fi;
#else
				/* pk__con_emit() */
				if
				:: printed < stored ->
					inprint++;
					assert(inprint == 1 && owner == me);	/* (1) */
					SIGPOINT;
					printed++;
					inprint--;
					progressed = 1
				:: else -> skip
				fi;
#endif
				/* pk__cl_record_end(): fetch_and, then handoff */
				d_step { h_o = owner; h_w = waiter; h_a = 0; act = 0; WORD_INV }
#if STUCK_EXACT
				progress++;
#endif
				SIGPOINT;
				handoff(h_o, h_w, h_a, ok);
				if
				:: ok -> goto out	/* the waiter holds the lock now */
				:: else -> skip
				fi;
				if
				:: !progressed -> break
				:: else -> skip
				fi
			od;
			skip;	/* (SPIN: a break may not land on a d_step) */
#if RECS
			/* no progress because the next record is in progress */
			if
			:: er == E_STALL -> publish_stall(pos)
#if STALL_CLEAR == 1
			/* stall_clear(): a CAS loop, cleared if next_seq is past it */
			:: else -> d_step { if :: stall != NONE && stall < pos -> stall = NONE :: else -> skip fi }
#else
			:: else -> skip
#endif
			fi;
#endif
			/* pk__cl_unlock() */
			LOADW(w_o, w_w, w_a);		/* relaxed */
			do
			:: w_o != me -> break
			:: else ->
				ok = 0;
				if
				:: w_w != 0 ->
					h_o = w_o; h_w = w_w; h_a = w_a;
					handoff(h_o, h_w, h_a, ok)
				:: else -> skip
				fi;
				if
				:: ok -> break
				:: else ->
					/* LMM(cl:D) */
					CAS(w_o, w_w, w_a, 0, 0, 0, ok);
					if
					:: ok -> break
					:: else -> skip
					fi
				fi
			od;
#if RECS
			/*
			 * LMM(fl:B), LMM(fl:D): the re-check, seq_cst loads of
			 * the next record's state: readable -> trylock, again.
			 */
#if BUG == 1
			goto out;	/* mutant: no re-check after unlock */
#elif BUG == 4
			if	/* mutant: no re-check after publishing stall_seq */
			:: er == E_STALL -> goto out
			:: else -> skip
			fi;
#endif
			rp = pos;	/* next_seq, acquire */
			LOOKREC(rp, rs);
#if STALL_RECHECK
			/* in progress now: publish stall_seq, look again */
			if
			:: rs == 2 -> publish_stall(rp); LOOKREC(rp, rs)
			:: else -> skip
			fi;
#endif
			if
			:: rs == 1 ->
#else
			/* LMM(fl:B): pending_any() && pk__cl_trylock() */
			if
#if BUG == 1
			:: false ->	/* mutant: no re-check after unlock */
#else
			:: printed < stored ->
#endif
#endif
				d_step {
					if
					:: owner == 0 && waiter == 0 && act == 0 ->
						owner = me; ok = 1; WORD_INV
					:: else -> ok = 0
					fi
				}
				if
				:: ok -> goto again
				:: else -> skip
				fi
			:: else -> skip
			fi;
out:
			skip
		:: else -> skip
		fi;
#if RECS
done:
		myseq = 0; er = 0; rp = 0; rs = 0; mylv = 0; myopen = 0; part = 0;
#endif
		res = 0; w_o = 0; w_w = 0; w_a = 0; h_o = 0; h_w = 0; h_a = 0;
		ok = 0; progressed = 0
	:: else -> break
	od
#if RECS
	;
gone:	/* (DEAD: the writer that stopped for good) */
	skip
#endif
}

init
{
	byte i;
#if RECS
	bit stranded, unfinal;
#endif

	atomic {
		i = 1;
		do
		:: i <= N -> run caller(i); i++
		:: else -> break
		od
	}
	(_nr_pr == 1);
	/* everyone has returned */
	assert(owner == 0 && waiter == 0 && act == 0 && nwait == 0);
#if RECS
	/*
	 * (6) Nothing strands: every printable committed record is behind the
	 * console's next_seq (printed once: next_seq only grows, one printer
	 * at a time), and (7) only the newest record may still be OPEN.
	 */
	assert(head == NREC);
	i = 0;
	do
	:: i < NREC ->
		stranded = rst[i] == D_FINAL && plv[i] && i >= pos;
		assert(!stranded);
		unfinal = !(rst[i] == D_FINAL || (rst[i] == D_OPEN && i == NREC - 1) ||
			    i == dead);
		assert(!unfinal);
		i++
	:: else -> break
	od
#else
	assert(printed == stored);	/* (4) no record left unprinted */
#endif
}

#endif /* MODEL == 1 */

#if MODEL == 2

/*
 * ---- the per-console ownership word ----
 * owner tid | prio << 32 | request << 34 | UNSAFE
 * Processes: NORMAL callers 1..N (console_unlock(), legacy-style console
 * lock: one trylock, no handoff), the EMERGENCY printer N+1
 * (pk__flush_direct(PK_PRIO_EMERGENCY)), with PANIC the panic printer N+2
 * (pk__flush_direct(PK_PRIO_PANIC), hostile).
 */
#define P_NONE		0
#define P_NORMAL	1
#define P_EMERG		2
#define P_PANIC		3

byte o_tid;		/* 0: free */
byte o_prio;
byte o_req;		/* highest priority waiting */
bit o_unsafe;

byte cl;		/* the console lock (legacy view: owner or 0) */
bit panicking;

/* ghost */
byte nwrite;		/* processes inside the console's write() */
byte victims;		/* bit per process a hostile takeover took the console from */
bit e_req;		/* the EMERGENCY request is registered */

#define OWN_INV \
	assert(!e_req || o_req >= P_EMERG)	/* requests survive release */

#define LOADO(t, pr, rq, u)	d_step { t = o_tid; pr = o_prio; rq = o_req; u = o_unsafe }

/* pk__own_release(): ok = true if it was still ours */
inline own_release(me, ok)
{
	LOADO(w_t, w_p, w_r, w_u);		/* relaxed */
	do
	:: w_t != me -> ok = 0; break		/* taken from us by force */
	:: else ->
		/* LMM(own:B): keep REQ and UNSAFE */
		d_step {
			if
			:: o_tid == w_t && o_prio == w_p && o_req == w_r && o_unsafe == w_u ->
				o_tid = 0; o_prio = 0; ok = 1; OWN_INV
			:: else -> w_t = o_tid; w_p = o_prio; w_r = o_req; w_u = o_unsafe; ok = 0
			fi
		}
		if
		:: ok -> break
		:: else -> skip
		fi
	od
}

/*
 * pk__con_emit(): one record through the console's write() (or
 * write_atomic()).  Its contract: the caller owns the console (the reader
 * position, c->rec and c->buf are the owner's).  An owner a PANIC printer
 * took the console from may still be inside write(): that is what UNSAFE
 * says, and the panic printer uses write_atomic() and scratch buffers.
 */
inline emit_one(me, atomicw, got)
{
	if
	:: printed < stored ->
#if OWNER_CHECK
		/*
		 * Reads the next record only as the owner.  A takeover may hit
		 * between an owner's last check and here: that one record is
		 * the one it was taken over in; a second is a violation.
		 */
		if
		:: o_tid != me -> assert(!late); late = 1
		:: else -> skip
		fi;
#endif
		if
		:: !atomicw ->
			nwrite++;
			/* write(): only the owner, or an old owner a PANIC took it from */
			assert(nwrite == 1 || (o_unsafe && o_prio == P_PANIC));
			assert(o_tid == me || ((victims & (1 << me)) && o_unsafe));
			nwrite--
		:: else -> skip
		fi;
		printed++;
		got = 1
	:: else -> got = 0
	fi
}

proctype normal(byte me)
{
	byte w_t, w_p, w_r;
	bit w_u, ok, progressed, got, rel, late;
	byte round;

	do
	:: round < ROUNDS ->
		round++;
		stored++;
		/* console lock: trylock, else the holder prints it */
		d_step { if :: cl == 0 -> cl = me; ok = 1 :: else -> ok = 0 fi }
		if
		:: ok ->
again:
			do
			:: progressed = 0;
				if
				:: panicking -> break	/* goto unlock */
				:: else -> skip
				fi;
				/* pk__own_try() */
				LOADO(w_t, w_p, w_r, w_u);	/* relaxed */
				if
#if FIX_TRY
				:: w_t != 0 || w_r != 0 || w_u -> ok = 0	/* never write() after a takeover */
#else
				:: w_t != 0 || w_r != 0 -> ok = 0
#endif
				:: else ->
					/* LMM(own:A) */
					d_step {
						if
						:: o_tid == w_t && o_prio == w_p && o_req == w_r && o_unsafe == w_u ->
							assert(!e_req);	/* no jumping in front of a request */
							o_tid = me; o_prio = P_NORMAL; ok = 1; OWN_INV
						:: else -> ok = 0
						fi
					}
				fi;
				if
				:: ok ->
					emit_one(me, 0, got);
					own_release(me, rel);
					if
					:: !rel ->
						assert(victims & (1 << me))	/* only after a takeover */
					:: else ->
						assert(!(victims & (1 << me)))	/* after a takeover release fails */
					fi;
					if
					:: got -> progressed = 1
					:: else -> skip
					fi
				:: else -> skip
				fi;
				if
				:: !progressed -> break
				:: else -> skip
				fi
			od;
			/* unlock (cl:D), then pending_any() && trylock (fl:B) */
			cl = 0;
			if
			:: !panicking && o_tid == 0 ->
				if
				:: printed < stored ->
					d_step { if :: cl == 0 -> cl = me; ok = 1 :: else -> ok = 0 fi }
					if
					:: ok -> goto again
					:: else -> skip
					fi
				:: else -> skip
				fi
			:: else -> skip
			fi
		:: else -> skip
		fi;
		ok = 0; progressed = 0; got = 0; rel = 0;
		w_t = 0; w_p = 0; w_r = 0; w_u = 0
	:: else -> break
	od
}

/*
 * pk__flush_direct(prio) for one console: pk__own_acquire(), then emit
 * until NONE, then release.  ret: 0 friendly, 1 hostile, 2 -EBUSY.
 */
proctype direct(byte me; byte prio)
{
	byte w_t, w_p, w_r, ret;
	bit w_u, ok, got, rel, late;

	stored++;
	if
	:: prio == P_PANIC -> panicking = 1
	:: else -> skip
	fi;
	/* ---- pk__own_acquire(o, me, prio, wait, hostile = prio == PANIC) ---- */
acquire:
	do
	:: LOADO(w_t, w_p, w_r, w_u);		/* acquire */
		assert(w_t != me);		/* no -EDEADLK here */
		if
		:: w_t == 0 ->
			/* LMM(own:A) take it: keep a higher request only */
			d_step {
				if
				:: o_tid == w_t && o_prio == w_p && o_req == w_r && o_unsafe == w_u ->
					o_tid = me; o_prio = prio;
					if
					:: o_req <= prio -> o_req = 0; e_req = 0	/* ours, or a lower one */
					:: else -> skip
					fi;
					ok = 1; OWN_INV
				:: else -> ok = 0
				fi
			}
			if
			:: ok -> ret = o_unsafe; break
			:: else -> skip
			fi
		:: w_t != 0 && w_r < prio ->
			/* ask the owner to yield */
			d_step {
				if
				:: o_tid == w_t && o_prio == w_p && o_req == w_r && o_unsafe == w_u ->
					o_req = prio;
					if
					:: prio == P_EMERG -> e_req = 1
					:: else -> e_req = 0	/* PANIC's request supersedes */
					fi;
					OWN_INV
				:: else -> skip
				fi
			}
		:: w_t != 0 && w_r >= prio ->
			if
			:: skip		/* wait for a record boundary */
			:: prio == P_PANIC ->
				/* wait_ns over: take it by force */
				d_step {
					if
					:: o_tid == w_t && o_prio == w_p && o_req == w_r && o_unsafe == w_u ->
						victims = victims | (1 << o_tid); o_tid = me; o_prio = prio; o_req = 0;
						o_unsafe = 1; e_req = 0; ok = 1;
						OWN_INV
					:: else -> ok = 0
					fi
				}
				if
				:: ok -> ret = 1; break
				:: else -> skip
				fi
#if EMERG_TIMEOUT
			:: prio == P_EMERG ->
				/* wait_ns over: withdraw our request, -EBUSY */
				if
				:: w_r == prio ->
					d_step {
						if
						:: o_tid == w_t && o_prio == w_p && o_req == w_r && o_unsafe == w_u ->
							o_req = 0; e_req = 0; OWN_INV
						:: else -> skip
						fi
					}
				:: else -> skip
				fi;
				ret = 2;
				break
#endif
			fi
		fi
	od;
	if
	:: ret == 2 -> skip	/* not ours: the owner prints it at its next round */
	:: else ->
		/* write_atomic() after a takeover (the console has one here) */
		do
#if FIX_DIRECT
		:: o_tid != me -> break	/* taken from us: stop at this record boundary */
		:: o_tid == me ->
#else
		:: true ->
#endif
			emit_one(me, ret == 1, got);
			if
			:: !got -> break
			:: else -> skip
			fi
		od;
		own_release(me, rel);
		/* only PANIC takes a console from an EMERGENCY printer */
		assert(rel || (prio == P_EMERG && (victims & (1 << me))));
#if FIX_DIRECT
		/* re-check after release, as nbcon_atomic_flush_pending() does */
		if
		:: rel && printed < stored -> goto acquire
		:: else -> skip
		fi
#endif
	fi
}

init
{
	byte i;

	atomic {
		i = 1;
		do
		:: i <= N -> run normal(i); i++
		:: else -> break
		od;
		run direct(N + 1, P_EMERG);
#if PANIC
		run direct(N + 2, P_PANIC);
#endif
	}
	(_nr_pr == 1);
	assert(cl == 0 && o_tid == 0);
#if !PANIC && STRAND_CHECK
	/*
	 * (4) no record left unprinted.  With PANIC the old owner and the
	 * panic printer both advance the one counter: not meaningful there.
	 */
	assert(printed == stored);
#endif
}

#endif /* MODEL == 2 */
