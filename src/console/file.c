// SPDX-License-Identifier: MIT
/*
 * file.c - console driver: append to a file, optionally fsync()ing each
 * write so that a power cut loses nothing already printed.  write(2) and
 * fsync(2) are async-signal-safe, so the same function is write_atomic.
 * The path may name a FIFO: opening it does not wait for a reader (no
 * reader: -ENXIO), and a reader that goes away gives -EPIPE, not SIGPIPE.
 *
 * Opening.  A program that runs as root may be told to log to a path in
 * /tmp, where any user can leave a symlink to /etc/shadow or a file of
 * their own, readable by them.  So the path is walked one component at a
 * time, each looked up with openat() in the directory that holds it and
 * never through a symlink the kernel follows by itself (O_NOFOLLOW, and
 * O_PATH for the directories); a symlink met on the way is looked at and
 * followed here, by the kernel's protected_symlinks and protected_regular
 * rules, which hold then whatever the system's settings:
 *
 *   - in a sticky, world-writable directory (/tmp), a symlink is followed
 *     only if it is owned by the effective uid or by the directory's owner;
 *   - there, an existing file (regular or FIFO) is opened only if it is
 *     owned by the effective uid or by the directory's owner.
 *
 * The kernel's own links in /proc (/dev/stderr is /proc/self/fd/2, whose
 * target may be a pipe) are the exception: the kernel follows those.
 *
 * Each decision is taken on the object the descriptor holds (fstat() of
 * the link or file opened without following, readlinkat() of that very
 * link), so nothing can be swapped between the check and the use.  A new
 * file is created with O_EXCL, mode 0600 unless PK_FILE_MODE() says
 * otherwise (less the umask).  The descriptor is O_CLOEXEC and O_NOCTTY.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "consoles.h"
#include "printk/console.h"
#include "wfd.h"

#define MAX_LINKS	40	/* as the kernel: more is -ELOOP */
#define MODE_SET	PK_FILE_MODE(0)
#define FLAGS_KNOWN	(PK_FILE_FSYNC | PK_FILE_MODE(0777))

struct file_ctx {
	int fd;
	enum pk__wfd_kind kind;
	unsigned flags;
	mode_t mode;
	char path[];
};

static long file_write(void *ctx, const char *buf, size_t len)
{
	struct file_ctx *f = ctx;
	ssize_t n = pk__wfd_write(f->fd, f->kind, buf, len);

	if (n < 0)
		return -errno;
	if ((f->flags & PK_FILE_FSYNC) && fsync(f->fd) < 0)
		return -errno;
	return n;
}

static void file_release(void *ctx)
{
	struct file_ctx *f = ctx;

	close(f->fd);
	free(f);
}

static const struct pk_console_ops file_ops = {
	.name = "file",
	.write = file_write,
	.write_atomic = file_write,
	.release = file_release,
};

/*
 * May @st, found in directory @dir, be used (followed, or opened as it
 * is)?  Not if @dir is sticky and world-writable and @st belongs to
 * neither the effective uid nor the directory's owner.  Says why not on
 * stderr, naming the path the caller gave.
 */
static bool owner_ok(const char *path, const char *name, const struct stat *dir,
		     const struct stat *st)
{
	uid_t euid = geteuid();

	if (!(dir->st_mode & S_ISVTX) || !(dir->st_mode & S_IWOTH) || st->st_uid == euid ||
	    st->st_uid == dir->st_uid)
		return true;
	fprintf(stderr,
		"libprintk: file console \"%s\": refusing %s \"%s\" owned by uid %u in a sticky "
		"world-writable directory owned by uid %u: there only what the process's euid "
		"(%u) or the directory's owner owns is %s (the kernel's %s rule)\n",
		path, S_ISLNK(st->st_mode) ? "to follow symlink" : "to open", name,
		(unsigned)st->st_uid, (unsigned)dir->st_uid, (unsigned)euid,
		S_ISLNK(st->st_mode) ? "followed" : "opened",
		S_ISLNK(st->st_mode) ? "protected_symlinks" : "protected_regular");
	return false;
}

/* Is directory @dfd in /proc, where symlinks are the kernel's own? */
static bool in_procfs(int dfd)
{
	struct statfs sf;

	return fstatfs(dfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/*
 * The walk: @rest holds what is left of the path; @dfd is the directory
 * it is relative to.  splice() puts a symlink's target in front of what
 * follows the link.
 */
struct walk {
	const char *path;	/* as the caller gave it, for messages */
	int dfd;
	int links;
	char rest[PATH_MAX];
	char tmp[PATH_MAX];
};

static int walk_root(struct walk *w, bool absolute)
{
	int fd = open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = fd;
	return 0;
}

/* Follow the symlink @lfd (named @name, in w->dfd); @next: what follows it. */
static int follow(struct walk *w, int lfd, const char *name, const char *next)
{
	struct stat dir, st;
	ssize_t n;
	size_t tail = strlen(next);

	if (++w->links > MAX_LINKS)
		return -ELOOP;
	if (fstat(w->dfd, &dir) < 0 || fstat(lfd, &st) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return 0;	/* replaced since: look again */
	if (!owner_ok(w->path, name, &dir, &st))
		return -EACCES;
	n = readlinkat(lfd, "", w->tmp, sizeof(w->tmp));
	if (n < 0)
		return -errno;
	if (!n)
		return -ENOENT;
	if ((size_t)n + 1 + tail >= sizeof(w->tmp))
		return -ENAMETOOLONG;
	w->tmp[n] = '/';
	memcpy(w->tmp + n + 1, next, tail + 1);
	memcpy(w->rest, w->tmp, (size_t)n + 1 + tail + 1);
	return w->tmp[0] == '/' ? walk_root(w, true) : 0;
}

/* Open the last component @name in w->dfd for appending, creating it. */
static int open_last(struct walk *w, const char *name, mode_t mode, bool *again)
{
	const int fl = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK;
	struct stat dir, st;
	int fd, lfd, ret;

	*again = false;
	fd = openat(w->dfd, name, fl | O_CREAT | O_EXCL, mode);
	if (fd >= 0)
		return fd;
	if (errno != EEXIST)
		return -errno;
	fd = openat(w->dfd, name, fl);
	if (fd >= 0) {
		if (fstat(w->dfd, &dir) < 0 || fstat(fd, &st) < 0) {
			ret = -errno;
			close(fd);
			return ret;
		}
		if (!owner_ok(w->path, name, &dir, &st)) {
			close(fd);
			return -EACCES;
		}
		return fd;
	}
	if (errno == ENOENT) {	/* removed since */
		*again = ++w->links <= MAX_LINKS;
		return -ENOENT;
	}
	if (errno != ELOOP)
		return -errno;
	/* A symlink: the kernel's own in /proc, else look at it. */
	if (in_procfs(w->dfd))
		return (fd = openat(w->dfd, name, fl & ~O_NOFOLLOW)) < 0 ? -errno : fd;
	lfd = openat(w->dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0)
		return -errno;
	ret = follow(w, lfd, name, "");
	close(lfd);
	*again = !ret;
	return ret;
}

/* Make @fd (or the failure that gave it) the directory the walk is in. */
static int enter(struct walk *w, int fd)
{
	if (fd < 0)
		return -errno;
	close(w->dfd);
	w->dfd = fd;
	return 0;
}

/*
 * Open @path as this file's header describes.
 * Return: the descriptor, or a negative errno (-EACCES: a rule refused it).
 */
static int open_log(const char *path, mode_t mode)
{
	struct walk *w = malloc(sizeof(*w));
	char *p, *slash, name[NAME_MAX + 1];
	bool again;
	int ret, fd;

	if (!w)
		return -ENOMEM;
	w->path = path;
	w->dfd = -1;
	w->links = 0;
	if (strlen(path) >= sizeof(w->rest)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	strcpy(w->rest, path);
	ret = walk_root(w, path[0] == '/');
	while (!ret) {
		p = w->rest;
		while (*p == '/')
			p++;
		slash = strchr(p, '/');
		if (slash && slash[strspn(slash, "/")] == '\0') {
			*slash = '\0';	/* "dir/": the last component is dir */
			slash = NULL;
		}
		if (!*p) {
			ret = -EISDIR;
			break;
		}
		if ((slash ? (size_t)(slash - p) : strlen(p)) > NAME_MAX) {
			ret = -ENAMETOOLONG;
			break;
		}
		if (!slash) {
			memcpy(name, p, strlen(p) + 1);
			ret = open_last(w, name, mode, &again);
			if (again) {
				ret = 0;
				continue;
			}
			break;
		}
		memcpy(name, p, (size_t)(slash - p));
		name[slash - p] = '\0';
		memmove(w->rest, slash + 1, strlen(slash + 1) + 1);
		fd = openat(w->dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		{
			struct stat st;

			if (fstat(fd, &st) < 0)
				ret = -errno;
			else if (S_ISLNK(st.st_mode) && in_procfs(w->dfd))
				ret = enter(w, openat(w->dfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC));
			else if (S_ISLNK(st.st_mode))
				ret = follow(w, fd, name, w->rest);
			else if (!S_ISDIR(st.st_mode))
				ret = -ENOTDIR;
			else {
				close(w->dfd);
				w->dfd = fd;
				continue;
			}
		}
		close(fd);
	}
out:
	if (w->dfd >= 0)
		close(w->dfd);
	free(w);
	return ret;
}

static int file_open(const char *path, mode_t mode)
{
	int fd = open_log(path, mode);

	/* O_NONBLOCK only for the open: a FIFO without a reader fails at once. */
	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

static int file_make(const char *path, mode_t mode, const struct pk_file_opts *o,
		     struct pk_console_driver *out)
{
	struct file_ctx *f;
	size_t plen = strlen(path);
	int fd;

	f = malloc(sizeof(*f) + plen + 1);
	if (!f)
		return -ENOMEM;
	memcpy(f->path, path, plen + 1);
	f->mode = mode;
	fd = file_open(path, f->mode);
	if (fd < 0) {
		free(f);
		return fd;
	}
	f->fd = fd;
	f->kind = pk__wfd_kind(fd);
	f->flags = o->flags & PK_FILE_FSYNC;
	out->ops = &file_ops;
	out->format = PK_FMT_HUMAN;
	out->ctx = f;
	return 0;
}

int pk_console_file_make_opts(const char *path, const struct pk_file_opts *o,
			      struct pk_console_driver *out)
{
	if (!path || !*path || !o || !out || (o->flags & ~PK_FILE_FSYNC) || (o->mode & ~0777u) ||
	    o->rotate_count > 999)
		return -EINVAL;
	return file_make(path, o->mode ? o->mode : 0600, o, out);
}

int pk_console_file_make(const char *path, unsigned flags, struct pk_console_driver *out)
{
	struct pk_file_opts o = { 0, 0, 0, flags & PK_FILE_FSYNC };
	mode_t mode = 0600;

	if (!path || !*path || !out || (flags & ~FLAGS_KNOWN) ||
	    (!(flags & MODE_SET) && (flags & PK_FILE_MODE(0777) & ~MODE_SET)))
		return -EINVAL;
	if (flags & MODE_SET)
		mode = (flags & PK_FILE_MODE(0777) & ~MODE_SET) / (PK_FILE_MODE(1) & ~MODE_SET);
	return file_make(path, mode, &o, out);
}

static int reopen_ctx(struct file_ctx *f)
{
	int fd = file_open(f->path, f->mode);

	if (fd < 0)
		return fd;
	if (dup3(fd, f->fd, O_CLOEXEC) < 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	close(fd);
	return 0;
}

int pk_console_reopen(struct pk_console *con)
{
	struct pk_console *c;
	int i, ret = con ? -EINVAL : 0, r;

	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		if ((!con || c == con) && c->ops == &file_ops) {
			r = reopen_ctx(c->ctx);
			if (con || (r < 0 && !ret))
				ret = r;
		}
		pk__con_put(i);
	}
	return ret;
}
