// SPDX-License-Identifier: MIT
/*
 * test_srcloc - call sites (printk.h, SOURCE LOCATIONS): the level
 * macros, their _f variants and kernel.h's printk() store their file,
 * function and line; a reader gets them back, from this process's store
 * and from a killed writer's store file through pkmsg; pk_printk() and
 * continuations store none; a header's site used from two files names the
 * header; every rendering shows them (JSON, kmsg, RFC 5424; human only
 * with PK_FMT_F_LOC); PK_CFG_NO_SRCLOC and PK_SRCLOC turn them off.  And
 * the renderings' marks of a field left out (kmsg, RFC 5424), and RFC
 * 5424's SD-NAMEs of two long keys that share their first 32 characters.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "console/rfc5424.h"
#include "format/format.h"
#include "printk/console.h"
#include "printk/kernel.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "srcloc_site.h"
#include "testutil.h"

static int init_with(unsigned flags)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | flags;
	return pk_init(&cfg);
}

static int setup(void **state)
{
	(void)state;
	return init_with(0);
}

static struct pk_reader *reader_here(void)
{
	struct pk_reader *r = pk_reader_open();
	struct pk_store_info info;

	assert_non_null(r);
	assert_int_equal(pk_reader_info(r, &info), 0);
	pk_reader_seek(r, info.next_seq);
	return r;
}

static void next(struct pk_reader *r, struct pk_record *rec)
{
	assert_int_equal(pk_reader_next(r, rec), 1);
}

static void expect_loc(const struct pk_record *rec, const char *file, const char *func,
		       unsigned line)
{
	assert_non_null(rec->file);
	assert_non_null(rec->func);
	assert_string_equal(rec->file, file);
	assert_string_equal(rec->func, func);
	assert_int_equal(rec->line, line);
}

static void expect_none(const struct pk_record *rec)
{
	assert_null(rec->file);
	assert_null(rec->func);
	assert_int_equal(rec->line, 0);
}

/* Each kind of call: packed, formatted at the call, fields, kernel.h, none. */
static void test_read_back(void **state)
{
	struct pk_reader *r = reader_here();
	struct pk_record rec;
	unsigned l1, l2, l3, l4, l5;
	char big[40];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	l1 = __LINE__ + 1;
	assert_true(pk_info("packed %d\n", 1) > 0);
	l2 = __LINE__ + 1;
	assert_true(pk_warn("%s %s open", "formatted", big) > 0);	/* no newline: eager */
	pk_cont(" continued\n");
	l3 = __LINE__ + 1;
	assert_true(pk_err_f(PK_FIELDS({ "KEY", "v" }), "with fields %d\n", 3) > 0);
	l4 = __LINE__ + 1;
	assert_true(pr_info("kernel %d\n", 4) > 0);
	assert_true(pk_printk(PK_INFO, "plain\n") > 0);
	l5 = __LINE__ + 1;
	assert_true(pk_printk_loc(NULL, &(const struct pk_srcloc){ "by/hand.c", "hand", 77, 0, 0 },
				  PK_INFO, "by hand\n") > 0);

	next(r, &rec);
	assert_string_equal(rec.text, "packed 1");
	expect_loc(&rec, __FILE__, "test_read_back", l1);
	next(r, &rec);
	assert_non_null(strstr(rec.text, "formatted xxx"));
	assert_non_null(strstr(rec.text, " continued"));	/* joined: one record */
	expect_loc(&rec, __FILE__, "test_read_back", l2);
	next(r, &rec);
	assert_string_equal(rec.text, "with fields 3");
	assert_int_equal(rec.nfields, 1);
	expect_loc(&rec, __FILE__, "test_read_back", l3);
	next(r, &rec);
	assert_string_equal(rec.text, "kernel 4");
	expect_loc(&rec, __FILE__, "test_read_back", l4);
	next(r, &rec);
	assert_string_equal(rec.text, "plain");
	expect_none(&rec);
	next(r, &rec);
	expect_loc(&rec, "by/hand.c", "hand", 77);
	(void)l5;
	pk_reader_close(r);
}

/* A continuation that cannot join its line is a record of its own, without a site. */
static void test_cont_alone(void **state)
{
	struct pk_reader *r;
	struct pk_record rec;

	(void)state;
	assert_int_equal(pk_flush(5000), 0);
	r = reader_here();
	pk_printk(PK_INFO, "line\n");
	pk_cont("lonely\n");
	next(r, &rec);
	next(r, &rec);
	assert_string_equal(rec.text, "lonely");
	expect_none(&rec);
	pk_reader_close(r);
}

/*
 * The limits of a call site: a file name kept to its last
 * PK_SRCLOC_FILE_MAX bytes whether its length is given or counted (a
 * counted one longer than 4 KiB too), a function to its first
 * PK_SRCLOC_FUNC_MAX; and the largest record (a module prefix, the
 * longest site, a text over PK_RECORD_MAX, every field at its largest)
 * stored whole but its text, both deferred and formatted at the call.
 */
static void test_limits(void **state)
{
	static char file[5001], func[201], text[1101], vals[8][109];
	static struct pk_module mod = { .name = "m234567890123456789012345678901",
					 .level = PK_DEBUG, .default_level = PK_DEBUG };
	static const char keys[8][3] = { "K0", "K1", "K2", "K3", "K4", "K5", "K6", "K7" };
	struct pk_field f[8];
	struct pk_reader *r;
	struct pk_record rec;
	size_t i;

	(void)state;
	r = reader_here();
	memset(file, 'd', sizeof(file) - 1);
	memcpy(file + sizeof(file) - 8, "/tail.c", 8);
	memset(func, 'g', sizeof(func) - 1);
	memset(text, 't', sizeof(text) - 1);
	for (i = 0; i < 8; i++) {
		memset(vals[i], 'v', sizeof(vals[i]) - 1);
		f[i] = (struct pk_field){ keys[i], vals[i] };
	}
	assert_int_equal(pk_module_register(&mod), 0);
	/* Counted (over 4 KiB), then given; the function counted, then given. */
	pk_printk_loc(NULL, &(const struct pk_srcloc){ file, func, 1, 0, 0 }, PK_INFO, "c\n");
	pk_printk_loc(NULL, &(const struct pk_srcloc){ file, func, 2, 5000, 200 }, PK_INFO, "g\n");
	for (i = 0; i < 2; i++) {
		next(r, &rec);
		assert_int_equal(strlen(rec.file), PK_SRCLOC_FILE_MAX);
		assert_string_equal(rec.file, file + 5000 - PK_SRCLOC_FILE_MAX);
		assert_int_equal(strlen(rec.func), PK_SRCLOC_FUNC_MAX);
		assert_memory_equal(rec.func, func, PK_SRCLOC_FUNC_MAX);
		assert_int_equal(rec.line, i + 1);
	}
	/*
	 * The largest records: the longest site, a text over PK_RECORD_MAX,
	 * and either every field at its largest or the longest module.
	 */
	pk_printk_fields_loc(&(const struct pk_srcloc){ file, func, 3, 5000, 200 }, PK_INFO, f, 8,
			     "%s\n", text);
	pk_printk_loc(&mod, &(const struct pk_srcloc){ file, func, 4, 5000, 200 }, PK_INFO,
		      "%s\n", text);
	pk_printk_loc(&mod, &(const struct pk_srcloc){ file, func, 5, 5000, 200 }, PK_INFO,
		      "%s", text);
	for (i = 0; i < 3; i++) {
		next(r, &rec);
		assert_int_equal(rec.line, i + 3);
		assert_string_equal(rec.file, file + 5000 - PK_SRCLOC_FILE_MAX);
		assert_int_equal(strlen(rec.func), PK_SRCLOC_FUNC_MAX);
		assert_int_equal(rec.len, PK_RECORD_MAX);
		assert_memory_equal(rec.text, text, PK_RECORD_MAX);
		assert_true(rec.flags & PK_REC_TRUNC);
		if (i == 0) {
			assert_int_equal(rec.nfields, 8);
			assert_false(rec.flags & PK_REC_FIELDS_DROPPED);
			assert_string_equal(rec.fields[7].value, vals[7]);
		} else {
			assert_string_equal(rec.module, mod.name);
		}
	}
	/*
	 * An open line of the longest site and module: a continuation joins
	 * it up to PK_RECORD_MAX bytes of text, and one that would pass that
	 * is a record of its own; no text is lost, the site stays the line's.
	 */
	pk_printk_loc(&mod, &(const struct pk_srcloc){ file, func, 6, 5000, 200 }, PK_INFO,
		      "%.1000s", text);
	pk_cont("%.24s", text);
	pk_cont("%.1s\n", text);
	next(r, &rec);
	assert_int_equal(rec.line, 6);
	assert_string_equal(rec.module, mod.name);
	assert_int_equal(rec.len, PK_RECORD_MAX);
	assert_false(rec.flags & PK_REC_TRUNC);
	next(r, &rec);
	assert_true(rec.flags & PK_REC_CONT);
	assert_null(rec.file);
	assert_string_equal(rec.text, "t");
	assert_string_equal(rec.module, mod.name);
	pk_reader_close(r);
}

/* A site in a header used from two .c files: both records name the header. */
static void test_header_site(void **state)
{
	struct pk_reader *r = reader_here();
	struct pk_record rec;
	const char *hdr;

	(void)state;
	assert_true(srcloc_site_log("test") > 0);
	assert_true(srcloc_other() > 0);
	next(r, &rec);
	assert_string_equal(rec.text, "from the header, called by test");
	hdr = strstr(rec.file, "srcloc_site.h");
	assert_non_null(hdr);
	assert_string_equal(hdr, "srcloc_site.h");
	assert_string_equal(rec.func, "srcloc_site_log");
	assert_int_equal(rec.line, SRCLOC_SITE_LINE);
	next(r, &rec);
	assert_string_equal(rec.text, "from the header, called by other");
	assert_non_null(strstr(rec.file, "srcloc_site.h"));
	assert_string_equal(rec.func, "srcloc_site_log");
	assert_int_equal(rec.line, SRCLOC_SITE_LINE);
	pk_reader_close(r);
}

static size_t render(char *out, size_t size, const struct pk_record *rec, unsigned fmt)
{
	struct pk_format_opts fo = { .fmt = fmt };

	return pk__format_record(out, size, rec, &fo);
}

static size_t rfc5424(char *msg, size_t size, const struct pk_record *rec)
{
	static char line[PK_FORMAT_MAX];
	struct pk__rfc5424_id id = { .facility = -1 };
	size_t n = render(line, sizeof(line), rec, PK_FMT_JSON | PK_FMT_F_RFC3339);

	pk__rfc5424_id_names(&id, "host", "app");
	n = pk__rfc5424_render(&id, line, n, msg, size - 1);
	msg[n] = '\0';
	return n;
}

/* Every rendering of a record with a site; human only when asked. */
static void test_renderings(void **state)
{
	static char line[PK_FORMAT_MAX], want[512], msg[PK_RFC5424_MSG_MAX];
	struct pk_reader *r = reader_here();
	struct pk_record rec;
	unsigned l;

	(void)state;
	l = __LINE__ + 1;
	assert_true(pk_notice("rendered\n") > 0);
	next(r, &rec);

	render(line, sizeof(line), &rec, PK_FMT_JSON);
	snprintf(want, sizeof(want), "\"file\":\"%s\",\"line\":%u,\"func\":\"test_renderings\","
		 "\"text\":\"rendered\"}\n", __FILE__, l);
	if (!strstr(line, want))
		fail_msg("JSON: %s", line);

	render(line, sizeof(line), &rec, PK_FMT_KMSG);
	snprintf(want, sizeof(want), ";rendered\n CODE_FILE=%s\n CODE_LINE=%u\n"
		 " CODE_FUNC=test_renderings\n", __FILE__, l);
	if (!strstr(line, want))
		fail_msg("kmsg: %s", line);

	rfc5424(msg, sizeof(msg), &rec);
	snprintf(want, sizeof(want), "][code@32473 file=\"%s\" line=\"%u\" func=\"test_renderings\"]"
		 " rendered", __FILE__, l);
	if (!strstr(msg, want))
		fail_msg("RFC 5424: %s", msg);

	render(line, sizeof(line), &rec, PK_FMT_HUMAN);
	assert_null(strstr(line, "test_renderings"));
	assert_non_null(strstr(line, "] rendered\n"));
	render(line, sizeof(line), &rec, PK_FMT_HUMAN | PK_FMT_F_LOC);
	snprintf(want, sizeof(want), "] %s:%u test_renderings: rendered\n", __FILE__, l);
	if (!strstr(line, want))
		fail_msg("human, loc: %s", line);
	render(line, sizeof(line), &rec, PK_FMT_SYSLOG | PK_FMT_F_LOC);
	if (!strstr(line, want))
		fail_msg("syslog, loc: %s", line);

	/* A record without one shows none anywhere. */
	pk_printk(PK_INFO, "bare\n");
	next(r, &rec);
	render(line, sizeof(line), &rec, PK_FMT_JSON);
	assert_null(strstr(line, "\"file\""));
	assert_null(strstr(line, "\"line\""));
	render(line, sizeof(line), &rec, PK_FMT_KMSG);
	assert_null(strstr(line, "CODE_"));
	rfc5424(msg, sizeof(msg), &rec);
	assert_null(strstr(msg, "code@"));
	render(line, sizeof(line), &rec, PK_FMT_HUMAN | PK_FMT_F_LOC);
	assert_non_null(strstr(line, "] bare\n"));
	pk_reader_close(r);
}

/* A file or function name with a newline, an escape or a quote is escaped in every rendering. */
static void test_escaped_names(void **state)
{
	static char line[PK_FORMAT_MAX], msg[PK_RFC5424_MSG_MAX];
	static const unsigned fmts[] = { PK_FMT_JSON, PK_FMT_KMSG, PK_FMT_HUMAN | PK_FMT_F_LOC,
					 PK_FMT_SYSLOG | PK_FMT_F_LOC };
	struct pk_reader *r = reader_here();
	struct pk_record rec;
	size_t i;

	(void)state;
	pk_printk_loc(NULL, &(const struct pk_srcloc){ "a\nb\033[31m\".c", "f\n\033\\", 9, 0, 0 },
		      PK_INFO, "t\n");
	next(r, &rec);
	assert_string_equal(rec.file, "a\nb\033[31m\".c");
	assert_string_equal(rec.func, "f\n\033\\");
	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		size_t n = render(line, sizeof(line), &rec, fmts[i]);

		if (memchr(line, '\033', n))
			fail_msg("an escape byte in %#x: %s", fmts[i], line);
		/* One line each, kmsg's four: the record, CODE_FILE, CODE_LINE, CODE_FUNC. */
		if (strchr(line, '\n') != line + n - 1 && fmts[i] != PK_FMT_KMSG)
			fail_msg("a newline inside %#x: %s", fmts[i], line);
	}
	render(line, sizeof(line), &rec, PK_FMT_JSON);
	assert_non_null(strstr(line, "\"file\":\"a\\nb\\u001b[31m\\\".c\""));
	assert_non_null(strstr(line, "\"func\":\"f\\n\\u001b\\\\\""));
	render(line, sizeof(line), &rec, PK_FMT_KMSG);
	assert_non_null(strstr(line, "\n CODE_FILE=a\\x0ab\\x1b[31m\".c\n CODE_LINE=9\n"
				     " CODE_FUNC=f\\x0a\\x1b\\x5c\n"));
	/* RFC 5424 escapes '"', '\\' and ']' in a PARAM-VALUE. */
	rfc5424(msg, sizeof(msg), &rec);
	assert_non_null(strstr(msg, "file=\"a\nb\033[31m\\\".c\" line=\"9\""
				    " func=\"f\n\033\\\\\"]"));
	pk_reader_close(r);
}

/*
 * A shared object's call sites outlive it: its records, read after
 * dlclose() unmapped it, name its file and function (copied into the
 * store when stored).
 */
static void test_unloaded_object(void **state)
{
	struct pk_reader *r = reader_here();
	struct pk_record rec;
	int (*log_fn)(int);
	void *h;
	size_t i;

	(void)state;
	h = dlopen(SRCLOC_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fail_msg("dlopen: %s", dlerror());
	*(void **)&log_fn = dlsym(h, "srcloc_plugin_log");
	assert_non_null(log_fn);
	assert_true(log_fn(7) > 0);
	assert_int_equal(dlclose(h), 0);
	/* Gone: a load that only finds an object already there finds none. */
	assert_null(dlopen(SRCLOC_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD));
	for (i = 0; i < 3; i++) {
		next(r, &rec);
		assert_non_null(rec.file);
		assert_non_null(strstr(rec.file, "srcloc_plugin.c"));
		assert_string_equal(rec.func, "srcloc_plugin_log");
		assert_non_null(strstr(rec.text, "plugin "));
	}
	pk_reader_close(r);
}

/* loc=on in a PK_CONSOLE entry: the file console's lines show the site. */
static void test_console_loc_option(void **state)
{
	char *path = tu_tmp_path("srcloc-con"), spec[4200], want[512], *text, *err;
	struct tu_grab gr;
	unsigned l;

	(void)state;
	unlink(path);
	snprintf(spec, sizeof(spec), "file:%s,loc=on,name=srcloc", path);
	assert_int_equal(pk_console_register_spec(spec), 1);
	l = __LINE__ + 1;
	pk_warn("to the file\n");
	pk_printk(PK_WARNING, "no site\n");
	assert_int_equal(pk_flush(5000), 0);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	snprintf(want, sizeof(want), "] %s:%u test_console_loc_option: to the file\n", __FILE__, l);
	if (!strstr(text, want))
		fail_msg("file console: %s", text);
	assert_non_null(strstr(text, "] no site\n"));
	free(text);
	assert_int_equal(pk_console_unregister(pk_console_find("srcloc")), 0);

	/* A bad value: refused, naming it and the allowed ones. */
	tu_grab_start(&gr);
	assert_int_equal(pk_console_register_spec("stderr,loc=maybe"), 0);
	err = tu_grab_end(&gr);
	assert_non_null(strstr(err, "loc"));
	assert_non_null(strstr(err, "maybe"));
	free(err);
	unlink(path);
	free(path);
}

/* A field left out shows in kmsg and RFC 5424 as in JSON. */
static void test_fields_dropped_shown(void **state)
{
	static char line[PK_FORMAT_MAX], msg[PK_RFC5424_MSG_MAX];
	struct pk_reader *r = reader_here();
	struct pk_record rec;

	(void)state;
	assert_int_equal(pk_printk_fields(PK_INFO, PK_FIELDS({ "GOOD", "1" }, { "bad", "2" }),
					  "some kept\n"), -EINVAL);
	assert_true(pk_printk_fields(PK_INFO, PK_FIELDS({ "GOOD", "1" }), "all kept\n") > 0);
	next(r, &rec);
	assert_true(rec.flags & PK_REC_FIELDS_DROPPED);
	render(line, sizeof(line), &rec, PK_FMT_JSON);
	assert_non_null(strstr(line, "\"fields_dropped\":true"));
	render(line, sizeof(line), &rec, PK_FMT_KMSG);
	if (!strstr(line, ";some kept\n GOOD=1\n fields_dropped=1\n"))
		fail_msg("kmsg: %s", line);
	rfc5424(msg, sizeof(msg), &rec);
	if (!strstr(msg, " fields_dropped=\"1\"][fields@32473 GOOD=\"1\"]"))
		fail_msg("RFC 5424: %s", msg);

	next(r, &rec);
	assert_false(rec.flags & PK_REC_FIELDS_DROPPED);
	render(line, sizeof(line), &rec, PK_FMT_KMSG);
	assert_null(strstr(line, "fields_dropped"));
	rfc5424(msg, sizeof(msg), &rec);
	assert_null(strstr(msg, "fields_dropped"));
	pk_reader_close(r);
}

/* Two keys longer than an SD-NAME that share their first 32 characters stay two. */
static void test_rfc5424_long_keys(void **state)
{
	static char msg[PK_RFC5424_MSG_MAX];
	static const char a[] = "A_KEY_LONGER_THAN_AN_SD_NAME_CAN_BE_1";
	static const char b[] = "A_KEY_LONGER_THAN_AN_SD_NAME_CAN_BE_2";
	struct pk_reader *r = reader_here();
	struct pk_record rec;

	(void)state;
	assert_true(strlen(a) > 32 && !memcmp(a, b, 32));
	assert_true(pk_printk_fields(PK_INFO, PK_FIELDS({ a, "one" }, { "SHORT", "s" }, { b, "two" }),
				     "long keys\n") > 0);
	next(r, &rec);
	rfc5424(msg, sizeof(msg), &rec);
	if (!strstr(msg, "[fields@32473 A_KEY_LONGER_THAN_AN_SD_NAME_C~0=\"one\" SHORT=\"s\" "
			 "A_KEY_LONGER_THAN_AN_SD_NAME_C~2=\"two\"]"))
		fail_msg("RFC 5424: %s", msg);
	pk_reader_close(r);
}

#ifdef SRCLOC_CXX
int srcloc_cxx_log(void);
extern unsigned srcloc_cxx_line;
#endif

/* C++ callers' sites (GCC and Clang: the same static struct per site). */
static void test_cxx(void **state)
{
#ifdef SRCLOC_CXX
	struct pk_reader *r = reader_here();
	struct pk_record rec;

	(void)state;
	assert_true(srcloc_cxx_log() > 0);
	next(r, &rec);
	assert_string_equal(rec.text, "from C++ 1");
	assert_non_null(strstr(rec.file, "srcloc_cxx.cpp"));
	assert_string_equal(rec.func, "srcloc_cxx_log");
	assert_int_equal(rec.line, srcloc_cxx_line);
	next(r, &rec);
	assert_string_equal(rec.text, "from C++ 2");
	assert_string_equal(rec.func, "srcloc_cxx_log");
	assert_int_equal(rec.line, srcloc_cxx_line + 2);
	pk_reader_close(r);
#else
	(void)state;
	if (getenv("PK_TEST_REQUIRE_CXX") && !strcmp(getenv("PK_TEST_REQUIRE_CXX"), "1"))
		fail_msg("test_srcloc was built without a C++ compiler (install g++)");
	skip();
#endif
}

/* PK_CFG_NO_SRCLOC, and PK_SRCLOC for pk_config_init(). */
static void test_switch(void **state)
{
	struct pk_config cfg;
	struct pk_reader *r;
	struct pk_record rec;

	(void)state;
	assert_int_equal(init_with(PK_CFG_NO_SRCLOC), 0);
	r = reader_here();
	pk_info("off\n");
	pk_info_f(PK_FIELDS({ "K", "v" }), "off too\n");
	next(r, &rec);
	expect_none(&rec);
	next(r, &rec);
	expect_none(&rec);
	assert_int_equal(init_with(0), 0);
	pk_info("on again\n");
	next(r, &rec);
	assert_non_null(rec.file);
	pk_reader_close(r);

	setenv("PK_SRCLOC", "0", 1);
	pk_config_init(&cfg);
	assert_true(cfg.flags & PK_CFG_NO_SRCLOC);
	setenv("PK_SRCLOC", "1", 1);
	pk_config_init(&cfg);
	assert_false(cfg.flags & PK_CFG_NO_SRCLOC);
	setenv("PK_SRCLOC", "off", 1);	/* refused with a message: the default stays */
	pk_config_init(&cfg);
	assert_false(cfg.flags & PK_CFG_NO_SRCLOC);
	unsetenv("PK_SRCLOC");
}

/* A killed writer's store file: pk_reader_open_file() and pkmsg show the site. */
static void test_store_file_pkmsg(void **state)
{
	char *path = tu_tmp_path("srcloc-store"), *out = NULL, *err = NULL, want[512];
	struct pk_reader *r;
	struct pk_record rec;
	int status;
	unsigned l = 0;
	pid_t pid;

	(void)state;
	unlink(path);
	l = __LINE__ + 12;	/* the pk_err() below */
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_config cfg;

		pk_config_init(&cfg);
		cfg.buffer_path = path;
		cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
		if (pk_init(&cfg))
			_exit(3);
		pk_printk(PK_INFO, "no site\n");
		pk_err("post mortem %d\n", 5);
		kill(getpid(), SIGKILL);
		_exit(4);
	}
	tu_waitpid(pid, &status, 30000, "the writer");
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	r = pk_reader_open_file(path);
	assert_non_null(r);
	next(r, &rec);
	expect_none(&rec);
	next(r, &rec);
	assert_string_equal(rec.text, "post mortem 5");
	expect_loc(&rec, __FILE__, "test_store_file_pkmsg", l);
	pk_reader_close(r);

#ifdef PKMSG_PATH
	{
		const char *argv[] = { PKMSG_PATH, "-F", path, "-J", NULL };

		assert_int_equal(tu_run(argv, NULL, &out, &err), 0);
		snprintf(want, sizeof(want), "\"file\":\"%s\",\"line\":%u,"
			 "\"func\":\"test_store_file_pkmsg\",\"text\":\"post mortem 5\"}\n",
			 __FILE__, l);
		if (!strstr(out, want))
			fail_msg("pkmsg -J: %s", out);
		assert_int_equal(tu_count(out, "\"file\""), 1);
		free(out);
		free(err);
	}
	{
		const char *argv[] = { PKMSG_PATH, "-F", path, "--show-loc", NULL };

		assert_int_equal(tu_run(argv, NULL, &out, &err), 0);
		snprintf(want, sizeof(want), "] %s:%u test_store_file_pkmsg: post mortem 5\n",
			 __FILE__, l);
		if (!strstr(out, want))
			fail_msg("pkmsg --show-loc: %s", out);
		assert_non_null(strstr(out, "] no site\n"));
		free(out);
		free(err);
	}
	{
		const char *argv[] = { PKMSG_PATH, "-F", path, NULL };

		assert_int_equal(tu_run(argv, NULL, &out, &err), 0);
		assert_null(strstr(out, "test_store_file_pkmsg"));
		assert_non_null(strstr(out, "] post mortem 5\n"));
		free(out);
		free(err);
	}
#else
	(void)out;
	(void)err;
	(void)want;
#endif
	unlink(path);
	free(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_back),
		cmocka_unit_test(test_cont_alone),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_header_site),
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_renderings),
		cmocka_unit_test(test_unloaded_object),
		cmocka_unit_test(test_escaped_names),
		cmocka_unit_test(test_console_loc_option),
		cmocka_unit_test(test_fields_dropped_shown),
		cmocka_unit_test(test_rfc5424_long_keys),
		cmocka_unit_test(test_switch),
		cmocka_unit_test(test_store_file_pkmsg),
	};

	return TU_RUN_GROUP(tests, setup, NULL, argc, argv);
}
