/*
 * lanes.pml - SPIN model of the per-CPU lanes design of the record store
 * (docs/lanes-model.md): writers store into L = 2 lanes, each with a head
 * H = {seq, ts} changed only by a 16-byte CAS; one reader merges the lanes
 * into one stream ordered by the key (ts, lane, seq), sealing idle lanes.
 *
 * The promises checked:
 *   P0  the reader emits what the writer wrote (the ts and writer id it
 *       reads from a FINAL descriptor are the record's): assert(intact)
 *   P1  emitted keys are strictly increasing: nothing is emitted while a
 *       record with a smaller key can still appear: assert(key_order) at
 *       each emission (on the records' true keys, ghosts)
 *   P2  every record stored is emitted exactly once; with LOSS=1 emitted
 *       once or counted lost, never both, and a record skipped as lost is
 *       never emitted, also when its writer commits it afterwards:
 *       assert(once) at each emission, assert(all_once) at the end
 *   P3  each thread's records come out in its program order, also when the
 *       thread moved to another lane between two stores: assert(prog_order)
 *   P4  thread A stores r1 and sets a flag; thread B waits for the flag and
 *       then stores r2: r1 is emitted before r2: assert(causal)
 *   P5  (SIG=1) a signal handler interrupts thread C's store at any step
 *       and does a whole store of its own: both records are emitted, each
 *       once (P2)
 *   and for the reader's progress assert(seal_helps): a seal that succeeds
 *   lifts the sealed lane's bound above the key the reader is holding, so
 *   one seal of a lane is enough; and assert(head_ok): the reader's
 *   position is never past a lane's head (a head never goes back).
 * The end check runs in init once every writer is done and the reader has
 * drained the lanes; a reader that can make no progress is an invalid end
 * state (it waits for a change, it does not spin).
 *
 * A lane l: head Hs[l]/Ht[l] (seq, ts: one 16-byte word, loaded in one
 * step, changed only by a CAS of both fields); per seq a descriptor: state
 * FREE -> RESERVED -> FINAL, the record's ts and writer id.  A lane's seqs
 * are gapless.
 *
 * The clock.  A global monotone clock `now` (it starts at 1; a head's ts
 * starts at 0).  The physical-clock assumption the design relies on: a
 * clock read returns more than every clock read that happens-before it
 * through another thread (a chain of synchronizing accesses that passes
 * through another thread), and more than the read of the same thread's
 * previous store.  Modelled with ghost happens-before clocks: hb[th] is
 * the largest clock value read by an event that happens-before thread
 * th's next step (its own reads included; the handler shares thread C's);
 * a lane's head (hclk), a committed descriptor (dclk) and the flag (fclk)
 * carry the hb of the thread that last released them, and a head CAS (acq_rel),
 * the reader's load of a FINAL descriptor and B's load of the flag
 * (acquire) take it.  A writer's clock read first moves `now` to
 * hb[th] + 1 if it is not past it yet (CLOCK=1); the reader's read moves
 * it past rhb, the largest clock value carried by the FINAL descriptors it
 * has loaded (not past its own earlier reads).  Otherwise a read may move
 * the clock on by 1, or not (a free advance): a read ties with the last
 * one or is later, which covers every order of clock values.  Free
 * advances are not capped (ADV=n caps them at n, for larger runs by hand):
 * a run has a bounded number of reads (every seal that succeeds is
 * followed by an emission or a writer's CAS, by seal_helps), so the clock
 * stays finite and nothing is hidden by a cap.  Edges the model leaves out
 * (the reader's plain loads of a head, a writer's load of a head before
 * its CAS) only allow more clock values: a check that passes holds under
 * the full assumption.
 *
 * A writer's store on lane l (thread th, record rec), one step a line:
 *   w:1  pick the lane (the CPU the thread is on now); c = clock()
 *   w:2  h = H[l]                                        (16-byte load)
 *   w:3  CAS(H[l], h, {h.seq + 1, max(h.ts, c)}); failed: back to w:2.
 *        The record's seq is h.seq, its ts the new head ts.
 *   w:4  claim the descriptor: RESERVED     (IPFLOOR=2: ts, then RESERVED)
 *   w:5  write the descriptor's ts and writer id       (IPFLOOR=2: the id)
 *   w:6  commit: FINAL (release)
 * Between two steps a writer may be preempted for any number of steps of
 * the others.  Thread A stores NA records (0-2), picking the lane afresh
 * for each (it migrates), and sets the flag after its first; thread B
 * (CAUSAL=1) waits for the flag and stores one; thread C (NC=1) stores
 * one; with SIG=1 a handler interrupts C's store between any two of its
 * steps (C makes no step while it runs), stores one record on either lane
 * as thread C, and returns; then C's store resumes.  OTHERSEAL=n: another
 * reader (one that started at the heads, or gave up a record in progress)
 * seals a lane n times at any time: CAS(H[l], h, {h.seq, max(h.ts, t)}).
 *
 * The reader keeps per lane its position p[l] and lts[l], the ts of the
 * last record it emitted from the lane (0 before the first).  One round:
 *   r:1  for each lane, one step: load desc[p[l]] (the state; if FINAL its
 *        ts and id: the lane is ready, with key (ts, l, p[l]))
 *   r:2  for each lane not ready, one step: load H[l] (16 bytes; HEAD2=1:
 *        two steps, ts then seq, as pk__ring_floor() does).  If
 *        p[l] < H.seq, the record p[l] is in progress: the lane's bound is
 *        (lts[l], l, p[l]) (IPFLOOR=1: max(lts[l], fl[l]), fl[l] the
 *        largest H.ts loaded, or sealed, while the lane was idle at p[l];
 *        IPFLOOR=2: the same, or (ts, l, p[l]) if the descriptor is
 *        RESERVED and so holds the ts).  Else the lane is idle: its bound
 *        is (H.ts, l, p[l]).
 *   r:3  k = the smallest ready key, on lane a.  Emit k (p[a]++,
 *        lts[a] = k.ts) if k < every other lane's bound (keys compared
 *        lexicographically; keys of two lanes are never equal).  Else if
 *        an idle lane b's bound stops k: seal b: t = clock(), read after
 *        r:1; CAS(H[b], h, {h.seq, max(h.ts, t)}) with h the head r:2
 *        loaded (SEALT=2: max(h.ts, t, k.ts + 1), as src/store/lanes.c
 *        does); then a new round, whether the CAS succeeded or not.  Else
 *        (a lane in progress stops k, or nothing is ready) wait until a
 *        descriptor or head it loaded changes; with LOSS=1 it may instead
 *        give up a record in progress: counted lost, p[l]++ (the C code's
 *        time limit).
 * The reader stops when every writer is done and p[l] == H[l].seq for
 * every lane.  Lanes are looked at in the order 0, 1.
 *
 * Abstractions.  SPIN is sequentially consistent; in C the head CAS is
 * acq_rel, the commit a release, the reader's descriptor load an acquire,
 * and the ts and id are read only after FINAL is seen, so the SC outcome
 * is the C outcome.  One descriptor per seq (no laps: in C a descriptor is
 * reused, and the reader must check that it holds seq p[l], not an older
 * lap's FINAL).  Record bodies are left out.  One merging reader (other
 * readers only as OTHERSEAL's seals).  Clock values are small integers:
 * only their order matters.
 *
 * Options: NA (0-2), CAUSAL (0-1, needs NA), NC (0-1), SIG (0-1, needs
 * NC), LOSS (0-1), CLOCK (1: the assumption; 0: a writer's read only ties
 * with or follows the clock), RCLOCK (0: the same for the reader's read,
 * which then may not exceed k.ts; seal_helps is not asserted), SEALT
 * (0: seal with t, 1: t + 1, 2: max(t, k.ts + 1)), HEAD2, IPFLOOR (0-2),
 * IDLETS (1: an idle lane's bound compared by ts alone, strictly: k.ts <
 * H.ts), BLOCKS (1: assert(!passed_ip) where something is emitted past a
 * lane in progress), OTHERSEAL (0-2), ADV (cap on free clock advances).
 *
 * Mutants that must fail (verify/run_spin.sh):
 *   BUG=1  no seal: an idle lane bounds nothing (the reader emits past it)
 *   BUG=2  the writer's ts is its clock read c, not max(h.ts, c): a lane's
 *          ts is not monotone and a seal does not hold
 *   BUG=3  the seal is a plain store of {h.seq, max(h.ts, t)}: it can undo
 *          a writer's CAS in between (the head goes back, a seq is given
 *          out twice)
 *   BUG=4  an idle lane's bound uses lts[l], not H.ts: safe, but the seal
 *          never lifts it and the reader is stuck
 *   BUG=5  an idle lane is compared by ts alone, k.ts <= H.ts: a record
 *          of a lower lane with that same ts can still come
 *   BUG=6  a lane in progress is bounded by H.ts, as an idle one: H.ts is
 *          the newest record's ts, the one in progress may be older
 *   BUG=7  the writer commits FINAL before it writes ts and id
 *   BUG=8  after a seal the reader emits k at once, without a new look:
 *          the seal's CAS may have failed against a writer's
 *   BUG=9  (LOSS) a record given up is counted lost but the reader keeps
 *          its position, and emits it if it is committed after all
 *   BUG=10 the reader reads the clock at the start of its round, before
 *          it looks at the descriptors, and seals with that: the seal may
 *          not lift the bound above a record committed meanwhile
 *   BUG=11 a lane in progress with H.seq == p[l] + 1 is bounded by H.ts
 *          (the record in progress is the newest: H.ts is its ts, unless
 *          another reader sealed the lane since; passes with OTHERSEAL=0)
 *   BUG=12 (HEAD2) the head's halves loaded seq first, then ts: an old seq
 *          with a ts raised by later records
 *   SEALT=1  seal with t + 1 (a ts ahead of every clock read): program
 *          order and causal order break under the physical-clock assumption
 *   CLOCK=0  without the assumption: program or causal order breaks
 *   SEALT=2 RCLOCK=0  a reader's read that ties with k.ts seals with
 *          k.ts + 1, ahead of the clock: causal order between two other
 *          threads breaks (with SEALT=0 the reader only seals again later)
 */
#ifndef NA
#define NA 2		/* records thread A stores, migrating */
#endif
#ifndef CAUSAL
#define CAUSAL 1	/* thread B: after A's flag, one record */
#endif
#ifndef NC
#define NC 1		/* thread C: one record */
#endif
#ifndef SIG
#define SIG 0		/* a handler interrupts C's store, stores one */
#endif
#ifndef LOSS
#define LOSS 0		/* the reader may skip a record in progress */
#endif
#ifdef ADV		/* at most ADV free clock advances in a run */
#define FREEADV	(nadv < ADV) -> now++; nadv++
#else			/* no cap (the clock stays finite: few reads) */
#define FREEADV	true -> now++
#endif
#ifndef CLOCK
#define CLOCK 1		/* the physical-clock assumption */
#endif
#ifndef SEALT
#define SEALT 0		/* the seal writes t + SEALT; 2: max(t, k.ts + 1) */
#endif
#ifndef RCLOCK
#define RCLOCK 1	/* the reader's read is later than what it loaded */
#endif
#ifndef HEAD2
#define HEAD2 0		/* the reader loads a head in two halves, ts first */
#endif
#ifndef IPFLOOR
#define IPFLOOR 0	/* a lane in progress: 1 bound raised by what was seen
			 * idle, 2 also the ts a RESERVED descriptor holds */
#endif
#ifndef IDLETS
#define IDLETS 0	/* compare k with an idle lane's bound by ts alone, strictly */
#endif
#ifndef BLOCKS
#define BLOCKS 0	/* assert that nothing is emitted past a lane in progress */
#endif
#ifndef OTHERSEAL
#define OTHERSEAL 0	/* seals by other readers, at any time */
#endif
#ifndef BUG
#define BUG 0
#endif

#if SIG && !NC
#error "SIG=1 needs NC=1"
#endif
#if CAUSAL && !NA
#error "CAUSAL=1 needs NA >= 1"
#endif

#define L	2
#define NREC	(NA + CAUSAL + NC + SIG)
#define NSEQ	NREC			/* seqs one lane can take */
#define NW	((NA > 0) + CAUSAL + NC + SIG)	/* storing processes */

/* records: A's, then B's, C's, the handler's */
#define RA0	0
#define RA1	1
#define RB	NA
#define RC	(NA + CAUSAL)
#define RH	(NA + CAUSAL + NC)
/* threads (for hb) */
#define TA	0
#define TB	1
#define TC	2

#define FREE	0
#define RES	1
#define FIN	2
#define NONE	255

#define WAIT	0
#define EMIT	1
#define SEAL	2

#define SLOT(l, s)	((l) * NSEQ + (s))
#define MAX(x, y)	((x) > (y) -> (x) : (y))
/* key (t1, l1, s1) < key (t2, l2, s2) */
#define KLT(t1, l1, s1, t2, l2, s2) \
	((t1) < (t2) || ((t1) == (t2) && ((l1) < (l2) || ((l1) == (l2) && (s1) < (s2)))))

/* the store */
byte Hs[L], Ht[L];		/* heads: seq, ts */
byte dst[L * NSEQ];		/* descriptor state */
byte dts[L * NSEQ];		/* descriptor: the record's ts */
byte did[L * NSEQ];		/* descriptor: writer id (record + 1) */

/* the clock and its ghost happens-before values */
byte now = 1;
#ifdef ADV
byte nadv;			/* free advances so far */
#endif
byte hb[3];			/* per thread */
byte hclk[L];			/* carried by a lane's head */
byte dclk[L * NSEQ];		/* carried by a committed descriptor */
bit flag;
byte fclk;			/* carried by the flag */

/* ghosts: each record's key, who holds a seq, what the reader did */
byte rts[NREC], rln[NREC], rsq[NREC];
byte owner[L * NSEQ];
byte epos[NREC];		/* 0, or its place in the emitted stream */
bit lost[NREC];
byte nemit, nlost;
byte lastrec = NONE;
byte wdone;
bit rdone;
bit inh;			/* C's handler is running */
bit sigdone;

#if BUG == 2
#define NEWTS	c
#else
#define NEWTS	MAX(ht, c)
#endif

/* One store of record rec by thread th; its steps need g (C's steps wait
 * while its handler runs). */
inline store(th, rec, g) {
	atomic { g ->					/* w:1 */
		if
		:: ln = 0
		:: ln = 1
		fi;
#if CLOCK
		if
		:: now <= hb[th] -> now = hb[th] + 1	/* forced advance */
		:: else ->
#endif
			if
			:: FREEADV
			:: true -> skip
			fi
#if CLOCK
		fi
#endif
		;
		c = now;
		hb[th] = MAX(hb[th], c);
		printf("MSC: rec %d: lane %d, clock %d\n", rec, ln, c)
	};
	won = 0;
	do
	:: won -> break
	:: else ->
		atomic { g -> hs = Hs[ln]; ht = Ht[ln] };	/* w:2 */
		atomic { g ->					/* w:3 */
			if
			:: Hs[ln] == hs && Ht[ln] == ht ->
				nt = NEWTS;
				Hs[ln] = hs + 1;
				Ht[ln] = nt;
				hb[th] = MAX(hb[th], hclk[ln]);
				hclk[ln] = hb[th];
				rts[rec] = nt;
				rln[rec] = ln;
				rsq[rec] = hs;
				owner[SLOT(ln, hs)] = rec;
				printf("MSC: rec %d: CAS lane %d -> seq %d ts %d\n", rec, ln, hs, nt);
				won = 1
			:: else -> skip
			fi
		}
	od;
#if BUG == 7
	atomic { g -> dst[SLOT(ln, hs)] = RES };
	atomic { g -> dclk[SLOT(ln, hs)] = hb[th]; dst[SLOT(ln, hs)] = FIN };
	atomic { g -> dts[SLOT(ln, hs)] = nt; did[SLOT(ln, hs)] = rec + 1 };
#else
#if IPFLOOR == 2
	atomic { g -> dts[SLOT(ln, hs)] = nt; dst[SLOT(ln, hs)] = RES };	/* w:4 */
	atomic { g -> did[SLOT(ln, hs)] = rec + 1 };				/* w:5 */
#else
	atomic { g -> dst[SLOT(ln, hs)] = RES };		/* w:4 */
	atomic { g -> dts[SLOT(ln, hs)] = nt; did[SLOT(ln, hs)] = rec + 1 };	/* w:5 */
#endif
	atomic { g -> dclk[SLOT(ln, hs)] = hb[th]; dst[SLOT(ln, hs)] = FIN;	/* w:6 */
		printf("MSC: rec %d: FINAL\n", rec) };
#endif
	d_step { ln = 0; c = 0; hs = 0; ht = 0; nt = 0; won = 0 }
}

#if NA
proctype threadA() {
	byte ln, c, hs, ht, nt;
	bit won;

	store(TA, RA0, 1);
	atomic { flag = 1; fclk = hb[TA]; printf("MSC: A sets the flag\n") };
#if NA > 1
	store(TA, RA1, 1);
#endif
	wdone++
}
#endif

#if CAUSAL
proctype threadB() {
	byte ln, c, hs, ht, nt;
	bit won;

	atomic { flag -> hb[TB] = MAX(hb[TB], fclk) };
	store(TB, RB, 1);
	wdone++
}
#endif

#if NC
proctype threadC() {
	byte ln, c, hs, ht, nt;
	bit won;

	store(TC, RC, !inh);
#if SIG
	sigdone;	/* the signal came during the store (at any step) */
#endif
	wdone++
}
#endif

#if SIG
proctype handler() {
	byte ln, c, hs, ht, nt;
	bit won;

	inh = 1;	/* at any step of C's store (C waits for it at its end) */
	store(TC, RH, 1);
	atomic { inh = 0; sigdone = 1 };
	wdone++
}
#endif

#if OTHERSEAL
/* Other readers' seals: CAS(H[l], h, {h.seq, max(h.ts, clock())}) at any time */
proctype sealer() {
	byte i, l, t2, s2, h2;

	do
	:: i < OTHERSEAL ->
		atomic {
			if
			:: l = 0
			:: l = 1
			fi;
			if
			:: FREEADV
			:: true -> skip
			fi;
			t2 = now
		};
		atomic { s2 = Hs[l]; h2 = Ht[l] };
		atomic {
			if
			:: Hs[l] == s2 && Ht[l] == h2 ->
				Ht[l] = MAX(h2, t2);
				hclk[l] = MAX(hclk[l], t2);
				printf("MSC: other reader seals lane %d: ts %d\n", l, Ht[l])
			:: else -> skip
			fi
		};
		d_step { i++; l = 0; t2 = 0; s2 = 0; h2 = 0 }
	:: else -> break
	od
}
#endif

/* the bound an idle lane b at ts T sets, and whether k (lane a) is below it */
#if BUG == 1
#define IDLE_OK(T)	1
#elif BUG == 4
#define IDLE_OK(T)	KLT(kts[a], a, p[a], lts[b], b, p[b])
#elif BUG == 5
#define IDLE_OK(T)	(kts[a] <= (T))
#elif IDLETS
#define IDLE_OK(T)	(kts[a] < (T))
#else
#define IDLE_OK(T)	KLT(kts[a], a, p[a], (T), b, p[b])
#endif
/* the ts of a lane in progress's bound */
#if BUG == 6
#define IP_TS	ht[b]
#elif BUG == 11
#define IP_TS	(hs[b] == p[b] + 1 -> ht[b] : lts[b])
#elif IPFLOOR == 2
#define IP_TS	(st[b] == RES -> kts[b] : MAX(lts[b], fl[b]))
#elif IPFLOOR
#define IP_TS	MAX(lts[b], fl[b])
#else
#define IP_TS	lts[b]
#endif
#if IPFLOOR
#define ADVANCE(i)	p[i]++; fl[i] = 0
#else
#define ADVANCE(i)	p[i]++
#endif

#if SEALT == 2
#define SEALTS	MAX(t, kts[a] + 1)
#else
#define SEALTS	(t + SEALT)
#endif

#define DST(i)	(p[i] < NSEQ -> dst[SLOT(i, p[i])] : FREE)
#define DRAINED	(wdone == NW && p[0] == Hs[0] && p[1] == Hs[1])
/* a lane not ready: its descriptor or head changed since the look */
#define MOVED(i)	(st[i] != FIN && (DST(i) != st[i] || Hs[i] != hs[i] || Ht[i] != ht[i]))

/* r:1 and r:2 for lane i */
inline look(i, g) {
	atomic { g ->
#if BUG == 10
		if
		:: i == 0 -> t = now	/* the round's clock read, before the look */
		:: else -> skip
		fi;
#endif
		st[i] = DST(i);
		if
		:: st[i] == FIN ->
			kts[i] = dts[SLOT(i, p[i])];
			kid[i] = did[SLOT(i, p[i])];
			rhb = MAX(rhb, dclk[SLOT(i, p[i])])
#if IPFLOOR == 2
		:: st[i] == RES -> kts[i] = dts[SLOT(i, p[i])]
#endif
		:: else -> skip
		fi
	};
	if
	:: st[i] != FIN ->
#if HEAD2 && BUG == 12
		atomic { hs[i] = Hs[i] };	/* seq_head, then head_ts */
		atomic {
			ht[i] = Ht[i];
#elif HEAD2
		atomic { ht[i] = Ht[i] };	/* head_ts, then seq_head */
		atomic {
			hs[i] = Hs[i];
#else
		atomic {
			hs[i] = Hs[i];
			ht[i] = Ht[i];
#endif
			head_ok = (p[i] <= hs[i]);	/* a head never goes back */
			assert(head_ok);
			head_ok = 0;
#if IPFLOOR
			if
			:: p[i] == hs[i] -> fl[i] = MAX(fl[i], ht[i])
			:: else -> skip
			fi
#endif
		}
	:: else -> skip
	fi
}

inline emit() {
	atomic {
		rec = owner[SLOT(a, p[a])];
		intact = (kid[a] == rec + 1 && kts[a] == rts[rec]);
		assert(intact);
		once = (epos[rec] == 0 && !lost[rec]);
		assert(once);
		key_order = (lastrec == NONE ||
			KLT(rts[lastrec], rln[lastrec], rsq[lastrec],
			    rts[rec], rln[rec], rsq[rec]));
		assert(key_order);
		printf("MSC: emit rec %d key (%d, %d, %d)\n", rec, kts[a], a, p[a]);
		nemit++;
		epos[rec] = nemit;
		lastrec = rec;
		lts[a] = kts[a];
		ADVANCE(a);
		intact = 0; once = 0; key_order = 0; rec = 0
	}
}

#if LOSS
#if BUG == 9	/* counted once, the position kept */
#define MAYSKIP(i)	!lost[owner[SLOT(i, p[i])]]
#else
#define MAYSKIP(i)	1
#endif
inline skip_lost(i) {
	atomic {
		rec = owner[SLOT(i, p[i])];
		lost[rec] = 1;
		printf("MSC: lost rec %d (lane %d seq %d)\n", rec, i, p[i]);
		nlost++;
#if BUG != 9
		ADVANCE(i);
#endif
		rec = 0
	}
}
#endif

proctype reader() {
	byte p[L], lts[L];			/* position, last emitted ts */
#if IPFLOOR
	byte fl[L];		/* a head ts loaded while the lane was idle at p */
#endif
	byte st[L], kts[L], kid[L], hs[L], ht[L];	/* the look */
	byte rhb, t, a, b, act, rec;
	bit sealed, intact, once, key_order, seal_helps, head_ok;
#if BLOCKS
	bit passed_ip;
#endif

	do
	:: DRAINED -> break
	:: look(0, !(DRAINED));	/* a new round */
		look(1, 1);
		d_step {				/* r:3 */
			a = NONE;
			if
			:: st[0] == FIN -> a = 0
			:: else -> skip
			fi;
			if
			:: st[1] == FIN && (a == NONE ||
			     KLT(kts[1], 1, p[1], kts[0], 0, p[0])) -> a = 1
			:: else -> skip
			fi;
			if
			:: a == NONE -> act = WAIT
			:: else ->
				b = 1 - a;
				if
				:: st[b] == FIN -> act = EMIT
				:: st[b] != FIN && p[b] < hs[b] ->	/* in progress */
					if
					:: KLT(kts[a], a, p[a], IP_TS, b, p[b]) -> act = EMIT;
#if BLOCKS
						passed_ip = 1;
						assert(!passed_ip);
#endif
						skip
					:: else -> act = WAIT
					fi
				:: else ->				/* idle */
					if
					:: IDLE_OK(ht[b]) -> act = EMIT
					:: else -> act = SEAL
					fi
				fi
			fi
		};
		if
		:: act == EMIT -> emit()
		:: act == SEAL ->
#if BUG != 10
			atomic {			/* t = clock() */
				if
#if RCLOCK
				:: now <= rhb -> now = rhb + 1
#endif
				:: else ->
					if
					:: FREEADV
					:: true -> skip
					fi
				fi;
				t = now;
				printf("MSC: seal lane %d: clock %d\n", b, t)
			};
#endif
			atomic {			/* the seal */
#if BUG == 3
				Hs[b] = hs[b];
				Ht[b] = MAX(ht[b], SEALTS);
				hclk[b] = MAX(hclk[b], MAX(rhb, t));
				sealed = 1
#else
				if
				:: Hs[b] == hs[b] && Ht[b] == ht[b] ->
					Ht[b] = MAX(ht[b], SEALTS);
					hclk[b] = MAX(hclk[b], MAX(rhb, t));
					sealed = 1;
#if IPFLOOR
					fl[b] = Ht[b];
#endif
					printf("MSC: sealed lane %d: ts %d\n", b, Ht[b])
				:: else -> sealed = 0
				fi
#endif
			};
#if RCLOCK	/* else a seal may not help: the next round looks again */
			if
			:: sealed ->
				d_step {
					seal_helps = IDLE_OK(MAX(ht[b], SEALTS));
					assert(seal_helps);
					seal_helps = 0
				}
			:: else -> skip
			fi;
#endif
#if BUG == 8
			emit();
#endif
			skip
		:: act == WAIT ->
			if
			:: MOVED(0) || MOVED(1) || DRAINED -> skip
#if LOSS
			:: st[0] != FIN && p[0] < hs[0] && MAYSKIP(0) -> skip_lost(0)
			:: st[1] != FIN && p[1] < hs[1] && MAYSKIP(1) -> skip_lost(1)
#endif
			fi
		fi;
		d_step {
			st[0] = 0; st[1] = 0; kts[0] = 0; kts[1] = 0;
			kid[0] = 0; kid[1] = 0; hs[0] = 0; hs[1] = 0;
			ht[0] = 0; ht[1] = 0; a = 0; b = 0; act = 0;
			t = 0; sealed = 0
		}
	od;
	rdone = 1
}

init {
	byte k, n;
	bit all_once, prog_order, causal;

	atomic {
#if NA
		run threadA();
#endif
#if CAUSAL
		run threadB();
#endif
#if NC
		run threadC();
#endif
#if SIG
		run handler();
#endif
#if OTHERSEAL
		run sealer();
#endif
		run reader()
	};
	(wdone == NW && rdone);
	d_step {
		all_once = 1;
		n = 0;
		k = 0;
		do
		:: k < NREC ->
			if
			:: (epos[k] != 0) == lost[k] -> all_once = 0
			:: else -> skip
			fi;
			n = n + lost[k];
			k++
		:: else -> break
		od;
		all_once = all_once && n == nlost;
		prog_order = 1;
#if NA > 1
		prog_order = (epos[RA0] == 0 || epos[RA1] == 0 || epos[RA0] < epos[RA1]);
#endif
		causal = 1;
#if CAUSAL
		causal = (epos[RA0] == 0 || epos[RB] == 0 || epos[RA0] < epos[RB]);
#endif
	}
	assert(all_once);
	assert(prog_order);
	assert(causal)
}
