// SPDX-License-Identifier: MIT
/*
 * test_dynmod - dynamic debug in a file of a module, as a program meets
 * it: PK_MODULE_REGISTER(netio, PK_INFO) and a pr_debug() site.
 *   - the site's dynamic debug module is "netio", the name its records
 *     carry: "module netio +p" (PK_DYNDBG or a query) selects it, and
 *     PK_DYNDBG_LIST shows "[netio]";
 *   - an enabled site stores and prints its record whatever netio's level
 *     (PK_INFO drops every other PK_DEBUG record of the file); the
 *     consoles still filter by their own loglevel;
 *   - a query that matches no site is warned about, naming the query and
 *     the module asked for, on stderr, from PK_DYNDBG and pk_dyndbg_query();
 *     pk_dyndbg_exec() logs nothing and returns 0, as before.
 * A child run of this program (TEST_DYNMOD_CHILD=1) is the newcomer's
 * program: it calls the site once and exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "printk/kernel.h"
#include "printk/reader.h"
#include "testutil.h"

PK_MODULE_REGISTER(netio, PK_INFO);

static __attribute__((noinline)) void net_rx(int n)
{
	pr_debug("rx %d bytes\n", n);
}

static __attribute__((noinline)) int net_plain_debug(int n)
{
	return pk_debug("plain debug %d\n", n);
}

static int child_main(void)
{
	pk_info("child up\n");
	net_rx(42);
	pk_flush(5000);
	return 0;
}

/* Run the child with @env (NULL-terminated, PK_CONSOLE=stderr added); its stderr. */
static char *run_child(const char *const env[])
{
	const char *const argv[] = { "/proc/self/exe", NULL };
	char *envp[8], *out = NULL, *err = NULL;
	int i = 0;

	envp[i++] = (char *)"TEST_DYNMOD_CHILD=1";
	envp[i++] = (char *)"PK_CONSOLE=stderr";
	for (; *env && i < 7; env++)
		envp[i++] = (char *)*env;
	envp[i] = NULL;
	assert_int_equal(tu_run(argv, envp, &out, &err), 0);
	free(out);
	assert_non_null(err);
	return err;
}

/* The newcomer's command: PK_DYNDBG='module netio +p' prints the line. */
static void test_env_module_netio(void **state)
{
	const char *env[] = { "PK_DYNDBG=module netio +p", "PK_LOGLEVEL=8", NULL };
	char *err;

	(void)state;
	err = run_child(env);
	if (!strstr(err, "netio: rx 42 bytes\n"))
		fail_msg("PK_DYNDBG='module netio +p' did not print the site; stderr:\n%s", err);
	assert_null(strstr(err, "matches no site"));
	free(err);
}

/* PK_DYNDBG_LIST shows the module the query takes. */
static void test_list_shows_module(void **state)
{
	const char *env[] = { "PK_DYNDBG_LIST=1", NULL };
	char *err;

	(void)state;
	err = run_child(env);
	if (!strstr(err, " [netio]net_rx =_ \"rx %d bytes\\n\"\n"))
		fail_msg("PK_DYNDBG_LIST does not show the site under [netio]:\n%s", err);
	free(err);
}

/* A PK_DYNDBG query that matches nothing is named, with its module. */
static void test_env_no_match_warns(void **state)
{
	const char *env[] = { "PK_DYNDBG=module nosuch +p; module netio +p", "PK_LOGLEVEL=8",
			      NULL };
	char *err;

	(void)state;
	err = run_child(env);
	if (tu_count(err, "libprintk: PK_DYNDBG: query \"module nosuch +p\" matches no site "
			  "(no site has module \"nosuch\")") != 1)
		fail_msg("no warning naming the query and its module:\n%s", err);
	/* The other query still applies, and is not warned about. */
	assert_non_null(strstr(err, "netio: rx 42 bytes\n"));
	assert_int_equal(tu_count(err, "matches no site"), 1);
	free(err);
}

/* ---- in this process --------------------------------------------------------- */

static int setup(void **state)
{
	struct pk_config cfg;

	(void)state;
	pk_config_init(&cfg);
	cfg.flags |= PK_CFG_NO_CONSOLE | PK_CFG_NO_ATEXIT;
	cfg.buffer_size = 1 << 20;
	return pk_init(&cfg);
}

static int teardown(void **state)
{
	(void)state;
	pk_dyndbg_exec("module netio -p", NULL, 0);
	pk_shutdown();
	return 0;
}

/* Is a record with @text in the store, and with module @module? */
static int stored_with(const char *text, const char *module)
{
	struct pk_reader *r = pk_reader_open();
	struct pk_record rec;
	int found = 0;

	assert_non_null(r);
	while (pk_reader_next(r, &rec) == 1) {
		if (rec.len != strlen(text) || memcmp(rec.text, text, rec.len))
			continue;
		found = rec.module && !strcmp(rec.module, module) ? 1 : -1;
	}
	pk_reader_close(r);
	return found;
}

/*
 * The more specific switch wins: the site enabled, its record is stored
 * with netio's name at PK_DEBUG while netio's level (PK_INFO) still drops
 * the file's other debug records.
 */
static void test_enabled_site_beats_module_level(void **state)
{
	(void)state;
	assert_int_equal(pk_module_get_level("netio"), PK_INFO);
	assert_int_equal(pk_dyndbg_query("module netio +p"), 1);
	net_rx(7);
	assert_int_equal(net_plain_debug(8), 0);
	if (stored_with("rx 7 bytes", "netio") != 1)
		fail_msg("an enabled pr_debug() site of netio stored nothing (netio at PK_INFO)");
	assert_int_equal(stored_with("plain debug 8", "netio"), 0);
	assert_int_equal(pk_dyndbg_query("module netio -p"), 1);
	net_rx(9);
	assert_int_equal(stored_with("rx 9 bytes", "netio"), 0);
}

/* pk_dyndbg_exec(): 0 matches as before, no error text, nothing logged. */
static void test_exec_no_match(void **state)
{
	struct tu_grab g;
	char err[256], *said;

	(void)state;
	tu_grab_start(&g);
	assert_int_equal(pk_dyndbg_exec("module nosuch +p", err, sizeof(err)), 0);
	said = tu_grab_end(&g);
	assert_string_equal(err, "");
	assert_string_equal(said, "");
	free(said);
}

/* pk_dyndbg_query(): the same warning on stderr, one per query. */
static void test_query_no_match_warns(void **state)
{
	struct tu_grab g;
	char *said;

	(void)state;
	tu_grab_start(&g);
	assert_int_equal(pk_dyndbg_query("module nosuch +p; module netio -p; file none.c +p"), 1);
	said = tu_grab_end(&g);
	assert_int_equal(tu_count(said, "libprintk: dyndbg: query \"module nosuch +p\" matches "
					"no site (no site has module \"nosuch\")"), 1);
	assert_int_equal(tu_count(said, "libprintk: dyndbg: query \"file none.c +p\" matches "
					"no site"), 1);
	assert_int_equal(tu_count(said, "matches no site"), 2);
	free(said);
	/* A selector other than the module: the query alone is named. */
	tu_grab_start(&g);
	assert_int_equal(pk_dyndbg_query("module netio func nosuch_fn +p"), 0);
	said = tu_grab_end(&g);
	assert_string_equal(said, "libprintk: dyndbg: query \"module netio func nosuch_fn +p\" "
				  "matches no site\n");
	free(said);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_module_netio),
		cmocka_unit_test(test_list_shows_module),
		cmocka_unit_test(test_env_no_match_warns),
		cmocka_unit_test(test_enabled_site_beats_module_level),
		cmocka_unit_test(test_exec_no_match),
		cmocka_unit_test(test_query_no_match_warns),
	};

	if (getenv("TEST_DYNMOD_CHILD"))
		return child_main();
	return TU_RUN_GROUP(tests, setup, teardown, argc, argv);
}
