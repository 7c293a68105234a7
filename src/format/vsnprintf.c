// SPDX-License-Identifier: MIT
/*
 * vsnprintf.c - the formatter behind pk_printk(): it prints what glibc's
 * snprintf() prints, with no malloc, no lock, no locale and no stdio, so it
 * may run in a signal handler.  Its entry points keep the names of the
 * stb_sprintf copy it replaces (pk__stbsp_vsnprintf, pk__stbsp_snprintf).
 *
 * Grammar (glibc's): %[N$][flags][width][.precision][length]conversion
 *  - flags: - + space # 0 ' I.  ' and I ask for the locale's grouping and
 *    digits; in the C locale, the only one used here, they change nothing.
 *  - width and precision: digits, '*' or '*M$'.  A negative '*' width is
 *    the '-' flag and its absolute value; a negative '*' precision is none.
 *  - one length: hh h l ll L q j z Z t.  ll, L and q mean long long for
 *    integers and long double for floating point; l and ll make %c and %s
 *    wide.  A second length is an unknown conversion, as in glibc.
 *  - conversions: d i u o x X b B c C s S p m % e E f F g G a A (%#m: the
 *    errno's name, as glibc 2.35 on prints it).  Anything
 *    else is printed as glibc prints it: '%', the flags, width and
 *    precision as parsed, and the character.
 * The output is glibc's, byte for byte (tests/test_printf.c compares the
 * two), with these exceptions, all on input where glibc fails or where its
 * result depends on a locale:
 *  - %n, in every spelling, is refused: the argument is not touched and
 *    -1 is returned with an empty buffer (pk_printk() then refuses the
 *    record).  A conversion glibc does not know is refused too when
 *    stb_sprintf, which this formatter replaced, would have read it as %n
 *    (its own flags $ and _ before the n: "%_n", "%$1n").
 *  - %lc, %C, %ls and %S write UTF-8, whatever the locale: no locale is
 *    looked up.  glibc agrees in a UTF-8 locale (C.UTF-8, en_US.UTF-8) for
 *    every Unicode scalar value; in the C locale it fails (-1, EILSEQ) on
 *    anything beyond ASCII.  A surrogate, a value above U+10FFFF or a
 *    negative one is written as U+FFFD (EF BF BD): glibc's UTF-8 locales
 *    fail on the first two and write 5- or 6-byte sequences for the rest.
 *  - Positional arguments (%N$, *N$) are all or nothing, up to
 *    PK_FMT_ARG_MAX (64) arguments.  A format that mixes positional and
 *    sequential conversions, leaves an argument between 1 and the highest
 *    one unused (its type is unknown), uses one argument as two types of
 *    different sizes, or numbers one above 64 is refused (-1), where glibc
 *    guesses (mixing), reads an int (a gap) or aborts (with _FORTIFY_SOURCE).
 *  - A format that ends inside a conversion ("ab%", "ab%5l") stops there:
 *    "ab" is written and its length returned.  glibc writes the same text
 *    but returns -1 (EINVAL).
 *  - The length returned is C's, saturated at INT_MAX where glibc returns
 *    -1 (EOVERFLOW); widths and precisions beyond INT_MAX are INT_MAX.
 *    Padding and digits are counted, not written, past the buffer's end,
 *    so an INT_MAX width costs what the buffer costs.  In kernel formats
 *    the %p extensions clamp theirs to a record's length (ptrext.c).
 *  - %a rounds to nearest, ties to even, whatever the rounding mode (glibc
 *    follows fesetround()); %e %f %g follow the rounding mode as glibc does.
 *
 * Floating point is converted exactly (the decimal digits of the binary
 * value, correctly rounded), as glibc does, with the algorithm of musl's
 * fmt_fp() (MIT): the value in base 10^9 words, shifted by its binary
 * exponent, in an array on the stack.  A double, or a long double whose
 * exponent is within a double's, needs about 600 bytes; other long doubles
 * (to 1e+-4951) take a 7.4 KB array, on %L conversions of such values only.
 * Positional formats keep their arguments in a 1 KB array.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "core/core.h"
#include "format/format.h"
#include "format/ptrext.h"

#define PK_FMT_ARG_MAX	64

/* Flags */
#define F_LEFT		0x01u
#define F_PLUS		0x02u
#define F_SPACE		0x04u
#define F_ALT		0x08u
#define F_ZERO		0x10u
#define F_GROUP		0x20u
#define F_I18N		0x40u

/* Lengths: LL is "ll" (long long, and wide for %c %s); BIG is L or q. */
enum len { L_NONE, L_HH, L_H, L_L, L_LL, L_BIG, L_J, L_Z, L_T };

/* The type an argument is read as. */
enum kind { K_NONE, K_INT, K_WINT, K_LONG, K_LLONG, K_IMAX, K_SIZE, K_PDIFF,
	    K_DBL, K_LDBL, K_PTR };

union arg {
	uintmax_t u;	/* integers: signed ones sign-extended */
	double d;
	long double ld;
	const void *p;
};

struct spec {
	unsigned fl;
	int width;		/* >= 0 once '*' is resolved */
	int prec;		/* -1: none */
	enum len len;
	char conv;
	int argpos, wpos, ppos;	/* N of N$ and *N$ (1-based), or 0 */
	bool wstar, pstar;
	bool wset;		/* a width was given (kernel %p extensions) */
	bool lq_long;		/* L and q make %c and %s wide (see run()) */
};

/*
 * The output: written while there is room (one byte is kept for the NUL),
 * counted always.
 */
struct sink {
	char *buf;
	size_t room;
	uint64_t len;
	bool kernel;	/* %p takes the kernel's extensions (ptrext.c) */
};

static void put(struct sink *s, const char *p, size_t n)
{
	size_t k = n < s->room ? n : s->room;

	if (k) {
		memcpy(s->buf, p, k);
		s->buf += k;
		s->room -= k;
	}
	s->len += n;
}

static void fill(struct sink *s, char c, int64_t n)
{
	size_t k;

	if (n <= 0)
		return;
	k = (uint64_t)n < s->room ? (size_t)n : s->room;
	if (k) {
		memset(s->buf, c, k);
		s->buf += k;
		s->room -= k;
	}
	s->len += (uint64_t)n;
}

static void put1(struct sink *s, char c)
{
	put(s, &c, 1);
}

/* Decimal digits of @v, ending at @end.  Return: where they begin. */
static char *utoa(uintmax_t v, char *end)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

/* Decimal digits at *@pp, saturated at INT_MAX; *@pp moves past them. */
static int read_num(const char **pp)
{
	const char *p = *pp;
	int n = 0, d;

	while (*p >= '0' && *p <= '9') {
		d = *p++ - '0';
		n = n > (INT_MAX - d) / 10 ? INT_MAX : n * 10 + d;
	}
	*pp = p;
	return n;
}

/* "N$" at *@pp: N (> 0), and *@pp moves past the '$'; else 0. */
static int read_pos(const char **pp)
{
	const char *q = *pp;
	int n;

	if (*q < '0' || *q > '9')
		return 0;
	n = read_num(&q);
	if (n <= 0 || *q != '$')
		return 0;
	*pp = q + 1;
	return n;
}

/*
 * Parse the conversion after a '%' at @p into @sp.  Return: the address of
 * the conversion character, or NULL when the format ends before it.
 */
static const char *parse(const char *p, struct spec *sp)
{
	sp->fl = 0;
	sp->width = 0;
	sp->prec = -1;
	sp->len = L_NONE;
	sp->wpos = sp->ppos = 0;
	sp->wstar = sp->pstar = false;
	sp->wset = false;
	sp->lq_long = false;
	sp->argpos = read_pos(&p);
	for (;; p++) {
		switch (*p) {
		case '-':	sp->fl |= F_LEFT;	continue;
		case '+':	sp->fl |= F_PLUS;	continue;
		case ' ':	sp->fl |= F_SPACE;	continue;
		case '#':	sp->fl |= F_ALT;	continue;
		case '0':	sp->fl |= F_ZERO;	continue;
		case '\'':	sp->fl |= F_GROUP;	continue;
		case 'I':	sp->fl |= F_I18N;	continue;
		}
		break;
	}
	if (sp->fl & F_LEFT)
		sp->fl &= ~F_ZERO;
	if (*p == '*') {
		p++;
		sp->wstar = true;
		sp->wset = true;
		sp->wpos = read_pos(&p);
	} else if (*p >= '0' && *p <= '9') {
		sp->wset = true;
		sp->width = read_num(&p);
	}
	if (*p == '.') {
		p++;
		if (*p == '*') {
			p++;
			sp->pstar = true;
			sp->ppos = read_pos(&p);
		} else {
			sp->prec = read_num(&p);
		}
	}
	switch (*p) {
	case 'h':
		sp->len = p[1] == 'h' ? L_HH : L_H;
		p += sp->len == L_HH ? 2 : 1;
		break;
	case 'l':
		sp->len = p[1] == 'l' ? L_LL : L_L;
		p += sp->len == L_LL ? 2 : 1;
		break;
	case 'L': case 'q':	sp->len = L_BIG; p++; break;
	case 'j':		sp->len = L_J; p++; break;
	case 'z': case 'Z':	sp->len = L_Z; p++; break;
	case 't':		sp->len = L_T; p++; break;
	}
	if (!*p)
		return NULL;
	sp->conv = *p;
	return p;
}

/*
 * glibc's is_long and is_long_double: j, z and t set the one that fits
 * their type (on LP64 is_long, which makes %jc, %zs wide).
 */
static bool is_long(const struct spec *sp)
{
	switch (sp->len) {
	case L_L:
	case L_LL:	return true;
	case L_BIG:	return sp->lq_long;
	case L_J:	return sizeof(intmax_t) > sizeof(int) && sizeof(intmax_t) <= sizeof(long);
	case L_Z:	return sizeof(size_t) > sizeof(int);
	case L_T:	return sizeof(ptrdiff_t) > sizeof(int);
	default:	return false;
	}
}

static bool is_long_double(const struct spec *sp)
{
	return sp->len == L_LL || sp->len == L_BIG ||
	       (sp->len == L_J && sizeof(intmax_t) > sizeof(long));
}

static bool wide(const struct spec *sp)
{
	return sp->conv == 'C' || sp->conv == 'S' || is_long(sp);
}

/* The type of the argument the conversion prints (K_NONE: it takes none). */
static enum kind data_kind(const struct spec *sp)
{
	switch (sp->conv) {
	case 'd': case 'i': case 'u': case 'o': case 'x': case 'X': case 'b': case 'B':
		switch (sp->len) {
		case L_L:	return K_LONG;
		case L_LL:
		case L_BIG:	return K_LLONG;
		case L_J:	return K_IMAX;
		case L_Z:	return K_SIZE;
		case L_T:	return K_PDIFF;
		default:	return K_INT;
		}
	case 'c': case 'C':
		return wide(sp) ? K_WINT : K_INT;
	case 's': case 'S': case 'p': case 'n':
		return K_PTR;
	case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
		return is_long_double(sp) ? K_LDBL : K_DBL;
	default:
		return K_NONE;
	}
}

static size_t kind_size(enum kind k)
{
	switch (k) {
	case K_INT:	return sizeof(int);
	case K_WINT:	return sizeof(wint_t);
	case K_LONG:	return sizeof(long);
	case K_LLONG:	return sizeof(long long);
	case K_IMAX:	return sizeof(intmax_t);
	case K_SIZE:	return sizeof(size_t);
	case K_PDIFF:	return sizeof(ptrdiff_t);
	default:	return 0;
	}
}

static void fetch(va_list *ap, enum kind k, union arg *a)
{
	switch (k) {
	case K_INT:	a->u = (uintmax_t)(intmax_t)va_arg(*ap, int); break;
	case K_WINT:	a->u = (uintmax_t)va_arg(*ap, wint_t); break;
	case K_LONG:	a->u = (uintmax_t)(intmax_t)va_arg(*ap, long); break;
	case K_LLONG:	a->u = (uintmax_t)(intmax_t)va_arg(*ap, long long); break;
	case K_IMAX:	a->u = (uintmax_t)va_arg(*ap, intmax_t); break;
	case K_SIZE:	a->u = (uintmax_t)va_arg(*ap, size_t); break;
	case K_PDIFF:	a->u = (uintmax_t)(intmax_t)va_arg(*ap, ptrdiff_t); break;
	case K_DBL:	a->d = va_arg(*ap, double); break;
	case K_LDBL:	a->ld = va_arg(*ap, long double); break;
	case K_PTR:	a->p = va_arg(*ap, const void *); break;
	case K_NONE:	break;
	}
}

/*
 * Would stb_sprintf's parser have read a %n here (@p: after the '%')?  Its
 * flags, widths and lengths are skipped; see the file's comment.
 */
static bool stb_percent_n(const char *p)
{
	while (*p && strchr("-+ #0'$_I0123456789.*hlLqjztZ", *p))
		p++;
	return *p == 'n';
}

static bool unknown(const struct spec *sp);

static bool refused(const struct spec *sp, const char *after_percent)
{
	return sp->conv == 'n' || (unknown(sp) && stb_percent_n(after_percent));
}

/*
 * A '*' width.  Negative: the '-' flag.  glibc's fast path then forgets the
 * '0' flag, its slow path (@slow, see run()) keeps it: %e %f %g are then
 * padded with zeros on the right, %a not at all, the rest with spaces.
 */
static void set_width(struct spec *sp, int w, bool slow)
{
	if (w < 0) {
		sp->fl |= F_LEFT;
		if (!slow)
			sp->fl &= ~F_ZERO;
		w = w == INT_MIN ? INT_MAX : -w;
	}
	sp->width = w;
}

static void set_prec(struct spec *sp, int p)
{
	sp->prec = p < 0 ? -1 : p;
}

/* @n bytes of @str in a field of the spec's width, padded with spaces. */
static void put_field(struct sink *s, const struct spec *sp, const char *str, size_t n)
{
	int64_t pad = (int64_t)sp->width - (int64_t)n;

	if (!(sp->fl & F_LEFT))
		fill(s, ' ', pad);
	put(s, str, n);
	if (sp->fl & F_LEFT)
		fill(s, ' ', pad);
}

/*
 * An integer: @mag with a '-' if @neg.  @sign_flags: '+' and ' ' apply
 * (signed conversions and %p).  @alt_prefix: "0x", "0X", "0b" or "0B" to
 * put before a nonzero value.
 */
static void put_int(struct sink *s, const struct spec *sp, uintmax_t mag, bool neg,
		    bool sign_flags, unsigned base, const char *alt_prefix)
{
	static const char lower[] = "0123456789abcdef", upper[] = "0123456789ABCDEF";
	const char *dig = sp->conv == 'X' ? upper : lower;
	char tmp[sizeof(uintmax_t) * CHAR_BIT], *end = tmp + sizeof(tmp), *d = end;
	char pfx[3];
	size_t pl = 0;
	int64_t nd, prec, zeros, body, pad;

	if (base == 10) {
		for (; mag; mag /= 10)
			*--d = (char)('0' + mag % 10);
	} else {
		unsigned shift = base == 16 ? 4 : base == 8 ? 3 : 1;

		for (; mag; mag >>= shift)
			*--d = dig[mag & (base - 1)];
	}
	nd = end - d;
	if (neg)
		pfx[pl++] = '-';
	else if (sign_flags && (sp->fl & F_PLUS))
		pfx[pl++] = '+';
	else if (sign_flags && (sp->fl & F_SPACE))
		pfx[pl++] = ' ';
	if (alt_prefix && nd) {
		pfx[pl++] = alt_prefix[0];
		pfx[pl++] = alt_prefix[1];
	}
	prec = sp->prec < 0 ? 1 : sp->prec;
	/* %#o: the first digit is a 0. */
	if (base == 8 && (sp->fl & F_ALT) && prec <= nd)
		prec = nd + 1;
	zeros = prec > nd ? prec - nd : 0;
	body = (int64_t)pl + zeros + nd;
	pad = (int64_t)sp->width - body;
	if (pad > 0 && !(sp->fl & F_LEFT) && (sp->fl & F_ZERO) && sp->prec < 0) {
		zeros += pad;
		pad = 0;
	}
	if (!(sp->fl & F_LEFT))
		fill(s, ' ', pad);
	put(s, pfx, pl);
	fill(s, '0', zeros);
	put(s, d, (size_t)nd);
	if (sp->fl & F_LEFT)
		fill(s, ' ', pad);
}

static void put_integer(struct sink *s, const struct spec *sp, uintmax_t raw)
{
	static const char *const pfx[] = { "0x", "0X", "0b", "0B" };
	intmax_t v;
	uintmax_t u;
	const char *alt = NULL;
	unsigned base = 10;

	if (sp->conv == 'd' || sp->conv == 'i') {
		switch (sp->len) {
		case L_HH:	v = (signed char)raw; break;
		case L_H:	v = (short)raw; break;
		case L_L:	v = (long)raw; break;
		case L_LL:
		case L_BIG:	v = (long long)raw; break;
		case L_J:	v = (intmax_t)raw; break;
		case L_Z:
		case L_T:	v = (ptrdiff_t)raw; break;
		default:	v = (int)raw; break;
		}
		u = v < 0 ? -(uintmax_t)v : (uintmax_t)v;
		put_int(s, sp, u, v < 0, true, 10, NULL);
		return;
	}
	switch (sp->len) {
	case L_HH:	u = (unsigned char)raw; break;
	case L_H:	u = (unsigned short)raw; break;
	case L_L:	u = (unsigned long)raw; break;
	case L_LL:
	case L_BIG:	u = (unsigned long long)raw; break;
	case L_J:	u = raw; break;
	case L_Z:
	case L_T:	u = (size_t)raw; break;
	default:	u = (unsigned)raw; break;
	}
	switch (sp->conv) {
	case 'o':	base = 8; break;
	case 'x':	base = 16; alt = pfx[0]; break;
	case 'X':	base = 16; alt = pfx[1]; break;
	case 'b':	base = 2; alt = pfx[2]; break;
	case 'B':	base = 2; alt = pfx[3]; break;
	}
	put_int(s, sp, u, false, false, base, (sp->fl & F_ALT) ? alt : NULL);
}

/* %p: glibc's "%#x" of the address (flags, width and precision apply), or "(nil)". */
static void put_pointer(struct sink *s, const struct spec *sp, const void *p)
{
	struct spec x = *sp;

	if (!p) {
		put_field(s, sp, "(nil)", 5);
		return;
	}
	x.conv = 'x';
	put_int(s, &x, (uintptr_t)p, false, true, 16, "0x");
}

/* %s, and %m with @str its text. */
static void put_string(struct sink *s, const struct spec *sp, const char *str)
{
	if (!str)
		str = sp->prec < 0 || sp->prec >= 6 ? "(null)" : "";
	put_field(s, sp, str, sp->prec < 0 ? strlen(str) : strnlen(str, (size_t)sp->prec));
}

/* UTF-8 for @c into @b (4 bytes); U+FFFD for what is not a Unicode scalar value. */
static size_t utf8(char *b, uint32_t c)
{
	if (c < 0x80) {
		b[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		c = 0xfffd;
	if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | c >> 18);
	b[1] = (char)(0x80 | (c >> 12 & 0x3f));
	b[2] = (char)(0x80 | (c >> 6 & 0x3f));
	b[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* %lc: one wide character (precision does not apply, as in glibc). */
static void put_wchar(struct sink *s, const struct spec *sp, wint_t c)
{
	char b[4];

	put_field(s, sp, b, utf8(b, (uint32_t)c));
}

/*
 * %ls: the bytes of whole characters that fit in the precision, as
 * wcsrtombs() with a limit gives them.  Once the precision is used up no
 * further character is read: the array need not go on (or be terminated)
 * past what is printed, and %.0ls reads nothing, as in glibc.
 */
static void put_wstring(struct sink *s, const struct spec *sp, const wchar_t *ws)
{
	size_t n = 0, i, k, max = sp->prec < 0 ? SIZE_MAX : (size_t)sp->prec;
	int64_t pad;
	char b[4];

	if (!ws) {
		put_string(s, sp, NULL);
		return;
	}
	for (i = 0; n < max && ws[i]; i++) {
		k = utf8(b, (uint32_t)ws[i]);
		if (k > max - n)
			break;
		n += k;
	}
	pad = (int64_t)sp->width - (int64_t)n;
	if (!(sp->fl & F_LEFT))
		fill(s, ' ', pad);
	for (n = 0, i = 0; n < max && ws[i]; i++) {
		k = utf8(b, (uint32_t)ws[i]);
		if (k > max - n)
			break;
		put(s, b, k);
		n += k;
	}
	if (sp->fl & F_LEFT)
		fill(s, ' ', pad);
}

/*
 * %m: glibc's strerror() text for @err, without its locale lookup; %#m:
 * the errno's name (glibc 2.35 on).  Unknown numbers: "Unknown error -5",
 * and for %#m the number as %d prints it, as glibc does.
 */
static void put_errno(struct sink *s, const struct spec *sp, int err)
{
	static const char unknown[] = "Unknown error ";
	bool alt = sp->fl & F_ALT;
	const char *text = alt ? strerrorname_np(err) : strerrordesc_np(err);
	char b[sizeof(unknown) + 12], *d;
	unsigned u;

	if (text) {
		put_string(s, sp, text);
		return;
	}
	u = err < 0 ? 0u - (unsigned)err : (unsigned)err;
	if (alt) {
		/* The number as %d, with the conversion's flags and precision. */
		struct spec x = *sp;

		x.conv = 'd';
		put_int(s, &x, u, err < 0, true, 10, NULL);
		return;
	}
	d = utoa(u, b + sizeof(b) - 1);
	b[sizeof(b) - 1] = '\0';
	if (err < 0)
		*--d = '-';
	d -= sizeof(unknown) - 1;
	memcpy(d, unknown, sizeof(unknown) - 1);
	put_string(s, sp, d);
}

/* A conversion glibc does not know: printed as glibc's printf_unknown() does. */
static void put_unknown(struct sink *s, const struct spec *sp)
{
	char b[40], num[16], *d;
	size_t n = 0;

	b[n++] = '%';
	if (sp->fl & F_ALT)
		b[n++] = '#';
	if (sp->fl & F_GROUP)
		b[n++] = '\'';
	if (sp->fl & F_PLUS)
		b[n++] = '+';
	else if (sp->fl & F_SPACE)
		b[n++] = ' ';
	if (sp->fl & F_LEFT)
		b[n++] = '-';
	if (sp->fl & F_ZERO)
		b[n++] = '0';
	if (sp->fl & F_I18N)
		b[n++] = 'I';
	if (sp->width) {
		d = utoa((unsigned)sp->width, num + sizeof(num));
		memcpy(b + n, d, (size_t)(num + sizeof(num) - d));
		n += (size_t)(num + sizeof(num) - d);
	}
	if (sp->prec >= 0) {
		b[n++] = '.';
		d = utoa((unsigned)sp->prec, num + sizeof(num));
		memcpy(b + n, d, (size_t)(num + sizeof(num) - d));
		n += (size_t)(num + sizeof(num) - d);
	}
	b[n++] = sp->conv;
	put(s, b, n);
}

/* Spaces or zeros to fill a field of width @w holding @l bytes (musl's pad()). */
static void pad(struct sink *s, char c, int64_t w, int64_t l, unsigned fl)
{
	if ((fl & (F_LEFT | F_ZERO)) || l >= w)
		return;
	fill(s, c, w - l);
}

/* The sign of a floating-point conversion: pl bytes at *prefix. */
static const char *fp_sign(long double y, unsigned fl, int *pl)
{
	*pl = 1;
	if (signbit(y))
		return "-";
	if (fl & F_PLUS)
		return "+";
	if (fl & F_SPACE)
		return " ";
	*pl = 0;
	return "";
}

/* inf, nan: padded with spaces whatever the flags, as glibc does. */
static void put_special(struct sink *s, const struct spec *sp, long double y)
{
	bool up = sp->conv >= 'A' && sp->conv <= 'Z';
	const char *str = isnan(y) ? (up ? "NAN" : "nan") : (up ? "INF" : "inf");
	int pl;
	const char *sign = fp_sign(y, sp->fl, &pl);

	pad(s, ' ', sp->width, 3 + pl, sp->fl & ~F_ZERO);
	put(s, sign, (size_t)pl);
	put(s, str, 3);
	pad(s, ' ', sp->width, 3 + pl, (sp->fl & ~F_ZERO) ^ F_LEFT);
}

/*
 * Words of the base-10^9 array for values whose binary exponent is within
 * +-@e: the mantissa's words, one word per 9 bits of right shift, slack.
 */
#define FP_INIT_WORDS	((LDBL_MANT_DIG + 8) / 9 + 2)
#define FP_WORDS(e)	(FP_INIT_WORDS + ((e) + 36) / 9 + 4)
#define FP_SMALL_EXP	1140
#define FP_BIG_EXP	(LDBL_MAX_EXP + LDBL_MANT_DIG + 64)

/*
 * The first base-10^9 words of a mantissa @y in [2^28, 2^29) (or 0), from
 * @z on: its integer part, then 9 decimal digits a word, exactly (each
 * product keeps within the type's mantissa).  Return: the end.  In double
 * for a double: SSE conversions, where x87 ones reload the control word.
 */
static uint32_t *expand_dbl(double y, uint32_t *z)
{
	do {
		*z = (uint32_t)y;
		y = 1000000000 * (y - *z++);
	} while (y != 0);
	return z;
}

static uint32_t *expand_ldbl(long double y, uint32_t *z)
{
	do {
		*z = (uint32_t)y;
		y = 1000000000 * (y - *z++);
	} while (y != 0);
	return z;
}

/*
 * %e %f %g (finite @y; @dbl: it is a double): musl's fmt_fp(), with
 * glibc's output.  @big holds @nbig words, enough for @y's exponent (see
 * FP_WORDS).  Lengths are 64-bit: a precision of INT_MAX is counted, not
 * written, past the buffer.
 */
static void fmt_fp(struct sink *s, const struct spec *sp, long double y, bool dbl,
		   uint32_t *big, size_t nbig)
{
	uint32_t *a, *d, *r, *z;
	int e2 = 0, e, e0, pl;
	int64_t i, j, l, p = sp->prec, w = sp->width;
	unsigned fl = sp->fl;
	char t = sp->conv;
	char buf[9 + LDBL_MANT_DIG / 4], *str;
	char ebuf0[3 * sizeof(int)], *ebuf = &ebuf0[3 * sizeof(int)], *estr = ebuf;
	const char *prefix = fp_sign(y, fl, &pl);
	double yd = 0;

	if (signbit(y))
		y = -y;
	if (dbl)
		y = yd = frexp((double)y, &e2) * 2;
	else
		y = frexpl(y, &e2) * 2;
	if (y != 0)
		e2--;
	if (p < 0)
		p = 6;
	if (y != 0) {
		y *= 0x1p28L;
		yd *= 0x1p28;
		e2 -= 28;
	}

	if (e2 < 0)
		a = r = big;
	else
		a = r = big + nbig - FP_INIT_WORDS - 1;
	z = dbl ? expand_dbl(yd, a) : expand_ldbl(y, a);

	while (e2 > 0) {
		uint32_t carry = 0;
		int sh = e2 < 29 ? e2 : 29;

		for (d = z - 1; d >= a; d--) {
			uint64_t x = ((uint64_t)*d << sh) + carry;

			*d = (uint32_t)(x % 1000000000);
			carry = (uint32_t)(x / 1000000000);
		}
		if (carry)
			*--a = carry;
		while (z > a && !z[-1])
			z--;
		e2 -= sh;
	}
	while (e2 < 0) {
		uint32_t carry = 0, *b;
		int sh = -e2 < 9 ? -e2 : 9;
		int64_t need = 1 + (p + LDBL_MANT_DIG / 3 + 8) / 9;

		for (d = a; d < z; d++) {
			uint32_t rm = *d & ((1u << sh) - 1);

			*d = (*d >> sh) + carry;
			carry = (1000000000u >> sh) * rm;
		}
		if (!*a)
			a++;
		if (carry)
			*z++ = carry;
		/* No digits past the precision asked for. */
		b = (t | 32) == 'f' ? r : a;
		if (z - b > need)
			z = b + need;
		e2 += sh;
	}

	if (a < z)
		for (i = 10, e = (int)(9 * (r - a)); *a >= i; i *= 10, e++)
			;
	else
		e = 0;

	e0 = e;
	/* Round: j is the precision after the radix point (maybe negative). */
	j = p - ((t | 32) != 'f') * e - ((t | 32) == 'g' && p);
	if (j < 9 * (z - r - 1)) {
		uint32_t x;

		/* Floor division of a negative j, without C's truncation. */
		d = r + 1 + ((j + 9 * LDBL_MAX_EXP) / 9 - LDBL_MAX_EXP);
		j += 9 * LDBL_MAX_EXP;
		j %= 9;
		for (i = 10, j++; j < 9; i *= 10, j++)
			;
		x = (uint32_t)(*d % i);
		/* Are there any significant digits past j? */
		if (x || d + 1 != z) {
			long double round = 2 / LDBL_EPSILON, small;

			if ((*d / i & 1) || (i == 1000000000 && d > a && (d[-1] & 1)))
				round += 2;
			if (x < i / 2)
				small = 0x0.8p0L;
			else if (x == i / 2 && d + 1 == z)
				small = 0x1.0p0L;
			else
				small = 0x1.8p0L;
			if (pl && *prefix == '-') {
				round *= -1;
				small *= -1;
			}
			*d -= x;
			/* Round up or not as the rounding mode does round + small. */
			if (round + small != round) {
				*d = (uint32_t)(*d + i);
				while (*d > 999999999) {
					*d-- = 0;
					if (d < a)
						*--a = 0;
					(*d)++;
				}
				for (i = 10, e = (int)(9 * (r - a)); *a >= i; i *= 10, e++)
					;
			}
		}
		if (z > d + 1)
			z = d + 1;
	}
	for (; z > a && !z[-1]; z--)
		;

	if ((t | 32) == 'g') {
		if (!p)
			p++;
		if (p > e && e >= -4) {
			t--;
			p -= e + 1;
		} else {
			t -= 2;
			/*
			 * glibc: "%#.3g" of 999.5 is "1.e+03", not "1.00e+03": when
			 * rounding P nines to P+1 digits moves a value out of %f's
			 * range, it prints no digit after the point.
			 */
			p = (fl & F_ALT) && e0 == p - 1 && e == p ? 0 : p - 1;
		}
		if (!(fl & F_ALT)) {
			/* Trailing zeros of the last word. */
			if (z > a && z[-1])
				for (i = 10, j = 0; z[-1] % i == 0; i *= 10, j++)
					;
			else
				j = 9;
			if ((t | 32) == 'f')
				i = 9 * (z - r - 1) - j;
			else
				i = 9 * (z - r - 1) + e - j;
			p = p < i ? p : i;
			if (p < 0)
				p = 0;
		}
	}
	l = 1 + p + (p || (fl & F_ALT));
	if ((t | 32) == 'f') {
		if (e > 0)
			l += e;
	} else {
		estr = utoa((unsigned)(e < 0 ? -e : e), ebuf);
		while (ebuf - estr < 2)
			*--estr = '0';
		*--estr = e < 0 ? '-' : '+';
		*--estr = t;
		l += ebuf - estr;
	}

	pad(s, ' ', w, pl + l, fl);
	put(s, prefix, (size_t)pl);
	pad(s, '0', w, pl + l, fl ^ F_ZERO);

	if ((t | 32) == 'f') {
		if (a > r)
			a = r;
		for (d = a; d <= r; d++) {
			str = utoa(*d, buf + 9);
			if (d != a)
				while (str > buf)
					*--str = '0';
			put(s, str, (size_t)(buf + 9 - str));
		}
		if (p || (fl & F_ALT))
			put1(s, '.');
		for (; d < z && p > 0; d++, p -= 9) {
			str = utoa(*d, buf + 9);
			while (str > buf)
				*--str = '0';
			put(s, str, p < 9 ? (size_t)p : 9);
		}
		fill(s, '0', p);
	} else {
		if (z <= a)
			z = a + 1;
		for (d = a; d < z && p >= 0; d++) {
			int64_t n;

			str = utoa(*d, buf + 9);
			if (d != a) {
				while (str > buf)
					*--str = '0';
			} else {
				put(s, str++, 1);
				if (p > 0 || (fl & F_ALT))
					put1(s, '.');
			}
			n = buf + 9 - str;
			put(s, str, (size_t)(n < p ? n : p));
			p -= n;
		}
		fill(s, '0', p);
		put(s, estr, (size_t)(ebuf - estr));
	}

	if (fl & F_LEFT)
		fill(s, (fl & F_ZERO) ? '0' : ' ', w - (pl + l));
}

/* Values within a double's exponents: about 600 bytes of stack. */
static __attribute__((noinline)) void fmt_fp_small(struct sink *s, const struct spec *sp,
						   long double y, bool dbl)
{
	uint32_t big[FP_WORDS(FP_SMALL_EXP)];

	fmt_fp(s, sp, y, dbl, big, PK__ARRAY_SIZE(big));
}

/* Long doubles beyond them (to 1e+-4951 on x86): 7.4 KB. */
static __attribute__((noinline)) void fmt_fp_big(struct sink *s, const struct spec *sp,
						 long double y)
{
	uint32_t big[FP_WORDS(FP_BIG_EXP)];

	fmt_fp(s, sp, y, false, big, PK__ARRAY_SIZE(big));
}

/*
 * A pseudo-denormal (x87: exponent 0 with the integer bit set, a pattern
 * the FPU never makes but a union can): the FPU reads it as 1.f * 2^-16382,
 * glibc's %e %f %g as the denormal 0.f * 2^-16382 (its %a shows the bits),
 * but for a zero fraction, 2^-16382 as the FPU does.  Return the value
 * glibc's decimal conversions print.
 */
static long double glibc_decimal_value(long double y)
{
#if LDBL_MANT_DIG == 64
	unsigned char b[sizeof(long double)];
	uint64_t m;

	memcpy(b, &y, sizeof(b));
	memcpy(&m, b, sizeof(m));
	if ((m >> 63) && (m << 1) && !(b[8] | (b[9] & 0x7fu)))
		return signbit(y) ? -(-y - LDBL_MIN) : y - LDBL_MIN;
#endif
	return y;
}

static void put_decimal(struct sink *s, const struct spec *sp, long double y, bool dbl)
{
	int e = 0;

	if (!dbl)
		y = glibc_decimal_value(y);

	if (!isfinite(y)) {
		put_special(s, sp, y);
		return;
	}
	if (!dbl)
		frexpl(y, &e);
	if (e >= -FP_SMALL_EXP && e <= FP_SMALL_EXP)
		fmt_fp_small(s, sp, y, dbl);
	else
		fmt_fp_big(s, sp, y);
}

/*
 * The layout of glibc's %a for one type: the leading hex digit holds
 * @lead_bits bits (1, or 4 for x87's explicit integer bit), @nfrac hex
 * digits follow, and a subnormal below @min_normal is printed with the
 * exponent @sub_exp and a leading digit below the normal ones.
 */
struct hexfmt {
	int lead_bits, nfrac, sub_exp;
	long double min_normal;
};

static const struct hexfmt hex_double = { 1, (DBL_MANT_DIG + 2) / 4, DBL_MIN_EXP - 1, DBL_MIN };
#if LDBL_MANT_DIG == 64
/* x87: the top 4 bits of the 64-bit mantissa lead, 15 digits follow. */
static const struct hexfmt hex_ldouble = { 4, 15, LDBL_MIN_EXP - 4, LDBL_MIN };
#else
static const struct hexfmt hex_ldouble = { 1, (LDBL_MANT_DIG + 2) / 4, LDBL_MIN_EXP - 1,
					   LDBL_MIN };
#endif

/* %a %A (finite @y): glibc's printf_fphex(). */
static void put_hex(struct sink *s, const struct spec *sp, long double y, const struct hexfmt *hf)
{
	const char *xd = sp->conv == 'A' ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned char dig[32];
	char ebuf[16], *estr, pfx[3];
	int64_t prec = sp->prec, ndig = 0, w, i;
	int lead = 0, exp = 0, pl, n;
	const char *sign = fp_sign(y, sp->fl, &pl);
	long double v;

	if (signbit(y))
		y = -y;
	if (y != 0) {
		if (y < hf->min_normal) {
			v = ldexpl(y, -hf->sub_exp);
			exp = hf->sub_exp;
		} else {
			v = frexpl(y, &exp) * (long double)(1 << hf->lead_bits);
			exp -= hf->lead_bits;
		}
		lead = (int)v;
		v -= lead;
		for (n = 0; n < hf->nfrac; n++) {
			v *= 16;
			dig[n] = (unsigned char)v;
			v -= dig[n];
			if (dig[n])
				ndig = n + 1;
		}
	}
	if (prec < 0) {
		prec = ndig;
	} else if (prec < ndig) {
		int last = prec > 0 ? dig[prec - 1] : lead, next = dig[prec];
		bool more = (next & 7) || prec + 1 < ndig;

		/* To nearest, ties to even, as glibc's round_away() does then. */
		if (next >= 8 && ((last & 1) || more)) {
			for (i = prec - 1; i >= 0; i--) {
				if (dig[i] < 15) {
					dig[i]++;
					break;
				}
				dig[i] = 0;
			}
			if (i < 0 && ++lead > 15) {
				lead = 1;
				exp += 4;
			}
		}
		ndig = prec;
	}
	estr = utoa((unsigned)(exp < 0 ? -exp : exp), ebuf + sizeof(ebuf));
	*--estr = exp < 0 ? '-' : '+';
	*--estr = sp->conv == 'A' ? 'P' : 'p';

	w = (int64_t)sp->width - (pl + 2 + 1 + prec + (ebuf + sizeof(ebuf) - estr));
	if (prec > 0 || (sp->fl & F_ALT))
		w--;
	if (!(sp->fl & (F_LEFT | F_ZERO)))
		fill(s, ' ', w);
	put(s, sign, (size_t)pl);
	pfx[0] = '0';
	pfx[1] = sp->conv == 'A' ? 'X' : 'x';
	put(s, pfx, 2);
	if ((sp->fl & (F_LEFT | F_ZERO)) == F_ZERO)
		fill(s, '0', w);
	put1(s, xd[lead]);
	if (prec > 0 || (sp->fl & F_ALT))
		put1(s, '.');
	for (i = 0; i < ndig; i++)
		put1(s, xd[dig[i]]);
	fill(s, '0', prec - ndig);
	put(s, estr, (size_t)(ebuf + sizeof(ebuf) - estr));
	if ((sp->fl & (F_LEFT | F_ZERO)) == F_LEFT)
		fill(s, ' ', w);
}

static void put_float(struct sink *s, const struct spec *sp, const union arg *a)
{
	bool ld = data_kind(sp) == K_LDBL;
	long double y = ld ? a->ld : (long double)a->d;

	if ((sp->conv | 32) != 'a')
		put_decimal(s, sp, y, !ld);
	else if (!isfinite(y))
		put_special(s, sp, y);
	else
		put_hex(s, sp, y, ld ? &hex_ldouble : &hex_double);
}

/*
 * Where run() takes the arguments from.  SRC_VA: the caller's va_list.
 * SRC_PACK: the va_list too, but each argument is appended to a package
 * (pk__vpack()) instead of being printed.  SRC_UNPACK: a package, read
 * back in the same order, the same conversion parser deciding each
 * argument's kind (pk__unpack()).
 */
enum src_mode { SRC_VA, SRC_PACK, SRC_UNPACK, SRC_CLASSIFY };

struct src {
	enum src_mode mode;
	va_list *ap;			/* SRC_VA, SRC_PACK */
	unsigned char *out;		/* SRC_PACK */
	const unsigned char *in;	/* SRC_UNPACK */
	size_t pos, end;		/* next byte, and the limit */
	bool fail;			/* PACK: not deferrable; UNPACK: corrupt */
	struct pk__site_class *cl;	/* SRC_CLASSIFY: what each argument is */
};

/* SRC_CLASSIFY: note the next argument's kind; false when there are too many. */
static bool src_note(struct src *src, uint8_t kind, int16_t prec)
{
	struct pk__site_class *cl = src->cl;

	if (cl->n == PK_SITE_ARGS) {
		src->fail = true;
		return false;
	}
	cl->kind[cl->n] = kind;
	cl->prec[cl->n] = prec;
	cl->n++;
	return true;
}

static int run_src(struct sink *s, const char *fmt, struct src *src, int err);

static int run(struct sink *s, const char *fmt, va_list *ap, int err)
{
	struct src src = { .mode = SRC_VA, .ap = ap };

	return run_src(s, fmt, &src, err);
}

static void kput(void *sink, const char *p, size_t n)
{
	put(sink, p, n);
}

/*
 * A kernel %p conversion, @ext the format after the 'p'.  %pV (a struct
 * va_format: a format and its va_list) is formatted here, in kernel mode,
 * as the kernel's va_format() does; the rest in ptrext.c.  Return: the
 * characters of @ext the conversion took.
 */
static size_t put_kpointer(struct sink *s, const struct spec *sp, const char *ext,
			   const void *p, int err)
{
	struct pk__kout o = { kput, s };
	struct pk__kspec ks = {
		.fl = (sp->fl & F_LEFT ? PK__KF_LEFT : 0) | (sp->fl & F_ZERO ? PK__KF_ZERO : 0) |
		      (sp->fl & F_PLUS ? PK__KF_PLUS : 0) | (sp->fl & F_SPACE ? PK__KF_SPACE : 0) |
		      (sp->fl & F_ALT ? PK__KF_ALT : 0),
		.width = sp->wset ? sp->width : -1,
		.prec = sp->prec,
	};

	if (ext[0] == 'V' && (uintptr_t)p >= 4096 && (uintptr_t)p < (uintptr_t)-4095) {
		const struct pk__va_format *vaf = p;
		va_list ap;
		size_t n = 1;

		while ((ext[n] >= 'a' && ext[n] <= 'z') || (ext[n] >= 'A' && ext[n] <= 'Z') ||
		       (ext[n] >= '0' && ext[n] <= '9'))
			n++;
		if (vaf->fmt && vaf->va) {
			va_copy(ap, *vaf->va);
			run(s, vaf->fmt, &ap, err);
			va_end(ap);
		}
		return n;
	}
	return pk__ptrext(&o, ext, p, &ks);
}

/*
 * One conversion, its argument (if it takes one) in @a; @after: the format
 * after the conversion character.  Return: the characters of @after it
 * took too (a kernel %p extension's letters), else 0.
 */
static size_t convert(struct sink *s, const struct spec *sp, const union arg *a, int err,
		      const char *after)
{
	char c;

	switch (sp->conv) {
	case 'd': case 'i': case 'u': case 'o': case 'x': case 'X': case 'b': case 'B':
		put_integer(s, sp, a->u);
		break;
	case 'c': case 'C':
		if (wide(sp)) {
			put_wchar(s, sp, (wint_t)a->u);
		} else {
			c = (char)(unsigned char)a->u;
			put_field(s, sp, &c, 1);
		}
		break;
	case 's': case 'S':
		if (wide(sp))
			put_wstring(s, sp, a->p);
		else
			put_string(s, sp, a->p);
		break;
	case 'p':
		if (s->kernel)
			return put_kpointer(s, sp, after, a->p, err);
		put_pointer(s, sp, a->p);
		break;
	case 'm':
		put_errno(s, sp, err);
		break;
	case '%':
		put1(s, '%');
		break;
	case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
		put_float(s, sp, a);
		break;
	default:
		put_unknown(s, sp);
		break;
	}
	return 0;
}

/*
 * Note that argument @pos (1-based) is read as @k.  Return: false when it
 * cannot be (above PK_FMT_ARG_MAX, or already another type of another size).
 */
static bool note_arg(unsigned char *kinds, int *max, int pos, enum kind k)
{
	enum kind had;

	if (pos < 1 || pos > PK_FMT_ARG_MAX)
		return false;
	had = (enum kind)kinds[pos - 1];
	if (had == K_NONE)
		kinds[pos - 1] = (unsigned char)k;
	else if (had != k && (!kind_size(had) || kind_size(had) != kind_size(k)))
		return false;
	if (pos > *max)
		*max = pos;
	return true;
}

/*
 * A positional format, from its first conversion @fmt on.  Pass one types
 * every argument; they are read in order; pass two prints.  Return: 0, or
 * -1 refused (see the file's comment).
 */
static __attribute__((noinline)) int run_positional(struct sink *s, const char *fmt,
						    va_list *ap, int err)
{
	unsigned char kinds[PK_FMT_ARG_MAX] = { 0 };
	union arg vals[PK_FMT_ARG_MAX];
	const char *p = fmt, *q, *c;
	struct spec sp;
	enum kind k;
	int i, max = 0;

	while ((q = strchr(p, '%')) && (c = parse(q + 1, &sp))) {
		p = c + 1;
		if (refused(&sp, q + 1))
			return -1;
		if (sp.wstar && !note_arg(kinds, &max, sp.wpos, K_INT))
			return -1;
		if (sp.pstar && !note_arg(kinds, &max, sp.ppos, K_INT))
			return -1;
		k = data_kind(&sp);
		if (k != K_NONE && !note_arg(kinds, &max, sp.argpos, k))
			return -1;
	}
	for (i = 0; i < max; i++)
		if (kinds[i] == K_NONE)
			return -1;
	for (i = 0; i < max; i++)
		fetch(ap, (enum kind)kinds[i], &vals[i]);

	for (p = fmt;;) {
		q = strchrnul(p, '%');
		put(s, p, (size_t)(q - p));
		if (!*q || !(c = parse(q + 1, &sp)))
			return 0;
		p = c + 1;
		if (sp.wstar)
			set_width(&sp, (int)vals[sp.wpos - 1].u, true);
		if (sp.pstar)
			set_prec(&sp, (int)vals[sp.ppos - 1].u);
		k = data_kind(&sp);
		p += convert(s, &sp, k != K_NONE ? &vals[sp.argpos - 1] : NULL, err, p);
	}
}

static bool unknown(const struct spec *sp)
{
	return data_kind(sp) == K_NONE && sp->conv != '%' && sp->conv != 'm';
}

/*
 * PACKAGES
 *
 * A package holds a format and its arguments, so that the text can be
 * made later, by anyone who can read the package (a console, pkmsg in
 * another process, after this one died).  Little-endian, no alignment:
 *   byte 0      PK__PKG_VERSION
 *   byte 1      flags: PK__FMT_KERNEL
 *   bytes 2-3   the format's length F
 *   bytes 4-7   the caller's errno (for %m), int32
 *   then the arguments, in the order the format reads them:
 *     every integer kind and '*': 8 bytes (the value as run() reads it)
 *     double: 8 bytes; long double: 16 (x87: 10 used, 6 zero)
 *     %p: the pointer, 8 bytes
 *     narrow %s: a 16-bit length N then N bytes and a NUL, the string
 *                copied at the call (at most its precision and at most
 *                PK_RECORD_MAX + 1 bytes: the text cannot show more);
 *                N = 0xffff: a NULL pointer
 *   then the F bytes of the format, without a NUL.
 * The same walk (run_src()) packs and unpacks, so both read the format
 * exactly as formatting at the call would.  What it cannot carry makes
 * pk__vpack() return -2, and the caller formats at the call: positional
 * arguments, wide strings (%ls %S), kernel %p extensions, a package that
 * would not fit.  pk__unpack() trusts nothing in a package: every read is
 * bounded, every string must end where its length says, and a long double
 * must be one the x87 produces.
 */
#define PK__PKG_VERSION	1u
#define PKG_HDR		8u
#define PKG_STR_NULL	0xffffu

static inline void le_put(unsigned char *p, uint64_t v, unsigned n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, n);
#else
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
#endif
}

static inline uint64_t le_get(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&v, p, n);
#else
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
#endif
	return v;
}

/* Room for @n more bytes in the package (both directions); else fail. */
static bool src_room(struct src *src, size_t n)
{
	if (src->end - src->pos < n) {
		src->fail = true;
		return false;
	}
	return true;
}

/* A '*' width or precision. */
static int src_int(struct src *src)
{
	int v;

	switch (src->mode) {
	case SRC_CLASSIFY:
		src_note(src, PK__SK_I32, -1);
		return 0;
	case SRC_PACK:
		v = va_arg(*src->ap, int);
		if (src_room(src, 8)) {
			le_put(src->out + src->pos, (uint64_t)(int64_t)v, 8);
			src->pos += 8;
		}
		return v;
	case SRC_UNPACK:
		if (!src_room(src, 8))
			return 0;
		v = (int)(int64_t)le_get(src->in + src->pos, 8);
		src->pos += 8;
		return v;
	default:
		return va_arg(*src->ap, int);
	}
}

/* Is @ld a value the x87 makes (not an unnormal or pseudo-denormal)? */
static bool ldbl_sane(const unsigned char *b)
{
#if LDBL_MANT_DIG == 64
	unsigned exp = (unsigned)le_get(b + 8, 2) & 0x7fffu;
	bool j = (b[7] & 0x80u) != 0;

	return exp == 0 ? !j : j;
#else
	(void)b;
	return true;
#endif
}

/* The argument of a conversion of kind @k into @a.  False: stop the walk. */
static bool src_arg(struct src *src, enum kind k, const struct spec *sp, union arg *a)
{
	const char *str;
	size_t n, lim;

	if (src->mode == SRC_VA) {
		fetch(src->ap, k, a);
		return true;
	}
	if (src->mode == SRC_CLASSIFY) {
		a->u = 0;
		switch (k) {
		case K_INT:	return src_note(src, PK__SK_I32, -1);
		case K_WINT:	return src_note(src, PK__SK_U32, -1);
		case K_DBL:	return src_note(src, PK__SK_DBL, -1);
		case K_LDBL:	return src_note(src, PK__SK_LDBL, -1);
		case K_PTR:
			if (sp->conv == 'p')
				return src_note(src, PK__SK_PTR, -1);
			if (sp->conv != 's' || wide(sp)) {
				src->fail = true;
				return false;
			}
			/* A '*' precision: the argument before this one. */
			return src_note(src, PK__SK_STR,
					sp->pstar ? -2 : sp->prec > 30000 ? 30000 : (int16_t)sp->prec);
		case K_NONE:	return true;
		default:	return src_note(src, PK__SK_I64, -1);
		}
	}
	if (src->mode == SRC_PACK) {
		fetch(src->ap, k, a);
		if (k == K_PTR && sp->conv == 'p') {
			if (!src_room(src, 8))
				return false;
			le_put(src->out + src->pos, (uintptr_t)a->p, 8);
			src->pos += 8;
		} else if (k == K_PTR) {
			if (sp->conv != 's' || wide(sp)) {
				src->fail = true;	/* %ls %S: not carried */
				return false;
			}
			str = a->p;
			if (!str) {
				if (!src_room(src, 2))
					return false;
				le_put(src->out + src->pos, PKG_STR_NULL, 2);
				src->pos += 2;
				return true;
			}
			lim = PK_RECORD_MAX + 1;
			if (sp->prec >= 0 && (size_t)sp->prec < lim)
				lim = (size_t)sp->prec;
			n = strnlen(str, lim);
			if (!src_room(src, 3 + n))
				return false;
			le_put(src->out + src->pos, n, 2);
			memcpy(src->out + src->pos + 2, str, n);
			src->out[src->pos + 2 + n] = '\0';
			src->pos += 3 + n;
		} else if (k == K_LDBL) {
			union { long double ld; unsigned char b[sizeof(long double)]; } u;

			if (!src_room(src, 16))
				return false;
			memset(&u, 0, sizeof(u));
			u.ld = a->ld;
#if LDBL_MANT_DIG == 64
			memset(u.b + 10, 0, sizeof(u.b) - 10);
#endif
			memcpy(src->out + src->pos, u.b, sizeof(u.b) < 16 ? sizeof(u.b) : 16);
			if (sizeof(u.b) < 16)
				memset(src->out + src->pos + sizeof(u.b), 0, 16 - sizeof(u.b));
			/*
			 * A bit pattern the x87 never makes (an unnormal, built
			 * through a union): the reader would refuse it; format
			 * it now, as glibc would.
			 */
			if (!ldbl_sane(src->out + src->pos)) {
				src->fail = true;
				return false;
			}
			src->pos += 16;
		} else if (k == K_DBL) {
			uint64_t bits;

			if (!src_room(src, 8))
				return false;
			memcpy(&bits, &a->d, 8);
			le_put(src->out + src->pos, bits, 8);
			src->pos += 8;
		} else {
			if (!src_room(src, 8))
				return false;
			le_put(src->out + src->pos, a->u, 8);
			src->pos += 8;
		}
		return true;
	}
	/* SRC_UNPACK */
	if (k == K_PTR && sp->conv == 'p') {
		if (!src_room(src, 8))
			return false;
		a->p = (const void *)(uintptr_t)le_get(src->in + src->pos, 8);
		src->pos += 8;
	} else if (k == K_PTR) {
		if (sp->conv != 's' || wide(sp) || !src_room(src, 2)) {
			src->fail = true;
			return false;
		}
		n = (size_t)le_get(src->in + src->pos, 2);
		src->pos += 2;
		if (n == PKG_STR_NULL) {
			a->p = NULL;
			return true;
		}
		if (n > PK_RECORD_MAX + 1 || !src_room(src, n + 1) ||
		    src->in[src->pos + n] != '\0') {
			src->fail = true;
			return false;
		}
		a->p = src->in + src->pos;
		src->pos += n + 1;
	} else if (k == K_LDBL) {
		union { long double ld; unsigned char b[sizeof(long double)]; } u;

		if (!src_room(src, 16) || !ldbl_sane(src->in + src->pos)) {
			src->fail = true;
			return false;
		}
		memset(&u, 0, sizeof(u));
		memcpy(u.b, src->in + src->pos, sizeof(u.b) < 16 ? sizeof(u.b) : 16);
		a->ld = u.ld;
		src->pos += 16;
	} else if (k == K_DBL) {
		uint64_t bits;

		if (!src_room(src, 8))
			return false;
		bits = le_get(src->in + src->pos, 8);
		memcpy(&a->d, &bits, 8);
		src->pos += 8;
	} else {
		if (!src_room(src, 8))
			return false;
		a->u = (uintmax_t)le_get(src->in + src->pos, 8);
		src->pos += 8;
	}
	return true;
}

/*
 * The format, its arguments read as they come.  glibc reads them with its
 * fast path up to the first conversion that path does not take (one it
 * does not know, or 'h' on e f g a c s p m); from that one on it parses as
 * for positional arguments, and two things change: L and q no longer make
 * %c and %s wide, and a negative '*' width keeps the '0' flag (set_width()).
 * Packing (SRC_PACK) prints nothing: it only walks.
 * Return: 0, -1 refused, -2 the walk stopped (src->fail).
 */
static int run_src(struct sink *s, const char *fmt, struct src *src, int err)
{
	const char *p = fmt, *q, *c;
	bool took = false, fast = true, unk;
	bool pack = src->mode == SRC_PACK || src->mode == SRC_CLASSIFY;
	union arg a = { 0 };
	struct spec sp;
	enum kind k;

	for (;;) {
		q = strchrnul(p, '%');
		if (!pack)
			put(s, p, (size_t)(q - p));
		if (!*q || !(c = parse(q + 1, &sp))) {
			if (pack)
				s->len = (uint64_t)(q - fmt) + (*q ? strlen(q) : 0);
			return 0;
		}
		if (sp.argpos || sp.wpos || sp.ppos) {
			if (src->mode != SRC_VA) {
				src->fail = true;
				return -2;
			}
			return took ? -1 : run_positional(s, q, src->ap, err);
		}
		k = data_kind(&sp);
		unk = k == K_NONE && sp.conv != '%' && sp.conv != 'm';
		if (fast && (unk || (sp.len == L_H && strchr("eEfFgGaAcsCSpm", sp.conv))))
			fast = false;
		if (sp.conv == 'n' || (unk && stb_percent_n(q + 1)))
			return -1;
		if (fast && sp.len == L_BIG) {
			sp.lq_long = true;
			k = data_kind(&sp);
		}
		p = c + 1;
		if (sp.wstar) {
			set_width(&sp, src_int(src), !fast);
			took = true;
		}
		if (sp.pstar) {
			set_prec(&sp, src_int(src));
			took = true;
		}
		if (k != K_NONE) {
			if (!src_arg(src, k, &sp, &a))
				return -2;
			took = true;
		}
		if (src->fail)
			return -2;
		/*
		 * A kernel %p extension prints what the pointer points to:
		 * that is done at the call, never from a package (whose
		 * pointers may be anything).
		 */
		if (src->mode != SRC_VA && s->kernel && sp.conv == 'p') {
			src->fail = true;
			return -2;
		}
		if (pack)
			continue;
		p += convert(s, &sp, &a, err, p);
	}
}

int pk__vsnprintf_flags(char *buf, int count, const char *fmt, va_list va, unsigned flags)
{
	int err = errno, ret = -1;
	struct sink s;
	va_list ap;

	s.buf = buf;
	s.room = count > 0 ? (size_t)count - 1 : 0;
	s.len = 0;
	s.kernel = flags & PK__FMT_KERNEL;
	if (fmt && fmt[0] == PK_KFMT[0] && fmt[1] == PK_KFMT[1]) {
		s.kernel = true;
		fmt += 2;
	}
	if (fmt) {
		va_copy(ap, va);
		ret = run(&s, fmt, &ap, err);
		va_end(ap);
	}
	if (count > 0)
		*(ret < 0 ? buf : s.buf) = '\0';
	if (ret < 0)
		return -1;
	return s.len > INT_MAX ? INT_MAX : (int)s.len;
}

int pk__stbsp_vsnprintf(char *buf, int count, const char *fmt, va_list va)
{
	return pk__vsnprintf_flags(buf, count, fmt, va, 0);
}

int pk__stbsp_snprintf(char *buf, int count, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = pk__stbsp_vsnprintf(buf, count, fmt, ap);
	va_end(ap);
	return n;
}

int pk__vpack(unsigned char *out, size_t cap, const char *fmt, va_list va, unsigned flags,
	      int err)
{
	struct sink sk = { 0 };
	struct src src = { .mode = SRC_PACK, .out = out, .pos = PKG_HDR, .end = cap };
	va_list ap;
	size_t flen;
	int ret;

	if (!fmt || cap < PKG_HDR)
		return -2;
	if (fmt[0] == PK_KFMT[0] && fmt[1] == PK_KFMT[1]) {
		flags |= PK__FMT_KERNEL;
		fmt += 2;
	}
	sk.kernel = flags & PK__FMT_KERNEL;
	va_copy(ap, va);
	src.ap = &ap;
	ret = run_src(&sk, fmt, &src, err);
	va_end(ap);
	if (ret < 0)
		return ret;
	flen = (size_t)sk.len;
	if (flen > 0xffffu || cap - src.pos < flen)
		return -2;
	out[0] = PK__PKG_VERSION;
	out[1] = (unsigned char)(flags & PK__FMT_KERNEL);
	le_put(out + 2, flen, 2);
	le_put(out + 4, (uint32_t)err, 4);
	memcpy(out + src.pos, fmt, flen);
	return (int)(src.pos + flen);
}

int pk__unpack(char *buf, int count, const unsigned char *pkg, size_t len)
{
	char fmt[PK_RECORD_MAX + 1];
	struct src src = { .mode = SRC_UNPACK, .in = pkg, .pos = PKG_HDR };
	struct sink s;
	size_t flen;
	int ret = -1;

	s.buf = buf;
	s.room = count > 0 ? (size_t)count - 1 : 0;
	s.len = 0;
	s.kernel = false;
	if (len >= PKG_HDR && pkg[0] == PK__PKG_VERSION && !(pkg[1] & ~PK__FMT_KERNEL)) {
		flen = (size_t)le_get(pkg + 2, 2);
		if (flen < sizeof(fmt) && flen <= len - PKG_HDR) {
			memcpy(fmt, pkg + len - flen, flen);
			fmt[flen] = '\0';
			src.end = len - flen;
			s.kernel = pkg[1] & PK__FMT_KERNEL;
			ret = run_src(&s, fmt, &src, (int)(int32_t)le_get(pkg + 4, 4));
			/* Every byte of the arguments read, none left over. */
			if (ret == 0 && src.pos != src.end)
				ret = -1;
		}
	}
	if (count > 0)
		*(ret < 0 ? buf : s.buf) = '\0';
	if (ret < 0)
		return -1;
	return s.len > INT_MAX ? INT_MAX : (int)s.len;
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool pk__fmt_open_literal(const char *fmt)
{
	const char *p = fmt, *end = fmt;

	for (;;) {
		while (*p && *p != '%')
			p++;
		if (!*p)
			break;
		p++;
		if (*p == '%') {
			p++;		/* "%%": the character '%' */
			continue;
		}
		while (*p == '-' || *p == '+' || *p == ' ' || *p == '#' || *p == '0' || *p == '\'')
			p++;
		while ((*p >= '0' && *p <= '9') || *p == '*')
			p++;
		if (*p == '.')
			for (p++; (*p >= '0' && *p <= '9') || *p == '*'; p++)
				;
		while (*p == 'h' || *p == 'l' || *p == 'L' || *p == 'q' || *p == 'j' || *p == 'z' ||
		       *p == 't')
			p++;
		if (!*p)
			return false;
		if (*p++ == 'p')
			while (is_alnum(*p))
				p++;	/* a pointer extension: %pS, %pISpc, %p4cc ... */
		end = p;
	}
	/* Something after the last conversion, and its last character not a newline. */
	return *end && p[-1] != '\n';
}

int pk__site_classify(const char *fmt, struct pk__site_class *cl)
{
	struct sink sk = { 0 };
	struct src src = { .mode = SRC_CLASSIFY, .cl = cl };
	int ret;

	memset(cl, 0, sizeof(*cl));
	/* Prefixes are for pk_printk() to read: such a format is not packed here. */
	if (!fmt || fmt[0] == PK_SOH[0])
		return -2;
	ret = run_src(&sk, fmt, &src, 0);
	if (ret < 0)
		return ret;
	if (!sk.len || sk.len > PK_RECORD_MAX)
		return -2;	/* empty, or a format longer than any package */
	if (fmt[sk.len - 1] != '\n') {
		if (!pk__fmt_open_literal(fmt))
			return -2;	/* may end its line or not: formatted at the call */
		cl->open = 1;	/* an open line, whatever the arguments */
	}
	cl->fmt_len = (uint16_t)sk.len;
	return 0;
}

/* An integer argument of a call site, as va_arg would have promoted it. */
static uint64_t site_int(const union pk_arg *a, unsigned char sig)
{
	unsigned size = sig & PK_SIG_SIZE;

	switch (size) {
	case 1:	return (sig & PK_SIG_SIGNED) ? (uint64_t)(int64_t)(signed char)a->b[0]
					     : (uint64_t)a->b[0];
	case 2: {
		uint16_t v;

		memcpy(&v, a->b, 2);
		return (sig & PK_SIG_SIGNED) ? (uint64_t)(int64_t)(int16_t)v : v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, a->b, 4);
		return (sig & PK_SIG_SIGNED) ? (uint64_t)(int64_t)(int32_t)v : v;
	}
	default: {
		uint64_t v;

		memcpy(&v, a->b, 8);
		return v;
	}
	}
}

bool pk__site_matches(const struct pk__site_class *cl, const unsigned char *sig, unsigned n)
{
	unsigned i, size;

	if (n != cl->n)
		return false;
	for (i = 0; i < n; i++) {
		size = sig[i] & PK_SIG_SIZE;
		switch (cl->kind[i]) {
		case PK__SK_I32:
		case PK__SK_U32:
			/* int, or a narrower integer that va_arg would promote */
			if ((sig[i] & (PK_SIG_PTR | PK_SIG_REAL)) || (size != 1 && size != 2 && size != 4))
				return false;
			break;
		case PK__SK_I64:
			if ((sig[i] & (PK_SIG_PTR | PK_SIG_REAL)) || size != 8)
				return false;
			break;
		case PK__SK_DBL:
			if (!(sig[i] & PK_SIG_REAL) || (size != 4 && size != 8))
				return false;
			break;
		case PK__SK_LDBL:
			if (!(sig[i] & PK_SIG_REAL) || size != sizeof(long double))
				return false;
			break;
		case PK__SK_PTR:
		case PK__SK_STR:
			if (!(sig[i] & PK_SIG_PTR) || size != sizeof(void *))
				return false;
			break;
		default:
			return false;
		}
	}
	return true;
}

int pk__site_pack(unsigned char *out, size_t cap, const char *fmt,
		  const struct pk__site_class *cl, const unsigned char *sig,
		  const union pk_arg *args, int err)
{
	size_t pos = PKG_HDR, n, lim;
	int64_t star = -1;
	unsigned i;

	for (i = 0; i < cl->n; i++) {
		const union pk_arg *a = &args[i];
		uint64_t v;

		switch (cl->kind[i]) {
		case PK__SK_I32:
			v = site_int(a, sig[i]);
			/* as va_arg(int): the low 32 bits, sign-extended */
			v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
			star = (int32_t)(uint32_t)v;
			goto word;
		case PK__SK_U32:
			v = (uint32_t)site_int(a, sig[i]);
			goto word;
		case PK__SK_I64:
		case PK__SK_PTR:
			memcpy(&v, a->b, 8);
			goto word;
		case PK__SK_DBL:
			if ((sig[i] & PK_SIG_SIZE) == 4) {
				float f;
				double d;

				memcpy(&f, a->b, sizeof(f));
				d = f;
				memcpy(&v, &d, 8);
			} else {
				memcpy(&v, a->b, 8);
			}
			goto word;
		case PK__SK_LDBL: {
			union { long double ld; unsigned char b[sizeof(long double)]; } u;

			if (cap - pos < 16)
				return -2;
			memset(&u, 0, sizeof(u));
			memcpy(&u.ld, a->b, sizeof(long double));
#if LDBL_MANT_DIG == 64
			memset(u.b + 10, 0, sizeof(u.b) - 10);
#endif
			memcpy(out + pos, u.b, 16);
			if (!ldbl_sane(out + pos))
				return -2;	/* see src_arg() */
			pos += 16;
			continue;
		}
		case PK__SK_STR: {
			const char *str;

			memcpy(&str, a->b, sizeof(str));
			if (!str) {
				if (cap - pos < 2)
					return -2;
				le_put(out + pos, PKG_STR_NULL, 2);
				pos += 2;
				continue;
			}
			lim = PK_RECORD_MAX + 1;
			if (cl->prec[i] >= 0 && (size_t)cl->prec[i] < lim)
				lim = (size_t)cl->prec[i];
			else if (cl->prec[i] == -2 && star >= 0 && (uint64_t)star < lim)
				lim = (size_t)star;
			n = strnlen(str, lim);
			if (cap - pos < 3 + n)
				return -2;
			le_put(out + pos, n, 2);
			memcpy(out + pos + 2, str, n);
			out[pos + 2 + n] = '\0';
			pos += 3 + n;
			continue;
		}
		default:
			return -2;
		}
word:
		if (cap - pos < 8)
			return -2;
		le_put(out + pos, v, 8);
		pos += 8;
	}
	if (cap - pos < cl->fmt_len)
		return -2;
	out[0] = PK__PKG_VERSION;
	out[1] = 0;
	le_put(out + 2, cl->fmt_len, 2);
	le_put(out + 4, (uint32_t)err, 4);
	memcpy(out + pos, fmt, cl->fmt_len);
	return (int)(pos + cl->fmt_len);
}
