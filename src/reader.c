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

#include "internal.h"

struct pk_reader {
	struct pk_ring ring;		/* a view: our own store's, or a file's */
	struct pk_ring_reader rd;
	struct pk_ring_rec rec;
	bool have;			/* rec holds a record read ahead */
	void *map;			/* file mapping, or NULL */
	size_t map_size;
};

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
	r->ring = pk__g.ring;
	pk__ring_reader_init(&r->rd, &r->ring, false);
	return r;
}

struct pk_reader *pk_reader_open_file(const char *path)
{
	struct pk_reader *r;
	void *map;
	size_t size;
	bool live;
	int ret;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	ret = pk__persist_map_reader(path, &map, &size, &live);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		munmap(map, size);
		errno = ENOMEM;
		return NULL;
	}
	ret = pk__ring_attach(&r->ring, map, size);
	if (ret < 0) {
		munmap(map, size);
		free(r);
		errno = -ret;
		return NULL;
	}
	r->map = map;
	r->map_size = size;
	pk__ring_reader_init(&r->rd, &r->ring, !live);
	return r;
}

static void export(const struct pk_ring_rec *in, struct pk_record *out)
{
	out->seq = in->seq;
	out->ts_ns = in->meta.ts_ns;
	out->level = in->meta.level;
	out->tid = in->meta.tid;
	out->flags = in->meta.flags;
	out->facility = in->meta.facility;
	out->text = in->text;
	out->len = in->len;
}

int pk_reader_next(struct pk_reader *r, struct pk_record *rec)
{
	if (!r || !rec)
		return -EINVAL;
	if (!r->have && pk__ring_read(&r->rd, &r->rec) <= 0)
		return 0;
	r->have = false;
	export(&r->rec, rec);
	return 1;
}

void pk_reader_seek(struct pk_reader *r, uint64_t seq)
{
	uint64_t lo, hi;

	if (!r)
		return;
	lo = pk__ring_oldest(&r->ring, false);
	hi = pk__ring_next_seq(&r->ring);
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
	ret = pk__ring_wait(&r->ring, r->rd.next, timeout_ms);
	if (ret < 0)
		return ret;
	if (pk__ring_read(&r->rd, &r->rec) > 0)
		r->have = true;
	return r->have;
}

void pk_reader_close(struct pk_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->map_size);
	free(r);
}
