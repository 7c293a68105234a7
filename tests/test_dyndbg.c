// SPDX-License-Identifier: MIT
/*
 * test_dyndbg - dynamic debug: sites in two translation units and in a
 * dlopen()ed shared object, the kernel's query grammar (each selector,
 * wildcards, line ranges, flags, malformed queries and their messages),
 * the control-file listing, PK_DYNDBG and PK_DYNDBG_LIST in a child
 * process, the disabled path (no call into the library) and enabling
 * while sites run on other threads.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

/* Every enabled site of this file calls counted_printk(). */
static atomic_ulong printk_calls;
#define PK_DYNDBG_PRINTK_FN counted_printk
#include "printk/dyndbg.h"

#include "dyndbg_test.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *other_fn_file(void);

static int counted_printk(const struct pk_dyndbg_site *site, const char *fmt, ...)
	PK__PRINTF(2, 3);
static int counted_printk(const struct pk_dyndbg_site *site, const char *fmt, ...)
{
	va_list ap;
	int ret;

	atomic_fetch_add_explicit(&printk_calls, 1, memory_order_relaxed);
	va_start(ap, fmt);
	ret = pk_dyndbg_vprintk(site, fmt, ap);
	va_end(ap);
	return ret;
}

/* ---- the sites of this file (each records its line) ---------------------- */

static int line_alpha, line_beta, line_gamma, line_tab, line_racer, line_cost;

static __attribute__((noinline)) void alpha(int n)
{
	line_alpha = __LINE__; pk_dyndbg("alpha %d\n", n);
}

static __attribute__((noinline)) void beta(int n)
{
	line_beta = __LINE__; pk_dyndbg("beta %d\n", n);
}

static __attribute__((noinline)) void gamma_fn(void)
{
	line_gamma = __LINE__; pk_dyndbg("gamma plain\n");
}

static __attribute__((noinline)) void tabbed(void)
{
	line_tab = __LINE__; pk_dyndbg("x\ty\r\"q\" 100%%\n");
}

static __attribute__((noinline)) void racer(unsigned w, unsigned i)
{
	if (!w && !i) { line_racer = __LINE__; } pk_dyndbg("race %u %u\n", w, i);
}

/* The site of the cost measurement, in the loop itself. */
static __attribute__((noinline)) void cost_site(unsigned calls)
{
	unsigned i;

	for (i = 0; i < calls; i++) {
		line_cost = __LINE__; pk_dyndbg("cost %u\n", i);
	}
}

/* Run every site once, so that each has recorded its line. */
static void run_all(void)
{
	alpha(0);
	beta(0);
	gamma_fn();
	tabbed();
	racer(0, 0);
	cost_site(1);
	other_delta(0);
	other_epsilon("");
	other_zeta(0);
}

/* ---- fixture: a raw capture console showing debug records ---------------- */

static struct tu_capture *cap;
static struct pk_console *con;

static int setup(void **state)
{
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 1 << 20;
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

/* Every site off, the capture emptied, the call counter zeroed. */
static int fresh(void **state)
{
	(void)state;
	if (pk_dyndbg_exec("=_", NULL, 0) < 9)
		return -1;
	run_all();
	pk_flush(5000);
	pthread_mutex_lock(&cap->lock);
	cap->len = 0;
	if (cap->buf)
		cap->buf[0] = '\0';
	pthread_mutex_unlock(&cap->lock);
	atomic_store(&printk_calls, 0);
	return 0;
}

/* What the capture console printed since fresh(). */
static char *printed(void)
{
	assert_int_equal(pk_flush(5000), 0);
	return tu_capture_text(cap);
}

static int q(const char *query)
{
	char err[400];
	int ret = pk_dyndbg_exec(query, err, sizeof(err));

	if (ret < 0)
		print_message("query \"%s\": %d %s\n", query, ret, err);
	return ret;
}

/* The flags the listing shows for the site at @file:@line ("" if none). */
struct find {
	const char *file;
	unsigned line;
	char flags[8];
	char text[512];
	int found;
};

static int find_cb(void *ctx, const struct pk_dyndbg_site *site, const char *line, size_t len)
{
	struct find *f = ctx;

	if (site->lineno == f->line && !strcmp(site->filename, f->file)) {
		const char *eq = strstr(line, " =");

		f->found++;
		sscanf(eq + 2, "%7s", f->flags);
		snprintf(f->text, sizeof(f->text), "%.*s", (int)len, line);
	}
	return 0;
}

static const char *flags_of(const char *file, int line)
{
	static struct find f;

	memset(&f, 0, sizeof(f));
	f.file = file;
	f.line = (unsigned)line;
	assert_true(pk_dyndbg_list_cb(find_cb, &f) >= 9);
	assert_int_equal(f.found, 1);
	return f.flags;
}

#define FLAGS(site_line)	flags_of(__FILE__, site_line)

/* ---- selectors ------------------------------------------------------------- */

static void test_file(void **state)
{
	char query[600];
	char *out;

	(void)state;
	/* Base name: the six sites of this file, none of dyndbg_other.c. */
	assert_int_equal(q("file test_dyndbg.c +p"), 6);
	assert_string_equal(FLAGS(line_alpha), "p");
	assert_string_equal(flags_of(other_fn_file(), other_line_delta), "_");
	/* The full path, and a tail of it after a '/'. */
	snprintf(query, sizeof(query), "file %s -p", __FILE__);
	assert_int_equal(q(query), 6);
	assert_string_equal(FLAGS(line_alpha), "_");
	assert_int_equal(q("file tests/test_dyndbg.c +p"), 6);
	assert_int_equal(q("file ests/test_dyndbg.c +p"), 0);	/* not at a '/' */
	assert_int_equal(q("file dyndbg_other.c =p"), 3);
	alpha(1);
	other_delta(2);
	out = printed();
	assert_non_null(strstr(out, "alpha 1\n"));
	assert_non_null(strstr(out, "delta 2\n"));
	free(out);
	/* file NAME:FUNC and file NAME:LINE. */
	assert_int_equal(q("=_"), 9);
	assert_int_equal(q("file test_dyndbg.c:beta +p"), 1);
	assert_string_equal(FLAGS(line_beta), "p");
	assert_string_equal(FLAGS(line_alpha), "_");
	snprintf(query, sizeof(query), "file test_dyndbg.c:%d +f", line_alpha);
	assert_int_equal(q(query), 1);
	assert_string_equal(FLAGS(line_alpha), "f");
}

/* dyndbg_other.c's file name as its sites record it. */
static const char *other_file;
static int other_file_cb(void *ctx, const struct pk_dyndbg_site *site, const char *line,
			 size_t len)
{
	(void)ctx, (void)line, (void)len;
	if (strstr(site->filename, "dyndbg_other.c"))
		other_file = site->filename;
	return 0;
}

static const char *other_fn_file(void)
{
	if (!other_file)
		pk_dyndbg_list_cb(other_file_cb, NULL);
	assert_non_null(other_file);
	return other_file;
}

static void test_func_wildcards(void **state)
{
	(void)state;
	assert_int_equal(q("func alpha +p"), 1);
	assert_int_equal(q("func alph? +p"), 1);
	assert_int_equal(q("func alp +p"), 0);		/* whole names */
	assert_int_equal(q("func ?eta +p"), 1);		/* beta */
	assert_int_equal(q("func *eta -p"), 2);		/* beta, other_zeta */
	assert_int_equal(q("func *zeta +p"), 1);	/* other_zeta */
	assert_int_equal(q("func other_* +p"), 3);
	assert_int_equal(q("func ?a*a* +m"), 1);	/* gamma_fn */
	assert_int_equal(q("func * -p"), 9);
	assert_string_equal(FLAGS(line_gamma), "m");
	assert_string_equal(FLAGS(line_alpha), "_");
	beta(7);
	alpha(8);
	assert_int_equal(atomic_load(&printk_calls), 0);
	assert_int_equal(q("func beta +p"), 1);
	beta(9);
	assert_int_equal(atomic_load(&printk_calls), 1);
	char *out = printed();
	assert_string_equal(out, "beta 9\n");
	free(out);
}

static void test_line_ranges(void **state)
{
	char query[128];
	int lo = line_alpha, hi = line_gamma;

	(void)state;
	assert_true(lo < line_beta && line_beta < hi);
	snprintf(query, sizeof(query), "file test_dyndbg.c line %d-%d +p", lo, hi);
	assert_int_equal(q(query), 3);
	snprintf(query, sizeof(query), "file test_dyndbg.c line %d -p", line_beta);
	assert_int_equal(q(query), 1);
	assert_string_equal(FLAGS(line_alpha), "p");
	assert_string_equal(FLAGS(line_beta), "_");
	assert_string_equal(FLAGS(line_gamma), "p");
	assert_string_equal(FLAGS(line_tab), "_");
	/* Open ends: N- is N to the end, -M is the start to M. */
	snprintf(query, sizeof(query), "file test_dyndbg.c line %d- +l", line_racer);
	assert_int_equal(q(query), 2);		/* racer, cost_site */
	snprintf(query, sizeof(query), "file test_dyndbg.c line -%d +t", line_beta);
	assert_int_equal(q(query), 2);		/* alpha, beta */
	assert_string_equal(FLAGS(line_cost), "l");
	assert_string_equal(FLAGS(line_alpha), "pt");
	/* A range between sites matches nothing. */
	snprintf(query, sizeof(query), "file test_dyndbg.c line %d-%d +p", line_alpha + 1,
		 line_beta - 1);
	assert_int_equal(q(query), 0);
}

static void test_module(void **state)
{
	char *out;

	(void)state;
	/* The object's name, or PK_MODNAME for dyndbg_other.c's sites. */
	assert_int_equal(q("module other +p"), 3);
	assert_int_equal(q("module test_dyndbg +p"), 6);
	assert_int_equal(q("module test_dyn* -p"), 6);
	assert_int_equal(q("module oth?r +m"), 3);
	assert_int_equal(q("module nosuch +p"), 0);
	other_epsilon("e");
	alpha(3);
	other_zeta(4);
	out = printed();
	/* pr_debug's hook: the message printed with pr_fmt(fmt). */
	assert_string_equal(out, "other: epsilon e\nother: other_zeta: zeta 4\n");
	free(out);
}

static void test_format(void **state)
{
	(void)state;
	assert_int_equal(q("format \"alpha \" +p"), 1);
	assert_int_equal(q("format 'ta ' +p"), 3);		/* beta, delta, zeta */
	assert_int_equal(q("format ^beta +p"), 1);
	assert_int_equal(q("format ^eta +p"), 0);		/* anchored */
	assert_int_equal(q("format \\ty +p"), 1);		/* escape: a tab */
	assert_int_equal(q("format x\\011y +p"), 1);		/* octal */
	assert_int_equal(q("format 'race %u' +p"), 1);
	assert_string_equal(FLAGS(line_tab), "p");
	assert_string_equal(FLAGS(line_racer), "p");
	assert_string_equal(FLAGS(line_gamma), "_");
	/* Selectors combine: all must match. */
	assert_int_equal(q("func beta format alpha +p"), 0);
	assert_int_equal(q("file test_dyndbg.c func beta format eta -p"), 1);
}

/* ---- flags and prefixes ------------------------------------------------------ */

static void test_flags_and_prefixes(void **state)
{
	char want[256], *out;

	(void)state;
	assert_int_equal(q("func alpha =pmflt"), 1);
	assert_string_equal(FLAGS(line_alpha), "pmflt");	/* the kernel's order */
	assert_int_equal(q("func alpha -mt"), 1);
	assert_string_equal(FLAGS(line_alpha), "pfl");
	assert_int_equal(q("func alpha +_"), 1);		/* nothing changes */
	assert_string_equal(FLAGS(line_alpha), "pfl");
	alpha(11);
	assert_int_equal(q("func alpha =pm"), 1);
	alpha(12);
	assert_int_equal(q("func alpha =pt"), 1);
	alpha(13);
	assert_int_equal(q("func alpha =pmfl"), 1);
	alpha(14);
	assert_int_equal(q("func alpha =p"), 1);
	alpha(15);
	assert_int_equal(q("func alpha ="), 1);
	assert_string_equal(FLAGS(line_alpha), "_");
	alpha(16);
	out = printed();
	snprintf(want, sizeof(want),
		 "alpha:%d: alpha 11\n"
		 "test_dyndbg: alpha 12\n"
		 "[%ld] alpha 13\n"
		 "test_dyndbg:alpha:%d: alpha 14\n"
		 "alpha 15\n",
		 line_alpha, (long)gettid(), line_alpha);
	assert_string_equal(out, want);
	free(out);
	/* A '%' in a prefix is text, not a conversion. */
	assert_int_equal(q("func tabbed +pf"), 1);
	tabbed();
	out = printed();
	assert_non_null(strstr(out, "tabbed: x\ty\r\"q\" 100%\n"));
	free(out);
}

/* ---- malformed queries --------------------------------------------------- */

static void test_malformed(void **state)
{
	static const struct {
		const char *query, *err;
	} cases[] = {
		{ "fil x.c +p", "unknown keyword \"fil\" (query \"fil x.c +p\")" },
		{ "file x.c", "bad flag-op x, at start of x.c (query \"file x.c\")" },
		{ "func a b +p", "expecting pairs of match-spec <value> (query \"func a b +p\")" },
		{ "+x", "unknown flag 'x' (query \"+x\")" },
		{ "line 20-10 +p", "last-line:10 < 1st-line:20 (query \"line 20-10 +p\")" },
		{ "line 1x +p", "bad line-number: 1x (query \"line 1x +p\")" },
		{ "line 1 line 2 +p", "match-spec: line used 2x (query \"line 1 line 2 +p\")" },
		{ "func a func b +p", "match-spec:func val:a overridden by b (query \"func a func b +p\")" },
		{ "format 'abc +p", "unclosed quote: abc +p (query \"format 'abc +p\")" },
		{ "a b c d e f g h i j +p", "too many words, legal max <=9 (query \"a b c d e f g h i j +p\")" },
		{ "file x.c:1-2 line 3 +p", "match-spec: line used 2x (query \"file x.c:1-2 line 3 +p\")" },
	};
	char err[400];
	size_t i;
	char *out;

	(void)state;
	for (i = 0; i < COUNT(cases); i++) {
		memset(err, 'z', sizeof(err));
		assert_int_equal(pk_dyndbg_exec(cases[i].query, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, cases[i].err);
	}
	/* Nothing to do is no error. */
	assert_int_equal(pk_dyndbg_exec("", err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(pk_dyndbg_exec("  # a comment +p\n ; ;", err, sizeof(err)), 0);
	assert_int_equal(pk_dyndbg_exec(NULL, err, sizeof(err)), -EINVAL);
	/* One bad query among good ones: the good ones apply, -EINVAL is returned. */
	assert_int_equal(pk_dyndbg_exec("func alpha +p; nokey x +p\nfunc beta +p", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "unknown keyword \"nokey\" (query \"nokey x +p\")");
	assert_string_equal(FLAGS(line_alpha), "p");
	assert_string_equal(FLAGS(line_beta), "p");
	/* Two bad queries (a list pasted with its spaces lost): both named, in order. */
	assert_int_equal(pk_dyndbg_exec("filenet.c+p;funcparse_*+pf", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad flag-op f, at start of filenet.c+p (query \"filenet.c+p\"); "
				 "bad flag-op f, at start of funcparse_*+pf (query \"funcparse_*+pf\")");
	/* pk_dyndbg_query() says why, at PK_ERR. */
	assert_int_equal(pk_dyndbg_query("func alpha +q"), -EINVAL);
	out = printed();
	assert_string_equal(out, "dyndbg: unknown flag 'q' (query \"func alpha +q\")\n");
	free(out);
}

/* ---- listing ----------------------------------------------------------------- */

struct collect {
	char *text;
	size_t len;
	int n;
};

static int collect_cb(void *ctx, const struct pk_dyndbg_site *site, const char *line, size_t len)
{
	struct collect *c = ctx;

	(void)site;
	assert_int_equal(strlen(line), len);
	c->text = realloc(c->text, c->len + len + 1);
	memcpy(c->text + c->len, line, len + 1);
	c->len += len;
	c->n++;
	return 0;
}

static int stop_cb(void *ctx, const struct pk_dyndbg_site *site, const char *line, size_t len)
{
	(void)site, (void)line, (void)len;
	return ++*(int *)ctx == 3 ? 42 : 0;
}

static void test_listing(void **state)
{
	struct collect c = { NULL, 0, 0 };
	char want[1024], *file_text;
	int fd, n, calls = 0;
	char *path;

	(void)state;
	assert_int_equal(q("func tabbed =pflt"), 1);
	assert_int_equal(q("module other +m"), 3);
	n = pk_dyndbg_list_cb(collect_cb, &c);
	assert_int_equal(n, 9);		/* this program's nine sites, once each */
	assert_int_equal(c.n, 9);
	/* The exact lines of /proc/dynamic_debug/control. */
#define HAS_LINE(...)                                                                   \
	do {                                                                            \
		snprintf(want, sizeof(want), __VA_ARGS__);                              \
		assert_int_equal(tu_count(c.text, want), 1);                           \
		assert_non_null(strstr(c.text, want));                                  \
	} while (0)
	HAS_LINE("%s:%d [test_dyndbg]alpha =_ \"alpha %%d\\n\"\n", __FILE__, line_alpha);
	HAS_LINE("%s:%d [test_dyndbg]gamma_fn =_ \"gamma plain\\n\"\n", __FILE__, line_gamma);
	HAS_LINE("%s:%d [test_dyndbg]tabbed =pflt \"x\\ty\\r\"q\" 100%%%%\\n\"\n", __FILE__,
		 line_tab);
	HAS_LINE("%s:%d [other]other_delta =m \"delta %%d\\n\"\n", other_fn_file(),
		 other_line_delta);
	HAS_LINE("%s:%d [other]other_epsilon =m \"epsilon %%s\\n\"\n", other_fn_file(),
		 other_line_epsilon);
	/* pr_debug's site shows the raw format, without pr_fmt's. */
	HAS_LINE("%s:%d [other]other_zeta =m \"zeta %%d\\n\"\n", other_fn_file(),
		 other_line_zeta);
	/* Every line has the form. */
	assert_int_equal(tu_count(c.text, " [test_dyndbg]"), 6);
	assert_int_equal(tu_count(c.text, " [other]other_"), 3);
	/* To a descriptor: the header, then the same lines. */
	path = tu_tmp_path("dyndbg_list");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pk_dyndbg_list(fd), 9);
	close(fd);
	file_text = tu_read_file(path, NULL);
	assert_non_null(file_text);
	snprintf(want, sizeof(want), "# filename:lineno [module]function flags format\n%s",
		 c.text);
	assert_string_equal(file_text, want);
	assert_int_equal(pk_dyndbg_list(-1), -EBADF);
	/* A callback stops the walk with what it returns. */
	assert_int_equal(pk_dyndbg_list_cb(stop_cb, &calls), 42);
	assert_int_equal(calls, 3);
	unlink(path);
	free(path);
	free(file_text);
	free(c.text);
}

/* ---- the disabled path ------------------------------------------------------- */

static void test_disabled_no_call(void **state)
{
	struct pk_stats before, after;
	unsigned i;
	char *out;

	(void)state;
	assert_int_equal(pk_stats_get(&before), 0);
	for (i = 0; i < 100000; i++) {
		alpha((int)i);
		racer(1, i);
	}
	assert_int_equal(atomic_load(&printk_calls), 0);
	assert_int_equal(pk_stats_get(&after), 0);
	assert_int_equal(after.stored, before.stored);
	/* The same sites, enabled, call it once per call. */
	assert_int_equal(q("func racer +p"), 1);
	for (i = 0; i < 1000; i++) {
		alpha((int)i);
		racer(1, i);
	}
	assert_int_equal(atomic_load(&printk_calls), 1000);
	assert_int_equal(pk_stats_get(&after), 0);
	assert_int_equal(after.stored, before.stored + 1000);
	out = printed();
	assert_true(tu_tagged_in_order(out, "race 1", 1000));
	assert_null(strstr(out, "alpha"));
	free(out);
}

/* Median of per-call cost, disabled and enabled (stored, not printed). */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double ns_per_call(unsigned calls)
{
	uint64_t t[5];
	unsigned r;

	for (r = 0; r < 5; r++) {
		uint64_t t0 = tu_now_ns();

		cost_site(calls);
		t[r] = tu_now_ns() - t0;
	}
	qsort(t, 5, sizeof(t[0]), cmp_u64);
	return (double)t[2] / calls;
}

static void test_cost(void **state)
{
	double off, on, on_prefix;

	(void)state;
	assert_int_equal(pk_console_set_loglevel(con, PK_DEBUG), 0);	/* store only */
	off = ns_per_call(1000000);
	assert_int_equal(q("func cost_site +p"), 1);
	on = ns_per_call(2000);
	assert_int_equal(q("func cost_site +mflt"), 1);
	on_prefix = ns_per_call(2000);
	assert_int_equal(pk_console_set_loglevel(con, 8), 0);
	print_message("dyndbg per call (median of 5): disabled %.2f ns, enabled %.0f ns, "
		      "enabled with +mflt %.0f ns\n", off, on, on_prefix);
	assert_int_equal(q("func cost_site =_"), 1);
	assert_true(off < on);
}

/* ---- a shared object ------------------------------------------------------ */

static void test_plugin(void **state)
{
	dyndbg_plugin_fn *run;
	char want[256], *out;
	void *h;
	int line;

	(void)state;
	h = dlopen(DYNDBG_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fail_msg("dlopen: %s", dlerror());
	*(void **)&run = dlsym(h, "dyndbg_plugin_run");
	assert_non_null(run);
	/* Its own object, named after its file; this program's sites apart. */
	assert_int_equal(q("module libdyndbg_plugin +pm"), 1);
	assert_int_equal(q("module test_dyndbg +_"), 6);
	line = run(5);
	out = printed();
	assert_string_equal(out, "libdyndbg_plugin: plugin 5\n");
	free(out);
	assert_int_equal(q("func dyndbg_plugin_run =_"), 1);
	snprintf(want, sizeof(want), "dyndbg_plugin.c:%d [libdyndbg_plugin]dyndbg_plugin_run =_ ",
		 line);
	struct collect c = { NULL, 0, 0 };
	assert_int_equal(pk_dyndbg_list_cb(collect_cb, &c), 10);
	assert_non_null(strstr(c.text, want));
	free(c.text);
	/* dlclose(): its destructor takes the range back. */
	assert_int_equal(dlclose(h), 0);
	assert_int_equal(q("module libdyndbg_plugin +p"), 0);
	assert_int_equal(q("+_"), 9);
}

/* ---- registration ----------------------------------------------------------- */

static void test_register_api(void **state)
{
	static struct pk_dyndbg_site fake[2] = {
		{ NULL, "fake_fn", "fake.c", "fake %d\n", 5, 0, { 0, 0, 0 }, NULL },
		{ "mine", "fake_fn", "fake.c", "fake2\n", 6, 0, { 0, 0, 0 }, NULL },
	};

	(void)state;
	assert_int_equal(pk_dyndbg_register_sites(fake, fake), -EINVAL);
	assert_int_equal(pk_dyndbg_register_sites(NULL, fake), -EINVAL);
	assert_int_equal(pk_dyndbg_register_sites(fake, fake + 2), 0);
	assert_int_equal(pk_dyndbg_register_sites(fake, fake + 2), 0);	/* counted */
	assert_string_equal(fake[0].modname, "test_dyndbg");	/* the object's name */
	assert_string_equal(fake[1].modname, "mine");
	assert_int_equal(q("file fake.c +p"), 2);
	assert_int_equal(pk_dyndbg_unregister_sites(fake, fake + 2), 0);
	assert_int_equal(q("file fake.c -p"), 2);
	assert_int_equal(pk_dyndbg_unregister_sites(fake, fake + 2), 0);
	assert_int_equal(q("file fake.c +p"), 0);
	assert_int_equal(pk_dyndbg_unregister_sites(fake, fake + 2), -ENOENT);
}

/* ---- enabling while sites run ------------------------------------------------ */

static atomic_int race_stop;

static void *race_thread(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg, i;

	for (i = 0; !atomic_load_explicit(&race_stop, memory_order_relaxed); i++) {
		racer(w, i);
		if (i % 64 == 0)
			sched_yield();
	}
	return NULL;
}

/* A printed race line: an optional prefix of the allowed parts, then the message. */
static int race_line_ok(const char *l, size_t len, unsigned *w)
{
	char line[256], fn[64];
	const char *p = line, *m;
	unsigned i;
	int n = 0;

	if (len >= sizeof(line))
		return 0;
	memcpy(line, l, len);
	line[len] = '\0';
	if (*p == '[') {
		long tid;

		if (sscanf(p, "[%ld] %n", &tid, &n) != 1 || n == 0)
			return 0;
		p += n;
	}
	if (!strncmp(p, "test_dyndbg:", 12))
		p += 12;
	snprintf(fn, sizeof(fn), "racer:");
	if (!strncmp(p, fn, strlen(fn)))
		p += strlen(fn);
	snprintf(fn, sizeof(fn), "%d:", line_racer);
	if (!strncmp(p, fn, strlen(fn)))
		p += strlen(fn);
	if (*p == ' ')
		p++;
	m = p;
	n = 0;
	if (sscanf(m, "race %u %u%n", w, &i, &n) != 2 || m[n] != '\0')
		return 0;
	return 1;
}

static void test_enable_while_running(void **state)
{
	static const struct {
		const char *query;
		int matches;
	} queries[] = {
		{ "func racer +p", 1 }, { "func racer +f", 1 }, { "func racer +t", 1 },
		{ "func racer -p", 1 }, { "func racer =pml", 1 }, { "func racer =_", 1 },
		{ "module test_dyndbg line 1- +p", 6 }, { "format race -p", 1 },
		{ "func racer =pmflt", 1 }, { "func racer -pmflt", 1 },
	};
	pthread_t th[4];
	unsigned i, nq, w, lines = 0, bad = 0;
	unsigned long calls;
	double secs = tu_seconds(0.4);
	uint64_t end;
	char *out, *l, *nl;

	(void)state;
	atomic_store(&race_stop, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, race_thread, (void *)(uintptr_t)i), 0);
	end = tu_now_ns() + (uint64_t)(secs * 1e9);
	for (nq = 0; tu_now_ns() < end || nq < 100; nq++)
		assert_int_equal(q(queries[nq % COUNT(queries)].query),
				 queries[nq % COUNT(queries)].matches);
	/* At the end, enabled: the threads print (whatever the schedule was). */
	assert_int_equal(q("func racer =p"), 1);
	calls = atomic_load(&printk_calls);
	assert_true(tu_wait_until(atomic_load(&printk_calls) > calls + 8, 30000));
	atomic_store(&race_stop, 1);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(q("func racer =_"), 1);
	out = printed();
	for (l = out; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		assert_non_null(nl);
		if (strstr(l, "printk messages dropped") && strstr(l, "printk messages dropped") < nl)
			continue;
		if (race_line_ok(l, (size_t)(nl - l), &w) && w < 4)
			lines++;
		else if (bad++ < 5)
			print_message("bad line: %.*s\n", (int)(nl - l), l);
	}
	print_message("%u race lines printed while %u queries ran\n", lines, nq);
	assert_int_equal(bad, 0);
	assert_true(lines > 0);
	free(out);
}

/* ---- PK_DYNDBG and PK_DYNDBG_LIST, read at registration, in a child ------- */

/* The child: what PK_DYNDBG enabled before main() ran. */
static int child_main(void)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.console_loglevel = 8;
	cfg.consoles = "stderr";
	pk_init(&cfg);
	run_all();
	alpha(21);
	other_delta(22);
	pk_flush(5000);
	fflush(stderr);
	return 0;
}

static char *run_child(const char *dyndbg)
{
	int pipefd[2], status;
	char *out = NULL;
	size_t len = 0;
	ssize_t n;
	char buf[4096];
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { (char *)"test_dyndbg", NULL };
		char env1[512], *envp[] = { env1, (char *)"PK_DYNDBG_LIST=1",
					    (char *)"TEST_DYNDBG_CHILD=1", NULL };

		snprintf(env1, sizeof(env1), "PK_DYNDBG=%s", dyndbg);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], buf, sizeof(buf))) > 0) {
		out = realloc(out, len + (size_t)n + 1);
		memcpy(out + len, buf, (size_t)n);
		len += (size_t)n;
		out[len] = '\0';
	}
	close(pipefd[0]);
	tu_waitpid(pid, &status, 30000, "PK_DYNDBG child");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(out);
	return out;
}

static void test_env_in_child(void **state)
{
	char want[512], *out;

	(void)state;
	out = run_child("func alpha +pl; module other +p; nokey x +p; line 9x +p");
	/* Applied at registration, before main(): the sites printed. */
	snprintf(want, sizeof(want), "] %d: alpha 21\n", line_alpha);	/* l alone */
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "] delta 22\n"));
	assert_null(strstr(out, "] beta "));
	/* PK_DYNDBG_LIST=1: the sites as they were after PK_DYNDBG. */
	assert_int_equal(tu_count(out, "# filename:lineno [module]function flags format"), 1);
	snprintf(want, sizeof(want), "%s:%d [test_dyndbg]alpha =pl \"alpha %%d\\n\"\n", __FILE__,
		 line_alpha);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "%s:%d [test_dyndbg]beta =_ \"beta %%d\\n\"\n", __FILE__,
		 line_beta);
	assert_non_null(strstr(out, want));
	assert_int_equal(tu_count(out, " [other]other_delta =p "), 1);
	/* Each bad query is named once on stderr; the good ones still applied. */
	assert_int_equal(tu_count(out, "libprintk: PK_DYNDBG: unknown keyword \"nokey\" (query "
				  "\"nokey x +p\"); that query is ignored\n"), 1);
	assert_int_equal(tu_count(out, "libprintk: PK_DYNDBG: bad line-number: 9x (query "
				  "\"line 9x +p\"); that query is ignored\n"), 1);
	free(out);
}

/*
 * Empty queries and comments between others: the exit report numbers the
 * queries as their execution did (one splitting function), so that it
 * names exactly the one that matched nothing.
 */
static void test_env_comments_report(void **state)
{
	char *out;

	(void)state;
	out = run_child(" ; # first a comment;\n func alpha +p ;; func nosuch_fn +p\n"
			"# between ; func beta +p;  ");
	assert_non_null(strstr(out, "] alpha 21\n"));
	assert_non_null(strstr(out, "] beta "));
	assert_int_equal(tu_count(out, "matches no site"), 1);
	assert_int_equal(tu_count(out, "\"func nosuch_fn +p\" matches no site"), 1);
	assert_null(strstr(out, "#"  " between"));
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_file, fresh),
		cmocka_unit_test_setup(test_func_wildcards, fresh),
		cmocka_unit_test_setup(test_line_ranges, fresh),
		cmocka_unit_test_setup(test_module, fresh),
		cmocka_unit_test_setup(test_format, fresh),
		cmocka_unit_test_setup(test_flags_and_prefixes, fresh),
		cmocka_unit_test_setup(test_malformed, fresh),
		cmocka_unit_test_setup(test_listing, fresh),
		cmocka_unit_test_setup(test_disabled_no_call, fresh),
		cmocka_unit_test_setup(test_cost, fresh),
		cmocka_unit_test_setup(test_plugin, fresh),
		cmocka_unit_test_setup(test_register_api, fresh),
		cmocka_unit_test_setup(test_enable_while_running, fresh),
		cmocka_unit_test_setup(test_env_in_child, fresh),
		cmocka_unit_test_setup(test_env_comments_report, fresh),
	};

	if (getenv("TEST_DYNDBG_CHILD"))
		return child_main();
	return TU_RUN_GROUP(tests, setup, teardown, argc, argv);
}
