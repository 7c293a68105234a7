/* SPDX-License-Identifier: MIT */
/*
 * hist.h - log-linear latency histogram (HDR style) for pkbench.
 *
 * Values are nanoseconds.  Values below 2 * PKB_HIST_SUB are exact; above,
 * each power of two is split into PKB_HIST_SUB equal buckets, so a bucket
 * is at most 1/PKB_HIST_SUB (3 %) wide relative to its value.  count, sum,
 * min and max are exact.  Adding is a few instructions and touches one
 * cache line, so a thread can time every call it makes.
 *
 * A histogram is plain data: it can be copied, sent through a pipe and
 * merged.  Not thread-safe: one histogram per thread, merged afterwards.
 */
#ifndef PKB_HIST_H
#define PKB_HIST_H

#include <stdint.h>

#define PKB_HIST_SUB_BITS	5
#define PKB_HIST_SUB		(1u << PKB_HIST_SUB_BITS)
#define PKB_HIST_BUCKETS	((64 - PKB_HIST_SUB_BITS + 1) * PKB_HIST_SUB)

struct pkb_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t bucket[PKB_HIST_BUCKETS];
};

void pkb_hist_init(struct pkb_hist *h);
void pkb_hist_add(struct pkb_hist *h, uint64_t v);
/* @n values of @v at once. */
void pkb_hist_add_n(struct pkb_hist *h, uint64_t v, uint64_t n);
void pkb_hist_merge(struct pkb_hist *dst, const struct pkb_hist *src);

/**
 * pkb_hist_quantile() - the value at quantile @q (0..1).
 *
 * Return: the highest value of the bucket holding the q-th value, capped at
 * the exact maximum (so p100 is exact); 0 for an empty histogram.
 */
uint64_t pkb_hist_quantile(const struct pkb_hist *h, double q);

/* Bucket @i covers [lo, lo + width). */
uint64_t pkb_hist_bucket_lo(unsigned i);
uint64_t pkb_hist_bucket_width(unsigned i);

#endif /* PKB_HIST_H */
