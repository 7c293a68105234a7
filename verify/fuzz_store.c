// SPDX-License-Identifier: MIT
/*
 * fuzz_store - libFuzzer target for the store file reader and validator.
 *
 * Two modes:
 *
 *   file mode (the default): an input is a store file, byte for byte, and
 *     the check is that nothing crashes, hangs or trips a sanitizer, and
 *     that what the reader returns is bounded and terminated.
 *
 *   recipe mode (PK_FUZZ_MODE=recipe, or an input starting with RECIPE):
 *     the input drives the ring's writer (records of chosen lengths,
 *     levels, flags, texts, extensions of open records) into a fresh
 *     minimal region, then patches bytes of the result.  On top of the
 *     file mode's checks it has a property: every record the reader
 *     returns is byte for byte (text and metadata) something the writer
 *     stored under that seq in that lane, in increasing seq order in its
 *     lane, so that anything else is reported as lost by a jump in seq.
 *     Without patches, the reader must return every record the ring
 *     still holds: all seqs from the first it returns to the last
 *     written, in every lane, each in its final state, the lanes merged
 *     in key order (ts, lane, seq).  An input starting with LANES and a
 *     byte is a recipe for a store of 1, 2 or 4 lanes (a record goes into
 *     the lane its facility names, modulo the lanes).
 *     A mutated file rarely gets past the block checksums; a recipe puts
 *     arbitrary text and metadata behind valid checksums, then breaks them.
 *
 *   package mode (PK_FUZZ_MODE=package, or an input starting with
 *     PKPACKAG): the input is a package, the format and arguments of a
 *     deferred record (vsnprintf.c, "PACKAGES"), formatted by
 *     pk__unpack() into buffers of several sizes and by pk__rec_render()
 *     as a reader does: never a read outside the package, always a
 *     bounded, terminated text.  Recipes store packages too (built from
 *     real formats and arguments, or the recipe's bytes as they are), and
 *     their property then holds for the text formatted from the package.
 *
 * Fuzzing, the bytes are checked and read in memory, with no file per
 * input: pk__reader_open_image() makes the checks pk_reader_open_file()
 * makes of a file's contents (size, header, sequence bounds) on a heap
 * copy of exactly the input's size, so that AddressSanitizer sees any
 * read past it.  Every record is rendered in every format.  Any store:
 * each record's lane is one the store has and its seq grows within the
 * lane, and a cursor taken after the first few records resumes, in a
 * second reader of the same bytes, with exactly the records the first
 * one read after it.  A store that
 * validates is then also taken over as a writer's open does
 * (pk__persist_check_image() for writing, pk__persist_take_over(): the
 * recovery of dead writers' records), written on top of the hostile
 * contents, and read again.  Thousands of inputs a second under ASan.
 *
 * Replayed (make check), every input also goes through the files: a
 * memfd opened by path (/proc/self/fd/N) through the public
 * pk_reader_open_file() (the open, fstat, mmap, validation and attach of
 * pkmsg -F), which must accept or refuse it as the image was, and a real
 * file opened by pk__persist_open() as pk_init() opens a store.
 *
 * Built without libFuzzer (PK_FUZZ_REPLAY), main() runs the inputs named
 * on the command line (files, or directories of them) and, with
 * --random N, N recipes made from a fixed seed: the property test of
 * `make check` (verify/CMakeLists.txt).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <wchar.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PK_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(PK_FUZZ_ASAN)
#define PK_FUZZ_ASAN 1
#endif
#ifdef PK_FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size)	((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size)	((void)(addr), (void)(size))
#endif

#include "format/format.h"
#include "store/lanes.h"
#include "store/store.h"

/*
 * The model's own loops (generated text, the states written, comparisons
 * with them) are no code under test: without coverage instrumentation
 * they cost no counters and no comparison hooks per byte, and give the
 * fuzzer no features of their own.  AddressSanitizer still checks them.
 */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize) && defined(__clang__) && __clang_major__ >= 13
#define NOCOV	__attribute__((no_sanitize("coverage"), noinline))
#endif
#endif
#ifndef NOCOV
#define NOCOV
#endif

#define RECIPE		"PKRECIPE"
#define LANES		"PKLANES"	/* then a byte: 1 << (byte % 3) lanes, then a recipe */
#define PACKAGE		"PKPACKAG"
#define MAX_RECORDS	20000	/* per reader pass: bounds the run time */

static const unsigned formats[] = {
	PK_FMT_HUMAN | PK_FMT_F_ESCAPE,
	PK_FMT_HUMAN | PK_FMT_F_REALTIME | PK_FMT_F_DELTA | PK_FMT_F_TID,
	PK_FMT_HUMAN | PK_FMT_F_LOC,
	PK_FMT_KMSG,
	PK_FMT_SYSLOG | PK_FMT_F_ESCAPE | PK_FMT_F_DELTA,
	PK_FMT_JSON | PK_FMT_F_REALTIME,
	PK_FMT_RAW,
	PK_FMT_JOURNAL,
};

static char line[PK_FORMAT_MAX];

/* ---- what the recipe's writer stored ----------------------------------- */

/*
 * One state of one record: its seq, metadata and text as stored.  An
 * extension stores the longer text in a new block and the old block may
 * survive, so every state counts as written.
 */
struct state {
	uint64_t seq;
	unsigned lane;
	struct pk_ring_meta meta;
	uint32_t len;
	uint32_t off;		/* of the text in `arena` */
};

#define MAX_STATES	8192
#define ARENA_SIZE	(8u << 20)

static struct state states[MAX_STATES];
static char arena[ARENA_SIZE];

struct model {
	unsigned n;		/* states */
	uint32_t used;		/* arena bytes */
	unsigned lanes;		/* of the store written */
	uint64_t head[PK_LANES_MAX];	/* seqs written in each lane: 0 .. head-1 */
	bool patched;		/* some patch changed a byte */
};

static _Noreturn void violation(const char *what, const struct pk_record *rec)
{
	fprintf(stderr, "fuzz_store: property violated: %s: lane %u seq %llu level %d facility %d "
		"flags %#x tid %u pid %u ts %llu len %zu\n", what, rec->lane,
		(unsigned long long)rec->seq, rec->level, rec->facility, rec->flags, rec->tid,
		rec->pid, (unsigned long long)rec->ts_ns, rec->len);
	abort();
}

static NOCOV bool add_state(struct model *mo, unsigned lane, uint64_t seq,
			    const struct pk_ring_meta *m, const char *text, uint32_t len)
{
	struct state *s;

	if (mo->n == MAX_STATES || ARENA_SIZE - mo->used < len)
		return false;
	s = &states[mo->n++];
	s->seq = seq;
	s->lane = lane;
	s->meta = *m;
	s->len = len;
	s->off = mo->used;
	memcpy(arena + mo->used, text, len);
	mo->used += len;
	return true;
}

/* Can @mo keep another record, and an extension's whole text? */
static bool model_room(const struct model *mo)
{
	return mo->n < MAX_STATES && ARENA_SIZE - mo->used >= 2 * (PK_RING_TEXT_MAX + 8);
}

/* The newest state of @seq in @lane, or NULL. */
static NOCOV const struct state *last_state(const struct model *mo, unsigned lane, uint64_t seq)
{
	unsigned i = mo->n;

	while (i--)
		if (states[i].seq == seq && states[i].lane == lane)
			return &states[i];
	return NULL;
}

static void rendered(struct pk_ring_rec *r, uint64_t seq, const struct pk_ring_meta *m,
		     const unsigned char *body, uint32_t len);

/* The model keeps records as stored; a reader returns them rendered (package, module). */
static NOCOV bool same(const struct state *s, const struct pk_record *rec)
{
	static struct pk_ring_rec r;

	if (s->seq != rec->seq || s->lane != rec->lane)
		return false;	/* before rendering: most states are of other seqs */
	rendered(&r, s->seq, &s->meta, (const unsigned char *)arena + s->off, s->len);
	if (r.module[0] ? !rec->module || strcmp(r.module, rec->module) : rec->module != NULL)
		return false;
	{
		struct pk_record fr;
		size_t i;

		pk__rec_fields(&r, &fr);
		if (fr.nfields != rec->nfields || fr.line != rec->line ||
		    (fr.file ? !rec->file || strcmp(fr.file, rec->file) : rec->file != NULL) ||
		    (fr.func ? !rec->func || strcmp(fr.func, rec->func) : rec->func != NULL))
			return false;
		for (i = 0; i < fr.nfields; i++)
			if (strcmp(fr.fields[i].key, rec->fields[i].key) ||
			    strcmp(fr.fields[i].value, rec->fields[i].value))
				return false;
	}
	return r.seq == rec->seq && r.len == rec->len && r.meta.ts_ns == rec->ts_ns &&
	       r.meta.tid == rec->tid && r.meta.pid == rec->pid && r.meta.level == rec->level &&
	       r.meta.facility == rec->facility && r.meta.flags == rec->flags &&
	       !memcmp(r.text, rec->text, rec->len);
}

/*
 * Check one record the reader returned against what was written; @prev is
 * the seq of the one before in its lane (UINT64_MAX: none), @before the
 * record before in the merged order (NULL: none).
 */
static void check_record(const struct model *mo, const struct pk_record *rec, uint64_t prev,
			 const struct pk_record *before)
{
	const struct state *last = last_state(mo, rec->lane, rec->seq);
	unsigned i;

	if (!last)
		violation("a seq the writer never stored", rec);
	if (!mo->patched) {
		/* Nothing was changed: the record in its final state, no gaps. */
		if (prev != UINT64_MAX && rec->seq != prev + 1)
			violation("a record skipped in an intact store", rec);
		/* And the lanes merged in key order (ts, lane, seq). */
		if (before && (rec->ts_ns < before->ts_ns ||
			       (rec->ts_ns == before->ts_ns &&
				(rec->lane < before->lane ||
				 (rec->lane == before->lane && rec->seq <= before->seq)))))
			violation("an intact store's lanes merged out of key order", rec);
		if (!same(last, rec))
			violation("not the record's final state in an intact store", rec);
		return;
	}
	for (i = 0; i < mo->n; i++)
		if (same(&states[i], rec))
			return;
	violation("neither written nor reported lost", rec);
}

/* ---- reading ----------------------------------------------------------- */

/* What a reader returned after a cursor: each record, briefly. */
struct seen {
	uint64_t seq;
	uint32_t lane;
	uint32_t len;
	uint64_t ts;
	uint32_t sum;
};

static struct seen seen[MAX_RECORDS];

static NOCOV uint32_t text_sum(const char *t, size_t len)
{
	uint32_t h = 2166136261u;

	while (len--)
		h = (h ^ (unsigned char)*t++) * 16777619u;
	return h;
}

static void seen_set(struct seen *e, const struct pk_record *rec)
{
	memset(e, 0, sizeof(*e));	/* padding too: entries are compared whole */
	e->seq = rec->seq;
	e->lane = rec->lane;
	e->len = (uint32_t)rec->len;
	e->ts = rec->ts_ns;
	e->sum = text_sum(rec->text, rec->len);
}

/* A second reader of the same store, for the cursor's property (read_store()). */
struct reopen {
	struct pk_reader *(*open)(const struct reopen *ro);
	void *mem;
	size_t size;
	const char *path;
};

static struct pk_reader *reopen_image(const struct reopen *ro)
{
	return pk__reader_open_image(ro->mem, ro->size);
}

#ifdef PK_FUZZ_REPLAY
static struct pk_reader *reopen_path(const struct reopen *ro)
{
	return pk_reader_open_file(ro->path);
}
#endif

/*
 * Read every record of the store behind @r (then closed), each bounded
 * and terminated, and if @render, formatted (each format in turn); with
 * @mo, check each against what the recipe wrote.  Whatever the store: a
 * record's lane is one the store has, its seq grows within its lane, and
 * a cursor taken after the first few records, given to a second reader
 * of the same bytes (@ro, if not NULL), resumes with exactly the records
 * that came after it: nobody writes the image, so the merge is the same.
 */
static void read_store(struct pk_reader *r, uint64_t seek, const struct model *mo, bool render,
		       const struct reopen *ro)
{
	static uint64_t last[PK_LANES_MAX];
	static char cur[PK_READER_CURSOR_MAX];
	struct pk_format_opts fo = { 0 };
	struct pk_store_info info;
	struct pk_record rec, before;
	struct pk_reader *r2;
	uint64_t expect;
	size_t n, nformats = sizeof(formats) / sizeof(formats[0]);
	unsigned lanes, i, split, nseen = 0;
	bool have_before = false, ended = false, cut = false;
	int k = 0;

	if (!r)
		return;
	pk_reader_info(r, &info);
	lanes = info.lanes;
	if (lanes < 1 || lanes > PK_LANES_MAX)
		abort();	/* the reader attached what is not a store of lanes */
	fo.realtime_zero_ns = info.realtime_zero_ns;
	if (seek != UINT64_MAX)
		pk_reader_seek(r, seek);
	for (i = 0; i < lanes; i++)
		last[i] = UINT64_MAX;
	split = (unsigned)(info.next_seq % 5);
	cur[0] = '\0';
	for (;;) {
		if (k == (int)split && ro) {
			if (pk_reader_cursor(r, cur, sizeof(cur)) < 0)
				abort();	/* PK_READER_CURSOR_MAX holds every cursor */
			cut = true;
		}
		if (k++ >= MAX_RECORDS)
			break;
		if (pk_reader_next(r, &rec) != 1) {
			ended = true;
			break;
		}
		if (rec.lane >= lanes)
			violation("a lane the store does not have", &rec);
		expect = pk_reader_tell_lane(r, rec.lane);	/* after it: its seq + 1 */
		if (expect != rec.seq + 1)
			violation("the reader's position in the lane is not after the record", &rec);
		if (last[rec.lane] != UINT64_MAX && rec.seq <= last[rec.lane])
			violation("seq did not increase in its lane", &rec);
		if (rec.len > PK_RECORD_MAX || strlen(rec.text) > rec.len)
			abort();	/* the reader promised a bounded, terminated text */
		if (rec.nfields > PK_FIELDS_MAX || (rec.nfields && !rec.fields))
			abort();	/* at most PK_FIELDS_MAX fields */
		for (size_t f = 0; f < rec.nfields; f++)	/* each a valid key, a bounded value */
			if (!pk__field_key_ok(rec.fields[f].key, strlen(rec.fields[f].key)) ||
			    strlen(rec.fields[f].value) > PK_FIELDS_BYTES)
				abort();
		if (mo)
			check_record(mo, &rec, last[rec.lane], have_before ? &before : NULL);
		if (last[rec.lane] != UINT64_MAX && rec.seq > last[rec.lane] + 1)
			pk__format_dropped_lane(line, sizeof(line), rec.seq - last[rec.lane] - 1,
						PK_FMT_JSON, rec.lane);
		last[rec.lane] = rec.seq;
		before = rec;
		have_before = true;
		if (cut && nseen < MAX_RECORDS)
			seen_set(&seen[nseen++], &rec);
		if (!render)
			continue;
		/* Each record in one format, in turn: every format, a sixth the time. */
		fo.fmt = formats[(rec.seq + (size_t)k) % nformats] | (lanes > 1 ? PK_FMT_F_LANE : 0);
		n = pk__format_record(line, sizeof(line), &rec, &fo);
		if (n >= sizeof(line) || line[n] != '\0')
			abort();
		fo.prev_ts_ns = rec.ts_ns;
	}
	/* Intact: the reader got to the end of what was written, in every lane. */
	for (i = 0; mo && !mo->patched && i < mo->lanes; i++) {
		if (mo->head[i] && last[i] != mo->head[i] - 1) {
			fprintf(stderr, "fuzz_store: property violated: intact store of %llu records in "
				"lane %u read up to seq %lld only\n", (unsigned long long)mo->head[i],
				i, last[i] == UINT64_MAX ? -1ll : (long long)last[i]);
			abort();
		}
	}
	pk_reader_wait(r, 0);	/* read-only: polls once, never sleeps */
	pk_reader_close(r);
	if (!cut)
		return;
	/* The cursor's property: a second reader from there, the same records. */
	r2 = ro->open(ro);
	if (!r2 || pk_reader_seek_cursor(r2, cur) != 0) {
		fprintf(stderr, "fuzz_store: property violated: a second reader %s cursor %s\n",
			r2 ? "refused the" : "could not open the store of", cur);
		abort();
	}
	for (i = 0; i < nseen; i++) {
		struct seen e;

		if (pk_reader_next(r2, &rec) != 1) {
			fprintf(stderr, "fuzz_store: property violated: from cursor %s, %u records "
				"where the first reader read %u\n", cur, i, nseen);
			abort();
		}
		seen_set(&e, &rec);
		if (memcmp(&e, &seen[i], sizeof(e)))
			violation("from a cursor, not the record the first reader read there", &rec);
	}
	if (ended && pk_reader_next(r2, &rec) == 1)
		violation("from a cursor, a record after the first reader's last", &rec);
	pk_reader_close(r2);
}

/*
 * A copy of @size bytes at @data in @buf (IMAGE_MAX bytes, 8-aligned as a
 * mapping is), its tail poisoned so that AddressSanitizer reports any
 * access past the copy as it would past a heap block of that size; or,
 * larger, a heap block.  No allocation per input.
 */
#define IMAGE_MAX	(64u << 10)

static void *image(uint64_t *buf, const uint8_t *data, size_t size)
{
	void *mem = buf;

	if (size > IMAGE_MAX) {
		mem = malloc(size);
		if (!mem)
			abort();
	}
	memcpy(mem, data, size);
	if (mem == buf)
		ASAN_POISON_MEMORY_REGION((char *)buf + size, IMAGE_MAX - size);
	return mem;
}

static void image_done(uint64_t *buf, void *mem, size_t size)
{
	(void)size;
	if (mem == buf)
		ASAN_UNPOISON_MEMORY_REGION(buf, IMAGE_MAX);
	else
		free(mem);
}

/* What a writer stores on top of a store it opened: in every lane. */
static void write_on(struct pk_lanes *ls)
{
	struct pk_ring_meta m = { .ts_ns = 1, .tid = 7, .level = 6, .facility = 1 };
	uint64_t seq;
	unsigned l;
	int i;

	for (l = 0; l < ls->n; l++) {
		for (i = 0; i < 3; i++)
			pk__ring_write(&ls->lane[l], &m, "fuzz", 4, i == 1, &seq);
		pk__ring_extend(&ls->lane[l], seq, " more", 5, false, PK_RING_TEXT_MAX);
	}
}

/*
 * The writer's side in memory: the checks a writer's open makes of an
 * existing file's contents, its recovery of dead writers' records in
 * every lane, new records stored on top of the hostile contents, then a
 * read.  In a copy of exactly @size bytes on the heap, so that
 * AddressSanitizer sees any access past the image.
 */
static void write_image(const uint8_t *data, size_t size)
{
	static uint64_t buf[IMAGE_MAX / 8];
	static struct pk_lanes ls;
	void *mem = image(buf, data, size);
	struct reopen ro = { reopen_image, mem, size, NULL };

	if (pk__persist_check_image(mem, size, true, &ls) == 0) {
		pk__persist_take_over(&ls, 0);
		if (pk__lanes_attach(&ls, mem, size) == 0)
			write_on(&ls);
		read_store(pk__reader_open_image(mem, size), UINT64_MAX, NULL, false, &ro);
	}
	image_done(buf, mem, size);
}

#ifdef PK_FUZZ_REPLAY
/*
 * Open as a writer (recovery), store on top of what is there, read again,
 * all through the files and calls pkmsg and pk_init() use.  A writer
 * opens a store only by its own name, never through a symlink such as
 * /proc/self/fd/N: the bytes go into a file of a private directory first.
 */
static void write_store(const uint8_t *data, size_t size)
{
	static char dir[64];
	char path[128];
	static struct pk_lanes ls;
	struct pk_config cfg;
	void *mem;
	size_t msize;
	int fd;

	if (!dir[0]) {
		strcpy(dir, "/tmp/fuzz_store.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof(path), "%s/store", dir);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	pk_config_init(&cfg);
	cfg.buffer_path = path;
	cfg.buffer_size = size;
	if (pk__persist_open(&cfg, &mem, &msize, &fd) < 0) {
		unlink(path);
		return;
	}
	if (pk__lanes_attach(&ls, mem, msize) == 0)
		write_on(&ls);
	pk__persist_close(mem, msize, fd);
	{
		struct reopen ro = { reopen_path, NULL, 0, path };

		read_store(pk_reader_open_file(path), UINT64_MAX, NULL, true, &ro);
	}
	unlink(path);
}
#endif

/*
 * The reader's and the writer's checks on @size bytes.  Fuzzing, in
 * memory (pk__reader_open_image(): the checks pk_reader_open_file() makes
 * of a file's contents, without a file per input).  Replayed, also
 * through a file, as pkmsg -F and pk_init() open one, and the file and
 * the image must be accepted or refused alike.
 */
static void run_file(const uint8_t *data, size_t size, uint64_t seek, const struct model *mo)
{
	static uint64_t buf[IMAGE_MAX / 8];
	void *img = image(buf, data, size);
	struct reopen ro = { reopen_image, img, size, NULL };
	struct pk_reader *r;
	bool ok;

	r = pk__reader_open_image(img, size);
	ok = r != NULL;
	read_store(r, seek, mo, true, &ro);
	image_done(buf, img, size);
	if (ok)
		write_image(data, size);
#ifdef PK_FUZZ_REPLAY
	{
		static int fd = -1;
		char path[64];

		if (fd < 0)
			fd = memfd_create("fuzz_store", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, 0) ||
		    (size && pwrite(fd, data, size, 0) != (ssize_t)size))
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		r = pk_reader_open_file(path);
		if ((r != NULL) != ok) {
			fprintf(stderr, "fuzz_store: a store image and the same bytes in a file "
				"were not treated alike (image %s, file %s)\n",
				ok ? "accepted" : "refused", r ? "accepted" : "refused");
			abort();
		}
		{
			struct reopen rp = { reopen_path, NULL, 0, path };

			read_store(r, seek, mo, true, &rp);
		}
		if (ok)
			write_store(data, size);
	}
#endif
}

/* ---- recipes ------------------------------------------------------------ */

/*
 * Bytes of generated text: every byte value, from a tiny generator.
 * Eight at a time into a word, then stored: one store (and one
 * AddressSanitizer check) per eight bytes, the same bytes as one by one.
 */
static NOCOV void gen_text(char *buf, uint32_t len, uint64_t key)
{
	uint32_t i = 0, k;
	unsigned char w[8];

	while (i < len) {
		for (k = 0; k < 8; k++) {
			key = key * 6364136223846793005ull + 1442695040888963407ull;
			w[k] = (unsigned char)(key >> 56);
		}
		k = len - i < 8 ? len - i : 8;
		memcpy(buf + i, w, k);
		i += k;
	}
}

/* FNV-1a of @len bytes at @t: the numbers of a generated package. */
static NOCOV uint64_t hash_text(const char *t, uint32_t len)
{
	uint64_t v = 0x9e3779b97f4a7c15ull;

	for (uint32_t i = 0; i < len; i++)
		v = (v ^ (unsigned char)t[i]) * 0x100000001b3ull;
	return v;
}

static int pack(unsigned char *out, size_t cap, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = pk__vpack(out, cap, fmt, ap, 0, err);
	va_end(ap);
	return n;
}

/*
 * A package made by pk__vpack() from one of a set of formats, with @t
 * (@len bytes) as its strings and the source of its numbers; if the
 * format cannot be packed, the bytes of @t as they are.  Return: length.
 */
static uint32_t pkg_of(unsigned char *out, unsigned which, const char *t, uint32_t len)
{
	static char s[PK_RING_TEXT_MAX + 1];
	uint64_t v = hash_text(t, len);
	double d;
	long double ld;
	int n = -2;

	memcpy(s, t, len);
	s[len] = '\0';
	memcpy(&d, &v, sizeof(d));
	ld = (long double)d * (long double)(v >> 40);
	switch (which % 12) {
	case 0: n = pack(out, PK_RING_TEXT_MAX, 0, "%s\n", s); break;
	case 1: n = pack(out, PK_RING_TEXT_MAX, 0, "%d %ld %lld %hhx %zu\n", (int)v, (long)v,
			 (long long)v, (int)v, (size_t)v); break;
	case 2: n = pack(out, PK_RING_TEXT_MAX, 0, "%.*s|%*d|\n", (int)(v % 50) - 5, s,
			 (int)(v % 30) - 15, (int)v); break;
	case 3: n = pack(out, PK_RING_TEXT_MAX, 0, "%e %g %a %.3f\n", d, d, d, d); break;
	case 4: n = pack(out, PK_RING_TEXT_MAX, 0, "%Lf %.10Le %La\n", ld, ld, ld); break;
	case 5: n = pack(out, PK_RING_TEXT_MAX, (int)(v % 140), "%p %c %m %#m %%\n",
			 (void *)(uintptr_t)v, (int)v); break;
	case 6: n = pack(out, PK_RING_TEXT_MAX, 0, "%s|%s|%s\n", s, s + len / 3,
			 s + 2 * len / 3); break;
	case 7: n = pack(out, PK_RING_TEXT_MAX, 0, PK_KFMT "kernel %s %d\n", s, (int)v); break;
	case 8: n = pack(out, PK_RING_TEXT_MAX, 0, "%-10.3s|%#o|%+i|% d|%'d|%05.1f\n", s,
			 (unsigned)v, (int)v, (int)v, (int)v, d); break;
	case 9: n = pack(out, PK_RING_TEXT_MAX, 0, "%lc %hd %ju %td %B\n", (wint_t)(v & 0x1fffff),
			 (int)v, (uintmax_t)v, (ptrdiff_t)v, (unsigned)v); break;
	case 10: n = pack(out, PK_RING_TEXT_MAX, 0, "unknown %y %5k then %s\n", s); break;
	case 11: n = pack(out, PK_RING_TEXT_MAX, 0, "%s", s); break;
	}
	if (n >= 0)
		return (uint32_t)n;
	memcpy(out, t, len);
	return len;
}

/*
 * A fields block (record.c, "FIELDS") made by pk__fields_encode() from
 * @t (@len bytes): up to 10 fields, keys and values cut from the bytes,
 * some keys bad on purpose (left out, counted).  Return: its length.
 */
static uint32_t fields_of(char *out, const char *t, uint32_t len)
{
	static char kv[20][PK_FIELDS_BYTES + 1];
	struct pk_field f[10];
	uint32_t i, n = len ? 1 + (unsigned char)t[0] % 10 : 0, pos = 1;
	int err = 0;

	for (i = 0; i < n; i++) {
		uint32_t k, klen = 1 + (pos < len ? (unsigned char)t[pos] % 12 : 0);
		uint32_t vlen = pos + 1 < len ? (unsigned char)t[pos + 1] % 200 : 0;

		for (k = 0; k < klen; k++) {	/* a letter first; a ' ' now and then */
			unsigned char c = pos + k < len ? (unsigned char)t[pos + k] : 'K';

			kv[2 * i][k] = k ? "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ "[c % 38] :
					   (char)('A' + c % 26);
		}
		kv[2 * i][klen] = '\0';
		for (k = 0; k < vlen; k++) {
			char c = pos + k < len ? t[pos + k] : 'v';

			kv[2 * i + 1][k] = c ? c : '0';
		}
		kv[2 * i + 1][vlen] = '\0';
		f[i].key = kv[2 * i];
		f[i].value = kv[2 * i + 1];
		pos += 2 + vlen / 4;
	}
	return (uint32_t)pk__fields_encode(out, f, n, &err);
}

/* What a reader returns for a record stored as @m with body @body. */
static void rendered(struct pk_ring_rec *r, uint64_t seq, const struct pk_ring_meta *m,
		     const unsigned char *body, uint32_t len)
{
	r->seq = seq;
	r->meta = *m;
	r->len = len;
	memcpy(r->text, body, len);
	r->text[len] = '\0';
	pk__rec_render(r);
}

/*
 * A recipe: records, then 0xff, then patches.
 *
 *   record  3 bytes, then the text if it is literal:
 *           [0] level (bits 2..0), facility (7..3); a facility of 24
 *               to 31 (none of syslog's) also flags a location block
 *               (PK__REC_LOC) on a record stored neither as a package
 *               nor as an extension: a valid block at the body's start
 *               (after a module prefix) when the text is generated
 *           [1] flags (3..0); 0x30 set: extend the newest record instead
 *               of storing one; 0x20 alone: store a package (pkg_of(),
 *               with the text as its strings and numbers); 0x10 alone: a
 *               record of a module (PK__REC_MODULE), its text the prefix
 *               and body, a valid prefix when generated; 0x40: leave it
 *               open; 0x80: generated text (from the recipe position)
 *               instead of literal bytes; 0x08 with 0x20 or with none
 *               of 0x30: a record with fields (PK__REC_FIELDS, not
 *               PK_REC_EMERG): after a package or a generated text a
 *               fields block made from the text (fields_of()), after
 *               literal text the bytes as they are
 *           [2] length / 5 (capped at PK_RING_TEXT_MAX; literal text at
 *               what is left of the input)
 *   patch   3 bytes: offset (16 bits, little-endian, modulo the region
 *           size), a byte to XOR there
 */
/*
 * A valid location block (record.c, "LOCATIONS") at @at in generated
 * text @t of @len bytes, its lengths and line from the bytes there, NULs
 * in its names made '/'; nothing if there is no room for its header.
 */
static void loc_of(char *t, unsigned len, unsigned at)
{
	unsigned char *u = (unsigned char *)t + at;
	unsigned room, flen, glen, i;

	if (at + PK_RING_LOC_HDR > len)
		return;
	room = len - at - PK_RING_LOC_HDR;
	flen = u[4] % (room + 1);
	if (flen > PK_RING_LOC_FILE_MAX)
		flen = PK_RING_LOC_FILE_MAX;
	glen = u[5] % (room - flen + 1);
	if (glen > PK_RING_LOC_FUNC_MAX)
		glen = PK_RING_LOC_FUNC_MAX;
	u[4] = (unsigned char)flen;
	u[5] = (unsigned char)glen;
	for (i = 0; i < flen + glen; i++)
		if (!u[PK_RING_LOC_HDR + i])
			u[PK_RING_LOC_HDR + i] = '/';
}

/*
 * @p (@size bytes) as a recipe for a store of @lanes lanes (1, 2 or 4,
 * each of the smallest data ring).  A record goes into lane facility %
 * lanes (the facility: bits 7..3 of its first byte); an extension to the
 * newest record, whatever its lane.  Timestamps only grow, so an intact
 * store merges in the order the records were written, ties by lane.
 */
static void run_recipe(const uint8_t *p, size_t size, unsigned lanes)
{
	static uint64_t mem[4 * (PK_RING_HDR_SIZE + (8u << (PK_RING_MIN_DATA_LOG2 - PK_RING_DESC_SHIFT)) +
				 (1u << PK_RING_MIN_DATA_LOG2)) / 8];
	static char gen[PK_RING_TEXT_MAX];
	static struct pk_lanes ls;
	const uint8_t *start = p, *end = p + size;
	static struct model mo;
	struct pk_ring *ring;
	struct pk_ring_meta m = { .pid = 4200 };
	const struct state *st;
	const char *text;
	uint64_t seq = 0, ts = 1000;
	size_t total;
	unsigned len, off, i, lane = 0, slane = 0;
	bool stored = false;
	char *joined;

	if (lanes != 2 && lanes != 4)
		lanes = 1;
	total = pk__lanes_region_size(lanes, PK_RING_MIN_DATA_LOG2);
	memset(&mo, 0, sizeof(mo));
	pk__lanes_format(mem, lanes, PK_RING_MIN_DATA_LOG2, 0);
	if (pk__lanes_attach(&ls, mem, total) < 0)
		abort();
	total = (size_t)ls.n * ls.lane_size;	/* one lane without a 16-byte CAS */
	mo.lanes = ls.n;
	/*
	 * Records until the model could not keep one more (the longest
	 * recipes, of some 15000 records, would fill it): the rest of the
	 * input is then patches.
	 */
	while (end - p >= 3 && p[0] != 0xff && model_room(&mo)) {
		lane = (unsigned)(p[0] >> 3) % ls.n;
		ring = &ls.lane[lane];
		len = p[2] * 5u;
		if (len > PK_RING_TEXT_MAX)
			len = PK_RING_TEXT_MAX;
		if (p[1] & 0x80) {
			gen_text(gen, len, (uint64_t)(p - start) * 0x9e3779b97f4a7c15ull + p[2]);
			if ((p[1] & 0x30) == 0x10 && len >= 2) {
				/* A valid prefix: a name of 1 to 31 name characters. */
				static const char nc[] = "abcdefghijklmnopqrstuvwxyz_0123456789";
				unsigned k, n = 1 + p[2] % 31;

				if (n + 1 > len)
					n = len - 1;
				gen[0] = (char)n;
				for (k = 0; k < n; k++)
					gen[1 + k] = nc[(unsigned char)gen[1 + k] % (sizeof(nc) - 1)];
			}
			if (p[0] >> 3 >= 24 && !(p[1] & 0x20))
				loc_of(gen, len, (p[1] & 0x30) == 0x10 && len >= 2 ?
						 1u + (unsigned char)gen[0] : 0);
			text = gen;
		} else {
			if (len > (size_t)(end - p - 3))
				len = (unsigned)(end - p - 3);
			text = (const char *)p + 3;
		}
		m.level = p[0] & 7;
		m.facility = p[0] >> 3;
		m.flags = p[1] & 0x0f;
		if ((p[1] & 0x08) && !(p[1] & 0x10))
			m.flags = (p[1] & 0x07) | PK__REC_FIELDS;
		if (p[0] >> 3 >= 24 && !(p[1] & 0x20))
			m.flags |= PK__REC_LOC;
		if ((p[1] & 0x98) == 0x88 && !(p[1] & 0x30)) {
			/* Generated text, then a valid block from it. */
			static char body[PK_RING_TEXT_MAX];
			uint32_t tl = len > PK_RECORD_MAX ? PK_RECORD_MAX : len;

			memcpy(body, gen, tl);
			len = tl + fields_of(body + tl, gen, tl);
			text = body;
		}
		m.tid = p[1];
		m.ts_ns = ts += p[2] * 1234567ull;
		if ((p[1] & 0x30) == 0x30) {
			st = stored ? last_state(&mo, slane, seq) : NULL;
			if (pk__ring_extend(&ls.lane[slane], seq, text, len, p[1] & 0x40,
					    PK_RING_TEXT_MAX) == 0) {
				/* What it holds now: the old text and the new. */
				if (!st || st->len + len > PK_RING_TEXT_MAX)
					abort();	/* extended what it could not have */
				joined = malloc(st->len + len + 1);
				memcpy(joined, arena + st->off, st->len);
				memcpy(joined + st->len, text, len);
				if (!add_state(&mo, slane, seq, &st->meta, joined, st->len + len))
					mo.patched = true;	/* model full: property only */
				free(joined);
			}
		} else if ((p[1] & 0x30) == 0x20) {
			static unsigned char pkg[PK_RING_TEXT_MAX];
			uint32_t plen = pkg_of(pkg, p[0] ^ p[2], text,
					       len > PK_RECORD_MAX ? PK_RECORD_MAX : len);

			if (plen > PK_RECORD_MAX)
				plen = PK_RECORD_MAX;
			if (m.flags & PK__REC_FIELDS)
				plen += fields_of((char *)pkg + plen, text, len);
			m.flags |= PK__REC_PACKED;
			if (pk__ring_write(ring, &m, (const char *)pkg, plen, false, &seq) == 0) {
				stored = true;
				slane = lane;
				if (!add_state(&mo, lane, seq, &m, (const char *)pkg, plen))
					mo.patched = true;
			}
		} else if ((p[1] & 0x30) == 0x10) {
			m.flags |= PK__REC_MODULE;
			if (pk__ring_write(ring, &m, text, len, p[1] & 0x40, &seq) == 0) {
				stored = true;
				slane = lane;
				if (!add_state(&mo, lane, seq, &m, text, len))
					mo.patched = true;
			}
		} else if (pk__ring_write(ring, &m, text, len, p[1] & 0x40, &seq) == 0) {
			stored = true;
			slane = lane;
			if (!add_state(&mo, lane, seq, &m, text, len))
				mo.patched = true;
		}
		p += (p[1] & 0x80) ? 3 : 3 + len;
	}
	for (i = 0; i < ls.n; i++)
		mo.head[i] = pk__ring_next_seq(&ls.lane[i]);
	if (end - p >= 1)
		p++;
	for (; end - p >= 3; p += 3) {
		off = ((unsigned)p[0] | (unsigned)p[1] << 8) % total;
		((uint8_t *)mem)[off] ^= p[2];
		if (p[2])
			mo.patched = true;
	}
	run_file((const uint8_t *)mem, total, UINT64_MAX, &mo);
}

/*
 * A package, formatted into buffers of several sizes and as a reader
 * formats a record: bounded and terminated, whatever the bytes.
 */
static void run_package(const uint8_t *data, size_t size)
{
	static const int sizes[] = { 0, 1, 7, 64, PK__TEXT_BUF };
	static char buf[PK__TEXT_BUF + 16];
	static struct pk_ring_rec r;
	size_t i, end;
	int n;

	/*
	 * The full buffer, and one of the short ones (by the input's size):
	 * a huge %Lf costs as much in 7 bytes as in 1026.  Replayed, all.
	 */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
#ifndef PK_FUZZ_REPLAY
		if (i + 1 < sizeof(sizes) / sizeof(sizes[0]) &&
		    i != size % (sizeof(sizes) / sizeof(sizes[0]) - 1))
			continue;
#endif
		memset(buf, 0x5a, sizeof(buf));
		n = pk__unpack(buf, sizes[i], data, size);
		if (n < -1)
			abort();
		if (sizes[i] == 0) {
			if (buf[0] != 0x5a)
				abort();	/* no room: nothing written */
			continue;
		}
		end = n < 0 ? 0 : (size_t)n < (size_t)sizes[i] - 1 ? (size_t)n : (size_t)sizes[i] - 1;
		if (buf[end] != '\0' || buf[sizes[i]] != 0x5a)
			abort();	/* unterminated, or written past the buffer */
	}
	memset(&r, 0, sizeof(r));
	r.meta.flags = PK__REC_PACKED;
	r.len = size < PK_RING_TEXT_MAX ? (uint32_t)size : PK_RING_TEXT_MAX;
	memcpy(r.text, data, r.len);
	pk__rec_render(&r);
	if (r.len > PK_RECORD_MAX || r.text[r.len] != '\0' || (r.meta.flags & PK__REC_PACKED))
		abort();
}

static bool recipe_mode, package_mode;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *e = getenv("PK_FUZZ_MODE");

	(void)argc;
	(void)argv;
	recipe_mode = e && !strcmp(e, "recipe");
	package_mode = e && !strcmp(e, "package");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (recipe_mode) {
		if (size > sizeof(LANES) - 1 && !memcmp(data, LANES, sizeof(LANES) - 1))
			run_recipe(data + sizeof(LANES), size - sizeof(LANES),
				   1u << (data[sizeof(LANES) - 1] % 3));
		else
			run_recipe(data, size, 1);
		return 0;
	}
	if (package_mode) {
		run_package(data, size);
		return 0;
	}
	if (size >= sizeof(PACKAGE) - 1 && !memcmp(data, PACKAGE, sizeof(PACKAGE) - 1)) {
		run_package(data + sizeof(PACKAGE) - 1, size - (sizeof(PACKAGE) - 1));
		return 0;
	}
	if (size >= sizeof(RECIPE) - 1 && !memcmp(data, RECIPE, sizeof(RECIPE) - 1)) {
		run_recipe(data + sizeof(RECIPE) - 1, size - (sizeof(RECIPE) - 1), 1);
		return 0;
	}
	if (size > sizeof(LANES) - 1 && !memcmp(data, LANES, sizeof(LANES) - 1)) {
		run_recipe(data + sizeof(LANES), size - sizeof(LANES),
			   1u << (data[sizeof(LANES) - 1] % 3));
		return 0;
	}
	run_file(data, size, size ? data[size - 1] : UINT64_MAX, NULL);
	return 0;
}

#ifdef PK_FUZZ_REPLAY
/* ---- replay without libFuzzer ------------------------------------------- */

static unsigned runs;

static void run_path(const char *path)
{
	struct stat st;
	size_t n;
	uint8_t *buf;
	FILE *f;

	if (stat(path, &st)) {
		perror(path);
		exit(2);
	}
	if (S_ISDIR(st.st_mode)) {
		struct dirent **ents;
		char sub[4096];
		int i, k = scandir(path, &ents, NULL, alphasort);

		for (i = 0; i < k; i++) {
			if (ents[i]->d_name[0] != '.') {
				snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name);
				run_path(sub);
			}
			free(ents[i]);
		}
		free(ents);
		return;
	}
	f = fopen(path, "rb");
	buf = malloc((size_t)st.st_size + 1);
	if (!f || !buf) {
		perror(path);
		exit(2);
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	runs++;
}

/*
 * A random recipe: a few dozen records of random levels, flags and
 * lengths (literal or generated text, some open, some extensions), and
 * patches on one run out of two.
 */
static size_t random_recipe(uint8_t *buf, size_t cap, uint64_t *s)
{
	size_t n = 0, i, j, len, nrec, npatch;
	uint8_t b0, b1;

#define RND() (*s = *s * 6364136223846793005ull + 1442695040888963407ull, (unsigned)(*s >> 33))
	nrec = RND() % 60;
	for (i = 0; i < nrec && n + 3 + 5 * 255 < cap; i++) {
		b0 = (uint8_t)RND();
		b1 = (uint8_t)RND();
		if (b0 == 0xff)
			b0 = 0x7f;	/* 0xff there would end the records */
		len = RND() % 4 ? RND() % 40 : RND() % 256;
		if (!(b1 & 0x80) && len > PK_RING_TEXT_MAX / 5)
			len = PK_RING_TEXT_MAX / 5;	/* all of it text */
		buf[n++] = b0;
		buf[n++] = b1;
		buf[n++] = (uint8_t)len;
		if (!(b1 & 0x80))
			for (j = 0; j < len * 5; j++)
				buf[n++] = (uint8_t)RND();
	}
	buf[n++] = 0xff;
	npatch = RND() % 2 ? RND() % 8 + 1 : 0;
	for (i = 0; i < npatch && n + 3 <= cap; i++) {
		buf[n++] = (uint8_t)RND();
		buf[n++] = (uint8_t)RND();
		buf[n++] = (uint8_t)(RND() | 1);
	}
	return n;
#undef RND
}

int main(int argc, char **argv)
{
	static uint8_t buf[16384];
	uint64_t seed = 0x5eed;
	unsigned i, nrandom = 0;
	int a;

	LLVMFuzzerInitialize(&argc, &argv);
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--random") && a + 1 < argc) {
			nrandom = (unsigned)strtoul(argv[++a], NULL, 0);
			continue;
		}
		run_path(argv[a]);
	}
	for (i = 0; i < nrandom; i++) {
		size_t n = random_recipe(buf, sizeof(buf), &seed);

		if (package_mode) {
			/* A package from a real format, some of its bytes changed. */
			static unsigned char pkg[PK_RING_TEXT_MAX];
			uint32_t plen = pkg_of(pkg, i, (const char *)buf + 8, (uint32_t)(n % 200));
			unsigned flips = buf[0] % 4;

			for (unsigned f = 0; f < flips && plen; f++)
				pkg[buf[1 + 2 * f] % plen] ^= (uint8_t)(buf[2 + 2 * f] | 1);
			run_package(pkg, plen);
		} else if (recipe_mode) {
			run_recipe(buf, n, 1u << (i % 3));	/* 1, 2 and 4 lanes in turn */
		} else if (i % 3 == 0) {
			memmove(buf + sizeof(RECIPE) - 1, buf, n);
			memcpy(buf, RECIPE, sizeof(RECIPE) - 1);
			LLVMFuzzerTestOneInput(buf, n + sizeof(RECIPE) - 1);
		} else {
			memmove(buf + sizeof(LANES), buf, n);
			memcpy(buf, LANES, sizeof(LANES) - 1);
			buf[sizeof(LANES) - 1] = (uint8_t)(i % 3);	/* 2 or 4 lanes */
			LLVMFuzzerTestOneInput(buf, n + sizeof(LANES));
		}
		runs++;
	}
	printf("fuzz_store: %u inputs, no property violated\n", runs);
	return 0;
}
#endif
