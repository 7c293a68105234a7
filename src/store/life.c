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
static unsigned cur_l2, cur_lanes;


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
	struct pk_lanes lanes;
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

static void own_setup_all(struct pk_lanes *ls)
{
	unsigned i;

	for (i = 0; i < ls->n; i++)
		own_setup(&ls->lane[i]);
}

static void own_release_all(struct pk_lanes *ls)
{
	unsigned i;

	for (i = 0; i < ls->n; i++)
		own_release(&ls->lane[i]);
}

void pk__store_heads(struct pk__spos *out)
{
	unsigned i;

	for (i = 0; i < pk__st.lanes.n; i++)
		out->s[i] = pk__ring_next_seq(pk__lane(i));
}

void pk__store_finalize_last(void)
{
	unsigned i;

	for (i = 0; i < pk__st.lanes.n; i++)
		pk__ring_finalize_last(pk__lane(i));
}

/*
 * Note whether another process may store into the store just adopted.
 * The count of joins first: one who joins after it is seen either way.
 */
static void store_share_note(void)
{
	bool shared = false;

	if (pk__st.mem_fd >= 0) {
		pk__st.joins_seen = atomic_load_explicit(&pk__lane(0)->h->joins, memory_order_seq_cst);
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
	       atomic_load_explicit(&pk__lane(0)->h->joins, memory_order_relaxed) == pk__st.joins_seen;
}

static void store_release(struct store *st)
{
	own_release_all(&st->lanes);
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
	unsigned l2, n, lane_l2;
	void *mem;
	size_t size;
	int ret, fd = -1;

	*store_err = 0;
	if (cfg->buffer_path) {
		ret = pk__persist_open_lanes(cfg, cfg->lanes, &mem, &size, &fd);
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
		n = pk__lanes_for(cfg->lanes, l2, &lane_l2);
		size = pk__lanes_region_size(n, lane_l2);
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return -errno;
		pk__lanes_format(mem, n, lane_l2, 0);
	}
	st->mem = mem;
	st->size = size;
	st->fd = fd;
	memset(&st->lanes, 0, sizeof(st->lanes));
	ret = pk__lanes_attach(&st->lanes, mem, size);
	if (ret < 0) {
		store_release(st);
		return ret;
	}
	own_setup_all(&st->lanes);
	return 0;
}

/* Remember which store @st is (@cfg's, unless it fell back to memory). */
static void store_note(const struct pk_config *cfg, const struct store *st)
{
	cur_path[0] = '\0';
	if (st->fd >= 0 && cfg->buffer_path && strlen(cfg->buffer_path) < sizeof(cur_path))
		strcpy(cur_path, cfg->buffer_path);
	cur_lanes = st->lanes.n;
	cur_l2 = (unsigned)__builtin_ctzll(st->lanes.lane[0].data_size) +
		 (unsigned)__builtin_ctz(st->lanes.n);
}

int pk__store_open(const struct pk_config *cfg, int *store_err)
{
	struct store st;
	unsigned i;
	int ret;

	ret = store_map(cfg, true, &st, store_err);
	if (ret < 0)
		return ret;
	store_note(cfg, &st);
	pk__st.lanes = st.lanes;
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
	for (i = 0; i < pk__st.lanes.n; i++)
		pk__st.attach_seq[i] = atomic_load_explicit(&pk__lane(i)->h->seq_head,
							    memory_order_relaxed);
	store_share_note();
	return 0;
}

void pk__store_close(void)
{
	if (!pk__st.mem)
		return;
	own_release_all(&pk__st.lanes);
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
	unsigned l2 = pk__ring_data_log2_for(cfg->buffer_size), lane_l2;

	if (cfg->buffer_path)
		return !strcmp(cur_path, cfg->buffer_path);
	return !cur_path[0] && l2 == cur_l2 && pk__lanes_for(cfg->lanes, l2, &lane_l2) == cur_lanes;
}

/*
 * THE COPY (a store switch)
 *
 * This process's records are copied from the store in use into the new
 * one in the merged order of the old lanes (lanes.c), old lane i into new
 * lane i mod N' (N' the new store's lanes), keeping their time, thread,
 * level and flags.  So within each new lane the records keep their key
 * order, and a console's new position in lane j is the smallest of its
 * old lanes' mapped positions: what a console printed is a prefix of the
 * merged order, so nothing after that point in lane j was printed.
 *
 * What a console at an old position missed before the first record
 * copied at or after it, in each old lane (the lost notes written for it,
 * summed) is carried to the console itself, since in a store smaller than
 * the backlog the writers overwrite the notes (the first entries of the
 * new store) before a lagging console gets to them, and an overwritten
 * note counted as one lost record where it stood for thousands.
 */
struct carry {
	struct pk__spos pos;
	struct pk__lost_note note[PK_LANES_MAX];	/* by old lane */
	bool settled[PK_LANES_MAX];	/* a record at or after pos was copied */
};

/* Old seq -> new seq of one old lane's records copied into another store. */
struct lane_map {
	uint64_t *old_seq;
	uint64_t *new_seq;	/* where old_seq[i] went (another process may write between) */
	uint8_t *is_note;	/* old_seq[i] stands for a lost note, not a record */
	size_t n, cap;
};

struct seq_map {
	unsigned old_n, new_n;
	struct lane_map lane[PK_LANES_MAX];	/* by old lane */
	uint64_t new_head[PK_LANES_MAX];	/* by new lane */
	struct carry carry[PK_MAX_CONSOLES];
	unsigned ncarry;
};

static void seq_map_free(struct seq_map *m)
{
	unsigned i;

	for (i = 0; i < PK_LANES_MAX; i++) {
		free(m->lane[i].old_seq);
		free(m->lane[i].new_seq);
		free(m->lane[i].is_note);
		m->lane[i].old_seq = m->lane[i].new_seq = NULL;
		m->lane[i].is_note = NULL;
	}
}

/* Where old lane @i's position @seq goes on in its new lane. */
static uint64_t map_lane(const struct seq_map *m, unsigned i, uint64_t seq, bool past_notes)
{
	const struct lane_map *l = &m->lane[i];
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->old_seq[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (past_notes)
		while (lo < l->n && l->is_note[lo])
			lo++;
	return lo < l->n ? l->new_seq[lo] : m->new_head[i % m->new_n];
}

/*
 * Where a console at old @old goes on, lane by lane; for a position whose
 * carry was kept, past the notes it carries, and the carry summed per new
 * lane.
 */
static void map_pos(const struct pk__spos *old, struct pk__spos *now, void *arg,
		    struct pk__lost_note *carry, bool *has_carry)
{
	const struct seq_map *m = arg;
	const struct carry *c = NULL;
	unsigned i, j, l;
	uint64_t v;

	/*
	 * The carry only where one old lane goes into a new lane.  Into a
	 * store of fewer lanes several old lanes share one: the console starts
	 * at the first of their mapped positions and reads the others' notes
	 * in-band, so a carry would count them twice.
	 */
	for (i = 0; i < m->ncarry && !c && m->old_n <= m->new_n; i++)
		if (!memcmp(m->carry[i].pos.s, old->s, m->old_n * sizeof(old->s[0])))
			c = &m->carry[i];
	for (j = 0; j < m->new_n; j++) {
		now->s[j] = UINT64_MAX;
		has_carry[j] = false;
		memset(&carry[j], 0, sizeof(carry[j]));
	}
	for (i = 0; i < m->old_n; i++) {
		j = i % m->new_n;
		v = map_lane(m, i, old->s[i], c != NULL);
		if (v < now->s[j])
			now->s[j] = v;
		if (!c)
			continue;
		has_carry[j] = true;
		for (l = 0; l < 9; l++)
			carry[j].cum[l] += c->note[i].cum[l];
		carry[j].unknown += c->note[i].unknown;
	}
	for (j = 0; j < m->new_n; j++)
		if (now->s[j] == UINT64_MAX)
			now->s[j] = m->new_head[j];
}

/* Old lane @i's record @from, lost: its counts go to every console still before its first copy. */
static void carry_add(struct seq_map *m, unsigned i, uint64_t from, const struct pk__lost_note *note)
{
	unsigned k, l;

	for (k = 0; k < m->ncarry; k++) {
		struct carry *c = &m->carry[k];

		if (c->settled[i] || c->pos.s[i] > from)
			continue;
		for (l = 0; l < 9; l++)
			c->note[i].cum[l] += note->cum[l];
		c->note[i].unknown += note->unknown;
	}
}

/* Old lane @i's record @seq, copied: consoles at or before it have their first copy there. */
static void carry_settle(struct seq_map *m, unsigned i, uint64_t seq)
{
	unsigned k;

	for (k = 0; k < m->ncarry; k++)
		if (m->carry[k].pos.s[i] <= seq)
			m->carry[k].settled[i] = true;
}

/*
 * A lost note in @st for the seqs [@from, @to) of old lane @i, all lost to
 * its reader: those of them each console level would have printed.  It
 * takes timestamp @ts (the next record's, so that the new lane's records
 * keep their times: a lane's timestamps never fall).
 */
static void copy_note(struct store *st, struct seq_map *m, unsigned i, uint64_t from, uint64_t to,
		      uint64_t ts)
{
	struct lane_map *lm = &m->lane[i];
	struct pk_ring_filter f = { .batch = 0 };
	struct pk__lost_note note = { { 0 }, 0 };
	struct pk_ring_lost l;
	uint64_t seq;
	int lvl;

	f.pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	f.own = true;
	f.sole = pk__store_sole();
	for (lvl = 0; lvl <= 8; lvl++) {
		l.counted = l.unknown = l.filtered = 0;
		f.max_level = lvl;
		pk__ring_lost_counted(pk__lane(i), &f, from, to, &l);
		note.cum[lvl] = l.counted;
		if (lvl == 8)
			note.unknown = l.unknown;
	}
	if (!note.cum[8])
		return;
	carry_add(m, i, from, &note);
	if (lm->n >= lm->cap)
		return;
	if (pk__lost_note_write(&st->lanes.lane[i % m->new_n], &note, ts, &seq) == 0) {
		lm->is_note[lm->n] = 1;
		lm->new_seq[lm->n] = seq;
		lm->old_seq[lm->n++] = from;
	}
}

/*
 * Old lane @i's seqs [@from, @to) were lost to the copy: note them, cut
 * where a console stands, so that each console, wherever in them it
 * stood, goes on at a note of all it missed (map_pos()).
 */
static void copy_gap(struct store *st, struct seq_map *m, const struct pk__spos *pos,
		     unsigned npos, unsigned i, uint64_t from, uint64_t to, uint64_t ts)
{
	uint64_t cut;
	unsigned k;

	while (from < to) {
		cut = to;
		for (k = 0; k < npos; k++)
			if (pos[k].s[i] > from && pos[k].s[i] < cut)
				cut = pos[k].s[i];
		copy_note(st, m, i, from, cut, ts);
		from = cut;
	}
}

/*
 * The first seq of old lane @i, from @from on, to copy into @st: as many
 * of this process's newest records as its share of the new lane holds,
 * so that the copy does not overwrite its own first records (it did:
 * switching to a smaller store while a console lagged lost thousands
 * without a count).  What is older is left out and counted where the
 * consoles meet it, as lost records are (copy_gap()).  A new lane as large
 * as the old one, or larger, shared by no other old lane, holds all it
 * holds, written the same way: everything is copied.  Otherwise records
 * fill seven eighths of the share: the rest is for the data chunks' waste
 * (the tail of each 4 KiB chunk that a record did not fit, which for
 * records of a few hundred bytes is a tenth) and the lost notes.  Should
 * the copy overrun its first records all the same, a console counts them
 * (pk__con_rebase()); the margin only keeps that count low (at a fixed
 * three quarters, a switch between two stores of one size dropped up to
 * 22 % of what fitted).
 * Return: the seq, @from when everything fits, or -ENOMEM.
 */
static int64_t copy_start(struct store *st, const struct seq_map *m, unsigned i, uint64_t from,
			  uint32_t pid)
{
	struct sized { uint64_t seq, size; } *v;
	const struct pk_ring *to = &st->lanes.lane[i % m->new_n];
	unsigned share = (m->old_n + m->new_n - 1) / m->new_n;
	uint64_t room = (to->data_size - to->data_size / 8) / share;
	uint64_t descs = (to->desc_mask + 1) / share;
	uint64_t slots = descs > 16 * PK_MAX_CONSOLES ? descs - 4 * PK_MAX_CONSOLES - 4 : descs / 2;
	uint64_t n = 0, cap = pk__lane(i)->desc_mask + 1, used = 0, k;
	struct pk_ring_reader rd;
	struct pk_ring_rec *rec;

	if (share == 1 && to->data_size >= pk__lane(i)->data_size && descs >= cap)
		return (int64_t)from;
	v = malloc(cap * sizeof(*v));
	rec = malloc(sizeof(*rec));
	if (!v || !rec) {
		free(v);
		free(rec);
		return -ENOMEM;
	}
	pk__ring_reader_init(&rd, pk__lane(i), true);
	if (rd.next < from)
		rd.next = from;
	while (n < cap && pk__ring_read(&rd, rec) == 1)
		if (rec->meta.pid == pid)
			v[n++] = (struct sized){ rec->seq, pk__ring_footprint(rec->len) };
	for (k = n; k > 0 && n - k < slots && used + v[k - 1].size <= room; k--)
		used += v[k - 1].size;
	from = k ? v[k].seq : from;
	free(v);
	free(rec);
	return (int64_t)from;
}

/*
 * Copy this process's records from the store in use into @st (THE COPY
 * above).  No writer is inside the gate: the old store is still.  Records
 * lost in it that a console has not passed yet (overwritten before it got
 * there, or given up on) are counted by lost notes in their place: the
 * copy numbers the survivors afresh, and a console would see no gap.
 * Return: 0 or -ENOMEM.
 */
static int store_copy(struct store *st, struct seq_map *m, const struct pk__store_switch_ops *ops)
{
	struct pk_lanes_reader *lr = NULL;
	struct pk_ring_rec *buf = NULL, *rec;
	uint32_t pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	uint64_t seq, expect[PK_LANES_MAX], head[PK_LANES_MAX], start[PK_LANES_MAX], last_ts = 0;
	struct pk__spos *pos = NULL;
	unsigned npos, i, k, old_n = pk__st.lanes.n;
	int64_t s;
	int ret = -ENOMEM;

	m->old_n = old_n;
	m->new_n = st->lanes.n;
	for (i = 0; i < old_n; i++) {
		struct lane_map *l = &m->lane[i];
		uint64_t cap = pk__lane(i)->desc_mask + 1;

		/* Each record copied, and at most one note before each and one per console. */
		l->cap = 2 * cap + 2 * PK_MAX_CONSOLES + 2;
		l->old_seq = calloc(l->cap, sizeof(*l->old_seq));
		l->new_seq = calloc(l->cap, sizeof(*l->new_seq));
		l->is_note = calloc(l->cap, 1);
		l->n = 0;
		if (!l->old_seq || !l->new_seq || !l->is_note)
			goto out;
	}
	lr = malloc(sizeof(*lr));
	buf = calloc(old_n, sizeof(*buf));
	pos = calloc(PK_MAX_CONSOLES, sizeof(*pos));
	if (!lr || !buf || !pos)
		goto out;
	/* Post-mortem: a record still in progress has no writer left to finish it. */
	pk__lanes_reader_init(lr, &pk__st.lanes, buf, true, false);
	/* Losses before every console's position were reported already. */
	npos = ops->positions(pos, PK_MAX_CONSOLES);
	m->ncarry = 0;
	for (k = 0; k < npos; k++) {
		memset(&m->carry[m->ncarry], 0, sizeof(m->carry[0]));
		m->carry[m->ncarry++].pos = pos[k];
	}
	for (i = 0; i < old_n; i++) {
		struct pk_ring_reader *rd = &lr->l[i].rd;

		if (rd->next < pk__st.attach_seq[i])
			rd->next = pk__st.attach_seq[i];
		head[i] = pk__ring_next_seq(pk__lane(i));
		expect[i] = head[i];
		for (k = 0; k < npos; k++)
			if (pos[k].s[i] < expect[i])
				expect[i] = pos[k].s[i];
		if (expect[i] < pk__st.attach_seq[i])
			expect[i] = pk__st.attach_seq[i];
		s = copy_start(st, m, i, rd->next, pid);
		if (s < 0)
			goto out;
		start[i] = (uint64_t)s;
	}
	for (;;) {
		struct lane_map *l;

		ret = pk__lanes_read(lr, &rec, NULL, NULL, NULL, NULL);
		if (ret == -EAGAIN)
			continue;
		if (ret != 1)
			break;
		i = rec->lane;
		l = &m->lane[i];
		if (l->n + 2 * PK_MAX_CONSOLES + 1 >= l->cap)
			continue;	/* no room left in the map: counted as lost below */
		if (rec->seq < start[i])
			continue;	/* no room: counted as lost below, before the first copied */
		if (rec->seq > expect[i])
			copy_gap(st, m, pos, npos, i, expect[i], rec->seq, rec->meta.ts_ns);
		if (rec->seq + 1 > expect[i])
			expect[i] = rec->seq + 1;
		last_ts = rec->meta.ts_ns;
		if (rec->meta.pid != pid)
			continue;	/* another process's, in a shared store file */
		rec->meta.flags &= (uint16_t)~PK_REC_NOEOL;
		if (pk__ring_write(&st->lanes.lane[i % m->new_n], &rec->meta, rec->text, rec->len,
				   false, &seq) == 0) {
			l->new_seq[l->n] = seq;
			l->old_seq[l->n++] = rec->seq;
			carry_settle(m, i, rec->seq);
		}
	}
	/* And what was lost after the last record read (given up on in progress, or no room). */
	for (i = 0; i < old_n; i++)
		if (expect[i] < head[i])
			copy_gap(st, m, pos, npos, i, expect[i], head[i], last_ts);
	for (k = 0; k < m->new_n; k++)
		m->new_head[k] = pk__ring_next_seq(&st->lanes.lane[k]);
	ret = 0;
out:
	free(lr);
	free(buf);
	free(pos);
	if (ret < 0)
		seq_map_free(m);
	return ret;
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
	struct store st, old = { pk__st.mem, pk__st.mem_size, pk__st.mem_fd, pk__st.lanes };
	struct seq_map *m = calloc(1, sizeof(*m));
	uint64_t attach[PK_LANES_MAX];
	unsigned i;
	int ret, err;

	if (!m)
		return -ENOMEM;

	ret = store_map(cfg, false, &st, &err);
	if (ret < 0) {
		free(m);
		return ret;
	}
	for (i = 0; i < st.lanes.n; i++)
		attach[i] = atomic_load_explicit(&st.lanes.lane[i].h->seq_head, memory_order_relaxed);
	pk__switch_begin();
	/* LMM(gate:B), LMM(switch:A) */
	atomic_store_explicit(&pk__g.state, PK__INITIALIZING, memory_order_seq_cst);
	if (!pk__gates_drain(2000)) {
		atomic_store_explicit(&pk__g.state, PK__READY, memory_order_release);
		pk__switch_end();
		store_release(&st);
		free(m);
		return -EBUSY;
	}
	if (pk__switch_hook)
		pk__switch_hook();
	ret = store_copy(&st, m, ops);
	if (ret < 0) {
		atomic_store_explicit(&pk__g.state, PK__READY, memory_order_release);
		pk__switch_end();
		store_release(&st);
		free(m);
		return ret;
	}
	pk__store_finalize_last();
	pk__st.lanes = st.lanes;
	pk__st.mem = st.mem;
	pk__st.mem_size = st.size;
	pk__st.mem_fd = st.fd;
	memcpy(pk__st.attach_seq, attach, sizeof(attach));
	store_share_note();
	/* A thread's open record (pk_cont) was in the old store. */
	atomic_fetch_add_explicit(&pk__st.store_gen, 1, memory_order_relaxed);
	pk__self.open_valid = false;
	ops->rebase(map_pos, m, m->old_n);
	seq_map_free(m);
	free(m);
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

int pk__store(int level, unsigned flags, const char *text, size_t len, unsigned *lanep,
	      uint64_t *seqp)
{
	struct pk_ring_meta m;
	uint64_t *slot, seq = PK__NO_SEQ;
	unsigned depth, lane_spare, *lslot;
	size_t max = PK_RECORD_MAX;
	int ret;

	pk__crash_stack_lazy();
	/*
	 * A module prefix, a location and a fields block come on top of the
	 * text's maximum; a record within the maximum fits whatever they
	 * are, so only a longer one measures them (the location's check
	 * for a NUL in its names cost 4 % of a call).
	 */
	if (len > max)
		max += pk__rec_extra(flags, text, len);
	if (len > max) {
		len = max;
		flags |= PK_REC_TRUNC;
	}
	if (flags & PK_REC_TRUNC)
		atomic_fetch_add_explicit(&pk__lane(0)->h->truncated, 1, memory_order_relaxed);
	if (pk__self.emergency)
		flags |= PK_REC_EMERG;
	m.ts_ns = pk__now_ns();
	pk__self.store_ts = m.ts_ns;
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
	lslot = depth < PK__ARRAY_SIZE(pk__self.wlane) ? &pk__self.wlane[depth] : &lane_spare;
	*(volatile uint64_t *)slot = PK__NO_SEQ;
	*(volatile unsigned *)&pk__self.wdepth = depth + 1;
	ret = pk__lanes_write(&pk__st.lanes, &m, text, (uint32_t)len, (flags & PK_REC_NOEOL) != 0,
			      lslot, slot);
	seq = *slot;
	if (lanep)
		*lanep = *lslot;
	*(volatile unsigned *)&pk__self.wdepth = depth;
	if (seqp)
		*seqp = seq;
	return ret;
}

int pk_stats_get(struct pk_stats *st)
{
	const struct pk_ring_hdr *h;
	unsigned i;

	if (!st)
		return -EINVAL;
	if (!pk__gate_enter())
		return -ENODEV;
	memset(st, 0, sizeof(*st));
	/*
	 * Summed over the lanes: seqs are per lane, so first, next and oldest
	 * seq are sums too (next - first is what was stored, oldest - first
	 * what was overwritten), and sizes are the store's.
	 */
	for (i = 0; i < pk__st.lanes.n; i++) {
		const struct pk_ring *ring = pk__lane(i);
		uint64_t next, oldest;

		h = ring->h;
		next = atomic_load_explicit(&h->seq_head, memory_order_acquire);
		oldest = pk__ring_oldest(ring, false);
		st->first_seq += h->first_seq;
		st->next_seq += next;
		st->oldest_seq += oldest;
		st->truncated += atomic_load_explicit(&h->truncated, memory_order_relaxed);
		st->lost += atomic_load_explicit(&h->lost, memory_order_relaxed);
		st->reserve_failed += atomic_load_explicit(&h->reserve_failed, memory_order_relaxed);
		st->refused += atomic_load_explicit(&h->refused, memory_order_relaxed);
		st->suppressed += atomic_load_explicit(&h->suppressed, memory_order_relaxed);
		st->eager += atomic_load_explicit(&h->eager, memory_order_relaxed);
		st->data_size += ring->data_size;
		st->desc_count += ring->desc_mask + 1;
	}
	st->stored = st->next_seq - st->first_seq;
	st->overwritten = st->oldest_seq - st->first_seq;
	st->consoles_failed = atomic_load_explicit(&pk__g.consoles_failed, memory_order_relaxed);
	pk__gate_exit();
	return 0;
}
