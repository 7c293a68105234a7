// SPDX-License-Identifier: MIT
/*
 * dyndbg.c - dynamic debug: the registry of call-site ranges, the kernel's
 * query grammar, the control-file listing and the message prefixes.
 *
 * Registry.  Each object (executable, shared object) that has sites
 * registers its "pk_dyndbg" section from a constructor that
 * <printk/dyndbg.h> emits into every translation unit including it (see
 * there why: the __start/__stop symbols are local to each object, and
 * dl_iterate_phdr() sees segments, not sections).  The table is fixed
 * (PK_DYNDBG_MAX_OBJECTS entries, no allocation) and guarded by one
 * mutex, which registration, queries and listing take.  The hot path
 * never touches it: an enabled site prints from its own descriptor, and
 * the one thing registration gives a site, its module name when the site
 * was compiled without one, is written into the descriptor itself.
 *
 * Ordering pairs:
 *   LMM(site_flags)  query stores a site's flags byte (relaxed) /
 *                    the site macro and pk_dyndbg_vprintk load it
 *                    (relaxed).  The byte is a gate alone: nothing else
 *                    is published through it.
 *   LMM(site_mod:A)  register_sites stores site->modname (release),
 *                    after writing the name it points to;
 *   LMM(site_mod:B)  pk_dyndbg_vprintk loads it (acquire) before reading
 *                    the name.  Pairs with LMM(site_mod:A).
 *
 * PK_DYNDBG is read once (secure_getenv) when the first object registers,
 * and applied to each object as it registers, so a shared object loaded
 * later gets its sites enabled by it too.  A malformed PK_DYNDBG is
 * reported once on stderr (the library may not be initialised yet: a
 * constructor runs before main() and its pk_init()).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "format/format.h"
#include "store/store.h"
#include "printk/dyndbg.h"

#define NAME_MAX_LEN	64	/* module names kept for objects */
#define MAXWORDS	9	/* as the kernel: 4 pairs and the flags */
#define PREFIX_SIZE	64	/* as the kernel's PREFIX_SIZE */

struct object {
	struct pk_dyndbg_site *start, *stop;
	unsigned refs;		/* registrations (translation units) */
	char name[NAME_MAX_LEN];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct object objects[PK_DYNDBG_MAX_OBJECTS];	/* reg_lock */
static bool env_read;			/* reg_lock */
static char *env_query;			/* PK_DYNDBG, or NULL; reg_lock */
static bool env_list;			/* PK_DYNDBG_LIST=1; reg_lock */
static bool env_reported;		/* PK_DYNDBG error said once; reg_lock */
static bool list_header_done;		/* reg_lock */
static int *env_counts;			/* matches per PK_DYNDBG query; reg_lock */
static bool env_unmatched_done;		/* report_env_unmatched() ran; reg_lock */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* ---- matching ------------------------------------------------------------ */

/* The kernel's match_wildcard(): * any run of characters, ? one; whole. */
static bool match_wildcard(const char *pat, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*pat == '*') {
			star = ++pat;
			resume = s;
		} else if (*pat == '?' || *pat == *s) {
			pat++;
			s++;
		} else if (star) {
			pat = star;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

/* A file pattern matches the whole path or any tail of it after a '/'. */
static bool match_file(const char *pat, const char *path)
{
	const char *p;

	if (match_wildcard(pat, path))
		return true;
	for (p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
		if (match_wildcard(pat, p + 1))
			return true;
	return false;
}

static const char *site_module(const struct pk_dyndbg_site *site)
{
	/* LMM(site_mod:B) pairs with LMM(site_mod:A) in register_object() */
	const char *m = __atomic_load_n(&site->modname, __ATOMIC_ACQUIRE);

	return m ? m : "";
}

/* ---- the query grammar --------------------------------------------------- */

struct query {
	const char *filename, *module, *function, *format;
	unsigned first_lineno, last_lineno;
};

struct flag_settings {
	unsigned flags, mask;
};

static const struct {
	unsigned flag;
	char c;
} opt_array[] = {
	{ PK_DYNDBG_PRINT, 'p' },
	{ PK_DYNDBG_MODNAME, 'm' },
	{ PK_DYNDBG_FUNCNAME, 'f' },
	{ PK_DYNDBG_LINENO, 'l' },
	{ PK_DYNDBG_TID, 't' },
	{ 0, '_' },
};

struct errbuf {
	char *buf;
	size_t len;
};

static int fail(struct errbuf *e, const char *fmt, ...) PK__PRINTF(2, 3);
static int fail(struct errbuf *e, const char *fmt, ...)
{
	va_list ap;

	if (e->buf && e->len) {
		va_start(ap, fmt);
		vsnprintf(e->buf, e->len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * Split @buf into words at white space; "..." and '...' quote (no escaped
 * quote inside); '#' starts a comment.  Return: words, or -EINVAL.
 */
static int tokenize(char *buf, char *words[], int maxwords, struct errbuf *e)
{
	int nwords = 0;

	while (*buf) {
		char *end;

		while (isspace((unsigned char)*buf))
			buf++;
		if (!*buf || *buf == '#')
			break;
		if (*buf == '"' || *buf == '\'') {
			int quote = *buf++;

			for (end = buf; *end && *end != quote; end++)
				;
			if (!*end)
				return fail(e, "unclosed quote: %s", buf);
		} else {
			for (end = buf; *end && !isspace((unsigned char)*end); end++)
				;
		}
		if (nwords == maxwords)
			return fail(e, "too many words, legal max <=%d", maxwords);
		if (*end)
			*end++ = '\0';
		words[nwords++] = buf;
		buf = end;
	}
	return nwords;
}

/* Digits only; "" is 0 ("don't care"), as the kernel's parse_lineno(). */
static int parse_lineno(const char *s, unsigned *val, struct errbuf *e)
{
	unsigned long v = 0;
	const char *p;

	for (p = s; *p; p++) {
		if (!isdigit((unsigned char)*p) || v > (UINT_MAX - 9) / 10)
			return fail(e, "bad line-number: %s", s);
		v = v * 10 + (unsigned)(*p - '0');
	}
	*val = (unsigned)v;
	return 0;
}

static int parse_linerange(struct query *q, char *first, struct errbuf *e)
{
	char *last = strchr(first, '-');

	if (q->first_lineno || q->last_lineno)
		return fail(e, "match-spec: line used 2x");
	if (last)
		*last++ = '\0';
	if (parse_lineno(first, &q->first_lineno, e))
		return -EINVAL;
	if (last) {
		if (parse_lineno(last, &q->last_lineno, e))
			return -EINVAL;
		if (q->last_lineno == 0)
			q->last_lineno = UINT_MAX;
		if (q->last_lineno < q->first_lineno)
			return fail(e, "last-line:%u < 1st-line:%u", q->last_lineno,
				    q->first_lineno);
	} else {
		q->last_lineno = q->first_lineno;
	}
	return 0;
}

static int check_set(const char **dest, const char *src, const char *name, struct errbuf *e)
{
	if (*dest)
		return fail(e, "match-spec:%s val:%s overridden by %s", name, *dest, src);
	*dest = src;
	return 0;
}

/* The kernel's string_unescape_inplace(SPACE | OCTAL | SPECIAL), in place. */
static void unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (*s != '\\' || !s[1]) {
			*out++ = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'n': *out++ = '\n'; s++; break;
		case 't': *out++ = '\t'; s++; break;
		case 'r': *out++ = '\r'; s++; break;
		case 'v': *out++ = '\v'; s++; break;
		case 'f': *out++ = '\f'; s++; break;
		case 'a': *out++ = '\a'; s++; break;
		case 'e': *out++ = '\033'; s++; break;
		case '\\': *out++ = '\\'; s++; break;
		case '"': *out++ = '"'; s++; break;
		default:
			if (*s >= '0' && *s <= '7') {
				unsigned v = 0, n;

				for (n = 0; n < 3 && *s >= '0' && *s <= '7'; n++)
					v = v * 8 + (unsigned)(*s++ - '0');
				*out++ = (char)v;
			} else {
				*out++ = '\\';	/* unknown: kept as written */
			}
		}
	}
	*out = '\0';
}

static int parse_query(char *words[], int nwords, struct query *q, struct errbuf *e)
{
	int i;

	if (nwords % 2 != 0)
		return fail(e, "expecting pairs of match-spec <value>");
	for (i = 0; i < nwords; i += 2) {
		char *kw = words[i], *arg = words[i + 1];

		if (!strcmp(kw, "func")) {
			if (check_set(&q->function, arg, "func", e))
				return -EINVAL;
		} else if (!strcmp(kw, "file")) {
			char *tail;

			if (check_set(&q->filename, arg, "file", e))
				return -EINVAL;
			tail = strchr(arg, ':');
			if (!tail)
				continue;
			*tail++ = '\0';
			if (isalpha((unsigned char)*tail) || *tail == '*' || *tail == '?' ||
			    *tail == '_') {
				if (check_set(&q->function, tail, "func", e))
					return -EINVAL;
			} else if (parse_linerange(q, tail, e)) {
				return -EINVAL;
			}
		} else if (!strcmp(kw, "module")) {
			if (check_set(&q->module, arg, "module", e))
				return -EINVAL;
		} else if (!strcmp(kw, "format")) {
			unescape(arg);
			if (check_set(&q->format, arg, "format", e))
				return -EINVAL;
		} else if (!strcmp(kw, "line")) {
			if (parse_linerange(q, arg, e))
				return -EINVAL;
		} else {
			return fail(e, "unknown keyword \"%s\"", kw);
		}
	}
	return 0;
}

/* "[-+=][pmflt_]*" into flags and mask: new = (old & mask) | flags. */
static int parse_flags(const char *str, struct flag_settings *m, struct errbuf *e)
{
	int op = *str;
	size_t i;

	if (op != '+' && op != '-' && op != '=')
		return fail(e, "bad flag-op %c, at start of %s", op ? op : '?', str);
	m->flags = 0;
	for (str++; *str; str++) {
		for (i = 0; i < PK__ARRAY_SIZE(opt_array); i++)
			if (*str == opt_array[i].c)
				break;
		if (i == PK__ARRAY_SIZE(opt_array))
			return fail(e, "unknown flag '%c'", *str);
		m->flags |= opt_array[i].flag;
	}
	switch (op) {
	case '=':
		m->mask = 0;
		break;
	case '+':
		m->mask = ~0u;
		break;
	default:
		m->mask = ~m->flags;
		m->flags = 0;
		break;
	}
	return 0;
}

static bool site_matches(const struct query *q, const struct pk_dyndbg_site *s)
{
	if (q->module && !match_wildcard(q->module, site_module(s)))
		return false;
	if (q->filename && !match_file(q->filename, s->filename))
		return false;
	if (q->function && !match_wildcard(q->function, s->function))
		return false;
	if (q->format) {
		if (*q->format == '^') {
			if (strncmp(s->format, q->format + 1, strlen(q->format + 1)))
				return false;
		} else if (!strstr(s->format, q->format)) {
			return false;
		}
	}
	if (q->first_lineno && s->lineno < q->first_lineno)
		return false;
	if (q->last_lineno && s->lineno > q->last_lineno)
		return false;
	return true;
}

/* Apply to the objects [@from, @to).  Caller holds reg_lock.  Return: matches. */
static int change(const struct query *q, const struct flag_settings *m, int from, int to)
{
	int i, nfound = 0;

	for (i = from; i < to; i++) {
		struct pk_dyndbg_site *s;

		if (!objects[i].refs)
			continue;
		for (s = objects[i].start; s < objects[i].stop; s++) {
			unsigned old, now;

			if (!site_matches(q, s))
				continue;
			nfound++;
			/* LMM(site_flags) */
			old = __atomic_load_n(&s->flags, __ATOMIC_RELAXED);
			now = (old & m->mask) | m->flags;
			if (now != old)
				__atomic_store_n(&s->flags, (unsigned char)now, __ATOMIC_RELAXED);
		}
	}
	return nfound;
}

/* Parse one query (@text is cut into words in place).  Return: 0 or -EINVAL. */
static int parse_one(char *text, struct query *q, struct flag_settings *m, struct errbuf *e)
{
	char *words[MAXWORDS];
	int nwords;

	memset(q, 0, sizeof(*q));
	nwords = tokenize(text, words, MAXWORDS, e);
	if (nwords < 0)
		return nwords;
	if (nwords == 0)
		return fail(e, "no flags given");
	if (parse_flags(words[nwords - 1], m, e))
		return -EINVAL;
	return parse_query(words, nwords - 1, q, e);
}

/* Apply one query to objects [@from, @to); @q gets it parsed.  Return: matches. */
static int exec_one(char *text, struct query *q, int from, int to, struct errbuf *e)
{
	struct flag_settings m = { 0, 0 };
	int rc = parse_one(text, q, &m, e);

	return rc < 0 ? rc : change(q, &m, from, to);
}

/* Has any registered site a module that @pat matches?  Caller holds reg_lock. */
static bool module_known(const char *pat)
{
	struct pk_dyndbg_site *s;
	int i;

	for (i = 0; i < PK_DYNDBG_MAX_OBJECTS; i++) {
		if (!objects[i].refs)
			continue;
		for (s = objects[i].start; s < objects[i].stop; s++)
			if (match_wildcard(pat, site_module(s)))
				return true;
	}
	return false;
}

/*
 * "query \"@shown\" matches no site", and why, when the module asked for
 * is the reason: a module name that is not one (the executable's name,
 * say, for a site whose file registered a module) is the likely mistake.
 * Caller holds reg_lock.
 */
static void no_match_text(const struct query *q, const char *shown, char *buf, size_t size)
{
	if (q->module && !module_known(q->module))
		snprintf(buf, size, "query \"%s\" matches no site (no site has module \"%s\")",
			 shown, q->module);
	else
		snprintf(buf, size, "query \"%s\" matches no site", shown);
}

/*
 * How exec_queries() reports.  @err gets each malformed query's reason,
 * "; "-separated in order and cut at @errlen ("" if none was), so that a
 * pasted list with two mistakes names both; @env, if set, also names each
 * on stderr on a line of its own; @warn, if set, prefixes a warning on
 * stderr for each query that matched nothing;
 * @counts, if set, adds each query's matches to its slot (-1: malformed),
 * and then nothing is said about queries that matched nothing: the
 * caller sums over objects and decides (PK_DYNDBG).
 */
struct exec_report {
	char *err;
	size_t errlen;
	const char *warn;
	int *counts;
	const char *env;
};

/*
 * The next query of a writable copy of a query list, at *@pos: queries
 * are ';' or newline separated, their leading blanks skipped, and empty
 * ones and comments ('#' first) passed over.  The separator after it is
 * overwritten with a NUL and *@pos moved past it (NULL after the last).
 * Shared by exec_queries() and report_env_unmatched(), which number the
 * queries alike.  Return: the query, or NULL when none is left.
 */
static char *next_query(char **pos)
{
	char *q, *split;

	while ((q = *pos)) {
		split = strpbrk(q, ";\n");
		if (split)
			*split++ = '\0';
		*pos = split;
		while (isspace((unsigned char)*q))
			q++;
		if (*q && *q != '#')
			return q;
	}
	return NULL;
}

/*
 * Run queries @text (';' or newline separated) on objects [@from, @to).
 * A failing query is skipped; the others still apply.  Caller holds
 * reg_lock.  Return: matches, or -EINVAL, -ENOMEM.
 */
static int exec_queries(const char *text, int from, int to, const struct exec_report *rep)
{
	char msg[256] = "";
	struct errbuf e = { msg, sizeof(msg) };
	int nfound = 0, rc, ret = 0, k = 0;
	char *copy, *pos, *q, *shown;
	struct query pq;
	size_t used = 0;

	if (rep->err && rep->errlen)
		rep->err[0] = '\0';
	copy = strdup(text);
	shown = malloc(strlen(text) + 1);
	if (!copy || !shown) {
		free(copy);
		free(shown);
		return -ENOMEM;
	}
	for (pos = copy; (q = next_query(&pos)); k++) {
		strcpy(shown, q);
		rc = exec_one(q, &pq, from, to, &e);
		if (rc < 0) {
			ret = rc;
			if (rep->err && used + 1 < rep->errlen) {
				int n = snprintf(rep->err + used, rep->errlen - used,
						 "%s%s (query \"%s\")", used ? "; " : "", msg, shown);

				used = n < 0 ? rep->errlen : used + (size_t)n;
			}
			if (rep->env)
				fprintf(stderr, "libprintk: %s: %s (query \"%s\"); that query is ignored\n",
					rep->env, msg, shown);
			if (rep->counts)
				rep->counts[k] = -1;
			continue;
		}
		nfound += rc;
		if (rep->counts) {
			if (rep->counts[k] >= 0)
				rep->counts[k] += rc;
		} else if (rc == 0 && rep->warn) {
			no_match_text(&pq, shown, msg, sizeof(msg));
			fprintf(stderr, "libprintk: %s: %s\n", rep->warn, msg);
		}
	}
	free(shown);
	free(copy);
	return ret < 0 ? ret : nfound;
}

/* Queries in @text, as exec_queries() counts them. */
static int count_queries(const char *text)
{
	int n = 1;

	for (; *text; text++)
		n += *text == ';' || *text == '\n';
	return n;
}

/* ---- registry ------------------------------------------------------------ */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void atfork_release(void)
{
	pthread_mutex_unlock(&reg_lock);
}

static void atfork_setup(void)
{
	pthread_atfork(atfork_prepare, atfork_release, atfork_release);
}

/* The object's name: its file's base name, less ".so" and what follows. */
static void object_name(const void *addr, char *out, size_t size)
{
	const char *path = NULL, *base, *so;
	Dl_info info;
	size_t n;

	if (dladdr(addr, &info) && info.dli_fname && *info.dli_fname)
		path = info.dli_fname;
	if (!path)
		path = program_invocation_short_name;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	so = strstr(base, ".so");
	n = so && (so[3] == '\0' || so[3] == '.') ? (size_t)(so - base) : strlen(base);
	if (n >= size)
		n = size - 1;
	memcpy(out, base, n);
	out[n] = '\0';
}

static void read_env(void)
{
	const char *v;

	env_read = true;
	v = secure_getenv("PK_DYNDBG");
	if (v && *v) {
		env_query = strdup(v);
		env_counts = env_query ? calloc((size_t)count_queries(v), sizeof(int)) : NULL;
		if (!env_counts) {
			fprintf(stderr, "libprintk: PK_DYNDBG: %s; it is ignored\n", strerror(ENOMEM));
			free(env_query);
			env_query = NULL;
		}
	}
	v = secure_getenv("PK_DYNDBG_LIST");
	env_list = v && *v && strcmp(v, "0");
}

/* Line for @s into @buf (@size), as the control file shows it.  Return: length. */
static size_t site_line(const struct pk_dyndbg_site *s, char *buf, size_t size)
{
	char flags[PK__ARRAY_SIZE(opt_array) + 1], *f = flags;
	const char *p;
	size_t n, i;
	int len;

	for (i = 0; i < PK__ARRAY_SIZE(opt_array); i++)
		if (__atomic_load_n(&s->flags, __ATOMIC_RELAXED) & opt_array[i].flag)
			*f++ = opt_array[i].c;
	if (f == flags)
		*f++ = '_';
	*f = '\0';
	len = snprintf(buf, size, "%s:%u [%s]%s =%s \"", s->filename, s->lineno,
		       site_module(s), s->function, flags);
	n = len < 0 ? 0 : (size_t)len;
	for (p = s->format; *p; p++) {
		char esc = *p == '\t' ? 't' : *p == '\r' ? 'r' : *p == '\n' ? 'n' : 0;

		if (esc && n + 2 < size) {
			buf[n++] = '\\';
			buf[n++] = esc;
		} else if (!esc && n + 1 < size) {
			buf[n++] = *p;
		}
	}
	if (n + 2 < size) {
		buf[n++] = '"';
		buf[n++] = '\n';
	}
	if (n < size)
		buf[n] = '\0';
	return n;
}

/* Bytes a site's line may need. */
static size_t line_size(const struct pk_dyndbg_site *s)
{
	return strlen(s->filename) + strlen(site_module(s)) + strlen(s->function) +
	       2 * strlen(s->format) + 48;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* List the sites of object @i to @fd.  Caller holds reg_lock. */
static int list_object(int i, int fd)
{
	struct pk_dyndbg_site *s;
	int n = 0, rc;

	for (s = objects[i].start; s < objects[i].stop; s++) {
		size_t size = line_size(s);
		char *line = malloc(size);

		if (!line)
			return -ENOMEM;
		rc = write_all(fd, line, site_line(s, line, size));
		free(line);
		if (rc)
			return rc;
		n++;
	}
	return n;
}

static const char list_header[] = "# filename:lineno [module]function flags format\n";

/*
 * Warn, once, about each PK_DYNDBG query that matched no site of the
 * objects registered so far (env_counts).  Caller holds reg_lock.
 */
static void report_env_unmatched(void)
{
	char msg[256] = "", *copy, *pos, *q;
	struct errbuf e = { msg, sizeof(msg) };
	struct flag_settings m;
	struct query pq;
	int k = 0;

	if (!env_query || env_unmatched_done)
		return;
	env_unmatched_done = true;
	copy = strdup(env_query);
	if (!copy)
		return;
	for (pos = copy; (q = next_query(&pos)); k++) {
		char shown[200];

		snprintf(shown, sizeof(shown), "%s", q);
		if (env_counts[k] != 0 || parse_one(q, &pq, &m, &e) < 0)
			continue;
		no_match_text(&pq, shown, msg, sizeof(msg));
		fprintf(stderr, "libprintk: PK_DYNDBG: %s\n", msg);
	}
	free(copy);
}

/* Is @addr in the executable (not a shared object)? */
static bool in_executable(const void *addr)
{
	Dl_info self, exe;

	/* AT_PHDR: the executable's program headers, mapped in its first segment. */
	return dladdr(addr, &self) && dladdr((const void *)getauxval(AT_PHDR), &exe) &&
	       self.dli_fbase == exe.dli_fbase;
}

/*
 * A site's module: its file's (printk.h MODULES), else PK_MODNAME's,
 * else its object's name.
 */
static void name_site(struct pk_dyndbg_site *s, const char *object)
{
	const struct pk_module *mod = s->module ? s->module() : NULL;
	const char *name = mod && mod->name && *mod->name ? mod->name : NULL;

	if (!name && !__atomic_load_n(&s->modname, __ATOMIC_RELAXED))
		name = object;
	if (name)
		/* LMM(site_mod:A) pairs with LMM(site_mod:B) in site_module() */
		__atomic_store_n(&s->modname, name, __ATOMIC_RELEASE);
}

/* First registration of object @i: name its sites, PK_DYNDBG, PK_DYNDBG_LIST. */
static void register_object(int i)
{
	struct exec_report rep = { 0 };
	struct object *o = &objects[i];
	struct pk_dyndbg_site *s;
	char err[320];

	object_name(o->start, o->name, sizeof(o->name));
	for (s = o->start; s < o->stop; s++)
		name_site(s, o->name);
	rep.err = err;
	rep.errlen = sizeof(err);
	rep.counts = env_counts;
	/* Each bad query is named once, for the first object it fails on. */
	rep.env = env_reported ? NULL : "PK_DYNDBG";
	if (env_query && exec_queries(env_query, i, i + 1, &rep) < 0)
		env_reported = true;
	/*
	 * The executable's constructors run after those of the shared objects
	 * it was linked with: its sites are the last to register before
	 * main().  A query that matched none by then names something that is
	 * not there (a dlopen()ed object's sites still get it later).
	 */
	if (env_query && in_executable(o->start))
		report_env_unmatched();
	if (env_list) {
		if (!list_header_done)
			write_all(STDERR_FILENO, list_header, sizeof(list_header) - 1);
		list_header_done = true;
		list_object(i, STDERR_FILENO);
	}
}

int pk_dyndbg_register_sites(struct pk_dyndbg_site *start, struct pk_dyndbg_site *stop)
{
	int i, free_slot = -1, ret = 0;

	if (!start || stop <= start)
		return -EINVAL;
	pthread_once(&atfork_once, atfork_setup);
	pthread_mutex_lock(&reg_lock);
	if (!env_read)
		read_env();
	for (i = 0; i < PK_DYNDBG_MAX_OBJECTS; i++) {
		if (objects[i].refs && objects[i].start == start)
			break;
		if (!objects[i].refs && free_slot < 0)
			free_slot = i;
	}
	if (i < PK_DYNDBG_MAX_OBJECTS) {
		objects[i].refs++;
	} else if (free_slot < 0) {
		ret = -ENOSPC;
	} else {
		objects[free_slot].start = start;
		objects[free_slot].stop = stop;
		objects[free_slot].refs = 1;
		register_object(free_slot);
	}
	pthread_mutex_unlock(&reg_lock);
	return ret;
}

int pk_dyndbg_unregister_sites(struct pk_dyndbg_site *start, struct pk_dyndbg_site *stop)
{
	int i, ret = -ENOENT;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_DYNDBG_MAX_OBJECTS; i++) {
		if (objects[i].refs && objects[i].start == start && objects[i].stop == stop) {
			objects[i].refs--;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return ret;
}

/* ---- API ----------------------------------------------------------------- */

/*
 * A program whose executable has no sites of its own: PK_DYNDBG queries
 * that matched nothing are named at exit, not never.  A trylock: exit()
 * from a pk_dyndbg_list_cb() callback, which holds the registry, must not
 * hang on it.
 */
__attribute__((destructor)) static void report_env_at_exit(void)
{
	if (pthread_mutex_trylock(&reg_lock))
		return;
	report_env_unmatched();
	pthread_mutex_unlock(&reg_lock);
}

static int exec_locked(const char *query, const struct exec_report *rep)
{
	int ret;

	if (!query) {
		if (rep->err && rep->errlen)
			snprintf(rep->err, rep->errlen, "no query");
		return -EINVAL;
	}
	pthread_mutex_lock(&reg_lock);
	ret = exec_queries(query, 0, PK_DYNDBG_MAX_OBJECTS, rep);
	pthread_mutex_unlock(&reg_lock);
	return ret;
}

int pk_dyndbg_exec(const char *query, char *err, size_t errlen)
{
	struct exec_report rep = { err, errlen, NULL, NULL, NULL };

	return exec_locked(query, &rep);
}

int pk_dyndbg_query(const char *query)
{
	char err[320];
	struct exec_report rep = { err, sizeof(err), "dyndbg", NULL, NULL };
	int ret = exec_locked(query, &rep);

	if (ret == -EINVAL)
		pk_printk(PK_ERR, "dyndbg: %s\n", err);
	return ret;
}

int pk_dyndbg_list(int fd)
{
	int i, n = 0, rc = 0;

	pthread_mutex_lock(&reg_lock);
	rc = write_all(fd, list_header, sizeof(list_header) - 1);
	for (i = 0; i < PK_DYNDBG_MAX_OBJECTS && !rc; i++) {
		if (!objects[i].refs)
			continue;
		rc = list_object(i, fd);
		if (rc > 0)
			n += rc;
		if (rc > 0)
			rc = 0;
	}
	pthread_mutex_unlock(&reg_lock);
	return rc < 0 ? rc : n;
}

int pk_dyndbg_list_cb(int (*cb)(void *ctx, const struct pk_dyndbg_site *site,
				const char *line, size_t len),
		      void *ctx)
{
	struct pk_dyndbg_site *s;
	int i, n = 0, rc = 0;

	if (!cb)
		return -EINVAL;
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_DYNDBG_MAX_OBJECTS && !rc; i++) {
		if (!objects[i].refs)
			continue;
		for (s = objects[i].start; s < objects[i].stop && !rc; s++) {
			size_t size = line_size(s);
			char *line = malloc(size);

			if (!line) {
				rc = -ENOMEM;
				break;
			}
			rc = cb(ctx, s, line, site_line(s, line, size));
			free(line);
			if (!rc)
				n++;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return rc ? rc : n;
}

/* ---- printing ------------------------------------------------------------ */

/* The kernel's __dynamic_emit_prefix(): "[tid] module:function:line: ". */
static size_t emit_prefix(const struct pk_dyndbg_site *s, unsigned flags, char *buf)
{
	size_t pos = 0, after_tid;
	int n = 0;

	if (flags & PK_DYNDBG_TID)
		n = pk__stbsp_snprintf(buf, PREFIX_SIZE, "[%u] ", (unsigned)pk__tid());
	pos = n > 0 ? (size_t)n : 0;
	after_tid = pos;
	if (flags & PK_DYNDBG_MODNAME && pos < PREFIX_SIZE)
		pos += (size_t)pk__stbsp_snprintf(buf + pos, (int)(PREFIX_SIZE - pos), "%s:",
						  site_module(s));
	if (flags & PK_DYNDBG_FUNCNAME && pos < PREFIX_SIZE)
		pos += (size_t)pk__stbsp_snprintf(buf + pos, (int)(PREFIX_SIZE - pos), "%s:",
						  s->function);
	if (flags & PK_DYNDBG_LINENO && pos < PREFIX_SIZE)
		pos += (size_t)pk__stbsp_snprintf(buf + pos, (int)(PREFIX_SIZE - pos), "%u:",
						  s->lineno);
	if (pos != after_tid && pos < PREFIX_SIZE)
		pos += (size_t)pk__stbsp_snprintf(buf + pos, (int)(PREFIX_SIZE - pos), " ");
	if (pos >= PREFIX_SIZE)
		pos = PREFIX_SIZE - 1;
	buf[pos] = '\0';
	return pos;
}

/* A format too long to join with the prefix: format it apart. */
static __attribute__((noinline)) int print_apart(const struct pk_module *mod,
						   const struct pk_srcloc *loc, const char *prefix,
						   const char *fmt, va_list ap)
{
	char msg[PK_RECORD_MAX + 1];

	/* A kernel format (PK_KFMT first) keeps its %p extensions. */
	if (pk__stbsp_vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		return -EINVAL;
	return pk_printk_loc(mod, loc, PK_DEBUG, "%s%s", prefix, msg);
}

int pk_dyndbg_vprintk(const struct pk_dyndbg_site *site, const char *fmt, va_list ap)
{
	return pk_dyndbg_vprintk_mod(NULL, site, fmt, ap);
}

int pk_dyndbg_vprintk_mod(const struct pk_module *mod, const struct pk_dyndbg_site *site,
			  const char *fmt, va_list ap)
{
	char prefix[PREFIX_SIZE], joined[256];
	size_t plen, flen, n = 0, i;
	struct pk_module as;
	struct pk_srcloc loc;
	unsigned flags;

	if (!site || !fmt)
		return -EINVAL;
	/* The record carries its site's place, as the level macros' do. */
	loc.file = site->filename;
	loc.func = site->function;
	loc.line = site->lineno;
	loc.file_len = 0;
	loc.func_len = 0;
	/*
	 * The site is enabled: its record is stored at PK_DEBUG whatever its
	 * module's level, as the kernel prints an enabled pr_debug() at
	 * KERN_DEBUG whatever else is set; the site's switch is the more
	 * specific one.  The record still carries the module's name: it goes
	 * out as a module of that name that lets PK_DEBUG through.  Built on
	 * the stack, from fields that do not change (name) or are read
	 * atomically (namelen): no lock, no allocation, signal-safe.
	 */
	if (mod) {
		as.name = mod->name;
		as.level = PK_DEBUG;
		as.default_level = PK_DEBUG;
		as.next = NULL;
		as.namelen = __atomic_load_n(&mod->namelen, __ATOMIC_RELAXED);
		as.reserved = 0;
		mod = &as;
	}
	/* LMM(site_flags) */
	flags = __atomic_load_n(&site->flags, __ATOMIC_RELAXED);
	if (!(flags & (PK_DYNDBG_TID | PK_DYNDBG_MODNAME | PK_DYNDBG_FUNCNAME | PK_DYNDBG_LINENO)))
		return pk_vprintk_loc(mod, &loc, PK_DEBUG, fmt, ap);
	plen = emit_prefix(site, flags, prefix);
	flen = strlen(fmt);
	/* The prefix joins the format, its '%' doubled: one pk_vprintk. */
	if (2 * plen + flen + 1 > sizeof(joined))
		return print_apart(mod, &loc, prefix, fmt, ap);
	/* A kernel format's PK_KFMT stays in front of the prefix. */
	if (fmt[0] == PK_KFMT[0] && fmt[1] == PK_KFMT[1]) {
		joined[n++] = *fmt++;
		joined[n++] = *fmt++;
		flen -= 2;
	}
	for (i = 0; i < plen; i++) {
		if (prefix[i] == '%')
			joined[n++] = '%';
		joined[n++] = prefix[i];
	}
	memcpy(joined + n, fmt, flen + 1);
	return pk_vprintk_loc(mod, &loc, PK_DEBUG, joined, ap);
}

int pk_dyndbg_printk(const struct pk_dyndbg_site *site, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_dyndbg_vprintk(site, fmt, ap);
	va_end(ap);
	return ret;
}

int pk_dyndbg_printk_mod(const struct pk_module *mod, const struct pk_dyndbg_site *site,
			 const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pk_dyndbg_vprintk_mod(mod, site, fmt, ap);
	va_end(ap);
	return ret;
}
