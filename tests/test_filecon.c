// SPDX-License-Identifier: MIT
/*
 * File consoles under faults and attacks: a directory others or a group
 * may write (a symlink or file planted at the log's name is refused on
 * the reopen too), a log whose name another user took (the file it has
 * stays bounded, the drops counted), a FIFO whose reader stopped (every
 * call bounded, the drops counted), write errors (RLIMIT_FSIZE: no
 * SIGXFSZ death, the torn line ended and the loss said in the file).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include <unistd.h>

#include "console/wfd.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define NOBODY		65534
#define CHILD_MS	120000
#define FIFO_MS		60000	/* hang bound: 3000 calls */
#define YS		"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"

static int init_mode(enum pk_mode mode)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = mode;
	cfg.buffer_size = 1 << 20;
	return pk_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	atomic_store(&pk__file_check_ns, 1000000000u);
	return 0;
}

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

static const char *mode_name(enum pk_mode m)
{
	return m == PK_MODE_THREAD ? "thread" : m == PK_MODE_LEGACY ? "legacy" : "handoff";
}

/* Sum of N over the lines "** N printk messages dropped **" of @s; *@lines: how many. */
static uint64_t dropped_in(const char *s, unsigned *lines)
{
	const char *p = s;
	unsigned long long n;
	uint64_t sum = 0;

	*lines = 0;
	while ((p = strstr(p, "** ")) != NULL) {
		if (sscanf(p, "** %llu printk messages dropped **", &n) == 1) {
			sum += n;
			++*lines;
		}
		p += 3;
	}
	return sum;
}

/* Lines of @s that are exactly "@tag N" or "@tag N @suffix" (N any), counted. */
static unsigned tagged_lines(const char *s, const char *tag, const char *suffix)
{
	size_t tl = strlen(tag), sl = suffix ? strlen(suffix) : 0;
	const char *p = s, *nl, *q;
	unsigned n = 0;

	while ((nl = strchr(p, '\n')) != NULL) {
		q = p + tl;
		if (!strncmp(p, tag, tl) && *q == ' ' && q[1] >= '0' && q[1] <= '9') {
			for (q++; *q >= '0' && *q <= '9'; q++)
				;
			if (q == nl || (suffix && *q == ' ' && (size_t)(nl - q - 1) == sl &&
					!strncmp(q + 1, suffix, sl)))
				n++;
		}
		p = nl + 1;
	}
	return n;
}

/* ---- a directory others or a group may write ---- */

/*
 * A log in a directory that is not sticky and that others (0777) or its
 * group (0775, /var/log's root:syslog) may write.  Another user replaces
 * the log's name with a symlink to a file of root's (then, with a file of
 * their own): the console's per-second recheck must follow neither, say
 * so once, and keep writing the file it has.  Before, the symlink was
 * followed and the target appended to.
 */
static void planted_in(mode_t dmode)
{
	char *dir = tu_make_dir("filecon-shared", dmode), *log = tu_join(dir, "app.log");
	char *old = tu_join(dir, "app.log.1"), *target = tu_join(dir, "precious");
	struct tu_grab g;
	char *s, *errs;
	unsigned i;
	int fd;

	fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "root's\n", 7), 7);
	close(fd);
	assert_int_equal(init_mode(PK_MODE_HANDOFF), 0);
	atomic_store(&pk__file_check_ns, 0);	/* the console looks at every record */
	raw_console(log, NULL);
	for (i = 0; i < 5; i++)
		assert_true(pk_info("a %u\n", i) > 0);
	assert_int_equal(pk_flush(5000), 0);
	/* The attacker: the log moved away, a symlink of theirs in its place. */
	assert_int_equal(rename(log, old), 0);
	assert_int_equal(symlink(target, log), 0);
	assert_int_equal(lchown(log, NOBODY, NOBODY), 0);
	tu_grab_start(&g);
	for (; i < 10; i++)
		assert_true(pk_info("a %u\n", i) > 0);
	assert_int_equal(pk_flush(5000), 0);
	/* Then a file of their own. */
	assert_int_equal(unlink(log), 0);
	fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, NOBODY, NOBODY), 0);
	close(fd);
	for (; i < 15; i++)
		assert_true(pk_info("a %u\n", i) > 0);
	assert_int_equal(pk_flush(5000), 0);
	errs = tu_grab_end(&g);
	s = tu_read_file(target, NULL);
	assert_non_null(s);
	if (strcmp(s, "root's\n"))
		fail_msg("dir %o: the symlink was followed: the target holds \"%s\"", dmode, s);
	free(s);
	s = tu_read_file(log, NULL);
	assert_non_null(s);
	if (*s)
		fail_msg("dir %o: the other user's file was written: \"%.60s\"", dmode, s);
	free(s);
	s = tu_read_file(old, NULL);
	assert_non_null(s);
	assert_int_equal(tagged_lines(s, "a", NULL), 15);	/* all in the file it has */
	free(s);
	if (!strstr(errs, "protected_symlinks") ||
	    !strstr(errs, (dmode & S_IWOTH) ? "a directory other users may write" :
					       "a directory its group may write"))
		fail_msg("dir %o: no clear refusal: %s", dmode, errs);
	if (tu_count(errs, "libprintk:") > 3)
		fail_msg("dir %o: said more than once per cause: %s", dmode, errs);
	print_message("dir %o: %s", dmode, errs);
	free(errs);
	pk_shutdown();
	free(target);
	free(old);
	free(log);
	free(dir);
}

static void test_shared_dir_planted(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		tu_skip("needs root, to give a symlink to uid %d with lchown()", NOBODY);
		return;
	}
	planted_in(0777);
	planted_in(0775);
}

/* The same rule at the first open: an existing foreign symlink is refused. */
static void test_shared_dir_first_open(void **state)
{
	char *dir, *log, *target;
	struct pk_console_driver drv;
	struct stat st;

	(void)state;
	if (geteuid() != 0) {
		tu_skip("needs root, to give a symlink to uid %d with lchown()", NOBODY);
		return;
	}
	dir = tu_make_dir("filecon-shared0", 0775);
	log = tu_join(dir, "app.log");
	target = tu_join(dir, "elsewhere");
	assert_int_equal(symlink(target, log), 0);
	assert_int_equal(lchown(log, NOBODY, NOBODY), 0);
	assert_int_equal(pk_console_file_make(log, 0, &drv), -EACCES);
	assert_int_equal(stat(target, &st), -1);
	/* Our own symlink there is followed, as before. */
	assert_int_equal(lchown(log, 0, 0), 0);
	assert_int_equal(pk_console_file_make(log, 0, &drv), 0);
	drv.ops->release(drv.ctx);
	assert_int_equal(stat(target, &st), 0);
	free(target);
	free(log);
	free(dir);
}

/* ---- another user holds the log's name ---- */

/*
 * A sticky directory; the log rotates at 2000 bytes.  Its name is taken
 * by another user's file after the log moved away (the state a user who
 * wins the race between rotation's rename and its O_EXCL create leaves):
 * the file the console has must stay near 2000 bytes, the rest counted as
 * dropped, said once; once the name is free again, rotation resumes and
 * the new file starts with the count.  Before, the file grew without bound.
 */
static void test_name_taken_bounded(void **state)
{
	char *dir, *log, *one, *s, *errs;
	struct pk_file_opts o = { .rotate_size = 2000, .rotate_count = 1 };
	struct pk_console_stats st;
	struct pk_console *con;
	unsigned i, lines, in_one, in_new, notes;
	uint64_t dropped;
	struct tu_grab g;
	struct stat sb;
	long long held;
	int fd, unlinked, flushed;

	(void)state;
	if (geteuid() != 0) {
		tu_skip("needs root, to give a file to uid %d", NOBODY);
		return;
	}
	dir = tu_make_dir("filecon-taken", 01777);
	log = tu_join(dir, "app.log");
	one = tu_join(dir, "app.log.1");
	assert_int_equal(init_mode(PK_MODE_HANDOFF), 0);
	atomic_store(&pk__file_check_ns, 0);
	con = raw_console(log, &o);
	for (i = 0; i < 5; i++)
		assert_true(pk_info("t %u\n", i) > 0);
	assert_int_equal(pk_flush(5000), 0);
	assert_int_equal(rename(log, one), 0);
	fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, NOBODY, NOBODY), 0);
	close(fd);
	tu_grab_start(&g);
	for (; i < 2000; i++)	/* about 16 KB */
		pk_info("t %u\n", i);
	pk_flush(5000);
	held = stat(one, &sb) == 0 ? sb.st_size : -1;
	/* The name is free again: a new file, starting with the count. */
	unlinked = unlink(log);
	for (; i < 2010; i++)
		pk_info("t %u\n", i);
	flushed = pk_flush(5000);
	errs = tu_grab_end(&g);	/* before any assertion: a failure's words go to stderr */
	if (held < 0 || held > 2000)
		fail_msg("the file held off its name grew to %lld bytes (cap 2000)", (long long)held);
	assert_int_equal(unlinked, 0);
	assert_int_equal(flushed, 0);
	s = tu_read_file(one, NULL);
	in_one = tagged_lines(s, "t", NULL);
	free(s);
	s = tu_read_file(log, NULL);
	assert_non_null(s);
	in_new = tagged_lines(s, "t", NULL);
	dropped = dropped_in(s, &notes);
	if (strncmp(s, "** ", 3) || notes != 1)
		fail_msg("the new file does not start with one drop notice: \"%.80s\"", s);
	free(s);
	lines = in_one + in_new;
	assert_int_equal(pk_console_stats_get(con, &st), 0);
	print_message("held off: %u in the old file (%lld bytes), %u in the new, %llu dropped, "
		      "%llu write errors\n", in_one, held, in_new,
		      (unsigned long long)dropped, (unsigned long long)st.write_errors);
	assert_int_equal(lines + dropped, 2010);	/* every record printed or counted */
	assert_int_equal(st.write_errors, dropped);
	if (tu_count(errs, "grow to no more than 2000 bytes") != 1)
		fail_msg("not said once: %s", errs);
	free(errs);
	free(one);
	free(log);
	free(dir);
}

/* ---- a FIFO whose reader stopped ---- */

/*
 * A child logs 3000 records of 200 bytes (handoff, legacy: the caller
 * prints) to a FIFO whose reader never reads.  Every call must return
 * (a hang bound), and after the reader drained the FIFO, the next record
 * comes after a drop notice, so that the records read plus those counted
 * are all 3000.  Before, the first full FIFO stalled the caller for ever.
 */
static void fifo_stalled(enum pk_mode mode)
{
	char *dir = tu_make_dir("filecon-fifo", 0700), *fifo = tu_join(dir, "fifo");
	int rfd, go[2], done[2], status;
	char pad[200], buf[65536], *text = NULL;
	size_t len = 0, cap = 0;
	unsigned lines, notes;
	uint64_t dropped;
	ssize_t n;
	pid_t pid;
	char c;

	assert_int_equal(mkfifo(fifo, 0600), 0);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe2(done, O_NONBLOCK), 0);	/* the parent's waits are bounded */
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	pid = tu_fork();
	if (pid == 0) {
		unsigned i;

		close(rfd);
		if (init_mode(mode) != 0)
			_exit(2);
		raw_console(fifo, NULL);
		for (i = 0; i < 3000; i++)
			pk_info("f %u %s\n", i, pad);
		pk_flush(5000);
		(void)!write(done[1], "d", 1);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		pk_info("after\n");
		pk_flush(5000);
		(void)!write(done[1], "e", 1);
		pause();	/* the parent reads, then kills */
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	/* Every call returned: the child says so (a hang bound, not a timing). */
	if (!tu_wait_until(read(done[0], &c, 1) == 1, FIFO_MS)) {
		kill(pid, SIGKILL);
		tu_waitpid(pid, &status, CHILD_MS, "fifo child");
		fail_msg("%s: the child's calls did not return within %d s (a stalled FIFO)",
			 mode_name(mode), FIFO_MS / 1000);
	}
	for (;;) {
		n = read(rfd, buf, sizeof(buf));
		if (n <= 0)
			break;
		if (len + (size_t)n + 1 > cap) {
			cap = (len + (size_t)n + 1) * 2;
			text = realloc(text, cap);
			assert_non_null(text);
		}
		memcpy(text + len, buf, (size_t)n);
		len += (size_t)n;
	}
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_true(tu_wait_until(read(done[0], &c, 1) == 1, CHILD_MS));
	assert_true(tu_wait_until((n = read(rfd, buf, sizeof(buf))) > 0, CHILD_MS));
	if (len + (size_t)n + 1 > cap) {
		cap = len + (size_t)n + 1;
		text = realloc(text, cap);
		assert_non_null(text);
	}
	memcpy(text + len, buf, (size_t)n);
	len += (size_t)n;
	text[len] = '\0';
	kill(pid, SIGKILL);
	tu_waitpid(pid, &status, CHILD_MS, "fifo child");
	lines = tagged_lines(text, "f", pad);
	dropped = dropped_in(text, &notes);
	print_message("%s: %u of 3000 read from the FIFO, %llu counted dropped in %u notice(s)\n",
		      mode_name(mode), lines, (unsigned long long)dropped, notes);
	if (getenv("PK_TEST_DEBUG")) {
		const char *p = text;

		while ((p = strstr(p, "** ")) != NULL) {
			print_message("notice: %.60s\n", p - (p > text ? 1 : 0));
			p += 3;
		}
		print_message("tail: %s\n", text + (len > 300 ? len - 300 : 0));
	}
	assert_true(strstr(text, "printk messages dropped **\nafter\n") != NULL);
	assert_int_equal(lines + dropped, 3000);
	free(text);
	close(rfd);
	close(go[1]);
	close(done[0]);
	unlink(fifo);
	free(fifo);
	free(dir);
}

static void test_fifo_stalled(void **state)
{
	(void)state;
	fifo_stalled(PK_MODE_HANDOFF);
	fifo_stalled(PK_MODE_LEGACY);
	fifo_stalled(PK_MODE_THREAD);
}

/* ---- write errors: RLIMIT_FSIZE ---- */

/*
 * A child lowers RLIMIT_FSIZE to 4000 bytes and logs 100 records of 61
 * bytes to a file console: the one that crosses the limit is torn (the
 * kernel writes what fits), the rest fail with EFBIG.  The process must
 * survive (SIGXFSZ killed it in handoff and legacy), and after the limit
 * is raised again the file must hold: the whole records, the torn one
 * ended by a newline, one drop notice counting the rest, then the next
 * records.
 */
static void fsize_limited(enum pk_mode mode)
{
	char *dir = tu_make_dir("filecon-fsize", 0700), *log = tu_join(dir, "app.log");
	unsigned lines, notes, after;
	uint64_t dropped;
	int status;
	char *s, *nl;
	pid_t pid;

	pid = tu_fork();
	if (pid == 0) {
		struct rlimit rl;
		unsigned i;

		if (init_mode(mode) != 0)
			_exit(2);
		raw_console(log, NULL);
		getrlimit(RLIMIT_FSIZE, &rl);
		rl.rlim_cur = 4000;
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(3);
		for (i = 0; i < 100; i++)	/* "r NN " + 54 + "\n": 61 bytes or so */
			pk_info("r %u %s\n", i, YS);
		pk_flush(5000);
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(4);
		for (i = 0; i < 5; i++)
			pk_info("n %u\n", i);
		pk_flush(5000);
		pk_shutdown();
		_exit(0);
	}
	tu_waitpid(pid, &status, CHILD_MS, "RLIMIT_FSIZE child");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s: the child did not exit 0: status 0x%x (signal %d)", mode_name(mode),
			 status, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	s = tu_read_file(log, NULL);
	assert_non_null(s);
	lines = tagged_lines(s, "r", YS);
	after = tagged_lines(s, "n", NULL);
	dropped = dropped_in(s, &notes);
	print_message("%s: %u whole records under the limit, %llu dropped in %u notice(s), "
		      "%u after\n", mode_name(mode), lines, (unsigned long long)dropped, notes,
		      after);
	assert_int_equal(notes, 1);
	assert_int_equal(lines + dropped, 100);
	assert_int_equal(after, 5);
	/* The notice starts a line of its own: the torn record was ended. */
	nl = strstr(s, "** ");
	assert_non_null(nl);
	assert_true(nl == s || nl[-1] == '\n');
	free(s);
	free(log);
	free(dir);
}

static void test_fsize_limit(void **state)
{
	(void)state;
	fsize_limited(PK_MODE_HANDOFF);
	fsize_limited(PK_MODE_LEGACY);
	fsize_limited(PK_MODE_THREAD);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_shared_dir_planted, teardown),
		cmocka_unit_test(test_shared_dir_first_open),
		cmocka_unit_test_teardown(test_name_taken_bounded, teardown),
		cmocka_unit_test(test_fifo_stalled),
		cmocka_unit_test(test_fsize_limit),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
