/* SPDX-License-Identifier: MIT */
/*
 * lanesfile.h - store files of several lanes, made directly through the
 * store's own functions (as a writer that died left them), for the tests
 * of readers and pkmsg: a chosen lane per record, chosen timestamps, and
 * the keys (ts, lane, seq) every reader must give them back in.
 */
#ifndef PK_TESTS_LANESFILE_H
#define PK_TESTS_LANESFILE_H

#include <stddef.h>
#include <stdint.h>

#include "store/lanes.h"

struct lanes_file {
	void *mem;
	size_t size;
	int fd;
	struct pk_lanes ls;
};

/* @path made a store of @n lanes of 2^@l2 data bytes each, mapped into @f. */
void lf_create(struct lanes_file *f, const char *path, unsigned n, unsigned l2);
void lf_close(struct lanes_file *f);

/* Pid of the records lf_put() stores; tid is 100 + the lane. */
#define LF_PID	4242

/* Store @text in lane @lane with timestamp @ts; its seq in the lane. */
uint64_t lf_put(struct lanes_file *f, unsigned lane, uint64_t ts, const char *text);

/* A record as written: its key, and its text. */
struct key {
	uint64_t ts;
	unsigned lane;
	uint64_t seq;
	char text[32];
};

/* qsort() order of the readers: (ts, lane, seq). */
int key_cmp(const void *a, const void *b);

/*
 * @n records in a store of 4 lanes at @path, in lanes picked at random
 * (@seed) with timestamps from @ts0 that interleave, ties across lanes
 * included; @keys receives them in the merged order.
 */
void interleaved_store(const char *path, struct key *keys, unsigned n, unsigned seed,
		       uint64_t ts0);

#endif
