// SPDX-License-Identifier: MIT
/*
 * format.c - one record rendered as text, in the formats consoles and
 * readers share.  Uses the malloc-free formatter, so it is safe in a
 * signal handler, except PK_FMT_F_REALTIME, which needs localtime_r().
 */
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "format/format.h"
#include "printk/printk.h"

int pk__stbsp_snprintf(char *buf, int count, const char *fmt, ...);

struct out {
	char *p;
	size_t left;	/* room, keeping one byte for the NUL */
	size_t len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (n > o->left)
		n = o->left;
	memcpy(o->p, s, n);
	o->p += n;
	o->left -= n;
	o->len += n;
}

static void putc_(struct out *o, char c)
{
	put(o, &c, 1);
}

#define putf(o, ...)                                                                   \
	do {                                                                           \
		char tmp_[160];                                                        \
		int n_ = pk__stbsp_snprintf(tmp_, (int)sizeof(tmp_), __VA_ARGS__);    \
		put((o), tmp_, n_ < 0 ? 0 : (size_t)n_ < sizeof(tmp_) ? (size_t)n_ : sizeof(tmp_) - 1); \
	} while (0)

/*
 * Wall-clock time without localtime_r() (which takes a lock): days since
 * the epoch to a civil date (H. Hinnant's days_from_civil, inverted), the
 * zone's offset given.  Async-signal-safe.
 */
struct civil {
	long long year;
	unsigned mon, mday, wday, hour, min, sec, usec;
};

static void to_civil(int64_t ns, long off_s, struct civil *cv)
{
	long long s = ns / 1000000000ll + off_s, us = ns % 1000000000ll / 1000;
	long long days, sod, era, doe, yoe, doy, mp;

	if (us < 0) {
		us += 1000000;
		s--;
	}
	days = s / 86400;
	sod = s % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	cv->wday = (unsigned)((days % 7 + 11) % 7);	/* 1970-01-01 was a Thursday */
	days += 719468;
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	cv->mday = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	cv->mon = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	cv->year = yoe + era * 400 + (cv->mon <= 2);
	cv->hour = (unsigned)(sod / 3600);
	cv->min = (unsigned)(sod / 60 % 60);
	cv->sec = (unsigned)(sod % 60);
	cv->usec = (unsigned)us;
}

/* RFC 3339 with the offset: 2006-01-02T15:04:05.123456+01:00 */
static void put_rfc3339(struct out *o, const struct pk_record *rec, const struct pk_format_opts *fo)
{
	long off = fo->utc_offset_s, a = off < 0 ? -off : off;
	struct civil cv;

	to_civil(pk__realtime_ns(rec->ts_ns, fo->realtime_zero_ns), off, &cv);
	putf(o, "%04lld-%02u-%02uT%02u:%02u:%02u.%06u%c%02ld:%02ld", cv.year, cv.mon, cv.mday,
	     cv.hour, cv.min, cv.sec, cv.usec, off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
}

/* dmesg -T: Mon Jan  2 15:04:05 2006 */
static void put_ctime(struct out *o, const struct pk_record *rec, const struct pk_format_opts *fo)
{
	static const char days[] = "SunMonTueWedThuFriSat";
	static const char mons[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	struct civil cv;

	to_civil(pk__realtime_ns(rec->ts_ns, fo->realtime_zero_ns), fo->utc_offset_s, &cv);
	putf(o, "%.3s %.3s %2u %02u:%02u:%02u %lld", days + 3 * cv.wday, mons + 3 * (cv.mon - 1),
	     cv.mday, cv.hour, cv.min, cv.sec, cv.year);
}

static void put_time(struct out *o, const struct pk_record *rec, const struct pk_format_opts *fo)
{
	uint64_t ts = rec->ts_ns;

	if (fo->fmt & PK_FMT_F_CTIME) {
		put(o, "[", 1);
		put_ctime(o, rec, fo);
	} else if (fo->fmt & PK_FMT_F_RFC3339) {
		put(o, "[", 1);
		put_rfc3339(o, rec, fo);
	} else if (fo->fmt & PK_FMT_F_REALTIME) {
		time_t t = (time_t)(pk__realtime_ns(ts, fo->realtime_zero_ns) / 1000000000ll);
		struct tm tm;
		char date[64];

		if (localtime_r(&t, &tm) && strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", &tm))
			putf(o, "[%s", date);
		else
			putf(o, "[%lld", (long long)t);
	} else {
		putf(o, "[%5llu.%06llu", (unsigned long long)(ts / 1000000000ull),
		     (unsigned long long)(ts % 1000000000ull / 1000));
	}
	if (fo->fmt & PK_FMT_F_DELTA) {
		uint64_t d = fo->prev_ts_ns && ts > fo->prev_ts_ns ? ts - fo->prev_ts_ns : 0;

		putf(o, " <%5llu.%06llu>", (unsigned long long)(d / 1000000000ull),
		     (unsigned long long)(d % 1000000000ull / 1000));
	}
	put(o, "] ", 2);
}

/*
 * Escaping.  Every rendering but raw makes the text safe to send to a
 * terminal and keeps one record on its own line(s):
 *
 *   human, syslog  as dmesg prints: a control byte (0x00-0x1f but TAB),
 *                  DEL, a UTF-8-encoded C1 control (U+0080-U+009F) and
 *                  every byte that is not part of a valid UTF-8 sequence
 *                  become \xNN (ESC is \x1b, CR \x0d, BEL \x07).  Valid
 *                  UTF-8, TAB and backslash pass as they are.
 *                  A newline inside the text starts a continuation line:
 *                  human indents it by the width of the prefix, as dmesg
 *                  does; syslog leaves it without a "<PRI>" prefix (dmesg -F
 *                  reads it as a continuation) and writes a '<' that would
 *                  begin it as \x3c.  No text can forge a record's line.
 *   kmsg           as /dev/kmsg: every byte outside 0x20-0x7e and the
 *                  backslash as \xNN (newline \x0a, UTF-8 bytes too; dmesg
 *                  decodes them).
 *   JSON           RFC 8259 escapes: \n \t \r \" \\, other controls, DEL and
 *                  C1 controls as \u00NN, a byte that is not UTF-8 as
 *                  \ufffd.  Valid UTF-8 passes as it is.
 *   raw            nothing: the text as it was stored.
 */
static const char hex[] = "0123456789abcdef";

static void put_hex(struct out *o, unsigned char c)
{
	put(o, (char[4]){ '\\', 'x', hex[c >> 4], hex[c & 15] }, 4);
}

/*
 * The common case, printable ASCII, eight bytes at a time: from @i, skip
 * whole words with no byte below 0x20 or from 0x7f up (TAB included:
 * the byte loop decides) and none equal to @a or @b.  Return: where the
 * byte loop goes on.
 */
#define ONES	0x0101010101010101ull
#define HIGHS	(ONES * 0x80)

static bool word_has(uint64_t x, unsigned char c)
{
	uint64_t v = x ^ (ONES * c);

	return (v - ONES) & ~v & HIGHS;
}

static size_t skip_plain(const unsigned char *u, size_t i, size_t n, unsigned char a,
			 unsigned char b)
{
	uint64_t x, l;

	while (i + 8 <= n) {
		memcpy(&x, u + i, 8);
		l = x & ~HIGHS;
		/* A high bit: >= 0x80, or low 7 bits < 0x20, or == 0x7f. */
		if (((x | ~(l + ONES * 0x60) | (l + ONES)) & HIGHS) || word_has(x, a) ||
		    word_has(x, b))
			break;
		i += 8;
	}
	return i;
}

/* Length of a valid UTF-8 sequence at @s (at most @n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong 3- and 4-byte forms, UTF-16 surrogates, beyond U+10FFFF. */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}

/* A UTF-8-encoded C1 control, U+0080-U+009F (a 2-byte sequence). */
static bool utf8_c1(const unsigned char *s, size_t k)
{
	return k == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

/* Human and syslog text (no newline in @s): escaped as dmesg does. */
static void put_safe(struct out *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k, run = 0, next = 0;

	while (i < n) {
		unsigned char c;

		if (i >= next) {	/* skip printable ASCII, then 8 bytes one by one */
			i = skip_plain(u, i, n, 0, 0);
			next = i + 8;
			if (i == n)
				break;
		}
		c = u[i];
		if ((c >= 0x20 && c < 0x7f) || c == '\t') {
			i++;
			continue;
		}
		k = c >= 0x80 ? utf8_len(u + i, n - i) : 0;
		if (k && !utf8_c1(u + i, k)) {
			i += k;		/* printable UTF-8 */
			continue;
		}
		put(o, s + run, i - run);
		put_hex(o, c);
		run = ++i;
	}
	put(o, s + run, n - run);
}

/*
 * Colors (PK_FMT_F_COLOR), util-linux dmesg's defaults for the levels it
 * colors (sys-utils/dmesg.c): alert reverse red, crit bold red, err red,
 * warn bold.  dmesg leaves emerg plain; here it takes alert's color, the
 * more urgent one.  notice, info and debug are plain.  Each colored text
 * line ends in a reset before its newline, so no color outlives its
 * record, and the escape bytes of the text itself are escaped as ever.
 */
static const char *const level_color[8] = {
	"\033[7;31m", "\033[7;31m", "\033[1;31m", "\033[31m", "\033[1m", NULL, NULL, NULL,
};
#define COLOR_RESET	"\033[0m"

/*
 * Human and syslog: the prefix, then the text; each newline in the text
 * starts a continuation line (see "Escaping" above).  A newline that ends
 * the text adds no empty line.
 */
static void put_lines(struct out *o, const struct pk_record *rec, const struct pk_format_opts *fo,
		      bool syslog)
{
	static const char spaces[] = "                                                                ";
	const char *t = rec->text, *end = rec->text + rec->len, *nl;
	const char *color = NULL;
	size_t indent;

	static const char levels[][8] = { "emerg :", "alert :", "crit  :", "err   :",
					  "warn  :", "notice:", "info  :", "debug :" };
	/* util-linux dmesg's names, by syslog facility number. */
	static const char facilities[][9] = {
		"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
		"uucp", "cron", "authpriv", "ftp", "res0", "res1", "res2", "res3",
		"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
	};

	if (syslog)
		putf(o, "<%d>", rec->facility << 3 | rec->level);
	indent = o->len;
	if (fo->fmt & PK_FMT_F_LEVEL) {
		/*
		 * As dmesg -x prints it, "%-6s:%-6s: ": the facility, then the
		 * level.  A store file may hold any facility byte; one that
		 * has no name shows as its number, in the same column.
		 */
		if (rec->facility >= 0 &&
		    (size_t)rec->facility < sizeof(facilities) / sizeof(facilities[0]))
			putf(o, "%-6s:", facilities[rec->facility]);
		else
			putf(o, "%-6d:", rec->facility);
		put(o, levels[rec->level & 7], 7);
		putc_(o, ' ');
	}
	put_time(o, rec, fo);
	/*
	 * A continuation that could not join its line (printed already, or
	 * another thread's record came between) is marked with its caller,
	 * as the kernel's CONFIG_PRINTK_CALLER prefix does, so that a reader
	 * can tell whose line it ends.
	 */
	if (fo->fmt & PK_FMT_F_TID || rec->flags & PK_REC_CONT)
		putf(o, "[T%u] ", rec->tid);
	/* The record's module, as the kernel's pr_fmt(KBUILD_MODNAME ": ") shows it. */
	if (rec->module) {
		put_safe(o, rec->module, strlen(rec->module));
		put(o, ": ", 2);
	}
	/* Its call site, when asked for: "file.c:42 func: ". */
	if ((fo->fmt & PK_FMT_F_LOC) && (rec->file || rec->func)) {
		if (rec->file) {
			put_safe(o, rec->file, strlen(rec->file));
			putf(o, ":%u", rec->line);
		}
		if (rec->file && rec->func)
			putc_(o, ' ');
		if (rec->func)
			put_safe(o, rec->func, strlen(rec->func));
		put(o, ": ", 2);
	}
	indent = syslog ? 0 : o->len - indent;
	if (indent > sizeof(spaces) - 1)
		indent = sizeof(spaces) - 1;
	if (!syslog && fo->fmt & PK_FMT_F_COLOR)
		color = level_color[rec->level & 7];
	for (;;) {
		nl = memchr(t, '\n', (size_t)(end - t));
		if (!nl)
			nl = end;
		if (color)
			put(o, color, strlen(color));
		put_safe(o, t, (size_t)(nl - t));
		if (color)
			put(o, COLOR_RESET, sizeof(COLOR_RESET) - 1);
		putc_(o, '\n');
		if (nl + 1 >= end)
			break;
		t = nl + 1;
		put(o, spaces, indent);
		if (syslog && *t == '<') {
			put_hex(o, '<');
			t++;
		}
	}
}

/* /dev/kmsg escaping: non-printable bytes and backslash as \xNN. */
static void put_kmsg(struct out *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, run = 0, next = 0;

	for (i = 0; i < n; i++) {
		unsigned char c;

		if (i >= next) {	/* skip printable ASCII, then 8 bytes one by one */
			i = skip_plain(u, i, n, '\\', '\\');
			next = i + 8;
			if (i == n)
				break;
		}
		c = u[i];
		if (c < 0x20 || c >= 0x7f || c == '\\') {
			put(o, s + run, i - run);
			put_hex(o, c);
			run = i + 1;
		}
	}
	put(o, s + run, n - run);
}

static void put_json_string(struct out *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k, run = 0, next = 0;

	putc_(o, '"');
	while (i < n) {
		unsigned char c;
		const char *e = NULL;

		if (i >= next) {	/* skip printable ASCII, then 8 bytes one by one */
			i = skip_plain(u, i, n, '"', '\\');
			next = i + 8;
			if (i == n)
				break;
		}
		c = u[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			i++;
			continue;
		}
		k = c >= 0x80 ? utf8_len(u + i, n - i) : 0;
		if (k && !utf8_c1(u + i, k)) {
			i += k;
			continue;
		}
		put(o, s + run, i - run);
		switch (c) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\n': e = "\\n"; break;
		case '\t': e = "\\t"; break;
		case '\r': e = "\\r"; break;
		}
		if (e) {
			put(o, e, 2);
		} else if (k) {		/* C1 control: U+0080-U+009F */
			put(o, (char[6]){ '\\', 'u', '0', '0', hex[u[i + 1] >> 4], hex[u[i + 1] & 15] }, 6);
			i++;
		} else if (c < 0x80) {
			put(o, (char[6]){ '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] }, 6);
		} else {
			put(o, "\\ufffd", 6);	/* not UTF-8: replacement character */
		}
		run = ++i;
	}
	put(o, s + run, n - run);
	putc_(o, '"');
}

/*
 * journald's native protocol (PK_FMT_JOURNAL), for the journal console
 * (console/journal.c, which adds SYSLOG_IDENTIFIER and sends the entry).
 * An entry is a run of fields, each "KEY=VALUE\n", or, for a value that
 * holds a newline or another control byte, "KEY\n", the value's length as
 * 64 bits little-endian, the bytes, "\n".  A field that does not fit the
 * buffer whole is left out, and so is every one after it: a cut binary
 * field would make journald misread the rest.  Written by hand, as the
 * rest of this file, because the crash path renders records too.
 */
struct jout {
	struct out *o;
	bool full;	/* a field did not fit: nothing more is written */
};

/* Does @v need the binary form?  Any byte below 0x20 but TAB, and DEL. */
static bool j_binary(const char *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (((unsigned char)v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
			return true;
	return false;
}

static void j_field(struct jout *j, const char *key, size_t klen, const char *v, size_t n)
{
	bool bin = j_binary(v, n);
	unsigned char le[8];
	uint64_t len = n;
	int i;

	if (j->full || klen + n + (bin ? 10 : 2) > j->o->left) {
		j->full = true;
		return;
	}
	put(j->o, key, klen);
	if (bin) {
		putc_(j->o, '\n');
		for (i = 0; i < 8; i++, len >>= 8)
			le[i] = (unsigned char)(len & 0xff);
		put(j->o, (const char *)le, 8);
	} else {
		putc_(j->o, '=');
	}
	put(j->o, v, n);
	putc_(j->o, '\n');
}

static void j_num(struct jout *j, const char *key, unsigned long long v)
{
	char num[24];
	int n = pk__stbsp_snprintf(num, (int)sizeof(num), "%llu", v);

	j_field(j, key, strlen(key), num, n > 0 ? (size_t)n : 0);
}

/*
 * The fields the entry sets itself, and the families journald or its
 * readers give a meaning beyond the entry's own (SYSLOG_RAW and
 * SYSLOG_TIMESTAMP stand for the message as a syslog daemon got it,
 * CODE_* for the call site, OBJECT_* name another process, whose trusted
 * fields journald then adds for a privileged sender): a record's field of
 * such a name is left out (and counted), so that none can stand in for
 * them.
 */
static bool j_reserved(const char *k, size_t n)
{
	static const char *const names[] = { "MESSAGE", "PRIORITY", "TID" };
	static const char *const families[] = { "PRINTK_", "SYSLOG_", "CODE_", "OBJECT_" };
	size_t i, l;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		l = strlen(families[i]);
		if (n >= l && !memcmp(k, families[i], l))
			return true;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !memcmp(k, names[i], n))
			return true;
	return false;
}

/*
 * A record's field key as journald takes it: 1-64 of [A-Z0-9_], not
 * starting with '_' or a digit.  Lower-case letters are raised and other
 * printable ASCII bytes become '_' (a store file may hold any key); a key
 * that is still not valid, holds a byte outside printable ASCII or names
 * a field the entry sets itself is refused.  Return: its length in
 * @out, or 0 to leave the field out.
 */
static size_t j_key(const char *key, char out[PK_FIELD_KEY_MAX])
{
	size_t i, n = strlen(key);

	if (!n || n > PK_FIELD_KEY_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)key[i];

		if (c >= 'a' && c <= 'z')
			c = (unsigned char)(c - 'a' + 'A');
		else if (c <= 0x20 || c >= 0x7f)
			return 0;
		else if (!(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9'))
			c = '_';
		out[i] = (char)c;
	}
	if (!(out[0] >= 'A' && out[0] <= 'Z') || j_reserved(out, n))
		return 0;
	return n;
}

/*
 * Where the record was logged from, if it says: CODE_FILE, CODE_LINE,
 * CODE_FUNC.  Return: false when the call site is not known.
 */
static bool j_code_loc(const struct pk_record *rec, const char **file, unsigned *line,
		       const char **func)
{
	*file = rec->file;
	*func = rec->func;
	*line = rec->file ? rec->line : 0;
	return rec->file || rec->func;
}

static void put_journal(struct out *o, const struct pk_record *rec, bool lane)
{
	struct jout j = { o, false };
	const char *file, *func;
	char key[PK_FIELD_KEY_MAX];
	unsigned line, skipped = 0;
	size_t i, klen;

	/* PRIORITY= first: the console tells an entry by it (journal.c). */
	j_num(&j, "PRIORITY", (unsigned)rec->level & 7);
	j_num(&j, "SYSLOG_FACILITY", (unsigned)rec->facility);
	j_field(&j, "MESSAGE", 7, rec->text, rec->len);
	j_num(&j, "SYSLOG_PID", rec->pid);
	j_num(&j, "TID", rec->tid);
	j_num(&j, "PRINTK_SEQ", rec->seq);
	if (lane)
		j_num(&j, "PRINTK_LANE", rec->lane);
	if (rec->module)
		j_field(&j, "PRINTK_MODULE", 13, rec->module, strlen(rec->module));
	if (j_code_loc(rec, &file, &line, &func)) {
		if (file)
			j_field(&j, "CODE_FILE", 9, file, strlen(file));
		if (line)
			j_num(&j, "CODE_LINE", line);
		if (func)
			j_field(&j, "CODE_FUNC", 9, func, strlen(func));
	}
	if (rec->flags & PK_REC_CONT)
		j_num(&j, "PRINTK_CONT", 1);
	if (rec->flags & PK_REC_TRUNC)
		j_num(&j, "PRINTK_TRUNCATED", 1);
	for (i = 0; rec->fields && i < rec->nfields; i++) {
		klen = rec->fields[i].key && rec->fields[i].value ?
		       j_key(rec->fields[i].key, key) : 0;
		if (!klen) {
			skipped++;
			continue;
		}
		j_field(&j, key, klen, rec->fields[i].value, strlen(rec->fields[i].value));
	}
	if (rec->flags & PK_REC_FIELDS_DROPPED)
		j_num(&j, "PRINTK_FIELDS_DROPPED", 1);
	if (skipped)
		j_num(&j, "PRINTK_FIELDS_SKIPPED", skipped);
}

size_t pk__format_record(char *buf, size_t size, const struct pk_record *rec,
			 const struct pk_format_opts *fo)
{
	struct out o = { buf, size ? size - 1 : 0, 0 };
	unsigned long long us = (unsigned long long)(rec->ts_ns / 1000);
	size_t i;

	if (!size)
		return 0;
	switch (PK_FMT_KIND(fo->fmt)) {
	case PK_FMT_KMSG:
		putf(&o, "%d,%llu,%llu,%c", rec->facility << 3 | rec->level,
		     (unsigned long long)rec->seq, us, (rec->flags & PK_REC_CONT) ? 'c' : '-');
		if (fo->fmt & PK_FMT_F_LANE)
			putf(&o, ",lane=%u", rec->lane);
		putc_(&o, ';');
		put_kmsg(&o, rec->text, rec->len);
		putc_(&o, '\n');
		/* As the kernel's dictionary lines (SUBSYSTEM=, DEVICE=). */
		if (rec->module) {
			put(&o, " MODULE=", 8);
			put_kmsg(&o, rec->module, strlen(rec->module));
			putc_(&o, '\n');
		}
		/* Fields as more dictionary lines, escaped as the text is. */
		for (i = 0; rec->fields && i < rec->nfields; i++) {
			putc_(&o, ' ');
			put_kmsg(&o, rec->fields[i].key, strlen(rec->fields[i].key));
			putc_(&o, '=');
			put_kmsg(&o, rec->fields[i].value, strlen(rec->fields[i].value));
			putc_(&o, '\n');
		}
		/* Its call site, by journald's names for it, after the fields. */
		if (rec->file) {
			put(&o, " CODE_FILE=", 11);
			put_kmsg(&o, rec->file, strlen(rec->file));
			putc_(&o, '\n');
		}
		if (rec->file || rec->func)
			putf(&o, " CODE_LINE=%u\n", rec->line);
		if (rec->func) {
			put(&o, " CODE_FUNC=", 11);
			put_kmsg(&o, rec->func, strlen(rec->func));
			putc_(&o, '\n');
		}
		/*
		 * A field was left out: lower case, as JSON's member, so that
		 * no field's key (upper case) can be mistaken for it.
		 */
		if (rec->flags & PK_REC_FIELDS_DROPPED)
			put(&o, " fields_dropped=1\n", 18);
		break;
	case PK_FMT_SYSLOG:
		put_lines(&o, rec, fo, true);
		break;
	case PK_FMT_JSON:
		putf(&o, "{\"seq\":%llu,", (unsigned long long)rec->seq);
		if (fo->fmt & PK_FMT_F_LANE)
			putf(&o, "\"lane\":%u,", rec->lane);
		putf(&o, "\"ts_us\":%llu,", us);
		if (fo->fmt & PK_FMT_F_REALTIME)
			putf(&o, "\"time_us\":%lld,",
			     (long long)(pk__realtime_ns(rec->ts_ns, fo->realtime_zero_ns) / 1000));
		if (fo->fmt & (PK_FMT_F_CTIME | PK_FMT_F_RFC3339)) {
			put(&o, "\"time\":\"", 8);
			put_rfc3339(&o, rec, fo);
			put(&o, "\",", 2);
		}
		putf(&o, "\"level\":%d,\"facility\":%d,\"pid\":%u,\"tid\":%u,", rec->level,
		     rec->facility, rec->pid, rec->tid);
		if (rec->flags & PK_REC_CONT)
			put(&o, "\"cont\":true,", 12);
		if (rec->flags & PK_REC_TRUNC)
			put(&o, "\"truncated\":true,", 17);
		if (rec->module) {
			put(&o, "\"module\":", 9);
			put_json_string(&o, rec->module, strlen(rec->module));
			putc_(&o, ',');
		}
		if (rec->file) {
			put(&o, "\"file\":", 7);
			put_json_string(&o, rec->file, strlen(rec->file));
			putc_(&o, ',');
		}
		if (rec->file || rec->func)
			putf(&o, "\"line\":%u,", rec->line);
		if (rec->func) {
			put(&o, "\"func\":", 7);
			put_json_string(&o, rec->func, strlen(rec->func));
			putc_(&o, ',');
		}
		if (rec->fields && rec->nfields) {
			put(&o, "\"fields\":{", 10);
			for (i = 0; i < rec->nfields; i++) {
				if (i)
					putc_(&o, ',');
				put_json_string(&o, rec->fields[i].key, strlen(rec->fields[i].key));
				putc_(&o, ':');
				put_json_string(&o, rec->fields[i].value,
						strlen(rec->fields[i].value));
			}
			put(&o, "},", 2);
		}
		if (rec->flags & PK_REC_FIELDS_DROPPED)
			put(&o, "\"fields_dropped\":true,", 22);
		put(&o, "\"text\":", 7);
		put_json_string(&o, rec->text, rec->len);
		put(&o, "}\n", 2);
		break;
	case PK_FMT_RAW:
		put(&o, rec->text, rec->len);
		putc_(&o, '\n');
		break;
	case PK_FMT_JOURNAL:
		put_journal(&o, rec, (fo->fmt & PK_FMT_F_LANE) != 0);
		break;
	case PK_FMT_HUMAN:
	default:
		put_lines(&o, rec, fo, false);
		break;
	}
	/*
	 * Truncated output still ends the line, and a colored one ends its
	 * color: a reset (its sequence whole) then the newline, in the last
	 * bytes.  A sequence of ours it cuts short is ended by the reset's ESC.
	 */
	if (!o.left && o.len > sizeof(COLOR_RESET) && PK_FMT_KIND(fo->fmt) == PK_FMT_HUMAN &&
	    fo->fmt & PK_FMT_F_COLOR)
		memcpy(buf + o.len - sizeof(COLOR_RESET), COLOR_RESET "\n", sizeof(COLOR_RESET));
	if (o.len && buf[o.len - 1] != '\n')
		buf[o.len - 1] = '\n';
	buf[o.len] = '\0';
	return o.len;
}

size_t pk__format_dropped(char *buf, size_t size, uint64_t n, unsigned fmt)
{
	int len;

	if (PK_FMT_KIND(fmt) == PK_FMT_JOURNAL)
		len = pk__stbsp_snprintf(buf, (int)size, "PRIORITY=4\nMESSAGE=** %llu printk "
					 "messages dropped **\nPRINTK_DROPPED=%llu\n",
					 (unsigned long long)n, (unsigned long long)n);
	else if (PK_FMT_KIND(fmt) == PK_FMT_JSON)
		len = pk__stbsp_snprintf(buf, (int)size, "{\"dropped\":%llu}\n", (unsigned long long)n);
	else
		len = pk__stbsp_snprintf(buf, (int)size, "** %llu printk messages dropped **\n",
					 (unsigned long long)n);
	if (len < 0)
		return 0;
	return (size_t)len < size ? (size_t)len : size - 1;
}

size_t pk__format_dropped_lane(char *buf, size_t size, uint64_t n, unsigned fmt, unsigned lane)
{
	int len;

	if (PK_FMT_KIND(fmt) == PK_FMT_JOURNAL)
		len = pk__stbsp_snprintf(buf, (int)size, "PRIORITY=4\nMESSAGE=** %llu printk "
					 "messages dropped in lane %u **\nPRINTK_DROPPED=%llu\n"
					 "PRINTK_LANE=%u\n", (unsigned long long)n, lane,
					 (unsigned long long)n, lane);
	else if (PK_FMT_KIND(fmt) == PK_FMT_JSON)
		len = pk__stbsp_snprintf(buf, (int)size, "{\"dropped\":%llu,\"lane\":%u}\n",
					 (unsigned long long)n, lane);
	else
		len = pk__stbsp_snprintf(buf, (int)size, "** %llu printk messages dropped in lane %u **\n",
					 (unsigned long long)n, lane);
	if (len < 0)
		return 0;
	return (size_t)len < size ? (size_t)len : size - 1;
}
