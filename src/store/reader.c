// SPDX-License-Identifier: MIT
/*
 * reader.c - the public reader API over the record store: this process's
 * store, or a store file (see persist.c for how a file is mapped and
 * validated).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "format/format.h"
#include "store/lanes.h"
#include "store/store.h"

struct pk_reader {
	struct pk_ring ring;		/* a view: our own store's, or a file's */
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	bool have;			/* rec holds a record read ahead */
	void *map;			/* file mapping, or NULL */
	size_t map_size;
	int fd;				/* the store file, or -1 */
	bool image;			/* map is the caller's (pk__reader_open_image) */
	bool writable;			/* the region may be written */
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
	r->ring = pk__st.ring;
	r->gen = atomic_load_explicit(&pk__st.store_gen, memory_order_relaxed);
	r->fd = -1;
	r->writable = true;
	pk__ring_reader_init(&r->rd, &r->ring, false);
	pk__gate_exit();
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
	ret = pk__ring_attach(&r->ring, map, size);
	if (ret < 0) {
		pk__persist_close(map, size, fd);
		free(r);
		errno = -ret;
		return NULL;
	}
	r->map = map;
	r->map_size = size;
	r->fd = fd;
	r->writable = writable;
	pk__ring_reader_init(&r->rd, &r->ring, !live);
	return r;
}

struct pk_reader *pk__reader_open_image(void *mem, size_t size)
{
	struct pk_lanes ls;
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
	ret = pk__persist_check_image(mem, size, false, &ls);
	if (ret < 0) {
		free(r);
		errno = -ret;
		return NULL;
	}
	r->ring = ls.lane[0];	/* lane 0 only, for now */
	r->map = mem;
	r->map_size = size;
	r->fd = -1;
	r->image = true;
	pk__ring_reader_init(&r->rd, &r->ring, true);
	return r;
}

struct pk_reader *pk_reader_open_file(const char *path)
{
	return pk_reader_open_file_flags(path, 0);
}

static void export(struct pk_ring_rec *in, struct pk_record *out)
{
	pk__rec_render(in);	/* a package: formatted now, in the reader's own buffer */
	memset(out, 0, sizeof(*out));
	out->seq = in->seq;
	out->ts_ns = in->meta.ts_ns;
	out->level = in->meta.level;
	out->tid = in->meta.tid;
	out->pid = in->meta.pid;
	out->flags = in->meta.flags;
	out->facility = in->meta.facility;
	out->text = in->text;
	out->len = in->len;
	out->module = in->module[0] ? in->module : NULL;
	pk__rec_fields(in, out);
}

int pk_reader_next(struct pk_reader *r, struct pk_record *rec)
{
	int ret;

	if (!r || !rec)
		return -EINVAL;
	if (!r->have) {
		if (!view_enter(r))
			return -ENODEV;
		ret = pk__ring_read(&r->rd, &r->rec);
		view_exit(r);
		if (ret <= 0)
			return 0;
	}
	r->have = false;
	export(&r->rec, rec);
	return 1;
}

void pk_reader_seek(struct pk_reader *r, uint64_t seq)
{
	uint64_t lo, hi;

	if (!r || !view_enter(r))
		return;
	lo = pk__ring_oldest(&r->ring, false);
	hi = pk__ring_next_seq(&r->ring);
	view_exit(r);
	r->rd.next = seq < lo ? lo : seq > hi ? hi : seq;
	r->have = false;
}

int pk_reader_wait(struct pk_reader *r, int timeout_ms)
{
	int ret;

	if (!r)
		return -EINVAL;
	if (r->have)
		return 1;
	if (!view_enter(r))
		return -ENODEV;
	if (r->writable)
		ret = pk__ring_wait(&r->ring, r->rd.next, timeout_ms);
	else
		ret = pk__ring_wait_readonly(&r->ring, r->rd.next, timeout_ms);
	if (ret < 0) {
		view_exit(r);
		return ret;
	}
	/*
	 * A store file's writers may have died (skip what they left half
	 * written) or a new one may have opened it (wait for its records).
	 */
	if (r->fd >= 0)
		r->rd.postmortem = !pk__persist_live(r->fd, r->map);
	if (pk__ring_read(&r->rd, &r->rec) > 0)
		r->have = true;
	view_exit(r);
	return r->have;
}

void pk_reader_close(struct pk_reader *r)
{
	if (!r)
		return;
	if (r->map && !r->image)
		pk__persist_close(r->map, r->map_size, r->fd);
	free(r);
}

uint64_t pk_reader_tell(const struct pk_reader *r)
{
	if (!r)
		return 0;
	return r->have ? r->rec.seq : r->rd.next;
}

int pk_reader_info(struct pk_reader *r, struct pk_store_info *info)
{
	const struct pk_ring_hdr *h;

	if (!r || !info)
		return -EINVAL;
	if (!view_enter(r))
		return -ENODEV;
	h = r->ring.h;
	memset(info, 0, sizeof(*info));
	info->first_seq = h->first_seq;
	/* Relaxed: statistics; each value is read once and reported as is. */
	info->clear_seq = atomic_load_explicit(&h->clear_seq, memory_order_relaxed);
	info->next_seq = pk__ring_next_seq(&r->ring);
	info->oldest_seq = pk__ring_oldest(&r->ring, false);
	info->lost = atomic_load_explicit(&h->lost, memory_order_relaxed);
	info->reserve_failed = atomic_load_explicit(&h->reserve_failed, memory_order_relaxed);
	info->truncated = atomic_load_explicit(&h->truncated, memory_order_relaxed);
	info->refused = atomic_load_explicit(&h->refused, memory_order_relaxed);
	info->data_size = r->ring.data_size;
	info->desc_count = r->ring.desc_mask + 1;
	info->generation = h->generation;
	info->realtime_zero_ns = h->realtime_zero_ns;
	info->creator_pid = h->creator_pid;
	info->live = r->fd >= 0 ? pk__persist_live(r->fd, r->map) : !r->image;
	view_exit(r);
	return 0;
}

int pk_reader_clear(struct pk_reader *r)
{
	if (!r)
		return -EINVAL;
	if (!r->writable)
		return -EACCES;
	if (!view_enter(r))
		return -ENODEV;
	pk__ring_clear(&r->ring);
	view_exit(r);
	return 0;
}
