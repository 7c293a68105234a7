// SPDX-License-Identifier: MIT
/*
 * The persistent store: round trip through a file, sequence numbers
 * continued across reopen, PK_BUFFER_CLEAR, refusal of files of another
 * version, size or a corrupt header (left untouched), recovery of what a
 * dead writer left, liveness, and the kill test: a child storming the
 * store from several threads is SIGKILLed at random moments, and every
 * record it reported as committed must then be in the file, intact.
 *
 * PK_TEST_KILLS sets the number of kills (default 200), PK_TEST_SEED the
 * random seed (printed, to replay a failure).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "printk/console.h"
#include "testutil.h"

#define SMALL_STORE	(64u << 10)

static void cfg_for(struct pk_config *cfg, const char *path, size_t size, unsigned flags)
{
	pk_config_init(cfg);
	cfg->buffer_path = path;
	cfg->buffer_size = size;
	cfg->flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT | flags;
}

/* Store @n records "tag i" in a store file, then release it. */
static void write_records(const char *path, size_t size, unsigned flags, const char *tag, int n)
{
	struct pk_config cfg;
	int i;

	cfg_for(&cfg, path, size, flags);
	assert_int_equal(pk_init(&cfg), 0);
	for (i = 0; i < n; i++)
		assert_true(pk_printk(PK_INFO, "%s %d\n", tag, i) > 0);
	pk_shutdown();
}

/* Read every record of a store file into @seqs/@texts (up to @max). */
static int read_all(const char *path, uint64_t *seqs, char texts[][64], int max)
{
	struct pk_reader *r = pk_reader_open_file(path);
	struct pk_record rec;
	int n = 0;

	assert_non_null(r);
	while (pk_reader_next(r, &rec) == 1) {
		assert_true(n < max);
		seqs[n] = rec.seq;
		snprintf(texts[n], 64, "%s", rec.text);
		n++;
	}
	pk_reader_close(r);
	return n;
}

static void test_round_trip_and_continue(void **state)
{
	char *path = tu_tmp_path("persist");
	uint64_t seqs[32];
	char texts[32][64], want[64];
	struct pk_store_info info;
	struct pk_reader *r;
	struct stat st;
	int i, n;

	(void)state;
	write_records(path, SMALL_STORE, 0, "first", 5);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777 & ~0022, 0644 & ~0022);
	assert_int_equal((size_t)st.st_size, pk__ring_region_size(pk__ring_data_log2_for(SMALL_STORE)));
	write_records(path, SMALL_STORE, 0, "second", 4);

	n = read_all(path, seqs, texts, 32);
	assert_int_equal(n, 9);
	for (i = 0; i < n; i++) {
		assert_int_equal(seqs[i], (uint64_t)i);
		snprintf(want, sizeof(want), "%s %d", i < 5 ? "first" : "second", i < 5 ? i : i - 5);
		assert_string_equal(texts[i], want);
	}
	r = pk_reader_open_file(path);
	assert_non_null(r);
	assert_int_equal(pk_reader_info(r, &info), 0);
	assert_int_equal(info.generation, 2);
	assert_int_equal(info.first_seq, 0);
	assert_int_equal(info.next_seq, 9);
	assert_int_equal(info.live, 0);
	assert_int_equal(info.creator_pid, getpid());
	pk_reader_close(r);
	unlink(path);
	free(path);
}

static void test_buffer_clear(void **state)
{
	char *path = tu_tmp_path("persist-clear");
	uint64_t seqs[32];
	char texts[32][64];
	struct pk_store_info info;
	struct pk_reader *r;
	int n;

	(void)state;
	write_records(path, SMALL_STORE, 0, "old", 5);
	write_records(path, SMALL_STORE, PK_CFG_BUFFER_CLEAR, "new", 3);
	n = read_all(path, seqs, texts, 32);
	assert_int_equal(n, 3);
	assert_int_equal(seqs[0], 5);	/* numbering continues, like dmesg */
	assert_string_equal(texts[0], "new 0");
	assert_string_equal(texts[2], "new 2");
	r = pk_reader_open_file(path);
	assert_non_null(r);
	pk_reader_info(r, &info);
	assert_int_equal(info.first_seq, 5);
	assert_int_equal(info.oldest_seq, 5);
	assert_int_equal(info.next_seq, 8);
	pk_reader_close(r);

	/* The environment spelling of the same. */
	setenv("PK_BUFFER_CLEAR", "1", 1);
	{
		struct pk_config cfg;

		pk_config_init(&cfg);
		assert_true(cfg.flags & PK_CFG_BUFFER_CLEAR);
	}
	unsetenv("PK_BUFFER_CLEAR");
	unlink(path);
	free(path);
}

/* pk_init on @path must fail with @err and leave the file byte for byte. */
static void expect_refused(const char *path, size_t size, int err)
{
	size_t len0, len1;
	char *before = tu_read_file(path, &len0), *after;
	struct pk_config cfg;

	assert_non_null(before);
	cfg_for(&cfg, path, size, 0);
	assert_int_equal(pk_init(&cfg), err);
	cfg_for(&cfg, path, size, PK_CFG_BUFFER_CLEAR);
	assert_int_equal(pk_init(&cfg), err);
	after = tu_read_file(path, &len1);
	assert_non_null(after);
	assert_int_equal(len0, len1);
	assert_memory_equal(before, after, len0);
	free(before);
	free(after);
}

static void patch(const char *path, off_t off, const void *bytes, size_t n)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, n, off), (ssize_t)n);
	close(fd);
}

static void expect_reader_error(const char *path, int err)
{
	errno = 0;
	assert_null(pk_reader_open_file(path));
	assert_int_equal(errno, err);
}

static void test_refusals(void **state)
{
	char *path = tu_tmp_path("persist-refuse");
	uint32_t v2 = PK_RING_VERSION + 1;
	uint64_t junk = 0x0123456789abcdefull, big_seq = 1000000;
	int fd;

	(void)state;
	/* Another format version. */
	write_records(path, SMALL_STORE, 0, "x", 3);
	patch(path, offsetof(struct pk_ring_hdr, version), &v2, sizeof(v2));
	expect_refused(path, SMALL_STORE, -EPROTO);
	expect_reader_error(path, EPROTO);

	/* Not a store at all. */
	unlink(path);
	write_records(path, SMALL_STORE, 0, "x", 3);
	patch(path, 0, &junk, sizeof(junk));
	expect_refused(path, SMALL_STORE, -EINVAL);
	expect_reader_error(path, EINVAL);

	/* Corrupt geometry. */
	unlink(path);
	write_records(path, SMALL_STORE, 0, "x", 3);
	patch(path, offsetof(struct pk_ring_hdr, data_off), &junk, sizeof(junk));
	expect_refused(path, SMALL_STORE, -EINVAL);
	expect_reader_error(path, EINVAL);

	/* Corrupt sequence bounds: clear point beyond the head. */
	unlink(path);
	write_records(path, SMALL_STORE, 0, "x", 3);
	patch(path, offsetof(struct pk_ring_hdr, clear_seq), &big_seq, sizeof(big_seq));
	expect_refused(path, SMALL_STORE, -EINVAL);
	expect_reader_error(path, EINVAL);

	/* A valid store of another size. */
	unlink(path);
	write_records(path, SMALL_STORE, 0, "x", 3);
	expect_refused(path, 4 * SMALL_STORE, -EINVAL);

	/* Truncated. */
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	close(fd);
	expect_refused(path, SMALL_STORE, -EINVAL);
	expect_reader_error(path, EINVAL);
	fd = open(path, O_WRONLY);
	assert_int_equal(ftruncate(fd, 100), 0);
	close(fd);
	expect_refused(path, SMALL_STORE, -EINVAL);
	expect_reader_error(path, EINVAL);

	/* Not a regular file; missing file. */
	expect_reader_error("/dev/null", EINVAL);
	unlink(path);
	expect_reader_error(path, ENOENT);
	unlink(path);
	free(path);
}

static void test_empty_file_is_formatted(void **state)
{
	char *path = tu_tmp_path("persist-empty");
	uint64_t seqs[4];
	char texts[4][64];
	int fd;

	(void)state;
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	expect_reader_error(path, EINVAL);
	write_records(path, SMALL_STORE, 0, "e", 2);
	assert_int_equal(read_all(path, seqs, texts, 4), 2);
	assert_string_equal(texts[1], "e 1");
	unlink(path);
	free(path);
}

/*
 * A child that dies leaving (a) a seq taken whose descriptor was never
 * claimed and (b) an OPEN record no later writer finalized.  Post-mortem
 * readers skip (a) and show (b); after a reopen, recovery retires (a) and
 * finalizes (b), so a live reader passes both without waiting.
 */
static void test_recovery_after_death(void **state)
{
	char *path = tu_tmp_path("persist-recover");
	struct pk_config cfg;
	struct pk_reader *r;
	struct pk_record rec;
	struct pk_store_info info;
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cfg_for(&cfg, path, SMALL_STORE, 0);
		if (pk_init(&cfg))
			_exit(1);
		pk_printk(PK_INFO, "zero\n");
		pk_printk(PK_INFO, "one\n");
		/* seq 2: taken by a writer that died before claiming it. */
		atomic_fetch_add(&pk__g.ring.h->seq_head, 1);
		pk_printk(PK_INFO, "three\n");
		pk_printk(PK_INFO, "four, open");	/* no newline: stays OPEN */
		/* seq 5: taken, so 4 can no longer be extended; never claimed. */
		atomic_fetch_add(&pk__g.ring.h->seq_head, 1);
		pk_printk(PK_INFO, "six\n");
		atomic_fetch_add(&pk__g.ring.h->seq_head, 1);	/* 7: taken last */
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* Post-mortem. */
	r = pk_reader_open_file(path);
	assert_non_null(r);
	pk_reader_info(r, &info);
	assert_int_equal(info.live, 0);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 0);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 3);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 4);
	assert_string_equal(rec.text, "four, open");
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 6);
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_close(r);

	/* Reopened by a new writer: live readers must not wait for 2, 5, 7. */
	cfg_for(&cfg, path, SMALL_STORE, 0);
	assert_int_equal(pk_init(&cfg), 0);
	r = pk_reader_open_file(path);
	assert_non_null(r);
	pk_reader_info(r, &info);
	assert_int_equal(info.live, 1);
	assert_int_equal(info.lost, 3);
	assert_int_equal(info.generation, 2);
	pk_printk(PK_INFO, "eight\n");
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 0);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 3);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 4);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 6);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 8);
	assert_string_equal(rec.text, "eight");
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_close(r);
	pk_shutdown();
	unlink(path);
	free(path);
}

struct waiter_arg {
	const char *path;
	unsigned flags;
	int result;
	char text[64];
};

static void *waiter(void *p)
{
	struct waiter_arg *a = p;
	struct pk_reader *r = pk_reader_open_file_flags(a->path, a->flags);
	struct pk_record rec;
	int i;

	TU_CHECK(r != NULL);
	while (pk_reader_next(r, &rec) == 1)
		;
	/* 60 s is a hang guard only. */
	for (i = 0; i < 60; i++) {
		a->result = pk_reader_wait(r, 1000);
		if (a->result)
			break;
	}
	if (a->result == 1 && pk_reader_next(r, &rec) == 1)
		snprintf(a->text, sizeof(a->text), "%s", rec.text);
	pk_reader_close(r);
	return NULL;
}

/* A follower, read-only (polling) and writable (futex waiter), is woken. */
static void test_wait_and_clear(void **state)
{
	char *path = tu_tmp_path("persist-wait");
	struct waiter_arg a[2] = { { .flags = 0 }, { .flags = PK_READER_WRITABLE } };
	struct pk_config cfg;
	struct pk_reader *r, *ro;
	struct pk_record rec;
	struct pk_store_info info;
	pthread_t th[2];
	int i;

	(void)state;
	cfg_for(&cfg, path, SMALL_STORE, 0);
	assert_int_equal(pk_init(&cfg), 0);
	pk_printk(PK_INFO, "before\n");
	for (i = 0; i < 2; i++) {
		a[i].path = path;
		assert_int_equal(pthread_create(&th[i], NULL, waiter, &a[i]), 0);
	}
	usleep(20000);	/* let them sleep first (not required for correctness) */
	pk_printk(PK_INFO, "wake up\n");
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].result, 1);
		assert_string_equal(a[i].text, "wake up");
	}

	/* Clear: a read-only reader may not, a writable one may. */
	ro = pk_reader_open_file(path);
	assert_non_null(ro);
	assert_int_equal(pk_reader_clear(ro), -EACCES);
	pk_reader_close(ro);
	r = pk_reader_open_file_flags(path, PK_READER_WRITABLE);
	assert_non_null(r);
	assert_int_equal(pk_reader_clear(r), 0);
	pk_reader_info(r, &info);
	assert_int_equal(info.clear_seq, 2);
	pk_reader_close(r);
	pk_printk(PK_INFO, "after clear\n");
	r = pk_reader_open_file(path);
	assert_non_null(r);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_int_equal(rec.seq, 2);
	assert_string_equal(rec.text, "after clear");
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_close(r);
	pk_shutdown();
	unlink(path);
	free(path);
}

/* Two live processes share one store: both write, nobody reformats. */
static void test_shared_store(void **state)
{
	char *path = tu_tmp_path("persist-shared");
	int go[2], done[2], i, status, seen[2] = { 0, 0 };
	struct pk_config cfg;
	struct pk_reader *r;
	struct pk_record rec;
	pid_t pid;
	char c = 0;

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	cfg_for(&cfg, path, SMALL_STORE, 0);
	assert_int_equal(pk_init(&cfg), 0);
	pk_printk(PK_INFO, "parent 0\n");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* A separate process image would not inherit the lock; drop ours. */
		pk_shutdown();
		cfg_for(&cfg, path, SMALL_STORE, PK_CFG_BUFFER_CLEAR);
		if (pk_init(&cfg))
			_exit(1);
		for (i = 0; i < 10; i++)
			pk_printk(PK_INFO, "child %d\n", i);
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		pk_shutdown();
		_exit(0);
	}
	assert_int_equal(read(done[0], &c, 1), 1);
	for (i = 1; i < 10; i++)
		pk_printk(PK_INFO, "parent %d\n", i);
	r = pk_reader_open_file(path);
	assert_non_null(r);
	while (pk_reader_next(r, &rec) == 1)
		seen[!strncmp(rec.text, "child", 5)]++;
	pk_reader_close(r);
	/* The child's CLEAR could only move the clear point: "parent 0" is gone
	 * from new readers, the other 9 and the child's 10 are there. */
	assert_int_equal(seen[0], 9);
	assert_int_equal(seen[1], 10);
	assert_int_equal(write(go[1], &c, 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pk_shutdown();
	unlink(path);
	free(path);
}

/* ---- the kill test ------------------------------------------------------ */

#define KILL_THREADS	4
#define KILL_CAP	4000			/* records per thread per child */
#define KILL_STORE	((size_t)12 << 20)	/* 8 MiB data ring: two children's worth */

struct report {
	uint32_t w;
	uint32_t c;
};

struct storm_arg {
	unsigned w;
	unsigned base;	/* first c of this child */
	int fd;
};

static void *storm(void *p)
{
	struct storm_arg *a = p;
	struct report rep = { a->w, 0 };
	char buf[256];
	unsigned c;
	int ret;

	for (c = a->base; c < a->base + KILL_CAP; c++) {
		tu_make_text(buf, sizeof(buf), a->w, c, (c * 7 + a->w) % 150);
		ret = pk_printk(PK_INFO, "%s\n", buf);
		if (ret < 0)
			continue;
		/* pk_printk returned: the record is committed.  Say so. */
		rep.c = c;
		if (write(a->fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
			_exit(3);
	}
	for (;;)
		pause();
	return NULL;
}

static _Noreturn void storm_child(const char *path, unsigned base, int fd)
{
	struct storm_arg a[KILL_THREADS];
	pthread_t th;
	struct pk_config cfg;
	unsigned w;

	cfg_for(&cfg, path, KILL_STORE, 0);
	if (pk_init(&cfg))
		_exit(2);
	for (w = 0; w < KILL_THREADS; w++) {
		a[w] = (struct storm_arg){ w, base, fd };
		if (pthread_create(&th, NULL, storm, &a[w]))
			_exit(2);
	}
	for (;;)
		pause();
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8) & 0xffffff;
}

/*
 * Drain reports from @fd until @deadline_ns (0: until EOF).  With
 * @after_first, the deadline is @delay_ns after the first report instead.
 */
static void drain(int fd, uint8_t *reported, unsigned base, uint64_t deadline_ns,
		  bool after_first, uint64_t delay_ns, unsigned *count)
{
	struct report rep[256];
	struct pollfd pfd = { fd, POLLIN, 0 };
	ssize_t n, i;
	int tmo;

	for (;;) {
		if (after_first && *count) {
			deadline_ns = tu_now_ns() + delay_ns;
			after_first = false;
		}
		if (deadline_ns) {
			uint64_t now = tu_now_ns();

			if (now >= deadline_ns)
				return;
			tmo = (int)((deadline_ns - now) / 1000000);
			if (poll(&pfd, 1, tmo) <= 0)
				continue;
		}
		n = read(fd, rep, sizeof(rep));
		if (n <= 0)
			return;
		assert_int_equal(n % (ssize_t)sizeof(rep[0]), 0);
		for (i = 0; i < n / (ssize_t)sizeof(rep[0]); i++) {
			assert_true(rep[i].w < KILL_THREADS);
			assert_true(rep[i].c >= base && rep[i].c < base + KILL_CAP);
			reported[rep[i].w * 2 * KILL_CAP + rep[i].c] = 1;
			(*count)++;
		}
	}
}

/*
 * Consoles print their own process's records only.  A store reopened by a
 * new run holds the earlier run's records (for pkmsg), which the new run's
 * consoles do not replay; after fork() the parent and the child write one
 * shared store, and each record reaches the shared console file once,
 * printed by the process that stored it.  In every mode.
 */
static void test_consoles_print_own_records(void **state)
{
	static const enum pk_mode modes[] = { PK_MODE_LEGACY, PK_MODE_HANDOFF, PK_MODE_THREAD };
	char *path = tu_tmp_path("persist-own"), *out = tu_tmp_path("persist-own-out");
	char spec[600], want[64], *text;
	struct pk_config cfg;
	struct pk_reader *r;
	struct pk_record rec;
	unsigned m;
	int i, status, parent_recs, child_recs;
	pid_t pid;

	(void)state;
	snprintf(spec, sizeof(spec), "file:%s", out);
	for (m = 0; m < 3; m++) {
		/* ThreadSanitizer refuses to start the child's printer thread. */
		if (modes[m] == PK_MODE_THREAD && tu_sanitized_thread())
			continue;
		unlink(path);
		unlink(out);
		/* An earlier run, without consoles. */
		write_records(path, SMALL_STORE, 0, "earlier run", 5);

		cfg_for(&cfg, path, SMALL_STORE, 0);
		cfg.mode = modes[m];
		assert_int_equal(pk_init(&cfg), 0);
		assert_int_equal(pk_console_register_spec(spec), 1);
		pk_printk(PK_INFO, "before fork\n");
		pid = fork();
		assert_true(pid >= 0);
		for (i = 0; i < 200; i++)
			pk_printk(PK_INFO, "%s %d\n", pid ? "parent" : "child", i);
		if (pid == 0)
			_exit(pk_flush(10000) == 0 ? 0 : 1);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(pk_flush(10000), 0);

		/* The store has all of it, each record with its process. */
		r = pk_reader_open_file(path);
		assert_non_null(r);
		parent_recs = child_recs = 0;
		while (pk_reader_next(r, &rec) == 1) {
			if (!strncmp(rec.text, "parent ", 7)) {
				assert_int_equal(rec.pid, (uint32_t)getpid());
				parent_recs++;
			} else if (!strncmp(rec.text, "child ", 6)) {
				assert_int_equal(rec.pid, (uint32_t)pid);
				child_recs++;
			}
		}
		pk_reader_close(r);
		assert_int_equal(parent_recs, 200);
		assert_int_equal(child_recs, 200);
		pk_shutdown();

		/* The console file: each record once, nothing of the earlier run. */
		text = tu_read_file(out, NULL);
		assert_non_null(text);
		assert_int_equal(tu_count(text, "earlier run"), 0);
		assert_int_equal(tu_count(text, "] before fork\n"), 1);
		for (i = 0; i < 200; i++) {
			snprintf(want, sizeof(want), "] parent %d\n", i);
			assert_int_equal(tu_count(text, want), 1);
			snprintf(want, sizeof(want), "] child %d\n", i);
			assert_int_equal(tu_count(text, want), 1);
		}
		assert_null(strstr(text, "dropped"));
		free(text);
	}
	unlink(path);
	unlink(out);
	free(path);
	free(out);
}

static void test_kill(void **state)
{
	const char *e = getenv("PK_TEST_KILLS"), *se = getenv("PK_TEST_SEED");
	unsigned kills = e && *e ? (unsigned)atoi(e) : 200;
	unsigned seed = se && *se ? (unsigned)strtoul(se, NULL, 0) : (unsigned)time(NULL) ^ getpid();
	char *path = tu_tmp_path("persist-kill");
	size_t bits = (size_t)KILL_THREADS * 2 * KILL_CAP;
	uint8_t *reported = calloc(bits, 1), *seen = calloc(bits, 1);
	unsigned k, reports_total = 0, mid_storm = 0, early = 0;
	uint64_t verified = 0, t0 = tu_now_ns();

	(void)state;
	fprintf(stderr, "kill test: %u kills, PK_TEST_SEED=%u\n", kills, seed);
	for (k = 0; k < kills; k++) {
		/* Even kills start a fresh file; odd ones continue it after the kill. */
		unsigned base = (k & 1) ? KILL_CAP : 0, count = 0, w;
		uint64_t c;
		unsigned r = rnd(&seed), delay_us;
		struct pk_reader *rd;
		struct pk_record rec;
		uint64_t prev_seq = 0;
		int p[2], status;
		bool first = true, from_fork;
		pid_t pid;

		if (!(k & 1)) {
			unlink(path);
			memset(reported, 0, bits);
		}
		/*
		 * A quarter of the kills count from the fork (most land in
		 * pk_init: the store's creation or reopening); the rest from
		 * the child's first commit, to land mid-storm, some at once.
		 */
		from_fork = r % 4 == 0;
		if (from_fork)
			delay_us = rnd(&seed) % 5000;
		else if (r % 4 == 1)
			delay_us = rnd(&seed) % 50;
		else
			delay_us = rnd(&seed) % 8000;
		assert_int_equal(pipe(p), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(p[0]);
			storm_child(path, base, p[1]);
		}
		close(p[1]);
		/* The 60 s guard only matters if the child never stores. */
		drain(p[0], reported, base,
		      tu_now_ns() + (from_fork ? delay_us * 1000ull : 60000000000ull),
		      !from_fork, delay_us * 1000ull, &count);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		drain(p[0], reported, base, 0, false, 0, &count);
		close(p[0]);
		reports_total += count;
		if (count == 0)
			early++;
		else if (count < KILL_THREADS * KILL_CAP)
			mid_storm++;

		rd = pk_reader_open_file(path);
		if (!rd) {
			/* Killed before the file existed: nothing was committed. */
			assert_int_equal(errno, ENOENT);
			assert_int_equal(count, 0);
			for (c = 0; c < bits; c++)
				assert_int_equal(reported[c], 0);
			continue;
		}
		memset(seen, 0, bits);
		while (pk_reader_next(rd, &rec) == 1) {
			/* Never a torn record: the text checks itself. */
			if (tu_check_text(rec.text, rec.len, &w, &c) != 0)
				fail_msg("torn record seq %llu: '%s'", (unsigned long long)rec.seq,
					 rec.text);
			assert_true(w < KILL_THREADS && c < 2 * KILL_CAP);
			assert_false(seen[w * 2 * KILL_CAP + c]);	/* never twice */
			seen[w * 2 * KILL_CAP + c] = 1;
			assert_true(first || rec.seq > prev_seq);
			prev_seq = rec.seq;
			first = false;
			verified++;
		}
		pk_reader_close(rd);
		for (c = 0; c < bits; c++)
			if (reported[c] && !seen[c])
				fail_msg("kill %u: committed record w=%zu c=%zu missing", k,
					 (size_t)c / (2 * KILL_CAP), (size_t)c % (2 * KILL_CAP));
	}
	fprintf(stderr, "kill test: %u kills (%u mid-storm, %u before any commit), "
		"%u commits reported, %llu records verified, %.1f s\n",
		kills, mid_storm, early, reports_total, (unsigned long long)verified,
		(double)(tu_now_ns() - t0) / 1e9);
	unlink(path);
	free(path);
	free(reported);
	free(seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_and_continue),
		cmocka_unit_test(test_buffer_clear),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_empty_file_is_formatted),
		cmocka_unit_test(test_recovery_after_death),
		cmocka_unit_test(test_wait_and_clear),
		cmocka_unit_test(test_shared_store),
		cmocka_unit_test(test_consoles_print_own_records),
		cmocka_unit_test(test_kill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
