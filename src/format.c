// SPDX-License-Identifier: MIT
/*
 * format.c - one record rendered as text, in the formats consoles and
 * readers share.  Uses the malloc-free formatter, so it is safe in a
 * signal handler, except PK_FMT_F_REALTIME, which needs localtime_r().
 */
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "format.h"
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
 * Wall-clock ns of a record.  Wrapping arithmetic: both terms may come from
 * an untrusted store file, where a signed sum could overflow.
 */
static int64_t realtime_ns(uint64_t ts, int64_t zero)
{
	return (int64_t)(ts + (uint64_t)zero);
}

static void put_time(struct out *o, const struct pk_record *rec, const struct pk_format_opts *fo)
{
	uint64_t ts = rec->ts_ns;

	if (fo->fmt & PK_FMT_F_REALTIME) {
		time_t t = (time_t)(realtime_ns(ts, fo->realtime_zero_ns) / 1000000000ll);
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
 * Text for a terminal (PK_FMT_F_ESCAPE): control bytes other than tab,
 * DEL, bytes that are not UTF-8 and UTF-8-encoded C1 controls as \xNN, so
 * that a hostile store cannot send escape sequences to the terminal.
 */
static size_t utf8_len(const unsigned char *s, size_t n);

static void put_safe(struct out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k, run = 0;

	while (i < n) {
		unsigned char c = u[i];

		if ((c >= 0x20 && c < 0x7f) || c == '\t') {
			i++;
			continue;
		}
		k = c >= 0x80 ? utf8_len(u + i, n - i) : 0;
		if (k && !(c == 0xc2 && u[i + 1] < 0xa0)) {
			i += k;		/* printable UTF-8 */
			continue;
		}
		put(o, s + run, i - run);
		put(o, (char[4]){ '\\', 'x', hex[c >> 4], hex[c & 15] }, 4);
		run = ++i;
	}
	put(o, s + run, n - run);
}

/* Human and syslog: every line of the text gets the prefix. */
static void put_lines(struct out *o, const struct pk_record *rec, const struct pk_format_opts *fo,
		      bool syslog)
{
	const char *t = rec->text, *end = rec->text + rec->len, *nl;

	do {
		nl = memchr(t, '\n', (size_t)(end - t));
		if (!nl)
			nl = end;
		if (syslog)
			putf(o, "<%d>", rec->facility << 3 | rec->level);
		put_time(o, rec, fo);
		if (fo->fmt & PK_FMT_F_TID)
			putf(o, "[T%u] ", rec->tid);
		if (fo->fmt & PK_FMT_F_ESCAPE)
			put_safe(o, t, (size_t)(nl - t));
		else
			put(o, t, (size_t)(nl - t));
		putc_(o, '\n');
		t = nl + 1;
	} while (t < end);
}

/* /dev/kmsg escaping: non-printable bytes and backslash as \xNN. */
static void put_escaped(struct out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f || c == '\\') {
			char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };

			put(o, e, 4);
		} else {
			putc_(o, (char)c);
		}
	}
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
	return len;
}

static void put_json_string(struct out *o, const char *s, size_t n)
{
	size_t i, u;

	putc_(o, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"': put(o, "\\\"", 2); break;
		case '\\': put(o, "\\\\", 2); break;
		case '\n': put(o, "\\n", 2); break;
		case '\t': put(o, "\\t", 2); break;
		case '\r': put(o, "\\r", 2); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				putf(o, "\\u%04x", c);
			} else if (c < 0x80) {
				putc_(o, (char)c);
			} else if ((u = utf8_len((const unsigned char *)s + i, n - i))) {
				put(o, s + i, u);
				i += u - 1;
			} else {
				put(o, "\\ufffd", 6);	/* not UTF-8: replacement character */
			}
		}
	}
	putc_(o, '"');
}

size_t pk__format_record(char *buf, size_t size, const struct pk_record *rec,
			 const struct pk_format_opts *fo)
{
	struct out o = { buf, size ? size - 1 : 0, 0 };
	unsigned long long us = (unsigned long long)(rec->ts_ns / 1000);

	if (!size)
		return 0;
	switch (PK_FMT_KIND(fo->fmt)) {
	case PK_FMT_KMSG:
		putf(&o, "%d,%llu,%llu,%c;", rec->facility << 3 | rec->level,
		     (unsigned long long)rec->seq, us, (rec->flags & PK_REC_CONT) ? 'c' : '-');
		put_escaped(&o, rec->text, rec->len);
		putc_(&o, '\n');
		break;
	case PK_FMT_SYSLOG:
		put_lines(&o, rec, fo, true);
		break;
	case PK_FMT_JSON:
		putf(&o, "{\"seq\":%llu,\"ts_us\":%llu,", (unsigned long long)rec->seq, us);
		if (fo->fmt & PK_FMT_F_REALTIME)
			putf(&o, "\"time_us\":%lld,",
			     (long long)(realtime_ns(rec->ts_ns, fo->realtime_zero_ns) / 1000));
		putf(&o, "\"level\":%d,\"facility\":%d,\"pid\":%u,\"tid\":%u,", rec->level,
		     rec->facility, rec->pid, rec->tid);
		if (rec->flags & PK_REC_CONT)
			put(&o, "\"cont\":true,", 12);
		if (rec->flags & PK_REC_TRUNC)
			put(&o, "\"truncated\":true,", 17);
		put(&o, "\"text\":", 7);
		put_json_string(&o, rec->text, rec->len);
		put(&o, "}\n", 2);
		break;
	case PK_FMT_RAW:
		put(&o, rec->text, rec->len);
		putc_(&o, '\n');
		break;
	case PK_FMT_HUMAN:
	default:
		put_lines(&o, rec, fo, false);
		break;
	}
	/* Truncated output still ends the line. */
	if (o.len && buf[o.len - 1] != '\n')
		buf[o.len - 1] = '\n';
	buf[o.len] = '\0';
	return o.len;
}

size_t pk__format_dropped(char *buf, size_t size, uint64_t n, unsigned fmt)
{
	int len;

	if (PK_FMT_KIND(fmt) == PK_FMT_JSON)
		len = pk__stbsp_snprintf(buf, (int)size, "{\"dropped\":%llu}\n", (unsigned long long)n);
	else
		len = pk__stbsp_snprintf(buf, (int)size, "** %llu printk messages dropped **\n",
					 (unsigned long long)n);
	if (len < 0)
		return 0;
	return (size_t)len < size ? (size_t)len : size - 1;
}
