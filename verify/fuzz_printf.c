// SPDX-License-Identifier: MIT
/*
 * fuzz_printf - differential libFuzzer target for the printf engine
 * (src/format/vsnprintf.c) against glibc's vsnprintf(), byte for byte.
 *
 * The input is read as a program: it builds a format of literal text,
 * "%%" and conversions with random flags (-+ #0'), widths and precisions
 * (numbers or '*'), lengths (hh h l ll j z t L) and conversions (d i u o
 * x X c e E f F g G a A s p), taking up to three arguments, whose values
 * come from the input too: any int or 64-bit integer, any double's bits,
 * a long double made from a double or from raw bytes (unnormals and
 * pseudo-NaNs included), a string of the input's bytes or NULL, any
 * pointer value.  The buffer is 0, 1, small or a record's size.
 *
 * The checks: pk__stbsp_vsnprintf() returns what glibc returns and writes
 * the same bytes, terminated, nothing past the buffer; and the same call
 * packed (pk__vpack(), what pk_printk() stores) and formatted from the
 * package (pk__unpack(), what a console or pkmsg prints) gives the same.
 *
 * Only the safe subset: no %n, no %s or %p through a pointer that is not
 * the input's, no %m, %lc or %ls (docs/guide/records.md: where the formatter differs
 * from glibc on purpose: positional arguments all or nothing, %lc/%ls
 * always UTF-8, %m), no positional arguments.
 */
#include <stdarg.h>

#include "fuzz_common.h"
#include "format/format.h"
#include "store/store.h"

#define REC	(PK_RECORD_MAX + 2)

enum { T_INT, T_LL, T_DBL, T_LDBL, T_STR, T_PTR, NTYPES };

struct in {
	const uint8_t *p, *end;
};

static unsigned next(struct in *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

static uint64_t next64(struct in *in, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | next(in);
	return v;
}

struct conv {
	const char *len, *conv;
	int type;
};

static const struct conv convs[] = {
	{ "", "d", T_INT }, { "", "i", T_INT }, { "", "u", T_INT }, { "", "o", T_INT },
	{ "", "x", T_INT }, { "", "X", T_INT }, { "", "c", T_INT },
	{ "hh", "d", T_INT }, { "hh", "u", T_INT }, { "hh", "x", T_INT }, { "h", "i", T_INT },
	{ "h", "o", T_INT }, { "h", "X", T_INT },
	{ "l", "d", T_LL }, { "ll", "i", T_LL }, { "l", "u", T_LL }, { "ll", "o", T_LL },
	{ "j", "x", T_LL }, { "z", "X", T_LL }, { "t", "d", T_LL }, { "z", "u", T_LL },
	{ "", "e", T_DBL }, { "", "E", T_DBL }, { "", "f", T_DBL }, { "", "F", T_DBL },
	{ "", "g", T_DBL }, { "", "G", T_DBL }, { "", "a", T_DBL }, { "", "A", T_DBL },
	{ "L", "e", T_LDBL }, { "L", "f", T_LDBL }, { "L", "g", T_LDBL }, { "L", "a", T_LDBL },
	{ "L", "G", T_LDBL },
	{ "", "s", T_STR }, { "", "s", T_STR }, { "", "p", T_PTR },
};
#define NCONVS	(sizeof(convs) / sizeof(convs[0]))

struct args {
	int type[3];
	int i[3];
	long long ll[3];
	double d[3];
	long double ld[3];
	const char *s[3];
	void *ptr[3];
	char str[3][80];
};

static char fmt[512];
static int size;
static unsigned long compared;

static void show(const char *what, const char *s, int n)
{
	int i;

	fprintf(stderr, "  %s (%d): \"", what, n);
	for (i = 0; i < n && i < 300; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			fputc(c, stderr);
		else
			fprintf(stderr, "\\x%02x", c);
	}
	fprintf(stderr, "\"%s\n", n > 300 ? "..." : "");
}

/* The bytes of a result that must agree: up to the terminating NUL in @size. */
static int cut_of(int n)
{
	return n < 0 ? 0 : size > 0 ? (n < size - 1 ? n : size - 1) + 1 : 0;
}

static _Noreturn void differ(const char *what, const char *a, int na, const char *b, int nb)
{
	fprintf(stderr, "fuzz_printf: %s: format \"%s\", buffer %d\n", what, fmt, size);
	show("ours", a, na < 0 ? 0 : na < size ? na : size - 1);
	show(what[0] == 'g' ? "glibc" : "packed", b, nb < 0 ? 0 : nb < size ? nb : size - 1);
	fprintf(stderr, "  returned %d and %d\n", na, nb);
	abort();
}

static void check(const char *f, ...)
{
	static char ours[REC + 16], libc[REC + 16], got[REC + 16];
	static unsigned char pkg[PK_RECORD_MAX];
	va_list ap, aq;
	int n, m, len, cut;

	va_start(ap, f);
	memset(ours, 0x5a, sizeof(ours));
	memset(libc, 0x5a, sizeof(libc));
	va_copy(aq, ap);
	n = pk__stbsp_vsnprintf(ours, size, f, aq);
	va_end(aq);
	va_copy(aq, ap);
	m = vsnprintf(libc, (size_t)size, f, aq);
	va_end(aq);
	compared++;
	cut = cut_of(m);
	if (m < 0 || n != m || memcmp(ours, libc, (size_t)cut) ||
	    (size > 0 && cut < size && ours[cut] != 0x5a) || ours[size] != 0x5a)
		differ("glibc differs", ours, n, libc, m);
	/* Packed, then formatted from the package. */
	va_copy(aq, ap);
	len = pk__vpack(pkg, sizeof(pkg), f, aq, 0, 0);
	va_end(aq);
	va_end(ap);
	if (len == -2)
		return;		/* not packable (longer than a record): formatted at the call */
	if (len < 0)
		differ("packing refused", ours, n, "", len);
	memset(got, 0x5a, sizeof(got));
	m = pk__unpack(got, size, pkg, (size_t)len);
	/* A string longer than a record is copied only as far as a record shows. */
	if (m >= 0 && (m == n || (m > PK_RECORD_MAX && n > PK_RECORD_MAX)) &&
	    !memcmp(got, ours, (size_t)cut_of(m < n ? m : n)) && got[size] == 0x5a)
		return;
	differ("packed differs", ours, n, got, m);
}

/* Call check() with the three arguments, each as its type. */
#define CASE3(t1, t2, v1, v2)								\
	switch (a->type[2]) {								\
	case T_INT: check(fmt, v1, v2, a->i[2]); break;					\
	case T_LL: check(fmt, v1, v2, a->ll[2]); break;					\
	case T_DBL: check(fmt, v1, v2, a->d[2]); break;					\
	case T_LDBL: check(fmt, v1, v2, a->ld[2]); break;				\
	case T_STR: check(fmt, v1, v2, a->s[2]); break;					\
	default: check(fmt, v1, v2, a->ptr[2]); break;					\
	}
#define CASE2(v1)									\
	switch (a->type[1]) {								\
	case T_INT: CASE3(0, 0, v1, a->i[1]) break;					\
	case T_LL: CASE3(0, 0, v1, a->ll[1]) break;					\
	case T_DBL: CASE3(0, 0, v1, a->d[1]) break;					\
	case T_LDBL: CASE3(0, 0, v1, a->ld[1]) break;					\
	case T_STR: CASE3(0, 0, v1, a->s[1]) break;					\
	default: CASE3(0, 0, v1, a->ptr[1]) break;					\
	}

static void call(const struct args *a)
{
	switch (a->type[0]) {
	case T_INT: CASE2(a->i[0]) break;
	case T_LL: CASE2(a->ll[0]) break;
	case T_DBL: CASE2(a->d[0]) break;
	case T_LDBL: CASE2(a->ld[0]) break;
	case T_STR: CASE2(a->s[0]) break;
	default: CASE2(a->ptr[0]) break;
	}
}

static void value(struct in *in, struct args *a, int k, int type)
{
	unsigned n, i;
	uint64_t v;

	a->type[k] = type;
	switch (type) {
	case T_INT:
		a->i[k] = (int)(uint32_t)next64(in, 4);
		break;
	case T_LL:
		a->ll[k] = (long long)next64(in, 8);
		break;
	case T_DBL:
		v = next64(in, 8);
		memcpy(&a->d[k], &v, sizeof(double));
		break;
	case T_LDBL:
		if (next(in) & 1) {
			/* Raw x87 bytes: 64-bit mantissa, then sign and exponent. */
			unsigned char raw[sizeof(long double)] = { 0 };

			v = next64(in, 8);
			memcpy(raw, &v, 8);
			raw[8] = (unsigned char)next(in);
			raw[9] = (unsigned char)next(in);
			memcpy(&a->ld[k], raw, sizeof(long double));
		} else {
			double d;

			v = next64(in, 8);
			memcpy(&d, &v, sizeof(d));
			a->ld[k] = (long double)d * (long double)(int)(next(in) - 128);
		}
		break;
	case T_STR:
		n = next(in);
		if (n == 255) {
			a->s[k] = NULL;
			break;
		}
		n %= sizeof(a->str[k]);
		for (i = 0; i < n; i++) {
			a->str[k][i] = (char)next(in);
			if (!a->str[k][i])
				a->str[k][i] = '.';
		}
		a->str[k][n] = '\0';
		a->s[k] = a->str[k];
		break;
	default:
		v = next64(in, next(in) % 9);
		a->ptr[k] = (void *)(uintptr_t)v;
		break;
	}
}

/* A '*' argument: an int from -1100 to 1100 (wide, never costly). */
static void star(struct in *in, struct args *a, int k)
{
	a->type[k] = T_INT;
	a->i[k] = (int)(next64(in, 2) % 2201) - 1100;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct in in = { data, data + len };
	struct args a;
	unsigned b, items, k, f;
	size_t o = 0;
	int slot = 0;
	const struct conv *c;

	memset(&a, 0, sizeof(a));
	b = next(&in);
	size = b % 4 == 0 ? 0 : b % 4 == 1 ? 1 : b % 4 == 2 ? (int)(next(&in) % 64) : REC;
	items = next(&in) % 8 + 1;
#define PUT(ch) (fmt[o++] = (char)(ch))
	while (items-- && o < sizeof(fmt) - 64) {
		b = next(&in);
		if (b % 8 < 3 || (b % 8 >= 4 && slot == 3)) {
			for (k = next(&in) % 4 + 1; k--;) {
				unsigned ch = ' ' + next(&in) % 95;

				PUT(ch == '%' ? '.' : ch);
			}
			continue;
		}
		if (b % 8 == 3) {
			PUT('%');
			PUT('%');
			continue;
		}
		PUT('%');
		f = next(&in);
		for (k = 0; k < 6; k++)
			if (f & (1u << k))
				PUT("-+ #0'"[k]);
		b = next(&in);
		if (b % 4 == 1 || b % 4 == 3) {
			o += (size_t)sprintf(fmt + o, "%u", b % 4 == 1 ? next(&in) % 40 :
							  next(&in) * 4 + 1);
		} else if (b % 4 == 2 && slot < 2) {
			PUT('*');
			star(&in, &a, slot++);
		}
		b = next(&in);
		if (b % 4 == 1) {
			o += (size_t)sprintf(fmt + o, ".%u", next(&in) % 70);
		} else if (b % 4 == 2 && slot < 2) {
			PUT('.');
			PUT('*');
			star(&in, &a, slot++);
		} else if (b % 4 == 3) {
			PUT('.');
		}
		c = &convs[next(&in) % NCONVS];
		o += (size_t)sprintf(fmt + o, "%s%s", c->len, c->conv);
		value(&in, &a, slot++, c->type);
	}
	fmt[o] = '\0';
#undef PUT
	for (; slot < 3; slot++)
		a.type[slot] = T_INT;	/* unused: left over, as C allows */
	call(&a);
	return 0;
}
