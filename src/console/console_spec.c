// SPDX-License-Identifier: MIT
/*
 * console_spec.c - the PK_CONSOLE grammar: a comma-separated list of
 * console entries, each ENTRY[@LEVEL][%BYTES_PER_SEC] followed by its
 * options (KEY=VALUE items), turned into drivers and registered.  Apart
 * from the registry, which knows no syntax.  The grammar, quoting
 * included, is documented with pk_config_init() in printk/printk.h.
 *
 *   stderr | stdout | fd:N | file:PATH | syslog | syslog:SOCKET |
 *   journal | journal:SOCKET | net:HOST:PORT | net:[IPV6]:PORT |
 *   syslog+udp://HOST[:PORT] | syslog+tcp://HOST[:PORT] | syslog+relp://HOST[:PORT]
 *   | syslog+unix://PATH | netconsole://HOST[:PORT] | netconsole+ext://HOST[:PORT]
 *
 * A bad entry is reported on stderr, naming it (its first SHOW_MAX bytes),
 * and skipped with its options, once, however long; the others still
 * count.  At init (pk__console_register_env), a PK_CONSOLE none of
 * whose entries could be used falls back to stderr, saying so once: a typo
 * must not leave the program with no output at all.  An empty PK_CONSOLE
 * (no entries) means no console, as asked.
 *
 * Numbers are overflow-checked: fd:N up to 2^20, a port 1-65535, a rate
 * 1-10^9 bytes/s; a level is a digit 0-8 or a whole level name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console/consoles.h"
#include "format/format.h"
#include "store/store.h"

/* HOST:PORT or [IPV6]:PORT */
static int net_entry(char *s, struct pk_console_driver *drv)
{
	char *colon, *end, *host = s;
	unsigned long port;

	if (*s == '[') {
		end = strchr(s, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		*end = '\0';
		host = s + 1;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		*colon = '\0';
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || !port || port > 65535 || !*host)
		return -EINVAL;
	if (!drv)
		return 0;	/* parse only */
	return pk_console_net_make(host, (unsigned)port, drv);
}

/*
 * netconsole://HOST[:PORT] and netconsole+ext://HOST[:PORT] (HOST may be
 * [IPV6]; PORT 6666 if left out, Linux netconsole's remote port).
 */
static int netconsole_entry(const char *name, struct pk_console_driver *drv)
{
	bool ext = !strncmp(name, "netconsole+ext://", 17);
	char host[512], *s = host, *colon, *end;
	unsigned long port = 6666;

	name += ext ? 17 : 13;
	if (!*name || strlen(name) >= sizeof(host))
		return -EINVAL;
	strcpy(host, name);
	if (*s == '[') {
		end = strchr(s, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		*end = '\0';
		colon = end[1] ? end + 1 : NULL;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (colon)
			*colon = '\0';
	}
	if (colon) {
		if (colon[1] < '0' || colon[1] > '9')
			return -EINVAL;
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (errno || *end || !port || port > 65535)
			return -EINVAL;
	}
	if (!*s)
		return -EINVAL;
	if (!drv)
		return 0;	/* parse only */
	return ext ? pk_console_netext_make(s, (unsigned)port, drv)
		   : pk_console_net_make(s, (unsigned)port, drv);
}


/* Longest item (a path, quoted or not). */
#define ITEM_MAX	4200

/*
 * One item, unquoted: @buf holds its text; @at and @pct index its last
 * '@' and '%' outside quotes and escapes (-1: none); @key is the length of
 * an option's key (0: not an option).
 */
struct item {
	char buf[ITEM_MAX];
	size_t len;
	long at, pct;
	size_t key;
};

/* What read_item() says of an item longer than ITEM_MAX - 1 bytes. */
#define ITEM_TOO_LONG	(-E2BIG)

/*
 * Read the item at *@pp up to an unquoted ',' (or the end), unquoting it
 * into @it; *@pp is left at the ',' or the end, whatever the item holds,
 * so that a bad item is skipped whole.  Return: 0, -EINVAL for an
 * unterminated quote or a trailing backslash, ITEM_TOO_LONG.
 */
static int read_item(const char **pp, struct item *it)
{
	const char *p = *pp;
	bool quoted = false, lit;
	int ret = 0;
	size_t k;
	char c;

	it->len = 0;
	it->at = it->pct = -1;
	it->key = 0;
	for (; *p && (quoted || *p != ','); p++) {
		c = *p;
		lit = quoted;
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		if (c == '\\' && (!quoted || p[1] == '"' || p[1] == '\\')) {
			if (!p[1]) {
				p++;	/* the end: nothing follows to escape */
				ret = ret ? ret : -EINVAL;
				break;
			}
			c = *++p;
			lit = true;
		}
		if (it->len >= sizeof(it->buf) - 1) {
			/* Read on to its end (quotes still count), keeping nothing. */
			ret = ITEM_TOO_LONG;
			continue;
		}
		if (!lit && c == '@')
			it->at = (long)it->len;
		if (!lit && c == '%')
			it->pct = (long)it->len;
		if (!lit && c == '=' && !it->key) {
			for (k = 0; k < it->len && it->buf[k] >= 'a' && it->buf[k] <= 'z'; k++)
				;
			if (k && k == it->len && *pp + k == p)
				it->key = k;	/* lower-case letters, unquoted, then '=' */
		}
		it->buf[it->len++] = c;
	}
	*pp = p;
	it->buf[it->len] = '\0';
	if (!ret && quoted)
		ret = -EINVAL;
	return ret;
}

/* A console being put together from its entry and options. */
struct spec_con {
	char name[ITEM_MAX];
	const char *label;	/* name=, else NULL: the entry */
	char label_buf[256];
	int level;
	unsigned long bps;
	unsigned fmt;		/* kind | PK_FMT_F_*, or FMT_DRIVER for the driver's */
	unsigned flags;		/* PK_FMT_F_* set by options */
	unsigned flags_off;	/* PK_FMT_F_* cleared by options */
	bool is_file;
	bool is_fd;		/* stderr, stdout, fd:N: color= applies */
	int color;		/* COLOR_AUTO, COLOR_ON, COLOR_OFF */
	struct pk_file_opts fo;
	bool is_5424;		/* syslog+udp://, +tcp://, +relp://, +unix:// */
	struct pk_rfc5424_opts so;
	bool is_journal;	/* journal, journal:SOCKET */
	char app[64];
	char why[320];		/* what was wrong, when something was */
};

/*
 * Say in @sc->why what was wrong with the entry or option: the value
 * given and what was expected.  Return: -EINVAL.
 */
static int refuse(struct spec_con *sc, const char *fmt, ...) PK__PRINTF(2, 3);
static int refuse(struct spec_con *sc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sc->why, sizeof(sc->why), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The value a message quotes: its first 64 bytes. */
#define VAL(v)	(int)(strlen(v) > 64 ? 64 : strlen(v)), (v)
#define FMT_DRIVER	0xffu

enum { COLOR_AUTO, COLOR_ON, COLOR_OFF };

/*
 * color=auto: the level's color when @fd is a terminal, unless NO_COLOR
 * is set to anything but "" (no-color.org) or TERM is "dumb".  Decided
 * once, when the console is registered; the write path only reads the
 * console's flag.
 */
static bool color_auto(int fd)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (no && *no)
		return false;
	if (term && !strcmp(term, "dumb"))
		return false;
	return isatty(fd) == 1;
}

/* The descriptor of an fd-driver entry (stderr, stdout, fd:N), or -1. */
static int entry_fd(const char *name)
{
	if (!strcmp(name, "stderr"))
		return STDERR_FILENO;
	if (!strcmp(name, "stdout"))
		return STDOUT_FILENO;
	if (!strncmp(name, "fd:", 3))
		return (int)strtol(name + 3, NULL, 10);
	return -1;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes"))
		*out = true;
	else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* Digits only, at most @max. */
static int parse_num(const char *s, int base, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!*s || !((*s >= '0' && *s <= '9')))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, base);
	if (errno || *end || *out > max)
		return -EINVAL;
	return 0;
}

static int set_flag(struct spec_con *sc, const char *key, const char *v, unsigned flag)
{
	bool on;

	if (parse_bool(v, &on))
		return refuse(sc, "%s=\"%.*s\": expected on or off (1 or 0, yes or no)", key,
			      VAL(v));
	sc->flags = on ? sc->flags | flag : sc->flags & ~flag;
	sc->flags_off = on ? sc->flags_off & ~flag : sc->flags_off | flag;
	return 0;
}

/* facility=: a name of syslog(3) (user, daemon, local0 ...) or 0-23. */
static int parse_facility(const char *v, int *out)
{
	static const char *const names[] = {
		"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp",
		"cron", "authpriv", "ftp", NULL, NULL, NULL, NULL, "local0", "local1",
		"local2", "local3", "local4", "local5", "local6", "local7",
	};
	unsigned long long n;
	size_t i;

	for (i = 0; i < PK__ARRAY_SIZE(names); i++)
		if (names[i] && !strcmp(v, names[i]))
			break;
	if (i == PK__ARRAY_SIZE(names)) {
		if (parse_num(v, 10, 23, &n))
			return -EINVAL;
		i = (size_t)n;
	}
	/* kern (0) in the options means "each record's own": ask for it there. */
	*out = (int)i << 3;
	return 0;
}

/*
 * syslog+udp://HOST[:PORT], syslog+tcp://HOST[:PORT], syslog+relp://HOST[:PORT]
 * (HOST may be [IPV6]), syslog+unix://PATH: RFC 5424 consoles (@sc->so holds
 * their options).
 */
static int syslog5424_entry(struct spec_con *sc, struct pk_console_driver *drv)
{
	char host[512], *s = host, *colon = NULL, *end;
	unsigned long port = 0;
	size_t pre = 13;

	if (!strncmp(sc->name, "syslog+unix://", 14)) {
		sc->so.transport = PK_SYSLOG_UNIX;
		sc->so.host = sc->name + 14;
		return drv ? pk_console_rfc5424_make(&sc->so, drv) : 0;
	}
	if (!strncmp(sc->name, "syslog+relp://", 14)) {
		sc->so.transport = PK_SYSLOG_RELP;
		pre = 14;
	} else {
		sc->so.transport = sc->name[7] == 'u' ? PK_SYSLOG_UDP : PK_SYSLOG_TCP;
	}
	if (strlen(sc->name + pre) >= sizeof(host))
		return -EINVAL;
	strcpy(host, sc->name + pre);
	if (*s == '[') {
		end = strchr(s, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		*end = '\0';
		colon = end[1] ? end + 1 : NULL;
		s++;
	} else if ((colon = strrchr(s, ':'))) {
		*colon = '\0';
	}
	if (colon) {
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (errno || *end || !port || port > 65535 || colon[1] < '0' || colon[1] > '9')
			return -EINVAL;
	}
	if (!*s)
		return -EINVAL;
	sc->so.host = s;
	sc->so.port = (unsigned)port;
	return drv ? pk_console_rfc5424_make(&sc->so, drv) : 0;
}

static int apply_option(struct spec_con *sc, const char *key, size_t klen, const char *v)
{
	static const char *const fmts[] = { "human", "kmsg", "syslog", "json", "raw" };
	unsigned long long n;
	size_t i;
	char *colon;
	char tmp[64];

#define KEY(k) (klen == sizeof(k) - 1 && !memcmp(key, k, klen))
	if (KEY("fmt") && sc->is_journal)
		return refuse(sc, "option \"fmt\" is not for journal consoles (they speak "
			      "journald's protocol)");
	if (KEY("fmt")) {
		for (i = 0; i < PK__ARRAY_SIZE(fmts); i++)
			if (!strcmp(v, fmts[i]))
				break;
		if (i == PK__ARRAY_SIZE(fmts))
			return refuse(sc, "unknown format \"%.*s\" (expected human, kmsg, syslog, "
				      "json or raw)", VAL(v));
		sc->fmt = (unsigned)i;
		return 0;
	}
	if (KEY("tid"))
		return set_flag(sc, "tid", v, PK_FMT_F_TID);
	if (KEY("level"))
		return set_flag(sc, "level", v, PK_FMT_F_LEVEL);
	if (KEY("loc"))
		return set_flag(sc, "loc", v, PK_FMT_F_LOC);
	if (KEY("time")) {
		sc->flags &= ~(PK_FMT_F_CTIME | PK_FMT_F_RFC3339);
		sc->flags_off |= PK_FMT_F_CTIME | PK_FMT_F_RFC3339;
		if (!strcmp(v, "ctime"))
			sc->flags |= PK_FMT_F_CTIME;
		else if (!strcmp(v, "rfc3339"))
			sc->flags |= PK_FMT_F_RFC3339;
		else if (strcmp(v, "uptime"))
			return refuse(sc, "unknown time \"%.*s\" (expected uptime, ctime or rfc3339)",
				      VAL(v));
		sc->flags_off &= ~sc->flags;
		return 0;
	}
	if (KEY("loglevel")) {
		if (pk__parse_level(v, &sc->level))
			return refuse(sc, "unknown level \"%.*s\" (expected " PK__LOGLEVEL_WANT
				      ", see libprintk(7))", VAL(v));
		return 0;
	}
	if (KEY("color") && sc->is_fd) {
		bool on;

		if (!strcmp(v, "auto"))
			sc->color = COLOR_AUTO;
		else if (!parse_bool(v, &on))
			sc->color = on ? COLOR_ON : COLOR_OFF;
		else
			return refuse(sc, "color=\"%.*s\": expected auto, on or off", VAL(v));
		return 0;
	}
	if (KEY("color"))
		return refuse(sc, "option \"color\" is for stderr, stdout and fd:N consoles only");
	if (KEY("rate")) {
		if (parse_num(v, 10, 1000000000ull, &n) || !n)
			return refuse(sc, "bad rate \"%.*s\" (expected 1-1000000000 bytes a second)",
				      VAL(v));
		sc->bps = (unsigned long)n;
		return 0;
	}
	if (KEY("name")) {
		if (!*v || strlen(v) >= sizeof(sc->label_buf))
			return refuse(sc, "bad name (expected 1-%zu bytes)", sizeof(sc->label_buf) - 1);
		strcpy(sc->label_buf, v);
		sc->label = sc->label_buf;
		return 0;
	}
	if (KEY("mode") && sc->is_file) {
		if (parse_num(v, 8, 0777, &n))
			return refuse(sc, "bad mode \"%.*s\" (expected octal permissions, 0-0777)",
				      VAL(v));
		sc->fo.mode = (unsigned)n;
		return 0;
	}
	if (KEY("facility") && sc->is_5424) {
		if (parse_facility(v, &sc->so.facility))
			return refuse(sc, "unknown facility \"%.*s\" (expected kern, user, mail, "
				      "daemon, auth, syslog, lpr, news, uucp, cron, authpriv, ftp, "
				      "local0-local7 or 0-23)", VAL(v));
		return 0;
	}
	if (KEY("app") && (sc->is_5424 || sc->is_journal)) {
		if (!*v || strlen(v) >= sizeof(sc->app))
			return refuse(sc, "bad app (expected 1-%zu bytes)", sizeof(sc->app) - 1);
		strcpy(sc->app, v);
		sc->so.app_name = sc->app;
		return 0;
	}
	if (KEY("rotate") && sc->is_file) {
		size_t size;

		colon = strchr(v, ':');
		if (!colon || (size_t)(colon - v) >= sizeof(tmp) ||
		    (memcpy(tmp, v, (size_t)(colon - v)), tmp[colon - v] = '\0',
		     pk__parse_size(tmp, &size)) || !size || parse_num(colon + 1, 10, 999, &n))
			return refuse(sc, "bad rotate \"%.*s\" (expected SIZE:COUNT, SIZE bytes "
				      "with k, m or g, COUNT 0-999)", VAL(v));
		sc->fo.rotate_size = size;
		sc->fo.rotate_count = (unsigned)n;
		return 0;
	}
	if (KEY("mode") || KEY("rotate"))
		return refuse(sc, "option \"%.*s\" is for file: consoles only", (int)klen, key);
	if (KEY("facility"))
		return refuse(sc, "option \"%.*s\" is for syslog+*:// consoles only", (int)klen,
			      key);
	if (KEY("app"))
		return refuse(sc, "option \"%.*s\" is for syslog+*:// and journal consoles only",
			      (int)klen, key);
#undef KEY
	return refuse(sc, "unknown option \"%.*s\" (expected fmt, tid, level, loc, time, loglevel, "
		      "rate, name; color for stderr, stdout, fd:N; mode, rotate for file:; "
		      "facility, app for syslog+*://; app for journal)",
		      (int)(klen > 64 ? 64 : klen), key);
}

/*
 * @sc's entry, which make_entry() refused as written: what it should
 * have been.
 */
static int refuse_entry(struct spec_con *sc)
{
	const char *n = sc->name;

	if (!strncmp(n, "fd:", 3))
		return refuse(sc, "bad \"%.*s\" (expected fd:N, N 0-1048576)", VAL(n));
	if (!strcmp(n, "file:"))
		return refuse(sc, "no path (expected file:PATH)");
	if (!strncmp(n, "net:", 4))
		return refuse(sc, "bad \"%.*s\" (expected net:HOST:PORT or net:[IPV6]:PORT, "
			      "PORT 1-65535)", VAL(n));
	if (!strncmp(n, "netconsole", 10))
		return refuse(sc, "bad \"%.*s\" (expected netconsole://HOST[:PORT] or "
			      "netconsole+ext://HOST[:PORT], PORT 1-65535)", VAL(n));
	if (!strncmp(n, "syslog+", 7))
		return refuse(sc, "bad \"%.*s\" (expected syslog+udp://, syslog+tcp:// or "
			      "syslog+relp://HOST[:PORT], PORT 1-65535, or syslog+unix://PATH)",
			      VAL(n));
	if (!strcmp(n, "journal:"))
		return refuse(sc, "no socket (expected journal or journal:SOCKET)");
	/* The message quotes the entry already. */
	return refuse(sc, "not a console (expected stderr, stdout, fd:N, file:PATH, syslog, "
		      "syslog:SOCKET, journal, journal:SOCKET, net:HOST:PORT, "
		      "syslog+udp|tcp|relp://HOST[:PORT], syslog+unix://PATH or "
		      "netconsole[+ext]://HOST[:PORT])");
}

/*
 * The console @sc names, made into @drv; with @drv NULL, parsed only:
 * nothing is opened, resolved or looked up (pk__console_spec_check()).
 */
static int make_entry(struct spec_con *sc, struct pk_console_driver *drv)
{
	const char *tmp = sc->name;
	char *end;
	long fd;

	if (!strcmp(tmp, "stderr") || !strcmp(tmp, "stdout")) {
		if (!drv)
			return 0;
		return pk_console_fd_make(tmp[3] == 'e' ? STDERR_FILENO : STDOUT_FILENO, drv);
	}
	if (!strncmp(tmp, "fd:", 3)) {
		errno = 0;
		fd = strtol(tmp + 3, &end, 10);
		if (errno || end == tmp + 3 || *end || fd < 0 || fd > 1 << 20)
			return -EINVAL;
		if (!drv)
			return 0;
		/* Not the store file's own: text would land on its header. */
		if (fcntl((int)fd, F_GETFD) < 0 || (int)fd == pk__st.mem_fd)
			return -EBADF;
		return pk_console_fd_make((int)fd, drv);
	}
	if (sc->is_file)
		return drv ? pk_console_file_make_opts(tmp + 5, &sc->fo, drv) : 0;
	if (!strcmp(tmp, "syslog"))
		return drv ? pk_console_syslog_make(NULL, NULL, drv) : 0;
	if (!strncmp(tmp, "syslog:", 7) && tmp[7])
		return drv ? pk_console_syslog_make(tmp + 7, NULL, drv) : 0;
	if (sc->is_5424)
		return syslog5424_entry(sc, drv);
	if (sc->is_journal)
		return drv ? pk_console_journal_make(tmp[7] ? tmp + 8 : NULL,
						     sc->app[0] ? sc->app : NULL, drv) : 0;
	if (!strncmp(tmp, "netconsole://", 13) || !strncmp(tmp, "netconsole+ext://", 17))
		return netconsole_entry(tmp, drv);
	if (!strncmp(tmp, "net:", 4) && strlen(tmp) < 512) {
		char host[512];

		strcpy(host, tmp + 4);
		return net_entry(host, drv);
	}
	return -EINVAL;
}

/*
 * The entry item @it: its name, then @LEVEL and %RATE.  A '%' is the rate
 * only when digits alone follow it (so "net:[fe80::1%eth0]:514" is a name).
 */
static int parse_entry(struct item *it, struct spec_con *sc)
{
	size_t end = it->len;
	unsigned long long n;

	memset(sc, 0, sizeof(*sc));
	sc->level = -1;
	sc->fmt = FMT_DRIVER;
	if (it->pct >= 0 && it->pct > it->at && it->buf[it->pct + 1] &&
	    strspn(it->buf + it->pct + 1, "0123456789") == it->len - (size_t)it->pct - 1) {
		if (parse_num(it->buf + it->pct + 1, 10, 1000000000ull, &n) || !n)
			return refuse(sc, "bad rate \"%%%.*s\" (expected 1-1000000000 bytes a "
				      "second)", VAL(it->buf + it->pct + 1));
		sc->bps = (unsigned long)n;
		end = (size_t)it->pct;
		it->buf[end] = '\0';
	}
	if (it->at >= 0) {
		if (pk__parse_level(it->buf + it->at + 1, &sc->level))
			return refuse(sc, "unknown level \"%.*s\" (expected " PK__LOGLEVEL_WANT
				      ", see libprintk(7))", VAL(it->buf + it->at + 1));
		end = (size_t)it->at;
		it->buf[end] = '\0';
	}
	memcpy(sc->name, it->buf, end + 1);
	sc->is_file = !strncmp(sc->name, "file:", 5) && sc->name[5];
	sc->is_fd = entry_fd(sc->name) >= 0;
	sc->is_5424 = (!strncmp(sc->name, "syslog+udp://", 13) ||
		       !strncmp(sc->name, "syslog+tcp://", 13) ||
		       !strncmp(sc->name, "syslog+unix://", 14)) && sc->name[13];
	sc->is_5424 |= !strncmp(sc->name, "syslog+relp://", 14) && sc->name[14];
	sc->is_journal = !strcmp(sc->name, "journal") ||
			 (!strncmp(sc->name, "journal:", 8) && sc->name[8]);
	return 0;
}

static int register_one(struct spec_con *sc, bool config)
{
	struct pk_console_driver drv, thr;
	struct pk_console *c;
	unsigned fmt;
	int ret;

	ret = make_entry(sc, &drv);
	if (ret < 0)
		return ret;
	fmt = sc->fmt == FMT_DRIVER ? drv.format : sc->fmt;
	fmt = (fmt | sc->flags) & ~sc->flags_off;
	if (sc->is_fd && (sc->color == COLOR_ON ||
			  (sc->color == COLOR_AUTO && color_auto(entry_fd(sc->name)))))
		fmt |= PK_FMT_F_COLOR;
	if (sc->bps) {
		ret = pk_console_throttle_make(&drv, sc->bps, &thr);
		if (ret < 0) {
			/* @drv is still ours: the throttle takes it only on success. */
			if (drv.ops->release)
				drv.ops->release(drv.ctx);
			return ret;
		}
		drv = thr;
	}
	c = pk__con_register_named(drv.ops, drv.ctx, sc->level, fmt,
				   sc->label ? sc->label : sc->name, config);
	if (!c) {
		ret = -errno;
		if (drv.ops->release)
			drv.ops->release(drv.ctx);
		return ret;
	}
	return 0;
}

/* The most of an entry a message quotes: the rest is counted. */
#define SHOW_MAX	200

/*
 * Say that the entry from @from to @to was refused, and why: @why if the
 * parser said, else @err's text.  @src names where the list came from
 * (PK_CONSOLE, pk_config.consoles, pk_console_register_spec()).
 */
static void bad(const char *src, const char *from, const char *to, int err, const char *why)
{
	size_t n = (size_t)(to - from);
	char buf[64];

	if (err == ITEM_TOO_LONG)
		snprintf(buf, sizeof(buf), "an item is longer than %d bytes", ITEM_MAX - 1);
	else
		snprintf(buf, sizeof(buf), "%s", strerror(-err));
	if (!why || !*why)
		why = buf;
	if (n <= SHOW_MAX)
		fprintf(stderr, "libprintk: %s: ignoring \"%.*s\": %s\n", src, (int)n, from, why);
	else
		fprintf(stderr, "libprintk: %s: ignoring \"%.*s...\" (%zu bytes): %s\n",
			src, SHOW_MAX, from, n, why);
}

/*
 * Register @spec's entries; *@bad counts those refused.  Return: registered.
 * With @check, parse only: nothing is opened, registered or said.
 */
static int register_spec(const char *src, const char *spec, bool config, bool check, int *nbad)
{
	struct {
		struct item it;
		struct spec_con sc;
	} *w = malloc(sizeof(*w));
	const char *p = spec, *from, *end;
	int n = 0, ret;

	*nbad = 0;
	if (!w) {
		fprintf(stderr, "libprintk: %s: %s\n", src, strerror(ENOMEM));
		(*nbad)++;
		return 0;
	}
#define it (w->it)
#define sc (w->sc)
	while (*p) {
		from = p;
		ret = read_item(&p, &it);
		if (!ret && !it.len) {
			if (*p)
				p++;
			continue;
		}
		sc.why[0] = '\0';
		if (ret == -EINVAL)
			refuse(&sc, "an unterminated quote, or a backslash at the end");
		else if (!ret && it.key)
			ret = refuse(&sc, "an option with no console before it");
		if (!ret)
			ret = parse_entry(&it, &sc);
		end = p;	/* what a refusal names: the entry and its options */
		/* Its options. */
		while (*p == ',') {
			const char *save = p++;
			int r = read_item(&p, &it);

			if (!r && !it.len)
				continue;
			if (!it.key) {
				p = save;	/* the next console (bad or not: its own) */
				break;
			}
			if (!ret && r) {
				ret = r;
				if (r == -EINVAL)
					refuse(&sc, "an unterminated quote, or a backslash at the end");
			}
			if (!ret) {
				it.buf[it.key] = '\0';
				ret = apply_option(&sc, it.buf, it.key, it.buf + it.key + 1);
			}
			end = p;
		}
		/* Parsed first, so that a malformed entry is told as such, not as EINVAL. */
		if (!ret && make_entry(&sc, NULL) < 0)
			ret = refuse_entry(&sc);
		if (!ret && !check)
			ret = register_one(&sc, config);
		if (ret < 0) {
			if (!check)
				bad(src, from, end, ret, sc.why);
			(*nbad)++;
		} else {
			n++;
		}
		if (*p)
			p++;
	}
#undef it
#undef sc
	free(w);
	return n;
}

int pk_console_register_spec(const char *spec)
{
	int bad, ret;

	if (!spec)
		return -EINVAL;
	/* As pk_console_register(): the consoles need the store they print. */
	ret = pk__ensure_init();
	if (ret < 0)
		return ret;
	return register_spec("pk_console_register_spec()", spec, false, false, &bad);
}

int pk__console_register_env(const char *spec)
{
	struct pk_console_driver drv;
	const char *env, *src;
	int n, bad;

	if (!spec)
		return -EINVAL;
	/*
	 * Where the list came from, for its messages: the user's variable
	 * (pk_config_init() points pk_config.consoles at it), or the
	 * program's own pk_config.consoles.
	 */
	env = secure_getenv("PK_CONSOLE");
	src = env && !strcmp(env, spec) ? "PK_CONSOLE" : "pk_config.consoles";
	n = register_spec(src, spec, true, false, &bad);
	atomic_store_explicit(&pk__g.consoles_failed, (unsigned)bad, memory_order_relaxed);
	if (n > 0 || !bad)
		return n;
	if (strlen(spec) <= SHOW_MAX)
		fprintf(stderr,
			"libprintk: %s=\"%s\" has no usable console; printing to stderr\n",
			src, spec);
	else
		fprintf(stderr, "libprintk: %s=\"%.*s...\" (%zu bytes) has no usable "
			"console; printing to stderr\n", src, SHOW_MAX, spec, strlen(spec));
	if (pk_console_fd_make(STDERR_FILENO, &drv) < 0)
		return 0;
	if (!pk__con_register_named(drv.ops, drv.ctx, -1,
				    drv.format | (color_auto(STDERR_FILENO) ? PK_FMT_F_COLOR : 0),
				    "stderr", true)) {
		if (drv.ops->release)
			drv.ops->release(drv.ctx);
		return 0;
	}
	return 1;
}


int pk__console_spec_check(const char *spec, int *nbad)
{
	int bad;

	if (!spec)
		return -EINVAL;
	return register_spec(NULL, spec, false, true, nbad ? nbad : &bad);
}
