// SPDX-License-Identifier: MIT
/*
 * test_consec.c - consoles against hostile paths and hostile text:
 * file consoles never follow another user's symlink in a sticky
 * world-writable directory nor open another user's file there, new logs
 * are private, every rendering but raw escapes control bytes (keeping
 * valid UTF-8) and no text forges a line; the console limit and drivers
 * that claim to write more than asked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "console/consoles.h"
#include "format/format.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define NOBODY	65534

static int init_quiet(void)
{
	struct pk_config cfg;

	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.mode = PK_MODE_HANDOFF;
	cfg.buffer_size = 64 << 10;
	return pk_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	pk_shutdown();
	return 0;
}

/* ---- a sticky, world-writable directory with other users' objects ---- */

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void assert_file_is(const char *path, const char *text, mode_t mode)
{
	struct stat st;
	char *s = tu_read_file(path, NULL);

	assert_non_null(s);
	assert_string_equal(s, text);
	free(s);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
}

/* Register @drv, print @text, flush, unregister. */
static void print_through(struct pk_console_driver *drv, const char *text)
{
	struct pk_console *c = pk_console_register_driver(drv, 8);

	assert_non_null(c);
	assert_true(pk_printk(PK_INFO, "%s", text) >= 0);
	assert_int_equal(pk_flush(10000), 0);
	assert_int_equal(pk_console_unregister(c), 0);
}

/*
 * A refusal: -EACCES, one stderr line naming the path given and the rule,
 * and nothing created or written anywhere.
 */
static void refused(const char *path, const char *rule)
{
	struct pk_console_driver drv;
	struct tu_grab g;
	char *msg;
	int ret;

	tu_grab_start(&g);
	ret = pk_console_file_make(path, 0, &drv);
	msg = tu_grab_end(&g);
	if (ret != -EACCES)
		fail_msg("%s: %d, not -EACCES; stderr: %s", path, ret, msg);
	if (!strstr(msg, path) || !strstr(msg, rule) ||
	    !strstr(msg, "sticky world-writable directory") || tu_count(msg, "libprintk:") != 1)
		fail_msg("refusal message lacks the path or the rule: %s", msg);
	free(msg);
}

static void test_symlink_refused(void **state)
{
	char *sticky, *priv, *target, *link, *link_ok, *sub, *sub_log, *theirs, *dirlink, *own_parent;
	char *via_root_link, *own_dir, *own_link, *plain, *plain_link, *spec;
	struct pk_console_driver drv;
	struct tu_grab g;
	char *msg, *s;
	int n;

	(void)state;
	if (geteuid() != 0)
		tu_skip("needs root, to give a symlink to uid %d with lchown()", NOBODY);
	assert_int_equal(init_quiet(), 0);
	sticky = tu_make_dir("consec-sticky", 01777);
	priv = tu_make_dir("consec-priv", 0755);
	target = tu_join(priv, "target");
	write_file(target, "secret\n", 0640);

	/* Another user's symlink in a sticky world-writable directory. */
	link = tu_join(sticky, "log");
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(lchown(link, NOBODY, NOBODY), 0);
	refused(link, "protected_symlinks");
	assert_file_is(target, "secret\n", 0640);

	/* The same link as a directory on the way, and a dangling one. */
	dirlink = tu_join(sticky, "dir");
	assert_int_equal(symlink(priv, dirlink), 0);
	assert_int_equal(lchown(dirlink, NOBODY, NOBODY), 0);
	sub_log = tu_join(dirlink, "new.log");
	refused(sub_log, "protected_symlinks");
	sub = tu_join(priv, "new.log");
	assert_int_equal(access(sub, F_OK), -1);
	{
		char *dangling = tu_join(sticky, "dangling"), *nowhere = tu_join(priv, "nowhere");

		assert_int_equal(symlink(nowhere, dangling), 0);
		assert_int_equal(lchown(dangling, NOBODY, NOBODY), 0);
		refused(dangling, "protected_symlinks");
		assert_int_equal(access(nowhere, F_OK), -1);
		unlink(dangling);
		free(dangling);
		free(nowhere);
	}
	/* Reached through a link of our own: still refused at the last step. */
	via_root_link = tu_join(priv, "via");
	assert_int_equal(symlink(link, via_root_link), 0);
	refused(via_root_link, "protected_symlinks");
	assert_file_is(target, "secret\n", 0640);

	/* The spec path says so too, and registers nothing. */
	n = (int)strlen(link) + 6;
	spec = malloc((size_t)n);
	snprintf(spec, (size_t)n, "file:%s", link);
	tu_grab_start(&g);
	assert_int_equal(pk_console_register_spec(spec), 0);
	msg = tu_grab_end(&g);
	assert_non_null(strstr(msg, "protected_symlinks"));
	assert_non_null(strstr(msg, "Permission denied"));
	free(msg);
	free(spec);
	assert_file_is(target, "secret\n", 0640);

	/* Another user's file there: not opened (protected_regular). */
	theirs = tu_join(sticky, "theirs.log");
	write_file(theirs, "theirs\n", 0666);
	assert_int_equal(chown(theirs, NOBODY, NOBODY), 0);
	refused(theirs, "protected_regular");
	assert_file_is(theirs, "theirs\n", 0666);

	/* Our own link there is followed. */
	link_ok = tu_join(sticky, "ours");
	assert_int_equal(symlink(target, link_ok), 0);
	assert_int_equal(pk_console_file_make(link_ok, 0, &drv), 0);
	print_through(&drv, "via our link");
	s = tu_read_file(target, NULL);
	assert_non_null(strstr(s, "] via our link\n"));
	assert_memory_equal(s, "secret\n[", 8);
	free(s);

	/*
	 * In a sticky directory owned by that user, their link is followed,
	 * once that directory is reached: not when it lies in a sticky
	 * world-writable directory itself (/tmp), where its owner could swap
	 * anything inside it.
	 */
	own_dir = tu_make_dir("consec-owned", 01777);
	assert_int_equal(chown(own_dir, NOBODY, NOBODY), 0);
	own_link = tu_join(own_dir, "log");
	assert_int_equal(symlink(target, own_link), 0);
	assert_int_equal(lchown(own_link, NOBODY, NOBODY), 0);
	refused(own_link, "to enter directory");
	unlink(own_link);
	rmdir(own_dir);
	free(own_link);
	free(own_dir);
	own_parent = tu_make_dir("consec-parent", 0755);
	own_dir = tu_join(own_parent, "owned");
	assert_int_equal(mkdir(own_dir, 0700), 0);
	assert_int_equal(chmod(own_dir, 01777), 0);
	assert_int_equal(chown(own_dir, NOBODY, NOBODY), 0);
	own_link = tu_join(own_dir, "log");
	assert_int_equal(symlink(target, own_link), 0);
	assert_int_equal(lchown(own_link, NOBODY, NOBODY), 0);
	assert_int_equal(pk_console_file_make(own_link, 0, &drv), 0);
	print_through(&drv, "their own directory");
	s = tu_read_file(target, NULL);
	assert_non_null(strstr(s, "] their own directory\n"));
	free(s);

	/* Outside sticky world-writable directories the rule does not apply. */
	plain = tu_make_dir("consec-plain", 0755);
	plain_link = tu_join(plain, "log");
	assert_int_equal(symlink(target, plain_link), 0);
	assert_int_equal(lchown(plain_link, NOBODY, NOBODY), 0);
	assert_int_equal(pk_console_file_make(plain_link, 0, &drv), 0);
	drv.ops->release(drv.ctx);

	unlink(plain_link);
	rmdir(plain);
	unlink(own_link);
	rmdir(own_dir);
	rmdir(own_parent);
	free(own_parent);
	unlink(link_ok);
	unlink(theirs);
	unlink(via_root_link);
	unlink(dirlink);
	unlink(link);
	unlink(target);
	rmdir(priv);
	rmdir(sticky);
	free(plain_link);
	free(plain);
	free(own_link);
	free(own_dir);
	free(link_ok);
	free(theirs);
	free(via_root_link);
	free(sub);
	free(sub_log);
	free(dirlink);
	free(link);
	free(target);
	free(priv);
	free(sticky);
}

/* The flags of the descriptor open on @path, from /proc/self/fdinfo; -1 if none. */
static long fd_flags_of(const char *path)
{
	char lnk[300], got[PATH_MAX], info[300], *s, *f;
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	long flags = -1;
	ssize_t n;

	assert_non_null(d);
	while (flags < 0 && (e = readdir(d))) {
		snprintf(lnk, sizeof(lnk), "/proc/self/fd/%s", e->d_name);
		n = readlink(lnk, got, sizeof(got) - 1);
		if (n < 0)
			continue;
		got[n] = '\0';
		if (strcmp(got, path))
			continue;
		snprintf(info, sizeof(info), "/proc/self/fdinfo/%s", e->d_name);
		s = tu_read_file(info, NULL);
		f = s ? strstr(s, "flags:") : NULL;
		if (f)
			flags = strtol(f + 6, NULL, 8);
		free(s);
	}
	closedir(d);
	return flags;
}

static void test_new_log_private(void **state)
{
	char *dir = tu_make_dir("consec-mode", 0700), *log = tu_join(dir, "a.log"), *log2 = tu_join(dir, "b.log");
	char real[PATH_MAX];
	struct pk_console_driver drv;
	struct stat st;
	mode_t old = umask(022);
	long fl;
	char *s;

	(void)state;
	assert_int_equal(init_quiet(), 0);
	/* New: 0600, close-on-exec. */
	assert_int_equal(pk_console_file_make(log, 0, &drv), 0);
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_non_null(realpath(log, real));
	fl = fd_flags_of(real);
	assert_true(fl >= 0);
	assert_true(fl & O_CLOEXEC);
	assert_true(fl & O_APPEND);
	print_through(&drv, "private");
	s = tu_read_file(log, NULL);
	assert_non_null(strstr(s, "] private\n"));
	free(s);
	/* An existing file keeps its mode. */
	assert_int_equal(chmod(log, 0644), 0);
	assert_int_equal(pk_console_file_make(log, 0, &drv), 0);
	drv.ops->release(drv.ctx);
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* PK_FILE_MODE() asks for another mode; the umask still applies. */
	assert_int_equal(pk_console_file_make(log2, PK_FILE_MODE(0664) | PK_FILE_FSYNC, &drv), 0);
	drv.ops->release(drv.ctx);
	assert_int_equal(stat(log2, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* Bits beside a mode, or a mode without its marker, are refused. */
	assert_int_equal(pk_console_file_make(log2, 0777u << 20, &drv), -EINVAL);
	assert_int_equal(pk_console_file_make(log2, 0x2u, &drv), -EINVAL);
	/* Paths that are no file to append to. */
	assert_int_equal(pk_console_file_make(dir, 0, &drv), -EISDIR);
	{
		char *slash = tu_join(dir, "");

		assert_int_equal(pk_console_file_make(slash, 0, &drv), -EISDIR);
		free(slash);
	}
	{
		char *under = tu_join(log, "x");

		assert_int_equal(pk_console_file_make(under, 0, &drv), -ENOTDIR);
		free(under);
	}
	{
		char *loop = tu_join(dir, "loop");

		assert_int_equal(symlink("loop", loop), 0);
		assert_int_equal(pk_console_file_make(loop, 0, &drv), -ELOOP);
		unlink(loop);
		free(loop);
	}
	umask(old);
	unlink(log);
	unlink(log2);
	rmdir(dir);
	free(log);
	free(log2);
	free(dir);
}

/* The kernel's own links in /proc still work: /dev/stderr on a pipe. */
static void test_proc_links_followed(void **state)
{
	struct pk_console_driver drv;
	int p[2], saved;
	char buf[256];
	ssize_t n;

	(void)state;
	assert_int_equal(init_quiet(), 0);
	assert_int_equal(pipe(p), 0);
	saved = dup(STDERR_FILENO);
	assert_int_equal(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	n = pk_console_file_make("/dev/stderr", 0, &drv);
	dup2(saved, STDERR_FILENO);
	close(saved);
	assert_int_equal(n, 0);
	print_through(&drv, "through /dev/stderr");
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "] through /dev/stderr\n"));
	close(p[0]);
}

/* ---- escaping: exact renderings of one hostile record ---- */

/* ESC CSI, CR, BEL, DEL, a UTF-8 C1 (CSI), bad bytes, TAB, backslash, valid UTF-8. */
static const char hostile[] = "a\x1b[2Jb\rc\x07" "d\x7f" "e\xc2\x9b" "f\xff\xc3(g\t\\h"
			      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";

static char *render(const char *text, size_t len, unsigned fmt, char *buf, size_t size)
{
	struct pk_record rec = {
		.seq = 42, .ts_ns = 3123456789ull, .level = 4, .tid = 77,
		.text = text, .len = len, .facility = 1, .pid = 9,
	};
	struct pk_format_opts fo = { .fmt = fmt };

	pk__format_record(buf, size, &rec, &fo);
	return buf;
}

#define HUMAN_TEXT "a\\x1b[2Jb\\x0dc\\x07d\\x7fe\\xc2\\x9bf\\xff\\xc3(g\t\\h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"

static void test_escape_each_rendering(void **state)
{
	char buf[1024];

	(void)state;
	assert_string_equal(render(hostile, sizeof(hostile) - 1, PK_FMT_HUMAN, buf, sizeof(buf)),
			    "[    3.123456] " HUMAN_TEXT "\n");
	assert_string_equal(render(hostile, sizeof(hostile) - 1, PK_FMT_HUMAN | PK_FMT_F_TID, buf,
				   sizeof(buf)),
			    "[    3.123456] [T77] " HUMAN_TEXT "\n");
	assert_string_equal(render(hostile, sizeof(hostile) - 1, PK_FMT_SYSLOG, buf, sizeof(buf)),
			    "<12>[    3.123456] " HUMAN_TEXT "\n");
	/* kmsg as /dev/kmsg: every byte outside 0x20-0x7e, and backslash. */
	assert_string_equal(render(hostile, sizeof(hostile) - 1, PK_FMT_KMSG, buf, sizeof(buf)),
			    "12,42,3123456,-;a\\x1b[2Jb\\x0dc\\x07d\\x7fe\\xc2\\x9bf\\xff\\xc3(g"
			    "\\x09\\x5ch\\xc3\\xa9\\xe2\\x82\\xac\\xf0\\x9f\\x98\\x80\n");
	assert_string_equal(render(hostile, sizeof(hostile) - 1, PK_FMT_JSON, buf, sizeof(buf)),
			    "{\"seq\":42,\"ts_us\":3123456,\"level\":4,\"facility\":1,\"pid\":9,"
			    "\"tid\":77,\"text\":\"a\\u001b[2Jb\\rc\\u0007d\\u007fe\\u009bf\\ufffd"
			    "\\ufffd(g\\t\\\\h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}\n");
	/* Raw stays raw. */
	render(hostile, sizeof(hostile) - 1, PK_FMT_RAW, buf, sizeof(buf));
	assert_memory_equal(buf, hostile, sizeof(hostile) - 1);
	assert_string_equal(buf + sizeof(hostile) - 1, "\n");
}

static void test_escape_utf8_edges(void **state)
{
	/* Overlong, surrogate, beyond U+10FFFF, a cut sequence; U+00A0 and U+10FFFF kept. */
	static const char t[] = "\xc0\xaf\xe0\x80\xaf\xed\xa0\x80\xf4\x90\x80\x80\xc2\xa0\xf4\x8f\xbf\xbf\xe2\x82";
	char buf[512];

	(void)state;
	assert_string_equal(render(t, sizeof(t) - 1, PK_FMT_HUMAN, buf, sizeof(buf)),
			    "[    3.123456] \\xc0\\xaf\\xe0\\x80\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80"
			    "\xc2\xa0\xf4\x8f\xbf\xbf\\xe2\\x82\n");
	assert_string_equal(render(t, sizeof(t) - 1, PK_FMT_JSON, buf, sizeof(buf)),
			    "{\"seq\":42,\"ts_us\":3123456,\"level\":4,\"facility\":1,\"pid\":9,"
			    "\"tid\":77,\"text\":\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
			    "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\xc2\xa0\xf4\x8f\xbf\xbf\\ufffd\\ufffd\"}\n");
	/* Every byte value alone: human output holds no control byte but '\n' at the end. */
	for (unsigned c = 0; c < 256; c++) {
		char one = (char)c;
		size_t n, i;

		if (c == '\n')
			continue;
		render(&one, 1, PK_FMT_HUMAN, buf, sizeof(buf));
		n = strlen(buf);
		for (i = 0; i + 1 < n; i++) {
			unsigned char b = (unsigned char)buf[i];

			if ((b < 0x20 && b != '\t') || b >= 0x7f)
				fail_msg("byte 0x%02x rendered as \"%s\"", c, buf);
		}
	}
}

/* ---- no text forges a line ---- */

static void test_newline_forges_nothing(void **state)
{
	static const char t[] = "x\n<0>[    0.000000] forged\n[    0.000000] forged too\n";
	char buf[512];

	(void)state;
	/* Human: continuation lines indented by the prefix's width, as dmesg does. */
	assert_string_equal(render(t, sizeof(t) - 1, PK_FMT_HUMAN, buf, sizeof(buf)),
			    "[    3.123456] x\n"
			    "               <0>[    0.000000] forged\n"
			    "               [    0.000000] forged too\n");
	assert_string_equal(render(t, sizeof(t) - 1, PK_FMT_HUMAN | PK_FMT_F_TID, buf, sizeof(buf)),
			    "[    3.123456] [T77] x\n"
			    "                     <0>[    0.000000] forged\n"
			    "                     [    0.000000] forged too\n");
	/* Syslog: continuation lines have no <PRI>, and cannot start with '<'. */
	assert_string_equal(render(t, sizeof(t) - 1, PK_FMT_SYSLOG, buf, sizeof(buf)),
			    "<12>[    3.123456] x\n"
			    "\\x3c0>[    0.000000] forged\n"
			    "[    0.000000] forged too\n");
	assert_string_equal(render(t, sizeof(t) - 1, PK_FMT_KMSG, buf, sizeof(buf)),
			    "12,42,3123456,-;x\\x0a<0>[    0.000000] forged\\x0a[    0.000000] "
			    "forged too\\x0a\n");
	assert_string_equal(render(t, sizeof(t) - 1, PK_FMT_JSON, buf, sizeof(buf)),
			    "{\"seq\":42,\"ts_us\":3123456,\"level\":4,\"facility\":1,\"pid\":9,"
			    "\"tid\":77,\"text\":\"x\\n<0>[    0.000000] forged\\n[    0.000000] "
			    "forged too\\n\"}\n");
	/* Empty lines, and a CR that would rewrite the line on a terminal. */
	assert_string_equal(render("a\n\nb\r", 5, PK_FMT_HUMAN, buf, sizeof(buf)),
			    "[    3.123456] a\n               \n               b\\x0d\n");
}

/* ---- JSON stays JSON ---- */

/* A strict check of one JSON string at *@p (RFC 8259, UTF-8 validated). */
static bool json_string(const char **p)
{
	const unsigned char *s = (const unsigned char *)*p;

	if (*s++ != '"')
		return false;
	while (*s != '"') {
		if (*s < 0x20 || *s == 0x7f)
			return false;
		if (*s == '\\') {
			s++;
			if (*s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
						return false;
				s += 5;
			} else if (*s && strchr("\"\\/bfnrt", *s)) {
				s++;
			} else {
				return false;
			}
		} else if (*s >= 0x80) {
			int k = *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc2 ? 2 : 0;

			if (!k || *s > 0xf4)
				return false;
			for (int i = 1; i < k; i++)
				if ((s[i] & 0xc0) != 0x80)
					return false;
			if (k == 2 && s[0] == 0xc2 && s[1] < 0xa0)
				return false;	/* a raw C1 control */
			s += k;
		} else {
			s++;
		}
	}
	*p = (const char *)s + 1;
	return true;
}

/* One flat JSON object of numbers, true and strings, then "\n". */
static bool json_line(const char *p)
{
	if (*p++ != '{')
		return false;
	for (;;) {
		if (!json_string(&p) || *p++ != ':')
			return false;
		if (*p == '"') {
			if (!json_string(&p))
				return false;
		} else if (!strncmp(p, "true", 4)) {
			p += 4;
		} else if (*p >= '0' && *p <= '9') {
			while (*p >= '0' && *p <= '9')
				p++;
		} else {
			return false;
		}
		if (*p == '}')
			return !strcmp(p, "}\n");
		if (*p++ != ',')
			return false;
	}
}

static void test_json_valid_for_every_byte(void **state)
{
	char text[300], buf[PK_FORMAT_MAX];
	unsigned c, i;

	(void)state;
	assert_true(json_line(render("plain", 5, PK_FMT_JSON, buf, sizeof(buf))));
	assert_false(json_line("{\"text\":\"a\x1b\"}\n"));	/* the checker can fail */
	for (c = 0; c < 256; c++) {
		text[0] = (char)c;
		if (!json_line(render(text, 1, PK_FMT_JSON, buf, sizeof(buf))))
			fail_msg("byte 0x%02x: not JSON: %s", c, buf);
		/* Every 2-byte sequence that starts like U+0080-U+07FF (C1 controls among them). */
		text[0] = '\xc2';
		text[1] = (char)c;
		if (!json_line(render(text, 2, PK_FMT_JSON, buf, sizeof(buf))))
			fail_msg("0xc2 0x%02x: not JSON: %s", c, buf);
		/* The byte before and after a valid sequence. */
		memcpy(text, "\xc3\xa9", 2);
		text[2] = (char)c;
		text[3] = (char)c;
		memcpy(text + 4, "\xe2\x82\xac", 3);
		if (!json_line(render(text, 7, PK_FMT_JSON, buf, sizeof(buf))))
			fail_msg("0x%02x around UTF-8: not JSON: %s", c, buf);
	}
	/* All 256 byte values in one record, twice. */
	for (i = 0; i < sizeof(text); i++)
		text[i] = (char)(i & 0xff);
	render(text, sizeof(text), PK_FMT_JSON, buf, sizeof(buf));
	assert_true(json_line(buf));
}

/* ---- the same through the console path ---- */

static void test_escaped_on_consoles(void **state)
{
	static const struct {
		unsigned fmt;
		const char *after;	/* what follows the prefix */
	} want[] = {
		{ PK_FMT_HUMAN, "] " HUMAN_TEXT "\n" },
		{ PK_FMT_SYSLOG, "] " HUMAN_TEXT "\n" },
		{ PK_FMT_KMSG, ";a\\x1b[2Jb\\x0dc\\x07d\\x7fe\\xc2\\x9bf\\xff\\xc3(g\\x09\\x5ch"
			       "\\xc3\\xa9\\xe2\\x82\\xac\\xf0\\x9f\\x98\\x80\n" },
		{ PK_FMT_JSON, "\"text\":\"a\\u001b[2Jb\\rc\\u0007d\\u007fe\\u009bf\\ufffd\\ufffd(g"
			       "\\t\\\\h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}\n" },
		{ PK_FMT_RAW, hostile },
	};
	struct tu_capture *cap[5];
	struct pk_console *con[5];
	char *dir = tu_make_dir("consec-file", 0700), *log = tu_join(dir, "log");
	struct pk_console_driver drv;
	char *s;
	int i;

	(void)state;
	assert_int_equal(init_quiet(), 0);
	for (i = 0; i < 5; i++) {
		cap[i] = tu_capture_new(0);
		con[i] = pk_console_register(&tu_capture_ops, cap[i], 8);
		assert_non_null(con[i]);
		assert_int_equal(pk_console_set_format(con[i], want[i].fmt), 0);
	}
	assert_int_equal(pk_console_file_make(log, 0, &drv), 0);
	print_through(&drv, hostile);
	for (i = 0; i < 5; i++) {
		s = tu_capture_text(cap[i]);
		if (!strstr(s, want[i].after))
			fail_msg("format %u printed \"%s\"", want[i].fmt, s);
		if (want[i].fmt != PK_FMT_RAW)
			assert_null(memchr(s, '\x1b', strlen(s)));
		if (want[i].fmt == PK_FMT_JSON)
			assert_true(json_line(s));
		free(s);
		assert_int_equal(pk_console_unregister(con[i]), 0);
		tu_capture_free(cap[i]);
	}
	/* A file console, as `tail -f` shows it. */
	s = tu_read_file(log, NULL);
	assert_non_null(s);
	assert_non_null(strstr(s, "] " HUMAN_TEXT "\n"));
	assert_null(strchr(s, '\x1b'));
	assert_null(strchr(s, '\r'));
	assert_null(strchr(s, '\a'));
	free(s);
	unlink(log);
	rmdir(dir);
	free(log);
	free(dir);
}

/* ---- the console limit, and drivers that overstate what they wrote ---- */

static long null_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return (long)len;
}

static const struct pk_console_ops null_ops = { .name = "null", .write = null_write };

static void test_console_limit(void **state)
{
	struct pk_console *con[PK_MAX_CONSOLES + 1];
	int i;

	(void)state;
	assert_int_equal(init_quiet(), 0);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		con[i] = pk_console_register(&null_ops, NULL, -1);
		assert_non_null(con[i]);
	}
	errno = 0;
	assert_null(pk_console_register(&null_ops, NULL, -1));
	assert_int_equal(errno, ENOSPC);
	/* A slot given back is usable again. */
	assert_int_equal(pk_console_unregister(con[3]), 0);
	con[3] = pk_console_register(&null_ops, NULL, -1);
	assert_non_null(con[3]);
	for (i = 0; i < PK_MAX_CONSOLES; i++)
		assert_int_equal(pk_console_unregister(con[i]), 0);
}

static size_t liar_seen;

static long liar_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	liar_seen += len;
	return (long)len * 1000;
}

static const struct pk_console_ops liar_ops = { .name = "liar", .write = liar_write };

static void test_driver_overstates(void **state)
{
	struct pk_console_stats st;
	struct pk_console *c;
	char text[63];

	(void)state;
	assert_int_equal(init_quiet(), 0);
	liar_seen = 0;
	c = pk_console_register(&liar_ops, NULL, 8);
	assert_non_null(c);
	pk_console_set_format(c, PK_FMT_RAW);
	memset(text, '.', 62);
	text[62] = '\0';
	assert_true(pk_printk(PK_INFO, "%s", text) >= 0);
	assert_int_equal(pk_flush(10000), 0);
	assert_int_equal(pk_console_stats_get(c, &st), 0);
	assert_int_equal(liar_seen, 63);
	assert_int_equal(st.bytes, 63);
	assert_int_equal(st.write_errors, 0);
	assert_int_equal(pk_console_unregister(c), 0);
}

/*
 * A throttle paces for what its inner driver was given, not for what the
 * driver claims: the liar's 1000-fold claim on 100 bytes at 100 kB/s would
 * have slept a second instead of a millisecond, and the throttle passed the
 * claim on.
 */
static void test_throttle_overstated(void **state)
{
	static const struct pk_console_driver liar = { .ops = &liar_ops, .format = PK_FMT_RAW };
	struct pk_console_driver thr;
	char text[100];
	uint64_t t0, took;
	int i;

	(void)state;
	memset(text, 'x', sizeof(text));
	assert_int_equal(pk_console_throttle_make(&liar, 100000, &thr), 0);
	liar_seen = 0;
	t0 = tu_now_ns();
	for (i = 0; i < 3; i++)
		assert_int_equal(thr.ops->write(thr.ctx, text, sizeof(text)), (long)sizeof(text));
	took = tu_now_ns() - t0;
	assert_int_equal(liar_seen, 3 * sizeof(text));
	/* 3 ms of line time; a loaded machine may add some, never 3 s. */
	if (took < 2000000ull || took > 1000000000ull)
		fail_msg("3 x 100 bytes at 100 kB/s took %llu us", (unsigned long long)(took / 1000));
	thr.ops->release(thr.ctx);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_symlink_refused, teardown),
		cmocka_unit_test_teardown(test_new_log_private, teardown),
		cmocka_unit_test_teardown(test_proc_links_followed, teardown),
		cmocka_unit_test(test_escape_each_rendering),
		cmocka_unit_test(test_escape_utf8_edges),
		cmocka_unit_test(test_newline_forges_nothing),
		cmocka_unit_test(test_json_valid_for_every_byte),
		cmocka_unit_test_teardown(test_escaped_on_consoles, teardown),
		cmocka_unit_test_teardown(test_console_limit, teardown),
		cmocka_unit_test_teardown(test_driver_overstates, teardown),
		cmocka_unit_test(test_throttle_overstated),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
