// SPDX-License-Identifier: MIT
/*
 * A set-id program ignores the PK_* environment (secure_getenv): run by an
 * unprivileged user with PK_CONSOLE=file:PATH and PK_BUFFER=PATH, a
 * set-user-ID-root (or set-group-ID-root) copy of setid_helper creates
 * neither file and runs on the defaults, printing to stderr.  The same copy
 * without the set-id bits, run by the same user with the same environment,
 * obeys it: the control that shows the test can fail.
 *
 * Needs root (to make a set-uid-root file and to become nobody); skips
 * otherwise.  CI runs as root, where it must not skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pty.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "printk/printk.h"
#include "testutil.h"

#ifndef SETID_HELPER_PATH
#error "SETID_HELPER_PATH: tests/CMakeLists.txt defines it"
#endif
#ifndef PKMSG_PATH
#error "PKMSG_PATH: tests/CMakeLists.txt defines it"
#endif
#ifndef SETID_BUILD_DIR
#define SETID_BUILD_DIR "."
#endif

#define NOBODY 65534
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A formatted string on the heap (the test fails if there is no memory). */
static char *str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	return s;
}

/* Skip, or fail under CI, where this test must run. */
#define skip_or_fail(...)                                                               \
	do {                                                                            \
		if (getenv("CI") && *getenv("CI"))                                      \
			fail_msg(__VA_ARGS__);                                          \
		tu_skip(__VA_ARGS__);                                                   \
		return;                                                                 \
	} while (0)

/* Can user @NOBODY reach @dir (every component searchable by others)? */
static bool others_can_enter(const char *dir)
{
	char path[PATH_MAX], *slash;
	struct stat st;

	if (!realpath(dir, path))
		return false;
	for (;;) {
		if (stat(path, &st) || !S_ISDIR(st.st_mode) || !(st.st_mode & S_IXOTH))
			return false;
		slash = strrchr(path, '/');
		if (!slash || slash == path)
			break;
		*slash = '\0';
	}
	return stat("/", &st) == 0 && (st.st_mode & S_IXOTH);
}

/*
 * A fresh directory for the set-uid copy: on a file system that honours
 * set-id bits (not mounted nosuid), reachable by nobody.  NULL if none.
 */
static char *setid_dir(void)
{
	const char *cands[] = { getenv("TMPDIR"), "/tmp", "/var/tmp", SETID_BUILD_DIR, "/dev/shm" };
	struct statvfs vfs;
	char tmpl[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cands); i++) {
		if (!cands[i] || !*cands[i])
			continue;
		if (statvfs(cands[i], &vfs) || (vfs.f_flag & ST_NOSUID) || (vfs.f_flag & ST_RDONLY))
			continue;
		if (!others_can_enter(cands[i]))
			continue;
		snprintf(tmpl, sizeof(tmpl), "%s/pk-setid-XXXXXX", cands[i]);
		if (!mkdtemp(tmpl))
			continue;
		if (chmod(tmpl, 0755) == 0)
			return strdup(tmpl);
		rmdir(tmpl);
	}
	return NULL;
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC), out;

	assert_true(in >= 0);
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	assert_int_equal(close(out), 0);
}

/*
 * Run @prog as user and group nobody with @envp; its stdout and stderr
 * (merged) come back, its exit status in *@status.
 */
static char *run_as_nobody(const char *prog, char *const envp[], int *status)
{
	char *out = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { (char *)prog, NULL };
		static const char msg[] = "test_setid: cannot become nobody or run the helper\n";

		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) || getuid() != NOBODY ||
		    geteuid() != NOBODY || getegid() != NOBODY) {
			(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
			_exit(98);
		}
		execve(prog, argv, envp);
		(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
		_exit(99);
	}
	close(fds[1]);
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		n = read(fds[0], out + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fds[0]);
	out[len] = '\0';
	tu_waitpid(pid, status, 30000, "setid_helper");
	return out;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void test_setid_ignores_environment(void **state)
{
	char *helper, *outdir, *con, *store, *dir, *text, *want, *envp[16];
	const char *asan = getenv("ASAN_OPTIONS"), *tsan = getenv("TSAN_OPTIONS");
	static const struct {
		mode_t mode;
		const char *what;
	} setid[] = { { 04755, "set-user-ID root" }, { 02755, "set-group-ID root" } };
	size_t i, ne = 0;
	int status;

	(void)state;
	if (geteuid() != 0)
		skip_or_fail("needs root, to make a set-uid-root copy of setid_helper and run it "
			     "as nobody (CI runs it as root)");
	dir = setid_dir();
	if (!dir)
		skip_or_fail("no directory on a file system without nosuid that nobody can enter");
	helper = str("%s/setid_helper", dir);
	outdir = str("%s/out", dir);
	con = str("%s/console.log", outdir);
	store = str("%s/store", outdir);
	copy_file(SETID_HELPER_PATH, helper);
	assert_int_equal(chown(helper, 0, 0), 0);
	assert_int_equal(chmod(helper, 0755), 0);
	/* Nobody may create files here: what the helper obeys, it can do. */
	assert_int_equal(mkdir(outdir, 0700), 0);
	assert_int_equal(chown(outdir, NOBODY, NOBODY), 0);

	envp[ne++] = str("PK_CONSOLE=file:%s", con);
	envp[ne++] = str("PK_BUFFER=%s", store);
	envp[ne++] = "PK_MODE=thread";
	envp[ne++] = "PK_LOGLEVEL=4";
	envp[ne++] = "PK_BUFFER_SIZE=64k";
	envp[ne++] = "PK_BUDGET_US=5";
	envp[ne++] = "PK_BUFFER_CLEAR=1";
	envp[ne++] = "PK_CRASH_HANDLER=1";
	/* A set-id process cannot be stopped for the leak check (ptrace); see the helper. */
	envp[ne++] = str("ASAN_OPTIONS=%s%sdetect_leaks=0", asan ? asan : "",
			 asan && *asan ? ":" : "");
	if (tsan)
		envp[ne++] = str("TSAN_OPTIONS=%s", tsan);
	envp[ne] = NULL;

	/* Control: without set-id bits the environment is obeyed. */
	text = run_as_nobody(helper, envp, &status);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 98)
		skip_or_fail("cannot switch to uid %d here: %s", NOBODY, text);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("control run failed (status %#x): %s", status, text);
	want = str("buffer=%s consoles=file:%s\n", store, con);
	/* PK_BUFFER_SIZE=64k: a 64 KiB data ring, in a store of data + data/4 + 512 bytes. */
	if (!strstr(text, "config: mode=2 loglevel=4 size=82432 budget=5 ") || !strstr(text, want))
		fail_msg("control run did not take the environment: %s", text);
	free(want);
	free(text);
	assert_true(exists(con));
	assert_true(exists(store));
	text = tu_read_file(con, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "setid helper logs this line"));
	free(text);
	assert_int_equal(unlink(con), 0);
	assert_int_equal(unlink(store), 0);

	want = str("config: mode=0 loglevel=7 size=%zu budget=%u flags=0 buffer=(none) "
		   "consoles=(none)\n", (size_t)PK_BUFFER_SIZE_DEFAULT, PK_PRINT_BUDGET_DEFAULT_US);
	for (i = 0; i < ARRAY_SIZE(setid); i++) {
		assert_int_equal(chmod(helper, setid[i].mode), 0);
		text = run_as_nobody(helper, envp, &status);
		print_message("%s: %s", setid[i].what, text);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("%s run failed (status %#x): %s", setid[i].what, status, text);
		/* Defaults, no PK_* taken, and the default console: stderr. */
		if (!strstr(text, want))
			fail_msg("%s: not the defaults: %s", setid[i].what, text);
		assert_non_null(strstr(text, "setid helper logs this line"));
		assert_null(strstr(text, "libprintk:"));	/* nothing was even parsed */
		free(text);
		if (exists(con) || exists(store))
			fail_msg("%s: created %s", setid[i].what, exists(con) ? con : store);
	}
	unlink(helper);
	rmdir(outdir);
	rmdir(dir);
	free(want);
	for (i = 0; i < ne; i++)
		if (strncmp(envp[i], "PK_", 3) || !strncmp(envp[i], "PK_CONSOLE=", 11) ||
		    !strncmp(envp[i], "PK_BUFFER=", 10))
			free(envp[i]);	/* the ones str() made */
	free(store);
	free(con);
	free(outdir);
	free(helper);
	free(dir);
}

/*
 * Run @argv as user and group nobody with @envp, its stdin, stdout and
 * stderr on a pseudo-terminal; what it (and its children) wrote there comes
 * back, its exit status in *@status.
 */
static char *run_as_nobody_tty(char *const argv[], char *const envp[], int *status)
{
	char *out = NULL;
	size_t len = 0, cap = 0;
	int master, slave;
	ssize_t n;
	pid_t pid;

	assert_int_equal(openpty(&master, &slave, NULL, NULL, NULL), 0);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static const char msg[] = "test_setid: cannot become nobody or run pkmsg\n";

		close(master);
		setsid();
		ioctl(slave, TIOCSCTTY, 0);
		dup2(slave, STDIN_FILENO);
		dup2(slave, STDOUT_FILENO);
		dup2(slave, STDERR_FILENO);
		if (slave > STDERR_FILENO)
			close(slave);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) || getuid() != NOBODY ||
		    geteuid() != NOBODY || getegid() != NOBODY) {
			(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
			_exit(98);
		}
		execve(argv[0], argv, envp);
		(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
		_exit(99);
	}
	close(slave);
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		n = read(master, out + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)	/* EIO: every holder of the terminal closed it */
			break;
		len += (size_t)n;
	}
	close(master);
	out[len] = '\0';
	tu_waitpid(pid, status, 30000, "pkmsg");
	return out;
}

/*
 * A set-id pkmsg pages never: $PAGER is its caller's command (and less runs
 * any command with '!'), which would run with the rights pkmsg was given.
 * Run as nobody on a terminal with PAGER="touch MARK; cat", the same copy of
 * pkmsg without set-id bits runs the pager (the control: MARK appears), set-uid
 * root and set-gid root it does not, and prints the records itself.
 */
static void test_setid_pkmsg_pages_never(void **state)
{
	char *dir, *helper, *pkmsg, *outdir, *store, *mark, *text, *henv[4], *penv[5];
	const char *asan = getenv("ASAN_OPTIONS");
	static const mode_t modes[] = { 04755, 02755 };
	char *argv[4];
	size_t i;
	int status;

	(void)state;
	if (geteuid() != 0)
		skip_or_fail("needs root, to make a set-uid-root copy of pkmsg and run it as "
			     "nobody (CI runs it as root)");
	dir = setid_dir();
	if (!dir)
		skip_or_fail("no directory on a file system without nosuid that nobody can enter");
	helper = str("%s/setid_helper", dir);
	pkmsg = str("%s/pkmsg", dir);
	outdir = str("%s/out", dir);
	store = str("%s/store", outdir);
	mark = str("%s/paged", outdir);
	copy_file(SETID_HELPER_PATH, helper);
	copy_file(PKMSG_PATH, pkmsg);
	assert_int_equal(chown(helper, 0, 0), 0);
	assert_int_equal(chmod(helper, 0755), 0);
	assert_int_equal(chown(pkmsg, 0, 0), 0);
	assert_int_equal(chmod(pkmsg, 0755), 0);
	assert_int_equal(mkdir(outdir, 0700), 0);
	assert_int_equal(chown(outdir, NOBODY, NOBODY), 0);

	/* A store of nobody's, with the helper's line in it. */
	henv[0] = str("PK_BUFFER=%s", store);
	henv[1] = "PK_BUFFER_SIZE=64k";
	henv[2] = str("ASAN_OPTIONS=%s%sdetect_leaks=0", asan ? asan : "", asan && *asan ? ":" : "");
	henv[3] = NULL;
	text = run_as_nobody(helper, henv, &status);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 98)
		skip_or_fail("cannot switch to uid %d here: %s", NOBODY, text);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !exists(store))
		fail_msg("the helper made no store (status %#x): %s", status, text);
	free(text);

	penv[0] = str("PAGER=touch %s; cat", mark);
	penv[1] = "TERM=dumb";
	penv[2] = "PATH=/usr/bin:/bin";
	penv[3] = henv[2];
	penv[4] = NULL;
	argv[0] = pkmsg;
	argv[1] = "-F";
	argv[2] = store;
	argv[3] = NULL;
	text = run_as_nobody_tty(argv, penv, &status);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !exists(mark))
		fail_msg("control: pkmsg did not page (status %#x): %s", status, text);
	assert_non_null(strstr(text, "setid helper logs this line"));
	free(text);
	assert_int_equal(unlink(mark), 0);
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		/*
		 * pkmsg under ASan checks for leaks at exit by stopping its
		 * threads with ptrace, which a set-gid process run by nobody
		 * does not allow, and it cannot read ASAN_OPTIONS there (the
		 * sanitizer reads /proc/self/environ): the set-uid-root copy
		 * is tried, the set-gid one in the plain build.
		 */
		if (tu_sanitized_address() && (modes[i] & S_ISGID)) {
			print_message("pkmsg mode %o: not run under AddressSanitizer\n",
				      (unsigned)modes[i]);
			continue;
		}
		assert_int_equal(chmod(pkmsg, modes[i]), 0);
		text = run_as_nobody_tty(argv, penv, &status);
		print_message("pkmsg mode %o: %s", (unsigned)modes[i], text);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("mode %o: pkmsg failed (status %#x): %s", (unsigned)modes[i],
				 status, text);
		assert_non_null(strstr(text, "setid helper logs this line"));
		if (exists(mark))
			fail_msg("mode %o: pkmsg ran $PAGER", (unsigned)modes[i]);
		free(text);
	}
	unlink(store);
	unlink(helper);
	unlink(pkmsg);
	rmdir(outdir);
	rmdir(dir);
	free(penv[0]);
	free(henv[0]);
	free(henv[2]);
	free(mark);
	free(store);
	free(outdir);
	free(pkmsg);
	free(helper);
	free(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setid_ignores_environment),
		cmocka_unit_test(test_setid_pkmsg_pages_never),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
