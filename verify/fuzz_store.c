// SPDX-License-Identifier: MIT
/*
 * fuzz_store - libFuzzer target for the store file reader and validator.
 *
 * An input is either
 *   - a store file, byte for byte (anything not starting with RECIPE), or
 *   - RECIPE, then records to store through the ring's writer into a fresh
 *     minimal region, then byte patches to apply to it: this reaches the
 *     record validation and the renderings with arbitrary text, which a
 *     mutated file rarely does because every block carries a checksum.
 *
 * The bytes go into a memfd, opened by path (/proc/self/fd/N) through the
 * public pk_reader_open_file(): the same open, fstat, mmap, validation and
 * attach as pkmsg -F.  Every record is rendered in every format.  A file
 * that validates is then also opened as a writer (pk__persist_open: the
 * recovery of dead writers' records, then new records stored on top of
 * the hostile contents) and read again.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format.h"
#include "internal.h"

#define RECIPE		"PKRECIPE"
#define MAX_RECORDS	20000	/* per reader pass: bounds the run time */

static const unsigned formats[] = {
	PK_FMT_HUMAN | PK_FMT_F_ESCAPE,
	PK_FMT_HUMAN | PK_FMT_F_REALTIME | PK_FMT_F_DELTA | PK_FMT_F_TID,
	PK_FMT_KMSG,
	PK_FMT_SYSLOG | PK_FMT_F_ESCAPE | PK_FMT_F_DELTA,
	PK_FMT_JSON | PK_FMT_F_REALTIME,
	PK_FMT_RAW,
};

static char line[PK_FORMAT_MAX];

static void read_store(const char *path, uint64_t seek)
{
	struct pk_format_opts fo = { 0 };
	struct pk_store_info info;
	struct pk_record rec;
	struct pk_reader *r;
	uint64_t expect;
	size_t i, n;
	int k = 0;

	r = pk_reader_open_file(path);
	if (!r)
		return;
	pk_reader_info(r, &info);
	fo.realtime_zero_ns = info.realtime_zero_ns;
	if (seek != UINT64_MAX)
		pk_reader_seek(r, seek);
	expect = pk_reader_tell(r);
	while (k++ < MAX_RECORDS && pk_reader_next(r, &rec) == 1) {
		if (rec.seq > expect)
			pk__format_dropped(line, sizeof(line), rec.seq - expect, PK_FMT_HUMAN);
		expect = rec.seq + 1;
		if (rec.len > PK_RECORD_MAX || strlen(rec.text) > rec.len)
			abort();	/* the reader promised a bounded, terminated text */
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
			fo.fmt = formats[i];
			n = pk__format_record(line, sizeof(line), &rec, &fo);
			if (n >= sizeof(line) || line[n] != '\0')
				abort();
		}
		fo.prev_ts_ns = rec.ts_ns;
	}
	pk_reader_wait(r, 0);	/* read-only: polls once, never sleeps */
	pk_reader_close(r);
}

/* Open as a writer (recovery), store on top of what is there, read again. */
static void write_store(const char *path, size_t size)
{
	struct pk_config cfg;
	struct pk_ring ring;
	struct pk_ring_meta m = { .ts_ns = 1, .tid = 7, .level = 6, .facility = 1 };
	void *mem;
	size_t msize;
	uint64_t seq;
	int fd, i;

	pk_config_init(&cfg);
	cfg.buffer_path = path;
	cfg.buffer_size = size;
	if (pk__persist_open(&cfg, &mem, &msize, &fd) < 0)
		return;
	if (pk__ring_attach(&ring, mem, msize) == 0) {
		for (i = 0; i < 3; i++)
			pk__ring_write(&ring, &m, "fuzz", 4, i == 1, &seq);
		pk__ring_extend(&ring, seq, " more", 5, false);
	}
	pk__persist_close(mem, msize, fd);
	read_store(path, UINT64_MAX);
}

static void run_file(const uint8_t *data, size_t size, uint64_t seek)
{
	char path[64];
	int fd = memfd_create("fuzz_store", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	read_store(path, seek);
	{
		struct pk_reader *r = pk_reader_open_file(path);

		if (r) {
			pk_reader_close(r);
			write_store(path, size);
		}
	}
	close(fd);
}

/* RECIPE: [n records: level, flags, len, text...] 0xff [patches: off16, xor]. */
static void run_recipe(const uint8_t *p, size_t size)
{
	static uint64_t mem[(PK_RING_HDR_SIZE + (8u << (PK_RING_MIN_DATA_LOG2 - PK_RING_DESC_SHIFT)) +
			     (1u << PK_RING_MIN_DATA_LOG2)) / 8];
	const uint8_t *end = p + size;
	struct pk_ring ring;
	struct pk_ring_meta m = { 0 };
	uint64_t seq = 0, ts = 1000;
	size_t total = pk__ring_region_size(PK_RING_MIN_DATA_LOG2);
	unsigned len, off;

	pk__ring_format(mem, PK_RING_MIN_DATA_LOG2, 0);
	if (pk__ring_attach(&ring, mem, total) < 0)
		abort();
	while (end - p >= 3 && p[0] != 0xff) {
		len = p[2] * 5u;
		if (len > (size_t)(end - p - 3))
			len = (unsigned)(end - p - 3);
		m.level = p[0] & 7;
		m.facility = p[0] >> 3;
		m.flags = p[1] & 0x0f;
		m.tid = p[1];
		m.ts_ns = ts += p[2] * 1234567ull;
		if ((p[1] & 0x30) == 0x30)
			pk__ring_extend(&ring, seq, (const char *)p + 3, len, p[1] & 0x40);
		else
			pk__ring_write(&ring, &m, (const char *)p + 3, len, p[1] & 0x40, &seq);
		p += 3 + len;
	}
	if (end - p >= 1)
		p++;
	for (; end - p >= 3; p += 3) {
		off = ((unsigned)p[0] | (unsigned)p[1] << 8) % total;
		((uint8_t *)mem)[off] ^= p[2];
	}
	run_file((const uint8_t *)mem, total, UINT64_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= sizeof(RECIPE) - 1 && !memcmp(data, RECIPE, sizeof(RECIPE) - 1)) {
		run_recipe(data + sizeof(RECIPE) - 1, size - (sizeof(RECIPE) - 1));
		return 0;
	}
	run_file(data, size, size ? data[size - 1] : UINT64_MAX);
	return 0;
}
