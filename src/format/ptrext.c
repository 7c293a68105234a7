// SPDX-License-Identifier: MIT
/*
 * ptrext.c - the pointer extensions of the Linux kernel's vsprintf(), for
 * formats marked as kernel formats (see printk/kernel.h): the same text as
 * Linux 6.1 prints for the same bytes.
 *
 *   %pS %ps %pSR %pB   symbol+0xoff/0xsize [module], from the dynamic
 *                      symbol tables (src/symtab.c), or 0xADDR
 *   %ph %phC %phD %phN up to 64 bytes in hex, the count from the width
 *   %pM %pMR %pMF %pm %pmR   MAC addresses
 *   %pI4 %pi4 (h l n b)  %pI6 %pi6 %pI6c   IP addresses (RFC 5952)
 *   %pU %pUb %pUB %pUl %pUL   UUIDs and GUIDs
 *   %pe                errno name of an ERR_PTR ("-EINVAL")
 *   %pE[achnops]       escaped bytes (string_escape_mem()), the count from
 *                      the width
 *   %pa %pad           *(phys_addr_t *) / *(dma_addr_t *) as 0x%016llx
 *   %pks %pus          a string
 *   %p %px %pK, others the address in hex, as a kernel booted with
 *                      no_hash_pointers: a process's own addresses are
 *                      not hidden from itself
 *
 * An argument that cannot be dereferenced prints as the kernel's
 * check_pointer() does: "(null)", or "(efault)" for the first page and
 * ERR_PTR values.  Widths and precisions apply as in the kernel: to the
 * whole text for most, as the byte count for %ph and %pE.  Both are
 * clamped to PK__KFIELD_MAX (a record's length): a wider field would show
 * no more of the record, and %pE reads at most that many bytes.
 *
 * No lock, no allocation, no locale: safe in a signal handler.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "format/format.h"
#include "format/ptrext.h"
#include "format/symtab.h"

#define MAX_ERRNO	4095
#define HEX_MAX		64		/* %ph prints at most 64 bytes */
#define SYM_LEN		512

_Static_assert(PK__KFIELD_MAX == PK_RECORD_MAX, "a kernel field is clamped to a record");

static const char hex_lo[] = "0123456789abcdef", hex_up[] = "0123456789ABCDEF";

static void out(const struct pk__kout *o, const char *p, size_t n)
{
	if (n)
		o->put(o->sink, p, n);
}

static void spaces(const struct pk__kout *o, int64_t n)
{
	static const char sp[16] = "                ";

	for (; n > 0; n -= 16)
		out(o, sp, n < 16 ? (size_t)n : 16);
}

/* string_nocheck(): at most prec bytes of @s, in a field of the width. */
static void field(const struct pk__kout *o, const struct pk__kspec *ks, const char *s)
{
	size_t n = ks->prec < 0 ? strlen(s) : strnlen(s, (size_t)ks->prec);
	int64_t pad = (int64_t)ks->width - (int64_t)n;

	if (!(ks->fl & PK__KF_LEFT))
		spaces(o, pad);
	out(o, s, n);
	if (ks->fl & PK__KF_LEFT)
		spaces(o, pad);
}

/* error_string(): as field(), cut at 2 * sizeof(void *) without a precision. */
static void error_string(const struct pk__kout *o, const struct pk__kspec *ks, const char *s)
{
	struct pk__kspec k = *ks;

	if (k.prec < 0)
		k.prec = 2 * (int)sizeof(void *);
	field(o, &k, s);
}

/* check_pointer(): true (and the error printed) when @p is not readable. */
static bool bad_pointer(const struct pk__kout *o, const struct pk__kspec *ks, const void *p)
{
	uintptr_t v = (uintptr_t)p;

	if (!p) {
		error_string(o, ks, "(null)");
		return true;
	}
	if (v < 4096 || v >= (uintptr_t)-MAX_ERRNO) {
		error_string(o, ks, "(efault)");
		return true;
	}
	return false;
}

/*
 * The kernel's number(): @num in @base (10 or 16, lower case), @sign: a
 * signed value; '#' puts "0x" before hex digits, zero or not.
 */
static void number(const struct pk__kout *o, const struct pk__kspec *ks, uint64_t num,
		   unsigned base, bool sign)
{
	char tmp[24], pre[3];
	int i = 0, np = 0, width = ks->width, prec = ks->prec;
	unsigned fl = ks->fl;

	if (fl & PK__KF_LEFT)
		fl &= ~PK__KF_ZERO;
	if (sign && (int64_t)num < 0) {
		pre[np++] = '-';
		num = 0 - num;
	} else if (sign && (fl & PK__KF_PLUS)) {
		pre[np++] = '+';
	} else if (sign && (fl & PK__KF_SPACE)) {
		pre[np++] = ' ';
	}
	if ((fl & PK__KF_ALT) && base == 16) {
		pre[np++] = '0';
		pre[np++] = 'x';
	}
	do {
		tmp[i++] = hex_lo[num % base];
		num /= base;
	} while (num);
	if (i > prec)
		prec = i;
	width -= np + prec;
	if (!(fl & (PK__KF_ZERO | PK__KF_LEFT))) {
		spaces(o, width);
		width = 0;
	}
	out(o, pre, (size_t)np);
	if (!(fl & PK__KF_LEFT)) {
		for (; width > 0; width--)
			out(o, "0", 1);
	}
	for (; prec > i; prec--)
		out(o, "0", 1);
	while (--i >= 0)
		out(o, &tmp[i], 1);
	spaces(o, width);
}

/* pointer_string(): %px. Without a width, 16 digits with leading zeros. */
static void pointer_string(const struct pk__kout *o, const struct pk__kspec *ks, const void *p)
{
	struct pk__kspec k = *ks;

	if (k.width == -1) {
		k.width = 2 * (int)sizeof(p);
		k.fl |= PK__KF_ZERO;
	}
	number(o, &k, (uintptr_t)p, 16, false);
}

static char *hex_byte(char *p, unsigned char c, const char *digits)
{
	*p++ = digits[c >> 4];
	*p++ = digits[c & 15];
	return p;
}

/* %pS %ps %pB (and R after S or s). */
static void symbol(const struct pk__kout *o, const struct pk__kspec *ks, const void *p,
		   const char *ext)
{
	char sym[SYM_LEN];

	/* R: __builtin_extract_return_addr(), the identity here. */
	pk__sym_format(sym, sizeof(sym), (uintptr_t)p, ext[0] != 's', ext[0] == 'B');
	field(o, ks, sym);
}

/* %ph: the width is the byte count (none: 1, 0: nothing, at most 64). */
static void hex_string(const struct pk__kout *o, const struct pk__kspec *ks, const unsigned char *a,
		       char sel)
{
	char sep = sel == 'C' ? ':' : sel == 'D' ? '-' : sel == 'N' ? 0 : ' ';
	char b[3];
	int i, len = 1;

	if (ks->width == 0)
		return;
	if (bad_pointer(o, ks, a))
		return;
	if (ks->width > 0)
		len = ks->width < HEX_MAX ? ks->width : HEX_MAX;
	for (i = 0; i < len; i++) {
		hex_byte(b, a[i], hex_lo);
		b[2] = sep;
		out(o, b, sep && i != len - 1 ? 3 : 2);
	}
}

/* %pM %pMR %pMF %pm %pmR */
static void mac(const struct pk__kout *o, const struct pk__kspec *ks, const unsigned char *a,
		const char *ext)
{
	char s[sizeof("xx:xx:xx:xx:xx:xx")], *p = s, sep = ext[1] == 'F' ? '-' : ':';
	bool rev = ext[1] == 'R';
	int i;

	if (bad_pointer(o, ks, a))
		return;
	for (i = 0; i < 6; i++) {
		p = hex_byte(p, a[rev ? 5 - i : i], hex_lo);
		if (ext[0] == 'M' && i != 5)
			*p++ = sep;
	}
	*p = '\0';
	field(o, ks, s);
}

/* ip4_string(): @order 'h' host, 'l' little endian, else network order. */
static char *ip4(char *p, const unsigned char *a, bool zeros, char order)
{
	int i, idx = 0, step = 1;
	unsigned v;

	if (order == 'l' || (order == 'h' && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)) {
		idx = 3;
		step = -1;
	}
	for (i = 0; i < 4; i++, idx += step) {
		v = a[idx];
		if (zeros || v >= 100)
			*p++ = (char)('0' + v / 100);
		if (zeros || v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
		if (i < 3)
			*p++ = '.';
	}
	*p = '\0';
	return p;
}

static unsigned word16(const unsigned char *a, int i)
{
	return (unsigned)a[2 * i] << 8 | a[2 * i + 1];
}

/* ip6_compressed_string(): RFC 5952, with a dotted IPv4 tail for mapped and ISATAP. */
static char *ip6c(char *p, const unsigned char *a)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	bool v4 = !memcmp(a, mapped, 12) ||
		  ((a[8] | 0x02) == 0x02 && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe);
	int range = v4 ? 6 : 8, longest = 1, colonpos = -1, i, j;
	bool needcolon = false;
	unsigned w;

	/* The first of the longest runs of zero words, if longer than one. */
	for (i = 0; i < range; i++) {
		for (j = i; j < range && !word16(a, j); j++)
			;
		if (j - i > longest) {
			longest = j - i;
			colonpos = i;
		}
	}
	for (i = 0; i < range; i++) {
		if (i == colonpos) {
			if (needcolon || i == 0)
				*p++ = ':';
			*p++ = ':';
			needcolon = false;
			i += longest - 1;
			continue;
		}
		if (needcolon)
			*p++ = ':';
		w = word16(a, i);
		if (w >= 0x1000)
			*p++ = hex_lo[w >> 12];
		if (w >= 0x100)
			*p++ = hex_lo[w >> 8 & 15];
		if (w >= 0x10)
			*p++ = hex_lo[w >> 4 & 15];
		*p++ = hex_lo[w & 15];
		needcolon = true;
	}
	if (v4) {
		if (needcolon)
			*p++ = ':';
		p = ip4(p, a + 12, false, 'n');
	}
	*p = '\0';
	return p;
}

/* %pI4 %pi4 %pI6 %pi6 %pI6c */
static void ip(const struct pk__kout *o, const struct pk__kspec *ks, const unsigned char *a,
	       const char *ext)
{
	char s[sizeof("xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:255.255.255.255")], *p = s;
	int i;

	if (bad_pointer(o, ks, a))
		return;
	if (ext[1] == '4') {
		ip4(s, a, ext[0] == 'i', ext[2]);
	} else if (ext[1] == '6' && ext[0] == 'I' && ext[2] == 'c') {
		ip6c(s, a);
	} else if (ext[1] == '6') {
		for (i = 0; i < 16; i++) {
			p = hex_byte(p, a[i], hex_lo);
			if (ext[0] == 'I' && (i & 1) && i != 15)
				*p++ = ':';
		}
		*p = '\0';
	} else {
		error_string(o, ks, ext[0] == 'i' ? "(%pi?)" : "(%pI?)");
		return;
	}
	field(o, ks, s);
}

/* %pU[bBlL]: l and L are GUIDs (the first three fields little endian). */
static void uuid(const struct pk__kout *o, const struct pk__kspec *ks, const unsigned char *a,
		 char sel)
{
	static const unsigned char guid_index[16] = { 3, 2, 1, 0, 5, 4, 7, 6,
						      8, 9, 10, 11, 12, 13, 14, 15 };
	const char *digits = sel == 'B' || sel == 'L' ? hex_up : hex_lo;
	bool guid = sel == 'l' || sel == 'L';
	char s[37], *p = s;
	int i;

	if (bad_pointer(o, ks, a))
		return;
	for (i = 0; i < 16; i++) {
		p = hex_byte(p, a[guid ? guid_index[i] : i], digits);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*p++ = '-';
	}
	*p = '\0';
	field(o, ks, s);
}

/*
 * The errnos of the kernel's include/linux/errno.h, 512 to 531, which
 * never reach user space and so no C library names; kernel code ported
 * here returns them (dev_err_probe() and -EPROBE_DEFER).  NULL: a gap.
 */
static const char *const kernel_errnos[] = {
	"ERESTARTSYS", "ERESTARTNOINTR", "ERESTARTNOHAND", "ENOIOCTLCMD",
	"ERESTART_RESTARTBLOCK", "EPROBE_DEFER", "EOPENSTALE", "ENOPARAM", NULL,
	"EBADHANDLE", "ENOTSYNC", "EBADCOOKIE", "ENOTSUPP", "ETOOSMALL",
	"ESERVERFAULT", "EBADTYPE", "EJUKEBOX", "EIOCBQUEUED", "ERECALLCONFLICT",
	"ENOGRACE",
};

/* %pe: the errno's name, "-EINVAL"; an unknown one as a signed number. */
static void err_ptr(const struct pk__kout *o, const struct pk__kspec *ks, const void *p)
{
	int err = (int)(intptr_t)p;
	const char *name = strerrorname_np(-err);
	char s[40];

	if (!name && -err >= 512 && -err < 512 + (int)PK__ARRAY_SIZE(kernel_errnos))
		name = kernel_errnos[-err - 512];

	if (name && strlen(name) < sizeof(s) - 1) {
		s[0] = '-';
		memcpy(s + 1, name, strlen(name) + 1);
		field(o, ks, s);
		return;
	}
	number(o, ks, (uint64_t)(int64_t)err, 10, true);
}

/* The kernel's isprint() (Latin-1: 0xa0-0xff print) and isascii(). */
static bool k_isprint(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c >= 0xa0;
}

#define ESC_SPACE	0x01u
#define ESC_SPECIAL	0x02u
#define ESC_NULL	0x04u
#define ESC_OCTAL	0x08u
#define ESC_ANY		(ESC_SPACE | ESC_OCTAL | ESC_SPECIAL | ESC_NULL)
#define ESC_NP		0x10u
#define ESC_HEX		0x20u

/* One byte as string_escape_mem() writes it under @flags (no @only set). */
static size_t escape1(unsigned char c, unsigned flags, char *b)
{
	const char *from = "\n\r\t\v\f", *to = "nrtvf";
	const char *sfrom = "\"\\\a\033", *sto = "\"\\ae";
	const char *q;

	if ((flags & ESC_NP) && k_isprint(c))
		goto pass;
	if ((flags & ESC_SPACE) && c && (q = strchr(from, c))) {
		b[0] = '\\';
		b[1] = to[q - from];
		return 2;
	}
	if ((flags & ESC_SPECIAL) && c && (q = strchr(sfrom, c))) {
		b[0] = '\\';
		b[1] = sto[q - sfrom];
		return 2;
	}
	if ((flags & ESC_NULL) && !c) {
		b[0] = '\\';
		b[1] = '0';
		return 2;
	}
	if (flags & ESC_OCTAL) {
		b[0] = '\\';
		b[1] = (char)('0' + (c >> 6));
		b[2] = (char)('0' + (c >> 3 & 7));
		b[3] = (char)('0' + (c & 7));
		return 4;
	}
	if (flags & ESC_HEX) {
		b[0] = '\\';
		b[1] = 'x';
		hex_byte(b + 2, c, hex_lo);
		return 4;
	}
pass:
	b[0] = (char)c;
	return 1;
}

/* %pE[achnops]: the width is the byte count (none: 1); no padding. */
static size_t escaped(const struct pk__kout *o, const struct pk__kspec *ks, const unsigned char *a,
		      const char *ext)
{
	unsigned flags = 0;
	size_t n = 1, i, k;
	char b[4];

	for (; ext[n]; n++) {
		const char *letters = "achnops", *q = strchr(letters, ext[n]);
		static const unsigned bits[] = { ESC_ANY, ESC_SPECIAL, ESC_HEX, ESC_NULL,
						 ESC_OCTAL, ESC_NP, ESC_SPACE };

		if (!q)
			break;
		flags |= bits[q - letters];
	}
	if (ks->width == 0 || bad_pointer(o, ks, a))
		return n;
	if (!flags)
		flags = ESC_ANY | ESC_NP;
	for (i = 0; i < (ks->width < 0 ? 1u : (size_t)ks->width); i++) {
		k = escape1(a[i], flags, b);
		out(o, b, k);
	}
	return n;
}

/* The letters and digits after the 'p' that belong to the conversion. */
static size_t alnum_run(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
	       (s[n] >= '0' && s[n] <= '9'))
		n++;
	return n;
}

size_t pk__ptrext(const struct pk__kout *o, const char *ext, const void *ptr,
		  const struct pk__kspec *spec)
{
	struct pk__kspec k = *spec;
	const struct pk__kspec *ks = &k;
	size_t n = alnum_run(ext);
	uintptr_t v = (uintptr_t)ptr;
	uint64_t u;

	/*
	 * A field wider than a record shows nothing more, and the padding
	 * and zeros here are written a few bytes at a time: clamp, as the
	 * kernel clamps to its own bounds (set_field_width()).
	 */
	if (k.width > PK__KFIELD_MAX)
		k.width = PK__KFIELD_MAX;
	if (k.prec > PK__KFIELD_MAX)
		k.prec = PK__KFIELD_MAX;

	switch (ext[0]) {
	case 'S': case 's': case 'B':
		symbol(o, ks, ptr, ext);
		break;
	case 'h':
		hex_string(o, ks, ptr, ext[1]);
		break;
	case 'M': case 'm':
		mac(o, ks, ptr, ext);
		break;
	case 'I': case 'i':
		ip(o, ks, ptr, ext);
		break;
	case 'U':
		uuid(o, ks, ptr, ext[1]);
		break;
	case 'E':
		escaped(o, ks, ptr, ext);
		break;
	case 'e':
		if (v >= (uintptr_t)-MAX_ERRNO)
			err_ptr(o, ks, ptr);
		else
			pointer_string(o, ks, ptr);
		break;
	case 'a':
		if (bad_pointer(o, ks, ptr))
			break;
		if (ext[1] == 'd')
			u = *(const uint64_t *)ptr;	/* dma_addr_t */
		else
			u = *(const uintptr_t *)ptr;	/* phys_addr_t */
		{
			struct pk__kspec k = { PK__KF_ALT | PK__KF_ZERO, 2 + 2 * (int)sizeof(u), -1 };

			number(o, &k, u, 16, false);
		}
		break;
	case 'k': case 'u':
		if (ext[1] != 's')
			error_string(o, ks, "(einval)");
		else if (!bad_pointer(o, ks, ptr))
			field(o, ks, ptr);
		break;
	default:
		pointer_string(o, ks, ptr);
		break;
	}
	return n;
}
