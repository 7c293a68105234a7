// SPDX-License-Identifier: MIT
/*
 * pathwalk.c - walking a path one component at a time, for the files the
 * library opens or creates by name: file consoles (console/file.c) and the
 * store (persist.c).
 *
 * A program that runs as root may be told to log to a path in /tmp, where
 * any user can leave a symlink to /etc/shadow, to a directory of their
 * choice (/etc/cron.d), or a file or directory of their own.  So the path
 * is walked one component at a time, each looked up with openat() in the
 * directory that holds it and never through a symlink the kernel follows
 * by itself (O_NOFOLLOW, and O_PATH for the directories); a symlink met on
 * the way is looked at and followed here, by the kernel's
 * protected_symlinks and protected_regular rules, which hold then whatever
 * the system's settings:
 *
 *   - in a sticky, world-writable directory (/tmp), a symlink is followed
 *     only if it is owned by the effective uid or by the directory's owner;
 *   - there, a directory is entered, and an existing file opened, only if
 *     it is owned by the effective uid or by the directory's owner (its
 *     owner could otherwise swap what lies in or behind it), and a regular
 *     file only if it has one link (a hard link there may be any file of
 *     ours, /etc/passwd for root);
 *   - for a log (the file console sets @shared_dirs), the same in every
 *     directory others or its group may write, sticky or not (a
 *     /var/log-style root:syslog 0775): there anyone who may write it can
 *     put a symlink or a file at the log's name, which a reopen would
 *     otherwise follow or append to.
 *
 * The kernel's own links in /proc (/dev/stderr is /proc/self/fd/2, whose
 * target may be a pipe) are the exception: the kernel follows those.
 *
 * Each decision is taken on the object the descriptor holds (fstat() of
 * the link or directory opened without following, readlinkat() of that
 * very link), so nothing can be swapped between the check and the use;
 * the walk ends holding a descriptor of the directory that holds the last
 * component, in which the caller opens or creates it (openat(), linkat(),
 * renameat()), so that no later lookup goes by the path again.  What the
 * last component may be is the caller's rule: a log may be a symlink
 * followed by the rules above (pk__walk_follow()), a store never is.
 *
 * The walk allocates nothing and prints nothing: a refusal's reason is
 * formatted with the library's own formatter into the caller's buffer,
 * names escaped (\xNN, a name may come from another user's symlink), so
 * the file console can reopen from write(), maybe in a signal handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include "format/format.h"
#include "store/store.h"
#include "store/pathwalk.h"

void pk__walk_init(struct pk__walk *w)
{
	w->dfd = -1;
	w->links = 0;
	w->name[0] = '\0';
	w->rest[0] = '\0';
	w->why[0] = '\0';
	w->shared_dirs = false;
}

void pk__walk_end(struct pk__walk *w)
{
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = -1;
}

const char *pk__walk_escape(char *buf, size_t n, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	unsigned char c;

	for (; *s && o + 5 <= n; s++) {
		c = (unsigned char)*s;
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o] = '\0';
	return buf;
}

bool pk__walk_owner_ok(struct pk__walk *w, const char *name, const struct stat *dir,
		       const struct stat *st)
{
	uid_t euid = geteuid();
	bool linked = S_ISREG(st->st_mode) && st->st_nlink > 1;	/* may be any file of ours */
	bool sticky_ww = (dir->st_mode & S_ISVTX) && (dir->st_mode & S_IWOTH);
	bool shared = w->shared_dirs && (dir->st_mode & (S_IWGRP | S_IWOTH));
	const char *what, *done, *rule, *where;

	if ((!sticky_ww && !shared) ||
	    ((st->st_uid == euid || st->st_uid == dir->st_uid) && !linked))
		return true;
	where = sticky_ww ? "a sticky world-writable directory" :
		(dir->st_mode & S_IWOTH) ? "a directory other users may write" :
		"a directory its group may write";
	if (S_ISLNK(st->st_mode)) {
		what = "to follow symlink";
		done = "followed";
		rule = "protected_symlinks";
	} else if (S_ISDIR(st->st_mode)) {
		what = "to enter directory";
		done = "entered";
		rule = "protected_regular";
	} else {
		what = "to open";
		done = "opened";
		rule = "protected_regular";
	}
	pk__stbsp_snprintf(w->why, (int)sizeof(w->why),
			   "refusing %s \"%s\" owned by uid %u (%u links) in %s owned "
			   "by uid %u: there only what the process's euid (%u) or the "
			   "directory's owner owns, with one link if a file, is %s (the kernel's "
			   "%s rule)",
			   what, pk__walk_escape(w->tmp, sizeof(w->tmp), name),
			   (unsigned)st->st_uid, (unsigned)st->st_nlink, where, (unsigned)dir->st_uid,
			   (unsigned)euid, done, rule);
	return false;
}

bool pk__walk_in_procfs(int dfd)
{
	struct statfs sf;

	return fstatfs(dfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* Restart at "/" (an absolute path or link) or at the working directory. */
static int walk_root(struct pk__walk *w, bool absolute)
{
	int fd = open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = fd;
	return 0;
}

int pk__walk_begin(struct pk__walk *w, const char *path)
{
	size_t len = strlen(path);

	/*
	 * Whatever @dfd holds is not ours to close: after a fork() that caught
	 * another thread between close() and the reset in pk__walk_end(), it
	 * is a number the walk_root() below may be given again.
	 */
	w->dfd = -1;
	w->links = 0;
	w->name[0] = '\0';
	w->why[0] = '\0';
	if (len >= sizeof(w->rest))
		return -ENAMETOOLONG;
	memcpy(w->rest, path, len + 1);
	return walk_root(w, path[0] == '/');
}

/* Follow the symlink @lfd (named @name, in w->dfd); @next: what follows it. */
static int follow(struct pk__walk *w, int lfd, const char *name, const char *next)
{
	struct stat dir, st;
	size_t tail = strlen(next);
	ssize_t n;

	if (++w->links > PK__WALK_MAX_LINKS)
		return -ELOOP;
	if (fstat(w->dfd, &dir) < 0 || fstat(lfd, &st) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return 0;	/* replaced since: look again */
	if (!pk__walk_owner_ok(w, name, &dir, &st))
		return -EACCES;
	n = readlinkat(lfd, "", w->tmp, sizeof(w->tmp));
	if (n < 0)
		return -errno;
	if (!n)
		return -ENOENT;
	if ((size_t)n + 1 + tail >= sizeof(w->tmp))
		return -ENAMETOOLONG;
	if (tail) {
		w->tmp[n++] = '/';
		memcpy(w->tmp + n, next, tail);
	}
	w->tmp[n + tail] = '\0';
	memcpy(w->rest, w->tmp, (size_t)n + tail + 1);
	return w->tmp[0] == '/' ? walk_root(w, true) : 0;
}

int pk__walk_follow(struct pk__walk *w, int lfd, const char *name)
{
	return follow(w, lfd, name, "");
}

/* Make @fd (or the failure that gave it) the directory the walk is in. */
static int enter(struct pk__walk *w, int fd)
{
	if (fd < 0)
		return -errno;
	close(w->dfd);
	w->dfd = fd;
	return 0;
}

/* Go into the directory component w->name (w->rest: what follows it). */
static int step(struct pk__walk *w)
{
	struct stat st, dst;
	int fd, ret;

	fd = openat(w->dfd, w->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (S_ISLNK(st.st_mode) && pk__walk_in_procfs(w->dfd))
		ret = enter(w, openat(w->dfd, w->name, O_PATH | O_DIRECTORY | O_CLOEXEC));
	else if (S_ISLNK(st.st_mode))
		ret = follow(w, fd, w->name, w->rest);
	else if (!S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	else if (fstat(w->dfd, &dst) < 0)
		ret = -errno;
	else if (!pk__walk_owner_ok(w, w->name, &dst, &st))
		ret = -EACCES;	/* another user's directory in /tmp */
	else
		return enter(w, fd);
	close(fd);
	return ret;
}

int pk__walk_parent(struct pk__walk *w)
{
	char *p, *slash;
	size_t len;
	int ret;

	for (;;) {
		p = w->rest;
		while (*p == '/')
			p++;
		slash = strchr(p, '/');
		if (slash && slash[strspn(slash, "/")] == '\0') {
			*slash = '\0';	/* "dir/": the last component is dir */
			slash = NULL;
		}
		if (!*p)
			return -EISDIR;
		len = slash ? (size_t)(slash - p) : strlen(p);
		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(w->name, p, len);
		w->name[len] = '\0';
		if (!slash) {
			/* Kept in @rest: a follow that finds no link looks again. */
			memmove(w->rest, p, len + 1);
			return 0;
		}
		memmove(w->rest, slash + 1, strlen(slash + 1) + 1);
		ret = step(w);
		if (ret)
			return ret;
	}
}
