// SPDX-License-Identifier: MIT
/*
 * hist.c - log-linear latency histogram.
 *
 * Index of value v: v itself below 2 * SUB.  Otherwise, with msb the
 * highest set bit and shift = msb - SUB_BITS, (v >> shift) lies in
 * [SUB, 2 * SUB) and the index is (shift + 1) * SUB + (v >> shift) - SUB:
 * indices stay contiguous from one power of two to the next.
 */
#include <string.h>

#include "hist.h"

static unsigned index_of(uint64_t v)
{
	unsigned msb, shift;

	if (v < 2 * PKB_HIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	shift = msb - PKB_HIST_SUB_BITS;
	return (shift + 1) * PKB_HIST_SUB + (unsigned)(v >> shift) - PKB_HIST_SUB;
}

uint64_t pkb_hist_bucket_lo(unsigned i)
{
	unsigned shift;

	if (i < 2 * PKB_HIST_SUB)
		return i;
	shift = i / PKB_HIST_SUB - 1;
	return (uint64_t)(i % PKB_HIST_SUB + PKB_HIST_SUB) << shift;
}

uint64_t pkb_hist_bucket_width(unsigned i)
{
	if (i < 2 * PKB_HIST_SUB)
		return 1;
	return (uint64_t)1 << (i / PKB_HIST_SUB - 1);
}

void pkb_hist_init(struct pkb_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void pkb_hist_add(struct pkb_hist *h, uint64_t v)
{
	h->bucket[index_of(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void pkb_hist_merge(struct pkb_hist *dst, const struct pkb_hist *src)
{
	unsigned i;

	for (i = 0; i < PKB_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t pkb_hist_quantile(const struct pkb_hist *h, double q)
{
	uint64_t rank, seen = 0, hi;
	unsigned i;

	if (h->count == 0)
		return 0;
	if (q >= 1.0)
		return h->max;
	rank = (uint64_t)(q * (double)h->count);
	if (rank >= h->count)
		rank = h->count - 1;
	for (i = 0; i < PKB_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen > rank) {
			hi = pkb_hist_bucket_lo(i) + pkb_hist_bucket_width(i) - 1;
			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}

void pkb_hist_add_n(struct pkb_hist *h, uint64_t v, uint64_t n)
{
	if (!n)
		return;
	h->bucket[index_of(v)] += n;
	h->count += n;
	h->sum += v * n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}
