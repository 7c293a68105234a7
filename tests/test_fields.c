// SPDX-License-Identifier: MIT
/*
 * test_fields - structured fields (pk_printk_fields()): stored in the
 * record and read back, from this process's store, from a signal handler,
 * and from the store file of a writer killed with SIGKILL; bad keys and an
 * overflowing budget leave those fields out but never the text; every
 * rendering that shows fields (JSON, kmsg, RFC 5424) and the plain one
 * that does not; pkmsg --field.
 */
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
#include "store/store.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "testutil.h"

static int setup(void **state)
{
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE;
	return pk_init(&cfg);
}

/* A reader of this process's store at its next record. */
static struct pk_reader *reader_here(void)
{
	struct pk_reader *r = pk_reader_open();
	struct pk_store_info info;

	assert_non_null(r);
	assert_int_equal(pk_reader_info(r, &info), 0);
	pk_reader_seek(r, info.next_seq);
	return r;
}

/* The next record of @r (there must be one). */
static void next(struct pk_reader *r, struct pk_record *rec)
{
	assert_int_equal(pk_reader_next(r, rec), 1);
}

/* The value of field @key of @rec, or NULL. */
static const char *field(const struct pk_record *rec, const char *key)
{
	size_t i;

	for (i = 0; rec->fields && i < rec->nfields; i++)
		if (!strcmp(rec->fields[i].key, key))
			return rec->fields[i].value;
	return NULL;
}

/* Deferred, eager (no newline), and many fields: all read back in order. */
static void test_read_back(void **state)
{
	struct pk_reader *r = reader_here();
	struct pk_record rec;
	int ret;

	(void)state;
	ret = pk_info_f(PK_FIELDS({ "REQUEST_ID", "42" }, { "USER", "alice" }),
			"request %d done\n", 7);
	assert_true(ret > 0);
	ret = pk_printk_fields(PK_WARNING, (const struct pk_field[]){ { "A1", "x" } }, 1,
			       "open line without newline %s", "!");
	assert_true(ret > 0);
	assert_true(pk_printk_fields(PK_ERR, NULL, 0, "no fields\n") > 0);
	pk_printk(PK_INFO, "plain\n");

	next(r, &rec);
	assert_string_equal(rec.text, "request 7 done");
	assert_int_equal(rec.level, PK_INFO);
	assert_int_equal(rec.nfields, 2);
	assert_string_equal(rec.fields[0].key, "REQUEST_ID");
	assert_string_equal(rec.fields[0].value, "42");
	assert_string_equal(rec.fields[1].key, "USER");
	assert_string_equal(rec.fields[1].value, "alice");
	assert_false(rec.flags & PK_REC_FIELDS_DROPPED);
	next(r, &rec);
	/* A record with fields is complete: never left open for pk_cont(). */
	assert_string_equal(rec.text, "open line without newline !");
	assert_false(rec.flags & PK_REC_NOEOL);
	assert_string_equal(field(&rec, "A1"), "x");
	next(r, &rec);
	assert_string_equal(rec.text, "no fields");
	assert_int_equal(rec.nfields, 0);
	assert_null(rec.fields);
	next(r, &rec);
	assert_string_equal(rec.text, "plain");
	assert_int_equal(rec.nfields, 0);
	pk_reader_close(r);
}

/* Bad keys: -EINVAL, the record stored with the good fields, flagged. */
static void test_bad_keys(void **state)
{
	static const char k65[] = "K2345678901234567890123456789012345678901234567890123456789012345";
	static const char *const bad[] = { "lower", "1DIGIT", "_UNDER", "SP ACE", "DASH-", "",
					   k65 };
	struct pk_reader *r = reader_here();
	struct pk_record rec;
	struct pk_field f[3];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f[0] = (struct pk_field){ "GOOD", "1" };
		f[1] = (struct pk_field){ bad[i], "v" };
		f[2] = (struct pk_field){ "ALSO_GOOD_9", "2" };
		assert_int_equal(pk_printk_fields(PK_NOTICE, f, 3, "bad key %zu\n", i), -EINVAL);
		next(r, &rec);
		assert_int_equal(strncmp(rec.text, "bad key ", 8), 0);
		assert_true(rec.flags & PK_REC_FIELDS_DROPPED);
		assert_int_equal(rec.nfields, 2);
		assert_string_equal(field(&rec, "GOOD"), "1");
		assert_string_equal(field(&rec, "ALSO_GOOD_9"), "2");
	}
	/* 64 characters is the longest key. */
	f[0] = (struct pk_field){ "K234567890123456789012345678901234567890123456789012345678901234",
				  "ok" };
	assert_int_equal(strlen(f[0].key), 64);
	assert_true(pk_printk_fields(PK_NOTICE, f, 1, "key of 64\n") > 0);
	next(r, &rec);
	assert_string_equal(rec.fields[0].key, f[0].key);
	/* NULL key, NULL value, NULL array: the text is stored all the same. */
	f[0] = (struct pk_field){ NULL, "v" };
	f[1] = (struct pk_field){ "KEY", NULL };
	assert_int_equal(pk_printk_fields(PK_NOTICE, f, 2, "nulls\n"), -EINVAL);
	next(r, &rec);
	assert_string_equal(rec.text, "nulls");
	assert_int_equal(rec.nfields, 0);
	assert_true(rec.flags & PK_REC_FIELDS_DROPPED);
	assert_int_equal(pk_printk_fields(PK_NOTICE, NULL, 2, "null array\n"), -EINVAL);
	next(r, &rec);
	assert_string_equal(rec.text, "null array");
	assert_true(rec.flags & PK_REC_FIELDS_DROPPED);
	/* An absurd count with no array returns at once (it looped n times). */
	assert_int_equal(pk_printk_fields(PK_NOTICE, NULL, SIZE_MAX, "null huge\n"), -EINVAL);
	next(r, &rec);
	assert_string_equal(rec.text, "null huge");
	assert_true(rec.flags & PK_REC_FIELDS_DROPPED);
	/* Many valid fields: the first PK_FIELDS_MAX kept, the rest counted. */
	{
		static struct pk_field many[1000];
		size_t i;

		for (i = 0; i < 1000; i++)
			many[i] = (struct pk_field){ "K", "v" };
		assert_int_equal(pk_printk_fields(PK_NOTICE, many, 1000, "many\n"), -EMSGSIZE);
		next(r, &rec);
		assert_string_equal(rec.text, "many");
		assert_int_equal(rec.nfields, PK_FIELDS_MAX);
		assert_true(rec.flags & PK_REC_FIELDS_DROPPED);
	}
	/* A NULL format is refused as pk_printk() refuses it. */
	assert_int_equal(pk_printk_fields(PK_NOTICE, f, 0, NULL), -EINVAL);
	assert_int_equal(pk_reader_next(r, &rec), 0);
	pk_reader_close(r);
}

/* Over the budget: the fields that fit are kept, -EMSGSIZE. */
static void test_budget(void **state)
{
	static char big[PK_FIELDS_BYTES + 10];
	struct pk_field f[PK_FIELDS_MAX + 2];
	struct pk_reader *r = reader_here();
	struct pk_record rec;
	char keys[PK_FIELDS_MAX + 2][8];
	size_t i;

	(void)state;
	for (i = 0; i < PK_FIELDS_MAX + 2; i++) {
		snprintf(keys[i], sizeof(keys[i]), "F%zu", i);
		f[i] = (struct pk_field){ keys[i], keys[i] };
	}
	/* Exactly PK_FIELDS_MAX: all kept. */
	assert_true(pk_printk_fields(PK_INFO, f, PK_FIELDS_MAX, "eight\n") > 0);
	next(r, &rec);
	assert_int_equal(rec.nfields, PK_FIELDS_MAX);
	assert_false(rec.flags & PK_REC_FIELDS_DROPPED);
	/* Two more: left out, the first eight kept. */
	assert_int_equal(pk_printk_fields(PK_INFO, f, PK_FIELDS_MAX + 2, "ten\n"), -EMSGSIZE);
	next(r, &rec);
	assert_string_equal(rec.text, "ten");
	assert_int_equal(rec.nfields, PK_FIELDS_MAX);
	assert_string_equal(rec.fields[7].key, "F7");
	assert_true(rec.flags & PK_REC_FIELDS_DROPPED);

	/* Bytes: key + value + 2 each; exactly PK_FIELDS_BYTES fits. */
	memset(big, 'v', sizeof(big));
	big[PK_FIELDS_BYTES - 3 - 2] = '\0';	/* "BIG" + value + 2 = PK_FIELDS_BYTES */
	f[0] = (struct pk_field){ "BIG", big };
	assert_true(pk_printk_fields(PK_INFO, f, 1, "full budget\n") > 0);
	next(r, &rec);
	assert_int_equal(rec.nfields, 1);
	assert_int_equal(strlen(rec.fields[0].value), PK_FIELDS_BYTES - 5);
	/* One byte more: left out; a small field after it still fits. */
	big[PK_FIELDS_BYTES - 5] = 'v';
	big[PK_FIELDS_BYTES - 4] = '\0';
	f[1] = (struct pk_field){ "SMALL", "s" };
	assert_int_equal(pk_printk_fields(PK_INFO, f, 2, "over budget %d\n", 1), -EMSGSIZE);
	next(r, &rec);
	assert_string_equal(rec.text, "over budget 1");
	assert_int_equal(rec.nfields, 1);
	assert_string_equal(rec.fields[0].key, "SMALL");
	assert_true(rec.flags & PK_REC_FIELDS_DROPPED);

	/* The longest text, the budget full, a module: nothing cut but the text. */
	memset(big, 'w', PK_FIELDS_BYTES - 5);
	big[PK_FIELDS_BYTES - 5] = '\0';
	{
		static char text[PK_RECORD_MAX + 10];

		memset(text, 't', sizeof(text) - 1);
		text[sizeof(text) - 1] = '\0';
		assert_true(pk_printk_fields(PK_INFO, f, 1, "%s\n", text) > 0);
		next(r, &rec);
		assert_int_equal(rec.len, PK_RECORD_MAX);
		assert_int_equal(rec.nfields, 1);
		assert_int_equal(strlen(rec.fields[0].value), PK_FIELDS_BYTES - 5);
	}
	pk_reader_close(r);
}

static volatile sig_atomic_t handler_ret;

static void on_usr1(int sig)
{
	(void)sig;
	handler_ret = pk_err_f(PK_FIELDS({ "SIGNAL", "SIGUSR1" }, { "IN_HANDLER", "1" }),
			       "from a signal handler %d\n", sig);
}

/* From a signal handler: stored with its fields. */
static void test_signal_handler(void **state)
{
	struct pk_reader *r = reader_here();
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	struct pk_record rec;

	(void)state;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	assert_int_equal(raise(SIGUSR1), 0);
	sigaction(SIGUSR1, &old, NULL);
	assert_true(handler_ret > 0);
	next(r, &rec);
	assert_int_equal(strncmp(rec.text, "from a signal handler", 21), 0);
	assert_string_equal(field(&rec, "SIGNAL"), "SIGUSR1");
	assert_string_equal(field(&rec, "IN_HANDLER"), "1");
	pk_reader_close(r);
}

/* The renderings of one record with awkward values. */
static void test_renderings(void **state)
{
	static char line[PK_FORMAT_MAX], msg[PK_RFC5424_MSG_MAX];
	static const char k40[] = "KEY_OF_FORTY_CHARACTERS_456789012345678X";
	struct pk_format_opts fo = { .fmt = PK_FMT_JSON };
	struct pk__rfc5424_id id = { .facility = -1 };
	struct pk_reader *r = reader_here();
	struct pk_record rec;
	size_t n;

	(void)state;
	assert_int_equal(strlen(k40), 40);
	assert_true(pk_notice_f(PK_FIELDS({ "PLAIN", "v" }, { "Q", "a\"b]c\\d" },
					  { "NL", "two\nlines\ttab" }, { k40, "long key" }),
				"text\n") > 0);
	next(r, &rec);

	n = pk__format_record(line, sizeof(line), &rec, &fo);
	assert_true(n > 0);
	if (!strstr(line, "\"fields\":{\"PLAIN\":\"v\",\"Q\":\"a\\\"b]c\\\\d\","
			  "\"NL\":\"two\\nlines\\ttab\",\"" "KEY_OF_FORTY_CHARACTERS_456789012345678X"
			  "\":\"long key\"},\"text\":\"text\"}"))
		fail_msg("JSON: %s", line);

	fo.fmt = PK_FMT_KMSG;
	pk__format_record(line, sizeof(line), &rec, &fo);
	if (!strstr(line, ";text\n PLAIN=v\n Q=a\"b]c\\x5cd\n NL=two\\x0alines\\x09tab\n"
			  " KEY_OF_FORTY_CHARACTERS_456789012345678X=long key\n"))
		fail_msg("kmsg: %s", line);

	/* Plain text is unchanged: no fields. */
	fo.fmt = PK_FMT_HUMAN;
	pk__format_record(line, sizeof(line), &rec, &fo);
	assert_null(strstr(line, "PLAIN"));
	assert_non_null(strstr(line, "] text\n"));

	/*
	 * RFC 5424: its own SD-ELEMENT right after printk@32473 (no space
	 * between elements, 6.3), PARAM-VALUEs escaped, a key longer than
	 * the 32 characters of an SD-NAME cut to 30, '~' and its position.
	 */
	fo.fmt = PK_FMT_JSON | PK_FMT_F_RFC3339;
	n = pk__format_record(line, sizeof(line), &rec, &fo);
	pk__rfc5424_id_names(&id, "host", "app");
	n = pk__rfc5424_render(&id, line, n, msg, sizeof(msg) - 1);
	assert_true(n > 0);
	msg[n] = '\0';
	if (!strstr(msg, "\"][fields@32473 PLAIN=\"v\" Q=\"a\\\"b\\]c\\\\d\" "
			 "NL=\"two\nlines\ttab\" KEY_OF_FORTY_CHARACTERS_456789~3=\"long key\"]"
			 "[code@32473 file=\"" __FILE__ "\" line=\""))
		fail_msg("RFC 5424: %s", msg);

	/* Dropped fields are shown in JSON. */
	assert_int_equal(pk_printk_fields(PK_INFO, (const struct pk_field[]){ { "x", "y" } }, 1,
					  "dropped\n"), -EINVAL);
	next(r, &rec);
	fo.fmt = PK_FMT_JSON;
	pk__format_record(line, sizeof(line), &rec, &fo);
	assert_non_null(strstr(line, "\"fields_dropped\":true,\"text\":\"dropped\""));
	pk_reader_close(r);
}

/*
 * A writer killed with SIGKILL: its store file holds the records with
 * their fields, for pk_reader_open_file() and for pkmsg (--field, -J, -r).
 */
static void test_killed_writer_pkmsg(void **state)
{
	char *path = tu_tmp_path("fields-store"), *out = NULL, *err = NULL;
	struct pk_reader *r;
	struct pk_record rec;
	int status, i;
	pid_t pid;

	(void)state;
	unlink(path);
	pid = tu_fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pk_config cfg;
		char id[16];

		pk_config_init(&cfg);
		cfg.buffer_path = path;
		cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
		if (pk_init(&cfg))
			_exit(3);
		for (i = 0; i < 20; i++) {
			snprintf(id, sizeof(id), "%d", i);
			pk_info_f(PK_FIELDS({ "REQUEST_ID", id }, { "PARITY", i % 2 ? "odd" : "even" }),
				  "request %d\n", i);
		}
		pk_printk(PK_INFO, "no fields\n");
		kill(getpid(), SIGKILL);
		_exit(4);
	}
	tu_waitpid(pid, &status, 30000, "the writer");
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	r = pk_reader_open_file(path);
	assert_non_null(r);
	for (i = 0; i < 20; i++) {
		char id[16];

		next(r, &rec);
		snprintf(id, sizeof(id), "%d", i);
		assert_int_equal(rec.nfields, 2);
		assert_string_equal(field(&rec, "REQUEST_ID"), id);
		assert_string_equal(field(&rec, "PARITY"), i % 2 ? "odd" : "even");
	}
	next(r, &rec);
	assert_int_equal(rec.nfields, 0);
	pk_reader_close(r);

	{
		const char *argv[] = { PKMSG_PATH, "-F", path, "--field", "REQUEST_ID=7", NULL };

		assert_int_equal(tu_run(argv, NULL, &out, &err), 0);
		assert_int_equal(tu_count(out, "request"), 1);
		assert_non_null(strstr(out, "] request 7\n"));
		free(out);
		free(err);
	}
	{
		const char *argv[] = { PKMSG_PATH, "-F", path, "--field", "PARITY=odd", "--field",
				       "REQUEST_ID=8", NULL };

		assert_int_equal(tu_run(argv, NULL, &out, &err), 0);
		assert_string_equal(out, "");	/* all must match: 8 is even */
		free(out);
		free(err);
	}
	{
		const char *argv[] = { PKMSG_PATH, "-F", path, "--field", "PARITY=odd", "-J", NULL };

		assert_int_equal(tu_run(argv, NULL, &out, &err), 0);
		assert_int_equal(tu_count(out, "\"fields\":{\"REQUEST_ID\":"), 10);
		assert_non_null(strstr(out, "\"fields\":{\"REQUEST_ID\":\"3\",\"PARITY\":\"odd\"},"
					    "\"text\":\"request 3\"}\n"));
		free(out);
		free(err);
	}
	{
		const char *argv[] = { PKMSG_PATH, "-F", path, "--field", "REQUEST_ID=19", "-r",
				       NULL };

		assert_int_equal(tu_run(argv, NULL, &out, &err), 0);
		assert_non_null(strstr(out, ";request 19\n REQUEST_ID=19\n PARITY=odd\n"));
		free(out);
		free(err);
	}
	{
		const char *argv[] = { PKMSG_PATH, "-F", path, "--field", "request_id=1", NULL };

		assert_int_equal(tu_run(argv, NULL, &out, &err), 2);
		assert_non_null(strstr(err, "bad field 'request_id=1'"));
		free(out);
		free(err);
	}
	unlink(path);
	free(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_back),
		cmocka_unit_test(test_bad_keys),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_signal_handler),
		cmocka_unit_test(test_renderings),
		cmocka_unit_test(test_killed_writer_pkmsg),
	};

	return TU_RUN_GROUP(tests, setup, NULL, argc, argv);
}
