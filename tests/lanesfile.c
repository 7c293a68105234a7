// SPDX-License-Identifier: MIT
/* lanesfile.c - store files of several lanes for the tests (lanesfile.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lanesfile.h"
#include "testutil.h"

void lf_create(struct lanes_file *f, const char *path, unsigned n, unsigned l2)
{
	f->size = pk__lanes_region_size(n, l2);
	f->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(f->fd >= 0);
	assert_int_equal(ftruncate(f->fd, (off_t)f->size), 0);
	f->mem = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	assert_true(f->mem != MAP_FAILED);
	pk__lanes_format(f->mem, n, l2, 0);
	((struct pk_ring_hdr *)f->mem)->generation = 1;
	assert_int_equal(pk__lanes_attach(&f->ls, f->mem, f->size), 0);
	assert_int_equal(f->ls.n, n);
}

void lf_close(struct lanes_file *f)
{
	munmap(f->mem, f->size);
	close(f->fd);
}

uint64_t lf_put(struct lanes_file *f, unsigned lane, uint64_t ts, const char *text)
{
	struct pk_ring_meta m = { .ts_ns = ts, .pid = LF_PID, .tid = 100 + lane, .level = 6,
				  .facility = 1 };
	uint64_t seq;

	assert_int_equal(pk__ring_write(&f->ls.lane[lane], &m, text, (uint32_t)strlen(text), false,
					&seq), 0);
	return seq;
}

int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->lane != y->lane)
		return x->lane < y->lane ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static unsigned next_rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

void interleaved_store(const char *path, struct key *keys, unsigned n, unsigned seed,
		       uint64_t ts0)
{
	struct lanes_file f;
	uint64_t ts = ts0;
	unsigned i;

	lf_create(&f, path, 4, 13);
	for (i = 0; i < n; i++) {
		keys[i].lane = next_rnd(&seed) % 4;
		ts += next_rnd(&seed) % 3 == 0 ? 0 : (next_rnd(&seed) % 7) * 1000;	/* ties now and then */
		keys[i].ts = ts;
		snprintf(keys[i].text, sizeof(keys[i].text), "r%u-l%u", i, keys[i].lane);
		keys[i].seq = lf_put(&f, keys[i].lane, ts, keys[i].text);
	}
	lf_close(&f);
	qsort(keys, n, sizeof(*keys), key_cmp);
}
