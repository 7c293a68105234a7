// SPDX-License-Identifier: MIT
/*
 * rfc5424.c - RFC 5424 syslog messages.
 *
 * A console hands its driver the record already rendered; the network
 * syslog console asks for PK_FMT_JSON with PK_FMT_F_RFC3339, the one
 * rendering that carries every field of a record (seq, wall-clock time
 * with microseconds and the UTC offset, level, facility, pid, tid) and
 * its text losslessly for valid UTF-8.  This file turns that line into
 *
 *   <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - [printk@32473 seq="S" tid="T"] TEXT
 *
 * (with lane="L" after seq="S" when the store has several lanes: a seq
 * counts within its lane, so (lane, seq) names a record).
 *
 * A record with fields (pk_printk_fields()) gets a second SD-ELEMENT
 * after the first, [fields@32473 KEY="VALUE" ...] (put_fields()), and a
 * record that knows its call site one more after those,
 * [code@32473 file="F" line="L" func="FN"] (put_code()).  A record some of whose fields were left out says so
 * with fields_dropped="1" in the first element, as JSON's
 * "fields_dropped":true and kmsg's fields_dropped=1 do.
 *
 * PRI is facility * 8 + level (the facility configured for the console,
 * else the record's), TIMESTAMP the record's time (RFC 3339, local time
 * with its offset, microseconds), PROCID the storing process.  MSGID is
 * the record's module (printk.h MODULES: at most 31 letters, digits and
 * '_'), else "-".  TEXT is UTF-8 without a BOM unless asked for: RFC 5424 says a
 * sender SHOULD prefix UTF-8 with one, but the common receivers keep it as
 * three stray bytes in the message, so it is an option.  Control
 * characters are sent as they are: the framing (one datagram, or RFC 6587
 * octet counting) keeps a newline from splitting a message, and the
 * receiver escapes them as it is configured to (rsyslog: "#012").
 *
 * The SD-ID printk@32473 uses the enterprise number RFC 5612 reserves
 * for documentation.
 *
 * Everything here is async-signal-safe: the crash handler renders too.
 */
#include "rfc5424.h"

#include <string.h>

struct out {
	char *p, *end;
	bool full;
	bool sd;	/* inside an SD-PARAM value: '"', '\\' and ']' escaped */
};

static void put_raw(struct out *o, const char *s, size_t n);

static void put(struct out *o, const char *s, size_t n)
{
	size_t i, run = 0;

	if (!o->sd) {
		put_raw(o, s, n);
		return;
	}
	/* RFC 5424, 6.3.3: '"', '\\' and ']' in PARAM-VALUE are escaped. */
	for (i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\' || s[i] == ']') {
			put_raw(o, s + run, i - run);
			put_raw(o, "\\", 1);
			run = i;
		}
	}
	put_raw(o, s + run, n - run);
}

static void put_raw(struct out *o, const char *s, size_t n)
{
	if ((size_t)(o->end - o->p) < n) {
		n = (size_t)(o->end - o->p);
		o->full = true;
	}
	memcpy(o->p, s, n);
	o->p += n;
}

static void put_c(struct out *o, char c)
{
	put(o, &c, 1);
}

static void put_u64(struct out *o, uint64_t n)
{
	char tmp[24];
	int i = sizeof(tmp);

	do
		tmp[--i] = (char)('0' + n % 10);
	while (n /= 10);
	put(o, tmp + i, sizeof(tmp) - (size_t)i);
}

static void put_str(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void name_field(char *dst, size_t size, const char *src)
{
	size_t i;

	if (!src || !*src)
		src = "-";
	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = src[i] > ' ' && src[i] < 0x7f ? src[i] : '_';
	dst[i] = '\0';
}

void pk__rfc5424_id_names(struct pk__rfc5424_id *id, const char *hostname, const char *app)
{
	name_field(id->hostname, sizeof(id->hostname), hostname);
	name_field(id->app, sizeof(id->app), app);
}

size_t pk__rfc5424_sd_escape(char *out, size_t size, const char *v, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n; i++) {
		bool esc = v[i] == '"' || v[i] == '\\' || v[i] == ']';

		if (o + 1 + esc > size)
			break;
		if (esc)
			out[o++] = '\\';
		out[o++] = v[i];
	}
	return o;
}

/* ---- the console's JSON line ---- */

struct fields {
	uint64_t seq, lane, level, facility, pid, tid, dropped, line;
	bool has_seq, has_lane, has_level, has_facility, has_pid, has_tid, has_dropped, has_line;
	bool fields_dropped;
	const char *time, *text;	/* inside the line: time unescaped, text escaped */
	const char *module;		/* unescaped, checked */
	const char *fields;		/* the members of "fields":{...}, escaped */
	const char *file, *func;	/* the call site, escaped */
	size_t time_len, text_len, module_len, fields_len, file_len, func_len;
};

/* A JSON string at @p (after its '"'): its end quote, or NULL. */
static const char *string_end(const char *p, const char *end)
{
	for (; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p;
	}
	return NULL;
}

static bool number(const char *p, const char *end, uint64_t *v)
{
	const char *s = p;

	*v = 0;
	while (p < end && *p >= '0' && *p <= '9' && *v < UINT64_MAX / 10 - 1)
		*v = *v * 10 + (uint64_t)(*p++ - '0');
	return p > s;
}

/* A module name as MSGID: 1 to 32 printable US-ASCII characters, no '\\'. */
static bool msgid_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > 32)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] < 33 || s[i] > 126 || s[i] == '\\' || s[i] == '"')
			return false;
	return true;
}

#define KEY(k, n) (klen == sizeof(k) - 1 && !memcmp(key, k, klen) && (n))

/* Parse the JSON object of format.c's rendering.  Return: false if it is not one. */
static bool parse(const char *p, const char *end, struct fields *f)
{
	const char *key, *v;
	size_t klen;

	memset(f, 0, sizeof(*f));
	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	if (end - p < 2 || *p != '{' || end[-1] != '}')
		return false;
	p++;
	end--;
	while (p < end) {
		if (*p++ != '"')
			return false;
		key = p;
		p = string_end(p, end);
		if (!p || p + 1 >= end || p[1] != ':')
			return false;
		klen = (size_t)(p - key);
		p += 2;
		v = p;
		if (*p == '"') {
			p = string_end(p + 1, end);
			if (!p)
				return false;
			if (KEY("text", 1)) {
				f->text = v + 1;
				f->text_len = (size_t)(p - v - 1);
			} else if (KEY("module", msgid_ok(v + 1, (size_t)(p - v - 1)))) {
				f->module = v + 1;
				f->module_len = (size_t)(p - v - 1);
			} else if (KEY("time", !memchr(v + 1, '\\', (size_t)(p - v - 1)))) {
				f->time = v + 1;
				f->time_len = (size_t)(p - v - 1);
			} else if (KEY("file", 1)) {
				f->file = v + 1;
				f->file_len = (size_t)(p - v - 1);
			} else if (KEY("func", 1)) {
				f->func = v + 1;
				f->func_len = (size_t)(p - v - 1);
			}
			p++;
		} else if (*p == '{') {
			/* "fields": an object of strings (format.c). */
			for (p++; p < end && *p != '}'; p++)
				if (*p == '"' && !(p = string_end(p + 1, end)))
					return false;
			if (p >= end)
				return false;
			if (KEY("fields", 1)) {
				f->fields = v + 1;
				f->fields_len = (size_t)(p - v - 1);
			}
			p++;
		} else {
			while (p < end && *p != ',')
				p++;
			if (KEY("seq", 1))
				f->has_seq = number(v, p, &f->seq);
			else if (KEY("lane", 1))
				f->has_lane = number(v, p, &f->lane);
			else if (KEY("level", 1))
				f->has_level = number(v, p, &f->level);
			else if (KEY("facility", 1))
				f->has_facility = number(v, p, &f->facility);
			else if (KEY("pid", 1))
				f->has_pid = number(v, p, &f->pid);
			else if (KEY("tid", 1))
				f->has_tid = number(v, p, &f->tid);
			else if (KEY("dropped", 1))
				f->has_dropped = number(v, p, &f->dropped);
			else if (KEY("line", 1))
				f->has_line = number(v, p, &f->line);
			else if (KEY("fields_dropped", 1))
				f->fields_dropped = p - v == 4 && !memcmp(v, "true", 4);
		}
		if (p < end && *p++ != ',')
			return false;
	}
	return true;
}
#undef KEY

static unsigned hexval(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned)(c - '0');
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (unsigned)((c | 0x20) - 'a' + 10);
	return 16;
}

static void put_utf8(struct out *o, unsigned cp)
{
	char b[3];

	if (cp >= 0xd800 && cp <= 0xdfff)
		cp = 0xfffd;	/* format.c emits no surrogates: never a half pair */
	if (cp < 0x80) {
		put_c(o, (char)cp);
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		put(o, b, 2);
	} else {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		put(o, b, 3);
	}
}

/* The text of a JSON string, decoded. */
static void put_unescaped(struct out *o, const char *s, size_t n)
{
	const char *end = s + n, *run;
	unsigned cp, d, i;

	while (s < end && !o->full) {
		for (run = s; s < end && *s != '\\'; s++)
			;
		put(o, run, (size_t)(s - run));
		if (s + 1 >= end)
			break;
		s++;
		switch (*s++) {
		case 'n': put_c(o, '\n'); break;
		case 't': put_c(o, '\t'); break;
		case 'r': put_c(o, '\r'); break;
		case 'b': put_c(o, '\b'); break;
		case 'f': put_c(o, '\f'); break;
		case 'u':
			for (cp = 0, i = 0; i < 4 && s < end && (d = hexval(*s)) < 16; i++, s++)
				cp = cp << 4 | d;
			put_utf8(o, i == 4 ? cp : 0xfffd);
			break;
		default:	/* \" \\ \/ */
			put_c(o, s[-1]);
			break;
		}
	}
}

/* A cut text must not end inside a UTF-8 sequence. */
static void trim_utf8(struct out *o, const char *start)
{
	const unsigned char *e = (const unsigned char *)o->p, *q = e;
	size_t need;

	while (q > (const unsigned char *)start && e - q < 4 && (q[-1] & 0xc0) == 0x80)
		q--;
	if (q == (const unsigned char *)start || q[-1] < 0xc0)
		return;
	q--;
	need = *q >= 0xf0 ? 4 : *q >= 0xe0 ? 3 : 2;
	if ((size_t)(e - q) < need)
		o->p = (char *)q;
}

static void put_header(struct out *o, const struct pk__rfc5424_id *id, uint64_t facility,
		       uint64_t level, const char *time, size_t time_len, uint64_t pid,
		       const char *msgid, size_t msgid_len)
{
	if (id->facility >= 0)
		facility = (uint64_t)id->facility;
	put_c(o, '<');
	put_u64(o, (facility > 23 ? 1 : facility) * 8 + (level > 7 ? 7 : level));
	put(o, ">1 ", 3);
	if (time && time_len)
		put(o, time, time_len);
	else
		put_c(o, '-');
	put_c(o, ' ');
	put_str(o, id->hostname);
	put_c(o, ' ');
	put_str(o, id->app);
	put_c(o, ' ');
	put_u64(o, pid);
	put_c(o, ' ');
	if (msgid && msgid_len)
		put(o, msgid, msgid_len);
	else
		put_c(o, '-');
	put_c(o, ' ');
}

static void put_param(struct out *o, const char *name, uint64_t v)
{
	char num[24], esc[48];
	struct out t = { num, num + sizeof(num), false, false };

	put_u64(&t, v);
	put_c(o, ' ');
	put_str(o, name);
	put(o, "=\"", 2);
	put(o, esc, pk__rfc5424_sd_escape(esc, sizeof(esc), num, (size_t)(t.p - num)));
	put_c(o, '"');
}

/* An SD-PARAM whose value is a JSON string's (escaped) text. */
static void put_json_param(struct out *o, const char *name, const char *v, size_t n)
{
	put_c(o, ' ');
	put_str(o, name);
	put(o, "=\"", 2);
	o->sd = true;
	put_unescaped(o, v, n);
	o->sd = false;
	put_c(o, '"');
}

/* The record's call site as the SD-ELEMENT [code@32473 file="F" line="L" func="FN"]. */
static void put_code(struct out *o, const struct fields *f)
{
	put(o, "[" PK_RFC5424_CODE_SD_ID, sizeof(PK_RFC5424_CODE_SD_ID));
	if (f->file)
		put_json_param(o, "file", f->file, f->file_len);
	if (f->has_line)
		put_param(o, "line", f->line);
	if (f->func)
		put_json_param(o, "func", f->func, f->func_len);
	put_c(o, ']');
}

/*
 * The record's fields as the SD-ELEMENT [fields@32473 KEY="VALUE" ...].
 * A key is an SD-NAME as it is ([A-Z0-9_], printk.h) if it has at most
 * the 32 characters an SD-NAME may have.  A longer one (PK_FIELD_KEY_MAX
 * is 64) is cut to 30 and given '~' and the field's position in the
 * record (0 to 7): two keys that share their first 32 characters stay
 * two SD-PARAMs, and no key can spell such a name ('~' is not a key's
 * character).  A value is unescaped from the JSON and escaped as a
 * PARAM-VALUE.  @s: the members of the JSON object.
 */
static void put_fields(struct out *o, const char *s, size_t n)
{
	const char *end = s + n, *k, *ke, *v, *ve;
	unsigned pos = 0;

	put(o, "[" PK_RFC5424_FIELDS_SD_ID, sizeof(PK_RFC5424_FIELDS_SD_ID));
	while (s < end && *s == '"') {
		k = s + 1;
		ke = string_end(k, end);
		if (!ke || ke + 2 >= end || ke[1] != ':' || ke[2] != '"')
			break;
		v = ke + 3;
		ve = string_end(v, end);
		if (!ve)
			break;
		put_c(o, ' ');
		if (ke - k <= 32) {
			put(o, k, (size_t)(ke - k));
		} else {
			put(o, k, 30);
			put_c(o, '~');
			put_c(o, (char)('0' + pos % 10));
		}
		pos++;
		put(o, "=\"", 2);
		o->sd = true;
		put_unescaped(o, v, (size_t)(ve - v));
		o->sd = false;
		put_c(o, '"');
		s = ve + 1;
		if (s < end && *s == ',')
			s++;
	}
	put_c(o, ']');
}

static void put_text_start(struct out *o, const struct pk__rfc5424_id *id)
{
	put_c(o, ' ');
	if (id->bom)
		put(o, "\xef\xbb\xbf", 3);
}

size_t pk__rfc5424_dropped(const struct pk__rfc5424_id *id, uint64_t n, char *out, size_t size)
{
	struct out o = { out, out + size, false, false };

	put_header(&o, id, 1, 4, NULL, 0, id->pid, NULL, 0);
	put(&o, "[" PK_RFC5424_SD_ID, sizeof(PK_RFC5424_SD_ID));
	put_param(&o, "dropped", n);
	put_c(&o, ']');
	put_text_start(&o, id);
	put(&o, "** ", 3);
	put_u64(&o, n);
	put_str(&o, " printk messages dropped **");
	return o.full ? 0 : (size_t)(o.p - out);
}

size_t pk__rfc5424_render(const struct pk__rfc5424_id *id, const char *line, size_t len,
			  char *out, size_t size)
{
	struct out o = { out, out + size, false, false };
	struct fields f;
	const char *text;

	if (!parse(line, line + len, &f)) {
		/* Not the JSON rendering: the line as the text of a notice. */
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		put_header(&o, id, 1, 5, NULL, 0, id->pid, NULL, 0);
		put_c(&o, '-');
		if (len) {
			put_text_start(&o, id);
			text = o.p;
			put(&o, line, len);
			if (o.full)
				trim_utf8(&o, text);
		}
		return (size_t)(o.p - out);
	}
	if (f.has_dropped && !f.has_seq)
		return pk__rfc5424_dropped(id, f.dropped, out, size);
	put_header(&o, id, f.has_facility ? f.facility : 1, f.has_level ? f.level : 5, f.time,
		   f.time_len, f.has_pid ? f.pid : id->pid, f.module, f.module_len);
	put(&o, "[" PK_RFC5424_SD_ID, sizeof(PK_RFC5424_SD_ID));
	if (f.has_seq)
		put_param(&o, "seq", f.seq);
	/* A store of several lanes: a seq counts within its lane. */
	if (f.has_lane)
		put_param(&o, "lane", f.lane);
	if (f.has_tid)
		put_param(&o, "tid", f.tid);
	if (f.fields_dropped)
		put_param(&o, "fields_dropped", 1);
	put_c(&o, ']');
	if (f.fields_len)
		put_fields(&o, f.fields, f.fields_len);
	if (f.file || f.func)
		put_code(&o, &f);
	if (o.full)
		return 0;
	if (f.text_len) {
		put_text_start(&o, id);
		text = o.p;
		put_unescaped(&o, f.text, f.text_len);
		if (o.full)
			trim_utf8(&o, text);
	}
	return (size_t)(o.p - out);
}
