// SPDX-License-Identifier: MIT
/*
 * module.c - modules: the registry of struct pk_module, their runtime
 * levels, the level patterns (pk_module_set_level(), PK_MODULES), and the
 * module-name patterns consoles and pkmsg filter with, and whether a
 * module's level drops a record (pk__mod_drops(), pk_module_dropped()).
 *
 * What a call site needs is in the module object itself (its level, read
 * with one relaxed load by pk__mod_pass() and vprintk()); this file is
 * only the slow side: registration from constructors, level changes,
 * listing.  All of that is serialized by one mutex and never runs in a
 * signal handler.  A level is written with a relaxed atomic store: a
 * caller that reads the old level for a moment stores or drops one record
 * by the old rule, which is all a level change promises.
 *
 * Patterns are kept, in order, so that a module registered later (a
 * dlopen()ed plugin) gets the level a user asked for by pattern: the last
 * pattern that matches wins, as the last assignment would.
 */
#include "core/core.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RULES_MAX	32

struct rule {
	char pat[PK_MODULE_NAME_MAX + 1];
	int level;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static struct pk_module *head, **tail = &head;
static struct rule rules[RULES_MAX];
static unsigned nrules;
static bool env_read;

/*
 * A fork() while another thread holds the lock (a level change, a
 * constructor of a dlopen()ed object) must not leave it held in the
 * child, whose exit runs PK_MODULE_REGISTER's destructors.
 */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void atfork_release(void)
{
	pthread_mutex_unlock(&lock);
}

static void atfork_setup(void)
{
	pthread_atfork(atfork_prepare, atfork_release, atfork_release);
}

static void lock_registry(void)
{
	pthread_once(&atfork_once, atfork_setup);
	pthread_mutex_lock(&lock);
}

bool pk__mod_list_valid(const char *list)
{
	size_t i, run = 0;

	for (i = 0; list[i]; i++) {
		unsigned char c = (unsigned char)list[i];

		if (c == ',') {
			if (!run)
				return false;	/* an empty entry */
			run = 0;
			continue;
		}
		if (!pk__mod_name_char(c) && c != '*' && c != '?' && c != '-')
			return false;
		run++;
	}
	return i > 0 && run > 0 && i <= 255;
}

bool pk__glob_match(const char *pat, size_t plen, const char *s)
{
	const char *star = NULL, *resume = NULL, *pend = pat + plen;

	/* Iterative: '*' backtracks to its last position only (no recursion). */
	while (*s) {
		if (pat < pend && (*pat == '?' || *pat == *s)) {
			pat++;
			s++;
		} else if (pat < pend && *pat == '*') {
			star = ++pat;
			resume = s;
		} else if (star) {
			pat = star;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (pat < pend && *pat == '*')
		pat++;
	return pat == pend;
}

bool pk__mod_list_match(const char *list, const char *module)
{
	const char *p = list, *comma;
	size_t n;

	for (;;) {
		comma = strchr(p, ',');
		n = comma ? (size_t)(comma - p) : strlen(p);
		if (!module) {
			if (n == 1 && p[0] == '-')
				return true;
		} else if (n && !(n == 1 && p[0] == '-') && pk__glob_match(p, n, module)) {
			return true;
		}
		if (!comma)
			return false;
		p = comma + 1;
	}
}

static bool name_ok(const char *name, bool pattern)
{
	size_t i;

	for (i = 0; name[i]; i++) {
		unsigned char c = (unsigned char)name[i];

		if (i >= PK_MODULE_NAME_MAX)
			return false;
		if (!pk__mod_name_char(c) && !(pattern && (c == '*' || c == '?')))
			return false;
	}
	return i > 0;
}

static bool level_ok(int level)
{
	return level >= PK_MODULE_OFF && level <= PK_DEBUG;
}

static void set_level(struct pk_module *m, int level)
{
	__atomic_store_n(&m->level, level, __ATOMIC_RELAXED);
}

/* Keep @pat at @level for modules registered later.  0 or -ENOSPC. */
static int rule_add(const char *pat, int level)
{
	unsigned i;

	for (i = 0; i < nrules; i++) {
		if (!strcmp(rules[i].pat, pat)) {
			/* The same pattern again: it moves last, as if given anew. */
			memmove(&rules[i], &rules[i + 1], (nrules - i - 1) * sizeof(rules[0]));
			nrules--;
			break;
		}
	}
	if (nrules == RULES_MAX)
		return -ENOSPC;
	strcpy(rules[nrules].pat, pat);
	rules[nrules].level = level;
	nrules++;
	return 0;
}

static int apply_locked(const char *pat, int level)
{
	struct pk_module *m;
	int n = 0;

	for (m = head; m; m = m->next) {
		if (pk__glob_match(pat, strlen(pat), m->name)) {
			set_level(m, level);
			n++;
		}
	}
	return n;
}

int pk__level_parse(const char *s, size_t n, enum pk__level_scale scale)
{
	static const char *const names[] = { "emerg", "alert", "crit", "err",
					     "warn", "notice", "info", "debug" };
	int max = scale == PK__LOGLEVEL ? 8 : PK_DEBUG;
	size_t i;

	if (n == 1 && s[0] >= '0' && s[0] - '0' <= max)
		return s[0] - '0';
	for (i = 0; i < PK__ARRAY_SIZE(names); i++) {
		if (strlen(names[i]) == n && !strncasecmp(s, names[i], n))
			break;
	}
	/* syslog(3)'s spellings of the two that differ. */
	if (i == PK__ARRAY_SIZE(names)) {
		if (n == 7 && !strncasecmp(s, "warning", 7))
			i = PK_WARNING;
		else if (n == 5 && !strncasecmp(s, "error", 5))
			i = PK_ERR;
		else
			return -1;
	}
	/* The kernel's console loglevel prints what is below it: one more. */
	return (int)i + (scale == PK__LOGLEVEL);
}

/* A module's level: pk__level_parse()'s, or "off".  PK_MODULE_OFF - 1 if neither. */
static int parse_level(const char *s, size_t n)
{
	int l;

	if (n == 3 && !strncasecmp(s, "off", 3))
		return PK_MODULE_OFF;
	l = pk__level_parse(s, n, PK__LEVEL);
	return l < 0 ? PK_MODULE_OFF - 1 : l;
}

/*
 * PK_MODULES="pattern=level,..." (level 0-7, a level name or "off"), read once, before
 * the first registration or level change.  A malformed entry is skipped
 * and said on stderr; the others still apply.  Not in set-id programs
 * (secure_getenv()).
 */
static int rules_from_locked(const char *v, bool report)
{
	const char *p, *end, *eq;
	char pat[PK_MODULE_NAME_MAX + 1];
	size_t n;
	int level, nbad = 0;

	for (p = v; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			continue;
		eq = memchr(p, '=', (size_t)(end - p));
		n = eq ? (size_t)(eq - p) : 0;
		level = eq ? parse_level(eq + 1, (size_t)(end - eq - 1)) : PK_MODULE_OFF - 1;
		if (n && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = '\0';
		}
		if (!n || n >= sizeof(pat) || !name_ok(pat, true) || !level_ok(level) ||
		    rule_add(pat, level) < 0) {
			if (report)
				fprintf(stderr, "libprintk: ignoring PK_MODULES entry \"%.*s\": "
					"expected pattern=LEVEL with LEVEL " PK__LEVEL_WANT " or off\n", (int)(end - p), p);
			nbad++;
			continue;
		}
		apply_locked(pat, level);
	}
	return nbad;
}

static void env_rules_locked(void)
{
	const char *v;

	if (env_read)
		return;
	env_read = true;
	v = secure_getenv("PK_MODULES");
	if (v)
		rules_from_locked(v, true);
}

int pk__module_rules_apply(const char *v)
{
	int nbad;

	lock_registry();
	env_read = true;
	nrules = 0;
	nbad = rules_from_locked(v, false);
	pthread_mutex_unlock(&lock);
	return nbad;
}

int pk_module_register(struct pk_module *mod)
{
	struct pk_module *m;
	unsigned i;

	if (!mod || !mod->name || !name_ok(mod->name, false) || !level_ok(mod->level) ||
	    !level_ok(mod->default_level))
		return -EINVAL;
	lock_registry();
	for (m = head; m; m = m->next) {
		if (m == mod) {
			pthread_mutex_unlock(&lock);
			return -EEXIST;
		}
	}
	env_rules_locked();
	mod->next = NULL;
	/* Checked above: the store copies the name by this length (pk__mod_prefix()). */
	__atomic_store_n(&mod->namelen, strlen(mod->name), __ATOMIC_RELAXED);
	for (i = 0; i < nrules; i++)
		if (pk__glob_match(rules[i].pat, strlen(rules[i].pat), mod->name))
			set_level(mod, rules[i].level);
	*tail = mod;
	tail = &mod->next;
	pthread_mutex_unlock(&lock);
	return 0;
}

void pk_module_unregister(struct pk_module *mod)
{
	struct pk_module **pp;

	if (!mod)
		return;
	lock_registry();
	for (pp = &head; *pp; pp = &(*pp)->next) {
		if (*pp == mod) {
			*pp = mod->next;
			if (tail == &mod->next)
				tail = pp;
			mod->next = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

int pk_module_set_level(const char *pattern, int level)
{
	int n, ret;

	if (!pattern || !name_ok(pattern, true) || !level_ok(level))
		return -EINVAL;
	lock_registry();
	env_rules_locked();
	ret = rule_add(pattern, level);
	n = apply_locked(pattern, level);
	pthread_mutex_unlock(&lock);
	return ret < 0 ? ret : n;
}

int pk_module_get_level(const char *name)
{
	struct pk_module *m;
	int ret = -ENOENT;

	if (!name)
		return -EINVAL;
	lock_registry();
	for (m = head; m; m = m->next) {
		if (!strcmp(m->name, name)) {
			ret = __atomic_load_n(&m->level, __ATOMIC_RELAXED);
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

int pk_module_list_cb(int (*cb)(const char *name, int level, void *arg), void *arg)
{
	struct pk_module *m;
	int n = 0, ret;

	if (!cb)
		return -EINVAL;
	lock_registry();
	for (m = head; m; m = m->next) {
		ret = cb(m->name, __atomic_load_n(&m->level, __ATOMIC_RELAXED), arg);
		if (ret) {
			n = ret;
			break;
		}
		n++;
	}
	pthread_mutex_unlock(&lock);
	return n;
}

/*
 * A record dropped by its module's level: if it leaves a line open (its
 * format has no final newline), the continuations of that line go with
 * it; a complete line leaves the thread's open line, if any, as it was.
 */
static void mod_note_dropped(const char *fmt)
{
	size_t n = fmt ? strlen(fmt) : 0;

	if (!n || fmt[n - 1] != '\n')
		pk__self.mod_dropped = true;
}

/*
 * Does module @mod drop a record of @level (a continuation: @cont)?  A
 * continuation goes with the line it continues: dropped if that line was.
 * A record stored starts a new line: its continuations are kept.
 */
bool pk__mod_drops(const struct pk_module *mod, int level, bool cont, const char *fmt)
{
	if (cont)
		return pk__self.mod_dropped;
	if (mod && level > __atomic_load_n(&mod->level, __ATOMIC_RELAXED)) {
		mod_note_dropped(fmt);
		return true;
	}
	pk__self.mod_dropped = false;
	return false;
}

int pk_module_dropped(const char *fmt)
{
	mod_note_dropped(fmt);
	return 0;
}
