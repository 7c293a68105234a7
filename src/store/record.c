// SPDX-License-Identifier: MIT
/*
 * record.c - a stored record's own structure: its text settled to the
 * record's limits, its module prefix, its lost notes, and its rendering
 * for a reader (a package formatted by the printf engine, the module moved
 * out of the body, a lost note turned into its notice).  Shared by the
 * early store, readers and consoles.
 */
#include <errno.h>
#include <string.h>

#include "core/core.h"
#include "format/format.h"
#include "store/store.h"

_Static_assert(PK__MOD_MAX == PK_RING_MOD_MAX, "a module prefix fits the thread's copy");

size_t pk__text_settle(const char *buf, int n, unsigned *flags)
{
	size_t len = (size_t)n < PK__TEXT_BUF - 1 ? (size_t)n : PK__TEXT_BUF - 1;

	if ((size_t)n == len && len && buf[len - 1] == '\n')
		return len - 1;			/* a complete line */
	if (len > PK_RECORD_MAX || (size_t)n > len) {
		*flags |= PK_REC_TRUNC;		/* cut: the record is complete */
		return PK_RECORD_MAX;
	}
	*flags |= PK_REC_NOEOL;			/* open: pk_cont may extend it */
	return len;
}

size_t pk__mod_prefix(char *dst, const struct pk_module *mod)
{
	const char *name = mod ? mod->name : NULL;
	/* Relaxed: 0 (not yet registered) takes the slow path below. */
	size_t i = mod ? __atomic_load_n(&mod->namelen, __ATOMIC_RELAXED) : 0;

	if (!name)
		return 0;
	/* Registered: checked then (module.c), its length kept. */
	if (i && i <= PK_MODULE_NAME_MAX) {
		dst[0] = (char)i;
		memcpy(dst + 1, name, i);
		return i + 1;
	}
	/*
	 * Never registered (or not yet): only a name registration would take
	 * is written; another (too long, other characters) gives the record
	 * no module rather than a name no pattern can select.
	 */
	for (i = 0; name[i]; i++) {
		if (i == PK_MODULE_NAME_MAX || !pk__mod_name_char((unsigned char)name[i]))
			return 0;
		dst[1 + i] = name[i];
	}
	dst[0] = (char)i;
	return i ? i + 1 : 0;
}

bool pk__rec_module(const struct pk_ring_rec *rec, char *name)
{
	unsigned n = rec->len ? (unsigned char)rec->text[0] : 0, i;

	if (!(rec->meta.flags & PK__REC_MODULE) || n < 1 || n > PK_MODULE_NAME_MAX ||
	    n + 1 > rec->len)
		return false;
	for (i = 0; i < n; i++) {
		if (!pk__mod_name_char((unsigned char)rec->text[1 + i]))
			return false;
		name[i] = rec->text[1 + i];
	}
	name[n] = '\0';
	return true;
}

/*
 * Move a record's module prefix into rec->module.  A prefix that is not
 * one (a damaged or hostile store) stays in the text, where it is seen.
 */
static void mod_split(struct pk_ring_rec *rec)
{
	unsigned n;

	if (!pk__rec_module(rec, rec->module)) {
		rec->module[0] = '\0';
		rec->meta.flags &= (uint16_t)~PK__REC_MODULE;
		return;
	}
	rec->meta.flags &= (uint16_t)~PK__REC_MODULE;
	n = (unsigned char)rec->text[0];
	rec->len -= n + 1;
	memmove(rec->text, rec->text + 1 + n, rec->len);
	rec->text[rec->len] = '\0';
}

/*
 * FIELDS
 *
 * A record's KEY=VALUE fields (pk_printk_fields()) go at the end of its
 * body, after the text or package, as one self-contained block, so that
 * the body's start (module prefix, package) reads as before:
 *
 *	entries   "KEY\0VALUE\0" for each field kept, in the caller's order
 *	          (at most PK_FIELDS_MAX, at most PK_FIELDS_BYTES bytes);
 *	trailer   the entries' length, 16 bits little-endian, then the count
 *	          of fields left out (bad key, NULL, over budget; capped at
 *	          255), one byte.
 *
 * The record is flagged PK__REC_FIELDS.  A reader finds the block from
 * the body's end; the block is untrusted as the rest of a store file:
 * one whose length does not fit the body stays in the text, where it is
 * seen, and entries that do not parse (a key that is not one, an entry
 * without its NUL, too many) are dropped as a whole; both mark the record
 * PK_REC_FIELDS_DROPPED, as a field left out at the call does.
 */
bool pk__field_key_ok(const char *key, size_t len)
{
	size_t i;

	if (len < 1 || len > PK_FIELD_KEY_MAX || key[0] < 'A' || key[0] > 'Z')
		return false;
	for (i = 1; i < len; i++) {
		char c = key[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

/* strnlen(), which POSIX does not list as async-signal-safe. */
static size_t bounded_len(const char *s, size_t max)
{
	size_t i = 0;

	while (i < max && s[i])
		i++;
	return i;
}

size_t pk__fields_encode(char *dst, const struct pk_field *f, size_t n, int *err)
{
	size_t i, used = 0, kept = 0, dropped = 0;

	_Static_assert(PK_RING_FIELDS_MAX == PK_FIELDS_BYTES + PK_RING_FIELDS_TRAILER,
		       "a fields block fits the store");
	if (!n)
		return 0;
	if (!f) {
		dropped = n;
		*err = -EINVAL;
		n = 0;
	}
	/*
	 * Past PK_FIELDS_MAX + 255 entries nothing more can be kept or
	 * counted (the trailer's count stops at 255): they are not read, so
	 * an absurd @n costs no time.
	 */
	for (i = 0; i < n && i < PK_FIELDS_MAX + 255; i++) {
		size_t klen, vlen;

		if (!f[i].key || !f[i].value) {
			dropped++;
			*err = -EINVAL;
			continue;
		}
		klen = bounded_len(f[i].key, PK_FIELD_KEY_MAX + 1);
		if (!pk__field_key_ok(f[i].key, klen)) {
			dropped++;
			*err = -EINVAL;
			continue;
		}
		vlen = bounded_len(f[i].value, PK_FIELDS_BYTES);
		if (kept == PK_FIELDS_MAX || used + klen + vlen + 2 > PK_FIELDS_BYTES) {
			dropped++;
			if (*err != -EINVAL)
				*err = -EMSGSIZE;
			continue;
		}
		memcpy(dst + used, f[i].key, klen + 1);
		used += klen + 1;
		memcpy(dst + used, f[i].value, vlen);
		dst[used + vlen] = '\0';
		used += vlen + 1;
		kept++;
	}
	if (n > i) {
		dropped += n - i;
		if (*err != -EINVAL)
			*err = -EMSGSIZE;
	}
	dst[used] = (char)(used & 0xff);
	dst[used + 1] = (char)(used >> 8);
	dst[used + 2] = (char)(dropped > 255 ? 255 : dropped);
	return used + PK_RING_FIELDS_TRAILER;
}

/*
 * LOCATIONS
 *
 * A record stored by a level macro carries its call site (printk.h,
 * SOURCE LOCATIONS) as a block at the start of its body, after the
 * module prefix if there is one, before the text or package, so that a
 * continuation can still extend the text at the body's end:
 *
 *	line      32 bits little-endian;
 *	file_len  one byte, 0 to PK_RING_LOC_FILE_MAX;
 *	func_len  one byte, 0 to PK_RING_LOC_FUNC_MAX;
 *	file      file_len bytes (the end of a longer __FILE__), no NUL;
 *	func      func_len bytes (the start of a longer __func__), no NUL.
 *
 * The record is flagged PK__REC_LOC.  The block is untrusted as the rest
 * of a store file: one whose lengths do not fit the body, or whose names
 * hold a NUL, is dropped (the record then has no location) and the
 * rest of the body is the text.
 */
size_t pk__loc_encode(char *dst, const struct pk_srcloc *loc)
{
	size_t flen = 0, glen = 0, skip = 0;

	if (!loc || (!loc->file && !loc->func))
		return 0;
	if (loc->file) {
		/* Counted whole: the end of a long name is what is kept. */
		flen = loc->file_len ? loc->file_len : strlen(loc->file);
		if (flen > PK_RING_LOC_FILE_MAX) {
			skip = flen - PK_RING_LOC_FILE_MAX;
			flen = PK_RING_LOC_FILE_MAX;
		}
	}
	if (loc->func)
		glen = loc->func_len ? (loc->func_len < PK_RING_LOC_FUNC_MAX ? loc->func_len
						 : PK_RING_LOC_FUNC_MAX)
				     : bounded_len(loc->func, PK_RING_LOC_FUNC_MAX);
	dst[0] = (char)(loc->line & 0xff);
	dst[1] = (char)(loc->line >> 8 & 0xff);
	dst[2] = (char)(loc->line >> 16 & 0xff);
	dst[3] = (char)(loc->line >> 24 & 0xff);
	dst[4] = (char)flen;
	dst[5] = (char)glen;
	if (flen)
		memcpy(dst + PK_RING_LOC_HDR, loc->file + skip, flen);
	if (glen)
		memcpy(dst + PK_RING_LOC_HDR + flen, loc->func, glen);
	return PK_RING_LOC_HDR + flen + glen;
}

/* The length of the location block at @t (@len bytes left), or 0 if it is not one. */
static size_t loc_len(const char *t, size_t len)
{
	const unsigned char *u = (const unsigned char *)t;
	size_t n;

	_Static_assert(PK_RING_LOC_FILE_MAX == 255, "a file name's length is one byte");
	if (len < PK_RING_LOC_HDR || u[5] > PK_RING_LOC_FUNC_MAX)
		return 0;
	n = PK_RING_LOC_HDR + (size_t)u[4] + u[5];
	if (n > len || memchr(t + PK_RING_LOC_HDR, '\0', n - PK_RING_LOC_HDR))
		return 0;
	return n;
}

/* Move a record's location block (after the module prefix, now gone) into rec. */
static void loc_split(struct pk_ring_rec *rec)
{
	const unsigned char *u = (const unsigned char *)rec->text;
	size_t n = loc_len(rec->text, rec->len);

	rec->meta.flags &= (uint16_t)~PK__REC_LOC;
	if (!n)
		return;
	rec->line = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 |
		    (uint32_t)u[3] << 24;
	memcpy(rec->file, rec->text + PK_RING_LOC_HDR, u[4]);
	rec->file[u[4]] = '\0';
	memcpy(rec->func, rec->text + PK_RING_LOC_HDR + u[4], u[5]);
	rec->func[u[5]] = '\0';
	rec->len -= (uint32_t)n;
	memmove(rec->text, rec->text + n, rec->len);
	rec->text[rec->len] = '\0';
}

size_t pk__rec_extra(unsigned flags, const char *text, size_t len)
{
	size_t extra = 0, elen;

	if ((flags & PK__REC_MODULE) && len)
		extra += 1 + (size_t)(unsigned char)text[0];
	if ((flags & PK__REC_LOC) && extra < len)
		extra += loc_len(text + extra, len - extra);
	if ((flags & PK__REC_FIELDS) && len >= PK_RING_FIELDS_TRAILER) {
		const unsigned char *t = (const unsigned char *)text + len - PK_RING_FIELDS_TRAILER;

		elen = (size_t)t[0] | (size_t)t[1] << 8;
		if (elen <= PK_FIELDS_BYTES)
			extra += elen + PK_RING_FIELDS_TRAILER;
	}
	return extra;
}

/* Count the entries of @e (@len bytes); -1 if they are not a valid list. */
static int fields_parse(const char *e, size_t len)
{
	size_t pos = 0;
	int count = 0;

	while (pos < len) {
		const char *nul = memchr(e + pos, '\0', len - pos);

		if (!nul || count == PK_FIELDS_MAX ||
		    !pk__field_key_ok(e + pos, (size_t)(nul - (e + pos))))
			return -1;
		pos = (size_t)(nul - e) + 1;
		nul = memchr(e + pos, '\0', len - pos);
		if (!nul)
			return -1;
		pos = (size_t)(nul - e) + 1;
		count++;
	}
	return count;
}

/* Move a record's fields block out of its body into rec->fields. */
static void fields_split(struct pk_ring_rec *rec)
{
	const unsigned char *t;
	size_t elen;
	int count;

	rec->meta.flags &= (uint16_t)~PK__REC_FIELDS;
	if (rec->len < PK_RING_FIELDS_TRAILER) {
		rec->meta.flags |= PK_REC_FIELDS_DROPPED;
		return;
	}
	t = (const unsigned char *)rec->text + rec->len - PK_RING_FIELDS_TRAILER;
	elen = (size_t)t[0] | (size_t)t[1] << 8;
	if (elen > PK_FIELDS_BYTES || elen + PK_RING_FIELDS_TRAILER > rec->len) {
		rec->meta.flags |= PK_REC_FIELDS_DROPPED;	/* not a block: left as text */
		return;
	}
	if (t[2])
		rec->meta.flags |= PK_REC_FIELDS_DROPPED;
	count = fields_parse((const char *)t - elen, elen);
	if (count < 0) {
		rec->meta.flags |= PK_REC_FIELDS_DROPPED;
	} else {
		memcpy(rec->fields, (const char *)t - elen, elen);
		rec->fields_len = (uint16_t)elen;
		rec->nfields = (uint8_t)count;
	}
	rec->len -= (uint32_t)(elen + PK_RING_FIELDS_TRAILER);
	rec->text[rec->len] = '\0';
}

void pk__rec_export(struct pk_ring_rec *rec, struct pk_record *out)
{
	pk__rec_render(rec);	/* a package: formatted now, in the reader's own buffer */
	memset(out, 0, sizeof(*out));
	out->seq = rec->seq;
	out->lane = rec->lane;
	out->ts_ns = rec->meta.ts_ns;
	out->level = rec->meta.level;
	out->tid = rec->meta.tid;
	out->pid = rec->meta.pid;
	out->flags = rec->meta.flags;
	out->facility = rec->meta.facility;
	out->text = rec->text;
	out->len = rec->len;
	out->module = rec->module[0] ? rec->module : NULL;
	pk__rec_fields(rec, out);
}

void pk__rec_fields(struct pk_ring_rec *rec, struct pk_record *out)
{
	size_t pos = 0, len = rec->fields_len;
	unsigned i;

	_Static_assert(sizeof(rec->fv) / sizeof(rec->fv[0]) == PK_FIELDS_MAX, "a view per field");
	out->fields = NULL;
	out->nfields = 0;
	/* Entries rec_render() checked: each key and value ends with its NUL. */
	for (i = 0; i < rec->nfields && i < PK_FIELDS_MAX && pos < len; i++) {
		rec->fv[i].key = rec->fields + pos;
		pos += strlen(rec->fields + pos) + 1;
		rec->fv[i].value = rec->fields + pos;
		pos += strlen(rec->fields + pos) + 1;
	}
	if (i) {
		out->fields = rec->fv;
		out->nfields = i;
	}
	out->file = rec->file[0] ? rec->file : NULL;
	out->func = rec->func[0] ? rec->func : NULL;
	out->line = rec->line;
}

/*
 * LOST NOTES
 *
 * A console counts lost records by the gaps in the seqs it reads.  Some
 * records are lost where it sees no gap: those overwritten in a store
 * that pk_init() replaces before the console reached them (the copy
 * numbers the survivors afresh, store_copy()), and those the early store
 * could not hold (they never had a seq in the store).  For them a record
 * of its own is stored where the loss is, flagged PK__REC_LOSTNOTE, whose
 * body counts them by the console level that would have printed them
 * (the own table's levels, ringbuf.c "OWN RECORDS"; those of unknown
 * level count for every console).  A console prints it as its drop notice
 * and counts it in its `dropped' (console.c, pk__con_emit()); a reader
 * (pkmsg, pk_reader) sees the notice as the record's text.  A body of
 * another size (a damaged or hostile store) is shown as text, nothing
 * counted.
 */
static bool lost_note_get(const struct pk_ring_rec *rec, struct pk__lost_note *note)
{
	if (!(rec->meta.flags & PK__REC_LOSTNOTE) || rec->len != sizeof(*note))
		return false;
	memcpy(note, rec->text, sizeof(*note));
	return true;
}

uint64_t pk__lost_note_count(const struct pk_ring_rec *rec, int max_level)
{
	struct pk__lost_note note;

	if (!lost_note_get(rec, &note))
		return 0;
	if (max_level < 0)
		max_level = 0;
	return note.cum[max_level > 8 ? 8 : max_level];
}

uint64_t pk__lost_note_unknown(const struct pk_ring_rec *rec)
{
	struct pk__lost_note note;

	return lost_note_get(rec, &note) ? note.unknown : 0;
}

static void lost_note_render(struct pk_ring_rec *rec)
{
	struct pk__lost_note note;
	int n;

	rec->meta.flags &= (uint16_t)~(PK__REC_LOSTNOTE | PK__REC_MODULE | PK__REC_PACKED |
					PK__REC_FIELDS | PK__REC_LOC);
	if (!lost_note_get(rec, &note)) {
		static const char bad[] = "<a lost note that cannot be decoded>";

		memcpy(rec->text, bad, sizeof(bad));
		rec->len = sizeof(bad) - 1;
		rec->meta.flags |= PK_REC_TRUNC;
		return;
	}
	n = pk__stbsp_snprintf(rec->text, (int)sizeof(rec->text), "** %llu printk messages dropped **",
			       (unsigned long long)note.cum[8]);
	rec->len = n > 0 ? (uint32_t)n : 0;
}

int pk__lost_note_write(struct pk_ring *ring, const struct pk__lost_note *note, uint64_t ts,
			uint64_t *seq)
{
	struct pk_ring_meta m = { 0 };

	if (!note->cum[8])
		return 0;
	atomic_fetch_add_explicit(&ring->h->lost, note->cum[8], memory_order_relaxed);
	m.ts_ns = ts ? ts : pk__now_ns();
	m.tid = pk__tid();
	m.pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	m.level = PK_EMERG;
	m.facility = (uint8_t)atomic_load_explicit(&pk__g.facility, memory_order_relaxed);
	m.flags = PK__REC_LOSTNOTE;
	return pk__ring_write(ring, &m, (const char *)note, sizeof(*note), false, seq);
}

int pk__rec_open_unpack(struct pk_ring_rec *rec)
{
	char head[PK_RING_MOD_MAX + PK_RING_LOC_MAX];
	unsigned keep = rec->meta.flags & (PK__REC_MODULE | PK__REC_LOC);
	size_t hl = 0;

	if (!(rec->meta.flags & PK__REC_PACKED))
		return 0;		/* text already */
	if (rec->meta.flags & (PK__REC_FIELDS | PK__REC_LOSTNOTE))
		return -EINVAL;		/* never left open */
	/* The prefix and location stay as they are, before the text. */
	if ((keep & PK__REC_MODULE) && rec->len)
		hl = 1 + (size_t)(unsigned char)rec->text[0];
	if ((keep & PK__REC_LOC) && hl < rec->len)
		hl += loc_len(rec->text + hl, rec->len - hl);
	if (hl > rec->len || hl > sizeof(head))
		return -EINVAL;
	memcpy(head, rec->text, hl);
	pk__rec_render(rec);
	/* Cut at PK_RECORD_MAX: complete, as a line formatted at the call would be. */
	if ((rec->meta.flags & PK_REC_TRUNC) || rec->len + hl > PK_RING_TEXT_MAX)
		return -E2BIG;
	memmove(rec->text + hl, rec->text, rec->len);
	memcpy(rec->text, head, hl);
	rec->len += (uint32_t)hl;
	rec->text[rec->len] = '\0';
	rec->meta.flags = (uint16_t)(rec->meta.flags | keep);
	return 0;
}

void pk__rec_render(struct pk_ring_rec *rec)
{
	unsigned char pkg[PK_RING_TEXT_MAX];
	unsigned flags;
	size_t len;
	int n;

	_Static_assert(PK_MODULE_NAME_MAX + 1 <= PK_RING_MOD_MAX, "a module prefix fits");
	_Static_assert(PK_RING_TEXT_MAX >= PK_RECORD_MAX + PK_RING_MOD_MAX, "room for a prefix");
	rec->module[0] = '\0';
	rec->fields_len = 0;
	rec->nfields = 0;
	rec->line = 0;
	rec->file[0] = '\0';
	rec->func[0] = '\0';
	if (rec->meta.flags & PK__REC_LOSTNOTE) {
		lost_note_render(rec);
		return;
	}
	/* The fields block is at the body's end: off first. */
	if (rec->meta.flags & PK__REC_FIELDS)
		fields_split(rec);
	if (rec->meta.flags & PK__REC_MODULE)
		mod_split(rec);
	/* The location block follows the module prefix. */
	if (rec->meta.flags & PK__REC_LOC)
		loc_split(rec);
	flags = rec->meta.flags & ~PK__REC_PACKED;
	if (!(rec->meta.flags & PK__REC_PACKED)) {
		/*
		 * The store holds up to PK_RING_TEXT_MAX bytes for a record;
		 * only a prefix may take it past PK_RECORD_MAX.  One longer
		 * without (a damaged or hostile store) is cut, as written.
		 */
		if (rec->len > PK_RECORD_MAX) {
			rec->len = PK_RECORD_MAX;
			rec->text[rec->len] = '\0';
			rec->meta.flags |= PK_REC_TRUNC;
		}
		return;
	}
	len = rec->len < sizeof(pkg) ? rec->len : sizeof(pkg);
	memcpy(pkg, rec->text, len);
	_Static_assert(sizeof(rec->text) >= PK__TEXT_BUF, "room to render a record");
	n = pk__unpack(rec->text, PK__TEXT_BUF, pkg, len);
	if (n < 0) {
		static const char bad[] = "<a packed record that cannot be decoded>";

		memcpy(rec->text, bad, sizeof(bad));
		len = sizeof(bad) - 1;
		flags |= PK_REC_TRUNC;
	} else {
		len = pk__text_settle(rec->text, n, &flags);
		/*
		 * A package ends its line unless it was stored as an open
		 * line (PK_REC_NOEOL, printk.c): a format that ends in a
		 * character of its own, not a newline.  Cut, it is complete.
		 */
		flags &= ~(unsigned)PK_REC_NOEOL;
		if (!(flags & PK_REC_TRUNC))
			flags |= rec->meta.flags & PK_REC_NOEOL;
		rec->text[len] = '\0';
	}
	rec->len = (uint32_t)len;
	rec->meta.flags = (uint16_t)flags;
}
