// SPDX-License-Identifier: MIT
/*
 * life.c - the store's life: which store is in use (pk__st), opening it
 * (a store file, or anonymous memory), adopting another one while callers
 * go on (the switch: copy the records, move the consoles' positions
 * through the caller's hooks), closing it; and storing one record into it
 * (pk__store()).  The front door decides when; this file knows how.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "printk/console.h"
#include "store/store.h"

struct pk__store_state pk__st = { .mem_fd = -1 };
void (*pk__switch_hook)(void);

/*
 * The store in use: its file (cur_path[0] == 0: anonymous memory) and its
 * data ring's size.  Written by pk_init() only, under init_lock.
 */
static char cur_path[4096];
static unsigned cur_l2;


/*
 * After a fork() a store file is shared by two processes; anonymous
 * memory is not (MAP_PRIVATE: the child writes into its own copy).
 */
void pk__store_fork_shared(void)
{
	if (pk__st.mem && pk__st.mem_fd >= 0)
		atomic_store_explicit(&pk__st.store_shared, true, memory_order_relaxed);
}


/*
 * Set up the record store: @cfg's store file, or anonymous memory.  A
 * store file that cannot be used (pk__persist_open() has said why, once,
 * on stderr) is not fatal: its error goes to *@store_err and records are
 * kept in anonymous memory instead, so that the consoles keep printing.
 * Return: 0, or a negative errno if not even anonymous memory could be had.
 */
struct store {
	void *mem;
	size_t size;
	int fd;			/* a store file, or -1 */
	struct pk_ring ring;
};

/*
 * Give @ring a table of the seqs this process takes (ringbuf.c, "OWN
 * RECORDS"), so that its consoles count only their own lost records.
 * Populated now: a first touch in pk_printk() would cost a page fault
 * (several us) per 512 records until the table's first lap.  Without it
 * (mmap failed) every lost seq is counted, as it was.
 */
static void own_setup(struct pk_ring *ring)
{
	uint64_t words = pk__ring_own_words(ring);
	void *t = mmap(NULL, words * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (t == MAP_FAILED)
		return;
	/*
	 * And touched: on a virtual machine a page's first access can exit
	 * to the hypervisor even when populated (measured here: 41 calls of
	 * 20000 over 3 us, one per page of table, none once touched).
	 */
	memset(t, 0, words * sizeof(uint64_t));
	ring->own = t;
	ring->own_mask = words - 1;
}

static void own_release(struct pk_ring *ring)
{
	if (ring->own)
		munmap((void *)ring->own, (ring->own_mask + 1) * sizeof(uint64_t));
	ring->own = NULL;
}

/*
 * Note whether another process may store into the store just adopted.
 * The count of joins first: one who joins after it is seen either way.
 */
static void store_share_note(void)
{
	bool shared = false;

	if (pk__st.mem_fd >= 0) {
		pk__st.joins_seen = atomic_load_explicit(&pk__st.ring.h->joins, memory_order_seq_cst);
		shared = pk__persist_live(pk__st.mem_fd, pk__st.mem);
	}
	atomic_store_explicit(&pk__st.store_shared, shared, memory_order_relaxed);
}

bool pk__store_sole(void)
{
	if (pk__st.mem_fd < 0)
		return true;	/* anonymous and private: a fork child has its own copy */
	/* Relaxed: a join seen late costs, at most, records counted as lost. */
	return !atomic_load_explicit(&pk__st.store_shared, memory_order_relaxed) &&
	       atomic_load_explicit(&pk__st.ring.h->joins, memory_order_relaxed) == pk__st.joins_seen;
}

static void store_release(struct store *st)
{
	own_release(&st->ring);
	if (st->fd >= 0)
		pk__persist_close(st->mem, st->size, st->fd);
	else
		munmap(st->mem, st->size);
}

/*
 * Map @cfg's store into @st.  @fallback: if the file cannot be used, map
 * anonymous memory instead (its error in *@store_err).  Return: 0, or a
 * negative errno (without @fallback, the file's).
 */
static int store_map(const struct pk_config *cfg, bool fallback, struct store *st, int *store_err)
{
	unsigned l2;
	void *mem;
	size_t size;
	int ret, fd = -1;

	*store_err = 0;
	if (cfg->buffer_path) {
		ret = pk__persist_open(cfg, &mem, &size, &fd);
		if (ret < 0) {
			*store_err = ret;
			fd = -1;
			if (!fallback)
				return ret;
		}
	}
	if (fd < 0) {
		l2 = pk__ring_data_log2_for(cfg->buffer_size);
		if (!l2)
			return -EINVAL;
		size = pk__ring_region_size(l2);
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return -errno;
		pk__ring_format(mem, l2, 0);
	}
	st->mem = mem;
	st->size = size;
	st->fd = fd;
	ret = pk__ring_attach(&st->ring, mem, size);
	if (ret < 0) {
		store_release(st);
		return ret;
	}
	own_setup(&st->ring);
	return 0;
}

/* Remember which store @st is (@cfg's, unless it fell back to memory). */
static void store_note(const struct pk_config *cfg, const struct store *st)
{
	cur_path[0] = '\0';
	if (st->fd >= 0 && cfg->buffer_path && strlen(cfg->buffer_path) < sizeof(cur_path))
		strcpy(cur_path, cfg->buffer_path);
	cur_l2 = (unsigned)__builtin_ctzll(st->ring.data_size);
}

int pk__store_open(const struct pk_config *cfg, int *store_err)
{
	struct store st;
	int ret;

	ret = store_map(cfg, true, &st, store_err);
	if (ret < 0)
		return ret;
	store_note(cfg, &st);
	pk__st.ring = st.ring;
	pk__st.mem = st.mem;
	pk__st.mem_size = st.size;
	pk__st.mem_fd = st.fd;
	/*
	 * Relaxed: both are read only after pk__g.state is published
	 * (release), or by this thread.  A record of another process stored
	 * before this load is not ours; one stored after it is told apart by
	 * its pid.
	 */
	atomic_store_explicit(&pk__g.pid, (uint32_t)getpid(), memory_order_relaxed);
	pk__st.attach_seq = atomic_load_explicit(&pk__st.ring.h->seq_head, memory_order_relaxed);
	store_share_note();
	return 0;
}

void pk__store_close(void)
{
	if (!pk__st.mem)
		return;
	own_release(&pk__st.ring);
	if (pk__st.mem_fd >= 0)
		pk__persist_close(pk__st.mem, pk__st.mem_size, pk__st.mem_fd);
	else
		munmap(pk__st.mem, pk__st.mem_size);
	pk__st.mem = NULL;
	pk__st.mem_fd = -1;
}

/* Is @path the store PK_BUFFER names (as pk_config_init() reads it)? */
bool pk__store_from_env(const char *path)
{
	const char *v = secure_getenv("PK_BUFFER");

	return path && v && !strcmp(v, path);
}

/* Is @cfg's store the one in use? */
bool pk__store_same(const struct pk_config *cfg)
{
	if (cfg->buffer_path)
		return !strcmp(cur_path, cfg->buffer_path);
	return !cur_path[0] && pk__ring_data_log2_for(cfg->buffer_size) == cur_l2;
}

/*
 * What a console at old seq @pos missed before the first record copied at
 * or after it: the lost notes written for it, summed.  Carried to the
 * console itself, since in a store smaller than the backlog the writers
 * overwrite the notes (the first entries of the new store) before a
 * lagging console gets to them, and an overwritten note counted as one
 * lost record where it stood for thousands.
 */
struct carry {
	uint64_t pos;
	struct pk__lost_note note;
	bool settled;		/* a record at or after pos was copied */
};

/* Old seq -> new seq of the records copied into another store. */
struct seq_map {
	uint64_t *old_seq;
	uint64_t *new_seq;	/* where old_seq[i] went (another process may write between) */
	uint8_t *is_note;	/* old_seq[i] stands for a lost note, not a record */
	size_t n, cap;
	uint64_t new_head;
	struct carry carry[PK_MAX_CONSOLES];
	unsigned ncarry;
};

static void seq_map_free(struct seq_map *m)
{
	free(m->old_seq);
	free(m->new_seq);
	free(m->is_note);
	m->old_seq = m->new_seq = NULL;
	m->is_note = NULL;
}

/*
 * Where a console at old @seq goes on: the first copied record at or after
 * it; for a position whose carry was kept, past the notes it carries.
 */
static uint64_t map_seq(uint64_t seq, void *arg, struct pk__lost_note *carry, bool *has_carry)
{
	const struct seq_map *m = arg;
	size_t lo = 0, hi = m->n;
	unsigned i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->old_seq[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	*has_carry = false;
	for (i = 0; i < m->ncarry; i++) {
		if (m->carry[i].pos != seq)
			continue;
		*carry = m->carry[i].note;
		*has_carry = true;
		while (lo < m->n && m->is_note[lo])
			lo++;
		break;
	}
	return lo < m->n ? m->new_seq[lo] : m->new_head;
}

/* Record @from, lost: its counts go to every console still before its first copy. */
static void carry_add(struct seq_map *m, uint64_t from, const struct pk__lost_note *note)
{
	unsigned i, l;

	for (i = 0; i < m->ncarry; i++) {
		if (m->carry[i].settled || m->carry[i].pos > from)
			continue;
		for (l = 0; l < 9; l++)
			m->carry[i].note.cum[l] += note->cum[l];
		m->carry[i].note.unknown += note->unknown;
	}
}

/* Record @seq, copied: consoles at or before it have their first copy. */
static void carry_settle(struct seq_map *m, uint64_t seq)
{
	unsigned i;

	for (i = 0; i < m->ncarry; i++)
		if (m->carry[i].pos <= seq)
			m->carry[i].settled = true;
}

/*
 * A lost note in @st for the seqs [@from, @to) of the store in use, all
 * lost to its reader: those of them each console level would have printed.
 */
static void copy_note(struct store *st, struct seq_map *m, uint64_t from, uint64_t to)
{
	struct pk_ring_filter f;
	struct pk__lost_note note = { { 0 }, 0 };
	struct pk_ring_lost l;
	uint64_t seq;
	int lvl;

	f.pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	f.own = true;
	f.sole = pk__store_sole();
	for (lvl = 0; lvl <= 8; lvl++) {
		l.counted = l.unknown = 0;
		f.max_level = lvl;
		pk__ring_lost_counted(&pk__st.ring, &f, from, to, &l);
		note.cum[lvl] = l.counted;
		if (lvl == 8)
			note.unknown = l.unknown;
	}
	if (!note.cum[8])
		return;
	carry_add(m, from, &note);
	if (m->n >= m->cap)
		return;
	if (pk__lost_note_write(&st->ring, &note, &seq) == 0) {
		m->is_note[m->n] = 1;
		m->new_seq[m->n] = seq;
		m->old_seq[m->n++] = from;
	}
}

/*
 * The seqs [@from, @to) of the store in use were lost to the copy: note
 * them, cut where a console stands, so that each console, wherever in
 * them it stood, goes on at a note of all it missed (map_seq()).
 */
static void copy_gap(struct store *st, struct seq_map *m, const uint64_t *pos, unsigned npos,
		     uint64_t from, uint64_t to)
{
	uint64_t cut;
	unsigned i;

	while (from < to) {
		cut = to;
		for (i = 0; i < npos; i++)
			if (pos[i] > from && pos[i] < cut)
				cut = pos[i];
		copy_note(st, m, from, cut);
		from = cut;
	}
}

/*
 * The first seq of the store in use, from @from on, to copy into @st: as
 * many of this process's newest records as @st holds, so that the copy
 * does not overwrite its own first records (it did: switching to a
 * smaller store while a console lagged lost thousands without a count).
 * What is older is left out and counted where the consoles meet it, as
 * lost records are (copy_gap()).  A store as large as the one in use, or
 * larger, holds all it holds, written the same way: everything is copied.
 * Into a smaller one, records fill seven eighths of its data ring: the
 * rest is for the data chunks' waste (the tail of each 4 KiB chunk that a
 * record did not fit, which for records of a few hundred bytes is a
 * tenth) and the lost notes.  Should the copy overrun its first records
 * all the same, a console counts them (pk__con_rebase()); the margin only
 * keeps that count low (at a fixed three quarters, a switch between two
 * stores of one size dropped up to 22 % of what fitted).
 * Return: the seq, @from when everything fits, or -ENOMEM.
 */
static int64_t copy_start(struct store *st, uint64_t from, uint32_t pid)
{
	struct sized { uint64_t seq, size; } *v;
	uint64_t room = st->ring.data_size - st->ring.data_size / 8;
	uint64_t descs = st->ring.desc_mask + 1;
	uint64_t slots = descs > 16 * PK_MAX_CONSOLES ? descs - 4 * PK_MAX_CONSOLES - 4 : descs / 2;
	uint64_t n = 0, cap = pk__st.ring.desc_mask + 1, used = 0, k;
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;

	if (st->ring.data_size >= pk__st.ring.data_size && descs >= cap)
		return (int64_t)from;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	pk__ring_reader_init(&rd, &pk__st.ring, true);
	if (rd.next < from)
		rd.next = from;
	while (n < cap && pk__ring_read(&rd, &rec) == 1)
		if (rec.meta.pid == pid)
			v[n++] = (struct sized){ rec.seq, pk__ring_footprint(rec.len) };
	for (k = n; k > 0 && n - k < slots && used + v[k - 1].size <= room; k--)
		used += v[k - 1].size;
	from = k ? v[k].seq : from;
	free(v);
	return (int64_t)from;
}

/*
 * Copy this process's records from the store in use into @st, in order,
 * keeping their time, thread, level and flags.  No writer is inside the
 * gate: the old store is still.  Records lost in it that a console has
 * not passed yet (overwritten before it got there, or given up on) are
 * counted by lost notes in their place: the copy numbers the survivors
 * afresh, and a console would see no gap.  Return: 0 or -ENOMEM.
 */
static int store_copy(struct store *st, struct seq_map *m, const struct pk__store_switch_ops *ops)
{
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	uint32_t pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	uint64_t seq, expect, head, cap = pk__st.ring.desc_mask + 1, pos[PK_MAX_CONSOLES];
	int64_t start;
	unsigned npos, i;
	int ret = 0;

	/* Each record copied, and at most one note before each and one per console. */
	m->cap = 2 * cap + 2 * PK_MAX_CONSOLES + 2;
	m->old_seq = calloc(m->cap, sizeof(*m->old_seq));
	m->new_seq = calloc(m->cap, sizeof(*m->new_seq));
	m->is_note = calloc(m->cap, 1);
	if (!m->old_seq || !m->new_seq || !m->is_note) {
		seq_map_free(m);
		return -ENOMEM;
	}
	m->n = 0;
	/* Postmortem: a record still in progress has no writer left to finish it. */
	pk__ring_reader_init(&rd, &pk__st.ring, true);
	if (rd.next < pk__st.attach_seq)
		rd.next = pk__st.attach_seq;
	/* Losses before every console's position were reported already. */
	npos = ops->positions(pos, PK_MAX_CONSOLES);
	for (i = 0; i < npos; i++)
		m->carry[m->ncarry++] = (struct carry){ .pos = pos[i] };
	head = pk__ring_next_seq(&pk__st.ring);
	expect = head;
	for (i = 0; i < npos; i++)
		if (pos[i] < expect)
			expect = pos[i];
	if (expect < pk__st.attach_seq)
		expect = pk__st.attach_seq;
	start = copy_start(st, rd.next, pid);
	if (start < 0) {
		seq_map_free(m);
		return (int)start;
	}
	while (m->n + 2 * PK_MAX_CONSOLES + 1 < m->cap && (ret = pk__ring_read(&rd, &rec)) == 1) {
		if (rec.seq < (uint64_t)start)
			continue;	/* no room: counted as lost below, before the first copied */
		if (rec.seq > expect)
			copy_gap(st, m, pos, npos, expect, rec.seq);
		if (rec.seq + 1 > expect)
			expect = rec.seq + 1;
		if (rec.meta.pid != pid)
			continue;	/* another process's, in a shared store file */
		rec.meta.flags &= (uint16_t)~PK_REC_NOEOL;
		if (pk__ring_write(&st->ring, &rec.meta, rec.text, rec.len, false, &seq) == 0) {
			m->new_seq[m->n] = seq;
			m->old_seq[m->n++] = rec.seq;
			carry_settle(m, rec.seq);
		}
	}
	/* And what was lost after the last record read (given up on in progress). */
	if (ret != 1 && expect < head)
		copy_gap(st, m, pos, npos, expect, head);
	m->new_head = pk__ring_next_seq(&st->ring);
	return 0;
}


/*
 * Adopt @cfg's store: open it, keep callers out (they wait for the switch,
 * or store into the early store if they cannot: see THE SWITCH WORD), copy
 * the records over, move every console's position, release the old store.
 * The library's threads are stopped.  Return: 0, or a negative errno with
 * the store in use unchanged.
 */
int pk__store_switch(const struct pk_config *cfg, const struct pk__store_switch_ops *ops)
{
	struct store st, old = { pk__st.mem, pk__st.mem_size, pk__st.mem_fd, pk__st.ring };
	struct seq_map m = { 0 };
	uint64_t attach;
	int ret, err;

	ret = store_map(cfg, false, &st, &err);
	if (ret < 0)
		return ret;
	attach = atomic_load_explicit(&st.ring.h->seq_head, memory_order_relaxed);
	pk__switch_begin();
	/* LMM(gate:B), LMM(switch:A) */
	atomic_store_explicit(&pk__g.state, PK__INITIALIZING, memory_order_seq_cst);
	if (!pk__gates_drain(2000)) {
		atomic_store_explicit(&pk__g.state, PK__READY, memory_order_release);
		pk__switch_end();
		store_release(&st);
		return -EBUSY;
	}
	if (pk__switch_hook)
		pk__switch_hook();
	ret = store_copy(&st, &m, ops);
	if (ret < 0) {
		atomic_store_explicit(&pk__g.state, PK__READY, memory_order_release);
		pk__switch_end();
		store_release(&st);
		return ret;
	}
	pk__ring_finalize_last(&pk__st.ring);
	pk__st.ring = st.ring;
	pk__st.mem = st.mem;
	pk__st.mem_size = st.size;
	pk__st.mem_fd = st.fd;
	pk__st.attach_seq = attach;
	store_share_note();
	/* A thread's open record (pk_cont) was in the old store. */
	atomic_fetch_add_explicit(&pk__st.store_gen, 1, memory_order_relaxed);
	pk__self.open_valid = false;
	ops->rebase(map_seq, &m);
	seq_map_free(&m);
	store_note(cfg, &st);
	/* Publishes the new store to the callers (pk__gate_enter, printk_ready). */
	atomic_store_explicit(&pk__g.state, PK__READY, memory_order_release);
	pk__switch_end();
	store_release(&old);
	/* What callers stored meanwhile. */
	if (pk__early_pending())
		pk__early_migrate();
	return 0;
}

int pk__store(int level, unsigned flags, const char *text, size_t len, uint64_t *seqp)
{
	struct pk_ring_meta m;
	uint64_t *slot, seq = PK__NO_SEQ;
	unsigned depth;
	size_t max = PK_RECORD_MAX;
	int ret;

	pk__crash_stack_lazy();
	/* A module prefix and a fields block come on top of the text's maximum. */
	max += pk__rec_extra(flags, text, len);
	if (len > max) {
		len = max;
		flags |= PK_REC_TRUNC;
	}
	if (flags & PK_REC_TRUNC)
		atomic_fetch_add_explicit(&pk__st.ring.h->truncated, 1, memory_order_relaxed);
	if (pk__self.emergency)
		flags |= PK_REC_EMERG;
	m.ts_ns = pk__now_ns();
	m.tid = pk__tid();
	m.pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	m.level = (uint8_t)level;
	m.facility = (uint8_t)atomic_load_explicit(&pk__g.facility, memory_order_relaxed);
	m.flags = (uint16_t)flags;
	/*
	 * Announce the record to a crash handler on this thread before the
	 * store takes its seq; a handler nested deeper than the slots has
	 * its records waited for like other threads' (bounded).
	 */
	depth = pk__self.wdepth;
	slot = depth < PK__ARRAY_SIZE(pk__self.wseq) ? &pk__self.wseq[depth] : &seq;
	*(volatile uint64_t *)slot = PK__NO_SEQ;
	*(volatile unsigned *)&pk__self.wdepth = depth + 1;
	ret = pk__ring_write(&pk__st.ring, &m, text, (uint32_t)len, (flags & PK_REC_NOEOL) != 0, slot);
	seq = *slot;
	*(volatile unsigned *)&pk__self.wdepth = depth;
	if (seqp)
		*seqp = seq;
	return ret;
}

int pk_stats_get(struct pk_stats *st)
{
	const struct pk_ring *ring = &pk__st.ring;
	const struct pk_ring_hdr *h;

	if (!st)
		return -EINVAL;
	if (!pk__gate_enter())
		return -ENODEV;
	h = ring->h;
	memset(st, 0, sizeof(*st));
	st->first_seq = h->first_seq;
	st->next_seq = atomic_load_explicit(&h->seq_head, memory_order_acquire);
	st->oldest_seq = pk__ring_oldest(ring, false);
	st->stored = st->next_seq - st->first_seq;
	st->overwritten = st->oldest_seq - st->first_seq;
	st->truncated = atomic_load_explicit(&h->truncated, memory_order_relaxed);
	st->lost = atomic_load_explicit(&h->lost, memory_order_relaxed);
	st->reserve_failed = atomic_load_explicit(&h->reserve_failed, memory_order_relaxed);
	st->refused = atomic_load_explicit(&h->refused, memory_order_relaxed);
	st->suppressed = atomic_load_explicit(&h->suppressed, memory_order_relaxed);
	st->eager = atomic_load_explicit(&h->eager, memory_order_relaxed);
	st->data_size = ring->data_size;
	st->desc_count = ring->desc_mask + 1;
	st->consoles_failed = atomic_load_explicit(&pk__g.consoles_failed, memory_order_relaxed);
	pk__gate_exit();
	return 0;
}
