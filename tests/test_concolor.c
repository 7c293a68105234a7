// SPDX-License-Identifier: MIT
/*
 * Consoles color the level on a terminal (the PK_CONSOLE option color=):
 * auto on a pseudo-terminal colors, auto on a pipe does not, NO_COLOR and
 * TERM=dumb turn auto off, on forces it (into a pipe too), off never.  The
 * text's own escape bytes stay escaped inside the color; JSON is never
 * colored; pk_console_set_format() keeps the color; the default stderr
 * console colors on a terminal; consoles other than stderr, stdout and
 * fd:N refuse the option, and a bad value is named.  The renderer's colors
 * around continuation lines and a rendering cut short.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "console/consoles.h"
#include "format/format.h"
#include "printk/console.h"
#include "printk/printk.h"
#include "testutil.h"

#define ERR_LINE	"\033[31man error \\x1b[1m x\033[0m\n"
#define WARN_LINE	"\033[1ma warning\033[0m\n"

/* A pseudo-terminal (raw: bytes as written) or a pipe: [0] read, [1] write. */
static void make_sink(bool pty, int fds[2])
{
	struct termios tio;

	if (!pty) {
		assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
		return;
	}
	assert_int_equal(openpty(&fds[0], &fds[1], NULL, NULL, NULL), 0);
	assert_int_equal(tcgetattr(fds[1], &tio), 0);
	cfmakeraw(&tio);
	assert_int_equal(tcsetattr(fds[1], TCSANOW, &tio), 0);
}

/* What is waiting at @fd (the records were flushed already); caller frees. */
static char *drain(int fd)
{
	static char buf[1 << 16];
	struct pollfd pfd = { fd, POLLIN, 0 };
	size_t len = 0;
	ssize_t n;

	while (len + 1 < sizeof(buf) && poll(&pfd, 1, 200) > 0) {
		n = read(fd, buf + len, sizeof(buf) - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return strdup(buf);
}

static void init_lib(bool consoles)
{
	struct pk_config cfg;

	unsetenv("PK_CONSOLE");
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_ATEXIT | (consoles ? 0 : PK_CFG_NO_CONSOLE);
	assert_int_equal(pk_init(&cfg), 0);
}

static void print_three(void)
{
	pk_err("an error \x1b[1m x\n");
	pk_warn("a warning\n");
	pk_info("plain info\n");
	assert_int_equal(pk_flush(5000), 0);
}

/*
 * "fd:N@OPTS" on a terminal or a pipe, with NO_COLOR and TERM as given
 * (NULL: unset): what the console wrote.
 */
static char *through(bool pty, const char *opts, const char *no_color, const char *term)
{
	char spec[128], *out;
	int fds[2];

	make_sink(pty, fds);
	if (no_color)
		setenv("NO_COLOR", no_color, 1);
	else
		unsetenv("NO_COLOR");
	if (term)
		setenv("TERM", term, 1);
	else
		unsetenv("TERM");
	init_lib(false);
	snprintf(spec, sizeof(spec), "fd:%d%s", fds[1], opts);
	assert_int_equal(pk_console_register_spec(spec), 1);
	print_three();
	pk_shutdown();
	out = drain(fds[0]);
	close(fds[0]);
	close(fds[1]);
	unsetenv("NO_COLOR");
	return out;
}

static void expect_colored(char *out)
{
	if (!strstr(out, ERR_LINE) || !strstr(out, WARN_LINE) || !strstr(out, "] plain info\n"))
		fail_msg("not colored as expected: '%s'", out);
	free(out);
}

static void expect_plain(char *out)
{
	if (!strstr(out, "] an error \\x1b[1m x\n") || strchr(out, '\033'))
		fail_msg("not plain: '%s'", out);
	free(out);
}

static void test_auto(void **state)
{
	(void)state;
	expect_colored(through(true, "", NULL, "xterm"));		/* the default is auto */
	expect_colored(through(true, ",color=auto", NULL, NULL));
	/* NO_COLOR set empty counts as unset. */
	expect_colored(through(true, ",color=auto", "", "xterm"));
	expect_plain(through(false, "", NULL, "xterm"));
	expect_plain(through(false, ",color=auto", NULL, "xterm"));
	expect_plain(through(true, ",color=auto", "1", "xterm"));
	expect_plain(through(true, "", "yes", "xterm"));
	expect_plain(through(true, ",color=auto", NULL, "dumb"));
}

static void test_on_off(void **state)
{
	(void)state;
	expect_colored(through(false, ",color=on", "1", "dumb"));
	expect_colored(through(true, ",color=yes", NULL, "xterm"));
	expect_plain(through(true, ",color=off", NULL, "xterm"));
	expect_plain(through(true, ",color=0", NULL, "xterm"));
	expect_plain(through(false, ",color=off", NULL, "xterm"));
}

/* Only the human format is colored; a later format keeps the color. */
static void test_formats(void **state)
{
	struct pk_console *c;
	char *out;

	(void)state;
	out = through(false, ",color=on,fmt=json", NULL, NULL);
	assert_non_null(strstr(out, "an error \\u001b[1m x"));
	assert_null(strchr(out, '\033'));
	free(out);
	out = through(false, ",color=on,fmt=kmsg", NULL, NULL);
	assert_null(strchr(out, '\033'));
	free(out);
	{
		int fds[2];

		make_sink(false, fds);
		init_lib(false);
		{
			char spec[64];

			snprintf(spec, sizeof(spec), "fd:%d,color=on,name=col", fds[1]);
			assert_int_equal(pk_console_register_spec(spec), 1);
		}
		c = pk_console_find("col");
		assert_non_null(c);
		assert_int_equal(pk_console_set_format(c, PK_FMT_HUMAN | PK_FMT_F_TID), 0);
		print_three();
		pk_shutdown();
		out = drain(fds[0]);
		close(fds[0]);
		close(fds[1]);
		assert_non_null(strstr(out, "] " ERR_LINE));
		assert_non_null(strstr(out, "[T"));
		free(out);
	}
}

/* The default console, stderr, on a terminal: colored (auto). */
static void test_default_stderr(void **state)
{
	int fds[2], saved;
	char *out;

	(void)state;
	make_sink(true, fds);
	unsetenv("NO_COLOR");
	setenv("TERM", "xterm", 1);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	dup2(fds[1], STDERR_FILENO);
	init_lib(true);
	print_three();
	pk_shutdown();
	dup2(saved, STDERR_FILENO);
	close(saved);
	out = drain(fds[0]);
	close(fds[0]);
	close(fds[1]);
	expect_colored(out);
}

/* color= is for stderr, stdout and fd:N; a bad value is named. */
static void test_refused(void **state)
{
	struct tu_grab g;
	char *path = tu_tmp_path("concolor"), spec[600], *err;
	int bad;

	(void)state;
	assert_int_equal(pk__console_spec_check("stderr,color=on,stdout,color=off,fd:1,color=auto",
						&bad), 3);
	assert_int_equal(bad, 0);
	init_lib(false);
	tu_grab_start(&g);
	snprintf(spec, sizeof(spec), "fd:1,color=maybe,file:%s,color=on,syslog,color=off", path);
	assert_int_equal(pk_console_register_spec(spec), 0);
	err = tu_grab_end(&g);
	pk_shutdown();
	assert_non_null(strstr(err, "color=\"maybe\": expected auto, on or off"));
	assert_non_null(strstr(err, "option \"color\" is for stderr, stdout and fd:N consoles "
				    "only"));
	assert_int_equal(tu_count(err, "ignoring"), 3);
	free(err);
	unlink(path);
	free(path);
}

/*
 * The renderer: each line of a colored text in its color, and a rendering
 * cut short still ends the color before its newline.
 */
static void test_render(void **state)
{
	struct pk_format_opts fo = { .fmt = PK_FMT_HUMAN | PK_FMT_F_COLOR };
	struct pk_record rec = { .level = PK_CRIT, .text = "one\ntwo \x1b[0m", .len = 12 };
	char buf[PK_FORMAT_MAX], small[40];
	size_t n;

	(void)state;
	n = pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_int_equal(n, strlen(buf));
	assert_non_null(strstr(buf, "] \033[1;31mone\033[0m\n"
				    "               \033[1;31mtwo \\x1b[0m\033[0m\n"));
	rec.text = "a long text that does not fit in forty bytes";
	rec.len = strlen(rec.text);
	n = pk__format_record(small, sizeof(small), &rec, &fo);
	assert_int_equal(n, sizeof(small) - 1);
	assert_string_equal(small + n - 5, "\033[0m\n");
	assert_non_null(strstr(small, "] \033[1;31ma long"));
	/* Without the flag, or in another format, no color. */
	fo.fmt = PK_FMT_HUMAN;
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_null(strchr(buf, '\033'));
	fo.fmt = PK_FMT_SYSLOG | PK_FMT_F_COLOR;
	pk__format_record(buf, sizeof(buf), &rec, &fo);
	assert_null(strchr(buf, '\033'));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto),
		cmocka_unit_test(test_on_off),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_default_stderr),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_render),
	};

	return TU_RUN_GROUP(tests, NULL, NULL, argc, argv);
}
