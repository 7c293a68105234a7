// SPDX-License-Identifier: MIT
/*
 * The store file as a security boundary (persist.c, "OWNERSHIP"):
 *
 *   - a new store is created mode 0600, whatever the umask lets through;
 *   - an existing file is used by a writer only if it is a regular file,
 *     owned by the effective uid, not group- or world-writable, and not a
 *     symlink; each refusal names the path and the rule and leaves the
 *     file (or a symlink's target) byte for byte as it was.  The
 *     other-owner case chowns a file to uid 65534 and so needs root (CI
 *     runs as root); it skips, saying so, otherwise;
 *   - the directories on the way: symlinks among them are followed by the
 *     kernel's protected_symlinks rule (in a sticky world-writable
 *     directory only the effective uid's or the directory owner's), another
 *     user's directory there is not entered, and a refusal names the path,
 *     the component and the rule and creates nothing; our own links,
 *     relative paths and links in ordinary directories work as before
 *     (the other-user cases need root, as above);
 *   - readers: read-only through a symlink is fine, writable is not;
 *   - a crafted header near the counters' limits with descriptors that
 *     claim future seqs is recovered (every record written after it reads
 *     back), or refused with its numbers named;
 *   - a store of lanes is refused, lane by lane, when its lane count, a
 *     lane's place, version, magic, size or bounds, or the file's size do
 *     not hold, by writers and readers, with words that say which;
 *   - messages: a truncated store says so; another size names the value
 *     the user gave (PK_BUFFER_SIZE=4m), not a region size; a dangling
 *     symlink is a symlink, not "a file that keeps appearing and
 *     vanishing";
 *   - fallback: a PK_BUFFER that cannot be used (a directory, a file that
 *     is not a store, a store of another size, an uncreatable path, a
 *     symlink, a group-writable store) gives one warning on stderr, then
 *     every record still reaches the console and no call fails; an
 *     explicit buffer_path gets the error from pk_init() and the library
 *     works all the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/format.h"
#include "store/lanes.h"
#include "store/store.h"
#include "printk/reader.h"
#include "testutil.h"

#define STORE		(64u << 10)
#define CHILD_MS	60000
#define NOBODY		65534

/* ---- helpers ---- */

static void cfg_for(struct pk_config *cfg, const char *path, size_t size)
{
	pk_config_init(cfg);
	cfg->buffer_path = path;
	cfg->buffer_size = size;
	cfg->flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
}

/* pk__persist_open(@cfg): its return value, and what it printed in *@msg. */
static int open_cfg(const struct pk_config *cfg, char **msg)
{
	char *out = tu_tmp_path("storesec-stderr");
	void *mem = NULL;
	size_t sz = 0, len;
	int fd = -1, ret, saved, efd;

	fflush(stderr);
	efd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(efd >= 0);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(efd, STDERR_FILENO), STDERR_FILENO);
	close(efd);
	ret = pk__persist_open(cfg, &mem, &sz, &fd);
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	*msg = tu_read_file(out, &len);
	assert_non_null(*msg);
	unlink(out);
	free(out);
	if (ret == 0)
		pk__persist_close(mem, sz, fd);
	return ret;
}

static int open_store(const char *path, size_t size, char **msg)
{
	struct pk_config cfg;

	cfg_for(&cfg, path, size);
	return open_cfg(&cfg, msg);
}

/*
 * A writer must refuse @path with @err, printing one line that names the
 * path and contains @why, and leave the file as it was.
 */
static void refused(const char *path, size_t size, int err, const char *why)
{
	size_t len0 = 0, len1 = 0;
	char *before = NULL, *after = NULL, *msg, want[600];
	struct stat st;
	int ret;

	/* The contents of a regular file (a FIFO's read would block). */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		before = tu_read_file(path, &len0);
	ret = open_store(path, size, &msg);

	if (ret != err)
		fail_msg("%s: %d (%s), wanted %d; stderr \"%s\"", path, ret, pk_strerror(ret), err, msg);
	snprintf(want, sizeof(want), "libprintk: store %s: ", path);
	if (strncmp(msg, want, strlen(want)) || !strstr(msg, why) || tu_count(msg, "\n") != 1)
		fail_msg("%s: stderr \"%s\", wanted one line \"%s...%s...\"", path, msg, want, why);
	assert_non_null(strstr(msg, "; records are kept in memory only\n"));
	free(msg);
	if (before) {
		after = tu_read_file(path, &len1);
		assert_non_null(after);
		assert_int_equal(len0, len1);
		assert_memory_equal(before, after, len0);
	}
	free(before);
	free(after);
}

/* A fresh valid store at a new path holding nothing (caller frees the path). */
static char *good_store(const char *tag)
{
	char *path = tu_tmp_path(tag), *msg;

	assert_int_equal(open_store(path, STORE, &msg), 0);
	assert_string_equal(msg, "");
	free(msg);
	return path;
}

static void must_open(const char *path)
{
	char *msg;
	int ret = open_store(path, STORE, &msg);

	if (ret)
		fail_msg("%s: %d, stderr \"%s\"", path, ret, msg);
	assert_string_equal(msg, "");
	free(msg);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static size_t store_bytes(size_t size)
{
	return pk__ring_region_size(pk__ring_data_log2_for(size));
}

/* ---- creation ---- */

/* A new store is 0600 under any umask that lets more through. */
static void test_new_store_is_private(void **state)
{
	static const mode_t masks[] = { 0, 022, 002, 077 };
	struct stat st;
	mode_t old;
	size_t i;

	(void)state;
	for (i = 0; i < PK__ARRAY_SIZE(masks); i++) {
		char *path;

		old = umask(masks[i]);
		path = good_store("storesec-new");
		umask(old);
		assert_int_equal(lstat(path, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		if ((st.st_mode & 07777) != 0600)
			fail_msg("umask %03o: store created mode %04o, wanted 0600", (unsigned)masks[i],
				 (unsigned)(st.st_mode & 07777));
		assert_int_equal(st.st_uid, geteuid());
		assert_int_equal((size_t)st.st_size, store_bytes(STORE));
		unlink(path);
		free(path);
	}
	/* Through pk_init too, with the umask narrowing it further. */
	{
		char *path = tu_tmp_path("storesec-init");
		struct pk_config cfg;

		old = umask(0277);
		cfg_for(&cfg, path, STORE);
		assert_int_equal(pk_init(&cfg), 0);
		umask(old);
		assert_true(pk_printk(PK_INFO, "private\n") > 0);
		pk_shutdown();
		assert_int_equal(lstat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0400);
		unlink(path);
		free(path);
	}
}

/* ---- the ownership rules ---- */

static void test_group_or_world_writable_refused(void **state)
{
	char *path = good_store("storesec-mode");

	(void)state;
	assert_int_equal(chmod(path, 0660), 0);
	refused(path, STORE, -EPERM, "writable by group or others (mode 0660)");
	assert_int_equal(chmod(path, 0602), 0);
	refused(path, STORE, -EPERM, "writable by group or others (mode 0602)");
	assert_int_equal(chmod(path, 0666), 0);
	refused(path, STORE, -EPERM, "writable by group or others (mode 0666)");
	/* An empty file is formatted only under the same rules. */
	unlink(path);
	write_file(path, "", 0600);
	assert_int_equal(chmod(path, 0622), 0);
	refused(path, STORE, -EPERM, "writable by group or others (mode 0622)");
	{
		struct stat st;

		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_size, 0);
	}
	/* Readable by others is the owner's choice. */
	assert_int_equal(chmod(path, 0644), 0);
	must_open(path);
	assert_int_equal(chmod(path, 0600), 0);
	must_open(path);
	unlink(path);
	free(path);
}

/* Another user's file, as root: refused, even though root could write it. */
static void test_other_owner_refused(void **state)
{
	char *path, *empty, want[128];
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		tu_skip("not root: cannot chown a file to uid %d to test another owner", NOBODY);
	path = good_store("storesec-owner");
	assert_int_equal(chown(path, NOBODY, NOBODY), 0);
	snprintf(want, sizeof(want), "owned by uid %d, not by this process's effective uid 0",
		 NOBODY);
	refused(path, STORE, -EPERM, want);
	/* Also when it is 0600 and empty (a trap laid in a sticky /tmp). */
	empty = tu_tmp_path("storesec-owner-empty");
	write_file(empty, "", 0600);
	assert_int_equal(chown(empty, NOBODY, NOBODY), 0);
	refused(empty, STORE, -EPERM, want);
	assert_int_equal(stat(empty, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(st.st_uid, NOBODY);
	/* A reader may still read it (read-only). */
	{
		struct pk_reader *r = pk_reader_open_file(path);

		assert_non_null(r);
		pk_reader_close(r);
	}
	/* Given back, it is used again. */
	assert_int_equal(chown(path, 0, 0), 0);
	must_open(path);
	unlink(path);
	unlink(empty);
	free(path);
	free(empty);
}

static void test_symlinks_refused(void **state)
{
	char *store = good_store("storesec-target"), *plain = tu_tmp_path("storesec-plain");
	char *link1 = tu_tmp_path("storesec-link"), *link2 = tu_tmp_path("storesec-link2");
	char *dangling = tu_tmp_path("storesec-dangling"), *nowhere = tu_tmp_path("storesec-nowhere");
	struct pk_reader *r;
	struct stat st;
	char *msg;

	(void)state;
	/* A link to a good store of our own: still refused, store untouched. */
	assert_int_equal(symlink(store, link1), 0);
	refused(link1, STORE, -ELOOP, "is a symbolic link; a store is never opened through one");
	{
		size_t len;
		char *s = tu_read_file(store, &len);

		assert_non_null(s);
		assert_int_equal(len, store_bytes(STORE));
		free(s);
	}
	/* A link to a file that is not a store: the target is untouched. */
	write_file(plain, "precious contents\n", 0600);
	assert_int_equal(symlink(plain, link2), 0);
	refused(link2, STORE, -ELOOP, "is a symbolic link");
	{
		size_t len;
		char *s = tu_read_file(plain, &len);

		assert_non_null(s);
		assert_string_equal(s, "precious contents\n");
		free(s);
	}
	/* A dangling link: not created through, and said to be a link. */
	assert_int_equal(symlink(nowhere, dangling), 0);
	refused(dangling, STORE, -ELOOP, "is a symbolic link");
	assert_int_equal(open_store(dangling, STORE, &msg), -ELOOP);
	assert_null(strstr(msg, "appearing and vanishing"));
	free(msg);
	assert_int_equal(lstat(nowhere, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(lstat(dangling, &st), 0);
	assert_true(S_ISLNK(st.st_mode));

	/* Readers: read-only through a link is fine, writable is not. */
	r = pk_reader_open_file(link1);
	assert_non_null(r);
	pk_reader_close(r);
	errno = 0;
	assert_null(pk_reader_open_file_flags(link1, PK_READER_WRITABLE));
	assert_int_equal(errno, ELOOP);
	r = pk_reader_open_file_flags(store, PK_READER_WRITABLE);
	assert_non_null(r);
	pk_reader_close(r);

	unlink(link1);
	unlink(link2);
	unlink(dangling);
	unlink(plain);
	unlink(store);
	free(link1);
	free(link2);
	free(dangling);
	free(nowhere);
	free(plain);
	free(store);
}

/* ---- the directories on the way ---- */

static void rm_rf(const char *path)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* @path must be a fresh private store of ours (reached by another name). */
static void is_new_store(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal((size_t)st.st_size, store_bytes(STORE));
}

/* Nothing at @path (not even a temporary beside it: @dir holds @n entries). */
static void nothing_made(const char *path, const char *dir, int n)
{
	char cmd[PATH_MAX + 64];
	struct stat st;

	if (lstat(path, &st) == 0)
		fail_msg("%s was created", path);
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq %d", dir, n);
	if (system(cmd) != 0)
		fail_msg("%s holds something other than its %d entries", dir, n);
}

/*
 * Our own links among the directories are followed, in an ordinary
 * directory and in a sticky world-writable one; the store is made (and
 * found again) in the directory they lead to, relative paths included.
 * A loop of links is -ELOOP, named as such, and makes nothing.
 */
static void test_dir_components_own(void **state)
{
	char *plain = tu_make_dir("storesec-wplain", 0755), *sticky = tu_make_dir("storesec-wsticky", 01777);
	char *target = tu_make_dir("storesec-wtarget", 0755), *link1 = tu_join(plain, "app");
	char *link2 = tu_join(sticky, "app"), *via1 = tu_join(link1, "store"), *via2, *made, *msg;
	char *loop_a = tu_join(plain, "a"), *loop_b = tu_join(plain, "b"), *via_loop = tu_join(loop_a, "store");
	char rel[PATH_MAX];
	int cwd;

	(void)state;
	made = tu_join(target, "store");
	via2 = tu_join(link2, "sub/store");
	assert_int_equal(symlink(target, link1), 0);
	assert_int_equal(symlink(target, link2), 0);

	/* Through a link in an ordinary directory: made in the target, found again. */
	must_open(via1);
	is_new_store(made);
	must_open(via1);
	must_open(made);
	assert_int_equal(unlink(made), 0);

	/* Through our own link in a sticky world-writable directory, then a subdirectory. */
	{
		char *sub = tu_join(target, "sub"), *sub_store = tu_join(sub, "store");

		assert_int_equal(mkdir(sub, 0700), 0);
		must_open(via2);
		is_new_store(sub_store);
		assert_int_equal(unlink(sub_store), 0);
		assert_int_equal(rmdir(sub), 0);
		free(sub_store);
		free(sub);
	}

	/* A relative path with a link in it, from the working directory. */
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(cwd >= 0);
	assert_int_equal(chdir(plain), 0);
	snprintf(rel, sizeof(rel), "app/./store");
	must_open(rel);
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	is_new_store(made);
	assert_int_equal(unlink(made), 0);

	/* A loop among the directories. */
	assert_int_equal(symlink(loop_b, loop_a), 0);
	assert_int_equal(symlink(loop_a, loop_b), 0);
	refused(via_loop, STORE, -ELOOP, pk_strerror(-ELOOP));
	assert_int_equal(open_store(via_loop, STORE, &msg), -ELOOP);
	free(msg);
	nothing_made(made, target, 0);

	rm_rf(plain);
	rm_rf(sticky);
	rm_rf(target);
	free(via_loop);
	free(loop_a);
	free(loop_b);
	free(made);
	free(via2);
	free(via1);
	free(link2);
	free(link1);
	free(target);
	free(sticky);
	free(plain);
}

/*
 * Another user's link or directory on the way, as root: in a sticky
 * world-writable directory the link is not followed and the directory is
 * not entered (the refusal names the path, the component and the rule,
 * and nothing is made where they lead); in an ordinary directory, or
 * where that user owns the sticky directory itself, they are.
 */
static void test_dir_components_other_user(void **state)
{
	char *sticky, *target, *theirs, *plain, *shared, *link, *path, *made, want[64];
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		tu_skip("not root: cannot give a link or a directory to uid %d", NOBODY);
	sticky = tu_make_dir("storesec-osticky", 01777);
	target = tu_make_dir("storesec-otarget", 0755);
	plain = tu_make_dir("storesec-oplain", 0755);
	made = tu_join(target, "store");

	/* Their link to a directory of their choice. */
	link = tu_join(sticky, "app");
	path = tu_join(link, "store");
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(lchown(link, NOBODY, NOBODY), 0);
	snprintf(want, sizeof(want), "owned by uid %d", NOBODY);
	refused(path, STORE, -EACCES, "refusing to follow symlink \"app\"");
	refused(path, STORE, -EACCES, want);
	refused(path, STORE, -EACCES, "protected_symlinks");
	nothing_made(made, target, 0);
	/* Given to the directory's owner (root), it is followed. */
	assert_int_equal(lchown(link, 0, 0), 0);
	must_open(path);
	is_new_store(made);
	assert_int_equal(unlink(made), 0);
	free(path);
	free(link);

	/* Their directory, world-writable even: not entered. */
	theirs = tu_join(sticky, "theirs");
	path = tu_join(theirs, "store");
	assert_int_equal(mkdir(theirs, 0777), 0);
	assert_int_equal(chmod(theirs, 0777), 0);
	assert_int_equal(chown(theirs, NOBODY, NOBODY), 0);
	refused(path, STORE, -EACCES, "refusing to enter directory \"theirs\"");
	refused(path, STORE, -EACCES, "protected_regular");
	nothing_made(path, theirs, 0);
	free(path);
	free(theirs);

	/*
	 * Where they own the sticky directory itself (in a directory of
	 * root's: theirs in /tmp would not be entered), what they own there
	 * is theirs to give: their directory is entered, their link followed.
	 */
	shared = tu_join(plain, "shared");
	assert_int_equal(mkdir(shared, 0700), 0);
	assert_int_equal(chmod(shared, 01777), 0);
	assert_int_equal(chown(shared, NOBODY, NOBODY), 0);
	theirs = tu_join(shared, "theirs");
	path = tu_join(theirs, "store");
	assert_int_equal(mkdir(theirs, 0777), 0);
	assert_int_equal(chmod(theirs, 0777), 0);
	assert_int_equal(chown(theirs, NOBODY, NOBODY), 0);
	must_open(path);
	is_new_store(path);
	free(path);
	link = tu_join(shared, "app");
	path = tu_join(link, "store");
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(lchown(link, NOBODY, NOBODY), 0);
	must_open(path);
	is_new_store(made);
	assert_int_equal(unlink(made), 0);
	free(path);
	free(link);

	/* Their link in an ordinary (root's, not world-writable) directory: followed. */
	link = tu_join(plain, "app");
	path = tu_join(link, "store");
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(lchown(link, NOBODY, NOBODY), 0);
	must_open(path);
	is_new_store(made);
	assert_int_equal(lstat(made, &st), 0);
	assert_int_equal(st.st_uid, 0);

	rm_rf(sticky);
	rm_rf(target);
	rm_rf(plain);
	free(path);
	free(link);
	free(theirs);
	free(shared);
	free(made);
	free(plain);
	free(target);
	free(sticky);
}

static void test_not_a_file_refused(void **state)
{
	char *dir = tu_tmp_path("storesec-dir"), *fifo = tu_tmp_path("storesec-fifo");

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	refused(dir, STORE, -EISDIR, "is a directory");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	refused(fifo, STORE, -EINVAL, "not a regular file");
	/* A device is never opened: /dev/null stays a device, nothing hangs. */
	refused("/dev/null", STORE, -EINVAL, "not a regular file");
	rmdir(dir);
	unlink(fifo);
	free(dir);
	free(fifo);
}

/* ---- messages ---- */

static void test_truncated_says_truncated(void **state)
{
	char *path = good_store("storesec-trunc"), want[160], *msg;
	size_t size = store_bytes(STORE);

	(void)state;
	assert_int_equal(truncate(path, (off_t)size - 4096), 0);
	snprintf(want, sizeof(want), "store file is truncated: %zu bytes, its header describes %zu",
		 size - 4096, size);
	refused(path, STORE, -EINVAL, want);
	assert_int_equal(open_store(path, STORE, &msg), -EINVAL);
	assert_null(strstr(msg, "corrupt"));
	free(msg);

	assert_int_equal(truncate(path, 100), 0);
	refused(path, STORE, -EINVAL, "store file is truncated: 100 bytes, shorter than its header");

	/* Extended: named as such, with both sizes. */
	unlink(path);
	free(path);
	path = good_store("storesec-ext");
	assert_int_equal(truncate(path, (off_t)size + 4096), 0);
	snprintf(want, sizeof(want),
		 "file size does not match the store header: %zu bytes, the header describes %zu",
		 size + 4096, size);
	refused(path, STORE, -EINVAL, want);
	unlink(path);
	free(path);
}

static void test_other_size_names_user_value(void **state)
{
	char *path = good_store("storesec-size"), want[300], big[32], *msg;
	size_t have = store_bytes(STORE);
	struct pk_config cfg;

	(void)state;
	setenv("PK_BUFFER_SIZE", "4m", 1);
	pk_config_init(&cfg);
	unsetenv("PK_BUFFER_SIZE");
	/* A 4 MiB data ring: the store adds its descriptors and header. */
	assert_int_equal(cfg.buffer_size, (4u << 20) + (1u << 20) + 512);
	cfg.buffer_path = path;
	setenv("PK_BUFFER_SIZE", "4m", 1);
	assert_int_equal(open_cfg(&cfg, &msg), -EINVAL);
	unsetenv("PK_BUFFER_SIZE");
	snprintf(want, sizeof(want),
		 "libprintk: store %s: PK_BUFFER_SIZE=4m does not match this %zu-byte store, which "
		 "a buffer size from %zu to %zu bytes opens; remove the file or use such a size; "
		 "records are kept in memory only\n",
		 path, have, have, store_bytes(STORE * 2) - 1);
	assert_string_equal(msg, strstr(msg, "libprintk:"));
	if (!strstr(msg, want))
		fail_msg("stderr \"%s\", wanted \"%s\"", msg, want);
	/* No internal region size of what was asked. */
	snprintf(big, sizeof(big), "%zu", store_bytes(4u << 20));
	assert_null(strstr(msg, big));
	free(msg);

	/* A size the program chose is named in bytes. */
	snprintf(want, sizeof(want), "a buffer size of %u bytes does not match this %zu-byte store",
		 STORE * 4, have);
	refused(path, STORE * 4, -EINVAL, want);

	/* And a size in the range opens it. */
	must_open(path);
	{
		struct pk_config c2;

		cfg_for(&c2, path, store_bytes(STORE * 2) - 1);
		assert_int_equal(open_cfg(&c2, &msg), 0);
		assert_string_equal(msg, "");
		free(msg);
	}
	unlink(path);
	free(path);
}

/* ---- crafted headers ---- */

struct mapped {
	int fd;
	size_t size;
	void *mem;
	struct pk_ring_hdr *h;
	uint64_t *desc;
	uint64_t ndesc;
};

static void map_rw(const char *path, struct mapped *m)
{
	struct stat st;

	m->fd = open(path, O_RDWR);
	assert_true(m->fd >= 0);
	assert_int_equal(fstat(m->fd, &st), 0);
	m->size = (size_t)st.st_size;
	m->mem = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	assert_true(m->mem != MAP_FAILED);
	m->h = m->mem;
	m->desc = (uint64_t *)((char *)m->mem + m->h->desc_off);
	m->ndesc = 1ull << m->h->desc_log2;
}

static void unmap_rw(struct mapped *m)
{
	munmap(m->mem, m->size);
	close(m->fd);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * A header with seq_head near its limit, lpos_head about to wrap 2^64, a
 * waiters' lease far in the future and descriptors that claim records at
 * and after seq_head (and random junk): the writer's exclusive open
 * recovers it, and every record written afterwards reads back in order.
 */
static void test_crafted_header_recovers(void **state)
{
	char *path = good_store("storesec-craft");
	const uint64_t head = PK_RING_SEQ_WRITE_LIMIT - 1000;
	struct pk_record rec;
	struct pk_reader *r;
	struct pk_config cfg;
	struct mapped m;
	uint64_t i, rnd = 0x9e3779b97f4a7c15ull;
	char want[64], *msg;
	const int n = 60;
	int k;

	(void)state;
	map_rw(path, &m);
	m.h->first_seq = head;
	atomic_store(&m.h->clear_seq, head);
	atomic_store(&m.h->seq_head, head);
	atomic_store(&m.h->lpos_head, (uint64_t)0 - 256);
	atomic_store(&m.h->waiters, 0xffffffffu);
	atomic_store(&m.h->wait_until, UINT64_MAX);
	atomic_store(&m.h->open_count, 0);	/* records below claim to be OPEN */
	atomic_store(&m.h->lost, UINT64_MAX - 1);
	for (i = 0; i < m.ndesc; i++) {
		uint64_t seq = head + i % 7;	/* claims seq_head and later, FINAL */

		if (i % 3 == 0)
			m.desc[i] = ((uint64_t)(uint32_t)seq << 32) | 8 * (i % 64) | 3;
		else if (i % 3 == 1)
			m.desc[i] = ((uint64_t)(uint32_t)(seq + 0x40000000u) << 32) | 2;
		else
			m.desc[i] = xorshift(&rnd);
	}
	unmap_rw(&m);

	/* The writer's own validation: nothing refused, nothing said. */
	assert_int_equal(open_store(path, STORE, &msg), 0);
	assert_string_equal(msg, "");
	free(msg);

	cfg_for(&cfg, path, STORE);
	assert_int_equal(pk_init(&cfg), 0);
	for (k = 0; k < n; k++)
		assert_true(pk_printk(PK_INFO, "crafted %d\n", k) > 0);
	pk_shutdown();

	r = pk_reader_open_file(path);
	assert_non_null(r);
	for (k = 0; k < n; k++) {
		assert_int_equal(pk_reader_next(r, &rec), 1);
		assert_int_equal(rec.seq, head + (uint64_t)k);
		snprintf(want, sizeof(want), "crafted %d", k);
		assert_int_equal(rec.len, strlen(want));
		assert_memory_equal(rec.text, want, rec.len);
	}
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_close(r);
	unlink(path);
	free(path);
}

/* Bounds no store can reach: refused with the numbers, file untouched. */
/* ---- hostile stores of lanes ---- */

/*
 * A valid store of @n lanes of 2^@l2 data bytes each at @path, made
 * directly, a record in each lane.  Return: its size.
 */
static size_t lanes_store(const char *path, unsigned n, unsigned l2)
{
	size_t size = pk__lanes_region_size(n, l2);
	struct pk_ring_meta m = { .ts_ns = 1000, .pid = 1, .tid = 1, .level = 6 };
	struct pk_lanes ls;
	uint64_t seq;
	unsigned i;
	void *mem;
	int fd;

	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mem != MAP_FAILED);
	pk__lanes_format(mem, n, l2, 0);
	((struct pk_ring_hdr *)mem)->generation = 1;
	assert_int_equal(pk__lanes_attach(&ls, mem, size), 0);
	for (i = 0; i < n; i++) {
		m.ts_ns++;
		assert_int_equal(pk__ring_write(&ls.lane[i], &m, "lane", 4, false, &seq), 0);
	}
	munmap(mem, size);
	close(fd);
	return size;
}

/* The header of lane @i of the store at @path, changed by @edit. */
static void lane_edit(const char *path, unsigned i, size_t lane_size,
		      void (*edit)(struct pk_ring_hdr *h, uint64_t arg), uint64_t arg)
{
	struct pk_ring_hdr h;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &h, sizeof(h), (off_t)(i * lane_size)), (ssize_t)sizeof(h));
	edit(&h, arg);
	assert_int_equal(pwrite(fd, &h, sizeof(h), (off_t)(i * lane_size)), (ssize_t)sizeof(h));
	close(fd);
}

static void set_lanes(struct pk_ring_hdr *h, uint64_t v) { h->lanes = (uint32_t)v; }
static void set_lane(struct pk_ring_hdr *h, uint64_t v) { h->lane = (uint32_t)v; }
static void set_version(struct pk_ring_hdr *h, uint64_t v) { h->version = (uint32_t)v; }
static void set_magic(struct pk_ring_hdr *h, uint64_t v) { h->magic = v; }
static void set_first_seq(struct pk_ring_hdr *h, uint64_t v) { h->first_seq = v; }
static void set_seq_head(struct pk_ring_hdr *h, uint64_t v) { atomic_store(&h->seq_head, v); }

/*
 * Refused by a writer with one line containing @why and by every reader
 * (errno @err), the file untouched; pkmsg's words (pk__persist_explain)
 * are the writer's.
 */
static void lanes_refused(const char *path, int err, const char *why)
{
	char text[256];

	refused(path, STORE, -err, why);
	errno = 0;
	assert_null(pk_reader_open_file(path));
	assert_int_equal(errno, err);
	errno = 0;
	assert_null(pk_reader_open_file_flags(path, PK_READER_WRITABLE));
	assert_int_equal(errno, err);
	assert_int_equal(pk__persist_explain(path, text, sizeof(text)), -err);
	if (!strstr(text, why))
		fail_msg("explained \"%s\", wanted \"%s\"", text, why);
}

/*
 * Stores of lanes are untrusted as a whole and lane by lane: a lane count
 * of 0 or 65, a lane that names another place or another count (lanes of
 * two stores), lanes of different sizes, a file cut short or extended, a
 * file that begins with another lane than 0, one lane of another format
 * version, a lane without its magic, a lane's sequence bounds: each
 * refused, saying which, by writers and readers alike.  A store whose
 * seq_head is near the limit in one lane only is readable, not writable.
 * The valid store is opened by a writer with the buffer size its lanes
 * add up to, and keeps its lanes.
 */
static void test_hostile_lanes_refused(void **state)
{
	char *path = tu_tmp_path("storesec-lanes"), want[300], *msg;
	size_t size, lane;
	struct pk_reader *r;
	int fd;

	(void)state;
	/* 4 lanes of 8 KiB: the 32 KiB data ring STORE (64 KiB) gives. */
	size = lanes_store(path, 4, 13);
	lane = size / 4;
	assert_int_equal(open_store(path, STORE, &msg), 0);
	assert_string_equal(msg, "");
	free(msg);
	r = pk_reader_open_file(path);
	assert_non_null(r);
	pk_reader_close(r);

	lane_edit(path, 0, lane, set_lanes, 0);
	lanes_refused(path, EINVAL, "corrupt store header: 0 lanes (a store has 1 to 64)");
	lane_edit(path, 0, lane, set_lanes, 65);
	lanes_refused(path, EINVAL, "corrupt store header: 65 lanes (a store has 1 to 64)");
	lane_edit(path, 0, lane, set_lanes, UINT32_MAX);
	lanes_refused(path, EINVAL, "corrupt store header: 4294967295 lanes");
	lane_edit(path, 0, lane, set_lanes, 4);

	lane_edit(path, 2, lane, set_lane, 1);
	lanes_refused(path, EINVAL, "lane 2 of the store says it is lane 1 of 4");
	lane_edit(path, 2, lane, set_lane, 2);
	lane_edit(path, 1, lane, set_lanes, 2);
	lanes_refused(path, EINVAL, "lane 1 of the store says it is lane 1 of 2, lane 0 says the "
		      "store has 4 lanes");
	lane_edit(path, 1, lane, set_lanes, 4);
	/* Lane 0 says the store has 3 lanes: the file holds 4. */
	lane_edit(path, 0, lane, set_lanes, 3);
	snprintf(want, sizeof(want), "file size does not match the store header: %zu bytes, the "
		 "header describes %zu (its lanes)", size, 3 * lane);
	lanes_refused(path, EINVAL, want);
	lane_edit(path, 0, lane, set_lanes, 4);

	lane_edit(path, 3, lane, set_version, 8);
	lanes_refused(path, EPROTO, "lane 3 of the store file has format version 8, this "
		      "libprintk reads version 10");
	lane_edit(path, 3, lane, set_version, PK_RING_VERSION);
	/* A whole store of the previous format: both versions named. */
	lane_edit(path, 0, lane, set_version, 9);
	lanes_refused(path, EPROTO, "store file has format version 9, this libprintk reads "
		      "version 10 (written by an older libprintk)");
	lane_edit(path, 0, lane, set_version, PK_RING_VERSION);

	lane_edit(path, 2, lane, set_magic, 0x6b6e756a6b6e756aull);
	lanes_refused(path, EINVAL, "bad magic at the header of lane 2 of 4");
	lane_edit(path, 2, lane, set_magic, PK_RING_MAGIC);
	lane_edit(path, 3, lane, set_first_seq, 5);
	lanes_refused(path, EINVAL, "corrupt store header of lane 3 (sequence bounds): first_seq 5, "
		      "clear_seq 0, seq_head 1");
	lane_edit(path, 3, lane, set_first_seq, 0);

	/* Lane 1 near the seq limit: read, not written. */
	lane_edit(path, 1, lane, set_seq_head, PK_RING_SEQ_WRITE_LIMIT + 1);
	snprintf(want, sizeof(want), "seq_head %llu of lane 1 is past %llu, too near the limit",
		 (unsigned long long)PK_RING_SEQ_WRITE_LIMIT + 1,
		 (unsigned long long)PK_RING_SEQ_WRITE_LIMIT);
	refused(path, STORE, -EINVAL, want);
	r = pk_reader_open_file(path);
	assert_non_null(r);
	pk_reader_close(r);
	lane_edit(path, 1, lane, set_seq_head, 1);

	/* Cut inside its last lane, and to its first lane alone. */
	assert_int_equal(truncate(path, (off_t)(size - 100)), 0);
	snprintf(want, sizeof(want), "store file is truncated: %zu bytes, its header describes %zu "
		 "(its lanes)", size - 100, size);
	lanes_refused(path, EINVAL, want);
	assert_int_equal(truncate(path, (off_t)lane), 0);
	snprintf(want, sizeof(want), "store file is truncated: %zu bytes, its header describes %zu "
		 "(its lanes)", lane, size);
	lanes_refused(path, EINVAL, want);
	/* Extended by a lane. */
	size = lanes_store(path, 4, 13);
	assert_int_equal(truncate(path, (off_t)(size + lane)), 0);
	snprintf(want, sizeof(want), "file size does not match the store header: %zu bytes, the "
		 "header describes %zu (its lanes)", size + lane, size);
	lanes_refused(path, EINVAL, want);

	/* Lanes 1 to 3 alone: the file begins with lane 1. */
	size = lanes_store(path, 4, 13);
	{
		size_t len;
		char *all = tu_read_file(path, &len);

		assert_int_equal(len, size);
		fd = open(path, O_WRONLY | O_TRUNC);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, all + lane, 3 * lane), (ssize_t)(3 * lane));
		close(fd);
		free(all);
	}
	lanes_refused(path, EINVAL, "the store file begins with lane 1 of 4, not lane 0");

	/*
	 * Lanes of two sizes: a store of 2 lanes whose lane 1 is a region
	 * of half the size, the rest of its place zeros.
	 */
	size = lanes_store(path, 2, 14);
	{
		struct pk_ring_hdr *h1;
		void *mem;

		fd = open(path, O_RDWR);
		assert_true(fd >= 0);
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		assert_true(mem != MAP_FAILED);
		h1 = (struct pk_ring_hdr *)((char *)mem + size / 2);
		memset(h1, 0, size / 2);
		pk__ring_format(h1, 13, 0);
		h1->lanes = 2;
		h1->lane = 1;
		munmap(mem, size);
		close(fd);
	}
	snprintf(want, sizeof(want), "lane 1 of the store is %zu bytes, lane 0 is %zu: the lanes of "
		 "a store are of one size", pk__ring_region_size(13), size / 2);
	lanes_refused(path, EINVAL, want);

	/* A valid store of lanes of another size than asked: the sizes that open it. */
	size = lanes_store(path, 2, 13);
	assert_int_equal(open_store(path, STORE, &msg), -EINVAL);
	snprintf(want, sizeof(want), "a buffer size of %u bytes does not match this %zu-byte store, "
		 "which a buffer size from %zu to %zu bytes opens", STORE, size,
		 pk__ring_region_size(14), pk__ring_region_size(15) - 1);
	if (!strstr(msg, want))
		fail_msg("stderr \"%s\", wanted \"%s\"", msg, want);
	free(msg);
	assert_int_equal(open_store(path, pk__ring_region_size(14), &msg), 0);
	free(msg);
	unlink(path);
	free(path);
}

static void test_crafted_bounds_refused(void **state)
{
	char *path = good_store("storesec-bounds"), want[200];
	struct mapped m;

	(void)state;
	map_rw(path, &m);
	atomic_store(&m.h->seq_head, PK_RING_SEQ_LIMIT + 1);
	unmap_rw(&m);
	snprintf(want, sizeof(want), "corrupt store header (sequence bounds): first_seq 0, "
		 "clear_seq 0, seq_head %llu (at most %llu)",
		 (unsigned long long)PK_RING_SEQ_LIMIT + 1, (unsigned long long)PK_RING_SEQ_LIMIT);
	refused(path, STORE, -EINVAL, want);
	errno = 0;
	assert_null(pk_reader_open_file(path));
	assert_int_equal(errno, EINVAL);

	/*
	 * Readable, but too near the limit to write to: a writer would carry
	 * seq_head past what readers accept.  Refused for writing only.
	 */
	map_rw(path, &m);
	atomic_store(&m.h->seq_head, PK_RING_SEQ_WRITE_LIMIT + 1);
	unmap_rw(&m);
	snprintf(want, sizeof(want), "seq_head %llu is past %llu, too near the limit to write to",
		 (unsigned long long)PK_RING_SEQ_WRITE_LIMIT + 1,
		 (unsigned long long)PK_RING_SEQ_WRITE_LIMIT);
	refused(path, STORE, -EINVAL, want);
	{
		struct pk_reader *r = pk_reader_open_file(path);

		assert_non_null(r);
		pk_reader_close(r);
	}
	errno = 0;
	assert_null(pk_reader_open_file_flags(path, PK_READER_WRITABLE));
	assert_int_equal(errno, EINVAL);

	map_rw(path, &m);
	atomic_store(&m.h->seq_head, UINT64_MAX);
	atomic_store(&m.h->clear_seq, UINT64_MAX);
	m.h->first_seq = UINT64_MAX;
	unmap_rw(&m);
	refused(path, STORE, -EINVAL, "corrupt store header (sequence bounds)");
	unlink(path);
	free(path);
}

/* ---- fallback ---- */

#define FB_RECORDS	20

/*
 * In a child, with stderr (and so the stderr console) going to @out and
 * PK_BUFFER=@store: print FB_RECORDS records.  If @explicit_path, pk_init()
 * is called first with buffer_path @explicit_path and must return
 * @init_ret; otherwise the first pk_printk() initialises.  Every call must
 * store its record.  Return: the child's exit status (0: all held).
 */
static int run_fallback_child(const char *out, const char *store, const char *size_env,
			      const char *explicit_path, int init_ret)
{
	int status, fd;
	pid_t pid = tu_fork();

	assert_true(pid >= 0);
	if (!pid) {
		int i, ret = 0;

		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(2);
		setenv("PK_BUFFER", store, 1);
		if (size_env)
			setenv("PK_BUFFER_SIZE", size_env, 1);
		else
			setenv("PK_BUFFER_SIZE", "64k", 1);
		setenv("PK_CONSOLE", "stderr", 1);
		unsetenv("PK_BUFFER_CLEAR");
		if (explicit_path) {
			struct pk_config cfg;

			pk_config_init(&cfg);
			cfg.buffer_path = explicit_path;
			cfg.flags |= PK_CFG_NO_ATEXIT;
			if (pk_init(&cfg) != init_ret)
				_exit(3);
			/* Set up all the same; trying again tries the store again. */
			if (pk_init(&cfg) != init_ret)
				_exit(4);
		}
		for (i = 0; i < FB_RECORDS; i++)
			if (pk_printk(PK_WARNING, "fallback %d\n", i) <= 0)
				ret = 5;
		if (pk_flush(10000) < 0)
			ret = 6;
		pk_shutdown();
		_exit(ret);
	}
	tu_waitpid(pid, &status, CHILD_MS, "fallback child");
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * PK_BUFFER=@store cannot be used: exactly one warning naming it and
 * containing @why, then every record on the console.
 */
static void expect_fallback(const char *store, const char *size_env, const char *why)
{
	char *out = tu_tmp_path("storesec-out"), *text, head[600];
	size_t len;
	int st = run_fallback_child(out, store, size_env, NULL, 0);

	text = tu_read_file(out, &len);
	assert_non_null(text);
	if (st != 0)
		fail_msg("PK_BUFFER=%s: child exit %d; output:\n%s", store, st, text);
	snprintf(head, sizeof(head), "libprintk: store %s: ", store);
	if (tu_count(text, "libprintk:") != 1 || tu_count(text, head) != 1 || !strstr(text, why))
		fail_msg("PK_BUFFER=%s: wanted one warning with \"%s\"; output:\n%s", store, why, text);
	assert_int_equal(tu_count(text, "records are kept in memory only"), 1);
	if (!tu_tagged_in_order(text, "fallback", FB_RECORDS))
		fail_msg("PK_BUFFER=%s: records missing from the console:\n%s", store, text);
	free(text);
	unlink(out);
	free(out);
}

static void test_fallback_keeps_printing(void **state)
{
	char *dir = tu_tmp_path("storesec-fbdir"), *junk = tu_tmp_path("storesec-fbjunk");
	char *other = good_store("storesec-fbsize"), *plain = tu_tmp_path("storesec-fbplain");
	char *link = tu_tmp_path("storesec-fblink"), *gw = good_store("storesec-fbgw");
	char under[600], missing[600], *s;
	size_t len;

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	expect_fallback(dir, NULL, "is a directory");

	write_file(junk, "this is not a store, it is 52 bytes of text, really\n", 0600);
	expect_fallback(junk, NULL, "file too short to be a libprintk store");
	s = tu_read_file(junk, &len);
	assert_string_equal(s, "this is not a store, it is 52 bytes of text, really\n");
	free(s);

	expect_fallback(other, "4m", "PK_BUFFER_SIZE=4m does not match this");

	snprintf(under, sizeof(under), "%s/store", junk);
	expect_fallback(under, NULL, pk_strerror(-ENOTDIR));
	snprintf(missing, sizeof(missing), "%s/missing/store", dir);
	/* What failed and the system's reason for it. */
	expect_fallback(missing, NULL, "cannot create the store file: No such file or directory;");

	write_file(plain, "precious\n", 0600);
	assert_int_equal(symlink(plain, link), 0);
	expect_fallback(link, NULL, "is a symbolic link");
	s = tu_read_file(plain, &len);
	assert_string_equal(s, "precious\n");
	free(s);

	assert_int_equal(chmod(gw, 0620), 0);
	expect_fallback(gw, NULL, "writable by group or others");

	rmdir(dir);
	unlink(junk);
	unlink(other);
	unlink(plain);
	unlink(link);
	unlink(gw);
	free(dir);
	free(junk);
	free(other);
	free(plain);
	free(link);
	free(gw);
}

/*
 * pk_init() with a buffer_path the program chose: the error is returned and
 * the library is set up all the same.  The same path given by PK_BUFFER:
 * 0, the user having been warned.
 */
static void test_explicit_path_gets_error(void **state)
{
	char *dir = tu_tmp_path("storesec-exdir"), *out = tu_tmp_path("storesec-exout");
	char *good = tu_tmp_path("storesec-exgood"), *text;
	size_t len;
	int st;

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	st = run_fallback_child(out, good, NULL, dir, -EISDIR);
	text = tu_read_file(out, &len);
	assert_non_null(text);
	if (st)
		fail_msg("child exit %d; output:\n%s", st, text);
	assert_int_equal(tu_count(text, "libprintk:"), 1);
	assert_true(tu_tagged_in_order(text, "fallback", FB_RECORDS));
	/* PK_BUFFER's store was not used either: pk_init had the path. */
	assert_int_equal(access(good, F_OK), -1);
	free(text);

	/* buffer_path equal to PK_BUFFER: the user's choice, pk_init says 0. */
	st = run_fallback_child(out, dir, NULL, dir, 0);
	text = tu_read_file(out, &len);
	assert_non_null(text);
	if (st)
		fail_msg("child exit %d; output:\n%s", st, text);
	assert_int_equal(tu_count(text, "libprintk:"), 1);
	assert_true(tu_tagged_in_order(text, "fallback", FB_RECORDS));
	free(text);

	unlink(out);
	rmdir(dir);
	free(dir);
	free(out);
	free(good);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_store_is_private),
		cmocka_unit_test(test_group_or_world_writable_refused),
		cmocka_unit_test(test_other_owner_refused),
		cmocka_unit_test(test_symlinks_refused),
		cmocka_unit_test(test_dir_components_own),
		cmocka_unit_test(test_dir_components_other_user),
		cmocka_unit_test(test_not_a_file_refused),
		cmocka_unit_test(test_truncated_says_truncated),
		cmocka_unit_test(test_other_size_names_user_value),
		cmocka_unit_test(test_crafted_header_recovers),
		cmocka_unit_test(test_crafted_bounds_refused),
		cmocka_unit_test(test_hostile_lanes_refused),
		cmocka_unit_test(test_fallback_keeps_printing),
		cmocka_unit_test(test_explicit_path_gets_error),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
