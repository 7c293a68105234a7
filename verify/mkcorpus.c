// SPDX-License-Identifier: MIT
/*
 * mkcorpus DIR [RECIPEDIR [PACKAGEDIR]] - write the seed corpus of
 * fuzz_store into DIR:
 * small valid store files (empty, a few records, open and multi-line
 * records, a wrapped ring, a dead writer's leftovers), truncated and
 * corrupted variants of them, stores of 2 and 4 lanes (interleaved
 * timestamps, a dead writer and an open line in one lane, a wrapped lane)
 * and hostile ones (a lane count of 0 or 65, a lane naming another
 * place, a lane of the previous format, cut short), and recipes (see fuzz_store.c).
 * With RECIPEDIR, also the seeds of its recipe mode there (recipes
 * without the RECIPE prefix): wrapping, extensions, and patches aimed at
 * the header, the descriptors and the blocks, recipes of packages, and
 * recipes of 2 and 4 lanes (LANES prefix).  With
 * PACKAGEDIR, the seeds of its package mode there: packages of deferred
 * records (vsnprintf.c, "PACKAGES") of every argument kind, and damaged
 * ones.  Store files and recipes hold packed records too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "format/format.h"
#include "store/lanes.h"
#include "store/store.h"

#define L2	PK_RING_MIN_DATA_LOG2

#define REGION	(PK_RING_HDR_SIZE + (8u << (L2 - PK_RING_DESC_SHIFT)) + (1u << L2))

static uint64_t mem[REGION / 8];
static uint64_t lmem[4 * REGION / 8];	/* a store of up to 4 lanes */
static const char *dir;

static void save_in(const char *in, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", in, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void save(const char *name, const void *p, size_t n)
{
	save_in(dir, name, p, n);
}

/* A recipe being built: records, then 0xff and patches (fuzz_store.c). */
struct recipe {
	uint8_t b[8192];
	size_t n;
};

static void rec_op(struct recipe *r, int level, int facility, unsigned flags, unsigned len5,
		   const char *text)
{
	r->b[r->n++] = (uint8_t)(level | facility << 3);
	r->b[r->n++] = (uint8_t)flags;
	r->b[r->n++] = (uint8_t)len5;
	if (!(flags & 0x80)) {
		memcpy(r->b + r->n, text, len5 * 5);
		r->n += len5 * 5;
	}
}

static void rec_patch(struct recipe *r, unsigned off, uint8_t x)
{
	r->b[r->n++] = (uint8_t)off;
	r->b[r->n++] = (uint8_t)(off >> 8);
	r->b[r->n++] = x;
}

/* Offsets in the minimal region: header, descriptors, data. */
#define OFF_SEQ_HEAD	offsetof(struct pk_ring_hdr, seq_head)
#define OFF_LPOS_HEAD	offsetof(struct pk_ring_hdr, lpos_head)
#define OFF_FIRST_SEQ	offsetof(struct pk_ring_hdr, first_seq)
#define OFF_CLEAR_SEQ	offsetof(struct pk_ring_hdr, clear_seq)
#define OFF_DESC	PK_RING_HDR_SIZE
#define OFF_DATA	(PK_RING_HDR_SIZE + (8u << (L2 - PK_RING_DESC_SHIFT)))

static void recipes(const char *rdir)
{
	static const char words[] = "the quick brown fox jumps over the lazy dog, again\n"
				    "\x1b[1mbold\x1b[0m \xc3\xa9\xff tab\there %s %n 12345";
	struct recipe r;
	int i;

	/* A few records, literal text, every level; intact. */
	r.n = 0;
	for (i = 0; i < 8; i++)
		rec_op(&r, i, 1, 0, 4 + i, words);
	r.b[r.n++] = 0xff;
	save_in(rdir, "levels", r.b, r.n);

	/* Generated text that wraps the 4 KiB ring several times; intact. */
	r.n = 0;
	for (i = 0; i < 60; i++)
		rec_op(&r, i % 8, i % 24, 0x80 | (i & 0x0f), 7 + i * 3 % 200, NULL);
	r.b[r.n++] = 0xff;
	save_in(rdir, "wrap", r.b, r.n);

	/* Records with fields: generated valid blocks, packages with blocks, literal bytes. */
	r.n = 0;
	for (i = 0; i < 24; i++)
		rec_op(&r, i % 8, 1, (i % 3 == 0 ? 0x88 : i % 3 == 1 ? 0xa8 : 0x08) | (i & 0x03),
		       i % 3 == 2 ? 4 + i % 15 : 20 + i * 7, words);	/* literal: within words */
	r.b[r.n++] = 0xff;
	save_in(rdir, "fields", r.b, r.n);

	/* Open records, extended, one past the maximum; then patched blocks. */
	r.n = 0;
	rec_op(&r, 6, 1, 0x40, 4, words);
	rec_op(&r, 6, 1, 0x70, 3, words + 20);
	rec_op(&r, 6, 1, 0x30, 2, words + 40);
	rec_op(&r, 3, 1, 0xc0, 150, NULL);
	rec_op(&r, 3, 1, 0xf0, 100, NULL);	/* too long: -E2BIG */
	rec_op(&r, 4, 1, 0, 5, words);
	r.b[r.n++] = 0xff;
	save_in(rdir, "extend", r.b, r.n);
	rec_patch(&r, OFF_DATA + 8, 0x01);	/* first block's ts */
	rec_patch(&r, OFF_DATA + 45, 0x20);	/* its text */
	save_in(rdir, "extend-patched", r.b, r.n);

	/* Wrapped, then the header's sequence bounds and heads changed. */
	r.n = 0;
	for (i = 0; i < 40; i++)
		rec_op(&r, 6, 1, 0x80, 20 + i % 9, NULL);
	r.b[r.n++] = 0xff;
	rec_patch(&r, OFF_SEQ_HEAD, 0x05);
	rec_patch(&r, OFF_LPOS_HEAD + 1, 0x10);
	rec_patch(&r, OFF_FIRST_SEQ, 0x02);
	rec_patch(&r, OFF_CLEAR_SEQ, 0x03);
	save_in(rdir, "header-patched", r.b, r.n);

	/* Descriptors: a state, a seq, a position. */
	r.n = 0;
	for (i = 0; i < 30; i++)
		rec_op(&r, 5, 1, 0x80, 10 + i, NULL);
	r.b[r.n++] = 0xff;
	rec_patch(&r, OFF_DESC + 8 * 25, 0x01);
	rec_patch(&r, OFF_DESC + 8 * 26 + 4, 0x01);
	rec_patch(&r, OFF_DESC + 8 * 27 + 1, 0x08);
	save_in(rdir, "desc-patched", r.b, r.n);

	/* Packages of every format of fuzz_store's pkg_of(), one patched. */
	r.n = 0;
	for (i = 0; i < 12; i++)
		rec_op(&r, 6, 1, 0x20, 2 + i, words + i);
	r.b[r.n++] = 0xff;
	save_in(rdir, "packages", r.b, r.n);
	rec_patch(&r, OFF_DATA + 48, 0x04);
	save_in(rdir, "packages-patched", r.b, r.n);

	/*
	 * Records of modules: valid prefixes (generated), literal bytes as a
	 * prefix (a length byte past the text, a zero length, bytes that are
	 * not a name), an open one extended; then a length byte patched.
	 */
	r.n = 0;
	for (i = 0; i < 10; i++)
		rec_op(&r, 6, 1, 0x90 | (i & 0x40), 3 + i * 7, NULL);
	rec_op(&r, 6, 1, 0x10, 2, "\005netio, the rest");
	rec_op(&r, 6, 1, 0x10, 1, "\000zero");
	rec_op(&r, 6, 1, 0x10, 1, "\037shrt");
	rec_op(&r, 6, 1, 0x10, 2, "\004a b:text here");
	rec_op(&r, 6, 1, 0xd0, 20, NULL);
	rec_op(&r, 6, 1, 0x30, 2, words);
	r.b[r.n++] = 0xff;
	save_in(rdir, "modules", r.b, r.n);
	rec_patch(&r, OFF_DATA + 40, 0x3f);	/* the first record's length byte */
	save_in(rdir, "modules-patched", r.b, r.n);

	/*
	 * Stores of 2 and 4 lanes (LANES, then a byte: 1 << byte % 3
	 * lanes): records in every lane (the facility picks it), equal
	 * timestamps across lanes (a length of 0 adds nothing), an open
	 * line extended, wrapping in one lane; then patches in lanes 1 to 3.
	 */
	for (i = 1; i <= 2; i++) {
		static const char tag[] = "PKLANES";

		memcpy(r.b, tag, sizeof(tag) - 1);
		r.n = sizeof(tag) - 1;
		r.b[r.n++] = (uint8_t)i;
		for (int j = 0; j < 40; j++)
			rec_op(&r, j % 8, j % 5, 0x80 | (j & 3), j % 4 ? 6 + j : 0, NULL);
		rec_op(&r, 6, 2, 0x40, 3, words);
		rec_op(&r, 6, 2, 0x30, 2, words + 10);
		for (int j = 0; j < 50; j++)
			rec_op(&r, 5, 3, 0x80, 40 + j, NULL);	/* lane 3 of 4 wraps */
		r.b[r.n++] = 0xff;
		save_in(rdir, i == 1 ? "lanes2" : "lanes4", r.b, r.n);
		rec_patch(&r, REGION + OFF_SEQ_HEAD, 0x03);
		rec_patch(&r, REGION + OFF_DATA + 8, 0x01);
		rec_patch(&r, (unsigned)(i * REGION) + OFF_DESC + 8 * 3, 0x02);
		save_in(rdir, i == 1 ? "lanes2-patched" : "lanes4-patched", r.b, r.n);
	}
}

static int pack(unsigned char *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = pk__vpack(out, PK_RING_TEXT_MAX, fmt, ap, 0, 13);
	va_end(ap);
	if (n < 0)
		abort();
	return n;
}

static void packages(const char *pdir)
{
	static unsigned char b[PK_RING_TEXT_MAX];
	int n;

	n = pack(b, "buffer has consumed %ld bytes of extra storage, current allocation: %ld bytes\n",
		 123456789L, 987654321L);
	save_in(pdir, "ints", b, (size_t)n);
	save_in(pdir, "ints-cut", b, (size_t)n - 3);
	b[8] ^= 0x80;
	save_in(pdir, "ints-flipped", b, (size_t)n);
	n = pack(b, "%s|%.3s|%s|%-8s|\n", "a string", "precision", (char *)NULL, "");
	save_in(pdir, "strings", b, (size_t)n);
	b[8] = 0xff;
	save_in(pdir, "string-too-long", b, (size_t)n);
	n = pack(b, "%e %.20Lf %a %La %g\n", 1.5, 2.25L, -0.0, 1e300L, 1e-310);
	save_in(pdir, "floats", b, (size_t)n);
	b[8 + 8 + 7] &= 0x7f;	/* the long double's integer bit: an unnormal */
	save_in(pdir, "long-double-unnormal", b, (size_t)n);
	n = pack(b, "%m %#m %p %c %lc %*.*d %%\n", (void *)b, 'x', (wint_t)0x20ac, 8, 4, 42);
	save_in(pdir, "misc", b, (size_t)n);
	n = pack(b, PK_KFMT "kernel format %s %d\n", "k", 1);
	save_in(pdir, "kernel", b, (size_t)n);
	b[1] = 0xfe;
	save_in(pdir, "bad-flags", b, (size_t)n);
	save_in(pdir, "empty", b, 0);
}

static struct pk_ring fresh(void)
{
	struct pk_ring ring;

	pk__ring_format(mem, L2, 0);
	if (pk__ring_attach(&ring, mem, sizeof(mem)))
		abort();
	return ring;
}

static uint64_t put(struct pk_ring *ring, int level, const char *text, bool open)
{
	static uint64_t ts = 1000000;
	struct pk_ring_meta m = { .ts_ns = ts += 1234567, .pid = 4200, .tid = 4242, .level = (uint8_t)level,
				  .facility = 1 };
	uint64_t seq = 0;

	pk__ring_write(ring, &m, text, (uint32_t)strlen(text), open, &seq);
	return seq;
}

/* A fresh store of @n lanes in lmem. */
static struct pk_lanes lanes_fresh(unsigned n)
{
	struct pk_lanes ls;

	memset(lmem, 0, sizeof(lmem));
	pk__lanes_format(lmem, n, L2, 0);
	((struct pk_ring_hdr *)lmem)->generation = 1;
	if (pk__lanes_attach(&ls, lmem, pk__lanes_region_size(n, L2)))
		abort();
	return ls;
}

static void lanes_put(struct pk_lanes *ls, unsigned lane, uint64_t ts, int level, const char *text,
		      bool open)
{
	struct pk_ring_meta m = { .ts_ns = ts, .pid = 4200, .tid = 4300 + lane,
				  .level = (uint8_t)level, .facility = 1 };
	uint64_t seq;

	pk__ring_write(&ls->lane[lane], &m, text, (uint32_t)strlen(text), open, &seq);
}

/* Store files of 2 and 4 lanes, valid and hostile. */
static void lanes_seeds(void)
{
	struct pk_lanes ls;
	struct pk_ring_hdr *h;
	size_t size2 = pk__lanes_region_size(2, L2), size4 = pk__lanes_region_size(4, L2);
	char buf[200];
	unsigned i;

	/* Two lanes, timestamps interleaved, ties. */
	ls = lanes_fresh(2);
	for (i = 0; i < 30; i++) {
		snprintf(buf, sizeof(buf), "two lanes %u", i);
		lanes_put(&ls, i % 3 == 0, 1000000 + i / 2 * 1000, (int)(i % 8), buf, false);
	}
	save("lanes2.store", lmem, size2);

	/* Four lanes: interleaved, a dead writer in lane 1, an open line in lane 2, lane 3 wrapped. */
	ls = lanes_fresh(4);
	for (i = 0; i < 40; i++) {
		snprintf(buf, sizeof(buf), "four lanes %u", i);
		lanes_put(&ls, (i * 7) % 4, 2000000 + i * 333, (int)(i % 8), buf, false);
	}
	save("lanes4.store", lmem, size4);
	atomic_fetch_add(&ls.lane[1].h->seq_head, 1);
	lanes_put(&ls, 1, 3000000, 6, "after the dead writer", false);
	lanes_put(&ls, 2, 3000100, 6, "an open line", true);
	for (i = 0; i < 200; i++) {
		snprintf(buf, sizeof(buf), "wrapping lane 3, record %u %.*s", i, (int)(i % 70),
			 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
		lanes_put(&ls, 3, 3000200 + i, 5, buf, false);
	}
	save("lanes4-leftovers.store", lmem, size4);

	/* Hostile: each a valid 4-lane store with one thing wrong. */
	h = (struct pk_ring_hdr *)lmem;
	h->lanes = 0;
	save("lanes-count0.store", lmem, size4);
	h->lanes = 65;
	save("lanes-count65.store", lmem, size4);
	h->lanes = 4;
	h = (struct pk_ring_hdr *)((char *)lmem + 2 * REGION);
	h->lane = 1;
	save("lanes-misplaced.store", lmem, size4);
	h->lane = 2;
	h->lanes = 2;
	save("lanes-other-count.store", lmem, size4);
	h->lanes = 4;
	h->version = PK_RING_VERSION - 1;
	save("lanes-older-version.store", lmem, size4);
	h->version = PK_RING_VERSION;
	save("lanes-truncated.store", lmem, size4 - REGION / 2);
	save("lanes-first-lane-only.store", lmem, REGION);
	save("lanes-from-lane1.store", (char *)lmem + REGION, 3 * REGION);
	atomic_store(&h->head_ts, UINT64_MAX - 5);	/* an earlier boot's, or hostile */
	save("lanes-earlier-boot.store", lmem, size4);
	h->first_seq = 7;
	save("lanes-bad-bounds.store", lmem, size4);
}

int main(int argc, char **argv)
{
	struct pk_ring ring;
	struct pk_ring_hdr *h = (struct pk_ring_hdr *)mem;
	char buf[200], recipe[512];
	size_t n;
	int i;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: mkcorpus DIR [RECIPEDIR [PACKAGEDIR]]\n");
		return 2;
	}
	dir = argv[1];
	if (argc >= 3)
		recipes(argv[2]);
	if (argc == 4)
		packages(argv[3]);

	ring = fresh();
	save("empty.store", mem, sizeof(mem));

	ring = fresh();
	for (i = 0; i < 8; i++) {
		snprintf(buf, sizeof(buf), "level %d message", i);
		put(&ring, i, buf, false);
	}
	put(&ring, 3, "two\nlines", false);
	put(&ring, 6, "esc \x1b[1m utf8 \xc3\xa9 bad \xff", false);
	{
		static unsigned char b[PK_RING_TEXT_MAX];
		struct pk_ring_meta m = { .ts_ns = 99000000, .pid = 4200, .tid = 4242, .level = 5,
					  .facility = 1, .flags = PK__REC_PACKED };
		uint64_t seq;
		int n = pack(b, "packed %s %d %.2f\n", "record", 42, 2.5);

		pk__ring_write(&ring, &m, (const char *)b, (uint32_t)n, false, &seq);
	}
	{
		static const char rec[] = "\005netio" "module record";
		struct pk_ring_meta m = { .ts_ns = 99500000, .pid = 4200, .tid = 4242, .level = 6,
					  .facility = 1, .flags = PK__REC_MODULE };
		uint64_t seq;

		pk__ring_write(&ring, &m, rec, sizeof(rec) - 1, false, &seq);
	}
	put(&ring, 6, "open, not finished", true);
	save("records.store", mem, sizeof(mem));

	/* Records with fields (record.c, "FIELDS"): text, package, module, a bad block. */
	ring = fresh();
	{
		static const struct pk_field f[] = { { "REQUEST_ID", "42" }, { "USER", "a\"b]c\\" },
						     { "bad key", "x" }, { "MULTI", "two\nlines" } };
		static char b[PK_RING_TEXT_MAX];
		struct pk_ring_meta m = { .ts_ns = 98000000, .pid = 4200, .tid = 4242, .level = 6,
					  .facility = 1, .flags = PK__REC_FIELDS };
		uint64_t seq;
		size_t tl;
		int err = 0;

		tl = strlen(strcpy(b, "with fields"));
		tl += pk__fields_encode(b + tl, f, 4, &err);
		pk__ring_write(&ring, &m, b, (uint32_t)tl, false, &seq);
		tl = (size_t)pack((unsigned char *)b, "packed %s %d\n", "with fields", 7);
		tl += pk__fields_encode(b + tl, f, 2, &err);
		m.flags = PK__REC_FIELDS | PK__REC_PACKED;
		pk__ring_write(&ring, &m, b, (uint32_t)tl, false, &seq);
		static const char mrec[] = "\005netio" "module and fields";

		memcpy(b, mrec, sizeof(mrec) - 1);
		tl = sizeof(mrec) - 1 + pk__fields_encode(b + sizeof(mrec) - 1, f + 1, 1, &err);
		m.flags = PK__REC_FIELDS | PK__REC_MODULE;
		pk__ring_write(&ring, &m, b, (uint32_t)tl, false, &seq);
		memcpy(b, "a block too long\xff\x03\x00", 19);	/* its length past the body */
		m.flags = PK__REC_FIELDS;
		pk__ring_write(&ring, &m, b, 19, false, &seq);
		memcpy(b, "entries that do not parse" "lower\0v\0" "\x08\x00\x00", 36);
		pk__ring_write(&ring, &m, b, 36, false, &seq);
	}
	save("fields.store", mem, sizeof(mem));

	/*
	 * Records with call sites (record.c, "LOCATIONS"): text, package,
	 * module and fields with one, a block whose lengths pass the body's
	 * end, one whose names hold a NUL.
	 */
	ring = fresh();
	{
		static const struct pk_srcloc loc = { "src/dir/file.c", "handler", 4242, 0, 0 };
		static const struct pk_field f[] = { { "REQUEST_ID", "42" } };
		static char b[PK_RING_TEXT_MAX];
		struct pk_ring_meta m = { .ts_ns = 99000000, .pid = 4200, .tid = 4242, .level = 6,
					  .facility = 1, .flags = PK__REC_LOC };
		uint64_t seq;
		size_t tl;
		int err = 0;

		tl = pk__loc_encode(b, &loc);
		tl += strlen(strcpy(b + tl, "with a call site"));
		pk__ring_write(&ring, &m, b, (uint32_t)tl, false, &seq);
		tl = pk__loc_encode(b, &loc);
		tl += (size_t)pack((unsigned char *)b + tl, "packed %s %d\n", "with a site", 8);
		m.flags = PK__REC_LOC | PK__REC_PACKED;
		pk__ring_write(&ring, &m, b, (uint32_t)tl, false, &seq);
		memcpy(b, "\005netio", 6);
		tl = 6 + pk__loc_encode(b + 6, &loc);
		tl += strlen(strcpy(b + tl, "module, site and fields"));
		tl += pk__fields_encode(b + tl, f, 1, &err);
		m.flags = PK__REC_LOC | PK__REC_MODULE | PK__REC_FIELDS;
		pk__ring_write(&ring, &m, b, (uint32_t)tl, false, &seq);
		memcpy(b, "\x01\x00\x00\x00\xff\x7f" "short", 11);	/* lengths past the body */
		m.flags = PK__REC_LOC;
		pk__ring_write(&ring, &m, b, 11, false, &seq);
		memcpy(b, "\x01\x00\x00\x00\x02\x01" "a\0f" "a NUL in a name", 24);
		pk__ring_write(&ring, &m, b, 24, false, &seq);
	}
	save("srcloc.store", mem, sizeof(mem));
	save("truncated.store", mem, 3000);
	save("header-only.store", mem, PK_RING_HDR_SIZE);
	memcpy(buf, mem, 8);
	((uint8_t *)mem)[0] ^= 1;
	save("bad-magic.store", mem, sizeof(mem));
	((uint8_t *)mem)[0] ^= 1;
	h->version = PK_RING_VERSION + 1;
	save("other-version.store", mem, sizeof(mem));
	h->version = PK_RING_VERSION;
	((uint8_t *)mem)[PK_RING_HDR_SIZE + 1024 + 100] ^= 0x40;	/* a torn block */
	save("torn.store", mem, sizeof(mem));

	ring = fresh();
	for (i = 0; i < 300; i++) {
		snprintf(buf, sizeof(buf), "wrapping %d %.*s", i, i % 90, "abcdefghijklmnopqrstuvwxyz"
			 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
		put(&ring, i % 8, buf, false);
	}
	save("wrapped.store", mem, sizeof(mem));

	ring = fresh();
	put(&ring, 6, "before", false);
	atomic_fetch_add(&h->seq_head, 1);	/* a writer died holding seq 1 */
	put(&ring, 6, "after", false);
	atomic_store(&h->clear_seq, 1);
	save("dead-writer.store", mem, sizeof(mem));

	lanes_seeds();

	n = (size_t)snprintf(recipe, sizeof(recipe), "PKRECIPE");
	recipe[n++] = 6; recipe[n++] = 0; recipe[n++] = 2;
	memcpy(recipe + n, "hello\nworl", 10); n += 10;
	recipe[n++] = 3; recipe[n++] = 0x40; recipe[n++] = 1;
	memcpy(recipe + n, "open!", 5); n += 5;
	recipe[n++] = 3; recipe[n++] = 0x30; recipe[n++] = 1;
	memcpy(recipe + n, " cont", 5); n += 5;
	recipe[n++] = (char)0xff;
	recipe[n++] = 0x10; recipe[n++] = 0x06; recipe[n++] = 0x01;
	save("recipe", recipe, n);
	return 0;
}
