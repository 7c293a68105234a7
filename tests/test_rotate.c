// SPDX-License-Identifier: MIT
/*
 * File consoles and log rotation: logrotate's "create" (the file renamed
 * or removed, noticed by the console itself), "copytruncate",
 * pk_console_reopen() (postrotate), size rotation (rotate=SIZE:COUNT),
 * the same security rules on every reopen, and none of it on the panic
 * path.  Records are written raw ("tag N\n"), so that each file's exact
 * contents can be checked: whole lines, consecutive numbers, none lost or
 * repeated across the files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "console/wfd.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define NOBODY		65534
#define WAIT_MS		20000	/* hang bound: the check runs once a second */
#define CHILD_MS	60000

static int init_sized(enum pk_mode mode, size_t buffer_size)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.buffer_size = buffer_size;
	return pk_init(&cfg);
}

static int init_quiet(enum pk_mode mode)
{
	return init_sized(mode, 256 << 10);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	atomic_store(&pk__file_check_ns, 1000000000u);
	return 0;
}

/* A raw file console on @path, registered. */
static struct pk_console *raw_console(const char *path, const struct pk_file_opts *o)
{
	struct pk_file_opts none = { 0 };
	struct pk_console_driver drv;
	struct pk_console *con;

	assert_int_equal(pk_console_file_make_opts(path, o ? o : &none, &drv), 0);
	con = pk_console_register_driver(&drv, -1);
	assert_non_null(con);
	assert_int_equal(pk_console_set_format(con, PK_FMT_RAW), 0);
	return con;
}

static void put(const char *tag, unsigned i)
{
	assert_true(pk_info("%s %u", tag, i) > 0);
}

static char *slurp(const char *path)
{
	char *s = tu_read_file(path, NULL);

	if (!s)
		fail_msg("cannot read %s: %s", path, strerror(errno));
	return s;
}

/*
 * @s is exactly the lines "@tag N\n" for N from *@first on, consecutive,
 * nothing else (no partial line).  Sets *@first and *@next (one past the
 * last).  An empty @s gives *@first == *@next == @want_first.
 */
static void lines_of(const char *s, const char *tag, unsigned want_first, unsigned *first,
		     unsigned *next, const char *what)
{
	char want[64];
	unsigned n;
	size_t len;

	*first = *next = want_first;
	if (!*s)
		return;
	if (sscanf(s, "%*s %u", &n) != 1)
		fail_msg("%s: does not start with a record: \"%.40s\"", what, s);
	*first = *next = n;
	while (*s) {
		len = (size_t)snprintf(want, sizeof(want), "%s %u\n", tag, *next);
		if (strncmp(s, want, len))
			fail_msg("%s: expected \"%s %u\", found \"%.40s\"", what, tag, *next, s);
		s += len;
		++*next;
	}
}

/* Exactly the records [@first, @next) of @tag in @path. */
static void exactly(const char *path, const char *tag, unsigned first, unsigned next)
{
	char *s = slurp(path);
	unsigned a, b;

	lines_of(s, tag, first, &a, &b, path);
	if (a != first || b != next)
		fail_msg("%s holds %s %u..%u, not %u..%u", path, tag, a, b, first, next);
	free(s);
}

static bool has_content(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size > 0;
}

/*
 * logrotate's "create" mode, with the file renamed (@remove false) or
 * removed: records go on until the console has noticed and writes the new
 * file; none lost, none split or repeated across the two files.
 */
static void moved_away(enum pk_mode mode, bool remove)
{
	char *dir = tu_make_dir("rotate-create", 0700), *log = tu_join(dir, "app.log");
	char *old = tu_join(dir, "app.log.1");
	unsigned i = 0, a, b, c, d, moved_at;
	struct stat st;
	char *s, *t;
	int keep = -1;
	bool seen;

	assert_int_equal(init_quiet(mode), 0);
	raw_console(log, NULL);
	for (; i < 10; i++)
		put("r", i);
	assert_int_equal(pk_flush(5000), 0);
	if (remove) {
		keep = open(log, O_RDONLY | O_CLOEXEC);	/* to read it after */
		assert_true(keep >= 0);
		assert_int_equal(unlink(log), 0);
	} else {
		assert_int_equal(rename(log, old), 0);
	}
	moved_at = i;
	seen = tu_wait_until((put("r", i++), pk_flush(5000), has_content(log)), WAIT_MS);
	assert_true(seen);
	for (c = i + 10; i < c; i++)
		put("r", i);
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);	/* created as the first one */
	if (remove) {
		off_t n = lseek(keep, 0, SEEK_END);

		assert_true(n > 0);
		s = calloc(1, (size_t)n + 1);
		assert_non_null(s);
		assert_int_equal(pread(keep, s, (size_t)n, 0), n);
		close(keep);
	} else {
		s = slurp(old);
	}
	t = slurp(log);
	lines_of(s, "r", 0, &a, &b, "old file");
	lines_of(t, "r", b, &c, &d, "new file");
	assert_int_equal(a, 0);
	assert_true(b > moved_at);	/* the first record after the move went to the old one */
	assert_int_equal(c, b);		/* none lost between them */
	assert_int_equal(d, i);		/* the last in the new one */
	print_message("%s, %s: moved after %u, reopened after %u of %u\n",
		      mode == PK_MODE_THREAD ? "thread" : "handoff", remove ? "removed" : "renamed",
		      moved_at, b, i);
	free(s);
	free(t);
	free(old);
	free(log);
	free(dir);
}

static void test_rename_create(void **state)
{
	(void)state;
	moved_away(PK_MODE_HANDOFF, false);
}

static void test_rename_create_thread_mode(void **state)
{
	(void)state;
	moved_away(PK_MODE_THREAD, false);
}

static void test_remove(void **state)
{
	(void)state;
	moved_away(PK_MODE_HANDOFF, true);
}

/* copytruncate: the file copied, then truncated under the console. */
static void test_copytruncate(void **state)
{
	char *dir = tu_make_dir("rotate-copytrunc", 0700), *log = tu_join(dir, "app.log");
	char *copy = tu_join(dir, "app.log.1"), *s;
	struct stat before, after;
	unsigned i;
	FILE *f;

	(void)state;
	atomic_store(&pk__file_check_ns, 0);	/* look at every record: must not reopen */
	assert_int_equal(init_quiet(PK_MODE_HANDOFF), 0);
	raw_console(log, NULL);
	for (i = 0; i < 20; i++)
		put("c", i);
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(stat(log, &before), 0);
	s = slurp(log);
	f = fopen(copy, "w");
	assert_non_null(f);
	assert_int_equal(fputs(s, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	free(s);
	assert_int_equal(truncate(log, 0), 0);
	for (; i < 30; i++)
		put("c", i);
	assert_int_equal(pk_flush(5000), 0);
	exactly(copy, "c", 0, 20);
	exactly(log, "c", 20, 30);	/* from offset 0: no hole of NULs */
	assert_int_equal(stat(log, &after), 0);
	assert_true(after.st_ino == before.st_ino);	/* the same file, written on */
	assert_int_equal(after.st_size, 10 * strlen("c 20\n"));
	free(copy);
	free(log);
	free(dir);
}

/* pk_console_reopen() right after the rename: the split is exact. */
static void test_explicit_reopen(void **state)
{
	char *dir = tu_make_dir("rotate-reopen", 0700), *log = tu_join(dir, "app.log");
	char *old = tu_join(dir, "app.log.1"), *older = tu_join(dir, "app.log.2");
	struct tu_capture *cap = tu_capture_new(0);
	struct pk_console *con, *other;
	unsigned i;

	(void)state;
	assert_int_equal(init_quiet(PK_MODE_HANDOFF), 0);
	con = raw_console(log, NULL);
	other = pk_console_register(&tu_capture_ops, cap, -1);
	assert_non_null(other);
	for (i = 0; i < 5; i++)
		put("e", i);
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(rename(log, old), 0);
	assert_int_equal(pk_console_reopen(con), 0);
	for (; i < 10; i++)
		put("e", i);
	assert_int_equal(pk_flush(5000), 0);
	exactly(old, "e", 0, 5);
	exactly(log, "e", 5, 10);
	/* NULL: every file console. */
	assert_int_equal(rename(old, older), 0);
	assert_int_equal(rename(log, old), 0);
	assert_int_equal(pk_console_reopen(NULL), 0);
	for (; i < 15; i++)
		put("e", i);
	assert_int_equal(pk_flush(5000), 0);
	exactly(old, "e", 5, 10);
	exactly(log, "e", 10, 15);
	/* Not a file console. */
	assert_int_equal(pk_console_reopen(other), -EINVAL);
	/* A path that cannot be opened: the error, and the old file goes on. */
	assert_int_equal(rename(log, older), 0);
	assert_int_equal(mkdir(log, 0700), 0);
	assert_int_equal(pk_console_reopen(con), -EISDIR);
	for (; i < 20; i++)
		put("e", i);
	assert_int_equal(pk_flush(5000), 0);
	exactly(older, "e", 10, 20);
	/* Unregistered: no longer a console. */
	assert_int_equal(pk_console_unregister(con), 0);
	assert_int_equal(pk_console_reopen(con), -EINVAL);
	assert_int_equal(pk_console_unregister(other), 0);
	tu_capture_free(cap);
	free(older);
	free(old);
	free(log);
	free(dir);
}

/* rotate=SIZE:COUNT: exact contents across COUNT + 1 files. */
static void test_size_rotation(void **state)
{
	char *dir = tu_make_dir("rotate-size", 0700), *log = tu_join(dir, "app.log"), name[64], *p;
	struct pk_file_opts o = { .mode = 0640, .rotate_size = 100, .rotate_count = 3 };
	mode_t old_umask = umask(022);
	struct stat st;
	unsigned i, k;

	(void)state;
	assert_int_equal(init_quiet(PK_MODE_HANDOFF), 0);
	raw_console(log, &o);
	/* "s 1000\n" is 7 bytes: 14 records fill 98 of the 100 bytes. */
	for (i = 1000; i < 1000 + 14 * 4 + 5; i++)
		put("s", i);
	assert_int_equal(pk_flush(5000), 0);
	exactly(log, "s", 1000 + 14 * 4, 1000 + 14 * 4 + 5);
	for (k = 1; k <= 3; k++) {
		snprintf(name, sizeof(name), "app.log.%u", k);
		p = tu_join(dir, name);
		exactly(p, "s", 1000 + 14 * (4 - k), 1000 + 14 * (5 - k));
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0640);
		free(p);
	}
	p = tu_join(dir, "app.log.4");
	assert_int_equal(stat(p, &st), -1);	/* COUNT kept, no more */
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);	/* the new one as asked */
	free(p);
	umask(old_umask);
	free(log);
	free(dir);
}

/* COUNT 0: the full file is removed; a record larger than SIZE is kept whole. */
static void test_size_rotation_none_kept(void **state)
{
	char *dir = tu_make_dir("rotate-zero", 0700), *log = tu_join(dir, "app.log"), *one;
	struct pk_file_opts o = { .rotate_size = 14 };
	char big[64];
	struct stat st;
	unsigned i;

	(void)state;
	assert_int_equal(init_quiet(PK_MODE_HANDOFF), 0);
	raw_console(log, &o);
	for (i = 1000; i < 1005; i++)
		put("z", i);
	assert_int_equal(pk_flush(5000), 0);
	exactly(log, "z", 1004, 1005);
	one = tu_join(dir, "app.log.1");
	assert_int_equal(stat(one, &st), -1);
	memset(big, 'x', 40);
	big[40] = '\0';
	assert_true(pk_info("%s", big) > 0);
	assert_true(pk_info("z 2000") > 0);
	assert_int_equal(pk_flush(5000), 0);
	exactly(log, "z", 2000, 2001);
	free(one);
	free(log);
	free(dir);
}

/* Through a symlink: the file is rotated where it lives. */
static void test_size_rotation_symlink(void **state)
{
	char *dir = tu_make_dir("rotate-link", 0700), *real_dir = tu_join(dir, "real");
	char *link = tu_join(dir, "app.log"), *real = tu_join(real_dir, "r.log");
	char *real1 = tu_join(real_dir, "r.log.1");
	struct pk_file_opts o = { .rotate_size = 21, .rotate_count = 1 };
	struct stat st;
	unsigned i;

	(void)state;
	assert_int_equal(mkdir(real_dir, 0700), 0);
	assert_int_equal(symlink("real/r.log", link), 0);
	assert_int_equal(init_quiet(PK_MODE_HANDOFF), 0);
	raw_console(link, &o);
	for (i = 1000; i < 1005; i++)
		put("l", i);
	assert_int_equal(pk_flush(5000), 0);
	exactly(real1, "l", 1000, 1003);
	exactly(real, "l", 1003, 1005);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));	/* the link itself is left alone */
	free(real1);
	free(real);
	free(link);
	free(real_dir);
	free(dir);
}

/*
 * Size rotation under load, with pk_console_reopen(NULL) called all the
 * while from another thread: every record is in exactly one file, whole,
 * and the files read oldest first give each writer's records in order.
 */
#define LOAD_WRITERS	3
#define LOAD_TAIL	100	/* records logged after the load, by "writer" LOAD_WRITERS */

struct load {
	_Atomic int stop;
	unsigned per_writer;
	_Atomic unsigned reopens;
};

static struct load load;

static void *load_writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg, c;
	char text[128];

	for (c = 0; c < load.per_writer; c++) {
		tu_make_text(text, sizeof(text), w, c, c % 17);
		TU_CHECK(pk_info("%s", text) > 0);
	}
	return NULL;
}

static void *load_reopener(void *arg)
{
	const struct timespec pace = { 0, 200000 };

	(void)arg;
	while (!atomic_load(&load.stop)) {
		TU_CHECK(pk_console_reopen(NULL) == 0);
		atomic_fetch_add(&load.reopens, 1);
		nanosleep(&pace, NULL);	/* pacing, not synchronisation */
	}
	return NULL;
}

static void test_rotation_under_load(void **state)
{
	char *dir = tu_make_dir("rotate-load", 0700), *log = tu_join(dir, "app.log"), name[128], *p, *s;
	struct pk_file_opts o = { .rotate_size = 2048, .rotate_count = 999 };
	pthread_t th[LOAD_WRITERS], re;
	size_t len = 0, cap = 1, n;
	struct tu_lines r;
	char *all = calloc(1, 1);
	unsigned i, files = 0;
	struct stat st;

	(void)state;
	load.per_writer = tu_scaled(400);
	atomic_store(&load.stop, 0);
	atomic_store(&load.reopens, 0);
	/*
	 * The store holds every record even if the console writes none until
	 * the writers are done (each rotation renames up to 999 files, and a
	 * loaded machine may hold the console's owner off for long): what is
	 * tested is rotation, and a record the store overwrote (counted, in a
	 * drop notice) would say nothing about it.  512 bytes a record is
	 * over three times what one takes.
	 */
	assert_int_equal(init_sized(PK_MODE_HANDOFF,
				    (size_t)LOAD_WRITERS * load.per_writer * 512 + (256 << 10)), 0);
	raw_console(log, &o);
	assert_int_equal(pthread_create(&re, NULL, load_reopener, NULL), 0);
	for (i = 0; i < LOAD_WRITERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, load_writer, (void *)(uintptr_t)i), 0);
	for (i = 0; i < LOAD_WRITERS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(pk_flush(10000), 0);
	atomic_store(&load.stop, 1);
	pthread_join(re, NULL);
	/*
	 * A reopen preempted while it holds the console's rotation flag makes
	 * write() skip the size check (it never waits): on a loaded machine
	 * all of the above may go into one file.  With no reopen running,
	 * these (over 2048 bytes) rotate at least once.
	 */
	for (i = 0; i < LOAD_TAIL; i++) {
		tu_make_text(name, sizeof(name), LOAD_WRITERS, i, i % 17);
		assert_true(pk_info("%s", name) > 0);
	}
	assert_int_equal(pk_flush(10000), 0);
	/* Oldest first: the highest number down to .1, then the path itself. */
	for (i = 999; i >= 1; i--) {
		snprintf(name, sizeof(name), "app.log.%u", i);
		p = tu_join(dir, name);
		if (stat(p, &st) == 0) {
			s = slurp(p);
			n = strlen(s);
			if (!n || s[n - 1] != '\n')
				fail_msg("%s does not end a line", p);
			if (len + n + 1 > cap) {
				cap = 2 * (len + n + 1);
				all = realloc(all, cap);
				assert_non_null(all);
			}
			memcpy(all + len, s, n + 1);
			len += n;
			files++;
			free(s);
		}
		free(p);
	}
	s = slurp(log);
	all = realloc(all, len + strlen(s) + 1);
	assert_non_null(all);
	strcpy(all + len, s);
	free(s);
	assert_int_equal(tu_parse_lines(all, LOAD_WRITERS + 1, &r), 0);
	if (r.notices)
		fail_msg("%zu records, %llu dropped in %zu notices: the store was too small for the "
			 "test", r.lines, (unsigned long long)r.dropped, r.notices);
	assert_int_equal(r.lines, (size_t)LOAD_WRITERS * load.per_writer + LOAD_TAIL);
	assert_int_equal(r.other, 0);
	assert_true(files > 1);
	print_message("%zu records in %u rotated files and the path, %u reopens meanwhile\n",
		      r.lines, files, atomic_load(&load.reopens));
	free(all);
	free(log);
	free(dir);
}

/*
 * Every reopen goes through the rules of the first open: in a sticky
 * world-writable directory, another user's symlink put where the log was
 * is refused, and the console goes on writing its file.
 */
static void test_reopen_refuses_foreign_symlink(void **state)
{
	char *dir, *log, *old, *target, *errs, *s;
	struct pk_console *con;
	int saved, fd;
	struct stat st;
	unsigned i;

	(void)state;
	if (geteuid() != 0) {
		tu_skip("needs root, to give a symlink to uid %d with lchown()", NOBODY);
		return;
	}
	dir = tu_make_dir("rotate-sticky", 01777);
	log = tu_join(dir, "app.log");
	old = tu_join(dir, "app.log.1");
	target = tu_join(dir, "target");
	errs = tu_join(dir, "stderr");
	assert_int_equal(init_quiet(PK_MODE_HANDOFF), 0);
	atomic_store(&pk__file_check_ns, 0);	/* the console looks at every record */
	con = raw_console(log, NULL);
	for (i = 0; i < 5; i++)
		put("y", i);
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(rename(log, old), 0);
	assert_int_equal(symlink(target, log), 0);
	assert_int_equal(lchown(log, NOBODY, NOBODY), 0);
	assert_int_equal(pk_console_reopen(con), -EACCES);
	/* The console's own check refuses it too, and says so once. */
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(errs, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, STDERR_FILENO);
	close(fd);
	for (; i < 10; i++)
		put("y", i);
	assert_int_equal(pk_flush(5000), 0);
	dup2(saved, STDERR_FILENO);
	close(saved);
	exactly(old, "y", 0, 10);
	assert_int_equal(stat(target, &st), -1);	/* never created through the link */
	s = slurp(errs);
	if (tu_count(s, "libprintk:") != 2 || !strstr(s, "protected_symlinks") ||
	    !strstr(s, "reopening the renamed or removed path failed"))
		fail_msg("not one refusal and one failure: %s", s);
	free(s);
	free(errs);
	free(target);
	free(old);
	free(log);
	free(dir);
}

/*
 * The panic path does no rotation work: a child with a file console that
 * looks at its path on every write and rotates past 100 bytes; the file is
 * renamed, then pk_panic() prints far more than 100 bytes.  All of it must
 * go to the renamed file, and neither a new file nor a rotated one appear.
 */
static void test_panic_no_rotation(void **state)
{
	char *dir = tu_make_dir("rotate-panic", 0700), *log = tu_join(dir, "app.log");
	char *moved = tu_join(dir, "moved.log"), *one = tu_join(dir, "app.log.1"), *s;
	struct pk_file_opts o = { .rotate_size = 100, .rotate_count = 2 };
	struct stat st;
	int status;
	pid_t pid;

	(void)state;
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };
		struct pk_console_driver drv;
		struct pk_console *con;
		struct pk_config cfg;
		unsigned i;

		setrlimit(RLIMIT_CORE, &no_core);
		atomic_store(&pk__file_check_ns, 0);
		pk_config_init(&cfg);
		cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
		cfg.mode = PK_MODE_HANDOFF;
		TU_CHECK(pk_init(&cfg) == 0);
		TU_CHECK(pk_console_file_make_opts(log, &o, &drv) == 0);
		con = pk_console_register_driver(&drv, -1);
		TU_CHECK(con);
		TU_CHECK(pk_console_set_format(con, PK_FMT_RAW) == 0);
		for (i = 0; i < 5; i++)
			pk_info("p %u", i);
		TU_CHECK(pk_flush(5000) == 0);
		TU_CHECK(rename(log, moved) == 0);
		pk_panic("rotation must wait: %0200d", 7);
	}
	assert_int_equal(tu_waitpid(pid, &status, CHILD_MS, "panicking child"), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_int_equal(stat(log, &st), -1);	/* not reopened */
	assert_int_equal(errno, ENOENT);
	assert_int_equal(stat(one, &st), -1);	/* not rotated */
	s = slurp(moved);
	assert_true(strlen(s) > 300);
	assert_int_equal(strncmp(s, "p 0\np 1\np 2\np 3\np 4\n", 20), 0);
	assert_non_null(strstr(s, "rotation must wait: 0000000"));
	free(s);
	free(one);
	free(moved);
	free(log);
	free(dir);
}

static void test_opts_refused(void **state)
{
	char *dir = tu_make_dir("rotate-opts", 0700), *log = tu_join(dir, "app.log");
	struct pk_file_opts o = { .rotate_size = 100, .rotate_count = 1000 };
	struct pk_console_driver drv;

	(void)state;
	assert_int_equal(pk_console_file_make_opts(log, &o, &drv), -EINVAL);
	o.rotate_count = 999;
	o.mode = 01777;
	assert_int_equal(pk_console_file_make_opts(log, &o, &drv), -EINVAL);
	o.mode = 0;
	o.flags = 0x2;
	assert_int_equal(pk_console_file_make_opts(log, &o, &drv), -EINVAL);
	assert_int_equal(pk_console_file_make_opts(log, NULL, &drv), -EINVAL);
	o.flags = PK_FILE_FSYNC;
	assert_int_equal(pk_console_file_make_opts(log, &o, &drv), 0);
	drv.ops->release(drv.ctx);
	free(log);
	free(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_rename_create, teardown),
		cmocka_unit_test_teardown(test_rename_create_thread_mode, teardown),
		cmocka_unit_test_teardown(test_remove, teardown),
		cmocka_unit_test_teardown(test_copytruncate, teardown),
		cmocka_unit_test_teardown(test_explicit_reopen, teardown),
		cmocka_unit_test_teardown(test_size_rotation, teardown),
		cmocka_unit_test_teardown(test_size_rotation_none_kept, teardown),
		cmocka_unit_test_teardown(test_size_rotation_symlink, teardown),
		cmocka_unit_test_teardown(test_rotation_under_load, teardown),
		cmocka_unit_test_teardown(test_reopen_refuses_foreign_symlink, teardown),
		cmocka_unit_test(test_panic_no_rotation),
		cmocka_unit_test(test_opts_refused),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
