// SPDX-License-Identifier: MIT
/*
 * pkmsg - print or follow the records of a libprintk store file, as
 * dmesg(1) does for the kernel's log.  See docs/man/pkmsg.1.
 *
 * The store file is untrusted input: the library validates it, pkmsg
 * escapes control bytes in the text it prints for a terminal.
 *
 * A store of several lanes is read merged (reader.h): each record's seq
 * counts within its lane, so gaps are found and reported lane by lane, a
 * position is a cursor (--show-cursor, --after-cursor), and --since-seq,
 * a seq of one lane, is refused for it.
 *
 * Exit status: 0 success, 1 the file is missing, unreadable or not a
 * store, 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "store/lanes.h"	/* PK_LANES_MAX */
#include "store/store.h"	/* pk__mod_list_match() */
#include "printk/printk.h"
#include "printk/reader.h"
#include "store/ringbuf.h"

#define EXIT_NOSTORE	1
#define EXIT_USAGE	2

/* How long a dump waits for records in progress before it gives up. */
#define SETTLE_MS	2000

/* --field options one command takes. */
#define FIELD_FILTERS	16

/* --color's WHEN, and the pager's state. */
enum { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

struct opts {
	const char *path;
	unsigned fmt;		/* enum pk_format | PK_FMT_F_* */
	unsigned levels;	/* bit per level to print */
	bool follow, follow_new, clear, stats;
	bool have_since, have_tid, have_pid;
	bool have_lines;	/* -n: the last @lines records (of those the filters pass) */
	bool have_after, have_before;	/* --since, --until: @after, @before */
	bool have_grep;		/* -g: @re */
	bool no_pager;
	bool show_cursor;	/* --show-cursor */
	const char *after_cursor;	/* --after-cursor */
	int color;		/* COLOR_* */
	uint64_t since;
	uint64_t lines;
	int64_t after, before;	/* wall-clock ns, CLOCK_REALTIME */
	regex_t re;
	uint32_t tid, pid;
	const char *modules;	/* --module: comma-separated patterns, "-" for none */
	const char *fields[FIELD_FILTERS];	/* --field KEY=VALUE, all must match */
	unsigned nfields;
};

static void usage(FILE *f)
{
	fputs("Usage: pkmsg [options] [-F FILE]\n"
	      "Print the records of a libprintk store file (default: $PK_BUFFER).\n"
	      "\n"
	      "  -F, --file FILE       the store file\n"
	      "  -w, --follow          wait for new records\n"
	      "  -W, --follow-new      wait for and print only new records\n"
	      "  -n, --lines N         only the last N records (of those the other filters\n"
	      "                        pass); with -w, the last N, then the new ones\n"
	      "  -l, --level LIST      only these levels: names or numbers, comma-separated;\n"
	      "                        N-M is a range, err+ adds the more urgent levels,\n"
	      "                        +err the less urgent ones\n"
	      "  -S, --since TIME      only records from TIME on\n"
	      "  -U, --until TIME      only records up to TIME; TIME is YYYY-MM-DD [HH:MM[:SS]],\n"
	      "                        HH:MM[:SS] (today), now, today, yesterday, tomorrow,\n"
	      "                        @SECONDS, -SPAN, +SPAN or 'SPAN ago' (SPAN: 10min,\n"
	      "                        1h 30min; units s, min, h, d, w), in local time\n"
	      "  -g, --grep RE         only records whose text matches the POSIX extended\n"
	      "                        regular expression RE\n"
	      "      --case-sensitive[=yes|no]  how --grep compares (default: without\n"
	      "                        upper-case letters in RE, ignoring case)\n"
	      "      --since-seq N     start at sequence number N (a store of one lane)\n"
	      "      --after-cursor C  start after the position cursor C names\n"
	      "      --show-cursor     print the cursor after the last record printed\n"
	      "      --pid N           only records of process N\n"
	      "      --tid N           only records of thread N\n"
	      "      --module LIST     only records of these modules (comma-separated,\n"
	      "                        '*' and '?' patterns, '-' for records without one)\n"
	      "      --field KEY=VALUE only records with this field (exact match;\n"
	      "                        repeat it: records with all of them)\n"
	      "      --show-tid        print the thread id of each record\n"
	      "      --show-loc        print each record's call site (file:line func)\n"
	      "  -T, --ctime           print human-readable dates\n"
	      "  -d, --show-delta      print the time since the previous printed record\n"
	      "  -r, --raw             kmsg format: prio,seq,ts_usec,flags;text (flags then\n"
	      "                        ,lane=L in a store of several lanes)\n"
	      "  -J, --json            JSON Lines\n"
	      "  -L, --color[=WHEN]    color the text by level: auto (the default: on a\n"
	      "                        terminal, unless NO_COLOR is set), always or never\n"
	      "  -P, --no-pager        do not page the output (a terminal's output goes\n"
	      "                        through $PAGER, else less, else more; never with -w)\n"
	      "      --syslog          <prio>[  sec.usec] text, as dmesg -F reads\n"
	      "      --stats           print the store's counters\n"
	      "  -C, --clear           clear: readers start after the records stored so far\n"
	      "  -h, --help            this text\n"
	      "\n"
	      "Long options are taken only as written in full.\n"
	      "Levels: emerg alert crit err warn notice info debug (0-7).\n"
	      "Exit status: 0 ok, 1 no such file or not a store, 2 bad usage.\n",
	      f);
}

/* Does @rec carry field "KEY=VALUE" @kv (checked by field_filter_ok())? */
static bool field_match(const struct pk_record *rec, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t klen = (size_t)(eq - kv), i;

	for (i = 0; rec->fields && i < rec->nfields; i++)
		if (strlen(rec->fields[i].key) == klen && !memcmp(rec->fields[i].key, kv, klen) &&
		    !strcmp(rec->fields[i].value, eq + 1))
			return true;
	return false;
}

/* A --field argument: KEY=VALUE with a key a record can carry (printk.h). */
static bool field_filter_ok(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq && pk__field_key_ok(kv, (size_t)(eq - kv));
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "pkmsg: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'pkmsg --help'.\n");
	return EXIT_USAGE;
}

/*
 * getopt_long() takes any unambiguous prefix of a long option: "--since 160"
 * would be "--since-seq 160", and adding an option "--since" later would
 * silently change what such a command line means.  pkmsg takes long options
 * only as written in full.  @arg is the argv element getopt_long() just
 * matched to @opt; refused with a usage error naming both when it is not
 * "--" followed by the exact name (and "=VALUE" for an option with one).
 */
static bool exact_long_option(const char *arg, const struct option *opt)
{
	size_t n = strlen(opt->name);

	if (strncmp(arg, "--", 2) == 0 && strncmp(arg + 2, opt->name, n) == 0 &&
	    (arg[2 + n] == '\0' || (arg[2 + n] == '=' && opt->has_arg != no_argument)))
		return true;
	fprintf(stderr, "pkmsg: unrecognized option '%.*s': long options are not abbreviated "
		"(did you mean '--%s'?)\nTry 'pkmsg --help'.\n",
		(int)strcspn(arg, "="), arg, opt->name);
	return false;
}

/* A level name or digit 0-7 (pk__level_parse(), as PK_MODULES).  The level, or -1. */
static int one_level(const char *s, size_t n)
{
	return pk__level_parse(s, n, PK__LEVEL);
}

/* "err,warn", "0-3", "err+", "+warn".  Bit mask of levels, or 0. */
static unsigned parse_levels(const char *list)
{
	unsigned mask = 0;
	const char *p = list, *end, *dash;
	int a, b, l;

	do {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			return 0;	/* empty item */
		dash = memchr(p, '-', (size_t)(end - p));
		if (end > p && *p == '+') {
			l = one_level(p + 1, (size_t)(end - p - 1));
			a = l;
			b = 7;
		} else if (end > p && end[-1] == '+') {
			l = one_level(p, (size_t)(end - p - 1));
			a = 0;
			b = l;
		} else if (dash) {
			a = one_level(p, (size_t)(dash - p));
			b = one_level(dash + 1, (size_t)(end - dash - 1));
			l = a < 0 || b < 0 || a > b ? -1 : a;
		} else {
			l = a = b = one_level(p, (size_t)(end - p));
		}
		if (l < 0)
			return 0;
		for (l = a; l <= b; l++)
			mask |= 1u << l;
		p = end + 1;
	} while (*end);
	return mask;
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/*
 * TIMES (--since, --until), journalctl's forms, in local time:
 *
 *   YYYY-MM-DD HH:MM:SS, YYYY-MM-DD HH:MM, YYYY-MM-DD (midnight), the same
 *   with 'T' for the space; HH:MM:SS, HH:MM (today); now, today,
 *   yesterday, tomorrow (midnight); @SECONDS since the epoch; -SPAN,
 *   +SPAN, SPAN ago: a span before or after now, numbers with units
 *   ("10min", "1h 30min", "2 days"; a number alone is seconds).
 *
 * A record's wall-clock time is the one -T prints: pk__realtime_ns() of
 * its timestamp and the store's realtime zero (format.h).
 */
#define TIME_FORMS	"YYYY-MM-DD [HH:MM[:SS]], HH:MM[:SS], now, today, yesterday, " \
			"tomorrow, @SECONDS, -SPAN, +SPAN or 'SPAN ago' (SPAN like 10min or " \
			"1h 30min; units s, min, h, d, w)"
#define NS	1000000000ll
/* Far enough for any log: ten thousand years of seconds. */
#define SPAN_MAX	(10000ll * 366 * 86400)

/* Seconds in a span's unit, systemd's spellings; 0 if @u (@n bytes) is none. */
static int64_t unit_seconds(const char *u, size_t n)
{
	static const struct { const char *name; int64_t sec; } units[] = {
		{ "s", 1 }, { "sec", 1 }, { "secs", 1 }, { "second", 1 }, { "seconds", 1 },
		{ "m", 60 }, { "min", 60 }, { "mins", 60 }, { "minute", 60 }, { "minutes", 60 },
		{ "h", 3600 }, { "hr", 3600 }, { "hour", 3600 }, { "hours", 3600 },
		{ "d", 86400 }, { "day", 86400 }, { "days", 86400 },
		{ "w", 604800 }, { "week", 604800 }, { "weeks", 604800 },
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == n && !memcmp(units[i].name, u, n))
			return units[i].sec;
	return 0;
}

/* "1h 30min", "10 min", "90": seconds, or -1.  Parses @s up to @end. */
static int64_t parse_span(const char *s, const char *end)
{
	int64_t total = 0, v, mul;
	const char *u;
	bool any = false;

	for (;;) {
		while (s < end && *s == ' ')
			s++;
		if (s == end)
			return any ? total : -1;
		if (*s < '0' || *s > '9')
			return -1;
		for (v = 0; s < end && *s >= '0' && *s <= '9'; s++) {
			v = v * 10 + (*s - '0');
			if (v > SPAN_MAX)
				return -1;
		}
		while (s < end && *s == ' ')
			s++;
		for (u = s; s < end && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')); s++)
			;
		mul = u == s ? 1 : unit_seconds(u, (size_t)(s - u));
		if (!mul || v > SPAN_MAX / mul || total + v * mul > SPAN_MAX)
			return -1;
		total += v * mul;
		any = true;
	}
}

/* Midnight, local time, @days from today's (@now seconds). */
static bool midnight(time_t now, int days, time_t *out)
{
	struct tm tm;

	if (!localtime_r(&now, &tm))
		return false;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_mday += days;
	tm.tm_isdst = -1;
	*out = mktime(&tm);
	return *out != (time_t)-1;
}

/* A date and time of the forms above, local time: seconds since the epoch. */
static bool parse_clock(const char *s, time_t now, time_t *out)
{
	static const char *const dated[] = {
		"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M",
		"%Y-%m-%d",
	};
	static const char *const undated[] = { "%H:%M:%S", "%H:%M" };
	struct tm tm, want;
	const char *end;
	size_t i;

	for (i = 0; i < sizeof(dated) / sizeof(dated[0]) + 2; i++) {
		memset(&tm, 0, sizeof(tm));
		if (i >= sizeof(dated) / sizeof(dated[0])) {
			/* Today's date, the time given. */
			if (!localtime_r(&now, &tm))
				return false;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			end = strptime(s, undated[i - sizeof(dated) / sizeof(dated[0])], &tm);
		} else {
			end = strptime(s, dated[i], &tm);
		}
		if (!end || *end || s[0] == ' ')
			continue;
		tm.tm_isdst = -1;
		want = tm;
		*out = mktime(&tm);
		/* mktime() moves a day that does not exist (02-30) on: refused. */
		return *out != (time_t)-1 && tm.tm_mday == want.tm_mday &&
		       tm.tm_mon == want.tm_mon && tm.tm_year == want.tm_year;
	}
	return false;
}

/*
 * Seconds @sec, plus @add_ns, as ns: a time before 1677 or after 2262 is
 * beyond 64 bits of nanoseconds, and is taken as the earliest or the latest
 * there is (as far as a filter on a record's time goes, the same).
 */
static int64_t ns_at(int64_t sec, int64_t add_ns)
{
	int64_t ns;

	if (__builtin_mul_overflow(sec, NS, &ns) || __builtin_add_overflow(ns, add_ns, &ns))
		return sec < 0 || (sec == 0 && add_ns < 0) ? INT64_MIN : INT64_MAX;
	return ns;
}

/* @s as wall-clock ns (CLOCK_REALTIME), or false. */
static bool parse_time(const char *s, int64_t *out)
{
	struct timespec ts;
	int64_t now, span;
	size_t n = strlen(s);
	time_t t;
	char *end;
	long long v;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * NS + ts.tv_nsec;
	if (!strcmp(s, "now")) {
		*out = now;
		return true;
	}
	if (!strcmp(s, "today") || !strcmp(s, "yesterday") || !strcmp(s, "tomorrow")) {
		if (!midnight(ts.tv_sec, s[0] == 'y' ? -1 : s[2] == 'm' ? 1 : 0, &t))
			return false;
		*out = ns_at(t, 0);
		return true;
	}
	if (s[0] == '@') {
		if (s[1] < '0' || s[1] > '9')
			return false;
		errno = 0;
		v = strtoll(s + 1, &end, 10);
		if (errno || *end || v > SPAN_MAX)
			return false;
		*out = ns_at(v, 0);
		return true;
	}
	if (s[0] == '-' || s[0] == '+') {
		span = parse_span(s + 1, s + n);
		if (span < 0)
			return false;
		*out = s[0] == '-' ? ns_at(-span, now) : ns_at(span, now);
		return true;
	}
	if (n > 4 && !strcmp(s + n - 4, " ago")) {
		span = parse_span(s, s + n - 4);
		if (span < 0)
			return false;
		*out = ns_at(-span, now);
		return true;
	}
	if (!parse_clock(s, ts.tv_sec, &t))
		return false;
	*out = ns_at(t, 0);
	return true;
}

static int bad_time(const char *opt, const char *arg)
{
	fprintf(stderr, "pkmsg: bad time '%s' for %s: expected " TIME_FORMS "\n"
		"Try 'pkmsg --help'.\n", arg, opt);
	return EXIT_USAGE;
}

/* --grep RE: compiled, case folded by @icase.  0, or the usage error. */
static int compile_grep(struct opts *o, const char *re, int icase)
{
	char why[256];
	const char *p;
	int ret;

	if (icase < 0) {
		/* As journalctl: a pattern without upper-case letters ignores case. */
		for (p = re, icase = 1; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				icase = 0;
	}
	ret = regcomp(&o->re, re, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
	if (ret) {
		regerror(ret, &o->re, why, sizeof(why));
		fprintf(stderr, "pkmsg: bad regular expression '%s' for --grep: %s (expected a "
			"POSIX extended regular expression)\nTry 'pkmsg --help'.\n", re, why);
		return EXIT_USAGE;
	}
	o->have_grep = true;
	return 0;
}

/*
 * Does @rec pass the filters (level, thread, process, module, fields,
 * time, --grep)?  @zero is the store's realtime zero.
 */
static bool wanted(const struct opts *o, const struct pk_record *rec, int64_t zero)
{
	unsigned i;

	if (!(o->levels & (1u << (rec->level & 7))))
		return false;
	if (o->have_tid && rec->tid != o->tid)
		return false;
	if (o->have_pid && rec->pid != o->pid)
		return false;
	if (o->modules && !pk__mod_list_match(o->modules, rec->module))
		return false;
	for (i = 0; i < o->nfields; i++)
		if (!field_match(rec, o->fields[i]))
			return false;
	if (o->have_after && pk__realtime_ns(rec->ts_ns, zero) < o->after)
		return false;
	if (o->have_before && pk__realtime_ns(rec->ts_ns, zero) > o->before)
		return false;
	return !o->have_grep || regexec(&o->re, rec->text, 0, NULL, 0) == 0;
}

/*
 * PAGER.  As journalctl: on a terminal, the output goes through $PAGER
 * (run by sh; empty or "cat": none), else less, else more, else straight
 * out.  LESS and LESSCHARSET get journalctl's defaults when unset: quit if
 * one screen (F), raw colors (R), chop long lines (S), no init (X),
 * prompt (M), quit on ^C (K).  A pager that cannot be started is reported
 * back through a close-on-exec pipe, and pkmsg prints without one.
 * A set-id pkmsg (AT_SECURE: run with more rights than its caller's) pages
 * never: $PAGER is the caller's command, and less runs any command ('!'),
 * either one with the rights pkmsg was given.
 */
static pid_t pager_pid = -1;

static void start_pager(void)
{
	const char *pager = getenv("PAGER");
	int out[2], st[2], err = 0;
	ssize_t n;
	pid_t pid;

	if (getauxval(AT_SECURE) || (pager && (!*pager || !strcmp(pager, "cat"))))
		return;
	if (pipe2(out, O_CLOEXEC) < 0)
		return;
	if (pipe2(st, O_CLOEXEC) < 0) {
		close(out[0]);
		close(out[1]);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (dup2(out[0], STDIN_FILENO) < 0)
			_exit(127);
		setenv("LESS", "FRSXMK", 0);
		setenv("LESSCHARSET", "utf-8", 0);
		if (pager) {
			execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		} else {
			execlp("less", "less", (char *)NULL);
			execlp("more", "more", (char *)NULL);
		}
		err = errno;
		n = write(st[1], &err, sizeof(err));
		(void)n;
		_exit(127);
	}
	close(out[0]);
	close(st[1]);
	n = pid > 0 ? read(st[0], &err, sizeof(err)) : -1;
	close(st[0]);
	if (n != 0) {	/* no fork, or no exec: print without a pager */
		if (pid > 0)
			waitpid(pid, NULL, 0);
		close(out[1]);
		return;
	}
	dup2(out[1], STDOUT_FILENO);
	close(out[1]);
	pager_pid = pid;
}

/* The output is complete: let the pager have its end, and wait for it. */
static void end_pager(void)
{
	if (pager_pid < 0)
		return;
	fflush(stdout);
	close(STDOUT_FILENO);
	while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	pager_pid = -1;
}

static const char *open_error(const char *path, int err)
{
	static char msg[320];
	char why[256];
	uint32_t v[3];
	struct stat pre, st;
	int fd;

	switch (err) {
	case EINVAL:
		/*
		 * What is not a regular file is refused before it is opened,
		 * with the same error as a corrupt store: say which it is.
		 * stat() only looks (the reader follows a symlink the same way).
		 */
		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return S_ISDIR(st.st_mode) ? "a directory, not a store file" :
			       S_ISFIFO(st.st_mode) ? "a FIFO, not a store file (not opened)" :
			       S_ISSOCK(st.st_mode) ? "a socket, not a store file" :
			       S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ?
				"a device, not a store file (not opened)" :
				"not a regular file, not a store file";
		/* The library's own words for what is wrong, if it has some. */
		if (pk__persist_explain(path, why, sizeof(why)) == -EINVAL && why[0]) {
			snprintf(msg, sizeof(msg), "%s", why);
			return msg;
		}
		return "not a libprintk store, or corrupt";
	case EPROTO:
		/*
		 * Name both versions: the header's third word is its version.
		 * Opened as the reader opens a store: nothing but a regular
		 * file (looked at first: opening a device is an act of its
		 * own), no symlink followed, and a FIFO swapped in meanwhile
		 * cannot make us wait.
		 */
		if (lstat(path, &pre) < 0 || !S_ISREG(pre.st_mode))
			return pk_strerror(-EPROTO);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_dev == pre.st_dev && st.st_ino == pre.st_ino &&
		    pread(fd, v, sizeof(v), 0) == (ssize_t)sizeof(v)) {
			close(fd);
			/* Lane 0 is of this version: another lane is not; the library says which. */
			if (v[2] == PK_RING_VERSION) {
				if (pk__persist_explain(path, why, sizeof(why)) == -EPROTO && why[0])
					snprintf(msg, sizeof(msg), "%s", why);
				else
					snprintf(msg, sizeof(msg), "%s", pk_strerror(-EPROTO));
				return msg;
			}
			snprintf(msg, sizeof(msg),
				 "%s: version %u, this pkmsg reads version %u%s", pk_strerror(-EPROTO),
				 v[2], PK_RING_VERSION,
				 v[2] < PK_RING_VERSION ? " (read it with the pkmsg that wrote it)" : "");
			return msg;
		}
		if (fd >= 0)
			close(fd);
		return pk_strerror(-EPROTO);
	default:
		/* A store this build cannot read (ENOTSUP): the library's words. */
		if (err == ENOTSUP && pk__persist_explain(path, why, sizeof(why)) == -err && why[0]) {
			snprintf(msg, sizeof(msg), "%s", why);
			return msg;
		}
		return strerror(err);
	}
}

static void print_stats(const char *path, const struct pk_store_info *in)
{
	printf("file:             %s\n", path);
	printf("format version:   %u\n", PK_RING_VERSION);
	printf("lanes:            %u\n", in->lanes);
	printf("live:             %s\n", in->live ? "yes" : "no");
	printf("generation:       %llu\n", (unsigned long long)in->generation);
	printf("last opener pid:  %d\n", (int)in->creator_pid);
	printf("first seq:        %llu\n", (unsigned long long)in->first_seq);
	printf("next seq:         %llu\n", (unsigned long long)in->next_seq);
	printf("oldest seq:       %llu\n", (unsigned long long)in->oldest_seq);
	printf("clear seq:        %llu\n", (unsigned long long)in->clear_seq);
	printf("stored:           %llu\n", (unsigned long long)(in->next_seq - in->first_seq));
	printf("overwritten:      %llu\n", (unsigned long long)(in->oldest_seq - in->first_seq));
	printf("lost:             %llu\n", (unsigned long long)in->lost);
	printf("reserve failed:   %llu\n", (unsigned long long)in->reserve_failed);
	printf("truncated:        %llu\n", (unsigned long long)in->truncated);
	printf("refused:          %llu\n", (unsigned long long)in->refused);
	printf("data ring bytes:  %llu\n", (unsigned long long)in->data_size);
	printf("descriptors:      %llu\n", (unsigned long long)in->desc_count);
}

/*
 * A follower registers in the store header's waiter count while it sleeps.
 * Interrupted (^C), it must leave through pk_reader_wait's exit path, which
 * takes itself off the count; so these signals only set a flag and break
 * the sleep (no SA_RESTART), and are re-raised once the reader is closed.
 * (Killed outright, it leaves the count raised; its lease, which writers
 * also check, runs out within a second, so they stop waking nobody.)
 */
static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static void catch_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/*
 * The store is mapped: if its file shrinks under us (truncated by another
 * process, or an I/O error on its disk), touching the lost pages raises
 * SIGBUS.  That is bad input, not a bug of ours, so it ends in a clear
 * message and exit status 1.  The reader only copies records out of the
 * mapping into private memory before anything is printed, so jumping out
 * of it leaves stdio and our state intact; the reader is abandoned.
 */
static sigjmp_buf bus_jump;
static off_t size_at_open;	/* of the store file, when it was opened */

static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(bus_jump, 1);
}

static void catch_bus_errors(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_bus;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
}

static int bus_error(const char *path)
{
	struct stat st;

	fflush(stdout);
	if (stat(path, &st) == 0 && st.st_size < size_at_open)
		fprintf(stderr, "pkmsg: %s: the store file was truncated while being read "
			"(%lld bytes, was %lld)\n", path, (long long)st.st_size,
			(long long)size_at_open);
	else
		fprintf(stderr, "pkmsg: %s: bus error reading the store file (I/O error?)\n",
			path);
	return EXIT_NOSTORE;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct pk_reader *open_store(const struct opts *o)
{
	struct pk_reader *r;

	if (o->clear)
		return pk_reader_open_file_flags(o->path, PK_READER_WRITABLE);
	if (o->follow) {
		/*
		 * Writable lets the writers wake us; without permission, or
		 * through a symlink (never followed into writing: ELOOP), poll.
		 */
		r = pk_reader_open_file_flags(o->path, PK_READER_WRITABLE);
		if (r || (errno != EACCES && errno != EPERM && errno != EROFS && errno != ELOOP))
			return r;
	}
	return pk_reader_open_file(o->path);
}

/*
 * Where the reader is in each lane of a store of @lanes lanes: the seq
 * after the last record printed or passed over (a record of its lane with
 * a higher seq means the ones between were lost), and where the store
 * ended when pkmsg started.  A store of one lane uses lane 0 only, with
 * the reader's own seq (pk_reader_tell()) as before lanes.
 */
struct lanes_pos {
	unsigned lanes;
	uint64_t expect[PK_LANES_MAX];
	uint64_t end[PK_LANES_MAX];
};

/* Has the reader passed, in every lane, what the store held at the start? */
static bool lanes_done(const struct pk_reader *r, const struct lanes_pos *p)
{
	unsigned i;

	for (i = 0; i < p->lanes; i++)
		if (pk_reader_tell_lane(r, i) < p->end[i])
			return false;
	return true;
}

/*
 * A store of several lanes: each lane's end now (the reader sent to the
 * end and back to the cursor @here).  0, or a negative errno.
 */
static int lanes_ends(struct pk_reader *r, struct lanes_pos *p, const char *here)
{
	unsigned i;

	pk_reader_seek(r, UINT64_MAX);
	for (i = 0; i < p->lanes; i++)
		p->end[i] = pk_reader_tell_lane(r, i);
	return pk_reader_seek_cursor(r, here);
}

/*
 * -n N: where the last N records the filters pass begin, from the reader's
 * position up to @end (the next seq when pkmsg started).  A first pass
 * keeps the seqs of the last N in a ring; the reader is left at the
 * oldest of them (at @end for none).  Return: 0, or a negative errno.
 */
static int tail_start(struct pk_reader *r, const struct opts *o, uint64_t end, int64_t zero)
{
	uint64_t from = pk_reader_tell(r), *ring, cap, count = 0;
	struct pk_record rec;
	int ret = 0;

	if (!o->lines) {
		pk_reader_seek(r, end);
		return 0;
	}
	/* No more than the store can hold from here. */
	cap = end > from ? end - from : 1;
	if (cap > o->lines)
		cap = o->lines;
	ring = malloc(cap * sizeof(*ring));
	if (!ring)
		return -ENOMEM;
	while (pk_reader_tell(r) < end && (ret = pk_reader_next(r, &rec)) > 0) {
		if (rec.seq >= end)
			break;
		if (wanted(o, &rec, zero))
			ring[count++ % cap] = rec.seq;
	}
	if (ret < 0) {
		free(ring);
		return ret;
	}
	/* Fewer than N: all of them, from where the reader began. */
	pk_reader_seek(r, count < o->lines ? from : ring[count % cap]);
	free(ring);
	return 0;
}

/*
 * -n N in a store of several lanes, whose seqs are no position: a first
 * pass from the cursor @from counts the records the filters pass up to
 * each lane's end (@p), a second from @from again passes over all but the
 * last N of them.  The reader is left after the last one passed over (at
 * the ends for N = 0).  Return: 0, or a negative errno.
 */
static int tail_start_lanes(struct pk_reader *r, const struct opts *o, const struct lanes_pos *p,
			    const char *from, int64_t zero)
{
	struct pk_record rec;
	uint64_t count = 0, skip;
	int ret = 0;

	if (!o->lines) {
		pk_reader_seek(r, UINT64_MAX);
		return 0;
	}
	while (!lanes_done(r, p) && (ret = pk_reader_next(r, &rec)) > 0)
		if (rec.seq < p->end[rec.lane] && wanted(o, &rec, zero))
			count++;
	if (ret < 0)
		return ret;
	ret = pk_reader_seek_cursor(r, from);
	if (ret < 0)
		return ret;
	for (skip = count > o->lines ? count - o->lines : 0; skip; ) {
		ret = pk_reader_next(r, &rec);
		if (ret <= 0)
			return ret;
		if (rec.seq < p->end[rec.lane] && wanted(o, &rec, zero))
			skip--;
	}
	return 0;
}

/* --show-cursor: the reader's position, as journalctl prints it. */
static void show_cursor(struct pk_reader *r)
{
	char cur[PK_READER_CURSOR_MAX];

	if (pk_reader_cursor(r, cur, sizeof(cur)) >= 0)
		printf("-- cursor: %s\n", cur);
}

/* A usage error found once the store is open: printed, the reader closed. */
static int store_usage(struct pk_reader *r, const char *fmt, const char *path, unsigned n)
{
	pk_reader_close(r);
	fprintf(stderr, "pkmsg: %s: ", path);
	fprintf(stderr, fmt, n);
	fprintf(stderr, "\nTry 'pkmsg --help'.\n");
	return EXIT_USAGE;
}

/*
 * Put the reader where the options say (--after-cursor, --since-seq, -W,
 * -n) and note each lane's end and position in @p.  Return: 0, or an
 * exit status (the reader then closed).
 */
static int position(struct pk_reader *r, const struct opts *o, const struct pk_store_info *info,
		    struct lanes_pos *p)
{
	char here[PK_READER_CURSOR_MAX];
	unsigned i;
	int ret;

	p->lanes = info->lanes ? info->lanes : 1;
	if (o->have_since && p->lanes > 1)
		return store_usage(r, "--since-seq: this store has %u lanes, each numbering its own "
				   "records; start at a position with --after-cursor=CURSOR "
				   "(--show-cursor prints one)", o->path, p->lanes);
	if (o->after_cursor) {
		ret = pk_reader_seek_cursor(r, o->after_cursor);
		if (ret == -EINVAL) {
			pk_reader_close(r);
			fprintf(stderr, "pkmsg: %s: cursor '%s' is malformed or not of this store "
				"(a store of %u lane%s, generation %llu)\nTry 'pkmsg --help'.\n",
				o->path, o->after_cursor, p->lanes, p->lanes > 1 ? "s" : "",
				(unsigned long long)info->generation);
			return EXIT_USAGE;
		}
		if (ret < 0)
			goto fail;
	}
	if (p->lanes == 1) {
		if (o->follow_new)
			pk_reader_seek(r, info->next_seq);
		else if (o->have_since)
			pk_reader_seek(r, o->since);
		p->end[0] = info->next_seq;
		if (o->have_lines) {
			ret = tail_start(r, o, p->end[0], info->realtime_zero_ns);
			if (ret < 0)
				goto fail;
		}
		p->expect[0] = pk_reader_tell(r);
		return 0;
	}
	if (o->follow_new)
		pk_reader_seek(r, UINT64_MAX);
	ret = pk_reader_cursor(r, here, sizeof(here));
	if (ret >= 0)
		ret = lanes_ends(r, p, here);
	if (ret >= 0 && o->have_lines)
		ret = tail_start_lanes(r, o, p, here, info->realtime_zero_ns);
	if (ret < 0)
		goto fail;
	for (i = 0; i < p->lanes; i++)
		p->expect[i] = pk_reader_tell_lane(r, i);
	return 0;
fail:
	fprintf(stderr, "pkmsg: %s: %s\n", o->path, strerror(-ret));
	pk_reader_close(r);
	return EXIT_NOSTORE;
}

/*
 * Has a dump got through what the store held when it started?  One lane:
 * the reader's seq (past lost records too); several: every lane's
 * position past its end (a lane whose last records were lost gets there
 * only with a later record, or when the settle time runs out).
 */
static bool dump_done(const struct pk_reader *r, const struct lanes_pos *p)
{
	return p->lanes == 1 ? pk_reader_tell(r) >= p->end[0] : lanes_done(r, p);
}

static int run_store(const struct opts *o)
{
	static char line[PK_FORMAT_MAX];
	static struct lanes_pos pos;
	struct pk_format_opts fo = { .fmt = o->fmt };
	struct pk_store_info info;
	struct pk_record rec;
	struct pk_reader *r;
	uint64_t waited_since = 0, *expect;
	struct stat st;
	size_t n;
	int ret;

	r = open_store(o);
	if (!r) {
		fprintf(stderr, "pkmsg: %s: %s\n", o->path, open_error(o->path, errno));
		return EXIT_NOSTORE;
	}
	if (stat(o->path, &st) == 0)
		size_at_open = st.st_size;
	catch_bus_errors();
	pk_reader_info(r, &info);
	if (o->stats) {
		print_stats(o->path, &info);
		pk_reader_close(r);
		return 0;
	}
	if (o->clear) {
		ret = pk_reader_clear(r);
		pk_reader_close(r);
		if (ret < 0) {
			fprintf(stderr, "pkmsg: %s: cannot clear: %s\n", o->path, strerror(-ret));
			return EXIT_NOSTORE;
		}
		return 0;
	}
	fo.realtime_zero_ns = info.realtime_zero_ns;
	ret = position(r, o, &info, &pos);
	if (ret)
		return ret;
	/* Seqs count within a lane: show which, where a rendering shows the seq. */
	if (pos.lanes > 1)
		fo.fmt |= PK_FMT_F_LANE;
	if (o->follow)
		catch_stop_signals();
	else if (!o->no_pager && isatty(STDOUT_FILENO) == 1)
		start_pager();

	for (;;) {
		ret = pk_reader_next(r, &rec);
		if (ret < 0) {
			fprintf(stderr, "pkmsg: %s: %s\n", o->path, strerror(-ret));
			pk_reader_close(r);
			return EXIT_NOSTORE;
		}
		if (ret > 0) {
			waited_since = 0;
			expect = &pos.expect[pos.lanes > 1 ? rec.lane : 0];
			if (rec.seq > *expect) {
				n = pos.lanes > 1 ?
				    pk__format_dropped_lane(line, sizeof(line), rec.seq - *expect,
							    o->fmt, rec.lane) :
				    pk__format_dropped(line, sizeof(line), rec.seq - *expect, o->fmt);
				fwrite(line, 1, n, stdout);
			}
			*expect = rec.seq + 1;
			if (!wanted(o, &rec, fo.realtime_zero_ns))
				continue;
			n = pk__format_record(line, sizeof(line), &rec, &fo);
			fwrite(line, 1, n, stdout);
			fo.prev_ts_ns = rec.ts_ns;
			continue;
		}
		if (fflush(stdout) == EOF)
			break;
		if (o->follow) {
			if (stop_sig)
				break;
			ret = pk_reader_wait(r, 1000);
			if (stop_sig)
				break;
			if (ret == -EFAULT)	/* the futex word's page is gone */
				return bus_error(o->path);
			if (ret < 0) {
				fprintf(stderr, "pkmsg: %s: %s\n", o->path, strerror(-ret));
				pk_reader_close(r);
				return EXIT_NOSTORE;
			}
			/* A new writer may have reopened the store. */
			pk_reader_info(r, &info);
			fo.realtime_zero_ns = info.realtime_zero_ns;
			continue;
		}
		/*
		 * A dump of a live store: records stored before we started may
		 * still be in progress (or, in a store of several lanes, held
		 * back for their grace: reader.h).  Wait for them, within a
		 * bound (the reader skips a record abandoned for a second by
		 * itself).
		 */
		if (dump_done(r, &pos))
			break;
		pk_reader_info(r, &info);
		if (!info.live)
			break;
		if (!waited_since)
			waited_since = mono_ms();
		else if (mono_ms() - waited_since > SETTLE_MS)
			break;
		pk_reader_wait(r, 50);
	}
	if (o->show_cursor)
		show_cursor(r);
	pk_reader_close(r);
	end_pager();
	if (stop_sig) {
		fflush(stdout);
		signal(stop_sig, SIG_DFL);
		raise(stop_sig);
	}
	if (ferror(stdout)) {
		fprintf(stderr, "pkmsg: write error: %s\n", strerror(errno));
		return EXIT_NOSTORE;
	}
	return 0;
}

static int run(const struct opts *o)
{
	int ret;

	/* No locals set before the jump: they would be unreliable after it. */
	if (sigsetjmp(bus_jump, 1))
		ret = bus_error(o->path);
	else
		ret = run_store(o);
	end_pager();
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_SINCE = 256, OPT_TID, OPT_PID, OPT_SYSLOG, OPT_STATS, OPT_SHOW_TID, OPT_MODULE,
	       OPT_FIELD, OPT_CASE, OPT_SHOW_LOC, OPT_SHOW_CURSOR, OPT_AFTER_CURSOR };
	static const struct option lopts[] = {
		{ "file", required_argument, NULL, 'F' },
		{ "follow", no_argument, NULL, 'w' },
		{ "follow-new", no_argument, NULL, 'W' },
		{ "level", required_argument, NULL, 'l' },
		{ "lines", required_argument, NULL, 'n' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "grep", required_argument, NULL, 'g' },
		{ "case-sensitive", optional_argument, NULL, OPT_CASE },
		{ "color", optional_argument, NULL, 'L' },
		{ "no-pager", no_argument, NULL, 'P' },
		{ "since-seq", required_argument, NULL, OPT_SINCE },
		{ "after-cursor", required_argument, NULL, OPT_AFTER_CURSOR },
		{ "show-cursor", no_argument, NULL, OPT_SHOW_CURSOR },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "module", required_argument, NULL, OPT_MODULE },
		{ "field", required_argument, NULL, OPT_FIELD },
		{ "show-tid", no_argument, NULL, OPT_SHOW_TID },
		{ "show-loc", no_argument, NULL, OPT_SHOW_LOC },
		{ "ctime", no_argument, NULL, 'T' },
		{ "show-delta", no_argument, NULL, 'd' },
		{ "raw", no_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'J' },
		{ "syslog", no_argument, NULL, OPT_SYSLOG },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "clear", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .fmt = PK_FMT_HUMAN, .levels = 0xff };
	unsigned kind = PK_FMT_HUMAN, flags = 0;
	int c, kinds = 0, li = -1, icase = -1, ret;
	const char *grep = NULL, *no_color, *term;
	uint64_t v;
	bool levels_given = false;

	while ((c = getopt_long(argc, argv, "F:wWl:n:S:U:g:L::PTdrJCh", lopts, &li)) != -1) {
		if (li >= 0) {
			/*
			 * The option's own element is the last one scanned, or
			 * the one before when its argument was the next element.
			 */
			const char *arg = argv[optind - 1];

			if (optarg == arg && optind >= 2)
				arg = argv[optind - 2];
			if (!exact_long_option(arg, &lopts[li]))
				return EXIT_USAGE;
			li = -1;
		}
		switch (c) {
		case 'F': o.path = optarg; break;
		case 'w': o.follow = true; break;
		case 'W': o.follow = o.follow_new = true; break;
		case 'l': {
			unsigned m = parse_levels(optarg);

			if (!m)
				return bad_usage("bad level list '%s': expected levels "
						 PK__LEVEL_WANT ", N-M, LEVEL+ or +LEVEL", optarg);
			/* -l err -l info: both, as dmesg(1) takes them. */
			o.levels = levels_given ? o.levels | m : m;
			levels_given = true;
			break;
		}
		case 'n':
			if (!parse_u64(optarg, UINT64_MAX, &o.lines))
				return bad_usage("bad number of lines '%s': expected 0 or more",
						 optarg);
			o.have_lines = true;
			break;
		case 'S':
			if (!parse_time(optarg, &o.after))
				return bad_time("--since", optarg);
			o.have_after = true;
			break;
		case 'U':
			if (!parse_time(optarg, &o.before))
				return bad_time("--until", optarg);
			o.have_before = true;
			break;
		case 'g': grep = optarg; break;
		case OPT_CASE:
			if (!optarg || !strcmp(optarg, "yes") || !strcmp(optarg, "true") ||
			    !strcmp(optarg, "1"))
				icase = 0;
			else if (!strcmp(optarg, "no") || !strcmp(optarg, "false") ||
				 !strcmp(optarg, "0"))
				icase = 1;
			else
				return bad_usage("bad --case-sensitive '%s': expected yes or no",
						 optarg);
			break;
		case 'L':
			if (!optarg || !strcmp(optarg, "auto"))
				o.color = COLOR_AUTO;
			else if (!strcmp(optarg, "always"))
				o.color = COLOR_ALWAYS;
			else if (!strcmp(optarg, "never"))
				o.color = COLOR_NEVER;
			else
				return bad_usage("bad color '%s': expected auto, always or never",
						 optarg);
			break;
		case 'P': o.no_pager = true; break;
		case OPT_SINCE:
			if (!parse_u64(optarg, UINT64_MAX, &o.since))
				return bad_usage("bad sequence number '%s'", optarg);
			o.have_since = true;
			break;
		case OPT_AFTER_CURSOR: o.after_cursor = optarg; break;
		case OPT_SHOW_CURSOR: o.show_cursor = true; break;
		case OPT_TID:
			if (!parse_u64(optarg, UINT32_MAX, &v))
				return bad_usage("bad thread id '%s'", optarg);
			o.tid = (uint32_t)v;
			o.have_tid = true;
			break;
		case OPT_PID:
			if (!parse_u64(optarg, UINT32_MAX, &v))
				return bad_usage("bad process id '%s'", optarg);
			o.pid = (uint32_t)v;
			o.have_pid = true;
			break;
		case OPT_SHOW_TID: flags |= PK_FMT_F_TID; break;
		case OPT_SHOW_LOC: flags |= PK_FMT_F_LOC; break;
		case OPT_MODULE:
			if (!pk__mod_list_valid(optarg))
				return bad_usage("bad module list '%s'", optarg);
			o.modules = optarg;
			break;
		case OPT_FIELD:
			if (!field_filter_ok(optarg))
				return bad_usage("bad field '%s': give KEY=VALUE, KEY of A-Z, 0-9"
						 " and _ (a letter first, at most 64)", optarg);
			if (o.nfields == FIELD_FILTERS)
				return bad_usage("more than 16 --field options at '%s'", optarg);
			o.fields[o.nfields++] = optarg;
			break;
		case 'T': flags |= PK_FMT_F_REALTIME; break;
		case 'd': flags |= PK_FMT_F_DELTA; break;
		case 'r': kind = PK_FMT_KMSG; kinds++; break;
		case 'J': kind = PK_FMT_JSON; kinds++; break;
		case OPT_SYSLOG: kind = PK_FMT_SYSLOG; kinds++; break;
		case OPT_STATS: o.stats = true; break;
		case 'C': o.clear = true; break;
		case 'h': usage(stdout); return 0;
		default:
			/* getopt_long() said what was wrong, in one line: not the whole help. */
			fprintf(stderr, "Try 'pkmsg --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (kinds > 1)
		return bad_usage("%s", "choose one of --raw, --json and --syslog");
	if (o.clear + o.stats + o.follow > 1)
		return bad_usage("%s", "--clear, --stats and --follow exclude each other");
	if (o.have_lines && o.follow_new)
		return bad_usage("%s", "--lines and --follow-new exclude each other (-n 0 -w "
				 "prints only new records)");
	if (o.have_before && o.follow)
		return bad_usage("%s", "--until and --follow exclude each other");
	if (o.after_cursor && (o.have_since || o.follow_new))
		return bad_usage("%s", "--after-cursor excludes --since-seq and --follow-new");
	if ((o.after_cursor || o.show_cursor) && (o.clear || o.stats))
		return bad_usage("%s", "--after-cursor and --show-cursor exclude --clear and --stats");
	if (o.have_after && o.have_before && o.after > o.before)
		return bad_usage("%s", "--since is later than --until");
	if (grep) {
		ret = compile_grep(&o, grep, icase);
		if (ret)
			return ret;
	}
	if (!o.path) {
		o.path = secure_getenv("PK_BUFFER");	/* a set-id pkmsg trusts no caller's path */
		if (!o.path || !*o.path)
			return bad_usage("%s", "no store file: give -F FILE or set PK_BUFFER");
	}
	/* Text from an untrusted file goes to a terminal: escape controls. */
	o.fmt = kind | flags | PK_FMT_F_ESCAPE;
	/*
	 * Color is for the human format on a terminal, decided before a pager
	 * takes the output: not with NO_COLOR set (no-color.org), nor on a
	 * terminal that TERM calls dumb.
	 */
	no_color = getenv("NO_COLOR");
	term = getenv("TERM");
	if (o.color == COLOR_ALWAYS ||
	    (o.color == COLOR_AUTO && isatty(STDOUT_FILENO) == 1 && !(no_color && *no_color) &&
	     !(term && !strcmp(term, "dumb"))))
		o.fmt |= PK_FMT_F_COLOR;
	ret = run(&o);
	if (o.have_grep)
		regfree(&o.re);
	return ret;
}
