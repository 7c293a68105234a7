// SPDX-License-Identifier: MIT
/*
 * The kernel's %p extensions (src/format/ptrext.c, src/format/symtab.c): exact text for
 * each as Linux 6.1's vsprintf() prints it, the pointers it cannot read,
 * widths and precisions; that they are on in <printk/kernel.h>'s printk(),
 * pr_*(), pr_debug() and WARN() and under PK_KFMT / PK_LEVEL_KERNEL, and
 * that plain pk_printk() keeps glibc's %p; and all of it from a signal
 * handler.
 *
 * DEBUG is defined, so that pr_debug()'s dynamic debug site starts on.
 */
#define DEBUG
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "store/store.h"
#include "format/ptrext.h"
#include "printk/console.h"
#include "printk/kernel.h"
#include "testutil.h"

#define ERR_PTR(e)	((void *)(intptr_t)(e))

static struct tu_capture *cap;

/* The kernel formatter's text for @fmt. */
static char out[1024];

static const char *kf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pk__vsnprintf_flags(out, sizeof(out), fmt, ap, PK__FMT_KERNEL);
	va_end(ap);
	return out;
}

/* The same into @buf of @size; the length the formatter returns. */
static int kfn(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = pk__vsnprintf_flags(buf, (int)size, fmt, ap, PK__FMT_KERNEL);
	va_end(ap);
	return n;
}

static int setup(void **state)
{
	struct pk_console *con;
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.console_loglevel = 8;
	if (pk_init(&cfg))
		return -1;
	cap = tu_capture_new(0);
	con = pk_console_register(&tu_capture_ops, cap, 8);
	if (!con || pk_console_set_format(con, PK_FMT_RAW))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	tu_capture_free(cap);
	return 0;
}

static int case_setup(void **state)
{
	(void)state;
	tu_capture_clear(cap);
	return 0;
}

/* What the consoles printed since case_setup() (caller frees). */
static char *printed(void)
{
	assert_int_equal(pk_flush(10000), 0);
	return tu_capture_text(cap);
}

static const unsigned char bytes[] = { 0x00, 0x01, 0xab, 0xcd, 0xef, 0x7f, 0x80, 0xff,
				       0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80 };

static void test_hex(void **state)
{
	unsigned char big[80];
	char want[80 * 3];
	int i;

	(void)state;
	assert_string_equal(kf("%ph", NULL), "(null)");
	assert_string_equal(kf("[%ph]", bytes), "[00]");
	assert_string_equal(kf("%4ph", bytes), "00 01 ab cd");
	assert_string_equal(kf("%*ph", 5, bytes), "00 01 ab cd ef");
	assert_string_equal(kf("%*phC", 4, bytes), "00:01:ab:cd");
	assert_string_equal(kf("%*phD", 4, bytes), "00-01-ab-cd");
	assert_string_equal(kf("%*phN", 8, bytes), "0001abcdef7f80ff");
	assert_string_equal(kf("[%*ph]", 0, bytes), "[]");
	assert_string_equal(kf("%*ph", -3, bytes), "00 01 ab");
	/* At most 64 bytes. */
	for (i = 0; i < 80; i++)
		big[i] = (unsigned char)i;
	for (i = 0; i < 64; i++)
		sprintf(want + 2 * i, "%02x", i);
	assert_string_equal(kf("%*phN", 80, big), want);
	/* Every letter and digit after %p is the conversion's. */
	assert_string_equal(kf("%phCxyz9.", bytes), "00.");
}

static void test_mac(void **state)
{
	static const unsigned char m[6] = { 0x00, 0x1b, 0x21, 0x3a, 0x4f, 0xde };

	(void)state;
	assert_string_equal(kf("%pM", m), "00:1b:21:3a:4f:de");
	assert_string_equal(kf("%pMR", m), "de:4f:3a:21:1b:00");
	assert_string_equal(kf("%pMF", m), "00-1b-21-3a-4f-de");
	assert_string_equal(kf("%pm", m), "001b213a4fde");
	assert_string_equal(kf("%pmR", m), "de4f3a211b00");
	assert_string_equal(kf("[%20pM]", m), "[   00:1b:21:3a:4f:de]");
	assert_string_equal(kf("[%-20pM]", m), "[00:1b:21:3a:4f:de   ]");
	assert_string_equal(kf("[%.5pM]", m), "[00:1b]");
	assert_string_equal(kf("%pM", NULL), "(null)");
}

static void test_ip4(void **state)
{
	static const unsigned char a[4] = { 192, 168, 1, 7 };
	static const unsigned char z[4] = { 10, 0, 0, 255 };

	(void)state;
	assert_string_equal(kf("%pI4", a), "192.168.1.7");
	assert_string_equal(kf("%pi4", a), "192.168.001.007");
	assert_string_equal(kf("%pI4", z), "10.0.0.255");
	assert_string_equal(kf("%pi4", z), "010.000.000.255");
	assert_string_equal(kf("%pI4n", a), "192.168.1.7");
	assert_string_equal(kf("%pI4b", a), "192.168.1.7");
	assert_string_equal(kf("%pI4l", a), "7.1.168.192");
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(kf("%pI4h", a), "7.1.168.192");
#else
	assert_string_equal(kf("%pI4h", a), "192.168.1.7");
#endif
	assert_string_equal(kf("[%16pI4]", a), "[     192.168.1.7]");
	assert_string_equal(kf("%pI5", a), "(%pI?)");
	assert_string_equal(kf("%pi5", a), "(%pi?)");
	assert_string_equal(kf("%pI4", (void *)16), "(efault)");
}

static const char *ip6(const char *fmt, const char *words)
{
	unsigned char a[16];
	unsigned w[8];
	int i;

	assert_int_equal(sscanf(words, "%x %x %x %x %x %x %x %x", &w[0], &w[1], &w[2], &w[3],
				&w[4], &w[5], &w[6], &w[7]), 8);
	for (i = 0; i < 8; i++) {
		a[2 * i] = (unsigned char)(w[i] >> 8);
		a[2 * i + 1] = (unsigned char)w[i];
	}
	return kf(fmt, a);
}

static void test_ip6(void **state)
{
	(void)state;
	assert_string_equal(ip6("%pI6", "2001 db8 0 0 0 0 0 1"),
			    "2001:0db8:0000:0000:0000:0000:0000:0001");
	assert_string_equal(ip6("%pi6", "2001 db8 0 0 0 0 0 1"),
			    "20010db8000000000000000000000001");
	assert_string_equal(ip6("%pI6c", "2001 db8 0 0 0 0 0 1"), "2001:db8::1");
	assert_string_equal(ip6("%pI6c", "0 0 0 0 0 0 0 0"), "::");
	assert_string_equal(ip6("%pI6c", "0 0 0 0 0 0 0 1"), "::1");
	assert_string_equal(ip6("%pI6c", "1 0 0 0 0 0 0 0"), "1::");
	/* One zero word is not compressed; of equal runs, the first. */
	assert_string_equal(ip6("%pI6c", "2001 db8 0 1 1 1 1 1"), "2001:db8:0:1:1:1:1:1");
	assert_string_equal(ip6("%pI6c", "1 0 0 1 0 0 1 1"), "1::1:0:0:1:1");
	assert_string_equal(ip6("%pI6c", "1 0 0 1 0 0 0 1"), "1:0:0:1::1");
	assert_string_equal(ip6("%pI6c", "fe80 0 0 0 abc ff 1000 1"), "fe80::abc:ff:1000:1");
	/* IPv4-mapped and ISATAP: a dotted tail; IPv4-compatible: not. */
	assert_string_equal(ip6("%pI6c", "0 0 0 0 0 ffff c0a8 107"), "::ffff:192.168.1.7");
	assert_string_equal(ip6("%pI6c", "fe80 0 0 0 200 5efe c0a8 107"),
			    "fe80::200:5efe:192.168.1.7");
	assert_string_equal(ip6("%pI6c", "0 0 0 0 0 0 c0a8 107"), "::c0a8:107");
	/* %pi6c is not compressed: c applies to %pI6 alone. */
	assert_string_equal(ip6("%pi6c", "0 0 0 0 0 0 0 1"), "00000000000000000000000000000001");
	assert_string_equal(ip6("[%-12pI6c]", "0 0 0 0 0 0 0 1"), "[::1         ]");
}

static void test_uuid(void **state)
{
	(void)state;
	assert_string_equal(kf("%pU", bytes), "0001abcd-ef7f-80ff-1020-304050607080");
	assert_string_equal(kf("%pUb", bytes), "0001abcd-ef7f-80ff-1020-304050607080");
	assert_string_equal(kf("%pUB", bytes), "0001ABCD-EF7F-80FF-1020-304050607080");
	assert_string_equal(kf("%pUl", bytes), "cdab0100-7fef-ff80-1020-304050607080");
	assert_string_equal(kf("%pUL", bytes), "CDAB0100-7FEF-FF80-1020-304050607080");
	assert_string_equal(kf("%pU", NULL), "(null)");
}

static void test_errptr(void **state)
{
	char want[64];
	int x;

	(void)state;
	assert_string_equal(kf("%pe", ERR_PTR(-EINVAL)), "-EINVAL");
	assert_string_equal(kf("%pe", ERR_PTR(-ENOENT)), "-ENOENT");
	assert_string_equal(kf("%pe", ERR_PTR(-EAGAIN)), "-EAGAIN");
	assert_string_equal(kf("[%10pe]", ERR_PTR(-EIO)), "[      -EIO]");
	/* No name: the number, as the kernel's err_ptr(). */
	assert_string_equal(kf("%pe", ERR_PTR(-4000)), "-4000");
	/* The kernel's own errnos, which no C library names (dev_err_probe()). */
	assert_string_equal(kf("%pe", ERR_PTR(-517)), "-EPROBE_DEFER");
	assert_string_equal(kf("%pe", ERR_PTR(-512)), "-ERESTARTSYS");
	assert_string_equal(kf("%pe", ERR_PTR(-531)), "-ENOGRACE");
	assert_string_equal(kf("%pe", ERR_PTR(-520)), "-520");	/* a gap in the list */
	assert_string_equal(kf("[%6pe]", ERR_PTR(-4000)), "[ -4000]");
	/* Not an error pointer: the address, as plain %p. */
	snprintf(want, sizeof(want), "%016lx", (unsigned long)(uintptr_t)&x);
	assert_string_equal(kf("%pe", &x), want);
	assert_string_equal(kf("%pe", NULL), "0000000000000000");
}

static void test_escape(void **state)
{
	static const char s[] = "a\tb\n\\\"\033\a\001\x80\xe9 z";
	size_t n = sizeof(s) - 1;

	(void)state;
	/* Default: ESCAPE_ANY_NP; the width is the byte count. */
	assert_string_equal(kf("%*pE", (int)n, s), "a\\tb\\n\\\"\\e\\a\\001\\200\xe9 z");
	assert_string_equal(kf("%pE", s), "a");
	assert_string_equal(kf("[%*pE]", 0, s), "[]");
	assert_string_equal(kf("%*pEa", 3, s), "\\141\\t\\142");
	assert_string_equal(kf("%*pEo", 3, s), "\\141\\011\\142");
	assert_string_equal(kf("%*pEh", 3, s), "\\x61\\x09\\x62");
	assert_string_equal(kf("%*pEs", 4, s), "a\\tb\\n");
	assert_string_equal(kf("%*pEc", 7, s), "a\tb\n\\\\\\\"\\e");
	assert_string_equal(kf("%*pEn", 2, "\0x"), "\\0x");
	assert_string_equal(kf("%*pEhp", 12, s), "a\\x09b\\x0a\\\"\\x1b\\x07\\x01\\x80\xe9 ");
	assert_string_equal(kf("%*pEsp", 3, s), "a\\tb");
	assert_string_equal(kf("%*pE", 3, NULL), "(null)");
}

/* A sink that counts: its calls and bytes, and the first bytes. */
struct counted {
	uint64_t calls, bytes;
	char head[PK__TEXT_BUF];
};

static void count_put(void *sink, const char *p, size_t n)
{
	struct counted *c = sink;

	if (c->bytes < sizeof(c->head))
		memcpy(c->head + c->bytes, p,
		       n < sizeof(c->head) - c->bytes ? n : sizeof(c->head) - c->bytes);
	c->calls++;
	c->bytes += n;
	/* Far past any clamp: stop here rather than pad for seconds. */
	if (c->bytes > ((uint64_t)1 << 20))
		fail_msg("%" PRIu64 " bytes in %" PRIu64 " calls: the field is not clamped",
			 c->bytes, c->calls);
}

/*
 * Widths and precisions on the %p extensions are clamped to a record's
 * length (PK__KFIELD_MAX): an INT_MAX field costs a bounded number of
 * writes (counted, not timed), and the text is the clamped width's.
 */
static void test_clamped_fields(void **state)
{
	static const unsigned char m[6] = { 0x00, 0x1b, 0x21, 0x3a, 0x4f, 0xde };
	static unsigned char big[2u << 20];	/* %pE reads its width's bytes */
	static const char *const exts[] = {
		"M", "MR", "MF", "m", "I4", "i4", "I6", "I6c", "i6", "U", "Ub", "UL", "ph", "phN",
		"E", "Eo", "S", "s", "B", "e", "x", "K", "", "ks", "a", "I5",
	};
	static const unsigned fls[] = { 0, PK__KF_LEFT, PK__KF_ZERO, PK__KF_ALT | PK__KF_ZERO,
					PK__KF_PLUS | PK__KF_SPACE };
	static const int precs[] = { -1, 0, 7, INT_MAX };
	static char text[PK__TEXT_BUF + 8], want[PK__TEXT_BUF + 8];
	struct counted c, cl;
	struct pk__kout o = { count_put, &c }, ol = { count_put, &cl };
	unsigned long runs = 0;
	uint64_t most_calls = 0;
	const void *arg;
	size_t e, f, p;
	int n;
	char *t;

	(void)state;
	memset(big, 'x', sizeof(big));
	for (e = 0; e < PK__ARRAY_SIZE(exts); e++) {
		arg = exts[e][0] == 'E' ? (const void *)big : exts[e][0] == 'e' ?
		      ERR_PTR(-EINVAL) : exts[e][0] == 'k' ? (const void *)"str" :
		      (const void *)bytes;
		for (f = 0; f < PK__ARRAY_SIZE(fls); f++) {
			for (p = 0; p < PK__ARRAY_SIZE(precs); p++) {
				struct pk__kspec ks = { fls[f], INT_MAX, precs[p] };
				struct pk__kspec kl = { fls[f], PK__KFIELD_MAX, precs[p] };

				if (precs[p] == INT_MAX)
					kl.prec = PK__KFIELD_MAX;
				memset(&c, 0, sizeof(c));
				memset(&cl, 0, sizeof(cl));
				pk__ptrext(&o, exts[e], arg, &ks);
				pk__ptrext(&ol, exts[e], arg, &kl);
				/* %pE: up to 4 bytes of text for each byte read. */
				assert_true(c.bytes <= 4 * PK__KFIELD_MAX);
				assert_true(c.calls <= 2 * PK__KFIELD_MAX + 16);
				assert_int_equal(c.bytes, cl.bytes);
				assert_memory_equal(c.head, cl.head,
						    c.bytes < sizeof(c.head) ? c.bytes :
						    sizeof(c.head));
				if (c.calls > most_calls)
					most_calls = c.calls;
				runs++;
			}
		}
	}
	print_message("%lu INT_MAX fields: at most %" PRIu64 " writes each\n", runs, most_calls);

	/* Through the formatter: the length and the text of a 1024 field. */
	n = kfn(text, sizeof(text), "%*pM|", INT_MAX, m);
	assert_int_equal(n, PK__KFIELD_MAX + 1);
	memset(want, ' ', PK__KFIELD_MAX - 17);
	strcpy(want + PK__KFIELD_MAX - 17, "00:1b:21:3a:4f:de|");
	assert_string_equal(text, want);
	n = kfn(text, sizeof(text), "%-*pM|", INT_MAX, m);
	assert_int_equal(n, PK__KFIELD_MAX + 1);
	assert_memory_equal(text, "00:1b:21:3a:4f:de ", 18);
	assert_int_equal(text[PK__KFIELD_MAX], '|');
	n = kfn(text, sizeof(text), "%0*px", INT_MAX, (void *)0x1f);
	assert_int_equal(n, PK__KFIELD_MAX);
	assert_int_equal(strspn(text, "0"), PK__KFIELD_MAX - 2);
	assert_string_equal(text + PK__KFIELD_MAX - 2, "1f");
	/* An errno with no name: '-' and the precision's digits. */
	n = kfn(text, sizeof(text), "%.*pe", INT_MAX, ERR_PTR(-4095));
	assert_int_equal(n, PK__KFIELD_MAX + 1);
	assert_int_equal(text[0], '-');
	assert_string_equal(text + PK__KFIELD_MAX - 3, "4095");
	/* Within the clamp nothing changes. */
	assert_string_equal(kf("[%20pM]", m), "[   00:1b:21:3a:4f:de]");

	/* pr_info() as the review tried it: the record is the clamped field. */
	pr_info("%*pM\n", INT_MAX, m);
	t = printed();
	assert_int_equal(strlen(t), PK__KFIELD_MAX + 1);
	assert_string_equal(t + PK__KFIELD_MAX - 17, "00:1b:21:3a:4f:de\n");
	free(t);
}

static void test_bad_pointers(void **state)
{
	(void)state;
	assert_string_equal(kf("[%pI4]", NULL), "[(null)]");
	assert_string_equal(kf("[%10pM]", NULL), "[    (null)]");
	assert_string_equal(kf("[%-10pU]", NULL), "[(null)    ]");
	assert_string_equal(kf("[%.3ph]", NULL), "[(nu]");
	assert_string_equal(kf("[%pU]", (void *)4095), "[(efault)]");
	assert_string_equal(kf("[%pM]", ERR_PTR(-EFAULT)), "[(efault)]");
	assert_string_equal(kf("[%pks]", NULL), "[(null)]");
	assert_string_equal(kf("[%pks]", "str"), "[str]");
	assert_string_equal(kf("[%pus]", "str"), "[str]");
	assert_string_equal(kf("[%pk]", "str"), "[(einval)]");
}

static void test_plain_in_kernel_formats(void **state)
{
	char want[128];
	int x;
	uint64_t pa = 0x12345678abcULL;

	(void)state;
	snprintf(want, sizeof(want), "%016lx %016lx", (unsigned long)(uintptr_t)&x,
		 (unsigned long)(uintptr_t)&x);
	assert_string_equal(kf("%p %px", &x, &x), want);
	assert_string_equal(kf("%p|%pK", NULL, NULL), "0000000000000000|0000000000000000");
	snprintf(want, sizeof(want), "%lx", (unsigned long)(uintptr_t)&x);
	assert_string_equal(kf("%1p", &x), want);
	snprintf(want, sizeof(want), "0x%lx.", (unsigned long)(uintptr_t)&x);
	assert_string_equal(kf("%#1pzz9.", &x), want);
	assert_string_equal(kf("%pa", &pa), "0x0000012345678abc");
	assert_string_equal(kf("%pad", &pa), "0x0000012345678abc");
	/* The other conversions stay glibc's. */
	assert_string_equal(kf("%d %5s %.2f %%", 42, "ab", 1.5), "42    ab 1.50 %");
}

static const char *vf(const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	kf("<%pV>", &vaf);
	va_end(ap);
	return out;
}

static void test_va_format(void **state)
{
	static const unsigned char a[4] = { 1, 2, 3, 4 };

	(void)state;
	assert_string_equal(vf("%d-%pI4-%s", 7, a, "x"), "<7-1.2.3.4-x>");
	assert_string_equal(kf("<%pV>", NULL), "<0000000000000000>");
}

/* A function of this program, in its dynamic symbol table (ENABLE_EXPORTS). */
__attribute__((noinline, used)) int pk_test_exported_fn(int x)
{
	return x * 3 + 1;
}

/* Where no symbol is known: a static function (not in .dynsym). */
__attribute__((noinline)) static int hidden_fn(int x)
{
	return x * 5 + 2;
}

/* The kernel's text for @addr, computed with dladdr1() (not signal-safe; fine here). */
static void expect_sym(char *want, size_t size, const void *addr, bool offset)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	struct link_map *map = NULL;
	const char *mod = NULL, *slash;
	char off[64] = "";

	assert_true(dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT));
	assert_non_null(info.dli_sname);
	assert_non_null(sym);
	assert_true(dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP));
	if (map->l_name && *map->l_name) {
		slash = strrchr(map->l_name, '/');
		mod = slash ? slash + 1 : map->l_name;
	}
	if (offset)
		snprintf(off, sizeof(off), "+0x%lx/0x%lx",
			 (unsigned long)((uintptr_t)addr - (uintptr_t)info.dli_saddr),
			 (unsigned long)sym->st_size);
	snprintf(want, size, "%s%s%s%s%s", info.dli_sname, off, mod ? " [" : "", mod ? mod : "",
		 mod ? "]" : "");
}

static void test_symbols(void **state)
{
	char want[512], want2[512];
	const char *fn = (const char *)(uintptr_t)pk_test_exported_fn;
	/* libc's own, not a sanitizer's interceptor of the same name. */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	const char *libc_fn = libc ? dlsym(libc, "abort") : NULL;

	(void)state;
	assert_int_equal(pk_test_exported_fn(1) + hidden_fn(1), 11);
	/* The main program: no module, as the kernel prints vmlinux's symbols. */
	expect_sym(want, sizeof(want), fn + 3, true);
	assert_non_null(strstr(want, "pk_test_exported_fn+0x3/0x"));
	assert_null(strchr(want, '['));
	assert_string_equal(kf("%pS", fn + 3), want);
	assert_string_equal(kf("%pSR", fn + 3), want);
	assert_string_equal(kf("%ps", fn + 3), "pk_test_exported_fn");
	/* %pB: a return address; the symbol of the byte before it. */
	assert_string_equal(kf("%pB", fn + 3), want);
	expect_sym(want, sizeof(want), fn, true);
	assert_string_equal(kf("%pS", fn), want);
	assert_non_null(strstr(want, "+0x0/0x"));
	/* A shared library: [module]. */
	assert_non_null(libc_fn);
	expect_sym(want, sizeof(want), libc_fn + 8, true);
	assert_non_null(strstr(want, " [libc.so.6]"));
	assert_string_equal(kf("%pS", libc_fn + 8), want);
	expect_sym(want, sizeof(want), libc_fn, false);
	assert_string_equal(kf("%ps", libc_fn), want);
	dlclose(libc);
	/* No symbol contains it: the address. */
	snprintf(want, sizeof(want), "0x%lx", (unsigned long)(uintptr_t)hidden_fn);
	assert_string_equal(kf("%pS", (const void *)(uintptr_t)hidden_fn), want);
	assert_string_equal(kf("%pS", NULL), "0x0");
	assert_string_equal(kf("%ps", (void *)0x1234), "0x1234");
	/* Width and precision apply to the whole text. */
	assert_string_equal(kf("[%22ps]", fn), "[   pk_test_exported_fn]");
	assert_string_equal(kf("[%.5ps]", fn), "[pk_te]");
	/* The symbol pk__sym_lookup() names is dladdr()'s where it has one. */
	snprintf(want2, sizeof(want2), "%s", kf("%ps", (const void *)(uintptr_t)pk_printk));
	assert_string_equal(want2, "pk_printk");
}

static void test_glibc_p_outside_kernel_formats(void **state)
{
	char want[512], sym[512], *text;
	const char *fn = (const char *)(uintptr_t)pk_test_exported_fn;
	static const unsigned char a[4] = { 10, 1, 2, 3 };

	(void)state;
	/* The formatter without the kernel flag: glibc's %p, then the letters. */
	snprintf(want, sizeof(want), "%pS %pI4 %ph %p %pe", fn, a, a, NULL, ERR_PTR(-EINVAL));
	pk__stbsp_snprintf(out, sizeof(out), "%pS %pI4 %ph %p %pe", fn, a, a, NULL,
			   ERR_PTR(-EINVAL));
	assert_string_equal(out, want);
	/* pk_printk(): the same; printk() and the other ways in: the extensions. */
	snprintf(sym, sizeof(sym), "%s", kf("%pS", fn));
	assert_int_equal(pk_printk(PK_INFO, "%pS %pI4\n", fn, a) > 0, 1);
	assert_int_equal(printk(KERN_INFO "%pS %pI4\n", fn, a) > 0, 1);
	assert_int_equal(pk_printk(PK_INFO, PK_KFMT "k %pS %pI4\n", fn, a) > 0, 1);
	assert_int_equal(pk_printk(PK_LEVEL_KERNEL, KERN_ERR "l %pS %pI4\n", fn, a) > 0, 1);
	pr_info("i %pI4\n", a);
	pr_cont("c %pI4", a);
	pr_cont(" %pI4\n", a);
	pr_debug("d %pI4\n", a);
	text = printed();
	snprintf(want, sizeof(want),
		 "%pS %pI4\n%s 10.1.2.3\nk %s 10.1.2.3\nl %s 10.1.2.3\n"
		 "i 10.1.2.3\nc 10.1.2.3 10.1.2.3\nd 10.1.2.3\n",
		 fn, a, sym, sym, sym);
	assert_string_equal(text, want);
	free(text);
}

static void test_warn_and_vprintk(void **state)
{
	static const unsigned char a[4] = { 1, 2, 3, 4 };
	char *text;

	(void)state;
	assert_int_equal(WARN(1, "warned %pI4\n", a), 1);
	text = printed();
	assert_non_null(strstr(text, "\nwarned 1.2.3.4\n"));
	free(text);
}

/* A kernel format that is not a string literal keeps the extensions (PK_LEVEL_KERNEL). */
static int my_vprintk(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintk(fmt, ap);
	va_end(ap);
	return n;
}

static void test_nonliteral(void **state)
{
	static const unsigned char a[4] = { 4, 3, 2, 1 };
	const char *fmt = "nl %pI4 %pI4\n";
	char *text;

	(void)state;
	assert_true(my_vprintk(fmt, a, a) > 0);
	assert_true(printk(fmt, a, a) > 0);
	text = printed();
	assert_string_equal(text, "nl 4.3.2.1 4.3.2.1\nnl 4.3.2.1 4.3.2.1\n");
	free(text);
}

static volatile sig_atomic_t sig_ret;

static void handler(int sig)
{
	static const unsigned char a[4] = { 127, 0, 0, 1 };
	static const unsigned char m[6] = { 1, 2, 3, 4, 5, 6 };
	const char *fn = (const char *)(uintptr_t)pk_test_exported_fn;
	int saved = errno;

	(void)sig;
	sig_ret = printk(KERN_ERR "sig %pS %pI4 %pM %pe %*phN %pUb\n", fn + 2, a, m,
			 ERR_PTR(-EBADF), 4, bytes, bytes);
	errno = saved;
}

static void test_signal_handler(void **state)
{
	struct sigaction sa;
	char want[512], sym[256], *text;
	const char *fn = (const char *)(uintptr_t)pk_test_exported_fn;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	assert_int_equal(raise(SIGUSR1), 0);
	assert_true(sig_ret > 0);
	expect_sym(sym, sizeof(sym), fn + 2, true);
	snprintf(want, sizeof(want),
		 "sig %s 127.0.0.1 01:02:03:04:05:06 -EBADF 0001abcd "
		 "0001abcd-ef7f-80ff-1020-304050607080\n", sym);
	text = printed();
	assert_string_equal(text, want);
	free(text);
	signal(SIGUSR1, SIG_DFL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_ip4),
		cmocka_unit_test(test_ip6),
		cmocka_unit_test(test_uuid),
		cmocka_unit_test(test_errptr),
		cmocka_unit_test(test_escape),
		cmocka_unit_test_setup(test_clamped_fields, case_setup),
		cmocka_unit_test(test_bad_pointers),
		cmocka_unit_test(test_plain_in_kernel_formats),
		cmocka_unit_test(test_va_format),
		cmocka_unit_test(test_symbols),
		cmocka_unit_test_setup(test_glibc_p_outside_kernel_formats, case_setup),
		cmocka_unit_test_setup(test_warn_and_vprintk, case_setup),
		cmocka_unit_test_setup(test_nonliteral, case_setup),
		cmocka_unit_test_setup(test_signal_handler, case_setup),
	};

	return TU_RUN_GROUP(tests, setup, teardown, argc, argv);
}
