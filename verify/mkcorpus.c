// SPDX-License-Identifier: MIT
/*
 * mkcorpus DIR - write the seed corpus of fuzz_store into DIR: small valid
 * store files (empty, a few records, open and multi-line records, a
 * wrapped ring, a dead writer's leftovers), truncated and corrupted
 * variants of them, and recipes (see fuzz_store.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define L2	PK_RING_MIN_DATA_LOG2

static uint64_t mem[(PK_RING_HDR_SIZE + (8u << (L2 - PK_RING_DESC_SHIFT)) + (1u << L2)) / 8];
static const char *dir;

static void save(const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
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

int main(int argc, char **argv)
{
	struct pk_ring ring;
	struct pk_ring_hdr *h = (struct pk_ring_hdr *)mem;
	char buf[200], recipe[512];
	size_t n;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: mkcorpus DIR\n");
		return 2;
	}
	dir = argv[1];

	ring = fresh();
	save("empty.store", mem, sizeof(mem));

	ring = fresh();
	for (i = 0; i < 8; i++) {
		snprintf(buf, sizeof(buf), "level %d message", i);
		put(&ring, i, buf, false);
	}
	put(&ring, 3, "two\nlines", false);
	put(&ring, 6, "esc \x1b[1m utf8 \xc3\xa9 bad \xff", false);
	put(&ring, 6, "open, not finished", true);
	save("records.store", mem, sizeof(mem));
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
