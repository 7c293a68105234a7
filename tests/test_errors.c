// SPDX-License-Identifier: MIT
/*
 * Error paths: what each public entry point does with bad input or a
 * hostile environment, checked by its return value, errno and the line it
 * prints on stderr.
 *
 *   - netconsole: bad arguments, a name that does not resolve, a peer that
 *     refuses (connect), no descriptor left (socket), send errors;
 *   - the store file (persist.c): a directory, a FIFO, a file that is not a
 *     store, too short or too large, another version, a corrupt header, a
 *     size that does not match, another PK_BUFFER_SIZE, a missing
 *     directory, a dangling symlink, a file size limit (with SIGXFSZ's
 *     default action), a sparse store on a full filesystem, a symlink to a
 *     good store (refused: persist.c, "OWNERSHIP");
 *   - the reader API on bad files and bad arguments;
 *   - PK_CONSOLE: every kind of malformed entry, and a full console table;
 *   - the record formats (kmsg, syslog, JSON, raw, human with its flags,
 *     escaping of hostile text, truncation);
 *   - pk_panic() details: a reason ending in a newline, a panic inside the
 *     panic, abort() under the crash handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "console/consoles.h"
#include "format/format.h"
#include "format/format.h"
#include "store/store.h"
#include "printk/console.h"
#include "printk/reader.h"
#include "testutil.h"

#define STORE		(64u << 10)
#define CHILD_MS	60000

/* ---- standard error, captured ---- */

static int saved_err = -1;
static char *err_path;

static void err_begin(void)
{
	int fd;

	fflush(stderr);
	err_path = tu_tmp_path("errors-stderr");
	fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	saved_err = dup(STDERR_FILENO);
	assert_true(saved_err >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

/* What was printed on stderr since err_begin() (caller frees). */
static char *err_end(void)
{
	char *s;

	fflush(stderr);
	dup2(saved_err, STDERR_FILENO);
	close(saved_err);
	saved_err = -1;
	s = tu_read_file(err_path, NULL);
	unlink(err_path);
	free(err_path);
	err_path = NULL;
	return s ? s : strdup("");
}

static void assert_contains(const char *s, const char *needle)
{
	if (!strstr(s, needle))
		fail_msg("\"%s\" not in \"%s\"", needle, s);
}

/* ---- netconsole ---- */

static void test_net_bad_arguments(void **state)
{
	struct pk_console_driver d;

	(void)state;
	assert_int_equal(pk_console_net_make(NULL, 6666, &d), -EINVAL);
	assert_int_equal(pk_console_net_make("", 6666, &d), -EINVAL);
	assert_int_equal(pk_console_net_make("127.0.0.1", 0, &d), -EINVAL);
	assert_int_equal(pk_console_net_make("127.0.0.1", 65536, &d), -EINVAL);
	assert_int_equal(pk_console_net_make("127.0.0.1", 6666, NULL), -EINVAL);
}

static void test_net_unresolvable(void **state)
{
	struct pk_console_driver d;

	(void)state;
	/*
	 * RFC 2606: .invalid never resolves.  The name resolves off the
	 * caller's path: the driver is made, and a write before the name
	 * resolved fails (-EHOSTUNREACH, counted by the driver).
	 */
	assert_int_equal(pk_console_net_make("no-such-host.invalid", 6666, &d), 0);
	assert_int_equal(d.ops->write(d.ctx, "x\n", 2), -EHOSTUNREACH);
	d.ops->release(d.ctx);
}

static void test_net_connect_refused(void **state)
{
	struct pk_console_driver d;

	(void)state;
	/* Connecting a datagram socket to broadcast needs SO_BROADCAST. */
	assert_int_equal(pk_console_net_make("255.255.255.255", 6666, &d), -EACCES);
}

static void test_net_no_descriptor(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rlimit rl = { 32, 32 };
		struct pk_console_driver d;
		int ret;

		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(2);
		/* Use up every descriptor. */
		while (open("/dev/null", O_RDONLY) >= 0)
			;
		if (errno != EMFILE)
			_exit(3);
		ret = pk_console_net_make("127.0.0.1", 6666, &d);
		/* Descriptors back, so that coverage data can be written. */
		for (int fd = 3; fd < 32; fd++)
			close(fd);
		_exit(ret == -EMFILE ? 0 : 1);
	}
	tu_waitpid(pid, &status, CHILD_MS, "netconsole child");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_net_send_and_refused(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct pk_console_driver d;
	char big[3000], got[3000];
	long r;
	int s, i;

	(void)state;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	assert_int_equal(pk_console_net_make("127.0.0.1", ntohs(sa.sin_port), &d), 0);
	assert_string_equal(d.ops->name, "netconsole");
	assert_non_null(d.ops->write_atomic);
	assert_int_equal(d.format, PK_FMT_HUMAN);

	/*
	 * A long write goes out whole in one call: datagrams of at most 1400
	 * bytes, each after the first marked "ncfrag=OFFSET/TOTAL ".
	 */
	for (i = 0; i < (int)sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(d.ops->write(d.ctx, big, sizeof(big)), (long)sizeof(big));
	assert_int_equal(recv(s, got, sizeof(got), 0), 1400);
	assert_memory_equal(got, big, 1400);
	r = recv(s, got, sizeof(got), 0);
	assert_true(r > 18 && r <= 1400);
	assert_memory_equal(got, "ncfrag=1400/3000 ", 17);
	assert_memory_equal(got + 17, big + 1400, (size_t)r - 17);

	/* The peer goes away: the ICMP error comes back as ECONNREFUSED. */
	close(s);
	r = 0;
	for (i = 0; i < 100 && r != -ECONNREFUSED; i++) {
		r = d.ops->write(d.ctx, "x\n", 2);
		assert_true(r == 2 || r == -ECONNREFUSED);
		if (r == 2)
			(void)tu_wait_until(0, 1);
	}
	assert_int_equal(r, -ECONNREFUSED);
	d.ops->release(d.ctx);
}

/* ---- the store file ---- */

static void cfg_for(struct pk_config *cfg, const char *path, size_t size)
{
	pk_config_init(cfg);
	cfg->buffer_path = path;
	cfg->buffer_size = size;
	cfg->flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
}

/* pk__persist_open of @path: its return value, and the stderr line in *@msg. */
static int open_store(const char *path, size_t size, char **msg)
{
	struct pk_config cfg;
	void *mem = NULL;
	size_t sz = 0;
	int fd = -1, ret;

	cfg_for(&cfg, path, size);
	err_begin();
	ret = pk__persist_open(&cfg, &mem, &sz, &fd);
	*msg = err_end();
	if (ret == 0)
		pk__persist_close(mem, sz, fd);
	return ret;
}

/* Expect pk__persist_open(@path) to fail with @err, saying @why. */
static void refused(const char *path, size_t size, int err, const char *why)
{
	char want[512], *msg;
	int ret = open_store(path, size, &msg);

	if (ret != err)
		fail_msg("%s: %d (%s), wanted %d; stderr \"%s\"", path, ret, pk_strerror(ret), err, msg);
	snprintf(want, sizeof(want), "libprintk: store %s: %s", path, why);
	assert_contains(msg, want);
	free(msg);
}

/* A fresh valid store at a new path (caller frees the path). */
static char *good_store(size_t size)
{
	char *path = tu_tmp_path("errors-store"), *msg;

	assert_int_equal(open_store(path, size, &msg), 0);
	assert_string_equal(msg, "");
	free(msg);
	return path;
}

static void patch(const char *path, off_t off, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, p, n, off), (ssize_t)n);
	close(fd);
}

static void test_store_not_a_file(void **state)
{
	char *dir = tu_tmp_path("errors-dir"), *fifo = tu_tmp_path("errors-fifo");
	char *file = tu_tmp_path("errors-file"), under[512];
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	refused(dir, STORE, -EISDIR, "");

	assert_int_equal(mkfifo(fifo, 0600), 0);
	refused(fifo, STORE, -EINVAL, "not a regular file");
	assert_int_equal(stat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	/* A path through a regular file. */
	fd = open(file, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(under, sizeof(under), "%s/store", file);
	refused(under, STORE, -ENOTDIR, "");

	/* A directory that does not exist: creation fails. */
	snprintf(under, sizeof(under), "%s/missing/store", dir);
	refused(under, STORE, -ENOENT, "cannot create the store file");

	rmdir(dir);
	unlink(fifo);
	unlink(file);
	free(dir);
	free(fifo);
	free(file);
}

static void test_store_not_a_store(void **state)
{
	char *path = tu_tmp_path("errors-junk");
	char junk[100];
	struct stat st;
	size_t size;
	int fd;

	(void)state;
	memset(junk, 'j', sizeof(junk));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	refused(path, STORE, -EINVAL, "file too short to be a libprintk store");

	/* Header-sized or more, but no magic. */
	size = pk__ring_region_size(pk__ring_data_log2_for(STORE));
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	refused(path, STORE, -EINVAL, "not a libprintk store (bad magic)");

	/* Larger than the largest store (sparse). */
	assert_int_equal(ftruncate(fd, (off_t)pk__ring_region_size(PK_RING_MAX_DATA_LOG2) + 4096), 0);
	refused(path, STORE, -EINVAL, "file too large to be a libprintk store");
	close(fd);

	/* The reader refuses it too, and leaves it as it was. */
	assert_null(pk_reader_open_file(path));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, pk__ring_region_size(PK_RING_MAX_DATA_LOG2) + 4096);
	memset(junk, 0, sizeof(junk));
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	close(fd);
	assert_int_equal(junk[0], 'j');
	assert_int_equal(junk[sizeof(junk) - 1], 'j');
	unlink(path);
	free(path);
}

static void test_store_bad_header(void **state)
{
	char *path = good_store(STORE);
	size_t size = pk__ring_region_size(pk__ring_data_log2_for(STORE));
	uint32_t v = PK_RING_VERSION + 1, hs = 100;
	uint64_t seq = 5, one = 1;
	struct pk_ring_hdr h;
	int fd;

	(void)state;
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);

	patch(path, offsetof(struct pk_ring_hdr, version), &v, sizeof(v));
	refused(path, STORE, -EPROTO, "store file has format version");
	assert_null(pk_reader_open_file(path));
	assert_int_equal(errno, EPROTO);
	patch(path, offsetof(struct pk_ring_hdr, version), &h.version, sizeof(v));

	patch(path, offsetof(struct pk_ring_hdr, hdr_size), &hs, sizeof(hs));
	refused(path, STORE, -EINVAL, "corrupt store header (sizes or offsets)");
	patch(path, offsetof(struct pk_ring_hdr, hdr_size), &h.hdr_size, sizeof(hs));

	/* first_seq above clear_seq. */
	patch(path, offsetof(struct pk_ring_hdr, first_seq), &seq, sizeof(seq));
	refused(path, STORE, -EINVAL, "corrupt store header (sequence bounds)");
	patch(path, offsetof(struct pk_ring_hdr, first_seq), &h.first_seq, sizeof(seq));

	/* lpos_head not 8-aligned. */
	patch(path, offsetof(struct pk_ring_hdr, lpos_head), &one, sizeof(one));
	refused(path, STORE, -EINVAL, "corrupt store header (sequence bounds)");
	patch(path, offsetof(struct pk_ring_hdr, lpos_head), &h.lpos_head, sizeof(one));

	/* Extended by a page: the size no longer matches the header. */
	assert_int_equal(truncate(path, (off_t)size + 4096), 0);
	refused(path, STORE, -EINVAL, "file size does not match the store header: ");
	/* Truncated: the header describes more than the file holds. */
	assert_int_equal(truncate(path, (off_t)size - 4096), 0);
	refused(path, STORE, -EINVAL, "store file is truncated: ");
	assert_int_equal(truncate(path, (off_t)size), 0);

	/* Put right again, it opens. */
	{
		char *msg;

		assert_int_equal(open_store(path, STORE, &msg), 0);
		assert_string_equal(msg, "");
		free(msg);
	}
	unlink(path);
	free(path);
}

static void test_store_other_size(void **state)
{
	char *path = good_store(STORE), want[256];
	size_t have = pk__ring_region_size(pk__ring_data_log2_for(STORE));
	size_t next = pk__ring_region_size(pk__ring_data_log2_for(STORE * 2));

	(void)state;
	/* The size as the caller gave it, and the sizes that would open it. */
	snprintf(want, sizeof(want),
		 "a buffer size of %u bytes does not match this %zu-byte store, which a buffer "
		 "size from %zu to %zu bytes opens; remove the file or use such a size",
		 STORE * 2, have, have, next - 1);
	refused(path, STORE * 2, -EINVAL, want);
	unlink(path);
	free(path);
}

static void test_store_symlinks(void **state)
{
	char *path = good_store(STORE), *link_path = tu_tmp_path("errors-link");
	char *dangling = tu_tmp_path("errors-dangling"), *nowhere = tu_tmp_path("errors-nowhere");
	char *msg;
	struct stat st;

	(void)state;
	/* A symlink, even to a good store of our own, is never opened by a writer. */
	assert_int_equal(symlink(path, link_path), 0);
	refused(link_path, STORE, -ELOOP, "is a symbolic link");
	assert_int_equal(open_store(path, STORE, &msg), 0);
	assert_string_equal(msg, "");
	free(msg);

	/* A dangling symlink: refused as a symlink, nothing created through it. */
	assert_int_equal(symlink(nowhere, dangling), 0);
	refused(dangling, STORE, -ELOOP, "is a symbolic link");
	assert_int_equal(lstat(dangling, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(nowhere, &st), -1);

	unlink(link_path);
	unlink(dangling);
	unlink(path);
	free(link_path);
	free(dangling);
	free(nowhere);
	free(path);
}

/* An idle thread with SIGXFSZ unblocked: the signal must not reach it either. */
static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static bool xfsz_pending(void)
{
	sigset_t p;

	return sigpending(&p) == 0 && sigismember(&p, SIGXFSZ) == 1;
}

/*
 * In a child limited to 4 KiB files, with SIGXFSZ's default action (which
 * kills): neither a new nor an empty store fits, and each says so with
 * -EFBIG, never the signal; pk_init() keeps records in memory and goes
 * on.  A SIGXFSZ the program had pending (blocked) before stays pending.
 */
static void test_store_file_size_limit(void **state)
{
	char *path = tu_tmp_path("errors-fsize"), *empty = tu_tmp_path("errors-empty"), *msg;
	int status, fd;
	pid_t pid;

	(void)state;
	fd = open(empty, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	err_begin();
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rlimit rl, old;
		struct pk_config cfg;
		struct timespec zero = { 0, 0 };
		sigset_t xfsz;
		pthread_t t;
		void *mem;
		size_t sz;
		int sfd, ret = 0, i;

		signal(SIGXFSZ, SIG_DFL);
		sigemptyset(&xfsz);
		sigaddset(&xfsz, SIGXFSZ);
		pthread_sigmask(SIG_UNBLOCK, &xfsz, NULL);
		if (pthread_create(&t, NULL, idle_thread, NULL))
			_exit(2);
		if (getrlimit(RLIMIT_FSIZE, &old) < 0)
			_exit(2);
		rl = old;
		rl.rlim_cur = 4096;
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		cfg_for(&cfg, path, STORE);
		if (pk__persist_open(&cfg, &mem, &sz, &sfd) != -EFBIG)
			ret = 3;
		cfg_for(&cfg, empty, STORE);
		if (!ret && pk__persist_open(&cfg, &mem, &sz, &sfd) != -EFBIG)
			ret = 4;
		/* The program's own pending SIGXFSZ is left to it. */
		pthread_sigmask(SIG_BLOCK, &xfsz, NULL);
		raise(SIGXFSZ);
		cfg_for(&cfg, path, STORE);
		if (!ret && pk__persist_open(&cfg, &mem, &sz, &sfd) != -EFBIG)
			ret = 5;
		if (!ret && !xfsz_pending())
			ret = 6;
		if (sigtimedwait(&xfsz, NULL, &zero) != SIGXFSZ && !ret)
			ret = 7;
		pthread_sigmask(SIG_UNBLOCK, &xfsz, NULL);
		/* pk_init(): the store's error, records kept in memory, and printed. */
		cfg_for(&cfg, path, STORE);
		cfg.flags &= ~(unsigned)PK_CFG_NO_CONSOLE;
		if (!ret && pk_init(&cfg) != -EFBIG)
			ret = 8;
		for (i = 0; !ret && i < 10; i++)
			if (pk_info("after the limit %d\n", i) <= 0)
				ret = 9;
		if (!ret && pk_flush(5000))
			ret = 10;
		/* The soft limit back, so that coverage data can be written. */
		setrlimit(RLIMIT_FSIZE, &old);
		_exit(ret);
	}
	tu_waitpid(pid, &status, CHILD_MS, "file size limit child");
	msg = err_end();
	if (!WIFEXITED(status))
		fail_msg("the child died of signal %d; stderr: %s", WTERMSIG(status), msg);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_contains(msg, "more than the file size limit (RLIMIT_FSIZE, ulimit -f) of 4096 bytes");
	assert_contains(msg, "records are kept in memory only");
	assert_contains(msg, "after the limit 9");
	free(msg);
	/* Nothing left behind at the new path; the empty file is still empty. */
	assert_int_equal(access(path, F_OK), -1);
	{
		size_t len;
		char *s = tu_read_file(empty, &len);

		assert_non_null(s);
		assert_int_equal(len, 0);
		free(s);
	}
	unlink(empty);
	free(empty);
	free(path);
}

/*
 * A sparse copy of a valid store (cp --sparse=always) on a full
 * filesystem: refused with -ENOSPC before anything is stored, where it
 * used to map fine and raise SIGBUS at the first store into a hole.  In a
 * child with a mount namespace of its own and a 1 MiB tmpfs there.
 */
static int sparse_full_child(void)
{
	char dir[] = "/tmp/pktest-sparse-XXXXXX", src[64], dst[64], fill[64];
	static char page[4096], zero[4096];
	struct pk_config cfg;
	struct stat st;
	void *mem;
	size_t sz, off;
	int fd, in, out, i;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    !mkdtemp(dir))
		return TU_SKIP_CODE;
	if (mount("none", dir, "tmpfs", 0, "size=1m,mode=0700") < 0) {
		rmdir(dir);
		return TU_SKIP_CODE;
	}
	snprintf(src, sizeof(src), "%s/store", dir);
	snprintf(dst, sizeof(dst), "%s/sparse", dir);
	snprintf(fill, sizeof(fill), "%s/fill", dir);
	/* A valid store with records in it. */
	cfg_for(&cfg, src, STORE);
	if (pk__persist_open(&cfg, &mem, &sz, &fd) < 0)
		return 20;
	pk__persist_close(mem, sz, fd);
	/* Its sparse copy: only the pages that are not all zeros. */
	in = open(src, O_RDONLY);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (in < 0 || out < 0 || fstat(in, &st) < 0 || ftruncate(out, st.st_size) < 0)
		return 21;
	for (off = 0; off < (size_t)st.st_size; off += sizeof(page))
		if (pread(in, page, sizeof(page), (off_t)off) == (ssize_t)sizeof(page) &&
		    memcmp(page, zero, sizeof(page)) &&
		    pwrite(out, page, sizeof(page), (off_t)off) != (ssize_t)sizeof(page))
			return 22;
	close(in);
	close(out);
	unlink(src);
	if (stat(dst, &st) < 0 || (off_t)st.st_blocks * 512 >= st.st_size)
		return 23;	/* not sparse: the test would prove nothing */
	/* Fill the filesystem. */
	fd = open(fill, O_WRONLY | O_CREAT, 0600);
	while (fd >= 0 && write(fd, zero, sizeof(zero)) == (ssize_t)sizeof(zero))
		;
	if (fd < 0 || errno != ENOSPC)
		return 24;
	close(fd);
	cfg_for(&cfg, dst, STORE);
	if (pk__persist_open(&cfg, &mem, &sz, &fd) != -ENOSPC)
		return 25;
	/* Through pk_init(): the error, and records kept in memory, all of them stored. */
	if (pk_init(&cfg) != -ENOSPC)
		return 26;
	for (i = 0; i < 4000; i++)
		if (pk_info("record %d, stored into memory, not into a hole of a full disk\n", i) <= 0)
			return 27;
	return 0;
}

static void test_store_sparse_full_fs(void **state)
{
	char *msg;
	int status;
	pid_t pid;

	(void)state;
	err_begin();
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(sparse_full_child());
	tu_waitpid(pid, &status, CHILD_MS, "sparse store child");
	msg = err_end();
	if (WIFEXITED(status) && WEXITSTATUS(status) == TU_SKIP_CODE) {
		free(msg);
		tu_skip("no mount namespace or tmpfs mount permitted here");
		return;
	}
	if (!WIFEXITED(status))
		fail_msg("the child died of signal %d; stderr: %s", WTERMSIG(status), msg);
	if (WEXITSTATUS(status))
		fail_msg("the child failed at step %d; stderr: %s", WEXITSTATUS(status), msg);
	assert_contains(msg, "cannot allocate the blocks of this store file (it is sparse): "
		       "No space left on device; free some space or remove the file");
	assert_contains(msg, "records are kept in memory only");
	free(msg);
}

static void test_store_no_address_space(void **state)
{
	char *path, *empty;
	size_t big = 64u << 20;
	int status, fd;
	pid_t pid;

	(void)state;
	if (tu_sanitized_address() || tu_sanitized_thread())
		tu_skip("sanitizers reserve address space of their own");
	path = tu_tmp_path("errors-as");
	empty = tu_tmp_path("errors-as-empty");
	fd = open(empty, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rlimit rl, old;
		struct pk_config cfg;
		unsigned long pages = 0;
		void *mem;
		size_t sz;
		int sfd, ret = 0;
		FILE *f = fopen("/proc/self/statm", "r");

		if (!f || fscanf(f, "%lu", &pages) != 1 || getrlimit(RLIMIT_AS, &old) < 0)
			_exit(2);
		fclose(f);
		rl = old;
		rl.rlim_cur = pages * (unsigned long)sysconf(_SC_PAGESIZE) + (8u << 20);
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			_exit(2);
		cfg_for(&cfg, path, big);
		if (pk__persist_open(&cfg, &mem, &sz, &sfd) != -ENOMEM)
			ret = 3;
		cfg_for(&cfg, empty, big);
		if (!ret && pk__persist_open(&cfg, &mem, &sz, &sfd) != -ENOMEM)
			ret = 4;
		setrlimit(RLIMIT_AS, &old);
		_exit(ret);
	}
	tu_waitpid(pid, &status, CHILD_MS, "address space child");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(access(path, F_OK), -1);
	unlink(empty);
	free(empty);
	free(path);
}

/* A relative path names a store in the working directory. */
static void test_store_relative_path(void **state)
{
	char *dir = tu_tmp_path("errors-cwd"), cwd[4096], *msg;
	struct stat st;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(open_store("store", STORE, &msg), 0);
	assert_string_equal(msg, "");
	free(msg);
	assert_int_equal(stat("store", &st), 0);
	assert_int_equal(st.st_size, pk__ring_region_size(pk__ring_data_log2_for(STORE)));
	unlink("store");
	assert_int_equal(chdir(cwd), 0);
	rmdir(dir);
	free(dir);
}

static void test_store_bad_config(void **state)
{
	struct pk_config cfg;
	void *mem;
	size_t sz;
	bool live;
	int fd;

	(void)state;
	cfg_for(&cfg, NULL, STORE);
	assert_int_equal(pk__persist_open(&cfg, &mem, &sz, &fd), -EINVAL);
	cfg_for(&cfg, "", STORE);
	assert_int_equal(pk__persist_open(&cfg, &mem, &sz, &fd), -EINVAL);
	assert_int_equal(pk__persist_map_file(NULL, false, &mem, &sz, &fd, &live), -EINVAL);
	assert_int_equal(pk__persist_map_reader(NULL, &mem, &sz, &live), -EINVAL);
}

/* ---- the reader API ---- */

static void test_reader_errors(void **state)
{
	char *path = good_store(STORE), *dir = tu_tmp_path("errors-rdir");
	struct pk_store_info info;
	struct pk_record rec;
	struct pk_reader *r;

	(void)state;
	errno = 0;
	assert_null(pk_reader_open_file(NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(pk_reader_open_file_flags(path, 0x80));
	assert_int_equal(errno, EINVAL);
	assert_null(pk_reader_open_file(dir));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_null(pk_reader_open_file(dir));
	assert_int_equal(errno, EINVAL);
	rmdir(dir);

	/* NULL readers and arguments. */
	assert_int_equal(pk_reader_next(NULL, &rec), -EINVAL);
	assert_int_equal(pk_reader_wait(NULL, 0), -EINVAL);
	assert_int_equal(pk_reader_info(NULL, &info), -EINVAL);
	assert_int_equal(pk_reader_clear(NULL), -EINVAL);
	assert_int_equal(pk_reader_tell(NULL), 0);
	pk_reader_seek(NULL, 1);
	pk_reader_close(NULL);

	/* A read-only reader of a store nobody writes. */
	r = pk_reader_open_file(path);
	assert_non_null(r);
	assert_int_equal(pk_reader_next(r, NULL), -EINVAL);
	assert_int_equal(pk_reader_info(r, NULL), -EINVAL);
	assert_int_equal(pk_reader_info(r, &info), 0);
	assert_int_equal(info.live, 0);
	assert_int_equal(info.next_seq, 0);
	assert_int_equal(pk_reader_clear(r), -EACCES);
	assert_int_equal(pk_reader_wait(r, 0), 0);
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_seek(r, 1000);
	assert_int_equal(pk_reader_tell(r), 0);
	pk_reader_close(r);

	/* Writable: clearing is allowed. */
	r = pk_reader_open_file_flags(path, PK_READER_WRITABLE);
	assert_non_null(r);
	assert_int_equal(pk_reader_clear(r), 0);
	assert_int_equal(pk_reader_wait(r, 0), 0);
	pk_reader_close(r);

	unlink(path);
	free(path);
	free(dir);
}

/* A record read ahead by pk_reader_wait() is the one pk_reader_next() returns. */
static void test_reader_read_ahead(void **state)
{
	char *path = tu_tmp_path("errors-ahead");
	struct pk_config cfg;
	struct pk_record rec;
	struct pk_reader *r;
	size_t sz;
	void *mem;
	bool live;

	(void)state;
	cfg_for(&cfg, path, STORE);
	assert_int_equal(pk_init(&cfg), 0);
	assert_true(pk_printk(PK_INFO, "kept %d\n", 1) > 0);
	assert_true(pk_printk(PK_INFO, "kept %d\n", 2) > 0);
	pk_shutdown();

	assert_int_equal(pk__persist_map_reader(path, &mem, &sz, &live), 0);
	assert_false(live);
	assert_int_equal(sz, pk__ring_region_size(pk__ring_data_log2_for(STORE)));
	assert_int_equal(((struct pk_ring_hdr *)mem)->magic, PK_RING_MAGIC);
	munmap(mem, sz);

	r = pk_reader_open_file(path);
	assert_non_null(r);
	assert_int_equal(pk_reader_wait(r, 0), 1);
	assert_int_equal(pk_reader_wait(r, 0), 1);	/* still the same one */
	assert_int_equal(pk_reader_tell(r), 0);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_string_equal(rec.text, "kept 1");
	assert_int_equal(rec.seq, 0);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_string_equal(rec.text, "kept 2");
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_seek(r, 0);
	assert_int_equal(pk_reader_next(r, &rec), 1);
	assert_string_equal(rec.text, "kept 1");
	pk_reader_close(r);
	unlink(path);
	free(path);
}

/* ---- PK_CONSOLE ---- */

static void test_spec_malformed(void **state)
{
	static const struct {
		const char *entry, *why;
	} bad[] = {
		{ "bogus", "Invalid argument" },
		{ "fd:", "Invalid argument" },
		{ "fd:abc", "Invalid argument" },
		{ "fd:2x", "Invalid argument" },
		{ "fd:-1", "Invalid argument" },
		{ "fd:99999999", "Invalid argument" },
		{ "fd:1000000", "Bad file descriptor" },
		{ "file:", "Invalid argument" },
		{ "syslog:", "Invalid argument" },
		{ "net:", "Invalid argument" },
		{ "net:localhost", "Invalid argument" },
		{ "net:[::1", "Invalid argument" },
		{ "net:[::1]6666", "Invalid argument" },
		{ "net:[]:6666", "Invalid argument" },
		{ "net::6666", "Invalid argument" },
		{ "net:127.0.0.1:0", "Invalid argument" },
		{ "net:127.0.0.1:65536", "Invalid argument" },
		{ "net:127.0.0.1:66x", "Invalid argument" },
		/* net:no-such-host.invalid:6666 is made: names resolve off the caller's path. */
		{ "stderr@", "Invalid argument" },
		{ "stderr@bogus", "Invalid argument" },
		{ "stderr@0123456789012345678901234567890123456789", "Invalid argument" },
		{ "stderr%", "Invalid argument" },
		{ "stderr%0", "Invalid argument" },
		{ "stderr%12x", "Invalid argument" },
		{ "stderr%100@3", "Invalid argument" },
		/* Rates that overflowed into no throttle at all. */
		{ "stderr%99999999999999999999", "Invalid argument" },
		{ "stderr%-5", "Invalid argument" },
		{ "stderr%18446744073709551615", "Invalid argument" },
	};
	char spec[4096], want[256], *msg, longname[600];
	size_t i, len = 0;
	int n;

	(void)state;
	assert_int_equal(pk_init(NULL), 0);
	assert_int_equal(pk_console_register_spec(NULL), -EINVAL);
	for (i = 0; i < PK__ARRAY_SIZE(bad); i++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s,", bad[i].entry);
	/* Empty entries are skipped silently. */
	snprintf(spec + len, sizeof(spec) - len, ",,");
	err_begin();
	n = pk_console_register_spec(spec);
	msg = err_end();
	assert_int_equal(n, 0);
	for (i = 0; i < PK__ARRAY_SIZE(bad); i++) {
		const char *line, *eol;

		/* A malformed entry is told what was expected, not EINVAL's text. */
		if (!strcmp(bad[i].why, "Invalid argument")) {
			snprintf(want, sizeof(want),
				 "libprintk: pk_console_register_spec(): ignoring \"%s\": ",
				 bad[i].entry);
			line = strstr(msg, want);
			if (!line)
				fail_msg("\"%s\" not in \"%s\"", want, msg);
			eol = strchr(line, '\n');
			assert_non_null(eol);
			if (!memmem(line, (size_t)(eol - line), "expected", 8) ||
			    memmem(line, (size_t)(eol - line), "Invalid argument", 16))
				fail_msg("%.*s: does not say what was expected", (int)(eol - line),
					 line);
			continue;
		}
		snprintf(want, sizeof(want), "libprintk: pk_console_register_spec(): ignoring \"%s\": %s\n",
			 bad[i].entry, bad[i].why);
		assert_contains(msg, want);
	}
	assert_int_equal(tu_count(msg, "ignoring"), PK__ARRAY_SIZE(bad));
	free(msg);

	/* A name longer than any path the parser keeps. */
	memset(longname, 'f', sizeof(longname));
	memcpy(longname, "file:", 5);
	longname[sizeof(longname) - 1] = '\0';
	err_begin();
	n = pk_console_register_spec(longname);
	msg = err_end();
	assert_int_equal(n, 0);
	assert_contains(msg, "File name too long");
	free(msg);
	pk_shutdown();
}

/*
 * An item longer than the parser keeps (4199 bytes), an over-long option,
 * a quoted one with commas inside, a trailing backslash: each is one error
 * naming the entry (its first 200 bytes and its length), and the entry is
 * skipped whole with its options; nothing of it is parsed again as
 * entries of its own.  The entries around it register.
 */
static void test_spec_long_item(void **state)
{
	size_t big = 120000, len;
	char *spec = malloc(big + 8192), *msg, want[128];
	int n;

	(void)state;
	assert_non_null(spec);
	assert_int_equal(pk_init(NULL), 0);

	/* 120 KB of path, with options after it. */
	len = (size_t)sprintf(spec, "stdout@3,file:/nonexistent-dir/");
	memset(spec + len, 'a', big);
	len += big;
	strcpy(spec + len, ",tid=on,name=long,fd:1@3");
	err_begin();
	n = pk_console_register_spec(spec);
	msg = err_end();
	assert_int_equal(n, 2);
	assert_int_equal(tu_count(msg, "\n"), 1);
	assert_int_equal(tu_count(msg, "ignoring"), 1);
	snprintf(want, sizeof(want), "...\" (%zu bytes): an item is longer than 4199 bytes\n",
		 strlen(spec) - strlen("stdout@3,") - strlen(",fd:1@3"));
	assert_contains(msg, want);
	assert_contains(msg, "ignoring \"file:/nonexistent-dir/aaaa");
	assert_true(strlen(msg) < 400);
	free(msg);

	/* Quoted, commas inside: still one item. */
	len = (size_t)sprintf(spec, "file:\"/nonexistent-dir/");
	memset(spec + len, 'b', 3000);
	len += 3000;
	spec[len++] = ',';
	memset(spec + len, 'c', 3000);
	len += 3000;
	strcpy(spec + len, "\",stdout");
	err_begin();
	n = pk_console_register_spec(spec);
	msg = err_end();
	assert_int_equal(n, 1);
	assert_int_equal(tu_count(msg, "\n"), 1);
	assert_contains(msg, "an item is longer than 4199 bytes\n");
	free(msg);

	/* An over-long option: its entry is skipped, with it. */
	len = (size_t)sprintf(spec, "stdout,name=");
	memset(spec + len, 'n', 5000);
	len += 5000;
	strcpy(spec + len, ",fmt=raw,fd:1");
	err_begin();
	n = pk_console_register_spec(spec);
	msg = err_end();
	assert_int_equal(n, 1);
	assert_int_equal(tu_count(msg, "\n"), 1);
	assert_contains(msg, "ignoring \"stdout,name=nnnn");
	snprintf(want, sizeof(want), "(%zu bytes): an item is longer than 4199 bytes\n",
		 strlen(spec) - strlen(",fd:1"));
	assert_contains(msg, want);
	free(msg);

	/* A trailing backslash: one error, the whole item. */
	err_begin();
	n = pk_console_register_spec("stdout,fd:1\\");
	msg = err_end();
	assert_int_equal(n, 1);
	assert_int_equal(tu_count(msg, "\n"), 1);
	assert_contains(msg, "libprintk: pk_console_register_spec(): ignoring \"fd:1\\\": an unterminated quote, "
			     "or a backslash at the end\n");
	free(msg);

	/* The bound: 4199 bytes are an item (the path is refused), 4200 are not. */
	len = (size_t)sprintf(spec, "file:/");
	memset(spec + len, 'd', 4199 - len);
	spec[4199] = '\0';
	err_begin();
	n = pk_console_register_spec(spec);
	msg = err_end();
	assert_int_equal(n, 0);
	assert_int_equal(tu_count(msg, "\n"), 1);
	assert_contains(msg, "(4199 bytes): File name too long\n");
	free(msg);
	strcpy(spec + 4199, "d");
	err_begin();
	n = pk_console_register_spec(spec);
	msg = err_end();
	assert_int_equal(n, 0);
	assert_int_equal(tu_count(msg, "\n"), 1);
	assert_contains(msg, "(4200 bytes): an item is longer than 4199 bytes\n");
	free(msg);

	/*
	 * At init (PK_CONSOLE): one error and the stderr fallback, its spec
	 * quoted in part.
	 */
	len = (size_t)sprintf(spec, "file:/nonexistent-dir/");
	memset(spec + len, 'e', big);
	spec[len + big] = '\0';
	err_begin();
	n = pk__console_register_env(spec);
	msg = err_end();
	assert_int_equal(n, 1);
	assert_int_equal(tu_count(msg, "\n"), 2);
	assert_int_equal(tu_count(msg, "ignoring"), 1);
	snprintf(want, sizeof(want), "...\" (%zu bytes) has no usable console; printing to stderr\n",
		 strlen(spec));
	assert_contains(msg, want);
	free(msg);
	free(spec);
	pk_shutdown();
}

/* Good entries register (with level and throttle) until the table is full. */
static void test_spec_table_full(void **state)
{
	char spec[2048], *msg;
	size_t len = 0;
	int i, n;

	(void)state;
	assert_int_equal(pk_init(NULL), 0);
	/* Every kind of good entry first (the bracket form takes IPv4 too). */
	len = (size_t)snprintf(spec, sizeof(spec), "stderr@3,stdout%%50000,net:[127.0.0.1]:6666,");
	for (i = 3; i < PK_MAX_CONSOLES + 2; i++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "fd:%d@warning%%100000,",
					STDERR_FILENO);
	err_begin();
	n = pk_console_register_spec(spec);
	msg = err_end();
	assert_true(n >= 3 && n <= PK_MAX_CONSOLES);
	assert_int_equal(tu_count(msg, "stderr@3"), 0);
	assert_int_equal(tu_count(msg, "stdout"), 0);
	assert_int_equal(tu_count(msg, "net:"), 0);
	assert_contains(msg, "libprintk: pk_console_register_spec(): ignoring \"fd:2@warning%100000\": "
			     "No space left on device\n");
	assert_int_equal(tu_count(msg, "ignoring"), (size_t)(PK_MAX_CONSOLES + 2 - n));
	free(msg);
	pk_shutdown();
}

/* ---- record formats ---- */

static char *render(const char *text, size_t len, unsigned fmt, unsigned flags, char *buf,
		    size_t size)
{
	struct pk_record rec = {
		.seq = 42, .ts_ns = 3123456789ull, .level = 4, .tid = 77, .flags = flags,
		.text = text, .len = len, .facility = 1, .pid = 9,
	};
	struct pk_format_opts fo = { .fmt = fmt, .realtime_zero_ns = 0, .prev_ts_ns = 0 };

	pk__format_record(buf, size, &rec, &fo);
	return buf;
}

static void test_format_kinds(void **state)
{
	char buf[1024];
	static const char hostile[] = "a\"b\\c\nd\te\rf\x01g\x7fh\xc3\xa9i\xff";

	(void)state;
	assert_string_equal(render("x\\y\x01z", 5, PK_FMT_KMSG, PK_REC_CONT, buf, sizeof(buf)),
			    "12,42,3123456,c;x\\x5cy\\x01z\n");
	assert_string_equal(render("one\ntwo", 7, PK_FMT_SYSLOG, 0, buf, sizeof(buf)),
			    "<12>[    3.123456] one\ntwo\n");
	assert_string_equal(render("raw", 3, PK_FMT_RAW, 0, buf, sizeof(buf)), "raw\n");
	assert_string_equal(render(hostile, sizeof(hostile) - 1, PK_FMT_JSON,
				   PK_REC_CONT | PK_REC_TRUNC, buf, sizeof(buf)),
			    "{\"seq\":42,\"ts_us\":3123456,\"level\":4,\"facility\":1,\"pid\":9,"
			    "\"tid\":77,\"cont\":true,\"truncated\":true,"
			    "\"text\":\"a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u007fh\xc3\xa9i\\ufffd\"}\n");
	assert_string_equal(render("t", 1, PK_FMT_JSON | PK_FMT_F_REALTIME, 0, buf, sizeof(buf)),
			    "{\"seq\":42,\"ts_us\":3123456,\"time_us\":3123456,\"level\":4,"
			    "\"facility\":1,\"pid\":9,\"tid\":77,\"text\":\"t\"}\n");
	assert_string_equal(render("t", 1, PK_FMT_HUMAN | PK_FMT_F_TID, 0, buf, sizeof(buf)),
			    "[    3.123456] [T77] t\n");
}

static void test_format_human_flags(void **state)
{
	struct pk_record rec = { .seq = 1, .ts_ns = 5000000000ull, .level = 6, .text = "d", .len = 1 };
	struct pk_format_opts fo = { .fmt = PK_FMT_HUMAN | PK_FMT_F_DELTA, .prev_ts_ns = 3500000000ull };
	char buf[256];

	(void)state;
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_string_equal(buf, "[    5.000000 <    1.500000>] d\n");
	/* A previous stamp later than this one: no negative delta. */
	fo.prev_ts_ns = 6000000000ull;
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_string_equal(buf, "[    5.000000 <    0.000000>] d\n");

	/* Wall-clock dates, in UTC. */
	setenv("TZ", "UTC", 1);
	tzset();
	fo.fmt = PK_FMT_HUMAN | PK_FMT_F_REALTIME;
	fo.realtime_zero_ns = 1000000000ll * 86400 * 365;	/* 1971-01-01 */
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_string_equal(buf, "[Fri Jan  1 00:00:05 1971] d\n");
}

/*
 * level=on (PK_FMT_F_LEVEL) is dmesg -x's prefix, "%-6s:%-6s: ": facility
 * then level, util-linux's names, before the time; a continuation line is
 * indented under the text.
 */
static void test_format_level_as_dmesg_x(void **state)
{
	struct pk_record rec = { .ts_ns = 3123456789ull, .level = 3, .text = "a\nb", .len = 3 };
	struct pk_format_opts fo = { .fmt = PK_FMT_HUMAN | PK_FMT_F_LEVEL };
	char buf[256];

	(void)state;
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_string_equal(buf, "kern  :err   : [    3.123456] a\n"
				 "                              b\n");
	rec.facility = 1;
	rec.level = 5;
	rec.len = 1;
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_string_equal(buf, "user  :notice: [    3.123456] a\n");
	rec.facility = 10;	/* longer than the column, as dmesg prints it */
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_string_equal(buf, "authpriv:notice: [    3.123456] a\n");
	rec.facility = 23;
	fo.fmt = PK_FMT_SYSLOG | PK_FMT_F_LEVEL;
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_string_equal(buf, "<189>local7:notice: [    3.123456] a\n");
	/* A facility byte from a store file that dmesg has no name for. */
	rec.facility = 200;
	fo.fmt = PK_FMT_HUMAN | PK_FMT_F_LEVEL;
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_string_equal(buf, "200   :notice: [    3.123456] a\n");
}

static void test_format_escape(void **state)
{
	/* controls, DEL, a C1 control in UTF-8, bad bytes, valid 2/3/4-byte UTF-8, a cut sequence */
	static const char text[] = "a\x1b[31m\tb\x7f\xc2\x85\xc2\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
				   "\xc3(\xf8\xe2\x82";
	char buf[512];

	(void)state;
	render(text, sizeof(text) - 1, PK_FMT_HUMAN | PK_FMT_F_ESCAPE, 0, buf, sizeof(buf));
	assert_string_equal(buf, "[    3.123456] a\\x1b[31m\tb\\x7f\\xc2\\x85\xc2\xa9\xe2\x82\xac"
				 "\xf0\x9f\x98\x80\\xc3(\\xf8\\xe2\\x82\n");
	/* Without the flag, the bytes pass as they are. */
	render("a\x1b" "b", 3, PK_FMT_RAW, 0, buf, sizeof(buf));
	assert_string_equal(buf, "a\x1b" "b\n");
}

static void test_format_truncated(void **state)
{
	char buf[16], big[64];
	size_t n;

	(void)state;
	memset(big, 'z', sizeof(big));
	/* Cut output still ends the line and the string. */
	render(big, sizeof(big), PK_FMT_RAW, 0, buf, sizeof(buf));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_int_equal(buf[sizeof(buf) - 2], '\n');
	assert_memory_equal(buf, "zzzzzzzzzzzzzz", 14);
	/* No room at all. */
	buf[0] = 'q';
	{
		struct pk_record rec = { .text = "x", .len = 1 };
		struct pk_format_opts fo = { .fmt = PK_FMT_HUMAN };

		assert_int_equal(pk__format_record(buf, 0, &rec, &fo), 0);
	}
	assert_int_equal(buf[0], 'q');

	n = pk__format_dropped(buf, sizeof(buf), 7, PK_FMT_JSON);
	assert_int_equal(n, 14);
	assert_string_equal(buf, "{\"dropped\":7}\n");
	n = pk__format_dropped(big, sizeof(big), 7, PK_FMT_HUMAN);
	assert_string_equal(big, "** 7 printk messages dropped **\n");
	assert_int_equal(n, strlen(big));
	n = pk__format_dropped(buf, sizeof(buf), 7, PK_FMT_HUMAN);
	assert_int_equal(n, sizeof(buf) - 1);
	assert_string_equal(buf, "** 7 printk mes");
}

/* ---- pk_panic details ---- */

static char *panic_out;

static void panic_child_init(bool handler)
{
	struct rlimit no_core = { 0, 0 };
	struct pk_console_driver d;
	struct pk_config cfg;

	setrlimit(RLIMIT_CORE, &no_core);
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | (handler ? PK_CFG_CRASH_HANDLER : 0);
	TU_CHECK(pk_init(&cfg) == 0);
	TU_CHECK(pk_console_file_make(panic_out, 0, &d) == 0);
	TU_CHECK(pk_console_register_driver(&d, -1));
}

/* A console that panics again the first time it is written to. */
static long panic_again_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	pk_panic("second panic %d", 2);
	return (long)len;
}

static const struct pk_console_ops panic_again_ops = {
	.name = "panic-again",
	.write = panic_again_write,
	.write_atomic = panic_again_write,
};

static char *run_panic_child(void (*fn)(void), int *status, const char *what)
{
	char *s;
	pid_t pid;

	panic_out = tu_tmp_path("errors-panic");
	pid = tu_fork();
	assert_true(pid >= 0);
	if (!pid) {
		fn();
		_exit(93);
	}
	tu_waitpid(pid, status, CHILD_MS, what);
	s = tu_read_file(panic_out, NULL);
	unlink(panic_out);
	free(panic_out);
	return s ? s : strdup("");
}

static void panic_newline(void)
{
	panic_child_init(false);
	pk_info("before\n");
	pk_panic("reason %s\n", "here");
}

static void panic_twice(void)
{
	panic_child_init(false);
	TU_CHECK(pk_console_register(&panic_again_ops, NULL, -1));
	pk_panic("first");
}

static void abort_handled(void)
{
	panic_child_init(true);
	pk_info("before abort\n");
	abort();
}

static void test_panic_details(void **state)
{
	int status;
	char *s;

	(void)state;
	/* The reason's own newline is dropped: one line, not an empty one after it. */
	s = run_panic_child(panic_newline, &status, "panic with newline");
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_contains(s, "before\n");
	assert_contains(s, "] Kernel panic - not syncing: reason here\n");
	assert_int_equal(tu_count(s, "Kernel panic"), 1);
	free(s);

	/* A panic inside the panic's own printing goes down at once. */
	s = run_panic_child(panic_twice, &status, "panic inside panic");
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_int_equal(tu_count(s, "second panic"), 0);
	free(s);

	/* abort() under the crash handler is reported by name, then still aborts. */
	s = run_panic_child(abort_handled, &status, "abort with handler");
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_contains(s, "before abort\n");
	assert_contains(s, "Unable to handle SIGABRT (abort) at address");
	free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_net_bad_arguments),
		cmocka_unit_test(test_net_unresolvable),
		cmocka_unit_test(test_net_connect_refused),
		cmocka_unit_test(test_net_no_descriptor),
		cmocka_unit_test(test_net_send_and_refused),
		cmocka_unit_test(test_store_not_a_file),
		cmocka_unit_test(test_store_not_a_store),
		cmocka_unit_test(test_store_bad_header),
		cmocka_unit_test(test_store_other_size),
		cmocka_unit_test(test_store_symlinks),
		cmocka_unit_test(test_store_file_size_limit),
		cmocka_unit_test(test_store_sparse_full_fs),
		cmocka_unit_test(test_store_no_address_space),
		cmocka_unit_test(test_store_relative_path),
		cmocka_unit_test(test_store_bad_config),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test(test_reader_read_ahead),
		cmocka_unit_test(test_spec_malformed),
		cmocka_unit_test(test_spec_table_full),
		cmocka_unit_test(test_spec_long_item),
		cmocka_unit_test(test_format_kinds),
		cmocka_unit_test(test_format_human_flags),
		cmocka_unit_test(test_format_level_as_dmesg_x),
		cmocka_unit_test(test_format_escape),
		cmocka_unit_test(test_format_truncated),
		cmocka_unit_test(test_panic_details),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
