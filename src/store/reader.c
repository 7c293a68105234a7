// SPDX-License-Identifier: MIT
/*
 * reader.c - the public reader API over the record store: this process's
 * store, or a store file (see persist.c for how a file is mapped and
 * validated).
 *
 * A store is a set of lanes (lanes.h), each numbering its records with
 * its own seqs; a reader merges them into one order with pk__lanes_read()
 * (by timestamp, then lane, then seq).  How exact the order is depends on
 * what the reader may do to the store:
 *
 *   - a post-mortem reader (no writer has the file open) holds no lane
 *     back: nothing can be stored any more;
 *   - a reader that may write to the store (this process's own, or a file
 *     opened PK_READER_WRITABLE) seals idle lanes and finalizes an open
 *     line that holds the others up (lanes.c, THE WATERMARK): exact;
 *   - a reader of a read-only mapping of a live store cannot seal: it
 *     holds a record back while an idle lane could still store an older
 *     one, until the record is PK_READER_GRACE_NS old or has been held
 *     that long.  100 ms: a record can then come out of order only if its
 *     writer was preempted for 100 ms between reading its clock and
 *     taking its seq (two instructions apart); scheduler slices are a
 *     few ms, so only a badly overloaded machine gets there.  And it bounds
 *     what following a quiet lane costs: a new record comes out at most
 *     100 ms late, the longest sleep of a read-only wait
 *     (PK_RING_POLL_MAX_MS) as well.
 *
 * LOST RECORDS, LANE BY LANE
 *
 * Each lane's seqs are gapless, so a record whose seq is past the one
 * after the previous record of its lane (pk_reader_tell_lane() before the
 * call) tells that the ones between were lost.  The reader keeps, per
 * lane, that next seq (expect[]), which is also what a cursor saves.
 *
 * CURSORS
 *
 * "pk1:g=GEN:l=LANES:s=SEQ0,SEQ1,..." names the store's generation when
 * it was taken, its lane count, and for each lane the seq after the last
 * record returned.  Resuming there gives exactly the records after it:
 * each lane continues at its seq, and the merge puts them in the same
 * order.  The seqs are per lane and continue across reopens of the store,
 * so a cursor outlives the writer that was running when it was taken; it
 * is refused (-EINVAL) for a store with another lane count, a generation
 * below the cursor's or a seq beyond a lane's head (another store, or the
 * file made anew).  Records the store lost since are reported as lost, as
 * the jump in seq of the first record after them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "format/format.h"
#include "store/lanes.h"
#include "store/store.h"

/* How long a read-only reader of a live store holds a record for an idle lane. */
#define PK_READER_GRACE_NS	(100ull * 1000 * 1000)

/* The cursor's format tag, and the most bytes a cursor takes (with its NUL). */
#define CURSOR_TAG		"pk1"
#define CURSOR_MAX		(3 + 3 + 20 + 3 + 2 + 3 + PK_LANES_MAX * 21 + 1)
_Static_assert(CURSOR_MAX <= PK_READER_CURSOR_MAX, "PK_READER_CURSOR_MAX holds every cursor");

struct pk_reader {
	struct pk_lanes ls;		/* views: our own store's, or a file's */
	struct pk_lanes_reader lr;
	struct pk_ring_rec *buf;	/* ls.n records: what the merge holds */
	struct pk_ring_rec *held;	/* read ahead by pk_reader_wait(), in buf */
	/* Per lane: the seq after the last record returned, or where it began. */
	uint64_t expect[PK_LANES_MAX];
	void *map;			/* file mapping, or NULL */
	size_t map_size;
	int fd;				/* the store file, or -1 */
	bool image;			/* map is the caller's (pk__reader_open_image) */
	bool writable;			/* the region may be written (the merge seals) */
	bool postmortem;		/* no writer had the store open when last looked */
	uint32_t gen;			/* own store: pk__st.store_gen at open */
};

/*
 * This process's store may be replaced (pk_init() adopting another one) or
 * released (pk_shutdown()) while a reader of it is open: each use of the
 * view goes through the store gate, which pk_init() drains before it
 * unmaps anything, and checks that the store is still the one opened.
 * A reader of a store file has a mapping of its own.
 */
static bool view_enter(struct pk_reader *r)
{
	if (r->map)
		return true;
	if (!pk__gate_enter())
		return false;
	/* Relaxed: ordered after the gate's seq_cst look at the state (gate:A). */
	if (atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed) == r->gen)
		return true;
	pk__gate_exit();
	return false;
}

static void view_exit(struct pk_reader *r)
{
	if (!r->map)
		pk__gate_exit();
}

/*
 * Start the merge afresh (open, seek): each lane at its oldest record
 * after the clear point, nothing held.  Context: inside the view.
 */
static void merge_reset(struct pk_reader *r)
{
	unsigned i;

	pk__lanes_reader_init(&r->lr, &r->ls, r->buf, r->postmortem, r->writable);
	r->lr.grace_ns = PK_READER_GRACE_NS;
	r->held = NULL;
	for (i = 0; i < r->ls.n; i++)
		r->expect[i] = r->lr.l[i].rd.next;
}

/* Continue lane @i at @seq (a merge_reset() made the merge hold nothing). */
static void lane_seek(struct pk_reader *r, unsigned i, uint64_t seq)
{
	r->lr.l[i].rd.next = seq;
	r->expect[i] = seq;
}

/* The reader's state once its lanes are attached (@r->ls): 0 or -ENOMEM. */
static int reader_setup(struct pk_reader *r, bool postmortem)
{
	r->buf = calloc(r->ls.n, sizeof(*r->buf));
	if (!r->buf)
		return -ENOMEM;
	r->postmortem = postmortem;
	merge_reset(r);
	return 0;
}

static void set_postmortem(struct pk_reader *r, bool postmortem)
{
	unsigned i;

	r->postmortem = postmortem;
	r->lr.postmortem = postmortem;
	for (i = 0; i < r->ls.n; i++)
		r->lr.l[i].rd.postmortem = postmortem;
}

struct pk_reader *pk_reader_open(void)
{
	struct pk_reader *r;
	int ret = pk__ensure_init();

	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (!pk__gate_enter()) {
		free(r);
		errno = EAGAIN;	/* the store is being replaced or released */
		return NULL;
	}
	/* The store in use, all its lanes (the views the library keeps). */
	r->ls = pk__st.lanes;
	r->gen = atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed);
	r->fd = -1;
	r->writable = true;
	ret = reader_setup(r, false);
	pk__gate_exit();
	if (ret < 0) {
		free(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

struct pk_reader *pk_reader_open_file_flags(const char *path, unsigned flags)
{
	bool writable = (flags & PK_READER_WRITABLE) != 0;
	struct pk_reader *r;
	void *map;
	size_t size;
	bool live;
	int ret, fd;

	if (!path || (flags & ~PK_READER_WRITABLE)) {
		errno = EINVAL;
		return NULL;
	}
	ret = pk__persist_map_file(path, writable, &map, &size, &fd, &live);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		pk__persist_close(map, size, fd);
		errno = ENOMEM;
		return NULL;
	}
	/* Validated by the map; attached again into our own views. */
	ret = pk__lanes_attach(&r->ls, map, size);
	if (ret == 0) {
		r->map = map;
		r->map_size = size;
		r->fd = fd;
		r->writable = writable;
		ret = reader_setup(r, !live);
	}
	if (ret < 0) {
		pk__persist_close(map, size, fd);
		free(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

struct pk_reader *pk__reader_open_image(void *mem, size_t size)
{
	struct pk_reader *r;
	int ret;

	if (!mem) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pk__persist_check_image(mem, size, false, &r->ls);
	if (ret == 0) {
		r->map = mem;
		r->map_size = size;
		r->fd = -1;
		r->image = true;
		ret = reader_setup(r, true);
	}
	if (ret < 0) {
		free(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

struct pk_reader *pk_reader_open_file(const char *path)
{
	return pk_reader_open_file_flags(path, 0);
}

/*
 * The next record in the merged order, into *@rec (in r->buf).  The merge
 * asks to be called again after it finalized an open line or a lane
 * passed over a batch (-EAGAIN): each such call made progress, and a few
 * more than the lanes are enough.  Context: inside the view.
 * Return: 1 or 0, as pk__lanes_read().
 */
static int merge_next(struct pk_reader *r, struct pk_ring_rec **rec)
{
	unsigned tries;
	int ret = 0;

	for (tries = 0; tries < 2 * r->ls.n + 4; tries++) {
		ret = pk__lanes_read(&r->lr, rec, NULL, NULL, NULL, NULL);
		if (ret != -EAGAIN)
			return ret;
	}
	return 0;
}

static void export(struct pk_ring_rec *in, struct pk_record *out)
{
	pk__rec_export(in, out);
}

int pk_reader_next(struct pk_reader *r, struct pk_record *rec)
{
	struct pk_ring_rec *in = r ? r->held : NULL;
	int ret;

	if (!r || !rec)
		return -EINVAL;
	if (!in) {
		if (!view_enter(r))
			return -ENODEV;
		ret = merge_next(r, &in);
		view_exit(r);
		if (ret <= 0)
			return 0;
	}
	r->held = NULL;
	if (in->lane < r->ls.n)
		r->expect[in->lane] = in->seq + 1;
	export(in, rec);
	return 1;
}

void pk_reader_seek(struct pk_reader *r, uint64_t seq)
{
	uint64_t lo, hi;
	unsigned i;

	if (!r || !view_enter(r))
		return;
	merge_reset(r);
	for (i = 0; i < r->ls.n; i++) {
		lo = pk__ring_oldest(&r->ls.lane[i], false);
		hi = pk__ring_next_seq(&r->ls.lane[i]);
		lane_seek(r, i, seq < lo ? lo : seq > hi ? hi : seq);
	}
	view_exit(r);
}

/*
 * What to wait for in each lane: the lane's next record if the merge holds
 * none of it (committed since the merge looked, it ends the wait at once;
 * in progress, when it is committed), else a new record (the lane's head:
 * the one held waits for the other lanes, not for this one).
 */
static void wait_points(struct pk_reader *r, uint64_t *seqs)
{
	unsigned i;

	for (i = 0; i < r->ls.n; i++)
		seqs[i] = r->lr.l[i].have ? pk__ring_next_seq(&r->ls.lane[i]) : r->lr.l[i].rd.next;
}

/*
 * pk_reader_wait() for a store of several lanes: the merge tried again
 * and again, sleeping in between on the store's futex word (lane 0's,
 * which every lane's writers wake while a reader is registered there;
 * registered if the reader may write) until a lane has a new record or
 * the record in progress that the merge stopped at is committed.  It
 * sleeps in slices from 1 ms to PK_RING_POLL_MAX_MS: a held record's grace
 * or a stall runs out by time, not by a write.
 * Return: 1 a record is held (r->held); 0 timed out or interrupted; -errno.
 */
static int wait_lanes(struct pk_reader *r, int timeout_ms)
{
	uint64_t deadline = 0, now, left, seqs[PK_LANES_MAX];
	struct pk_ring_rec *in;
	int slice = 1, ret;

	if (timeout_ms >= 0)
		deadline = pk__now_ns() + (uint64_t)timeout_ms * 1000000ull;
	for (;;) {
		/* The writers may have died, or a new one opened the file. */
		if (r->fd >= 0)
			set_postmortem(r, !pk__persist_live(r->fd, r->map));
		if (merge_next(r, &in) > 0) {
			r->held = in;
			return 1;
		}
		now = pk__now_ns();
		if (timeout_ms >= 0) {
			if (now >= deadline)
				return 0;
			left = (deadline - now + 999999ull) / 1000000ull;
			if ((uint64_t)slice > left)
				slice = (int)left;
		}
		/* Until a lane's record we wait for, a wake-up, or the slice's end. */
		errno = 0;
		wait_points(r, seqs);
		ret = pk__ring_wait_many(r->ls.lane, r->ls.n, seqs, slice, !r->writable);
		if (ret < 0)
			return ret;
		if (ret == 0 && errno == EINTR)
			return 0;	/* a signal ends the wait, as for one lane */
		if (slice < PK_RING_POLL_MAX_MS)
			slice = slice * 2 < PK_RING_POLL_MAX_MS ? slice * 2 : PK_RING_POLL_MAX_MS;
	}
}

int pk_reader_wait(struct pk_reader *r, int timeout_ms)
{
	struct pk_ring_rec *in;
	int ret;

	if (!r)
		return -EINVAL;
	if (r->held)
		return 1;
	if (!view_enter(r))
		return -ENODEV;
	if (r->ls.n > 1) {
		ret = wait_lanes(r, timeout_ms);
		view_exit(r);
		return ret;
	}
	if (r->writable)
		ret = pk__ring_wait(&r->ls.lane[0], r->lr.l[0].rd.next, timeout_ms);
	else
		ret = pk__ring_wait_readonly(&r->ls.lane[0], r->lr.l[0].rd.next, timeout_ms);
	if (ret < 0) {
		view_exit(r);
		return ret;
	}
	/*
	 * A store file's writers may have died (skip what they left half
	 * written) or a new one may have opened it (wait for its records).
	 */
	if (r->fd >= 0)
		set_postmortem(r, !pk__persist_live(r->fd, r->map));
	if (merge_next(r, &in) > 0)
		r->held = in;
	view_exit(r);
	return r->held != NULL;
}

void pk_reader_close(struct pk_reader *r)
{
	if (!r)
		return;
	if (r->map && !r->image)
		pk__persist_close(r->map, r->map_size, r->fd);
	free(r->buf);
	free(r);
}

uint64_t pk_reader_tell(const struct pk_reader *r)
{
	uint64_t sum = 0;
	unsigned i;

	if (!r)
		return 0;
	if (r->ls.n == 1)
		return r->held ? r->held->seq : r->lr.l[0].rd.next;
	for (i = 0; i < r->ls.n; i++)
		sum += r->expect[i];
	return sum;
}

uint64_t pk_reader_tell_lane(const struct pk_reader *r, unsigned lane)
{
	if (!r || lane >= r->ls.n)
		return 0;
	return r->expect[lane];
}

int pk_reader_info(struct pk_reader *r, struct pk_store_info *info)
{
	const struct pk_ring_hdr *h;
	const struct pk_ring *lane;
	unsigned i;

	if (!r || !info)
		return -EINVAL;
	if (!view_enter(r))
		return -ENODEV;
	memset(info, 0, sizeof(*info));
	/*
	 * One lane: its header.  Several: the seqs and counters summed (each
	 * lane numbers its own records, so only differences mean something:
	 * records stored, overwritten), the sizes added up.  Relaxed:
	 * statistics; each value is read once and reported as is.
	 */
	for (i = 0; i < r->ls.n; i++) {
		lane = &r->ls.lane[i];
		h = lane->h;
		info->first_seq += h->first_seq;
		info->clear_seq += atomic_load_explicit(&h->clear_seq, memory_order_relaxed);
		info->next_seq += pk__ring_next_seq(lane);
		info->oldest_seq += pk__ring_oldest(lane, false);
		info->lost += atomic_load_explicit(&h->lost, memory_order_relaxed);
		info->reserve_failed += atomic_load_explicit(&h->reserve_failed, memory_order_relaxed);
		info->truncated += atomic_load_explicit(&h->truncated, memory_order_relaxed);
		info->refused += atomic_load_explicit(&h->refused, memory_order_relaxed);
		info->data_size += lane->data_size;
		info->desc_count += lane->desc_mask + 1;
	}
	/* The store-wide fields: lane 0's. */
	h = r->ls.lane[0].h;
	info->generation = h->generation;
	info->realtime_zero_ns = h->realtime_zero_ns;
	info->creator_pid = h->creator_pid;
	info->live = r->fd >= 0 ? pk__persist_live(r->fd, r->map) : !r->image;
	info->lanes = r->ls.n;
	view_exit(r);
	return 0;
}

int pk_reader_clear(struct pk_reader *r)
{
	unsigned i;

	if (!r)
		return -EINVAL;
	if (!r->writable)
		return -EACCES;
	if (!view_enter(r))
		return -ENODEV;
	for (i = 0; i < r->ls.n; i++)
		pk__ring_clear(&r->ls.lane[i]);
	view_exit(r);
	return 0;
}

int pk_reader_cursor(struct pk_reader *r, char *buf, size_t size)
{
	char cur[CURSOR_MAX];
	uint64_t gen;
	size_t len;
	unsigned i;

	if (!r || !buf)
		return -EINVAL;
	if (!view_enter(r))
		return -ENODEV;
	gen = r->ls.lane[0].h->generation;
	view_exit(r);
	len = (size_t)snprintf(cur, sizeof(cur), CURSOR_TAG ":g=%" PRIu64 ":l=%u:s=", gen, r->ls.n);
	for (i = 0; i < r->ls.n; i++)
		len += (size_t)snprintf(cur + len, sizeof(cur) - len, "%s%" PRIu64, i ? "," : "",
					r->expect[i]);
	if (len >= size) {
		if (size)
			buf[0] = '\0';
		return -ERANGE;
	}
	memcpy(buf, cur, len + 1);
	return (int)len;
}

/*
 * A decimal number of at most 20 digits, no sign, no leading zero but
 * "0", ending at *@end: true with *@v set.
 */
static bool cursor_number(const char *s, const char **end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned n = 0;

	while (s[n] >= '0' && s[n] <= '9') {
		if (n == 20 || (n && s[0] == '0'))
			return false;
		if (__builtin_mul_overflow(x, 10u, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(s[n] - '0'), &x))
			return false;
		n++;
	}
	if (!n)
		return false;
	*end = s + n;
	*v = x;
	return true;
}

/* "KEY" then a number: the number, *@s moved past both.  false if malformed. */
static bool cursor_field(const char **s, const char *key, uint64_t *v)
{
	size_t n = strlen(key);

	if (strncmp(*s, key, n))
		return false;
	return cursor_number(*s + n, s, v);
}

int pk_reader_seek_cursor(struct pk_reader *r, const char *cursor)
{
	uint64_t gen, lanes, seq[PK_LANES_MAX];
	const char *p = cursor;
	unsigned i;

	if (!r || !cursor)
		return -EINVAL;
	if (strncmp(p, CURSOR_TAG, sizeof(CURSOR_TAG) - 1))
		return -EINVAL;
	p += sizeof(CURSOR_TAG) - 1;
	if (!cursor_field(&p, ":g=", &gen) || !cursor_field(&p, ":l=", &lanes) ||
	    lanes != r->ls.n || strncmp(p, ":s=", 3))
		return -EINVAL;
	p += 3;
	for (i = 0; i < r->ls.n; i++) {
		if (i && *p++ != ',')
			return -EINVAL;
		if (!cursor_number(p, &p, &seq[i]))
			return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	if (!view_enter(r))
		return -ENODEV;
	/* Another store's: it has lived longer, or got further in a lane. */
	if (gen > r->ls.lane[0].h->generation) {
		view_exit(r);
		return -EINVAL;
	}
	for (i = 0; i < r->ls.n; i++) {
		if (seq[i] > pk__ring_next_seq(&r->ls.lane[i])) {
			view_exit(r);
			return -EINVAL;
		}
	}
	merge_reset(r);
	for (i = 0; i < r->ls.n; i++)
		lane_seek(r, i, seq[i]);
	view_exit(r);
	return 0;
}
