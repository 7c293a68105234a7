/* SPDX-License-Identifier: MIT */
/*
 * pathwalk.h - walking a path one component at a time, under the kernel's
 * protected_symlinks and protected_regular rules whatever the system's
 * settings (pathwalk.c says why and how).
 *
 * Used by the file console (which may reopen from write(), so in a signal
 * handler) and by the store (persist.c): no malloc, no stdio, no locks;
 * every buffer is in struct pk__walk, which the caller owns.  A refusal by
 * a rule leaves its reason, one sentence without the path, in @why; the
 * caller prints it in its own words.
 *
 * Use:
 *
 *	pk__walk_init(&w);			(once: no descriptor held)
 *	ret = pk__walk_begin(&w, path);
 *	while (!ret && !(ret = pk__walk_parent(&w))) {
 *		... the last component w.name, in directory w.dfd ...
 *		(a symlink there the caller wants followed:
 *		 ret = pk__walk_follow(&w, lfd, w.name); and go round)
 *	}
 *	pk__walk_end(&w);			(always: closes w.dfd)
 *
 * Context: any thread, async-signal-safe; one walk per struct at a time.
 */
#ifndef PK_PATHWALK_H
#define PK_PATHWALK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Symlinks followed (and lookups retried) in one walk: more is -ELOOP, as the kernel. */
#define PK__WALK_MAX_LINKS	40

/* A refusal's sentence: the words, two uids and a component escaped (\xNN). */
#define PK__WALK_WHY_MAX	(4 * NAME_MAX + 384)

struct pk__walk {
	int dfd;		/* O_PATH descriptor of the directory reached; -1: none */
	int links;		/* symlinks followed, retries: more than 40 is -ELOOP */
	char name[NAME_MAX + 1];	/* after pk__walk_parent(): the last component */
	char rest[PATH_MAX];	/* what is left of the path to walk */
	char tmp[PATH_MAX];	/* scratch (free between calls) */
	char why[PK__WALK_WHY_MAX];	/* the last refusal by a rule; "" if none */
	/*
	 * Apply the rules in every directory others or a group may write,
	 * sticky or not (set by the caller after pk__walk_init()); else only
	 * in sticky world-writable ones.
	 */
	bool shared_dirs;
};

/* No descriptor held: pk__walk_end() is harmless. */
void pk__walk_init(struct pk__walk *w);

/*
 * pk__walk_begin() - start walking @path (absolute, or relative to the
 * working directory).  @w holds no descriptor (after pk__walk_init() or
 * pk__walk_end()): @w->dfd is overwritten, not closed.
 * Return: 0; -ENAMETOOLONG; another -errno of opening "/" or ".".
 */
int pk__walk_begin(struct pk__walk *w, const char *path);

/*
 * pk__walk_parent() - walk every directory component of what is left,
 * following symlinks among them by the rules, up to the last component.
 * A trailing slash makes what precedes it the last component.
 * Return: 0 with @w->dfd the directory that holds the last component and
 * @w->name its name (not looked up; @w->rest holds it too, so that going
 * round after a pk__walk_follow() that found no link looks at it again);
 * -EACCES refused by
 * a rule (@w->why says which); -ENOTDIR, -ELOOP, -EISDIR (nothing but
 * slashes: no last component), -ENAMETOOLONG, or the -errno of a lookup.
 */
int pk__walk_parent(struct pk__walk *w);

/*
 * pk__walk_follow() - follow the symlink @lfd, an O_PATH | O_NOFOLLOW
 * descriptor of the last component @name in @w->dfd: its target takes the
 * place of @w->rest, and an absolute one restarts at "/".
 * Return: 0, also when @lfd is no longer a symlink (replaced since: look
 * again); -EACCES refused by protected_symlinks (@w->why says so); -ELOOP
 * more than 40 links; -ENAMETOOLONG; -ENOENT an empty link; another -errno.
 */
int pk__walk_follow(struct pk__walk *w, int lfd, const char *name);

/*
 * pk__walk_owner_ok() - may @st, found as @name in a directory described
 * by @dir, be used (followed, entered, opened)?  Not if @dir is sticky and
 * world-writable (with @w->shared_dirs: writable by others or its group,
 * sticky or not) and @st is owned by neither the effective uid nor @dir's
 * owner, or is a regular file with more than one link there.
 * Return: true; false with @w->why saying which rule refused it.
 */
bool pk__walk_owner_ok(struct pk__walk *w, const char *name, const struct stat *dir,
		       const struct stat *st);

/* Is directory @dfd in /proc, where symlinks are the kernel's own? */
bool pk__walk_in_procfs(int dfd);

/* Close @w->dfd if open. */
void pk__walk_end(struct pk__walk *w);

/*
 * pk__walk_escape() - @s for a message on a terminal: bytes outside
 * printable ASCII, the quote and the backslash as \xNN.  Cut to fit @n
 * bytes (n >= 1).  Return: @buf.
 */
const char *pk__walk_escape(char *buf, size_t n, const char *s);

#endif /* PK_PATHWALK_H */
